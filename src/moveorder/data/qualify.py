"""The filter stage's writer: every record of a folder (SGF files, or Tygem month files) checked,
the qualified ones and those usable for training written out, with the count by reason.

It sits above :mod:`moveorder.data.records` and :mod:`moveorder.data.tygem`, which each read one
format, so that neither imports the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Sequence

from moveorder.data import records, tygem
from moveorder.settings import RECORD_FORMATS


def write_scan(
    root: Path,
    qualified_path: Path,
    report_path: Path,
    rejected_path: Path,
    capture_free: int = 50,
    min_moves: int = 50,
    workers: int = 1,
    include: Sequence[str] = (),
    usable_path: Optional[Path] = None,
    progress: bool = False,
    record_format: str = "sgf",
) -> Dict[str, int]:
    """Scan ``root``; write qualified records (JSONL), the count by reason (CSV) and every rejection (CSV).

    ``root`` must be a folder holding SGF files (:func:`moveorder.data.records.check_input_folder`),
    or with ``record_format="tygem"`` Tygem month files
    (:func:`moveorder.data.tygem.check_input_folder`); nothing is written
    otherwise.  ``usable_path``: also write every record usable for training
    (JSONL, qualified ones included).  The report counts them (``usable``)
    and the others by why they cannot train (``unusable_REASON``); its
    ``files`` row counts the records read (for Tygem: games, one a line).
    ``progress``: a progress bar on stderr.
    """
    import contextlib
    import csv

    from tqdm import tqdm

    if record_format == "sgf":
        files = records.check_input_folder(root, include)
        checked, total, unit = records.scan(root, capture_free, min_moves, workers, include, files), len(files), "file"
    elif record_format == "tygem":
        months = tygem.check_input_folder(root, include)
        checked, total, unit = tygem.scan(root, capture_free, min_moves, workers, months), None, "game"
    else:
        raise ValueError(f"unknown record format {record_format!r} (expected one of {', '.join(RECORD_FORMATS)})")
    # Handicap stones, passes and captures never stop a record from training.
    training_reasons = [r for r in records.REASONS if r not in ("handicap", "pass_early", "capture_early")]
    counts = {
        "files": 0,
        "qualified": 0,
        **{r: 0 for r in records.REASONS},
        "usable": 0,
        **{f"unusable_{r}": 0 for r in training_reasons},
    }
    paths = [qualified_path, report_path, rejected_path] + ([usable_path] if usable_path else [])
    for p in paths:
        Path(p).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        q = stack.enter_context(open(qualified_path, "w", encoding="utf-8"))
        rej = csv.writer(stack.enter_context(open(rejected_path, "w", newline="", encoding="utf-8")))
        u = stack.enter_context(open(usable_path, "w", encoding="utf-8")) if usable_path else None
        bar = stack.enter_context(tqdm(total=total, desc="filter", unit=unit, disable=not progress, mininterval=1))
        rej.writerow(["source", "reason", "detail"])
        for c in checked:
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
            bar.update(1)
    with open(report_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["reason", "count"])
        for k, v in counts.items():
            w.writerow([k, v])
    return counts
