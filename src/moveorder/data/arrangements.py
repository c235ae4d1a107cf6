"""Stone arrangements: the inference task's input, and its answer key.

An :class:`Arrangement` is what a game looks like after move ``n``: the set
of black stones and the set of white stones standing (sorted, so the order
of play cannot leak through them) and the prisoners each side took (zero
for the paper's capture-free games), plus the actual sequence that produced
them (the answer key, never shown to inference) and the game's metadata.
With ``selection.captures`` other than ``forbidden``, :func:`eligible`
admits games with captures.

:func:`select_games` picks the evaluation games of a set reproducibly from
a seed among the qualified games; the training pool is every other record
usable for training (:func:`moveorder.data.records.usable`: handicap, capture and
short games included), minus any game whose opening repeats an evaluation
game's (or, if shorter, is the start of one), so nothing of the answer key
can leak into training.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.data.records import Record, load_jsonl
from moveorder.go import coords
from moveorder.settings import CAPTURES


@dataclass
class Arrangement:
    """The stones after move ``n`` of a game, and the sequence that was played."""

    id: str
    set: str
    n: int
    black: List[str]  # SGF points, sorted
    white: List[str]  # SGF points, sorted
    actual: List[str]  # SGF points in the order played (the answer key)
    komi: float | None = None
    rules: str = ""
    players: str = ""
    ranks: str = ""
    date: str = ""
    source: str = ""
    #: Stones each side captured in the first ``n`` moves: [Black's (white stones), White's (black stones)].
    prisoners: List[int] = field(default_factory=lambda: [0, 0])

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> "Arrangement":
        return cls(**json.loads(line))


def clip(record: Record, n: int, set_name: str) -> Arrangement:
    """The arrangement after the first ``n`` moves of a record: the stones standing and the prisoners taken.

    The moves are replayed on the board (:mod:`moveorder.go.board`), so a
    record with captures gives the stones left and the prisoner counts; one
    without gives every move's stone and prisoners ``[0, 0]``.  A pass or an
    illegal move before move ``n`` raises ValueError naming the record and the move.
    """
    from moveorder.go import board as goboard

    moves = coords.from_sgf_string(record.moves, record.size)[:n]
    if len(moves) < n:
        raise ValueError(f"{record.source}: only {len(moves)} moves, cannot clip to {n}")
    if any(m is None for m in moves):
        raise ValueError(f"{record.source}: a pass within the first {n} moves")
    b, taken = goboard.Board(record.size), [0, 0]
    for i, m in enumerate(moves):
        try:
            taken[i % 2] += b.play(goboard.BLACK if i % 2 == 0 else goboard.WHITE, m)
        except goboard.IllegalMove as err:
            raise ValueError(f"{record.source}: move {i + 1}: {err}") from None
    sgf_moves = [coords.to_sgf(m) for m in moves]
    return Arrangement(
        id=record.id,
        set=set_name,
        n=n,
        black=sorted(coords.to_sgf(p) for p in b.stones(goboard.BLACK)),
        white=sorted(coords.to_sgf(p) for p in b.stones(goboard.WHITE)),
        actual=sgf_moves,
        komi=record.komi,
        rules=record.rules,
        players=f"{record.black} (B) vs {record.white} (W)",
        ranks=f"{record.black_rank} / {record.white_rank}",
        date=record.date,
        source=record.source,
        prisoners=taken,
    )


def eligible(record: Record, n: int, captures: str, shortest: int) -> bool:
    """Whether a usable record can be an evaluation game of ``n`` moves under the ``captures`` option.

    ``forbidden``: the records are the qualified ones already (the paper's rules), nothing more is
    checked here.  ``allowed``: a usable record (colours alternating from its first mover) that is
    19x19, without handicap or setup stones, Black first, every move legal and no pass in the first
    ``n`` moves; captures are fine.  ``required``: as ``allowed``, and at least one capture in the
    first ``shortest`` moves (so every clip captures).
    """
    from moveorder.go import board as goboard

    if captures not in CAPTURES:
        raise ValueError(f"captures {captures!r}: not one of {CAPTURES}")
    if captures == "forbidden":
        return True
    if record.size != 19 or record.handicap > 0 or record.setup or record.start_black or record.start_white:
        return False
    # Records read back from JSONL keep no colours; usable ones alternate from their first mover.
    if record.first_player != "B" or (record.colours and record.colours[:n] != ("BW" * n)[:n]):
        return False
    moves = coords.from_sgf_string(record.moves, record.size)[:n]
    if len(moves) < n or any(m is None for m in moves):
        return False
    try:
        _, captured = goboard.replay(moves)
    except goboard.IllegalMove:
        return False
    return captures == "allowed" or sum(captured[:shortest]) > 0


def _rng_key(seed: int, set_name: str) -> List[int]:
    # The set's name enters the seed so two sets never share a draw.
    return [seed, int.from_bytes(hashlib.sha256(set_name.encode()).digest()[:4], "little")]


def _rng(seed: int, set_name: str) -> np.random.Generator:
    return np.random.default_rng(_rng_key(seed, set_name))


def dedupe(records: Sequence[Record]) -> Tuple[List[Record], int]:
    """Drop records whose whole move sequence repeats an earlier one's; return kept and dropped count."""
    seen, kept = set(), []
    for r in records:
        if r.moves not in seen:
            seen.add(r.moves)
            kept.append(r)
    return kept, len(records) - len(kept)


def _openings(games: Sequence[Record], leak_prefix: int) -> set:
    """Every even-length start (whole moves) of each game's first ``leak_prefix`` moves."""
    return {r.moves[:k] for r in games for k in range(0, 2 * leak_prefix + 1, 2)}


def _calibration_games(
    unique: Sequence[Record], selected: Sequence[Record], count: int, seed: int, set_name: str, leak_prefix: int
) -> List[Record]:
    """``count`` games of ``unique`` for calibration: none an evaluation game, none sharing an opening
    (its first ``leak_prefix`` moves) with one or with another calibration game."""
    if count <= 0:
        return []
    taken = _openings(selected, leak_prefix)
    free = [r for r in unique if r.moves[: 2 * leak_prefix] not in taken]
    order = np.random.default_rng([*_rng_key(seed, set_name), 1]).permutation(len(free))
    kept, openings = [], set()
    for i in order:
        r = free[int(i)]
        if r.moves[: 2 * leak_prefix] in openings:
            continue
        kept.append(r)
        openings |= _openings([r], leak_prefix)
        if len(kept) == count:
            return sorted(kept, key=lambda r: r.source)
    raise ValueError(
        f"set {set_name!r}: only {len(kept)} qualified games outside the {len(selected)} evaluation games "
        f"and their openings, {count} calibration games requested"
    )


def select_games(
    records: Sequence[Record],
    count: int,
    seed: int,
    set_name: str,
    leak_prefix: int,
    usable: Optional[Sequence[Record]] = None,
    calibration: int = 0,
) -> Dict[str, object]:
    """Pick ``count`` evaluation games among ``records``, ``calibration`` more, and the training pool.

    Records are sorted by source path before drawing, so the choice depends
    only on the seed, the set's name and the files, not on scan order.  The
    calibration games (where the search's stated chances are fitted) are drawn
    afterwards from the records left, from a stream of their own, so the
    evaluation games are the same whatever their number; none shares its first
    ``leak_prefix`` moves with an evaluation game (or another calibration game).
    The pool is drawn from ``usable`` (default: ``records``), deduplicated, less
    the evaluation and calibration games and every game whose first
    ``leak_prefix`` moves equal one of theirs or whose whole (shorter) sequence
    starts one.  Returns ``{"selected", "calibration", "pool", "duplicates",
    "leaked", "evaluation", "calibration_used", "usable"}``: the counts say
    where the ``usable`` candidates went (``evaluation``, ``calibration_used``:
    candidates that are evaluation or calibration games).
    """
    unique, duplicates = dedupe(sorted(records, key=lambda r: r.source))
    if len(unique) < count:
        raise ValueError(f"set {set_name!r}: only {len(unique)} qualified games, {count} requested")
    idx = _rng(seed, set_name).choice(len(unique), size=count, replace=False)
    selected = [unique[i] for i in sorted(int(i) for i in idx)]
    kept = _calibration_games(unique, selected, calibration, seed, set_name, leak_prefix)
    candidates = list(records) if usable is None else list(usable)
    pool_unique, duplicates = dedupe(sorted(candidates, key=lambda r: r.source))
    chosen, calibrating = {r.moves for r in selected}, {r.moves for r in kept}
    # Every even-length start (whole moves) of every evaluation opening: a game whose opening, or
    # whose whole sequence when it is shorter, is one of these would show the answer key in training.
    openings = _openings(selected + kept, leak_prefix)
    pool, leaked, evaluation, calibration_used = [], 0, 0, 0
    for r in pool_unique:
        if r.moves in chosen:
            evaluation += 1
            continue
        if r.moves in calibrating:
            calibration_used += 1
            continue
        if r.moves[: 2 * leak_prefix] in openings:
            leaked += 1
            continue
        pool.append(r)
    return {
        "selected": selected,
        "calibration": kept,
        "pool": pool,
        "duplicates": duplicates,
        "leaked": leaked,
        "evaluation": evaluation,
        "calibration_used": calibration_used,
        "usable": len(candidates),
    }


def write_jsonl(path: Path, items) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for item in items:
            f.write(item.to_json() + "\n")
    tmp.replace(path)


def load_arrangements(path: Path) -> List[Arrangement]:
    """Every arrangement of a JSONL file; a line that is not one raises ValueError naming the file and the line."""
    return load_jsonl(path, Arrangement.from_json, "an arrangement")


def select_set(
    records_path: Path,
    set_name: str,
    count: int,
    seed: int,
    lengths: Sequence[int],
    out_dir: Path,
    pool_path: Path,
    selection_path: Path,
    usable_path: Optional[Path] = None,
    pool_report_path: Optional[Path] = None,
    captures: str = "forbidden",
    calibration: int = 0,
    calibration_dir: Optional[Path] = None,
) -> Dict[str, int]:
    """A set's evaluation games, clipped to each length (``out_dir/{n}m.jsonl``), its pool and their reports.

    Only records long enough for every length are drawn from (passes are ruled
    out by qualification).  ``captures`` (:func:`eligible`): with ``allowed``
    or ``required``, ``records_path`` holds the usable records and those that
    qualify but for captures are drawn from.  ``selection_path``: CSV of the selected games'
    metadata; ``pool_report_path``: CSV of where the pool's candidates went,
    each counted once.  ``calibration`` games more, clipped the same way, go
    to ``calibration_dir/{n}m.jsonl`` (:func:`select_games`).  Returns the
    qualified count and those counts.
    """
    if calibration and calibration_dir is None:
        raise ValueError(f"--calibration-count {calibration}: no --calibration-dir to write the calibration games to")
    import csv

    from moveorder.data.records import load_records

    lengths = sorted(set(lengths))
    read = load_records(Path(records_path))
    records = [
        r for r in read if len(r.moves) // 2 >= max(lengths) and eligible(r, max(lengths), captures, min(lengths))
    ]
    if usable_path is None:
        usable = None
    elif Path(usable_path).resolve() == Path(records_path).resolve():  # captures allowed: one file, read once
        usable = read
    else:
        usable = load_records(Path(usable_path))
    chosen = select_games(
        records, count, seed, set_name, leak_prefix=max(lengths), usable=usable, calibration=calibration
    )
    for n in lengths:
        write_jsonl(Path(out_dir) / f"{n}m.jsonl", [clip(r, n, set_name) for r in chosen["selected"]])
        if calibration:
            write_jsonl(Path(calibration_dir) / f"{n}m.jsonl", [clip(r, n, set_name) for r in chosen["calibration"]])
    write_jsonl(Path(pool_path), chosen["pool"])
    with open(selection_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["set", "id", "source", "black", "white", "black_rank", "white_rank", "date", "komi"])
        for r in chosen["selected"]:
            w.writerow([set_name, r.id, r.source, r.black, r.white, r.black_rank, r.white_rank, r.date, r.komi])
    pool_counts = {
        "candidates": chosen["usable"],
        "evaluation_games": chosen["evaluation"],
        **({"calibration_games": chosen["calibration_used"]} if calibration else {}),
        "duplicates": chosen["duplicates"],
        "repeats_evaluation_opening": chosen["leaked"],
        "pool": len(chosen["pool"]),
    }
    if pool_report_path:
        with open(pool_report_path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["what", "count"])
            w.writerows(pool_counts.items())
    return {
        "qualified": len(records),
        "selected": len(chosen["selected"]),
        **({"calibration": len(chosen["calibration"])} if calibration else {}),
        **pool_counts,
    }
