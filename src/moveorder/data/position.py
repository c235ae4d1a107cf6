"""The one-position tool's input and output paths: the position to order, read from an SGF file, and
the checks on it and on the answer's path that run before any search.

:func:`read_position` reads setup stones (AB/AW), or a game record's stones after move ``n``, and
refuses (naming the file, the move and the reason) any record that breaks the paper's assumptions;
:func:`check_length` refuses a sequence longer than the tool orders; :func:`check_output` checks
that the answer can be written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from moveorder.data.records import RecordError, read_sgf, setup_points
from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.settings import MAX_MOVES, MAX_SGF_BYTES


@dataclass
class Position:
    """A position to infer an order of play for, and what of its record the answer keeps."""

    black: List[coords.Point]
    white: List[coords.Point]
    komi: Optional[float] = None
    black_player: str = ""
    white_player: str = ""
    #: Stones captured by Black and by White before the position (a record's, or --prisoners).
    prisoners: Tuple[int, int] = (0, 0)
    #: For a record with captures: its first capture, named for a refusal by a method other than beam.
    first_capture: str = ""


_GIVE_INSTEAD = (
    "give either a position as setup stones only (AB/AW, no moves; without --moves), "
    "or a game record without setup stones (with --moves N for its position after move N)"
)


def read_position(path: Path, moves: Optional[int] = None, prisoners: Optional[Sequence[int]] = None) -> Position:
    """The position to infer an order for, from an SGF file; ValueError naming the file and the reason.

    The file holds one 19x19 game without handicap.  Either it holds setup
    stones (AB/AW) and no moves: the position is those stones (``moves``
    must be None); or it holds moves and no setup stones: the position is
    the stones after move ``moves`` (default: every move).  The moves up to
    there must follow the paper's assumptions: Black first, colours
    alternating, every move legal and no pass.  A record that breaks them is
    refused with the move number and the reason, never reinterpreted.  A
    record's captures are counted (``Position.prisoners``; whether the
    method can order such a position is the search's check,
    :func:`moveorder.search.dispatch.refuse`).
    ``prisoners`` (Black's, White's) go with setup stones only: a record's
    come from its moves.
    """
    path = Path(path)
    if moves is not None and moves < 1:
        raise ValueError(f"{path}: --moves {moves}: must be at least 1")
    try:
        size = path.stat().st_size
        if size > MAX_SGF_BYTES:
            raise ValueError(
                f"{path}: {size:,} bytes: the one-position tool reads an SGF of at most {MAX_SGF_BYTES:,} bytes "
                "(one game record, comments and variations included, takes kilobytes)"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except OSError as err:
        raise ValueError(f"{path}: cannot be read: {err.strerror or err}") from None
    try:
        rec = read_sgf(data, str(path))
    except RecordError as err:
        raise ValueError(err.detail) from None
    if rec.handicap > 0:
        raise ValueError(
            f"{path}: HA[{rec.handicap}]: a handicap game; the inference assumes an even game "
            "(no handicap stones, Black moves first)"
        )
    if rec.setup_empty:
        raise ValueError(
            f"{path}: AE[{']['.join(rec.setup_empty)}] removes stones; the position must be "
            "setup stones (AB/AW) only, or a game record's moves"
        )
    all_moves = rec.move_list()
    if prisoners is not None and all_moves and not (rec.setup_black or rec.setup_white):
        raise ValueError(
            f"{path}: --prisoners {' '.join(str(x) for x in prisoners)} with a game record: a record's prisoners "
            "come from its own moves; give --prisoners with a position of setup stones (AB/AW)"
        )
    if rec.setup_black or rec.setup_white:
        return _setup_position(path, rec, moves, prisoners)
    return _record_position(path, rec, moves)


def _setup_position(path: Path, rec, moves: Optional[int], prisoners: Optional[Sequence[int]]) -> Position:
    """The position of a file of setup stones (AB/AW), each point given once, and no moves."""
    all_moves = rec.move_list()
    if all_moves:
        raise ValueError(f"{path}: holds both setup stones (AB/AW) and {len(all_moves)} moves; {_GIVE_INSTEAD}")
    if moves is not None:
        raise ValueError(
            f"{path}: --moves {moves}, but the file holds setup stones (AB/AW) and no moves; "
            "leave out --moves to use the setup stones as the position"
        )
    try:
        black = setup_points(rec.setup_black, "AB")
        white = setup_points(rec.setup_white, "AW")
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    seen: Dict[coords.Point, str] = {}
    for prop, pts in (("AB", black), ("AW", white)):
        for p in pts:
            if p in seen:
                raise ValueError(
                    f"{path}: {coords.to_gtp(p)} ({coords.to_sgf(p)}) is given twice ({seen[p]} and {prop})"
                )
            seen[p] = prop
    given = (0, 0) if prisoners is None else (int(prisoners[0]), int(prisoners[1]))
    return Position(sorted(black), sorted(white), rec.komi, rec.black, rec.white, given)


def _record_position(path: Path, rec, moves: Optional[int]) -> Position:
    """The stones of a game record after move ``moves`` (every move if None), replayed: Black first,
    colours alternating, every move legal and no pass; its captures counted as the prisoners."""
    all_moves = rec.move_list()
    if not all_moves:
        raise ValueError(f"{path}: no stones: neither setup stones (AB/AW) nor moves")
    n = len(all_moves) if moves is None else moves
    if n > len(all_moves):
        raise ValueError(f"{path}: --moves {n}, but the record has {len(all_moves)} moves")
    board, taken, first_capture = goboard.Board(), [0, 0], ""
    for i, (colour, move) in enumerate(zip(rec.colours[:n], all_moves[:n]), start=1):
        expected = "BW"[(i - 1) % 2]
        name = {"B": "Black", "W": "White"}
        if colour != expected:
            why = (
                "Black moves first" if i == 1 else f"colours alternate (move {i - 1} is {name[rec.colours[i - 2]]} too)"
            )
            raise ValueError(
                f"{path}: move {i} is {name[colour]}, expected {name[expected]}: the inference assumes {why}"
            )
        if move is None:
            raise ValueError(f"{path}: move {i} ({name[colour]}) is a pass; the inference assumes no passes")
        try:
            captured = board.play(goboard.BLACK if colour == "B" else goboard.WHITE, move)
        except goboard.IllegalMove as err:
            raise ValueError(
                f"{path}: move {i} ({name[colour]} {coords.to_gtp(move)}, "
                f"{colour}[{coords.to_sgf(move)}]) is illegal: {err}"
            ) from None
        taken[(i - 1) % 2] += captured
        if captured and not first_capture:
            first_capture = f"move {i} ({name[colour]} {coords.to_gtp(move)}) captures {captured} stone(s)"
    return Position(
        board.stones(goboard.BLACK),
        board.stones(goboard.WHITE),
        rec.komi,
        rec.black,
        rec.white,
        (taken[0], taken[1]),
        first_capture,
    )


def check_length(pos: Position, where: str, given: bool) -> None:
    """Refuse a position whose sequence (stones plus prisoners) is longer than :data:`MAX_MOVES`.

    Every captured stone was once a move, so the answer has that many moves; the search is refused
    before it starts rather than left to run for hours (or to overflow its counters).
    """
    stones, (pb, pw) = len(pos.black) + len(pos.white), pos.prisoners
    n = stones + pb + pw
    if n <= MAX_MOVES:
        return
    limit = (
        f"the one-position tool orders at most {MAX_MOVES} moves (longer than 99% of recorded professional games; "
        "the search costs about beam width x moves network evaluations)"
    )
    if given:
        raise ValueError(
            f"{where}: --prisoners {pb} {pw} with {stones} stones on the board make a sequence of {n} moves "
            f"(every captured stone was once a move): {limit}; with these {stones} stones the two counts "
            f"add up to at most {MAX_MOVES - stones}"
        )
    raise ValueError(f"{where}: the position after {n} moves: {limit}; give --moves {MAX_MOVES} or fewer")


def check_output(output: Path, position: Optional[Path] = None) -> None:
    """Raise ValueError unless an SGF file can be written at ``output`` (checked before any search runs)."""
    text = str(output)
    output = Path(output)
    if text.endswith(("/", os.sep)) or output.is_dir():
        raise ValueError(f"{output}: -o names a folder; give a file name, e.g. {output / 'ordered.sgf'}")
    if position is not None and output.exists() and output.resolve() == Path(position).resolve():
        raise ValueError(f"{output}: -o names the position file itself; give another file name")
    parent = output.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{output}: cannot be written: {parent} is not a folder")
    if output.exists() and not os.access(output, os.W_OK):
        raise ValueError(f"{output}: cannot be written (no permission)")
    if not output.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{output}: cannot be written: no permission to write in {parent}")
