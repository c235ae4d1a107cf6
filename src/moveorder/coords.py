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
==========================  ==========  ===========  ===========  ============  ======

SGF letters are column then row (``sgf "pd"`` = column p, row d = ``(3, 15)``
= GTP ``Q16``).  GTP letters are column, then the row counted from the
**bottom**.  Both flat indices put pass last, at ``size * size``.

The tests check each row of this table against an external tool: SGF through
sgfmill, GTP and the Leela Zero index through Leela Zero (``leelaz``) itself.
"""

from __future__ import annotations

from typing import Optional, Tuple

Point = Tuple[int, int]
Move = Optional[Point]  # None is a pass

SIZE = 19
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
