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
:mod:`moveorder.data.tygem` reads the Tygem dataset's one-game-a-line files into
the same records and checks them with the same :func:`check_read`.

Records are stored as JSON lines; ``moves`` is one string of two-letter SGF
points (``tt`` for a pass), e.g. ``"pddpqdd"``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from sgfmill import sgf, sgf_grammar

from moveorder.go import board as goboard
from moveorder.go import coords

#: Why a record was rejected, in the order the checks run.
REASONS = (
    "unreadable",  # the file could not be read or parsed as SGF
    "several_games",  # a collection of more than one game in one file (one game per file is expected)
    "not_19x19",
    "handicap",  # HA > 0
    "setup_stones",  # AB / AW / AE anywhere on the main line
    "bad_move_order",  # White first, two moves of a colour in a row, or a node with both
    "too_short",  # fewer moves than required
    "illegal_move",  # occupied point, suicide, ko retake, a point off the board or not an SGF point
    "pass_early",  # a pass within the first capture_free moves
    "capture_early",  # a capture within the first capture_free moves
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
    start_black: str = ""  # SGF points of the black stones on the board before the first move (handicap)
    start_white: str = ""  # the same for white (both from AB/AW/AE before the first move)
    first_player: str = "B"  # colour of the first move (W after handicap stones)
    setup: bool = field(default=False, repr=False)
    colours: str = field(default="", repr=False)  # "BWBW..." as recorded
    setup_after_moves: bool = field(default=False, repr=False)  # AB/AW/AE once play has begun
    start_error: str = field(default="", repr=False)  # why the setup before the first move is unreadable
    # Setup properties on the main line as written (compressed lists such as "aa:cc" not expanded);
    # expand and check them with setup_points().  Not stored in JSON.
    setup_black: List[str] = field(default_factory=list, repr=False)
    setup_white: List[str] = field(default_factory=list, repr=False)
    setup_empty: List[str] = field(default_factory=list, repr=False)

    def move_list(self) -> List[coords.Move]:
        return coords.from_sgf_string(self.moves, self.size)

    def start_points(self) -> Tuple[List[coords.Point], List[coords.Point]]:
        """Black and white stones on the board before the first move."""
        return coords.from_sgf_string(self.start_black, self.size), coords.from_sgf_string(self.start_white, self.size)

    def winner(self) -> int:
        """+1 if Black won, -1 if White won, 0 if the result is unknown or a draw."""
        r = self.result.strip().upper()
        return 1 if r.startswith("B+") else -1 if r.startswith("W+") else 0

    def to_json(self) -> str:
        d = asdict(self)
        for key in (
            "setup",
            "colours",
            "setup_after_moves",
            "start_error",
            "setup_black",
            "setup_white",
            "setup_empty",
        ):
            d.pop(key)
        for key, default in (("start_black", ""), ("start_white", ""), ("first_player", "B")):
            if d[key] == default:  # a game without handicap stones reads as it always did
                d.pop(key)
        return json.dumps(d, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        return cls(**json.loads(line))


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


def _looks_gbk(raw: bytes) -> bool:
    """True if every byte above 0x7f pairs with another one, as in GB2312/GBK text (and not Latin-1's
    accented letters, which stand alone between ASCII letters)."""
    i, pairs = 0, 0
    while i < len(raw):
        if raw[i] < 0x80:
            i += 1
        elif 0x81 <= raw[i] <= 0xFE and i + 1 < len(raw) and 0x80 <= raw[i + 1] <= 0xFE:
            i += 2
            pairs += 1
        else:
            return False
    return pairs > 0


def _damaged_utf8(raw: bytes) -> Optional[str]:
    """Text that is UTF-8 with a few bytes damaged (Fox files hold some with bytes replaced by '?')."""
    text = raw.decode("utf-8", errors="replace")
    good = sum(1 for ch in text if ord(ch) > 0x7F and ch != "\ufffd")
    bad = text.count("\ufffd")
    return text.strip() if good and bad <= max(1, good // 2) else None


def decode_text(raw: Optional[bytes], charset: Optional[str] = None) -> str:
    """Decode an SGF text value whatever its encoding; never raises.

    ``charset`` is the record's ``CA``; without one, SGF's default is
    ISO-8859-1.  Valid UTF-8 is read as UTF-8 either way, and so is UTF-8 with
    a few damaged bytes; GBK text (Chinese servers write it without ``CA``) is
    told from Latin-1 by its byte pairs.
    """
    if not raw:
        return ""
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        pass
    if charset:
        try:
            return raw.decode(charset).strip()
        except (UnicodeDecodeError, LookupError):
            pass
    if _looks_gbk(raw):
        try:
            return raw.decode("gb18030").strip()
        except UnicodeDecodeError:
            pass
    text = _damaged_utf8(raw)
    if text is not None:
        return text
    return raw.decode("latin-1").strip()


def _repair(data: bytes) -> bytes:
    """A record whose opening parenthesis is missing (``;GM[1]...)``, as in some Fox files) gets it back."""
    body = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not body.startswith(b";"):
        return data
    return b"(" + body if body.rstrip().endswith(b")") else b"(" + body + b")"


def _parse(data: bytes, source: str) -> sgf.Sgf_game:
    """The one game of an SGF file; RecordError for a file that is not one readable 19x19 game."""
    data = _repair(data)
    try:
        games = sgf_grammar.parse_sgf_collection(data)
    except ValueError as err:
        m = re.match(r"error parsing game (\d+)", str(err))
        if m and int(m.group(1)) >= 1:
            raise RecordError(
                "several_games",
                f"{source}: more than one game in the file (game "
                f"{int(m.group(1)) + 1} does not parse); one game per file is expected",
            ) from None
        raise RecordError("unreadable", f"{source}: not a readable SGF file: {err}") from None
    if len(games) > 1:
        raise RecordError("several_games", f"{source}: {len(games)} games in one file; one game per file is expected")
    root = games[0].sequence[0]
    raw_size = b"".join(root.get("SZ", [b"19"])).decode("latin-1").strip()
    if raw_size != "19":
        raise RecordError("not_19x19", f"{source}: board size SZ[{raw_size}]; only 19x19 is supported")
    try:
        return sgf.Sgf_game.from_coarse_game_tree(games[0])
    except ValueError as err:
        if "encoding" not in str(err):
            raise RecordError("unreadable", f"{source}: not a readable SGF file: {err}") from None
        # An unknown CA[...] charset: parse as bytes; text fields are decoded by decode_text.
        return sgf.Sgf_game.from_coarse_game_tree(games[0], override_encoding="iso-8859-1")


def parse_point(raw: str, what: str, size: int = coords.SIZE) -> coords.Point:
    """One SGF point of a setup property or a move (not a pass); ``what`` names it in messages (``AB[tt]``)."""
    try:
        point = coords.from_sgf(raw, size)
    except ValueError:
        point = False
    if not point:
        raise ValueError(f"{what} is not a point on a {size}x{size} board")
    return point


def setup_points(values: Sequence[str], prop: str, size: int = coords.SIZE) -> List[coords.Point]:
    """The points of a setup property's values, compressed rectangles (``aa:cc``, SGF FF[4]) expanded."""
    points = []
    for raw in values:
        if ":" in raw:
            a, _, b = raw.partition(":")
            (r1, c1), (r2, c2) = parse_point(a, f"{prop}[{raw}]", size), parse_point(b, f"{prop}[{raw}]", size)
            points += [(r, c) for r in range(min(r1, r2), max(r1, r2) + 1) for c in range(min(c1, c2), max(c1, c2) + 1)]
        else:
            points.append(parse_point(raw, f"{prop}[{raw}]", size))
    return points


def record_id(source: str) -> str:
    """A short stable id for a record, from its source path."""
    return hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]


def _node_move(node, number: int, source: str, size: int):
    """A node's move, ``(colour, point)`` (point None for a pass), or None where it holds none;
    :class:`RecordError` for a node holding both B and W or a point off the board (move ``number``)."""
    has_b, has_w = node.has_property("B"), node.has_property("W")
    if has_b and has_w:
        raise RecordError("bad_move_order", f"{source}: move {number}: one node holds both B and W")
    if not (has_b or has_w):
        return None
    colour = "B" if has_b else "W"
    raw = node.get_raw(colour).decode("latin-1").strip()
    if raw in ("", "tt"):
        return colour, None
    try:
        return colour, parse_point(raw, f"{colour}[{raw}]", size)
    except ValueError as err:
        raise RecordError("illegal_move", f"{source}: move {number}: {err}") from None


def read_sgf(data: bytes, source: str) -> Record:
    """Parse one SGF file's bytes into a :class:`Record` (main line only).

    Raises :class:`RecordError` (``unreadable``, ``several_games``,
    ``not_19x19`` (checked before any move is read), ``bad_move_order`` for a
    node holding both B and W, or ``illegal_move`` for a point that is not on
    the board) with the source, and the move number where there is one, named
    in the message.
    """
    game = _parse(data, source)
    try:
        root = game.get_root()
        size = game.get_size()
        nodes = game.get_main_sequence()
    except (ValueError, KeyError, IndexError) as err:
        raise RecordError("unreadable", f"{source}: {err}") from None
    charset = None
    if root.has_property("CA"):
        charset = decode_text(root.get_raw("CA"), "latin-1") or None

    def text(prop: str) -> str:
        return decode_text(root.get_raw(prop), charset) if root.has_property(prop) else ""

    handicap = 0
    if root.has_property("HA"):
        try:
            handicap = int(float(text("HA") or 0))
        except ValueError:
            raise RecordError("unreadable", f"{source}: HA[{text('HA')}] is not a number") from None
    moves, colours = [], []
    setup = {"AE": [], "AB": [], "AW": []}  # a node's AE applies before its AB / AW
    setup_after_moves, start_error = False, ""
    start: Dict[coords.Point, str] = {}  # the board before the first move: point -> "B" / "W"
    for node in nodes:
        for prop, values in setup.items():
            if node.has_property(prop):
                raw = [v.decode("latin-1").strip() for v in node.get_raw_list(prop)]
                values += raw
                setup_after_moves = setup_after_moves or bool(moves)
                if not moves and not start_error:
                    try:
                        _place_setup(start, prop, raw, size)
                    except ValueError as err:
                        start_error = f"{source}: {err}"
        played = _node_move(node, len(moves) + 1, source, size)
        if played is not None:
            colours.append(played[0])
            moves.append(played[1])
    komi = fox_komi(text("KM")) if root.has_property("KM") else None
    return Record(
        id=record_id(source),
        source=source,
        size=size,
        moves=coords.to_sgf_string(moves, size),
        komi=komi,
        rules=text("RU"),
        handicap=handicap,
        black=text("PB"),
        white=text("PW"),
        black_rank=text("BR"),
        white_rank=text("WR"),
        date=text("DT"),
        result=text("RE"),
        setup=any(setup.values()),
        colours="".join(colours),
        setup_black=setup["AB"],
        setup_white=setup["AW"],
        setup_empty=setup["AE"],
        start_black="".join(sorted(coords.to_sgf(p, size) for p, c in start.items() if c == "B")),
        start_white="".join(sorted(coords.to_sgf(p, size) for p, c in start.items() if c == "W")),
        first_player=colours[0] if colours else "B",
        setup_after_moves=setup_after_moves,
        start_error=start_error,
    )


def _place_setup(stones: Dict[coords.Point, str], prop: str, values: Sequence[str], size: int) -> None:
    """Apply one setup property (AB / AW / AE, values as written) to ``stones``; ValueError for a bad point."""
    for point in setup_points(values, prop, size):
        if prop == "AE":
            stones.pop(point, None)
        else:
            stones[point] = prop[1]


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
    if record.start_error:
        raise RecordError("setup_stones", record.start_error)
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

    source: str  # path relative to the scanned folder
    reason: Optional[str]  # None: qualified; else why not (a key of REASONS)
    payload: str  # the record as JSON when qualified, else the rejection message
    training_reason: Optional[str]  # None: usable for training (:func:`usable`); else why not
    record: str  # the record as JSON when usable for training, else ""


def _check_file(args: Tuple[str, str, int, int]) -> Checked:
    """Worker: qualify and :func:`usable` one file."""
    path, source, capture_free, min_moves = args
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return Checked(source, "unreadable", f"{source}: {err}", "unreadable", "")
    return check_read(lambda: read_sgf(data, source), source, capture_free, min_moves)


def check_read(read: Callable[[], Record], source: str, capture_free: int = 50, min_moves: int = 50) -> Checked:
    """Read one record with ``read()``, then qualify it and test it with :func:`usable`.

    A :class:`RecordError` from ``read`` is the record's reason for both;
    any other exception (a parser bug) counts as ``unreadable``: one bad
    record never ends a whole scan.
    """
    try:
        rec = read()
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


def check_input_folder(root: Path, include: Sequence[str] = ()) -> List[Path]:
    """The SGF files to scan below ``root``; an error naming ``root`` if there is nothing to scan.

    A folder that does not exist, a path that is not a folder, or a folder
    without any SGF file (that ``include`` keeps) is an error, never "0 files".
    """
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such folder")
    if not root.is_dir():
        raise ValueError(
            f"{root}: not a folder; give the folder that holds the SGF files "
            "(moveorder extract puts a dataset's files in one)"
        )
    files = sgf_files(root, include)
    if not files:
        what = f" matching --include {' '.join(include)}" if include else ""
        raise ValueError(f"{root}: no SGF files (*.sgf){what} below this folder")
    return files


def scan(
    root: Path,
    capture_free: int = 50,
    min_moves: int = 50,
    workers: int = 1,
    include: Sequence[str] = (),
    files: Optional[Sequence[Path]] = None,
) -> Iterator[Checked]:
    """Check every SGF file below ``root``; yield a :class:`Checked` per file, in file order.

    ``files``: the files to check (default: :func:`sgf_files` of ``root``).
    """
    root = Path(root)
    if files is None:
        files = sgf_files(root, include)
    jobs = [(str(p), p.relative_to(root).as_posix(), capture_free, min_moves) for p in files]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            yield from pool.map(_check_file, jobs, chunksize=64)
    else:
        yield from map(_check_file, jobs)


def load_jsonl(path: Path, from_json: Callable[[str], object], what: str) -> list:
    """``from_json`` of every non-blank line of a JSONL file; a line it cannot read raises ValueError
    naming the file, the line and ``what`` it should have been (e.g. "a game record")."""
    out = []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                out.append(from_json(raw.decode("utf-8")))
            except (ValueError, TypeError) as err:  # bad JSON, bad UTF-8, or fields that are not the object's
                raise ValueError(f"{path}: line {number}: not {what} ({type(err).__name__}: {err})") from None
    return out


def load_records(path: Path) -> List[Record]:
    """Every record of a JSONL file; a line that is not one raises ValueError naming the file and the line."""
    return load_jsonl(path, Record.from_json, "a game record")


__all__ = [
    "REASONS",
    "load_jsonl",
    "Record",
    "RecordError",
    "Checked",
    "check_read",
    "read_sgf",
    "qualify",
    "usable",
    "scan",
    "check_input_folder",
    "load_records",
    "fox_komi",
    "parse_point",
    "setup_points",
]
