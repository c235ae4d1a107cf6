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
or fail a necessary condition of :func:`moveorder.search.prunes.alive` (doomed groups within the
prisoners still to take, a capturer left, the liberties of doomed groups
within the budgets) are pruned; at the last move only the exact position is
accepted.

Prefixes whose network input is the same (the last 8 boards and the side to
move) are merged, the likelier kept; with ``merge`` board (``SearchConfig.capture_merge``), those
with the same board, whatever came before: beside a beam over many moves, up to a third of its
prefixes are the same board reached in other orders, and merged the width goes to other boards
(docs/benchmarks.md, "Prefixes with the same board").  Children are ranked in tiers
(:class:`moveorder.search.layer.Layer`).  Without captures: half the width by log-likelihood
``g``, the rest by ``g`` less ``future`` times the best log-probabilities
seen so far of the final stones standing (with captures, each less a
per-move estimate for the other moves still to play); that is exactly
:func:`moveorder.search.beam.beam_search`'s ranking (a test checks the two give the
same orders).  With captures (:data:`moveorder.search.layer.CAPTURE_TIERS`): a quarter by ``g``, a
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
only on the problems not answered yet), and within the plan with a beam of its own width (``widen
found``: the plan fixes where the captures go, and a wider beam there orders the rest better).  With the plan
the doomed-set tier has nothing to spread, so such a problem is ranked by
:data:`moveorder.search.layer.PLAN_TIERS`.  The likelier of the orders found is kept.  Boards are in the
top-row-first flat order of :mod:`moveorder.go.board`; moves in and out are
Leela Zero indices.

Sites: before an order is found, a doomed stone stands only on the position's *capture sites*
(:func:`moveorder.search.plans.capture_sites`): a point where the position has no stone of its
colour and all its neighbours but ``open_sides`` are the other colour's, or a point of an empty region
that only the other colour's stones border (where a group of several stones was taken).  A captured
stone's liberties were the capturer's when it was taken, and those stones mostly still stand: on real
games at 100 moves, the sites with one open side hold every point of the players' plan in 99-100% of
positions, where anywhere a beam spends most of its children on doomed stones no capture can take, and
dies.  The rungs of
:data:`moveorder.search.plans.SITE_LADDER` take the positions not answered yet pass by pass to the
next: the sites with no open side (about as many points as the players' plan), then with one, then
anywhere; where the passes end below the last rung, the search adds a beam on each rung left
(:func:`search`).  Backtracking puts doomed stones anywhere, so its proof that no sequence exists
holds.

The proposer: where the first pass finds no order for any orientation of a position, the plan is what
failed, and a cheaper network may find one (``proposer``, ``SearchConfig.capture_proposer``: the shipped
4x32 ``tygem``, about 24 times cheaper a position than the 6x128).  It searches that position's
orientations as ``config/captures.yaml`` does (two passes, the second 4 times as wide where the first found
nothing, one prefix for each last 8 boards), and the pass after the first searches the orientation of its
likeliest order within that order's capture plan, from the first pass's stone estimates, and the other
orientations as before.  The proposer's own orders are not kept: under the stronger network they are far
less likely than the orders found within their plans (docs/benchmarks.md, "Where the first pass finds
nothing").

The annealer and the exact solver handle capture-free positions only; the dispatcher
(:func:`moveorder.search.dispatch.run`) refuses a position with prisoners for them, naming the method
that can.  The positions' network input and the replay of a sequence are
:mod:`moveorder.search.boards`'s.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.go import board as goboard
from moveorder.go.coords import POINTS
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search.boards import PositionMemo, position_log_probs
from moveorder.search.layer import Layer, Prefix, no_estimates, root
from moveorder.search.plans import SITE_LADDER, capture_plan
from moveorder.search.problem import Problem, SearchStats, likelihood_counters
from moveorder.search.prunes import Target
from moveorder.settings import CACHE_SLOTS, SearchConfig

_DEFAULTS = SearchConfig()
#: The proposer's own search (:func:`search`'s ``proposer``): two passes, the second 4 times as wide where
#: the first found nothing (and as wide as the first within the plan of an order found).
PROPOSER_PASSES = 2
PROPOSER_WIDEN = 4
BLACK, WHITE = goboard.BLACK, goboard.WHITE


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
    sites: Optional[Sequence[Optional[int]]] = None,
    merge: str = _DEFAULTS.capture_merge,
    memo: Optional[PositionMemo] = None,
) -> List[List[Tuple[List[int], float]]]:
    """The ``keep`` most likely sequences found for each problem, best first, with log-likelihoods.

    Every problem of a call has the same number of moves.  A problem for
    which the beam keeps no prefix that reaches its position gets an empty
    list (the caller may widen the beam).  Ties go to the earlier prefix,
    then the lower Leela Zero index, as in :func:`moveorder.search.beam.beam_search`.
    ``estimates``: each problem's stone estimates (:func:`no_estimates`), used and updated in place
    (a later pass of :func:`search` starts from an earlier one's); ``plans``: each problem's capture
    plan or None (module docstring, "Passes"); ``sites``: each problem's capture sites without a plan
    (:func:`moveorder.search.plans.capture_sites`'s ``open_sides``, None: anywhere; module docstring,
    "Sites"); all None if not given.  ``meter``: told of every evaluation.  ``merge``: which prefixes
    count as one (:func:`moveorder.search.layer.merge_key`).  ``memo``: the distributions the network has
    given already (:class:`moveorder.search.boards.PositionMemo`), asked first and added to.
    """
    before = likelihood_counters(likelihood)
    lengths = {p.moves for p in problems}
    if len(lengths) > 1:
        raise ValueError(f"problems of different lengths in one batch: {sorted(lengths)}")
    targets = [
        Target(p, None if plans is None else plans[a], None if sites is None else sites[a])
        for a, p in enumerate(problems)
    ]
    n = lengths.pop() if lengths else 0
    beams: List[List[Prefix]] = [[root()] for _ in problems]
    estimate = [no_estimates() for _ in problems] if estimates is None else estimates
    children_built = pruned = 0
    for i in range(n):
        colour = BLACK if i % 2 == 0 else WHITE
        flat = [(a, p) for a, beam in enumerate(beams) for p in beam]
        if not flat:
            break
        logp = position_log_probs(likelihood, [p.hist for _, p in flat], colour == BLACK, memo)[:, :POINTS]
        if meter is not None:
            meter.tick()
        row = 0
        for a, beam in enumerate(beams):
            if not beam:
                continue
            layer = Layer(targets[a], beam, logp[row : row + len(beam)], i, estimate[a], future, merge)
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
        stats.add_likelihood(likelihood, before)
    return out


def backtrack(
    likelihood: PolicyLikelihood,
    problem: Problem,
    width: int,
    future: float,
    max_beams: int,
    stats: Optional[SearchStats] = None,
    meter: Optional["EvaluationMeter"] = None,
    merge: str = _DEFAULTS.capture_merge,
    memo: Optional[PositionMemo] = None,
) -> Tuple[Optional[Tuple[List[int], float]], bool]:
    """Beam search that backtracks where its beam dies (beam-stack search, without its bound).

    It runs the beam of :func:`capture_beam`; where no child of a move's
    beam can reach the position, it goes back a move and takes the likeliest
    ``width`` children not tried there yet, and so on back to the first move.
    Returns the first complete sequence found (the beam's own when the beam
    succeeds) and whether the search ran out: ``(None, True)`` means every
    prefix was tried (no layer gave up with children untried), so no legal sequence reaches the position (up to the
    merge, which keeps one of two prefixes with the same last 8 boards, or with ``merge`` board the same
    board, even where their earlier positions differ for superko); ``(None, False)``
    means ``max_beams`` beams were evaluated first (at most ``width`` network evaluations each).  The
    budget counts beams, not evaluations: where the beam is dying a beam holds a few prefixes, and the
    network's call for it costs a whole batch all the same (:class:`moveorder.nets.likelihood.PolicyLikelihood`
    pads every call to one size), so a budget of evaluations would let the network work several times what it
    counts.  ``meter``: told of every evaluation; ``memo``: as :func:`capture_beam`'s.
    """
    target = Target(problem)
    estimate = no_estimates()
    dead: Dict[int, set] = {}

    def layer_of(beam: List[Prefix], i: int) -> Layer:
        lp = position_log_probs(likelihood, [p.hist for p in beam], i % 2 == 0, memo)[:, :POINTS]
        if meter is not None:
            meter.tick()
        layer = Layer(target, beam, lp, i, estimate, future, merge)
        layer.dead = dead.setdefault(i + 1, set())
        return layer

    layers = [layer_of([root()], 0)]
    beams = 1
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
                dead.setdefault(layer.i, set()).update(layer.key(p) for p in layer.beam)
            else:
                complete = False  # given up with children untried: no proof
            layers.pop()
            continue
        if layer.last:
            return (kept[0].moves, kept[0].ll), False
        if beams >= max_beams:
            return None, False
        layers.append(layer_of(kept, layer.i + 1))
        beams += 1
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
    beam_widen_found: int = _DEFAULTS.beam_widen_found,
    keep: int = 1,
    orders: Optional[List[List[Tuple[List[int], float]]]] = None,
    progress=None,
    proven: Optional[List[bool]] = None,
    sites: Sequence[Optional[int]] = SITE_LADDER,
    groups: Optional[Sequence[int]] = None,
    merge: str = _DEFAULTS.capture_merge,
    proposer: Optional[PolicyLikelihood] = None,
    memo_slots: int = CACHE_SLOTS,
) -> List[Optional[Tuple[List[int], float]]]:
    """The best sequence found for each problem and its log-likelihood, or None where none was found.

    :func:`capture_beam` over all problems at once, ``beam_passes`` times:
    each pass after the first starts from the estimates of those before and
    searches a problem with an order found within that order's capture plan
    (module docstring, "Passes"), unless it was searched with that plan
    before (with ``beam_widen_found`` times the width), and a problem with none found yet with
    ``beam_widen`` times the width (each width a batch of its own); the likelier order is kept (ties: the
    earlier pass's).  Without a plan, doomed stones stand on the rung of ``sites`` a problem has
    reached (module docstring, "Sites"): the first pass searches every problem on the first rung, each
    later pass a problem not answered yet on the next, and where the passes end below the last rung,
    one more beam a rung (of a later pass's width) searches the problems not answered there, rung by
    rung to the last.  A
    problem none of these found anything for is searched again
    by :func:`backtrack`, with up to ``patience`` times one pass's beams
    (``patience x moves``, each at most ``width`` evaluations).  ``stats.unreachable`` counts the problems
    proven to have no sequence.

    ``orders`` (a list): set to each problem's ``keep`` likeliest distinct
    sequences found, best first, the first being the one returned (none where
    None is); each pass keeps up to ``min(keep, width)`` complete sequences at
    its last move, which leaves every pass's best, and so the answer, as with
    ``keep`` 1.  ``progress``: anything with ``update(k)`` (a tqdm bar), told
    of the network evaluations spent, out of :func:`evaluation_budget`'s.  ``proven`` (a list): set
    to whether backtracking proved, problem by problem, that no sequence exists.

    ``groups``: a label a problem, problems with one label being one question asked several ways (a
    position in several orientations of the board, whose likeliest answer is the answer).  Once a
    group has an order, everything after the first pass goes to its member with the likeliest order
    so far (ties: the first): the other members are searched no more (no later pass, no last rung, no
    backtracking).  None: each problem a group of its own.  ``merge``: which prefixes count as one,
    in every beam and in backtracking (:func:`moveorder.search.layer.merge_key`).

    ``proposer``: a cheaper network that proposes a capture plan where the first pass found an order for
    no member of a group (module docstring, "The proposer"); with one pass, or None, nothing is proposed.
    Its evaluations are its own (``stats.proposer_evaluations``), outside the budget and ``progress``.

    ``memo_slots``: the network's distributions this call keeps (:class:`moveorder.search.boards.PositionMemo`),
    so that every pass, the last rung and backtracking evaluate a position once; 0: none (the same orders,
    more evaluations).  ``stats.hits`` counts the positions it served.
    """
    if beam_passes < 1:
        raise ValueError(f"beam_passes {beam_passes}: expected at least 1")
    if beam_widen < 1:
        raise ValueError(f"beam_widen {beam_widen}: expected at least 1")
    if beam_widen_found < 1:
        raise ValueError(f"beam_widen_found {beam_widen_found}: expected at least 1")
    budget = evaluation_budget(problems, width, beam_passes, beam_widen, patience, sites, beam_widen_found)
    memo = PositionMemo(memo_slots) if memo_slots else None
    meter = None if progress is None else EvaluationMeter(progress, likelihood, budget)
    estimates = [no_estimates() for _ in problems]
    found: List[Optional[Tuple[List[int], float]]] = [None] * len(problems)
    searched: List[set] = [set() for _ in problems]  # the plans each problem was searched with
    pool: List[list] = [[] for _ in problems]  # every complete sequence found, pass by pass
    rung = [0] * len(problems)  # each problem's rung of ``sites``
    group_of = list(range(len(problems))) if groups is None else list(groups)
    if len(group_of) != len(problems):
        raise ValueError(f"groups: {len(group_of)} labels for {len(problems)} problems")

    def resting() -> set:
        """The problems left alone from now on: in a group with an order, all but its likeliest."""
        lead: dict = {}
        for a, r in enumerate(found):
            g = group_of[a]
            if r is not None and (g not in lead or r[1] > found[lead[g]][1]):
                lead[g] = a
        return {a for a, g in enumerate(group_of) if g in lead and lead[g] != a}

    def run(groups, plans) -> None:
        """One pass: each (width, problems) batch of ``groups``, with their plans or their rung's sites."""
        nonlocal found
        again: List[list] = [[] for _ in problems]
        for w, members in groups:
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
                sites=[sites[rung[a]] for a in members],
                merge=merge,
                memo=memo,
            )
            for a, r in zip(members, sub):
                again[a] = r[:1]
                pool[a].extend(r)
        found = [_likelier(r, a[0] if a else None) for r, a in zip(found, again)]

    for k in range(beam_passes):
        plans = None if k == 0 else [None if r is None else capture_plan(r[0]) for r in found]
        if k == 1 and proposer is not None:  # a proposed plan is searched once, in the pass after the first
            proposed = _proposed_plans(proposer, problems, group_of, found, width, future, stats, memo_slots)
            plans = [q if p is None else p for p, q in zip(plans, proposed)]
        if k:
            rung = [min(len(sites) - 1, s + 1) if r is None else s for s, r in zip(rung, found)]
        run(_pass_groups(plans, searched, width, beam_widen, beam_widen_found, resting()), plans)
    while True:  # the passes ended below the last rung: a beam on each rung left for the positions not answered
        rest = resting()
        climb = {a for a, r in enumerate(found) if r is None and rung[a] < len(sites) - 1 and a not in rest}
        if not climb:
            break
        rung = [s + 1 if a in climb else s for a, s in enumerate(rung)]
        run([(width * _climb_widen(beam_passes, beam_widen), sorted(climb))], None)
    exhausted = [False] * len(problems)
    rest = resting()
    for k, r in enumerate(found):
        if r is None and patience >= 1 and k not in rest:
            found[k], exhausted[k] = _backtrack_counted(
                likelihood, problems[k], width, future, patience, stats, meter, merge, memo
            )
    if proven is not None:
        proven[:] = exhausted
    if stats is not None:
        stats.not_found += sum(r is None for r in found)
        if memo is not None:  # asked of the network or the memo; evaluations counted by each beam
            stats.requests += memo.hits
            stats.hits += memo.hits
    if orders is not None:
        orders[:] = [_distinct(best, others, keep) for best, others in zip(found, pool)]
    if meter is not None:
        meter.finish()
    return found


def _proposed_plans(
    proposer: PolicyLikelihood,
    problems: Sequence[Problem],
    group_of: Sequence[int],
    found: Sequence[Optional[Tuple[List[int], float]]],
    width: int,
    future: float,
    stats: Optional[SearchStats],
    memo_slots: int,
) -> List[Optional[tuple]]:
    """Each problem's capture plan proposed by ``proposer`` (module docstring, "The proposer"), or None: for
    every group whose members have no order yet, the proposer's own search (:data:`PROPOSER_PASSES` passes
    of ``width``, the second :data:`PROPOSER_WIDEN` times as wide, one prefix for each last 8 boards) over its
    members, and the plan of its likeliest order given to the member it was found for; ``memo_slots``: as
    :func:`search`'s, for the proposer's own memo."""
    answered = {g for g, r in zip(group_of, found) if r is not None}
    asked = [a for a, g in enumerate(group_of) if g not in answered]
    out: List[Optional[tuple]] = [None] * len(problems)
    if not asked:
        return out
    before = proposer.evaluations
    orders = search(
        proposer,
        [problems[a] for a in asked],
        width,
        future,
        0,
        beam_passes=PROPOSER_PASSES,
        beam_widen=PROPOSER_WIDEN,
        merge="input",
        groups=[group_of[a] for a in asked],
        memo_slots=memo_slots,
    )
    best: dict = {}
    for a, r in zip(asked, orders):
        g = group_of[a]
        if r is not None and (g not in best or r[1] > best[g][1][1]):
            best[g] = (a, r)
    for a, r in best.values():
        out[a] = capture_plan(r[0])
    if stats is not None:
        stats.proposer_evaluations += proposer.evaluations - before
    return out


def _pass_groups(
    plans, searched: List[set], width: int, beam_widen: int, beam_widen_found: int = 1, resting: set = frozenset()
) -> List[Tuple[int, List[int]]]:
    """The (width, problems) batches of a pass: every problem in the first (``plans`` None); after it, a
    problem with a plan not searched yet (the plan is recorded in ``searched``) with ``beam_widen_found``
    times the width, and one with no order yet with ``beam_widen`` times the width, the ``resting``
    problems left out; one batch a width (a problem's search does not depend on its batch).  Empty
    batches are left out."""
    if plans is None:
        return [(width, list(range(len(searched))))]
    planned = [a for a, p in enumerate(plans) if p is not None and p not in searched[a] and a not in resting]
    unanswered = [a for a, p in enumerate(plans) if p is None and a not in resting]
    for a in planned:
        searched[a].add(plans[a])
    if beam_widen != beam_widen_found:
        groups = [(width * beam_widen_found, planned), (width * beam_widen, unanswered)]
    else:
        groups = [(width * beam_widen, sorted(planned + unanswered))]
    return [(w, members) for w, members in groups if members]


def _backtrack_counted(likelihood, problem: Problem, width, future, patience, stats, meter, merge, memo):
    """:func:`backtrack` with ``patience`` times one pass's beams, its work added to ``stats``:
    the sequence found or None, and whether the search proved that none exists."""
    before = likelihood_counters(likelihood)
    found, exhausted = backtrack(
        likelihood, problem, width, future, patience * problem.moves, stats, meter, merge, memo
    )
    if stats is not None:
        stats.backtracked += 1
        stats.unreachable += exhausted
        stats.add_likelihood(likelihood, before)
    return found, exhausted


def evaluation_budget(
    problems: Sequence[Problem],
    width: int,
    beam_passes: int,
    beam_widen: int,
    patience: int,
    sites: Sequence[Optional[int]] = SITE_LADDER,
    beam_widen_found: int = 1,
) -> int:
    """The most network evaluations :func:`search` may spend on ``problems``: each pass's beam (a later
    one up to ``beam_widen`` or ``beam_widen_found`` times as wide, whichever is wider), a beam on each
    rung of ``sites`` the passes end below, and the backtracking's ``patience``, ``width``
    a move each."""
    extra = _climb_widen(beam_passes, beam_widen) * max(0, len(sites) - beam_passes)
    later = (beam_passes - 1) * max(beam_widen, beam_widen_found)
    return sum(width * p.moves * (1 + later + extra + patience) for p in problems)


def _climb_widen(beam_passes: int, beam_widen: int) -> int:
    """How many times ``width`` each beam after the passes is (one a rung of the capture sites left): a
    later pass's widening where there are later passes, else none."""
    return beam_widen if beam_passes > 1 else 1


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
