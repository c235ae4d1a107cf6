"""Capture plans and the capture metric: which stones of a legal sequence a later move captures.

A later pass of the capture search keeps its doomed stones to the *capture plan* of the best order
found so far (:func:`capture_plan`; :mod:`moveorder.search.captures`, "Passes"); the inference
reports the share of the actual sequence's captured stones the inferred one also lost on the same
points (:func:`captured_placed`).
"""

from __future__ import annotations

from collections import Counter
from typing import List, Sequence, Tuple

from moveorder.go import board as goboard
from moveorder.go import coords

BLACK, WHITE, EMPTY = goboard.BLACK, goboard.WHITE, goboard.EMPTY


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
    a, b = Counter(captured_points(actual)), Counter(captured_points(inferred))
    total = sum(a.values())
    return sum((a & b).values()) / total if total else 1.0


def capture_plan(moves: Sequence[int]) -> Tuple[Tuple[int, int], ...]:
    """The capture plan of a legal sequence: the distinct ``(colour, Leela Zero index)`` of its stones
    that a later move captures, sorted (a point retaken in a ko counts once)."""
    return tuple(sorted(set(captured_points(moves))))
