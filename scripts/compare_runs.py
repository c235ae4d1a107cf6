"""Compare two quick runs file by file: byte for byte, markdown tables cell by cell, and what holds a time
with the time left out: a PDF's CreationDate, a CSV's wall-time columns (moveorder.report.sweeps.TIMING_COLUMNS),
the timings model.pt keeps in its metrics.

python compare_runs.py BEFORE AFTER

A file of AFTER is compared with the file of the same name in BEFORE; where BEFORE has none, with the name
of an older run-folder scheme (AFTER's run folder 'anneal-RUN' was BEFORE's 'RUN').
"""

import re
import sys
from pathlib import Path

before, after = Path(sys.argv[1]), Path(sys.argv[2])
TIMING = ("-stats.json", "metrics.json", "checkpoint.pt")  # hold wall times / optimizer state with timings
MODEL_TIMES = ("seconds", "steps_per_second", "data_share")  # model.pt's metrics: measured, never reproduced


def same_but_times(old, new):
    """Whether two files differ only in what records when, or how long, they were made."""
    if new.suffix == ".pdf":
        stamp = re.compile(rb"/CreationDate \(D:\d+Z?\)")
        return stamp.sub(b"", old.read_bytes()) == stamp.sub(b"", new.read_bytes())
    if new.suffix == ".csv":
        import pandas as pd

        from moveorder.report.sweeps import TIMING_COLUMNS

        a, b = pd.read_csv(old), pd.read_csv(new)
        timed = [c for c in TIMING_COLUMNS if c in b.columns]
        return bool(timed) and a.drop(columns=timed, errors="ignore").equals(b.drop(columns=timed))
    if new.name == "model.pt":
        import torch

        a, b = torch.load(old, weights_only=False), torch.load(new, weights_only=False)
        ma, mb = a.pop("metrics", {}), b.pop("metrics", {})
        weights = a.pop("model"), b.pop("model")
        return (
            a == b
            and weights[0].keys() == weights[1].keys()
            and all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
            and {k: v for k, v in ma.items() if k not in MODEL_TIMES}
            == {k: v for k, v in mb.items() if k not in MODEL_TIMES}
        )
    return False


def cells(text):
    out = []
    for line in text.splitlines():
        if line.startswith("|"):
            row = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in row):
                continue
            out.append(row)
        else:
            out.append([line.strip()])
    return out


same, differ, missing, timing, md_same, stamped = [], [], [], [], [], []
for top in ("data", "results"):
    for f in sorted((after / top).rglob("*")):
        if not f.is_file() or "/logs/" in str(f) or "katago-" in str(f.parent.name):
            continue
        rel = f.relative_to(after)
        old = before / rel
        if not old.exists():
            old = before / Path(*[p[len("anneal-") :] if p.startswith("anneal-") else p for p in rel.parts])
        if not old.exists():
            missing.append(str(rel))
            continue
        if f.read_bytes() == old.read_bytes():
            same.append(str(rel))
        elif str(rel).endswith(TIMING):
            timing.append(str(rel))
        elif f.suffix == ".md" and cells(f.read_text()) == cells(old.read_text()):
            md_same.append(str(rel))
        elif same_but_times(old, f):
            stamped.append(str(rel))
        else:
            differ.append(str(rel))
print(
    f"identical bytes: {len(same)}; markdown with identical cells (table layout changed): {len(md_same)}; "
    f"identical but for a date or wall time: {len(stamped)}; "
    f"timing files (not compared): {len(timing)}; different: {len(differ)}; missing before: {len(missing)}"
)
for name, lst in (
    ("markdown cells equal", md_same),
    ("identical but for a date or wall time", stamped),
    ("DIFFERENT", differ),
    ("missing before", missing),
    ("timing", timing),
):
    for x in lst:
        print(f"  {name}: {x}")
