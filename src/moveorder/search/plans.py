"""Capture plans, capture sites and the capture metric: which stones of a legal sequence a later move
captures, and where a position says stones were captured.

A later pass of the capture search keeps its doomed stones to the *capture plan* of the best order
found so far (:func:`capture_plan`; :mod:`moveorder.search.captures`, "Passes"); before any order is
found it keeps them to the position's *capture sites* (:func:`capture_sites`, "Sites" there); the
inference reports the share of the actual sequence's captured stones the inferred one also lost on
the same points (:func:`captured_placed`).
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

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


#: Where the capture search lets doomed stones stand, pass by pass (:func:`capture_sites`'s ``open_sides``;
#: None: anywhere).  A position answered at a rung keeps its plan; one not answered yet goes to the next
#: rung, and where the passes end below the last rung the search adds a beam for each rung left
#: (:mod:`moveorder.search.captures`, "Sites"): the first pass searches the tight sites (every neighbour
#: the capturer's, or an empty region only the capturer borders), about as many points as the players'
#: plan and holding all of it in most positions; a second pass the sites with one open side, wider (ko
#: fights need it); what is still not answered is searched anywhere.  Measured in docs/benchmarks.md,
#: "Capture sites", "Tight sites first" and "Enclosed regions".
SITE_LADDER: Tuple[Optional[int], ...] = (0, 1, None)


def capture_sites(final: np.ndarray, open_sides: int) -> Dict[int, np.ndarray]:
    """Colour -> the points (Leela Zero order) where a stone of that colour may have been captured: where
    the position (``final``, flat, top row first) has no stone of that colour and at most ``open_sides``
    of the point's neighbours hold no stone of the other colour, and every point of an empty region
    (connected empty points) that only the other colour's stones border.

    A captured stone's liberties were all the capturer's at the moment it was taken, and the capturing
    stones mostly stand at the end.  A group of several stones taken together leaves an empty region whose
    points neighbour each other, so none of them is a site of the point rule without open sides; the region
    is one when nothing was played in it since.  On the Fox pro and KGS games of ``config/captures.yaml``
    clipped to 100 moves, the sites without open sides hold every point of the players' capture plan where
    the position has no stone of its colour in 96% and 94% of positions (the point rule alone: 77% and 70%),
    about 4 points a position; with one open side, in 100% and 99% (the point rule alone: 93% and 92%),
    about 15 points (docs/benchmarks.md, "Enclosed regions").
    """
    adj = goboard.adjacent_points(coords.SIZE)
    region_of, borders = _empty_regions(final, adj)
    sites = {}
    for colour in (BLACK, WHITE):
        enemy = goboard.opponent(colour)
        enclosed = [all(final[r] == enemy for r in border) for border in borders]
        mask = np.zeros(coords.POINTS, dtype=bool)
        for q in range(coords.POINTS):
            if final[q] == EMPTY and enclosed[region_of[q]]:
                mask[coords.flat_to_lz(q)] = True
            elif final[q] != colour and sum(final[r] != enemy for r in adj[q]) <= open_sides:
                mask[coords.flat_to_lz(q)] = True
        sites[colour] = mask
    return sites


def _empty_regions(final: np.ndarray, adj) -> Tuple[List[int], List[set]]:
    """The empty regions (connected empty points) of a flat board: each point's region number (-1 for a
    stone), and each region's border (the points of the stones next to it)."""
    points = np.asarray(final).tolist()
    region_of = [-1] * len(points)
    borders: List[set] = []
    for start in range(len(points)):
        if points[start] != EMPTY or region_of[start] >= 0:
            continue
        region, border = goboard.flood_fill(points, adj, start)
        for q in region:
            region_of[q] = len(borders)
        borders.append(border)
    return region_of, borders
