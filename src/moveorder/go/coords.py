"""Every coordinate conversion in moveorder, and nothing else.

Internally a point is a pair ``(row, col)`` with ``row = 0`` the **top** row
(the side SGF's ``aa`` is on) and ``col = 0`` the left column; a pass is
``None``.  Every other system converts through that pair.  The board size is
19 unless a function takes ``size``.

==========================  ==========  ===========  ===========  ============  ======
system                      top-left    top-right    bottom-left  bottom-right  pass
==========================  ==========  ===========  ===========  ============  ======
(row, col) internal         (0, 0)      (0, 18)      (18, 0)      (18, 18)      None
SGF (FF[4])                 ``aa``      ``sa``       ``as``       ``ss``        ``""`` (``tt`` read as pass)
GTP (skips the letter I)    ``A19``     ``T19``      ``A1``       ``T1``        ``pass``
flat, top row first         0           18           342          360           361
  (KataGo's policy order; ``flat`` below)
Leela Zero index,           342         360          0            18            361
  bottom row first
  (``lz`` below; its input planes and policy output)
sgfmill ``(row, col)``,     (18, 0)     (18, 18)     (0, 0)       (0, 18)       None
  row from the **bottom**
  (``sgfmill`` below)
plot ``(x, y)``,            (0, 18)     (18, 18)     (0, 0)       (18, 0)       None
  x right, y up
  (``cartesian`` below; matplotlib)
==========================  ==========  ===========  ===========  ============  ======

SGF letters are column then row (``sgf "pd"`` = column p, row d = ``(3, 15)``
= GTP ``Q16``).  GTP letters are column, then the row counted from the
**bottom**.  Both flat indices put pass last, at ``size * size``
(:data:`PASS_INDEX`): a distribution over moves has :data:`MOVES` = 362
entries, :data:`POINTS` = 361 of them points.

The index spaces have names, as KataGo's ``Loc`` and ``Pos`` do: a
:data:`Point` is the internal pair, a :data:`Move` a point or pass, a
:data:`Flat` an int in KataGo's top-row-first order, an :data:`LzIndex` an int
in Leela Zero's bottom-row-first order.  Sequences of moves travel as SGF
points (``["pd", "dp"]``, the arrangement files), as one SGF string
(``"pddp"``, the record files; pass ``tt``), or as Leela Zero indices (the
network's tensors); the ``sgf_*``/``lz_*`` list functions convert between them.

The tests check each row of this table against an external tool: SGF and
sgfmill through sgfmill, GTP and the Leela Zero index through Leela Zero
(``leelaz``) itself.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

Point = Tuple[int, int]  # (row, col), row 0 at the top
Move = Optional[Point]  # None is a pass
Flat = int  # top row first, pass = PASS_INDEX (KataGo's policy order)
LzIndex = int  # bottom row first, pass = PASS_INDEX (Leela Zero's planes and policy)

SIZE = 19
POINTS = SIZE * SIZE  # 361
PASS_INDEX = POINTS  # pass in both flat index spaces
MOVES = POINTS + 1  # 362: a policy's outputs, points and pass
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # no I
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _check(point: Point, size: int) -> Point:
    row, col = point
    if not (0 <= row < size and 0 <= col < size):
        raise ValueError(f"point {point} is off a {size}x{size} board")
    return point


# --- SGF -------------------------------------------------------------------


def from_sgf(text: str, size: int = SIZE) -> Move:
    """``"pd"`` -> ``(3, 15)``; ``""`` and (on boards up to 19) ``"tt"`` -> pass."""
    if text == "" or (text == "tt" and size <= 19):
        return None
    if len(text) != 2 or text[0] not in SGF_LETTERS or text[1] not in SGF_LETTERS:
        raise ValueError(f"not an SGF point: {text!r}")
    return _check((SGF_LETTERS.index(text[1]), SGF_LETTERS.index(text[0])), size)


def to_sgf(move: Move, size: int = SIZE) -> str:
    """``(3, 15)`` -> ``"pd"``; pass -> ``""``."""
    if move is None:
        return ""
    row, col = _check(move, size)
    return SGF_LETTERS[col] + SGF_LETTERS[row]


# --- GTP -------------------------------------------------------------------


def from_gtp(text: str, size: int = SIZE) -> Move:
    """``"Q16"`` -> ``(3, 15)``; ``"pass"`` -> pass.  Case-insensitive."""
    text = text.strip().upper()
    if text == "PASS":
        return None
    try:
        col = GTP_COLUMNS.index(text[0])
        row = size - int(text[1:])
    except (ValueError, IndexError):
        raise ValueError(f"not a GTP vertex: {text!r}") from None
    return _check((row, col), size)


def to_gtp(move: Move, size: int = SIZE) -> str:
    """``(3, 15)`` -> ``"Q16"``; pass -> ``"pass"``."""
    if move is None:
        return "pass"
    row, col = _check(move, size)
    return f"{GTP_COLUMNS[col]}{size - row}"


# --- flat index, top row first (KataGo policy order) ------------------------


def to_flat(move: Move, size: int = SIZE) -> int:
    """``(row, col)`` -> ``row * size + col``; pass -> ``size * size``."""
    if move is None:
        return size * size
    row, col = _check(move, size)
    return row * size + col


def from_flat(index: int, size: int = SIZE) -> Move:
    """Inverse of :func:`to_flat`."""
    if index == size * size:
        return None
    if not 0 <= index < size * size:
        raise ValueError(f"flat index {index} out of range for size {size}")
    return divmod(index, size)


# --- Leela Zero index, bottom row first --------------------------------------


def to_lz(move: Move, size: int = SIZE) -> int:
    """``(row, col)`` -> ``(size - 1 - row) * size + col``; pass -> ``size * size``."""
    if move is None:
        return size * size
    row, col = _check(move, size)
    return (size - 1 - row) * size + col


def from_lz(index: int, size: int = SIZE) -> Move:
    """Inverse of :func:`to_lz`."""
    if index == size * size:
        return None
    if not 0 <= index < size * size:
        raise ValueError(f"Leela Zero index {index} out of range for size {size}")
    lz_row, col = divmod(index, size)
    return (size - 1 - lz_row, col)


def flat_to_lz(index: int, size: int = SIZE) -> int:
    """Top-row-first flat index -> Leela Zero's bottom-row-first index."""
    return to_lz(from_flat(index, size), size)


def lz_to_flat(index: int, size: int = SIZE) -> int:
    """Leela Zero's bottom-row-first index -> top-row-first flat index."""
    return to_flat(from_lz(index, size), size)


def lz_to_flat_table(size: int = SIZE) -> List[Flat]:
    """``t[k]``: the flat index of Leela Zero index ``k`` (points only), a permutation of ``range(size * size)``."""
    return [lz_to_flat(k, size) for k in range(size * size)]


# --- sgfmill's (row, col), row from the bottom, and plot coordinates -------------


def to_sgfmill(move: Move, size: int = SIZE) -> Optional[Tuple[int, int]]:
    """``(3, 15)`` -> ``(15, 15)``: sgfmill counts rows from the bottom; pass -> ``None``."""
    if move is None:
        return None
    row, col = _check(move, size)
    return (size - 1 - row, col)


def to_cartesian(move: Point, size: int = SIZE) -> Tuple[int, int]:
    """``(row, col)`` -> ``(x, y)`` with ``(0, 0)`` the bottom-left point (plots: x right, y up)."""
    row, col = _check(move, size)
    return (col, size - 1 - row)


# --- sequences of moves ------------------------------------------------------------


def sgf_to_lz(points: Iterable[str], size: int = SIZE) -> List[LzIndex]:
    """SGF points -> Leela Zero indices: ``["pd", "dp"]`` -> ``[300, 60]``."""
    return [to_lz(from_sgf(p, size), size) for p in points]


def lz_to_sgf(indices: Iterable[int], size: int = SIZE) -> List[str]:
    """Leela Zero indices -> SGF points (inverse of :func:`sgf_to_lz`)."""
    return [to_sgf(from_lz(int(k), size), size) for k in indices]


def sgf_to_gtp(points: Iterable[str], size: int = SIZE) -> List[str]:
    """SGF points -> GTP vertices: ``["pd", "dp"]`` -> ``["Q16", "D4"]``."""
    return [to_gtp(from_sgf(p, size), size) for p in points]


def from_sgf_string(text: str, size: int = SIZE) -> List[Move]:
    """A record's moves as one string of SGF points, ``"pddptt"`` -> ``[(3, 15), (15, 3), None]``."""
    return [from_sgf(text[i : i + 2], size) for i in range(0, len(text), 2)]


def to_sgf_string(moves: Sequence[Move], size: int = SIZE) -> str:
    """Inverse of :func:`from_sgf_string`; a pass is written ``tt``."""
    return "".join(to_sgf(m, size) or "tt" for m in moves)
