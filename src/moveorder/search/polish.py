"""Local repair of an order with captures: hill climbing over the orders that stay legal.

A beam decides each move once, left to right, and a move that looked unlikely where it was played
cannot come back; the order it returns is often a few exchanges away from a likelier one.  :func:`polish`
takes an order and tries its *neighbours*: one move exchanged with a move of its colour at most
``reach`` of that colour's turns later (``swap``), or moved there with that colour's moves between
shifted back one turn each (``shift``, either way).  Colours still alternate and each colour plays the
same points, so a neighbour reaches the given position whenever it is legal and ends on the same board
(the prisoners follow from the stones and the moves).  Each neighbour is replayed on the real board
(captures, suicide, simple ko and positional superko, as the capture search plays them) and kept only
where it reaches exactly the given board; its log-likelihood is the order's less the terms it changes
plus theirs, evaluated by the network: every move from the first it changes to ``HISTORY`` moves
after the last board that differs (the network sees the last 8 boards).  A round scores every
neighbour not scored since the boards it reads last changed, then applies the likeliest improvements
whose changed terms do not overlap (their gains then add exactly), likeliest first; the climb stops
where no neighbour is likelier, or where its network evaluations reach ``budget``.  The order returned
is never less likely than the one given, and is scored as a whole once more before it is returned
(:func:`moveorder.search.boards.sequence_log_probs`'s terms).

Moves are Leela Zero indices, Black first; boards the flat top-row-first order of
:mod:`moveorder.go.board`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets.features import HISTORY
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search.boards import EMPTY_BOARD, PositionMemo, position_log_probs
from moveorder.search.problem import Problem

BLACK, WHITE = goboard.BLACK, goboard.WHITE
#: How many of a colour's turns a neighbour moves a stone at most (``polish``'s ``reach``).
REACH = 2
#: ``polish``'s default memo: the distributions of the positions it evaluates (1.4 kB each).
MEMO_SLOTS = 1 << 15
#: A gain below this (in nats) is float noise, not an improvement.
EPS = 1e-9


@dataclass(frozen=True)
class Neighbour:
    """A change of an order: ``kind`` ``swap`` (moves ``i`` and ``j`` exchanged), ``later`` (move ``i``
    played at ``j``, the colour's moves between one turn earlier) or ``earlier`` (move ``j`` played at
    ``i``, those between one turn later); ``i < j``, ``j - i`` even."""

    kind: str
    i: int
    j: int

    def apply(self, moves: Sequence[int]) -> List[int]:
        out = list(moves)
        i, j = self.i, self.j
        if self.kind == "swap":
            out[i], out[j] = out[j], out[i]
        elif self.kind == "later":
            out[i:j:2], out[j] = out[i + 2 : j + 1 : 2], out[i]
        else:
            out[i + 2 : j + 1 : 2], out[i] = out[i:j:2], out[j]
        return out


def neighbours(n: int, reach: int = REACH) -> List[Neighbour]:
    """Every neighbour of an ``n``-move order: for each move and each of its colour's next ``reach``
    turns, the swap, and beyond the next turn (where a shift is not a swap) both shifts."""
    out = []
    for i in range(n):
        for step in range(1, reach + 1):
            j = i + 2 * step
            if j >= n:
                break
            out.append(Neighbour("swap", i, j))
            if step > 1:
                out.append(Neighbour("later", i, j))
                out.append(Neighbour("earlier", i, j))
    return out


def replay(moves: Sequence[int], final: Optional[bytes] = None) -> Optional[List[bytes]]:
    """The boards before each move and after the last, or None where a move is illegal (occupied,
    suicide, a simple-ko retake, a whole-board position repeated) or, with ``final``, the last board
    is not ``final``."""
    board, out = goboard.Board(), [EMPTY_BOARD]
    seen = {EMPTY_BOARD}
    for k, m in enumerate(moves):
        try:
            board.play(BLACK if k % 2 == 0 else WHITE, coords.from_lz(m))
        except goboard.IllegalMove:
            return None
        now = bytes(board.points)
        if now in seen:
            return None
        seen.add(now)
        out.append(now)
    if final is not None and out[-1] != final:
        return None
    return out


def _history(boards: Sequence[bytes], k: int) -> Tuple[bytes, ...]:
    """The network's boards before move ``k``: the current one first, at most :data:`HISTORY`."""
    return tuple(boards[max(0, k - HISTORY + 1) : k + 1][::-1])


def terms(likelihood: PolicyLikelihood, moves: Sequence[int], boards: Sequence[bytes], memo=None) -> np.ndarray:
    """``(n,)`` log-probability of each move of ``moves`` given its position (``boards`` from :func:`replay`)."""
    return _score(likelihood, [(k, _history(boards, k), moves[k]) for k in range(len(moves))], memo)


def _score(likelihood: PolicyLikelihood, asks: Sequence[Tuple[int, tuple, int]], memo) -> np.ndarray:
    """The log-probability of each ``(move number, history, move)`` asked, one network call a colour."""
    out = np.empty(len(asks))
    for parity in (0, 1):
        rows = [r for r, a in enumerate(asks) if a[0] % 2 == parity]
        if rows:
            lp = position_log_probs(likelihood, [asks[r][1] for r in rows], parity == 0, memo)
            out[rows] = lp[np.arange(len(rows)), [asks[r][2] for r in rows]]
    return out


@dataclass
class Gain:
    """A legal neighbour's order, its boards (:func:`replay`), the terms it changes (moves ``lo`` to
    ``hi`` - 1) and how much likelier it is (nats; negative: less likely)."""

    moves: List[int]
    boards: List[bytes]
    lo: int
    hi: int
    gain: float


def score_neighbours(
    likelihood: PolicyLikelihood,
    moves: Sequence[int],
    boards: Sequence[bytes],
    lp: np.ndarray,
    cands: Sequence[Neighbour],
    memo=None,
) -> Dict[Neighbour, Optional[Gain]]:
    """Each neighbour of ``moves`` (``boards`` its replay, ``lp`` its terms) in ``cands``: its
    :class:`Gain`, or None where it is illegal or ends on another board.  Only the terms it changes are
    evaluated: the moves changed, and each move whose last :data:`HISTORY` boards hold one that differs."""
    n = len(moves)
    out: Dict[Neighbour, Optional[Gain]] = {}
    asks: List[Tuple[int, tuple, int]] = []
    legal = []
    for c in cands:
        new = c.apply(moves)
        nb = replay(new, boards[-1])
        if nb is None:
            out[c] = None
            continue
        # the same point played twice by one colour (taken in between) may exchange with itself: no change
        last = max((k for k in range(c.i + 1, n + 1) if nb[k] != boards[k]), default=c.i)
        hi = min(n, max(c.j + 1, last + HISTORY)) if new != list(moves) else c.i
        legal.append((c, new, nb, hi, len(asks)))
        asks.extend((k, _history(nb, k), new[k]) for k in range(c.i, hi))
    lps = _score(likelihood, asks, memo) if asks else np.empty(0)
    for c, new, nb, hi, at in legal:
        out[c] = Gain(new, nb, c.i, hi, float(lps[at : at + hi - c.i].sum() - lp[c.i : hi].sum()))
    return out


@dataclass
class Polished:
    """What :func:`polish` did: the order, its log-likelihood after each round (the given order's
    first), the sum of the gains of the changes each round took (apart, they add up exactly to the
    round's gain), the changes applied, the neighbours scored and the network's evaluations."""

    moves: List[int]
    lls: List[float]
    expected: List[float] = field(default_factory=list)
    applied: int = 0
    scored: int = 0
    evaluations: int = 0

    @property
    def ll(self) -> float:
        return self.lls[-1]


def polish(
    likelihood: PolicyLikelihood,
    problem: Problem,
    moves: Sequence[int],
    reach: int = REACH,
    budget: Optional[int] = None,
    memo: Optional[PositionMemo] = None,
) -> Polished:
    """The likeliest order :func:`polish`'s hill climb reaches from ``moves`` (module docstring).

    ``moves`` must replay legally to ``problem``'s board (ValueError otherwise).  ``budget``: the most
    network evaluations (positions not in ``memo``) the climb may spend after scoring ``moves``, checked
    between rounds; None: no limit.  ``memo``: the distributions already given (a new one of :data:`MEMO_SLOTS` if None).
    """
    boards = replay(moves, problem.final_board())
    if boards is None or len(moves) != problem.moves:
        raise ValueError("polish: the order given does not replay legally to the position")
    memo = PositionMemo(MEMO_SLOTS) if memo is None else memo
    moves = list(moves)
    lp = terms(likelihood, moves, boards, memo)
    start = likelihood.evaluations
    cands = neighbours(len(moves), reach)
    gains: Dict[Neighbour, Optional[Gain]] = {}
    out = Polished(moves, [float(lp.sum())])
    while budget is None or likelihood.evaluations - start < budget:
        fresh = [c for c in cands if c not in gains]
        gains.update(score_neighbours(likelihood, moves, boards, lp, fresh, memo))
        out.scored += len(fresh)
        better = sorted(
            (c for c, g in gains.items() if g is not None and g.gain > EPS),
            key=lambda c: (-gains[c].gain, c.i, c.j, c.kind),
        )
        taken: List[Tuple[int, int]] = []
        expected = 0.0
        for c in better:
            g = gains[c]
            # a change reads boards lo - HISTORY + 1 .. hi - 1 and writes moves and boards lo .. hi - 1:
            # apart from every change taken, its gain is the same after them
            if all(g.hi + HISTORY <= a or b + HISTORY <= g.lo for a, b in taken):
                trial = moves[: g.lo] + g.moves[g.lo : g.hi] + moves[g.hi :]
                tb = replay(trial, boards[-1])
                if tb is not None:
                    moves, boards = trial, tb
                    taken.append((g.lo, g.hi))
                    expected += g.gain
        if not taken:
            break
        lp = terms(likelihood, moves, boards, memo)
        out.lls.append(float(lp.sum()))
        out.expected.append(expected)
        out.applied += len(taken)
        # every neighbour reading a board or a term that changed is scored again
        for c, g in list(gains.items()):
            lo, hi = (c.i, c.j + 1) if g is None else (g.lo, g.hi)
            if any(lo - HISTORY < b and a < hi + HISTORY for a, b in taken):
                del gains[c]
    out.moves = moves
    out.evaluations = likelihood.evaluations - start
    return out
