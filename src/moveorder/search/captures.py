"""Orders of play for positions with captures: the problem, its refusals, and the ranked beam over legal play.

The problem: the stones on the board, and the *prisoners*: the
number of stones each side has captured (Black's prisoners are white
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

Passes: :func:`search` may run the beam again (``passes``).  A later pass
starts from the stone estimates of the passes before (every evaluation so far,
so its future costs are informed from the first move), and where an order was
found, keeps its doomed stones to that order's *capture plan*: the points
where each colour had a stone captured (:func:`capture_plan`), once a plan;
where none was, it may search with a wider beam (``widen``: evaluations spent
only on the problems not answered yet).  With the plan
the doomed-set tier has nothing to spread, so such a problem is ranked by
:data:`PLAN_TIERS`.  The likelier of the orders found is kept.  Boards are in the
top-row-first flat order of :mod:`moveorder.go.board`; moves in and out are
Leela Zero indices.

The annealer and the exact solver handle capture-free positions only; a
position with prisoners is refused by :func:`require_beam` with the method
that can.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import POINTS
from moveorder.nets.features import FLAT_OF_LZ, HISTORY, history_stack_planes
from moveorder.nets.likelihood import PolicyLikelihood, legal_renormalised, log
from moveorder.settings import AnnealConfig

_DEFAULTS = AnnealConfig()

BLACK, WHITE, EMPTY = goboard.BLACK, goboard.WHITE, goboard.EMPTY
_EMPTY_BOARD = bytes(POINTS)
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


@dataclass(frozen=True)
class Problem:
    """One position to order: final stones (Leela Zero indices) and the prisoners each side took."""

    black: Tuple[int, ...]
    white: Tuple[int, ...]
    prisoners_black: int = 0  # white stones Black captured
    prisoners_white: int = 0  # black stones White captured

    @property
    def moves(self) -> int:
        return len(self.black) + len(self.white) + self.prisoners_black + self.prisoners_white

    def moves_of(self, colour: int) -> int:
        """Moves ``colour`` plays: its final stones and its stones the other side captured."""
        if colour == BLACK:
            return len(self.black) + self.prisoners_white
        return len(self.white) + self.prisoners_black

    def captured_of(self, colour: int) -> int:
        """Stones of ``colour`` the sequence captures (the other side's prisoners)."""
        return self.prisoners_white if colour == BLACK else self.prisoners_black

    def final_board(self) -> bytes:
        """The position as a flat board (``bytes``, one value per point)."""
        b = bytearray(POINTS)
        for colour, stones in ((BLACK, self.black), (WHITE, self.white)):
            for k in stones:
                b[coords.lz_to_flat(k)] = colour
        return bytes(b)


def check_problem(
    black: Sequence[coords.Point], white: Sequence[coords.Point], prisoners: Tuple[int, int], where: str
) -> None:
    """Raise ValueError naming ``where`` and the reason unless some legal sequence could end at this position.

    Refused: negative prisoner counts, move counts that cannot alternate from
    Black even with the prisoners, no move at all, a group without liberties
    (after any legal move every group on the board has one), and no stone of
    the colour that moved last (its last stone cannot have been captured).  The
    point checks (on the board, one stone a point) are the caller's
    (:func:`moveorder.search.inference.check_position`'s, which runs first).
    """
    pb, pw = prisoners
    if pb < 0 or pw < 0:
        raise ValueError(f"{where}: prisoners {pb} {pw}: counts cannot be negative")
    moves_b, moves_w = len(black) + pw, len(white) + pb
    if moves_b + moves_w < 1:
        raise ValueError(f"{where}: the position has no stones and no prisoners")
    if moves_b - moves_w not in (0, 1):
        raise ValueError(
            f"{where}: {len(black)} black and {len(white)} white stones with prisoners {pb} (Black's) and "
            f"{pw} (White's) make {moves_b} black and {moves_w} white moves: with Black first and alternating "
            "moves, Black plays as many moves as White or one more"
        )
    dead = goboard.groups_without_liberties(goboard.from_stones(black, white))
    if dead:
        names = "; ".join(" ".join(coords.to_gtp(p) for p in g) for g in dead)
        raise ValueError(f"{where}: group(s) without liberties ({names}): no legal move leaves a group so")
    last, stones = ("Black", black) if (moves_b + moves_w) % 2 == 1 else ("White", white)
    if not stones:
        raise ValueError(
            f"{where}: the last of the {moves_b + moves_w} moves is {last}'s, but {last} has no stone on the "
            "board: nothing after the last move can have captured it"
        )


def require_beam(method: str, prisoners: Tuple[int, int], where: str) -> None:
    """Refuse a position with captures for a method other than the beam (the one that handles them)."""
    if any(prisoners) and method != "beam":
        raise ValueError(
            f"{where}: a position with captures (prisoners {prisoners[0]} {prisoners[1]}) is searched by the "
            f"beam only; method {method!r} orders capture-free positions (use method beam)"
        )


# --- network input ---------------------------------------------------------------------------


def history_planes(histories: Sequence[Tuple[bytes, ...]], black_to_move: bool) -> torch.Tensor:
    """``(P, 18, 19, 19)`` float32 planes (Leela Zero order) from each prefix's last boards.

    ``histories[k]``: flat boards, the current one first, at most 8 (fewer near the start: the
    planes before the empty board are zeros), as :func:`moveorder.nets.features.board_history_planes`.
    """
    buf = b"".join(b"".join(h) + _EMPTY_BOARD * (HISTORY - len(h)) for h in histories)
    boards = np.frombuffer(buf, dtype=np.uint8).reshape(len(histories), HISTORY, POINTS)[:, :, FLAT_OF_LZ]
    return torch.from_numpy(history_stack_planes(boards, black_to_move))


def position_log_probs(
    likelihood: PolicyLikelihood, histories: Sequence[Tuple[bytes, ...]], black_to_move: bool
) -> np.ndarray:
    """``(P, 362)`` float64 log ``P(move | position)`` (Leela Zero order) of the prefixes' positions.

    With ``legal_only``, divided by the mass on the empty points and pass, as
    :meth:`moveorder.nets.likelihood.PolicyLikelihood.probs_of_codes` does.
    """
    t0 = time.perf_counter()
    probs = likelihood.probs_of_planes(history_planes(histories, black_to_move)).cpu()
    if likelihood.legal_only:
        cur = np.frombuffer(b"".join(h[0] for h in histories), dtype=np.uint8).reshape(len(histories), POINTS)
        probs = legal_renormalised(probs, torch.from_numpy(cur[:, FLAT_OF_LZ] == EMPTY))
    likelihood.seconds += time.perf_counter() - t0
    return log(probs).numpy()


def replay_boards(moves: Sequence[int]) -> List[bytes]:
    """Flat boards before each move of a sequence (Leela Zero indices, Black first) and after the last.

    Raises :class:`moveorder.go.board.IllegalMove` naming the move for an illegal one.
    """
    board, out = goboard.Board(), [_EMPTY_BOARD]
    for i, k in enumerate(moves):
        try:
            board.play(BLACK if i % 2 == 0 else WHITE, coords.from_lz(k))
        except goboard.IllegalMove as err:
            raise goboard.IllegalMove(f"move {i + 1}: {err}") from None
        out.append(bytes(board.points))
    return out


def sequence_log_probs(likelihood: PolicyLikelihood, moves: Sequence[int]) -> np.ndarray:
    """``(n,)`` log-probabilities of each move of a sequence that may capture (replayed on the board)."""
    boards = replay_boards(moves)
    out = np.empty(len(moves))
    for parity in (0, 1):
        idx = list(range(parity, len(moves), 2))
        if not idx:
            continue
        hist = [tuple(boards[max(0, i - HISTORY + 1) : i + 1][::-1]) for i in idx]
        lp = position_log_probs(likelihood, hist, parity == 0)
        out[idx] = lp[np.arange(len(idx)), [moves[i] for i in idx]]
    return out


def problem_of_arrangement(arrangement) -> Problem:
    """The problem of an :class:`moveorder.data.arrangements.Arrangement`: its stones and prisoners."""
    return Problem(
        tuple(sorted(coords.sgf_to_lz(arrangement.black))),
        tuple(sorted(coords.sgf_to_lz(arrangement.white))),
        int(arrangement.prisoners[0]),
        int(arrangement.prisoners[1]),
    )


def captured_points(moves: Sequence[int]) -> List[Tuple[int, int]]:
    """``(colour, Leela Zero index)`` of every stone of a sequence that a later move of it captures."""
    board, placed, out = goboard.Board(), {}, []
    for i, k in enumerate(moves):
        colour = BLACK if i % 2 == 0 else WHITE
        before = list(board.points)
        board.play(colour, coords.from_lz(k))
        placed[coords.lz_to_flat(k)] = (colour, k)
        for p, v in enumerate(before):
            if v != EMPTY and board.points[p] == EMPTY:
                out.append(placed[p])
    return out


def captured_placed(actual: Sequence[int], inferred: Sequence[int]) -> float:
    """Share of the actual sequence's captured stones that the inferred one also played, and lost, on
    the same point with the same colour (as multisets; 1.0 when nothing was captured)."""
    from collections import Counter

    a, b = Counter(captured_points(actual)), Counter(captured_points(inferred))
    total = sum(a.values())
    return sum((a & b).values()) / total if total else 1.0


def capture_plan(moves: Sequence[int]) -> Tuple[Tuple[int, int], ...]:
    """The capture plan of a legal sequence: the distinct ``(colour, Leela Zero index)`` of its stones
    that a later move captures, sorted (a point retaken in a ko counts once)."""
    return tuple(sorted(set(captured_points(moves))))


# --- the search --------------------------------------------------------------------------------


class _Prefix:
    __slots__ = ("moves", "ll", "board", "hist", "seen")

    def __init__(self, moves, ll, board, hist, seen):
        self.moves, self.ll, self.board, self.hist, self.seen = moves, ll, board, hist, seen


def _root() -> _Prefix:
    """The empty prefix: the empty board, the only position seen."""
    return _Prefix([], 0.0, goboard.Board(), (_EMPTY_BOARD,), frozenset([_EMPTY_BOARD]))


@dataclass
class SearchStats:
    """Work of :func:`capture_beam`: positions evaluated, children built, and time in and out of the network."""

    evaluations: int = 0
    children: int = 0
    pruned: int = 0
    backtracked: int = 0  # problems the beam found nothing for, searched again by backtracking
    unreachable: int = 0  # of which the backtracking proved that no sequence reaches the position
    not_found: int = 0  # problems for which no sequence was found
    seconds: float = 0.0
    network_seconds: float = 0.0


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


def _slack(t: _Target, cur: np.ndarray, colour: int, i: int) -> np.ndarray:
    """``(P,)`` remaining budget ``P_c - K_c - D_c`` of ``colour`` after ``i`` moves, boards ``cur`` ``(P, 361)``."""
    mine = cur == colour
    doomed = np.count_nonzero(mine & (t.final_lz != colour)[None, :], axis=1)
    captured = _played(i, colour) - np.count_nonzero(mine, axis=1)
    return t.budget[colour] - captured - doomed


def _doomed_ok(t: _Target, cur: np.ndarray, colour: int, i: int) -> np.ndarray:
    """``(P, 361)``: where ``colour`` may put a doomed stone (Leela Zero order), before building the child.

    The stone uses a unit of its colour's budget, and each empty neighbour where the position has no
    opponent stone will need one more (:func:`_alive`); a capture by the stone cannot lower that count.
    """
    mine_left = _slack(t, cur, colour, i)
    total = mine_left + _slack(t, cur, goboard.opponent(colour), i)
    costly = np.zeros((cur.shape[0], POINTS + 1), dtype=np.int16)
    costly[:, :POINTS] = (cur == EMPTY) & (t.final_lz != goboard.opponent(colour))[None, :]
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
) -> List[List[Tuple[List[int], float]]]:
    """The ``keep`` most likely sequences found for each problem, best first, with log-likelihoods.

    Every problem of a call has the same number of moves.  A problem for
    which the beam keeps no prefix that reaches its position gets an empty
    list (the caller may widen the beam).  Ties go to the earlier prefix,
    then the lower Leela Zero index, as in :func:`moveorder.search.beam.beam_search`.
    ``estimates``: each problem's stone estimates (:func:`_no_estimates`), used and updated in place
    (a later pass of :func:`search` starts from an earlier one's); ``plans``: each problem's capture
    plan or None (module docstring, "Passes").
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
    means ``max_evaluations`` network evaluations were spent first.
    """
    t = _Target(problem)
    estimate = _no_estimates()
    dead: Dict[int, set] = {}
    start = likelihood.evaluations

    def layer_of(beam: List[_Prefix], i: int) -> _Layer:
        lp = position_log_probs(likelihood, [p.hist for p in beam], i % 2 == 0)[:, :POINTS]
        layer = _Layer(t, beam, lp, i, estimate, future)
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
    passes: int = _DEFAULTS.beam_passes,
    widen: int = _DEFAULTS.beam_widen,
    keep: int = 1,
    orders: Optional[List[List[Tuple[List[int], float]]]] = None,
) -> List[Optional[Tuple[List[int], float]]]:
    """The best sequence found for each problem and its log-likelihood, or None where none was found.

    :func:`capture_beam` over all problems at once, ``passes`` times: each
    pass after the first starts from the estimates of those before and
    searches a problem with an order found within that order's capture plan
    (module docstring, "Passes"), unless it was searched with that plan
    before, and a problem with none found yet with ``widen`` times the
    width (in a batch of its own); the likelier order is kept (ties: the
    earlier pass's).  A problem no pass found anything for is searched again
    by :func:`backtrack`, with up to ``patience`` times one pass's evaluations
    (``patience x width x moves``).  ``stats.unreachable`` counts the problems
    proven to have no sequence.

    ``orders`` (a list): set to each problem's ``keep`` likeliest distinct
    sequences found, best first, the first being the one returned (none where
    None is); each pass keeps up to ``min(keep, width)`` complete sequences at
    its last move, which leaves every pass's best, and so the answer, as with
    ``keep`` 1.
    """
    if passes < 1:
        raise ValueError(f"passes {passes}: expected at least 1")
    if widen < 1:
        raise ValueError(f"widen {widen}: expected at least 1")
    estimates = [_no_estimates() for _ in problems]
    found: List[Optional[Tuple[List[int], float]]] = [None] * len(problems)
    searched: List[set] = [set() for _ in problems]  # the plans each problem was searched with
    pool: List[list] = [[] for _ in problems]  # every complete sequence found, pass by pass
    for k in range(passes):
        plans = None if k == 0 else [None if r is None else capture_plan(r[0]) for r in found]
        if k == 0:
            groups = [(width, list(range(len(problems))))]
        else:  # a plan is searched once; a problem with no order yet with a wider beam, in its own batch
            planned = [a for a, p in enumerate(plans) if p is not None and p not in searched[a]]
            unanswered = [a for a, p in enumerate(plans) if p is None]
            for a in planned:
                searched[a].add(plans[a])
            if widen > 1:
                groups = [(width, planned), (width * widen, unanswered)]
            else:
                groups = [(width, sorted(planned + unanswered))]
        again: List[list] = [[] for _ in problems]
        for w, members in groups:
            if not members:
                continue
            sub = capture_beam(
                likelihood,
                [problems[a] for a in members],
                w,
                future,
                stats=stats,
                estimates=[estimates[a] for a in members],
                plans=None if plans is None else [plans[a] for a in members],
                keep=min(keep, w),
            )
            for a, r in zip(members, sub):
                again[a] = r[:1]
                pool[a].extend(r)
        found = [_likelier(r, a[0] if a else None) for r, a in zip(found, again)]
    for k, r in enumerate(found):
        if r is not None or patience < 1:
            continue
        ev0, net0, t0 = likelihood.evaluations, likelihood.seconds, time.perf_counter()
        found[k], exhausted = backtrack(
            likelihood, problems[k], width, future, patience * width * problems[k].moves, stats
        )
        if stats is not None:
            stats.backtracked += 1
            stats.unreachable += exhausted
            stats.evaluations += likelihood.evaluations - ev0
            stats.network_seconds += likelihood.seconds - net0
            stats.seconds += time.perf_counter() - t0
    if stats is not None:
        stats.not_found += sum(r is None for r in found)
    if orders is not None:
        orders[:] = [_distinct(best, others, keep) for best, others in zip(found, pool)]
    return found


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


def _child(t: _Target, parent: _Prefix, k: int, colour: int, ll: float, i: int, last: bool) -> Optional[_Prefix]:
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
        if now != t.final:
            return None
    elif not _alive(t, board, i + 1, now):
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

    def __init__(self, t: _Target, beam: List[_Prefix], lp: np.ndarray, i: int, estimate, future: float):
        self.t, self.beam, self.i, self.estimate = t, beam, i, estimate
        self.colour = BLACK if i % 2 == 0 else WHITE
        self.last = i == t.n - 1
        cur = np.frombuffer(b"".join(p.hist[0] for p in beam), dtype=np.uint8).reshape(len(beam), POINTS)
        cur = cur[:, FLAT_OF_LZ]
        final_c = t.final_lz == self.colour
        doomed_ok = _doomed_ok(t, cur, self.colour, i)
        if t.plan is not None:
            doomed_ok &= t.plan[self.colour][None, :]
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
                self.t, self.beam[self.rows[j]], int(self.pts[j]), self.colour, float(self.g[j]), self.i, self.last
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
            return frozenset(_doomed_points(np.frombuffer(board, dtype=np.uint8), self.t.final_flat))

        parents = [doomed_set(p.hist[0]) for p in self.beam]
        seen = {doomed_set(c.hist[0]) for c in kept}
        doomed_move = self.t.final_lz[self.pts] != self.colour
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
        t, g, rows, pts = self.t, self.g, self.rows, self.pts
        self.prune_budget = PRUNED_PER_CHILD * max(width, keep)
        if self.last:
            self._fill(kept, self.by_g, keep)
            return kept
        if not self.first:
            self._fill(kept, self.by_g, width)
            return kept
        self.first = False
        captures = t.budget[BLACK] + t.budget[WHITE] > 0
        if captures:
            tiers = CAPTURE_TIERS if t.plan is None else PLAN_TIERS
            by_g, by_owed, by_doomed = (int(width * share) for share in tiers)
            self._fill(kept, self.by_g, by_g)
            owed = np.array([_captures_to_make(t, p.board, self.i) for p in self.beam])
            self._fill(kept, np.lexsort((pts, rows, -g, owed[rows])), len(kept) + by_owed)
            self._fill_doomed_sets(kept, min(width, len(kept) + by_doomed))
        else:
            self._fill(kept, self.by_g, width // 2 if future else width)
        if future:
            est = self.estimate[self.colour]
            d = _other_move_estimate(self.estimate) if captures else 0.0
            standing = np.array([_standing_estimate(p.hist[0], t, self.estimate, d) for p in self.beam])
            own = np.where(t.final_lz[pts] == self.colour, est[pts] - d, 0.0)
            score = g - future * (standing[rows] + own)
            self._fill(kept, np.lexsort((pts, rows, -g, -score)), width)
        else:
            self._fill(kept, self.by_g, width)
        return kept


def _captures_to_make(t: _Target, board: goboard.Board, i: int) -> int:
    """Stones the rest of the sequence must still capture, after ``i`` moves."""
    return sum(t.budget[c] - (_played(i, c) - board.points.count(c)) for c in (BLACK, WHITE))


def _other_move_estimate(estimate) -> float:
    """The estimate of a move still to play that is not a final stone (a stone to be captured, or a
    final stone to be replayed): the mean of the final stones' estimates so far (0 before any)."""
    seen = np.concatenate([estimate[BLACK], estimate[WHITE]])
    seen = seen[np.isfinite(seen)]
    return float(seen.mean()) if len(seen) else 0.0


def _standing_estimate(board_bytes: bytes, t: _Target, estimate, d: float) -> float:
    """Sum over the final stones standing at their points of (their estimate - ``d``).

    Ranks as the estimate of what is still to play (module docstring): every prefix of a move number
    has as many moves left, each a missing final stone (its estimate) or another move (``d``).
    """
    cur = np.frombuffer(board_bytes, dtype=np.uint8)[FLAT_OF_LZ]
    total = 0.0
    for colour in (BLACK, WHITE):
        mask = (cur == colour) & (t.final_lz == colour)
        total += float((estimate[colour][mask] - d).sum())
    return total
