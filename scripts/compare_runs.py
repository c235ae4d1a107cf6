"""Compare two quick runs file by file: byte for byte, markdown tables cell by cell.

python compare_runs.py BEFORE AFTER   (run folders renamed: AFTER's 'anneal-RUN' is BEFORE's 'RUN')
"""

import re
import sys
from pathlib import Path

before, after = Path(sys.argv[1]), Path(sys.argv[2])
TIMING = ("-stats.json", "metrics.json", "checkpoint.pt")  # hold wall times / optimizer state with timings


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


same, differ, missing, timing, md_same = [], [], [], [], []
for top in ("data", "results"):
    for f in sorted((after / top).rglob("*")):
        if not f.is_file() or "/logs/" in str(f) or "katago-" in str(f.parent.name):
            continue
        rel = f.relative_to(after)
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
        else:
            differ.append(str(rel))
print(
    f"identical bytes: {len(same)}; markdown with identical cells (table layout changed): {len(md_same)}; "
    f"timing files (not compared): {len(timing)}; different: {len(differ)}; missing before: {len(missing)}"
)
for name, lst in (
    ("markdown cells equal", md_same),
    ("DIFFERENT", differ),
    ("missing before", missing),
    ("timing", timing),
):
    for x in lst:
        print(f"  {name}: {x}")
