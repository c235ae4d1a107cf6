"""The Go board: stones, captures and legality.

A :class:`Board` holds the stones of one position as a flat list in the
top-row-first order of :mod:`moveorder.go.coords` (``EMPTY``, ``BLACK`` or
``WHITE`` at each point).  :meth:`Board.play` places a stone, removes
captured groups and raises :class:`IllegalMove` for an occupied point,
suicide or a simple-ko retake.  Records are replayed through it to find
captures (the paper's Assumption 3), and positions handed to inference are
checked with :func:`groups_without_liberties`.  :func:`flood_fill` is the one
fill of a flat board: a group and its liberties, or an empty region and the
stones around it (the board's groups, the capture search's stones in atari and
its enclosed regions).
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Set, Tuple

from moveorder.go import coords

EMPTY, BLACK, WHITE = 0, 1, 2


def opponent(colour: int) -> int:
    return BLACK + WHITE - colour


class IllegalMove(ValueError):
    """A move that the rules forbid at that position."""


_NEIGHBOURS: dict = {}


def adjacent_points(size: int) -> List[Tuple[int, ...]]:
    """For each flat point, the flat indices of the points orthogonally adjacent to it (its liberties if empty)."""
    if size not in _NEIGHBOURS:
        table = []
        for p in range(size * size):
            r, c = divmod(p, size)
            adj = []
            if r > 0:
                adj.append(p - size)
            if r < size - 1:
                adj.append(p + size)
            if c > 0:
                adj.append(p - 1)
            if c < size - 1:
                adj.append(p + 1)
            table.append(tuple(adj))
        _NEIGHBOURS[size] = table
    return _NEIGHBOURS[size]


def flood_fill(
    points: Sequence[int], adj: Sequence[Sequence[int]], start: int, seen: Optional[Set[int]] = None
) -> Tuple[List[int], Set[int]]:
    """From a stone, its group and the group's liberties; from an empty point, its empty region and the
    stones that border it.

    ``points`` is a flat board (``EMPTY``, ``BLACK`` or ``WHITE`` at each point), ``adj`` its
    :func:`adjacent_points`.  The first list holds the points connected to ``start`` through points of
    its value, ``start`` first; the set, the points next to them that are empty where ``start`` holds a
    stone, or hold a stone where ``start`` is empty.  ``seen``, when given, gets the first list's points
    added to it (a caller filling every group of a board passes one set to skip the points filled).
    """
    value = points[start]
    if seen is None:
        seen = set()
    seen.add(start)
    members, stack, edge = [start], [start], set()
    # One loop for each kind of start, so that each neighbour costs a comparison or two.
    if value != EMPTY:
        while stack:
            for q in adj[stack.pop()]:
                v = points[q]
                if v == EMPTY:
                    edge.add(q)
                elif v == value and q not in seen:
                    seen.add(q)
                    members.append(q)
                    stack.append(q)
    else:
        while stack:
            for q in adj[stack.pop()]:
                if points[q] != EMPTY:
                    edge.add(q)
                elif q not in seen:
                    seen.add(q)
                    members.append(q)
                    stack.append(q)
    return members, edge


class Board:
    """A mutable Go position under area-scoring rules with simple ko."""

    __slots__ = ("size", "points", "ko", "_adj")

    def __init__(self, size: int = coords.SIZE):
        self.size = size
        self.points: List[int] = [EMPTY] * (size * size)
        self.ko: Optional[int] = None
        self._adj = adjacent_points(size)

    def copy(self) -> "Board":
        other = Board.__new__(Board)
        other.size, other.points, other.ko, other._adj = self.size, list(self.points), self.ko, self._adj
        return other

    def get(self, point: coords.Point) -> int:
        return self.points[coords.to_flat(point, self.size)]

    def group(self, start: int) -> Tuple[List[int], bool]:
        """The flat points of the group containing ``start`` (a stone) and whether it has a liberty."""
        group, liberties = flood_fill(self.points, self._adj, start)
        return group, bool(liberties)

    def play(self, colour: int, move: coords.Move) -> int:
        """Play ``move`` for ``colour``; return the number of stones captured.

        A pass clears the ko and captures nothing.  Raises :class:`IllegalMove`
        (leaving the board unchanged) for an occupied point, a ko retake or
        suicide.
        """
        if move is None:
            self.ko = None
            return 0
        p = coords.to_flat(move, self.size)
        if self.points[p] != EMPTY:
            raise IllegalMove(f"{coords.to_gtp(move, self.size)} is occupied")
        if p == self.ko:
            raise IllegalMove(f"{coords.to_gtp(move, self.size)} retakes a ko")
        enemy = opponent(colour)
        self.points[p] = colour
        captured: List[int] = []
        for q in self._adj[p]:
            if self.points[q] == enemy:
                group, free = self.group(q)
                if not free:
                    captured.extend(group)
                    for s in group:
                        self.points[s] = EMPTY
        if not captured:
            _, free = self.group(p)
            if not free:
                self.points[p] = EMPTY
                raise IllegalMove(f"{coords.to_gtp(move, self.size)} is suicide")
        # Simple ko: a single stone captured one stone and now stands alone in atari.
        self.ko = None
        if len(captured) == 1:
            group, _ = self.group(p)
            libs = [q for q in self._adj[p] if self.points[q] == EMPTY]
            if len(group) == 1 and len(libs) == 1:
                self.ko = captured[0]
        return len(captured)

    def stones(self, colour: int) -> List[coords.Point]:
        """The points holding ``colour``, in flat order."""
        return [divmod(p, self.size) for p, v in enumerate(self.points) if v == colour]

    def __str__(self) -> str:
        """The board as text, top row first: ``X`` black, ``O`` white, ``.`` empty, with GTP coordinates
        around it (columns A-T without I, rows numbered from the bottom). :func:`from_text` reads it back."""
        letters = " ".join(coords.GTP_COLUMNS[: self.size])
        lines = [f"   {letters}"]
        for r in range(self.size):
            row = " ".join(_SYMBOLS[v] for v in self.points[r * self.size : (r + 1) * self.size])
            number = self.size - r
            lines.append(f"{number:>2} {row} {number}")
        lines.append(f"   {letters}")
        return "\n".join(lines)


_SYMBOLS = {EMPTY: ".", BLACK: "X", WHITE: "O"}
_COLOURS = {".": EMPTY, "X": BLACK, "O": WHITE}


def from_text(text: str, size: int = coords.SIZE) -> Board:
    """A board from the text :meth:`Board.__str__` writes, or from its rows alone.

    Each row is read top first, ``X`` black, ``O`` white, ``.`` empty, spaces ignored; lines of column
    letters and the row numbers at either end are skipped. Fewer rows (or a shorter row) than ``size``
    are the board's top-left corner, so a test can draw a corner position in a few lines. No captures
    are applied: a group without liberties stays as drawn.
    """
    board = Board(size)
    rows = []
    for line in text.strip("\n").splitlines():
        cells = line.split()
        while cells and cells[0].isdigit():
            cells.pop(0)
        while cells and cells[-1].isdigit():
            cells.pop()
        body = "".join(cells)
        if not body or (not set(body) <= set(_COLOURS) and body.isalpha()):
            continue  # a blank line, or one of column letters
        rows.append(body)
    if len(rows) > size:
        raise ValueError(f"{len(rows)} rows: a board of size {size} has {size}")
    for r, row in enumerate(rows):
        if len(row) > size:
            raise ValueError(f"row {r + 1} has {len(row)} points: a board of size {size} has {size}")
        for c, ch in enumerate(row):
            if ch not in _COLOURS:
                raise ValueError(f"row {r + 1}, column {c + 1}: {ch!r} is not X, O or .")
            board.points[r * size + c] = _COLOURS[ch]
    return board


def replay(moves: Sequence[coords.Move], size: int = coords.SIZE, first: int = BLACK) -> Tuple[Board, List[int]]:
    """Play ``moves`` alternately from an empty board; return the board and captures per move."""
    board, colour, captures = Board(size), first, []
    for move in moves:
        captures.append(board.play(colour, move))
        colour = opponent(colour)
    return board, captures


def from_stones(black: Iterable[coords.Point], white: Iterable[coords.Point], size: int = coords.SIZE) -> Board:
    """A board with the given stones placed as they are (no captures applied)."""
    board = Board(size)
    for colour, pts in ((BLACK, black), (WHITE, white)):
        for pt in pts:
            p = coords.to_flat(pt, size)
            if board.points[p] != EMPTY:
                raise ValueError(f"{coords.to_gtp(pt, size)} holds two stones")
            board.points[p] = colour
    return board


def groups_without_liberties(board: Board) -> List[List[coords.Point]]:
    """Groups that have no liberty: such a position cannot arise without captures."""
    seen, dead = set(), []
    for p, v in enumerate(board.points):
        if v != EMPTY and p not in seen:
            group, liberties = flood_fill(board.points, board._adj, p, seen)
            if not liberties:
                dead.append(sorted(divmod(s, board.size) for s in group))
    return dead
