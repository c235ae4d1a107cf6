"""Orders of play for positions with captures: the ranked beam over legal play, and its backtracking.

The problem (:class:`moveorder.search.problem.Problem`): the stones on the board, and the
*prisoners*: the number of stones each side has captured (Black's prisoners are white
stones, White's are black ones).  A sequence answers it when it is legal
from the empty board (captures, no suicide, no simple-ko retake, no
repetition of an earlier whole-board position: positional superko), Black
moves first, colours alternate, its last position is exactly the given
stones and its captures add up exactly to the prisoner counts.  It has
``black + white + prisoners_black + prisoners_white`` moves: every captured
stone was once played.

Search: the ranked beam of :mod:`moveorder.search.beam`, on the real board.  A
prefix's move for colour ``c`` is either a *final stone* (a point where the
position has a ``c`` stone, empty now) or a *doomed stone* (any other empty
point: the rest of the sequence must capture it), the latter only while
``c``'s capture budget lasts.  Children that are illegal, repeat a position
or fail a necessary condition of :func:`_alive` (doomed groups within the
prisoners still to take, a capturer left, the liberties of doomed groups
within the budgets) are pruned; at the last move only the exact position is
accepted.

Prefixes whose network input is the same (the last 8 boards and the side to
move) are merged, the likelier kept.  Children are ranked in tiers
(:class:`_Layer`).  Without captures: half the width by log-likelihood
``g``, the rest by ``g`` less ``future`` times the best log-probabilities
seen so far of the final stones standing (with captures, each less a
per-move estimate for the other moves still to play); that is exactly
:func:`moveorder.search.beam.beam_search`'s ranking (a test checks the two give the
same orders).  With captures (:data:`CAPTURE_TIERS`): a quarter by ``g``, a
quarter by fewest captures still to make, and half by *doomed set*, the
likeliest child of each set of points holding stones the rest must capture
that no child kept has: a beam kept by likelihood alone puts its doomed
stones in the same places and dies together where those cannot all be
captured; what is left by the score above.  Children are built lazily,
best first, so the board work is done for about the children kept, plus
those pruned (at most ``PRUNED_PER_CHILD x width`` a choice).  Where the
beam dies, :func:`search` backtracks (:func:`backtrack`).

Why the ranking is written twice, here and in :mod:`moveorder.search.beam`: the capture-free beam
builds every child of every arrangement at once as rows of a tensor on the network's device (every
child is legal, so ranking is a top-k per arrangement), while here a child exists only once it has
been played on a board and has passed the prunes, so a ranking is an *order* in which to build
children until the width is full, tiers on top, and a layer keeps that order for backtracking.  A
shared function would make the tensor beam build boards or this one build every child; the test
that the two keep the same orders on capture-free problems keeps them equal.

Passes: :func:`search` may run the beam again (``passes``).  A later pass
starts from the stone estimates of the passes before (every evaluation so far,
so its future costs are informed from the first move), and where an order was
found, keeps its doomed stones to that order's *capture plan*: the points
where each colour had a stone captured (:func:`moveorder.search.plans.capture_plan`), once a plan;
where none was, it may search with a wider beam (``widen``: evaluations spent
only on the problems not answered yet).  With the plan
the doomed-set tier has nothing to spread, so such a problem is ranked by
:data:`PLAN_TIERS`.  The likelier of the orders found is kept.  Boards are in the
top-row-first flat order of :mod:`moveorder.go.board`; moves in and out are
Leela Zero indices.

The annealer and the exact solver handle capture-free positions only; the dispatcher
(:func:`moveorder.search.dispatch.run`) refuses a position with prisoners for them, naming the method
that can.  The positions' network input and the replay of a sequence are
:mod:`moveorder.search.boards`'s.
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import POINTS
from moveorder.nets.features import FLAT_OF_LZ, HISTORY
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search.boards import EMPTY_BOARD, position_log_probs
from moveorder.search.plans import capture_plan
from moveorder.search.problem import Problem, SearchStats
from moveorder.settings import SearchConfig

_DEFAULTS = SearchConfig()

BLACK, WHITE, EMPTY = goboard.BLACK, goboard.WHITE, goboard.EMPTY
#: A layer's choice gives up after this many children per kept place that cannot reach the position.
PRUNED_PER_CHILD = 8
#: Shares of the width kept, for a position with captures, by likelihood, by fewest captures still to
#: make, and by doomed set (:meth:`_Layer.choose`); the rest (when doomed sets run out) by the score.
#: Likelihood and captures at a half and a quarter without the doomed-set tier found 57 and 62 of 100
#: (Pro, KGS) at 80 moves with W 32, against 77 and 74 (docs/benchmarks.md, "Doomed sets").
CAPTURE_TIERS = (0.25, 0.25, 0.5)
#: The same shares for a problem searched with a capture plan (a pass after the first, :func:`search`):
#: half by likelihood, a quarter by fewest captures still to make, none by doomed set; the rest by the
#: score.  Measured against the doomed-set tiers in that pass (docs/benchmarks.md, "Passes").
PLAN_TIERS = (0.5, 0.25, 0.0)


def _neighbour_table() -> np.ndarray:
    """``(361, 4)`` Leela Zero indices of each point's neighbours, ``361`` (a zero column) where none."""
    adj = goboard.adjacent_points(coords.SIZE)
    table = np.full((POINTS, 4), POINTS, dtype=np.int64)
    for k in range(POINTS):
        for j, q in enumerate(adj[coords.lz_to_flat(k)]):
            table[k, j] = coords.flat_to_lz(q)
    return table


_NEIGHBOURS_LZ = _neighbour_table()


class _Prefix:
    __slots__ = ("moves", "ll", "board", "hist", "seen")

    def __init__(self, moves, ll, board, hist, seen):
        self.moves, self.ll, self.board, self.hist, self.seen = moves, ll, board, hist, seen


def _root() -> _Prefix:
    """The empty prefix: the empty board, the only position seen."""
    return _Prefix([], 0.0, goboard.Board(), (EMPTY_BOARD,), frozenset([EMPTY_BOARD]))


class _Target:
    """Per-problem constants of the search, as numpy masks in Leela Zero order.

    ``plan``: a capture plan (:func:`capture_plan`); doomed stones of a colour are then played only on
    its points of that colour.
    """

    def __init__(self, problem: Problem, plan: Optional[Sequence[Tuple[int, int]]] = None):
        self.final = problem.final_board()
        fin = np.frombuffer(self.final, dtype=np.uint8)
        self.final_lz = fin[FLAT_OF_LZ]
        self.final_flat = fin
        self.n = problem.moves
        self.budget = {BLACK: problem.captured_of(BLACK), WHITE: problem.captured_of(WHITE)}
        self.moves_of = {BLACK: problem.moves_of(BLACK), WHITE: problem.moves_of(WHITE)}
        self.plan: Optional[Dict[int, np.ndarray]] = None  # colour -> where its doomed stones may go (LZ order)
        if plan is not None:
            self.plan = {BLACK: np.zeros(POINTS, dtype=bool), WHITE: np.zeros(POINTS, dtype=bool)}
            for colour, k in plan:
                self.plan[colour][k] = True


def _played(i: int, colour: int) -> int:
    """Moves ``colour`` has played after ``i`` moves (Black first)."""
    return (i + (colour == BLACK)) // 2


def _no_estimates() -> Dict[int, np.ndarray]:
    """Per colour and point: the best log-probability its stone has had so far (-inf: none yet)."""
    return {BLACK: np.full(POINTS, -np.inf), WHITE: np.full(POINTS, -np.inf)}


def _doomed_points(board: np.ndarray, final: np.ndarray) -> List[int]:
    """Flat points of ``board`` holding a stone the rest must capture: where ``final`` has none of its colour."""
    return np.nonzero((board != EMPTY) & (board != final))[0].tolist()


def _alive(target: _Target, board: goboard.Board, i: int, now: Optional[bytes] = None) -> bool:
    """After ``i`` moves, can the rest still reach the target?  Necessary conditions, none sufficient.

    A *doomed group* holds a stone where the position has none of its colour.  Stones leave the
    board only when their whole group is captured, and groups only grow, so every stone of a doomed
    group is captured later, final stones in it included (and those are played again).
    * Each colour's stones in doomed groups fit what is still to be captured of it:
      ``D_c <= P_c - K_c`` (``K_c``: captured so far); ``slack_c = P_c - K_c - D_c`` is what its
      other moves may still lose.  (Counted move by move, ``slack_c`` is also its moves left less its
      final points not held.)
    * A colour with stones still to be captured (``P_c - K_c > 0``, doomed groups standing or not)
      has an opponent move left to capture them.  (That it has a move left itself, to play the stone
      or to play a captured final stone again, follows from ``slack_c >= 0``.)
    * The last move stands at the end (nothing after it captures it), so a final point of its colour
      must be free for it: not held by its colour, held by a doomed group, or, with ``slack``, held by
      a stone captured later.  That follows from ``slack_c >= 0``: with ``H_c`` its final points held
      outside doomed groups, ``slack_c`` is its moves left less its final points not so held, so with
      ``slack_c = 0`` and a move left (the last one) some final point is not so held.
    * Every liberty of a doomed group must be filled before the group is captured.  Where the position
      has no opponent stone, the stone filling it is itself captured later (one of the group's colour
      joins the group; an opponent's is no final stone), so it uses a unit of one side's slack.  The
      distinct such liberties of all doomed groups cannot outnumber the two slacks together.
    """
    cur = board.points
    arr = np.frombuffer(bytes(cur) if now is None else now, dtype=np.uint8)
    final = target.final_flat
    counts = np.bincount(arr, minlength=3)
    doomed = {BLACK: 0, WHITE: 0}
    in_doomed: set = set()
    groups = []
    for p in _doomed_points(arr, final):
        if p not in in_doomed:
            group, _ = board.group(p)
            in_doomed.update(group)
            groups.append((cur[p], group))
            doomed[cur[p]] += len(group)
    left = 0
    for colour in (BLACK, WHITE):
        slack = target.budget[colour] - (_played(i, colour) - int(counts[colour])) - doomed[colour]
        if slack < 0:
            return False
        if slack + doomed[colour]:  # stones of this colour still to be captured
            other = goboard.opponent(colour)
            if target.moves_of[other] - _played(i, other) < 1:
                return False
        left += slack
    if not groups:
        return True
    costly: set = set()
    adj = goboard.adjacent_points(board.size)
    for colour, group in groups:
        enemy = goboard.opponent(colour)
        for s in group:
            for q in adj[s]:
                if cur[q] == EMPTY and final[q] != enemy:
                    costly.add(q)
    return len(costly) <= left


def _slack(target: _Target, cur: np.ndarray, colour: int, i: int) -> np.ndarray:
    """``(P,)`` remaining budget ``P_c - K_c - D_c`` of ``colour`` after ``i`` moves, boards ``cur`` ``(P, 361)``."""
    mine = cur == colour
    doomed = np.count_nonzero(mine & (target.final_lz != colour)[None, :], axis=1)
    captured = _played(i, colour) - np.count_nonzero(mine, axis=1)
    return target.budget[colour] - captured - doomed


def _doomed_ok(target: _Target, cur: np.ndarray, colour: int, i: int) -> np.ndarray:
    """``(P, 361)``: where ``colour`` may put a doomed stone (Leela Zero order), before building the child.

    The stone uses a unit of its colour's budget, and each empty neighbour where the position has no
    opponent stone will need one more (:func:`_alive`); a capture by the stone cannot lower that count.
    """
    mine_left = _slack(target, cur, colour, i)
    total = mine_left + _slack(target, cur, goboard.opponent(colour), i)
    costly = np.zeros((cur.shape[0], POINTS + 1), dtype=np.int16)
    costly[:, :POINTS] = (cur == EMPTY) & (target.final_lz != goboard.opponent(colour))[None, :]
    need = costly[:, _NEIGHBOURS_LZ].sum(2)  # (P, 361)
    return (mine_left[:, None] >= 1) & (need <= (total - 1)[:, None])


def capture_beam(
    likelihood: PolicyLikelihood,
    problems: Sequence[Problem],
    width: int = _DEFAULTS.beam_width,
    future: float = _DEFAULTS.beam_future,
    keep: int = 1,
    stats: Optional[SearchStats] = None,
    estimates: Optional[List[Dict[int, np.ndarray]]] = None,
    plans: Optional[Sequence[Optional[Sequence[Tuple[int, int]]]]] = None,
    meter: Optional["EvaluationMeter"] = None,
) -> List[List[Tuple[List[int], float]]]:
    """The ``keep`` most likely sequences found for each problem, best first, with log-likelihoods.

    Every problem of a call has the same number of moves.  A problem for
    which the beam keeps no prefix that reaches its position gets an empty
    list (the caller may widen the beam).  Ties go to the earlier prefix,
    then the lower Leela Zero index, as in :func:`moveorder.search.beam.beam_search`.
    ``estimates``: each problem's stone estimates (:func:`_no_estimates`), used and updated in place
    (a later pass of :func:`search` starts from an earlier one's); ``plans``: each problem's capture
    plan or None (module docstring, "Passes"); ``meter``: told of every evaluation.
    """
    t0 = time.perf_counter()
    net0, ev0 = likelihood.seconds, likelihood.evaluations
    lengths = {p.moves for p in problems}
    if len(lengths) > 1:
        raise ValueError(f"problems of different lengths in one batch: {sorted(lengths)}")
    targets = [_Target(p, None if plans is None else plans[a]) for a, p in enumerate(problems)]
    n = lengths.pop() if lengths else 0
    beams: List[List[_Prefix]] = [[_root()] for _ in problems]
    estimate = [_no_estimates() for _ in problems] if estimates is None else estimates
    children_built = pruned = 0
    for i in range(n):
        colour = BLACK if i % 2 == 0 else WHITE
        flat = [(a, p) for a, beam in enumerate(beams) for p in beam]
        if not flat:
            break
        logp = position_log_probs(likelihood, [p.hist for _, p in flat], colour == BLACK)[:, :POINTS]
        if meter is not None:
            meter.tick()
        row = 0
        for a, beam in enumerate(beams):
            if not beam:
                continue
            layer = _Layer(targets[a], beam, logp[row : row + len(beam)], i, estimate[a], future)
            row += len(beam)
            beams[a] = layer.choose(width, future, keep)
            children_built += layer.built
            pruned += layer.pruned
    out: List[List[Tuple[List[int], float]]] = []
    for a, beam in enumerate(beams):
        done = [p for p in beam if len(p.moves) == n and p.hist[0] == targets[a].final]
        out.append([(p.moves, p.ll) for p in done[:keep]])
    if stats is not None:
        stats.children += children_built
        stats.pruned += pruned
        stats.evaluations += likelihood.evaluations - ev0
        stats.requests += likelihood.evaluations - ev0
        stats.network_seconds += likelihood.seconds - net0
        stats.seconds += time.perf_counter() - t0
    return out


def backtrack(
    likelihood: PolicyLikelihood,
    problem: Problem,
    width: int,
    future: float,
    max_evaluations: int,
    stats: Optional[SearchStats] = None,
    meter: Optional["EvaluationMeter"] = None,
) -> Tuple[Optional[Tuple[List[int], float]], bool]:
    """Beam search that backtracks where its beam dies (beam-stack search, without its bound).

    It runs the beam of :func:`capture_beam`; where no child of a move's
    beam can reach the position, it goes back a move and takes the likeliest
    ``width`` children not tried there yet, and so on back to the first move.
    Returns the first complete sequence found (the beam's own when the beam
    succeeds) and whether the search ran out: ``(None, True)`` means every
    prefix was tried (no layer gave up with children untried), so no legal sequence reaches the position (up to the
    merge, which keeps one of two prefixes with the same last 8 boards even
    where their earlier positions differ for superko); ``(None, False)``
    means ``max_evaluations`` network evaluations were spent first.  ``meter``: told of every evaluation.
    """
    target = _Target(problem)
    estimate = _no_estimates()
    dead: Dict[int, set] = {}
    start = likelihood.evaluations

    def layer_of(beam: List[_Prefix], i: int) -> _Layer:
        lp = position_log_probs(likelihood, [p.hist for p in beam], i % 2 == 0)[:, :POINTS]
        if meter is not None:
            meter.tick()
        layer = _Layer(target, beam, lp, i, estimate, future)
        layer.dead = dead.setdefault(i + 1, set())
        return layer

    layers = [layer_of([_root()], 0)]
    complete = True
    while layers:
        layer = layers[-1]
        built, pruned = layer.built, layer.pruned
        kept = layer.choose(width, future)
        if stats is not None:
            stats.children += layer.built - built
            stats.pruned += layer.pruned - pruned
        if not kept:
            if layer.exhausted:
                dead.setdefault(layer.i, set()).update(p.hist for p in layer.beam)
            else:
                complete = False  # given up with children untried: no proof
            layers.pop()
            continue
        if layer.last:
            return (kept[0].moves, kept[0].ll), False
        if likelihood.evaluations - start >= max_evaluations:
            return None, False
        layers.append(layer_of(kept, layer.i + 1))
    return None, complete


def search(
    likelihood: PolicyLikelihood,
    problems: Sequence[Problem],
    width: int = _DEFAULTS.beam_width,
    future: float = _DEFAULTS.beam_future,
    patience: int = _DEFAULTS.patience,
    stats: Optional[SearchStats] = None,
    beam_passes: int = _DEFAULTS.beam_passes,
    beam_widen: int = _DEFAULTS.beam_widen,
    keep: int = 1,
    orders: Optional[List[List[Tuple[List[int], float]]]] = None,
    progress=None,
) -> List[Optional[Tuple[List[int], float]]]:
    """The best sequence found for each problem and its log-likelihood, or None where none was found.

    :func:`capture_beam` over all problems at once, ``beam_passes`` times:
    each pass after the first starts from the estimates of those before and
    searches a problem with an order found within that order's capture plan
    (module docstring, "Passes"), unless it was searched with that plan
    before, and a problem with none found yet with ``beam_widen`` times the
    width (in a batch of its own); the likelier order is kept (ties: the
    earlier pass's).  A problem no pass found anything for is searched again
    by :func:`backtrack`, with up to ``patience`` times one pass's evaluations
    (``patience x width x moves``).  ``stats.unreachable`` counts the problems
    proven to have no sequence.

    ``orders`` (a list): set to each problem's ``keep`` likeliest distinct
    sequences found, best first, the first being the one returned (none where
    None is); each pass keeps up to ``min(keep, width)`` complete sequences at
    its last move, which leaves every pass's best, and so the answer, as with
    ``keep`` 1.  ``progress``: anything with ``update(k)`` (a tqdm bar), told
    of the network evaluations spent, out of :func:`evaluation_budget`'s.
    """
    if beam_passes < 1:
        raise ValueError(f"beam_passes {beam_passes}: expected at least 1")
    if beam_widen < 1:
        raise ValueError(f"beam_widen {beam_widen}: expected at least 1")
    budget = evaluation_budget(problems, width, beam_passes, beam_widen, patience)
    meter = None if progress is None else EvaluationMeter(progress, likelihood, budget)
    estimates = [_no_estimates() for _ in problems]
    found: List[Optional[Tuple[List[int], float]]] = [None] * len(problems)
    searched: List[set] = [set() for _ in problems]  # the plans each problem was searched with
    pool: List[list] = [[] for _ in problems]  # every complete sequence found, pass by pass
    for k in range(beam_passes):
        plans = None if k == 0 else [None if r is None else capture_plan(r[0]) for r in found]
        again: List[list] = [[] for _ in problems]
        for w, members in _pass_groups(plans, searched, width, beam_widen):
            sub = capture_beam(
                likelihood,
                [problems[a] for a in members],
                w,
                future,
                stats=stats,
                estimates=[estimates[a] for a in members],
                plans=None if plans is None else [plans[a] for a in members],
                keep=min(keep, w),
                meter=meter,
            )
            for a, r in zip(members, sub):
                again[a] = r[:1]
                pool[a].extend(r)
        found = [_likelier(r, a[0] if a else None) for r, a in zip(found, again)]
    for k, r in enumerate(found):
        if r is None and patience >= 1:
            found[k] = _backtrack_counted(likelihood, problems[k], width, future, patience, stats, meter)
    if stats is not None:
        stats.not_found += sum(r is None for r in found)
    if orders is not None:
        orders[:] = [_distinct(best, others, keep) for best, others in zip(found, pool)]
    if meter is not None:
        meter.finish()
    return found


def _pass_groups(plans, searched: List[set], width: int, beam_widen: int) -> List[Tuple[int, List[int]]]:
    """The (width, problems) batches of a pass: every problem in the first (``plans`` None); after it, a
    problem with a plan not searched yet (the plan is recorded in ``searched``), and one with no order
    yet with ``beam_widen`` times the width, in a batch of its own.  Empty batches are left out."""
    if plans is None:
        return [(width, list(range(len(searched))))]
    planned = [a for a, p in enumerate(plans) if p is not None and p not in searched[a]]
    unanswered = [a for a, p in enumerate(plans) if p is None]
    for a in planned:
        searched[a].add(plans[a])
    if beam_widen > 1:
        groups = [(width, planned), (width * beam_widen, unanswered)]
    else:
        groups = [(width, sorted(planned + unanswered))]
    return [(w, members) for w, members in groups if members]


def _backtrack_counted(likelihood, problem: Problem, width, future, patience, stats, meter):
    """:func:`backtrack` with ``patience`` times one pass's evaluations, its work added to ``stats``."""
    ev0, net0, t0 = likelihood.evaluations, likelihood.seconds, time.perf_counter()
    found, exhausted = backtrack(likelihood, problem, width, future, patience * width * problem.moves, stats, meter)
    if stats is not None:
        stats.backtracked += 1
        stats.unreachable += exhausted
        stats.evaluations += likelihood.evaluations - ev0
        stats.requests += likelihood.evaluations - ev0
        stats.network_seconds += likelihood.seconds - net0
        stats.seconds += time.perf_counter() - t0
    return found


def evaluation_budget(problems: Sequence[Problem], width: int, beam_passes: int, beam_widen: int, patience: int) -> int:
    """The most network evaluations :func:`search` may spend on ``problems``: each pass's beam (a later
    one up to ``beam_widen`` times as wide) and the backtracking's ``patience``, ``width`` a move each."""
    return sum(width * p.moves * (1 + (beam_passes - 1) * beam_widen + patience) for p in problems)


class EvaluationMeter:
    """Tells ``progress`` (``update(k)``) of the network evaluations ``likelihood`` makes from now on,
    up to ``budget``; :meth:`finish` fills the rest (a search that stops early has used no more)."""

    def __init__(self, progress, likelihood: PolicyLikelihood, budget: int):
        self.progress, self.likelihood, self.budget = progress, likelihood, budget
        self.start, self.told = likelihood.evaluations, 0

    def tick(self) -> None:
        now = min(self.budget, self.likelihood.evaluations - self.start)
        self.progress.update(now - self.told)
        self.told = now

    def finish(self) -> None:
        self.progress.update(self.budget - self.told)
        self.told = self.budget


def _distinct(best, others, keep: int) -> List[Tuple[List[int], float]]:
    """``best`` (or nothing if None), then the likeliest of ``others`` not already listed, up to ``keep`` in all."""
    out = [] if best is None else [best]
    seen = {tuple(m) for m, _ in out}
    for moves, ll in sorted(others, key=lambda r: -r[1]):
        if len(out) < keep and tuple(moves) not in seen:
            seen.add(tuple(moves))
            out.append((moves, ll))
    return out


def _likelier(old, new):
    """The likelier of two results (``(moves, log-likelihood)`` or None); ties keep ``old``."""
    if new is None or (old is not None and new[1] <= old[1]):
        return old
    return new


def _child(target: _Target, parent: _Prefix, k: int, colour: int, ll: float, i: int, last: bool) -> Optional[_Prefix]:
    """The prefix with move ``k`` (Leela Zero index) for ``colour``, or None where it is illegal or cannot
    reach the target."""
    board = parent.board.copy()
    try:
        board.play(colour, coords.from_lz(k))
    except goboard.IllegalMove:
        return None
    now = bytes(board.points)
    if now in parent.seen:  # positional superko
        return None
    if last:
        if now != target.final:
            return None
    elif not _alive(target, board, i + 1, now):
        return None
    return _Prefix(parent.moves + [k], ll, board, (now,) + parent.hist[: HISTORY - 1], parent.seen | {now})


class _Layer:
    """One problem's prefixes after ``i`` moves and every child they could have, built on demand.

    The first :meth:`choose` keeps the children of the beam, in tiers:
    1. the most likely (all of the width for the plain beam, half with ``future``, a quarter
       (:data:`CAPTURE_TIERS`) for a problem with captures, half with a capture plan
       (:data:`PLAN_TIERS`));
    2. for a problem with captures, a quarter of the width by fewest captures still to make (then
       likelihood): prefixes that have done their capturing are kept beside those that put it off,
       which narrow beams otherwise lose;
    3. for a problem with captures and no plan, half of the width by doomed set
       (:meth:`_fill_doomed_sets`);
    4. the rest by the score of the module docstring (with ``future``), else by likelihood.
    Later calls (backtracking, :func:`search`) keep the likeliest children not tried yet.  Children
    are merged by their network input at the next move (a key once kept is never kept again, nor one
    known dead); at the last move only the ``keep`` likeliest complete sequences are kept.
    """

    def __init__(self, target: _Target, beam: List[_Prefix], lp: np.ndarray, i: int, estimate, future: float):
        self.target, self.beam, self.i, self.estimate = target, beam, i, estimate
        self.colour = BLACK if i % 2 == 0 else WHITE
        self.last = i == target.n - 1
        cur = np.frombuffer(b"".join(p.hist[0] for p in beam), dtype=np.uint8).reshape(len(beam), POINTS)
        cur = cur[:, FLAT_OF_LZ]
        final_c = target.final_lz == self.colour
        doomed_ok = _doomed_ok(target, cur, self.colour, i)
        if target.plan is not None:
            doomed_ok &= target.plan[self.colour][None, :]
        cand = (cur == EMPTY) & (final_c[None, :] | doomed_ok)
        self.rows, self.pts = np.nonzero(cand)  # row-major: prefix by prefix, points in Leela Zero order
        self.g = np.array([p.ll for p in beam])[self.rows] + lp[self.rows, self.pts]
        if future and len(self.rows):
            mask = final_c[self.pts]
            np.maximum.at(estimate[self.colour], self.pts[mask], lp[self.rows[mask], self.pts[mask]])
        self.tried = np.zeros(len(self.g), dtype=bool)
        self.keys: set = set()
        self.dead: set = set()  # keys of children known not to reach the target (backtracking)
        self.by_g = np.lexsort((self.pts, self.rows, -self.g))  # ties: the earlier prefix, the lower index
        self.first = True
        self.prune_budget = 0
        self.built = self.pruned = 0

    def _fill(self, kept: List[_Prefix], order, limit: int) -> None:
        for j in order:
            if len(kept) >= limit or self.prune_budget <= 0:
                break
            if self.tried[j]:
                continue
            self.tried[j] = True
            child = _child(
                self.target, self.beam[self.rows[j]], int(self.pts[j]), self.colour, float(self.g[j]), self.i, self.last
            )
            self.built += 1
            if child is None:
                self.pruned += 1
                self.prune_budget -= 1
                continue
            if not self.last:
                if child.hist in self.keys or child.hist in self.dead:
                    continue
                self.keys.add(child.hist)
            kept.append(child)

    def _fill_doomed_sets(self, kept: List[_Prefix], limit: int) -> None:
        """Keep, likeliest first, children whose doomed set no child kept has, up to ``limit`` in all.

        A child's doomed set is the set of points holding stones the rest must capture (a stone where
        the position has none of its colour).  Before building a child it is taken as its parent's set,
        with the move's point where the move is doomed (captures by the move ignored); a child whose
        set so taken was seen is not built.  Built, its exact set counts as seen.
        """

        def doomed_set(board: bytes) -> frozenset:
            return frozenset(_doomed_points(np.frombuffer(board, dtype=np.uint8), self.target.final_flat))

        parents = [doomed_set(p.hist[0]) for p in self.beam]
        seen = {doomed_set(c.hist[0]) for c in kept}
        doomed_move = self.target.final_lz[self.pts] != self.colour
        for j in self.by_g:
            if len(kept) >= limit or self.prune_budget <= 0:
                break
            if self.tried[j]:
                continue
            key = parents[self.rows[j]]
            if doomed_move[j]:
                key = key | {coords.lz_to_flat(int(self.pts[j]))}
            if key in seen:
                continue
            seen.add(key)
            before = len(kept)
            self._fill(kept, (j,), limit)
            if len(kept) > before:
                seen.add(doomed_set(kept[-1].hist[0]))

    @property
    def exhausted(self) -> bool:
        """Every child has been tried."""
        return bool(self.tried.all())

    def choose(self, width: int, future: float, keep: int = 1) -> List[_Prefix]:
        """The next children kept (see the class docstring); a call gives up after ``PRUNED_PER_CHILD x
        width`` children that cannot reach the position (dead regions cost no more than that)."""
        kept: List[_Prefix] = []
        target, g, rows, pts = self.target, self.g, self.rows, self.pts
        self.prune_budget = PRUNED_PER_CHILD * max(width, keep)
        if self.last:
            self._fill(kept, self.by_g, keep)
            return kept
        if not self.first:
            self._fill(kept, self.by_g, width)
            return kept
        self.first = False
        captures = target.budget[BLACK] + target.budget[WHITE] > 0
        if captures:
            tiers = CAPTURE_TIERS if target.plan is None else PLAN_TIERS
            by_g, by_owed, by_doomed = (int(width * share) for share in tiers)
            self._fill(kept, self.by_g, by_g)
            owed = np.array([_captures_to_make(target, p.board, self.i) for p in self.beam])
            self._fill(kept, np.lexsort((pts, rows, -g, owed[rows])), len(kept) + by_owed)
            self._fill_doomed_sets(kept, min(width, len(kept) + by_doomed))
        else:
            self._fill(kept, self.by_g, width // 2 if future else width)
        if future:
            est = self.estimate[self.colour]
            d = _other_move_estimate(self.estimate) if captures else 0.0
            standing = np.array([_standing_estimate(p.hist[0], target, self.estimate, d) for p in self.beam])
            own = np.where(target.final_lz[pts] == self.colour, est[pts] - d, 0.0)
            score = g - future * (standing[rows] + own)
            self._fill(kept, np.lexsort((pts, rows, -g, -score)), width)
        else:
            self._fill(kept, self.by_g, width)
        return kept


def _captures_to_make(target: _Target, board: goboard.Board, i: int) -> int:
    """Stones the rest of the sequence must still capture, after ``i`` moves."""
    return sum(target.budget[c] - (_played(i, c) - board.points.count(c)) for c in (BLACK, WHITE))


def _other_move_estimate(estimate) -> float:
    """The estimate of a move still to play that is not a final stone (a stone to be captured, or a
    final stone to be replayed): the mean of the final stones' estimates so far (0 before any)."""
    seen = np.concatenate([estimate[BLACK], estimate[WHITE]])
    seen = seen[np.isfinite(seen)]
    return float(seen.mean()) if len(seen) else 0.0


def _standing_estimate(board_bytes: bytes, target: _Target, estimate, d: float) -> float:
    """Sum over the final stones standing at their points of (their estimate - ``d``).

    Ranks as the estimate of what is still to play (module docstring): every prefix of a move number
    has as many moves left, each a missing final stone (its estimate) or another move (``d``).
    """
    cur = np.frombuffer(board_bytes, dtype=np.uint8)[FLAT_OF_LZ]
    total = 0.0
    for colour in (BLACK, WHITE):
        mask = (cur == colour) & (target.final_lz == colour)
        total += float((estimate[colour][mask] - d).sum())
    return total
