"""Game records: reading SGF files and deciding which games qualify.

:func:`read_sgf` turns the bytes of one SGF file into a :class:`Record`
(main line only, the first branch at every fork), or raises
:class:`RecordError` with a ``reason`` from :data:`REASONS`.
:func:`qualify` applies the paper's assumptions to a record: 19x19, no
handicap, no setup stones, Black first and colours alternating, every move
legal, and no pass and no capture in the first ``capture_free`` moves.
:func:`usable` is the weaker test a training game must pass: 19x19, stones
set up only before the first move (handicap stones), colours alternating
from the first mover, every move legal on the board the setup gives;
captures, passes, handicap and short games are fine, since training
positions are board states.
:func:`scan` does both for every SGF file below a folder and counts every
rejection by reason; a broken file is a counted rejection, never a crash.

Records are stored as JSON lines; ``moves`` is one string of two-letter SGF
points (``tt`` for a pass), e.g. ``"pddpqdd"``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from sgfmill import sgf

from . import board as goboard
from . import coords

#: Why a record was rejected, in the order the checks run.
REASONS = (
    "unreadable",        # the file could not be read or parsed as SGF
    "not_19x19",
    "handicap",          # HA > 0
    "setup_stones",      # AB / AW / AE anywhere on the main line
    "bad_move_order",    # White first, two moves of a colour in a row, or a node with both
    "too_short",         # fewer moves than required
    "illegal_move",      # occupied point, suicide, ko retake, off-board point
    "pass_early",        # a pass within the first capture_free moves
    "capture_early",     # a capture within the first capture_free moves
)


class RecordError(ValueError):
    """A record that cannot be used; ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str, detail: str):
        assert reason in REASONS, reason
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass
class Record:
    """One game's main line and its metadata."""

    id: str
    source: str
    size: int
    moves: str  # concatenated SGF points, "tt" = pass
    komi: Optional[float] = None
    rules: str = ""
    handicap: int = 0
    black: str = ""
    white: str = ""
    black_rank: str = ""
    white_rank: str = ""
    date: str = ""
    result: str = ""
    start_black: str = ""    # SGF points of the black stones on the board before the first move (handicap)
    start_white: str = ""    # the same for white (both from AB/AW/AE before the first move)
    first_player: str = "B"  # colour of the first move (W after handicap stones)
    setup: bool = field(default=False, repr=False)
    colours: str = field(default="", repr=False)  # "BWBW..." as recorded
    setup_after_moves: bool = field(default=False, repr=False)  # AB/AW/AE once play has begun

    def move_list(self) -> List[coords.Move]:
        return moves_from_string(self.moves, self.size)

    def start_points(self) -> Tuple[List[coords.Point], List[coords.Point]]:
        """Black and white stones on the board before the first move."""
        return moves_from_string(self.start_black, self.size), moves_from_string(self.start_white, self.size)

    def to_json(self) -> str:
        d = asdict(self)
        for key in ("setup", "colours", "setup_after_moves"):
            d.pop(key)
        for key, default in (("start_black", ""), ("start_white", ""), ("first_player", "B")):
            if d[key] == default:  # a game without handicap stones reads as it always did
                d.pop(key)
        return json.dumps(d, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        return cls(**json.loads(line))


def moves_from_string(text: str, size: int = coords.SIZE) -> List[coords.Move]:
    return [coords.from_sgf(text[i:i + 2], size) for i in range(0, len(text), 2)]


def moves_to_string(moves: Iterable[coords.Move], size: int = coords.SIZE) -> str:
    return "".join(coords.to_sgf(m, size) or "tt" for m in moves)


def fox_komi(raw: str) -> Optional[float]:
    """Komi from a KM value, converting the Fox server's quirk.

    Fox writes komi in hundredths and, under Chinese counting, in stones:
    ``KM[375]`` is 3.75 stones = 7.5 points, ``KM[650]`` 6.5, ``KM[750]`` 7.5.
    No real komi reaches 100, so any value of 100 or more is read that way.
    """
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    if abs(value) >= 100:
        value /= 100.0
        if abs(value) < 5:
            value *= 2
    return value


def decode_text(raw: Optional[bytes], charset: str = "UTF-8") -> str:
    """Decode an SGF text value whatever its encoding; never raises."""
    if not raw:
        return ""
    for enc in ("utf-8", charset):
        try:
            return raw.decode(enc).strip()
        except (UnicodeDecodeError, LookupError):
            continue
    # Damaged UTF-8 (Fox files hold some with bytes replaced by '?') stays UTF-8;
    # otherwise it is most likely GBK text from a Chinese server.
    text = raw.decode("utf-8", errors="replace")
    if text.count("\ufffd") <= max(1, len(text) // 4):
        return text.strip()
    try:
        return raw.decode("gb18030").strip()
    except UnicodeDecodeError:
        return raw.decode("latin-1").strip()


def _parse(data: bytes) -> sgf.Sgf_game:
    try:
        return sgf.Sgf_game.from_bytes(data)
    except ValueError as err:
        if "encoding" not in str(err):
            raise
        # An unknown CA[...] charset: parse as bytes; text fields are decoded by decode_text.
        return sgf.Sgf_game.from_bytes(data, override_encoding="iso-8859-1")


def record_id(source: str) -> str:
    """A short stable id for a record, from its source path."""
    return hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]


def read_sgf(data: bytes, source: str) -> Record:
    """Parse one SGF file's bytes into a :class:`Record` (main line only).

    Raises :class:`RecordError` (``unreadable``, ``not_19x19``,
    ``bad_move_order`` or ``illegal_move`` for an off-board point) with the
    source named in the message.
    """
    try:
        game = _parse(data)
        root = game.get_root()
        size = game.get_size()
        nodes = game.get_main_sequence()
    except (ValueError, KeyError, IndexError) as err:
        raise RecordError("unreadable", f"{source}: {err}") from None
    charset = "UTF-8"
    if root.has_property("CA"):
        charset = decode_text(root.get_raw("CA"), "latin-1") or "UTF-8"

    def text(prop: str) -> str:
        return decode_text(root.get_raw(prop), charset) if root.has_property(prop) else ""

    handicap = 0
    if root.has_property("HA"):
        try:
            handicap = int(float(text("HA") or 0))
        except ValueError:
            raise RecordError("unreadable", f"{source}: HA[{text('HA')}] is not a number") from None
    moves, colours, setup, setup_after_moves = [], [], False, False
    start = {}  # (row, col) -> "B" / "W": the board before the first move
    for node in nodes:
        if any(node.has_property(p) for p in ("AB", "AW", "AE")):
            setup = True
            setup_after_moves = setup_after_moves or bool(moves)
            if not moves:
                _place_setup(node, size, start)
        has_b, has_w = node.has_property("B"), node.has_property("W")
        if has_b and has_w:
            raise RecordError("bad_move_order", f"{source}: a node holds both B and W")
        if has_b or has_w:
            colour = "B" if has_b else "W"
            raw = node.get_raw(colour).decode("latin-1").strip()
            try:
                move = coords.from_sgf(raw, size)
            except ValueError as err:
                raise RecordError("illegal_move", f"{source}: move {len(moves) + 1}: {err}") from None
            moves.append(move)
            colours.append(colour)
    komi = fox_komi(text("KM")) if root.has_property("KM") else None
    return Record(
        id=record_id(source), source=source, size=size, moves=moves_to_string(moves, size),
        komi=komi, rules=text("RU"), handicap=handicap,
        black=text("PB"), white=text("PW"), black_rank=text("BR"), white_rank=text("WR"),
        date=text("DT"), result=text("RE"), setup=setup, colours="".join(colours),
        start_black="".join(sorted(coords.to_sgf(p, size) for p, c in start.items() if c == "B")),
        start_white="".join(sorted(coords.to_sgf(p, size) for p, c in start.items() if c == "W")),
        first_player=colours[0] if colours else "B", setup_after_moves=setup_after_moves,
    )


def _place_setup(node, size: int, stones: Dict[coords.Point, str]) -> None:
    """Apply a node's AB / AW / AE to ``stones`` (sgfmill counts rows from the bottom)."""
    for prop, colour in (("AE", None), ("AB", "B"), ("AW", "W")):
        if node.has_property(prop):
            for row, col in node.get(prop):
                point = (size - 1 - row, col)
                if colour is None:
                    stones.pop(point, None)
                else:
                    stones[point] = colour


def qualify(record: Record, capture_free: int = 50, min_moves: int = 50) -> None:
    """Raise :class:`RecordError` unless the record satisfies the paper's assumptions."""
    src = record.source
    if record.size != 19:
        raise RecordError("not_19x19", f"{src}: board size {record.size}")
    if record.handicap > 0:
        raise RecordError("handicap", f"{src}: HA[{record.handicap}]")
    if record.setup:
        raise RecordError("setup_stones", f"{src}: AB/AW/AE on the main line")
    for i, colour in enumerate(record.colours):
        if colour != "BW"[i % 2]:
            raise RecordError("bad_move_order", f"{src}: move {i + 1} is {colour}, expected {'BW'[i % 2]}")
    moves = record.move_list()
    if len(moves) < min_moves:
        raise RecordError("too_short", f"{src}: {len(moves)} moves, need {min_moves}")
    b = goboard.Board(record.size)
    colour = goboard.BLACK
    for i, move in enumerate(moves, start=1):
        try:
            captured = b.play(colour, move)
        except goboard.IllegalMove as err:
            raise RecordError("illegal_move", f"{src}: move {i}: {err}") from None
        if i <= capture_free:
            if move is None:
                raise RecordError("pass_early", f"{src}: pass at move {i}")
            if captured:
                raise RecordError("capture_early", f"{src}: capture at move {i}")
        colour = goboard.opponent(colour)


def usable(record: Record, min_moves: int = 1) -> None:
    """Raise :class:`RecordError` unless the record can train a policy network.

    It must be 19x19, set stones up only before its first move, alternate
    colours from its first mover (White may move first only after black
    setup stones, i.e. a handicap game), have at least ``min_moves`` moves,
    and every move must be legal on the board the setup stones give.
    Captures, passes and handicap stones are fine.
    """
    src = record.source
    if record.size != 19:
        raise RecordError("not_19x19", f"{src}: board size {record.size}")
    if record.setup_after_moves:
        raise RecordError("setup_stones", f"{src}: AB/AW/AE after the first move")
    first = record.first_player
    if first == "W" and not record.start_black:
        raise RecordError("bad_move_order", f"{src}: White moves first without handicap stones")
    for i in range(1, len(record.colours)):
        if record.colours[i] == record.colours[i - 1]:
            raise RecordError("bad_move_order", f"{src}: moves {i} and {i + 1} are both {record.colours[i]}")
    moves = record.move_list()
    if len(moves) < min_moves:
        raise RecordError("too_short", f"{src}: {len(moves)} moves, need {min_moves}")
    black, white = record.start_points()
    b = goboard.from_stones(black, white, record.size)
    colour = goboard.BLACK if first == "B" else goboard.WHITE
    for i, move in enumerate(moves, start=1):
        try:
            b.play(colour, move)
        except goboard.IllegalMove as err:
            raise RecordError("illegal_move", f"{src}: move {i}: {err}") from None
        colour = goboard.opponent(colour)


def sgf_files(root: Path, include: Sequence[str] = ()) -> List[Path]:
    """Every ``*.sgf`` file below ``root``, sorted, so scans are reproducible.

    ``include``: glob patterns on the path relative to ``root`` (e.g.
    ``"*/Pro/9p/*"``); a file is kept if it matches any.  Empty keeps all.
    """
    root = Path(root)
    files = (p for p in root.rglob("*") if p.is_file() and p.suffix.lower() == ".sgf")
    if include:
        files = (p for p in files if any(fnmatch.fnmatch(p.relative_to(root).as_posix(), g) for g in include))
    return sorted(files)


class Checked(NamedTuple):
    """What :func:`scan` finds out about one file."""

    source: str                     # path relative to the scanned folder
    reason: Optional[str]           # None: qualified; else why not (a key of REASONS)
    payload: str                    # the record as JSON when qualified, else the rejection message
    training_reason: Optional[str]  # None: usable for training (:func:`usable`); else why not
    record: str                     # the record as JSON when usable for training, else ""


def _check_file(args: Tuple[str, str, int, int]) -> Checked:
    """Worker: qualify and :func:`usable` one file."""
    path, source, capture_free, min_moves = args
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return Checked(source, "unreadable", f"{source}: {err}", "unreadable", "")
    try:
        rec = read_sgf(data, source)
    except RecordError as err:
        return Checked(source, err.reason, str(err), err.reason, "")
    except Exception as err:  # a parser bug must not end a whole scan
        return Checked(source, "unreadable", f"{source}: {type(err).__name__}: {err}", "unreadable", "")
    try:
        qualify(rec, capture_free, min_moves)
        reason, payload = None, rec.to_json()
    except RecordError as err:
        reason, payload = err.reason, str(err)
    except Exception as err:
        reason, payload = "unreadable", f"{source}: {type(err).__name__}: {err}"
    if reason is None:
        return Checked(source, None, payload, None, payload)
    try:
        usable(rec)
    except RecordError as err:
        return Checked(source, reason, payload, err.reason, "")
    except Exception:
        return Checked(source, reason, payload, "unreadable", "")
    return Checked(source, reason, payload, None, rec.to_json())


def scan(root: Path, capture_free: int = 50, min_moves: int = 50, workers: int = 1,
         include: Sequence[str] = ()) -> Iterator[Checked]:
    """Check every SGF file below ``root``; yield a :class:`Checked` per file, in file order."""
    root = Path(root)
    jobs = [(str(p), p.relative_to(root).as_posix(), capture_free, min_moves) for p in sgf_files(root, include)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            yield from pool.map(_check_file, jobs, chunksize=64)
    else:
        yield from map(_check_file, jobs)


def write_scan(root: Path, qualified_path: Path, report_path: Path, rejected_path: Path,
               capture_free: int = 50, min_moves: int = 50, workers: int = 1,
               include: Sequence[str] = (), usable_path: Optional[Path] = None) -> Dict[str, int]:
    """Scan ``root``; write qualified records (JSONL), the count by reason (CSV) and every rejection (CSV).

    ``usable_path``: also write every record usable for training (JSONL,
    qualified ones included).  The report counts them (``usable``) and the
    others by why they cannot train (``unusable_REASON``).
    """
    import contextlib
    import csv

    # Handicap stones, passes and captures never stop a record from training.
    training_reasons = [r for r in REASONS if r not in ("handicap", "pass_early", "capture_early")]
    counts = {"files": 0, "qualified": 0, **{r: 0 for r in REASONS},
              "usable": 0, **{f"unusable_{r}": 0 for r in training_reasons}}
    paths = [qualified_path, report_path, rejected_path] + ([usable_path] if usable_path else [])
    for p in paths:
        Path(p).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        q = stack.enter_context(open(qualified_path, "w", encoding="utf-8"))
        rej = csv.writer(stack.enter_context(open(rejected_path, "w", newline="", encoding="utf-8")))
        u = stack.enter_context(open(usable_path, "w", encoding="utf-8")) if usable_path else None
        rej.writerow(["source", "reason", "detail"])
        for c in scan(root, capture_free, min_moves, workers, include):
            counts["files"] += 1
            if c.reason is None:
                counts["qualified"] += 1
                q.write(c.payload + "\n")
            else:
                counts[c.reason] += 1
                rej.writerow([c.source, c.reason, c.payload])
            if c.training_reason is None:
                counts["usable"] += 1
                if u:
                    u.write(c.record + "\n")
            else:
                counts[f"unusable_{c.training_reason}"] += 1
    with open(report_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["reason", "count"])
        for k, v in counts.items():
            w.writerow([k, v])
    return counts


def load_records(path: Path) -> List[Record]:
    with open(path, encoding="utf-8") as f:
        return [Record.from_json(line) for line in f if line.strip()]


__all__ = ["REASONS", "Record", "RecordError", "Checked", "read_sgf", "qualify", "usable", "scan", "write_scan",
           "load_records", "fox_komi", "moves_from_string", "moves_to_string"]
