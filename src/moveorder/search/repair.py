"""Repair of a found order: each stretch of moves reordered by a small beam, every capture kept legal.

The capture search (:mod:`moveorder.search.captures`) keeps a quarter of its width by likelihood, the
rest to spread its doomed stones and its captures; at 80 moves and more the order it finds is legal
but often well below the players' own likelihood, the loss spread over many local misorderings
(a move answered a few moves late, a tenuki taken early).  :func:`repair` mends them.

A *window* is a stretch of ``window`` moves ``[s, e)`` of the order.  Its Black moves may be played
in any order on its Black turns and its White moves on its White turns; a small beam (``width``
orders kept a move, the same network) searches those orders from the board before move ``s``,
ranked by their log-likelihood so far plus the log-probabilities the current order gives the moves
still to play there (so a move is not left to the end only because it is unlikely).  A reordering
qualifies only where every move is legal (captures, suicide, ko), no board repeats an earlier one
(positional superko) and the board after move ``e`` is the current one; the moves after ``e`` stand
as they were, and only the network input of the next 7 positions (their history planes) changes,
so the whole order is scored again before it is taken, and taken only where it is likelier.

A round runs every window of a *tiling* at once (one network batch a move for all of them: the
windows start at 0, ``window``, ``2 window``, ...), then the tiling shifted by half a window, so
every pair of neighbouring moves shares a window.  Where the windows' reorderings together are not
likelier than the order (their history planes meet), the likeliest single one is taken instead.
Rounds repeat up to ``rounds`` times or until one changes nothing.  The result is never less likely
than the order given, and it replays to the same position and prisoners: the same multiset of moves
of each colour, the same board at each window's end.

Moves are Leela Zero indices, Black first; boards the flat bytes of :mod:`moveorder.go.board`.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets.features import HISTORY
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search.boards import EMPTY_BOARD, position_log_probs, sequence_log_probs

BLACK, WHITE = goboard.BLACK, goboard.WHITE

#: Moves a window reorders, orders its beam keeps a move, and rounds of both tilings (at most).
WINDOW, WIDTH, ROUNDS = 10, 16, 2


class _State:
    __slots__ = ("moves", "ll", "board", "hist", "left", "seen")

    def __init__(self, moves, ll, board, hist, left, seen):
        self.moves, self.ll, self.board, self.hist, self.left, self.seen = moves, ll, board, hist, left, seen


def legal_boards(moves: Sequence[int]) -> Optional[List[bytes]]:
    """The boards before each move and after the last, or None where a move is illegal (occupied,
    suicide, a simple-ko retake) or a board repeats an earlier one (positional superko)."""
    board, out = goboard.Board(), [EMPTY_BOARD]
    for i, k in enumerate(moves):
        try:
            board.play(BLACK if i % 2 == 0 else WHITE, coords.from_lz(k))
        except goboard.IllegalMove:
            return None
        out.append(bytes(board.points))
    return out if len(set(out)) == len(out) else None


def repair(
    likelihood: PolicyLikelihood,
    moves: Sequence[int],
    window: int = WINDOW,
    width: int = WIDTH,
    rounds: int = ROUNDS,
) -> Tuple[List[int], float]:
    """The order ``moves`` (legal from the empty board) mended window by window (module docstring), and
    its log-likelihood.  ``window`` at least 2; ``rounds`` 0 gives the order back, scored."""
    if window < 2:
        raise ValueError(f"repair window {window}: expected at least 2")
    if width < 1:
        raise ValueError(f"repair width {width}: expected at least 1")
    current = list(moves)
    if legal_boards(current) is None:
        raise ValueError("repair: the order given is not legal from the empty board")
    each = sequence_log_probs(likelihood, current)
    for _ in range(rounds):
        changed = False
        for offset in (0, window // 2):
            starts = list(range(offset, len(current) - 1, window))
            better = _tiling(likelihood, current, each, starts, window, width)
            if not better:
                continue
            merged = list(current)
            for s, seq in better:
                merged[s : s + len(seq)] = seq
            best = _scored(likelihood, merged)
            if best is None or best[1].sum() <= each.sum():
                # the windows' changes together are not likelier: the likeliest one alone
                singles = []
                for s, seq in better:
                    trial = current[:s] + list(seq) + current[s + len(seq) :]
                    scored = _scored(likelihood, trial)
                    if scored is not None:
                        singles.append((float(scored[1].sum()), scored))
                singles.sort(key=lambda t: -t[0])
                best = singles[0][1] if singles and singles[0][0] > each.sum() else None
            if best is not None:
                current, each = best
                changed = True
        if not changed:
            break
    return current, float(each.sum())


def _scored(likelihood, moves: List[int]):
    """``(moves, per-move log-probabilities)`` of a legal order, or None where it is not legal."""
    if legal_boards(moves) is None:
        return None
    return moves, sequence_log_probs(likelihood, moves)


def _tiling(likelihood, moves: List[int], each: np.ndarray, starts: Sequence[int], window: int, width: int):
    """Every window starting at ``starts`` searched at once: ``[(start, reordered moves)]`` for the
    windows where the beam found a reordering likelier within the window (the board at its end the same)."""
    boards = legal_boards(moves)
    n = len(moves)
    spans = [(s, min(n, s + window)) for s in starts]
    beams: List[List[_State]] = []
    seen: List[frozenset] = []
    for s, e in spans:
        board = goboard.Board()
        for i, k in enumerate(moves[:s]):
            board.play(BLACK if i % 2 == 0 else WHITE, coords.from_lz(k))
        hist = tuple(boards[max(0, s - HISTORY + 1) : s + 1][::-1])
        left = {
            c: tuple(sorted(moves[i] for i in range(s, e) if i % 2 == (0 if c == BLACK else 1))) for c in (BLACK, WHITE)
        }
        beams.append([_State([], 0.0, board, hist, left, frozenset())])
        # boards no new one may repeat: those before the window and those after it
        seen.append(frozenset(boards[: s + 1]) | frozenset(boards[e + 1 :]))
    for step in range(window):
        live = [(w, st) for w, (s, e) in enumerate(spans) if s + step < e for st in beams[w]]
        if not live:
            break
        for black in (True, False):  # one network batch per side to move
            part = [(w, st) for w, st in live if (spans[w][0] + step) % 2 == (0 if black else 1)]
            if not part:
                continue
            lp = position_log_probs(likelihood, [st.hist for _, st in part], black)
            for w in {w for w, _ in part}:
                rows = [(r, st) for r, (ww, st) in enumerate(part) if ww == w]
                beams[w] = _children(rows, lp, spans[w], step, moves, each, boards, seen[w], width)
    out = []
    for w, (s, e) in enumerate(spans):
        old = float(each[s:e].sum())
        done = [st for st in beams[w] if st.hist[0] == boards[e] and st.moves != moves[s:e]]
        if done and done[0].ll > old + 1e-9:
            out.append((s, done[0].moves))
    return out


def _children(rows, lp, span, step, moves, each, boards, seen, width) -> List[_State]:
    """The ``width`` best children of one window's orders at ``step`` (ranked by log-likelihood so far plus
    the current order's log-probabilities of the moves still to play in the window), ties to the order
    found first; two with the same network input (last 8 boards) and moves left merged, the likelier kept."""
    s, e = span
    i = s + step
    colour = BLACK if i % 2 == 0 else WHITE
    prior: Dict[int, float] = {}
    for j in range(s, e):
        prior[moves[j]] = max(prior.get(moves[j], -np.inf), float(each[j]))
    ranked = []
    for r, st in rows:
        for k in dict.fromkeys(st.left[colour]):
            ll = st.ll + float(lp[r, k])
            left = dict(st.left)
            rest = list(left[colour])
            rest.remove(k)
            left[colour] = tuple(rest)
            estimate = sum(prior[m] for c in (BLACK, WHITE) for m in left[c])
            ranked.append((-(ll + estimate), len(ranked), st, k, ll, left))
    ranked.sort(key=lambda t: t[:2])
    kept: List[_State] = []
    merged = set()
    last = i == e - 1
    for _, _, st, k, ll, left in ranked:
        if len(kept) == width:
            break
        board = st.board.copy()
        try:
            board.play(colour, coords.from_lz(k))
        except goboard.IllegalMove:
            continue
        now = bytes(board.points)
        if now in seen or now in st.seen:
            continue
        if last and now != boards[e]:
            continue
        key = ((now,) + st.hist[: HISTORY - 1], left[BLACK], left[WHITE])
        if key in merged:
            continue
        merged.add(key)
        kept.append(_State(st.moves + [k], ll, board, (now,) + st.hist[: HISTORY - 1], left, st.seen | {now}))
    return kept
