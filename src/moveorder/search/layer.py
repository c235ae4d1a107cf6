"""One move of the capture search: a beam's prefixes and every child they could have, built on demand
and kept in tiers (:class:`Layer`), with the estimate of the stones still to play that ranks them.

Children are built lazily, best first, so the board work is done for about the children kept, plus
those pruned (at most ``PRUNED_PER_CHILD x width`` a choice); a layer remembers what it tried, so
backtracking (:func:`moveorder.search.captures.backtrack`) can ask it for the next children.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import POINTS
from moveorder.nets.features import FLAT_OF_LZ, HISTORY
from moveorder.search.boards import EMPTY_BOARD
from moveorder.search.prunes import Target, alive, doomed_allowed, doomed_points, played
from moveorder.settings import SearchConfig

BLACK, WHITE, EMPTY = goboard.BLACK, goboard.WHITE, goboard.EMPTY

#: A layer's choice gives up after this many children per kept place that cannot reach the position.
PRUNED_PER_CHILD = 8
#: Shares of the width kept, for a position with captures, by likelihood, by fewest captures still to
#: make, and by doomed set (:meth:`Layer.choose`); the rest (when doomed sets run out) by the score.
#: The doomed-set tier keeps beams whose doomed stones stand in different places, so they do not all
#: die where those cannot be captured; the shares are measured (docs/benchmarks.md, "Doomed sets").
CAPTURE_TIERS = (0.25, 0.25, 0.5)
#: The same shares for a problem searched with a capture plan (a pass after the first,
#: :func:`moveorder.search.captures.search`): the plan fixes where doomed stones go, so there is no
#: doomed set to spread; half by likelihood, a quarter by fewest captures still to make, the rest by
#: the score (docs/benchmarks.md, "Passes").
PLAN_TIERS = (0.5, 0.25, 0.0)


class Prefix:
    __slots__ = ("moves", "ll", "board", "hist", "seen")

    def __init__(self, moves, ll, board, hist, seen):
        self.moves, self.ll, self.board, self.hist, self.seen = moves, ll, board, hist, seen


def merge_key(merge: str):
    """What makes two prefixes one for ``merge`` (``SearchConfig.capture_merge``): ``input``, the last 8
    boards (the network's input at the next move: every continuation is as likely after either);
    ``board``, the board alone (the same moves are legal after either, up to superko, but the history
    planes differ, so a continuation's probabilities may too).  Children are built likeliest first, so
    the likeliest prefix of a key is the one kept."""
    if merge == "input":
        return lambda prefix: prefix.hist
    if merge == "board":
        return lambda prefix: prefix.hist[0]
    raise ValueError(f"capture_merge {merge!r}: expected input or board")


def root() -> Prefix:
    """The empty prefix: the empty board, the only position seen."""
    return Prefix([], 0.0, goboard.Board(), (EMPTY_BOARD,), frozenset([EMPTY_BOARD]))


def no_estimates() -> Dict[int, np.ndarray]:
    """Per colour and point: the best log-probability its stone has had so far (-inf: none yet)."""
    return {BLACK: np.full(POINTS, -np.inf), WHITE: np.full(POINTS, -np.inf)}


def make_child(
    target: Target, parent: Prefix, move: int, colour: int, ll: float, i: int, last: bool
) -> Optional[Prefix]:
    """The prefix with ``move`` (Leela Zero index) for ``colour``, or None where it is illegal or cannot
    reach the target."""
    board = parent.board.copy()
    try:
        board.play(colour, coords.from_lz(move))
    except goboard.IllegalMove:
        return None
    now = bytes(board.points)
    if now in parent.seen:  # positional superko
        return None
    if last:
        if now != target.final:
            return None
    elif not alive(target, board, i + 1, now):
        return None
    return Prefix(parent.moves + [move], ll, board, (now,) + parent.hist[: HISTORY - 1], parent.seen | {now})


class Layer:
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
    Later calls (backtracking, :func:`moveorder.search.captures.search`) keep the likeliest children not tried yet.  Children
    are merged by :func:`merge_key` (``merge``; a key once kept is never kept again, nor one known
    dead); at the last move only the ``keep`` likeliest complete sequences are kept.
    """

    def __init__(
        self,
        target: Target,
        beam: List[Prefix],
        lp: np.ndarray,
        i: int,
        estimate,
        future: float,
        merge: str = SearchConfig.capture_merge,
    ):
        self.target, self.beam, self.i, self.estimate = target, beam, i, estimate
        self.key = merge_key(merge)
        self.colour = BLACK if i % 2 == 0 else WHITE
        self.last = i == target.n - 1
        cur = np.frombuffer(b"".join(p.hist[0] for p in beam), dtype=np.uint8).reshape(len(beam), POINTS)
        cur = cur[:, FLAT_OF_LZ]
        final_c = target.final_lz == self.colour
        doomed_ok = doomed_allowed(target, cur, self.colour, i)
        if target.plan is not None:
            doomed_ok &= target.plan[self.colour][None, :]
        elif target.sites is not None:
            doomed_ok &= target.sites[self.colour][None, :]
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

    def _fill(self, kept: List[Prefix], order, limit: int) -> None:
        for j in order:
            if len(kept) >= limit or self.prune_budget <= 0:
                break
            if self.tried[j]:
                continue
            self.tried[j] = True
            child = make_child(
                self.target, self.beam[self.rows[j]], int(self.pts[j]), self.colour, float(self.g[j]), self.i, self.last
            )
            self.built += 1
            if child is None:
                self.pruned += 1
                self.prune_budget -= 1
                continue
            if not self.last:
                key = self.key(child)
                if key in self.keys or key in self.dead:
                    continue
                self.keys.add(key)
            kept.append(child)

    def _fill_doomed_sets(self, kept: List[Prefix], limit: int) -> None:
        """Keep, likeliest first, children whose doomed set no child kept has, up to ``limit`` in all.

        A child's doomed set is the set of points holding stones the rest must capture (a stone where
        the position has none of its colour).  Before building a child it is taken as its parent's set,
        with the move's point where the move is doomed (captures by the move ignored); a child whose
        set so taken was seen is not built.  Built, its exact set counts as seen.
        """

        def doomed_set(board: bytes) -> frozenset:
            return frozenset(doomed_points(np.frombuffer(board, dtype=np.uint8), self.target.final_flat))

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

    def _taken(self) -> np.ndarray:
        """For each candidate child: the stones its move captures (0 for most), read off its parent's
        board before the child is built (the enemy groups whose one liberty is the move's point)."""
        taken = np.zeros(len(self.rows), dtype=np.int64)
        enemy = goboard.opponent(self.colour)
        for r, prefix in enumerate(self.beam):
            at = _capturing_points(prefix.board, enemy)
            if at:
                lo, hi = np.searchsorted(self.rows, [r, r + 1])
                for j in range(lo, hi):
                    taken[j] = at.get(int(self.pts[j]), 0)
        return taken

    @property
    def exhausted(self) -> bool:
        """Every child has been tried."""
        return bool(self.tried.all())

    def choose(self, width: int, future: float, keep: int = 1) -> List[Prefix]:
        """The next children kept (see the class docstring); a call gives up after ``PRUNED_PER_CHILD x
        width`` children that cannot reach the position (dead regions cost no more than that)."""
        kept: List[Prefix] = []
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
            owed = np.array([_captures_to_make(target, p.board, self.i) for p in self.beam])[rows] - self._taken()
            self._fill(kept, np.lexsort((pts, rows, -g, owed)), len(kept) + by_owed)
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


def _capturing_points(board: goboard.Board, enemy: int) -> Dict[int, int]:
    """Leela Zero index -> the ``enemy`` stones a move there captures: the one liberty of each ``enemy``
    group in atari (groups sharing that liberty add up)."""
    points, adj = board.points, goboard.adjacent_points(board.size)
    seen: set = set()
    out: Dict[int, int] = {}
    for start, v in enumerate(points):
        if v != enemy or start in seen:
            continue
        group, libs = goboard.flood_fill(points, adj, start, seen)
        if len(libs) == 1:
            k = coords.flat_to_lz(next(iter(libs)))
            out[k] = out.get(k, 0) + len(group)
    return out


def _captures_to_make(target: Target, board: goboard.Board, i: int) -> int:
    """Stones the rest of the sequence must still capture, after ``i`` moves."""
    return sum(target.budget[c] - (played(i, c) - board.points.count(c)) for c in (BLACK, WHITE))


def _other_move_estimate(estimate) -> float:
    """The estimate of a move still to play that is not a final stone (a stone to be captured, or a
    final stone to be replayed): the mean of the final stones' estimates so far (0 before any)."""
    seen = np.concatenate([estimate[BLACK], estimate[WHITE]])
    seen = seen[np.isfinite(seen)]
    return float(seen.mean()) if len(seen) else 0.0


def _standing_estimate(board_bytes: bytes, target: Target, estimate, other: float) -> float:
    """Sum over the final stones standing at their points of (their estimate - ``other``).

    Ranks as the estimate of what is still to play (module docstring): every prefix of a move number
    has as many moves left, each a missing final stone (its estimate) or another move (``other``).
    """
    cur = np.frombuffer(board_bytes, dtype=np.uint8)[FLAT_OF_LZ]
    total = 0.0
    for colour in (BLACK, WHITE):
        mask = (cur == colour) & (target.final_lz == colour)
        total += float((estimate[colour][mask] - other).sum())
    return total
