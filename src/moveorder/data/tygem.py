"""The Tygem 9d dataset's game records: one game a line, players from a yearly index.

The Tygem "9D vs 9D" games of ``yenw/computer-go-dataset`` (the source of
Leela Zero's human-games network ``best_v1``) are not SGF files.  A month's
file (``YYYY-MM``, the one file of ``TYGEM/Kifu/YYYY-MM.zip``) holds one game
a line, SGF move nodes only (no header, no handicap, Black first)::

    GAME_ID<TAB>;B[qd];W[pp];B[dd];...

A year's index (``KifuYYYY.index``, the one file of ``TYGEM/index/KifuYYYY.zip``)
holds one line per game, tab-separated:

=======  ==========================================  ========================
column   field                                       example
=======  ==========================================  ========================
0        game id                                     ``842008471``
1        ``C`` + date and time                       ``C2016.01.01 00:02``
2, 3, 4  White's name, English id, nation code       ``appsq  appsq  2``
5, 6, 7  Black's name, English id, nation code       ``57578  bluesky578  2``
8        result                                      ``W+Resign``, ``B+1.5``
9        number of moves                             ``154``
10       time control                                ``30/3 5m``
=======  ==========================================  ========================

:func:`read_game` turns one game line into a :class:`~moveorder.data.records.Record`
holding what the dataset's own converter (``TYGEM/Converter.py``) writes into
every game's SGF: komi 6.5, Japanese rules, both ranks 9d, and, where the
index has the game, the date, the players (the name, then the English id
where it differs) and the result.  A game the index lacks is still read,
without them.  A line that cannot be read raises
:class:`~moveorder.data.records.RecordError` naming the file and the line.
:func:`scan` streams every game of a folder through the same checks as
:func:`moveorder.data.records.scan` (:func:`~moveorder.data.records.check_read`), a
bounded number of lines in flight, so memory does not grow with the dataset.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from moveorder.data.records import Checked, Record, RecordError, check_read

log = logging.getLogger(__name__)

#: What Tygem's converter writes for every game of this dataset.
KOMI = 6.5
RULES = "Japanese"
RANK = "9d"

_MONTH = re.compile(r"^\d{4}-\d{2}$")  # a month file's name
_NODE = re.compile(r";([BW])\[([^\[\];]*)\]")
_LETTERS = frozenset("abcdefghijklmnopqrs")
#: Game lines handed to a worker at once, and chunks in flight per worker.
CHUNK = 512
AHEAD = 4


def month_files(root: Path, include: Sequence[str] = ()) -> List[Path]:
    """Every month file (named ``YYYY-MM``) below ``root``, sorted; ``include``: globs on the path below ``root``."""
    root = Path(root)
    files = (p for p in root.rglob("*") if p.is_file() and _MONTH.match(p.name))
    if include:
        files = (p for p in files if any(fnmatch.fnmatch(p.relative_to(root).as_posix(), g) for g in include))
    return sorted(files)


def index_files(root: Path) -> List[Path]:
    """Every index file (``*.index``) below ``root``, sorted."""
    return sorted(p for p in Path(root).rglob("*.index") if p.is_file())


def check_input_folder(root: Path, include: Sequence[str] = ()) -> List[Path]:
    """The month files to read below ``root``; an error naming ``root`` if there are none."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such folder")
    if not root.is_dir():
        raise ValueError(f"{root}: not a folder; give the folder that holds the Tygem month files")
    files = month_files(root, include)
    if not files:
        what = f" matching --include {' '.join(include)}" if include else ""
        raise ValueError(f"{root}: no Tygem month files (named YYYY-MM, one game a line){what} below this folder")
    return files


def _lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number from 1, text without its line end) of a file, streamed; undecodable bytes kept as U+FFFD."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            yield number, raw.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")


def game_ids(months: Iterable[Path]) -> set:
    """The game ids of every line of the month files (for :func:`read_index` to keep only those)."""
    return {text.partition("\t")[0].strip() for path in months for _, text in _lines(path)}


def _player(name: str, english: str) -> str:
    """A player as the converter writes PB/PW: the name, then the English id where it differs."""
    name, english = name.strip(), english.strip()
    return name if name == english or not english else f"{name} {english}".strip()


def read_index(paths: Iterable[Path], wanted: Optional[set] = None) -> Dict[str, Tuple[str, str, str, str]]:
    """Game id -> (date, black, white, result) from index files; only the ids in ``wanted`` (None: all).

    A line with fewer than 9 columns is skipped (counted in the log): the
    index only names players, so its damage never costs a game.
    """
    out: Dict[str, Tuple[str, str, str, str]] = {}
    for path in paths:
        bad = 0
        for _, text in _lines(path):
            cols = text.split("\t")
            if wanted is not None and cols[0].strip() not in wanted:
                continue
            if len(cols) < 9:
                bad += 1
                continue
            date = cols[1].strip()
            date = date[1:] if date.startswith("C") else date
            out[cols[0].strip()] = (date, _player(cols[5], cols[6]), _player(cols[2], cols[3]), cols[8].strip())
        if bad:
            log.warning("%s: %d index lines with fewer than 9 columns skipped", path, bad)
    return out


def read_game(text: str, source: str, index: Optional[Tuple[str, str, str, str]] = None) -> Record:
    """One game line (``GAME_ID<TAB>;B[qd];W[pp];...``) as a :class:`Record`; ``source`` names file and line.

    ``index``: the game's (date, black, white, result) from :func:`read_index`.
    Raises :class:`RecordError`: ``unreadable`` for a line without a tab or a
    game id, or a node that is not ``;B[..]`` / ``;W[..]``; ``illegal_move``
    for a point off the board (as :func:`moveorder.data.records.read_sgf` does).
    An empty point or ``tt`` is a pass.
    """
    game_id, tab, body = text.partition("\t")
    game_id, body = game_id.strip(), body.strip()
    if not tab:
        raise RecordError("unreadable", f"{source}: no tab between the game id and the moves")
    if not game_id:
        raise RecordError("unreadable", f"{source}: no game id before the tab")
    points, colours, pos = [], [], 0
    while pos < len(body):
        m = _NODE.match(body, pos)
        if not m:
            bad = body[pos : pos + 12]
            raise RecordError(
                "unreadable",
                f"{source}: move {len(points) + 1}: {bad!r} is not a move node ;B[..] or ;W[..]",
            )
        colour, raw = m.group(1), m.group(2).strip()
        if raw in ("", "tt"):
            raw = "tt"
        elif len(raw) != 2 or raw[0] not in _LETTERS or raw[1] not in _LETTERS:
            raise RecordError(
                "illegal_move", f"{source}: move {len(points) + 1}: {colour}[{raw}] is not a point on a 19x19 board"
            )
        points.append(raw)
        colours.append(colour)
        pos = m.end()
    date, black, white, result = index or ("", "", "", "")
    return Record(
        id=game_id,
        source=source,
        size=19,
        moves="".join(points),
        komi=KOMI,
        rules=RULES,
        black=black,
        white=white,
        black_rank=RANK,
        white_rank=RANK,
        date=date,
        result=result,
        colours="".join(colours),
        first_player=colours[0] if colours else "B",
    )


def games(root: Path, months: Sequence[Path], index: Dict) -> Iterator[Tuple[str, str, Optional[tuple]]]:
    """(source ``FILE:LINE`` below ``root``, line text, index entry or None) of every non-blank line, streamed."""
    root = Path(root)
    for path in months:
        name = path.relative_to(root).as_posix()
        for number, text in _lines(path):
            if text.strip():
                yield f"{name}:{number}", text, index.get(text.partition("\t")[0].strip())


def _check_chunk(args: Tuple[List[Tuple[str, str, Optional[tuple]]], int, int]) -> List[Checked]:
    """Worker: :func:`read_game` and check every line of a chunk."""
    chunk, capture_free, min_moves = args
    return [check_read(lambda: read_game(t, s, e), s, capture_free, min_moves) for s, t, e in chunk]


def _chunks(items: Iterator, size: int) -> Iterator[list]:
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def scan(
    root: Path,
    capture_free: int = 50,
    min_moves: int = 50,
    workers: int = 1,
    months: Optional[Sequence[Path]] = None,
) -> Iterator[Checked]:
    """Check every game of the month files below ``root``; a :class:`Checked` per game, in file and line order.

    The index files below ``root`` (``*.index``) give the games' metadata:
    only the entries of the games read are kept.  With ``workers`` > 1,
    chunks of lines go to worker processes, at most ``AHEAD`` chunks per
    worker in flight, so memory stays bounded whatever the dataset's size.
    """
    root = Path(root)
    months = month_files(root) if months is None else list(months)
    index = read_index(index_files(root), game_ids(months))
    log.info("%s: %d month files, %d games in the index", root, len(months), len(index))
    jobs = ((chunk, capture_free, min_moves) for chunk in _chunks(games(root, months, index), CHUNK))
    if workers <= 1:
        for job in jobs:
            yield from _check_chunk(job)
        return
    with ProcessPoolExecutor(workers) as pool:
        pending: deque = deque()
        for job in jobs:
            pending.append(pool.submit(_check_chunk, job))
            if len(pending) >= AHEAD * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


__all__ = ["KOMI", "RULES", "RANK", "read_game", "read_index", "scan", "month_files", "index_files"]
