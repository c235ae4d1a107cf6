"""A board to look at: an order of play drawn as a Go book prints a game.

:func:`figure_data` works out what the figure shows, with no drawing: for
each point played, its colour, the number drawn on it and whether that move
stands at another move number than in the game; the notes for points played
more than once; how many moves sit at the game's own move number.
:func:`draw` turns that into a matplotlib figure, :func:`save` writes it
(SVG or PNG, by suffix; SVG text stays text, so the numbers can be searched
and read back), and :func:`text_board` prints it as a fixed-width grid.

The convention is the one Go books use for a game figure: every point is
numbered with the **first** move played on it, in that move's colour, even
when that stone was captured later, so every move of the order can be read
from the figure (the final position alone would lose the captured stones'
numbers).  A point played again after a capture keeps its first number on
the board, and the later moves there are listed below it: ``20 = 112`` says
move 112 was played on the point numbered 20 (``20 = 112 = 140`` for a
point played three times).  Black plays the odd numbers and White the even
ones (Black first, colours alternating, no passes: the orders moveorder
infers).

With the game's own order (``actual``), a move whose place in the inferred
order differs from the game's (a point not played at that move number in the
game) is marked: a red ring on its stone, a red note, a ``*`` in the text
board.

With the answer's doubt (``doubt``: the move numbers in doubt, those whose chance of standing at
their number is below :data:`moveorder.settings.DOUBT`, :mod:`moveorder.search.confidence`), a
stone so numbered is drawn apart: a dashed purple ring and its number in purple italics, a ``?`` in the
text board, and a legend line below.  Points and coordinates follow :mod:`moveorder.go.coords`: columns
``A``-``T`` without ``I``, rows 1-19 from the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from moveorder.go import board as goboard
from moveorder.go import coords

#: The file types :func:`save` writes, by suffix.
SUFFIXES = (".svg", ".png")
#: Mismatch colour (ring, note text).
RED = "#d62728"
#: Doubt colour (dashed ring; the number, on a white stone).
PURPLE = "#8e44ad"
#: The number of a black stone in doubt: a light purple that reads on black.
LIGHT_PURPLE = "#dcb8f5"


@dataclass(frozen=True)
class Stone:
    """One numbered point of the figure: the first move played there."""

    point: coords.Point
    colour: str  # "B" or "W"
    number: int  # 1-based move number
    mismatch: bool  # the game played another point at this move number
    doubt: bool = False  # the answer is unsure of this move's number


@dataclass(frozen=True)
class Note:
    """A point played more than once: the number drawn on it, then the later moves there."""

    point: coords.Point
    numbers: Tuple[int, ...]
    mismatch: bool  # one of the later moves is not at the game's move number

    def text(self) -> str:
        return " = ".join(str(k) for k in self.numbers)


@dataclass(frozen=True)
class Figure:
    """What a figure of an order shows (:func:`figure_data`)."""

    size: int
    stones: Tuple[Stone, ...]  # in move order of their numbers
    notes: Tuple[Note, ...]  # in order of the point's first number
    moves: int  # length of the order
    matching: Optional[int] = None  # moves at the game's own move number (with ``actual``)
    first_difference: Optional[int] = None  # 1-based; None when every move matches or no ``actual``
    doubt: Optional[Tuple[int, ...]] = None  # the move numbers in doubt; None: the answer said nothing of it


def star_points(size: int = coords.SIZE) -> List[coords.Point]:
    """The hoshi of a 19x19, 13x13 or 9x9 board (none on other sizes)."""
    lines = {19: (3, 9, 15), 13: (3, 6, 9), 9: (2, 4, 6)}.get(size, ())
    return [(r, c) for r in lines for c in lines]


def compare(inferred: Sequence[str], actual: Sequence[str]) -> Tuple[int, Optional[int]]:
    """Moves of ``inferred`` at the same number as in ``actual``, and the first (1-based) that is not."""
    if len(inferred) != len(actual):
        raise ValueError(f"the inferred order has {len(inferred)} moves and the game {len(actual)}")
    same = [a == b for a, b in zip(inferred, actual)]
    first = next((k + 1 for k, s in enumerate(same) if not s), None)
    return sum(same), first


def comparison_line(inferred: Sequence[str], actual: Sequence[str], size: int = coords.SIZE) -> str:
    """``17 of 20 moves at the game's own move number; first difference at move 4: inferred D4, played Q16``."""
    matching, first = compare(inferred, actual)
    head = f"{matching} of {len(inferred)} moves at the game's own move number"
    if first is None:
        return head + ": the game's order exactly"
    gtp = [coords.to_gtp(coords.from_sgf(s[first - 1], size), size) for s in (inferred, actual)]
    return f"{head}; first difference at move {first}: inferred {gtp[0]}, played {gtp[1]}"


def figure_data(
    moves: Sequence[str],
    actual: Optional[Sequence[str]] = None,
    size: int = coords.SIZE,
    doubt: Optional[Sequence[int]] = None,
) -> Figure:
    """The figure of ``moves`` (SGF points, Black first, alternating), compared with ``actual`` if given,
    with the move numbers (1-based) in ``doubt`` marked if given.

    The order is replayed on a board; an illegal move or a pass raises
    ValueError naming the move.
    """
    board = goboard.Board(size)
    first_at: Dict[coords.Point, int] = {}
    later: Dict[coords.Point, List[int]] = {}
    for k, text in enumerate(moves, start=1):
        point = coords.from_sgf(text, size)
        if point is None:
            raise ValueError(f"move {k} is a pass; a figure numbers stones only")
        try:
            board.play(goboard.BLACK if k % 2 else goboard.WHITE, point)
        except goboard.IllegalMove as err:
            raise ValueError(f"move {k} ({coords.to_gtp(point, size)}) is illegal: {err}") from None
        if point in first_at:
            later.setdefault(point, []).append(k)
        else:
            first_at[point] = k
    if actual is not None:
        matching, first = compare(moves, actual)
        differs = {k + 1 for k, (a, b) in enumerate(zip(moves, actual)) if a != b}
    else:
        matching, first, differs = None, None, set()
    unsure = set(doubt or ())
    stones = tuple(
        Stone(p, "BW"[(k - 1) % 2], k, k in differs, k in unsure)
        for p, k in sorted(first_at.items(), key=lambda pk: pk[1])
    )
    notes = tuple(
        Note(p, (first_at[p], *ks), any(k in differs for k in ks))
        for p, ks in sorted(later.items(), key=lambda pk: first_at[pk[0]])
    )
    return Figure(size, stones, notes, len(moves), matching, first, None if doubt is None else tuple(sorted(unsure)))


def doubtful_moves(move_chances: Optional[Sequence[float]], doubt: Optional[float] = None) -> Optional[List[int]]:
    """The move numbers (1-based) whose chance is below ``doubt`` (:data:`moveorder.settings.DOUBT`);
    None without chances."""
    from moveorder.search.confidence import in_doubt
    from moveorder.settings import DOUBT

    if move_chances is None:
        return None
    return [k + 1 for k in in_doubt(move_chances, DOUBT if doubt is None else doubt)]


def doubt_legend() -> str:
    """What marks a stone in doubt says."""
    from moveorder.settings import DOUBT

    return f"a move in doubt (its number is right with a chance under {DOUBT:.0%})"


# --- text ----------------------------------------------------------------------------


def text_board(fig: Figure) -> str:
    """The figure as fixed-width text: a 4-character cell per point, row numbers on both sides.

    A cell holds the number right-aligned in 3 characters and a ``*`` for a
    move not at the game's move number; ``.`` an empty point, ``+`` a star
    point.  Below: which colour plays which numbers, the points played more
    than once, and the ``*`` legend when the game's order was given.
    """
    size = fig.size
    cells = [["  . "] * size for _ in range(size)]
    for r, c in star_points(size):
        cells[r][c] = "  + "
    for s in fig.stones:
        cells[s.point[0]][s.point[1]] = f"{s.number:>3}{'*' if s.mismatch else '?' if s.doubt else ' '}"
    header = "   " + "".join(f"{coords.GTP_COLUMNS[c]:>3} " for c in range(size))
    lines = [header.rstrip()]
    for r in range(size):
        label = size - r
        lines.append(f"{label:>2} " + "".join(cells[r]) + f" {label}")
    lines.append(header.rstrip())
    lines.append("Black plays the odd numbers, White the even ones.")
    if fig.notes:
        lines.append("Points played again: " + ", ".join(n.text() + ("*" if n.mismatch else "") for n in fig.notes))
    if fig.matching is not None:
        lines.append("*: not at the game's own move number.")
    if fig.doubt:
        both = "; * where it is also off the game's number" if fig.matching is not None else ""
        lines.append(f"?: {doubt_legend()}{both}.")
    return "\n".join(lines)


# --- drawing ---------------------------------------------------------------------------


def _font_size(number: int) -> float:
    """Points of a number's font: three digits still fit inside a stone."""
    return {1: 12.0, 2: 11.0}.get(len(str(number)), 8.5)


#: Width of a note's character in board units (10-point digits; a board unit is 0.42 inch).
NOTE_CHAR = 0.22
NOTE_GAP = 1.2


def _note_places(notes: Sequence[Note], size: int) -> List[Tuple[float, int]]:
    """Where each note goes below the board: x (board units) and its row, filled left to right."""
    places, x, row, right = [], -0.6, 0, size - 0.4
    for note in notes:
        width = NOTE_CHAR * len(note.text())
        if x > -0.6 and x + width > right:
            x, row = -0.6, row + 1
        places.append((x, row))
        x += width + NOTE_GAP
    return places


def draw(fig: Figure, title: str = ""):
    """A matplotlib Figure of ``fig``: the board, its numbered stones and the notes below it.

    Board coordinates are :func:`moveorder.go.coords.to_cartesian` (x right, y
    up, ``A1`` at (0, 0)).  Every artist that carries a point's data has a
    gid: ``stone-Q16`` (the Circle), ``number-Q16`` (its Text), ``ring-Q16``
    (the red mismatch ring), ``doubt-Q16`` (the dashed ring of a move in doubt), ``note-1``...
    (the notes' Texts), ``comparison``, ``doubt`` (the legend lines) and ``coordinate-...`` (the labels), so tests and SVG readers can find them.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    size = fig.size
    places = _note_places(fig.notes, size)
    rows = places[-1][1] + 1 if places else 0
    legend = doubt_lines(fig)
    extra = 0.9 * rows + (0.9 if fig.matching is not None else 0.0) + 0.9 * len(legend)
    low = -1.6 - extra
    height_units = size + 1.2 - low
    width_units = size + 2.0
    mpl = MplFigure(figsize=(0.42 * width_units, 0.42 * height_units + (0.3 if title else 0.0)))
    FigureCanvasAgg(mpl)
    ax = mpl.add_axes((0, 0, 1, 1 - (0.3 / (0.42 * height_units + 0.3) if title else 0.0)))
    ax.set_xlim(-1.5, size + 0.5)
    ax.set_ylim(low, size + 0.2)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        mpl.suptitle(title, fontsize=11)
    _draw_board(ax, size)
    _draw_stones(ax, fig.stones, size)
    y = -2.0
    for k, (note, (x, row)) in enumerate(zip(fig.notes, places)):
        t = ax.text(
            x,
            y - 0.9 * row,
            note.text(),
            ha="left",
            va="center",
            fontsize=10,
            color=RED if note.mismatch else "black",
        )
        t.set_gid(f"note-{k + 1}")
    if fig.matching is not None:
        t = ax.text(
            -0.6,
            y - 0.9 * rows,
            f"{fig.matching} of {fig.moves} moves at the game's own move number"
            + (f", the first difference at move {fig.first_difference}" if fig.first_difference else "")
            + " (red: played at another number)",
            ha="left",
            va="center",
            fontsize=10,
            color="black",
        )
        t.set_gid("comparison")
    for k, line in enumerate(legend):
        t = ax.text(
            -0.6,
            y - 0.9 * (rows + (fig.matching is not None) + k),
            line,
            ha="left",
            va="center",
            fontsize=10,
            color=PURPLE,
        )
        t.set_gid("doubt" if k == 0 else f"doubt-{k + 1}")
    return mpl


#: Characters of a legend line below the board (10-point text across the board's width).
LEGEND_WIDTH = 84


def number_ranges(numbers: Sequence[int]) -> str:
    """``14-19, 26, 28-31``: sorted numbers, runs of consecutive ones as ranges."""
    out: List[str] = []
    for k in sorted(numbers):
        if out and out[-1][1] == k - 1:
            out[-1][1] = k
        else:
            out.append([k, k])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in out)


def doubt_lines(fig: Figure) -> List[str]:
    """The diagram's legend of the moves in doubt, wrapped to the board's width; none without any."""
    import textwrap

    if not fig.doubt:
        return []
    return textwrap.wrap(f"purple, dashed: {doubt_legend()}: {number_ranges(fig.doubt)}", LEGEND_WIDTH)


def _draw_board(ax, size: int) -> None:
    """The board: its wood, lines, star points and coordinates."""
    from matplotlib.patches import Circle

    ax.add_patch(_rect(-0.6, -0.6, size - 1 + 1.2, size - 1 + 1.2))
    for i in range(size):
        lw = 1.2 if i in (0, size - 1) else 0.6
        ax.plot([0, size - 1], [i, i], color="black", lw=lw, zorder=1)
        ax.plot([i, i], [0, size - 1], color="black", lw=lw, zorder=1)
    for p in star_points(size):
        x, y = coords.to_cartesian(p, size)
        star = Circle((x, y), 0.1, color="black", zorder=1)
        star.set_gid(f"star-{coords.to_gtp(p, size)}")
        ax.add_patch(star)
    for i in range(size):
        letter, number = coords.GTP_COLUMNS[i], str(i + 1)
        for x, y, s, where in (
            (i, -1.0, letter, "bottom"),
            (i, size, letter, "top"),
            (-1.0, i, number, "left"),
            (size, i, number, "right"),
        ):
            t = ax.text(x, y, s, ha="center", va="center", fontsize=9, color="0.25")
            t.set_gid(f"coordinate-{where}-{s}")


def _draw_stones(ax, stones, size: int) -> None:
    """Every stone with its number, and the red ring of a stone played at another move number."""
    from matplotlib.patches import Circle

    for s in stones:
        x, y = coords.to_cartesian(s.point, size)
        name = coords.to_gtp(s.point, size)
        black = s.colour == "B"
        stone = Circle((x, y), 0.47, facecolor="black" if black else "white", edgecolor="black", lw=0.8, zorder=2)
        stone.set_gid(f"stone-{name}")
        ax.add_patch(stone)
        if s.mismatch:
            ring = Circle((x, y), 0.47, fill=False, edgecolor=RED, lw=2.2, zorder=3)
            ring.set_gid(f"ring-{name}")
            ax.add_patch(ring)
        if s.doubt:
            ring = Circle((x, y), 0.36 if s.mismatch else 0.47, fill=False, edgecolor=PURPLE, lw=1.8, ls="--", zorder=3)
            ring.set_gid(f"doubt-{name}")
            ax.add_patch(ring)
        colour = "white" if black else "black"
        if s.doubt:
            colour = LIGHT_PURPLE if black else PURPLE
        t = ax.text(
            x,
            y,
            str(s.number),
            ha="center",
            va="center_baseline",
            fontsize=_font_size(s.number),
            color=colour,
            fontweight="bold",
            fontstyle="italic" if s.doubt else "normal",
            zorder=4,
        )
        t.set_gid(f"number-{name}")


def _rect(x: float, y: float, w: float, h: float):
    from matplotlib.patches import Rectangle

    r = Rectangle((x, y), w, h, facecolor="#e8c07a", edgecolor="none", zorder=0)
    r.set_gid("board")
    return r


def check_path(path: Path) -> Path:
    """Raise ValueError unless ``path`` is an .svg or .png file name in an existing folder."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(
            f"{path}: --diagram writes {' or '.join(s[1:].upper() for s in SUFFIXES)}, chosen by the suffix "
            f"({', '.join(SUFFIXES)}); {path.suffix or 'no suffix'} is neither"
        )
    if path.is_dir():
        raise ValueError(f"{path}: --diagram names a folder; give a file name")
    if not path.parent.is_dir():
        raise ValueError(f"{path}: --diagram: the folder {path.parent} does not exist")
    return path


def save(fig: Figure, path: Path, title: str = "") -> Path:
    """Draw ``fig`` and write it to ``path`` (SVG or PNG by suffix; SVG text kept as text; an SVG's
    ids fixed, so the same figure writes the same file but for its date)."""
    import matplotlib

    path = check_path(path)
    mpl = draw(fig, title)
    # svg.hashsalt: the SVG's ids made from its content alone, so the same order draws the same file
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "moveorder"}):
        mpl.savefig(path, format=path.suffix.lower()[1:], dpi=150)
    return path
