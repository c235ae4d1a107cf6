"""What a prefix of the capture search must still satisfy to reach its position: the problem's
constants (:class:`Target`) and necessary conditions on a board (:func:`alive`, :func:`slack`,
:func:`doomed_allowed`), none sufficient.  A *doomed* stone is one where the position has none of its
colour: the rest of the sequence must capture it.  Boards are flat (top row first) or in Leela Zero
order where said; the search itself is :mod:`moveorder.search.captures`.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import POINTS
from moveorder.nets.features import FLAT_OF_LZ
from moveorder.search.plans import capture_sites
from moveorder.search.problem import Problem

BLACK, WHITE, EMPTY = goboard.BLACK, goboard.WHITE, goboard.EMPTY


def _neighbour_table() -> np.ndarray:
    """``(361, 4)`` Leela Zero indices of each point's neighbours, ``361`` (a zero column) where none."""
    adj = goboard.adjacent_points(coords.SIZE)
    table = np.full((POINTS, 4), POINTS, dtype=np.int64)
    for k in range(POINTS):
        for j, q in enumerate(adj[coords.lz_to_flat(k)]):
            table[k, j] = coords.flat_to_lz(q)
    return table


_NEIGHBOURS_LZ = _neighbour_table()


class Target:
    """Per-problem constants of the search, as numpy masks in Leela Zero order.

    ``plan``: a capture plan (:func:`moveorder.search.plans.capture_plan`); doomed stones of a colour are then played only on
    its points of that colour.  ``sites``: without a plan, doomed stones stand only where the position's
    capture sites allow (:func:`moveorder.search.plans.capture_sites`'s ``open_sides``; None: anywhere).
    """

    def __init__(self, problem: Problem, plan: Optional[Sequence[Tuple[int, int]]] = None, sites: Optional[int] = None):
        self.final = problem.final_board()
        fin = np.frombuffer(self.final, dtype=np.uint8)
        self.final_lz = fin[FLAT_OF_LZ]
        self.final_flat = fin
        self.n = problem.moves
        self.budget = {BLACK: problem.captured_of(BLACK), WHITE: problem.captured_of(WHITE)}
        self.moves_of = {BLACK: problem.moves_of(BLACK), WHITE: problem.moves_of(WHITE)}
        #: colour -> where its doomed stones may go without a plan (LZ order); None: anywhere
        self.sites: Optional[Dict[int, np.ndarray]] = None if sites is None else capture_sites(fin, sites)
        self.plan: Optional[Dict[int, np.ndarray]] = None  # colour -> where its doomed stones may go (LZ order)
        if plan is not None:
            self.plan = {BLACK: np.zeros(POINTS, dtype=bool), WHITE: np.zeros(POINTS, dtype=bool)}
            for colour, k in plan:
                self.plan[colour][k] = True


def played(i: int, colour: int) -> int:
    """Moves ``colour`` has played after ``i`` moves (Black first)."""
    return (i + (colour == BLACK)) // 2


def doomed_points(board: np.ndarray, final: np.ndarray) -> List[int]:
    """Flat points of ``board`` holding a stone the rest must capture: where ``final`` has none of its colour."""
    return np.nonzero((board != EMPTY) & (board != final))[0].tolist()


def alive(target: Target, board: goboard.Board, i: int, now: Optional[bytes] = None) -> bool:
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
    for p in doomed_points(arr, final):
        if p not in in_doomed:
            group, _ = board.group(p)
            in_doomed.update(group)
            groups.append((cur[p], group))
            doomed[cur[p]] += len(group)
    left = 0
    for colour in (BLACK, WHITE):
        slack = target.budget[colour] - (played(i, colour) - int(counts[colour])) - doomed[colour]
        if slack < 0:
            return False
        if slack + doomed[colour]:  # stones of this colour still to be captured
            other = goboard.opponent(colour)
            if target.moves_of[other] - played(i, other) < 1:
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


def slack(target: Target, cur: np.ndarray, colour: int, i: int) -> np.ndarray:
    """``(P,)`` remaining budget ``P_c - K_c - D_c`` of ``colour`` after ``i`` moves, boards ``cur`` ``(P, 361)``."""
    mine = cur == colour
    doomed = np.count_nonzero(mine & (target.final_lz != colour)[None, :], axis=1)
    captured = played(i, colour) - np.count_nonzero(mine, axis=1)
    return target.budget[colour] - captured - doomed


def doomed_allowed(target: Target, cur: np.ndarray, colour: int, i: int) -> np.ndarray:
    """``(P, 361)``: where ``colour`` may put a doomed stone (Leela Zero order), before building the child.

    The stone uses a unit of its colour's budget, and each empty neighbour where the position has no
    opponent stone will need one more (:func:`alive`); a capture by the stone cannot lower that count.
    """
    mine_left = slack(target, cur, colour, i)
    total = mine_left + slack(target, cur, goboard.opponent(colour), i)
    costly = np.zeros((cur.shape[0], POINTS + 1), dtype=np.int16)
    costly[:, :POINTS] = (cur == EMPTY) & (target.final_lz != goboard.opponent(colour))[None, :]
    need = costly[:, _NEIGHBOURS_LZ].sum(2)  # (P, 361)
    return (mine_left[:, None] >= 1) & (need <= (total - 1)[:, None])
