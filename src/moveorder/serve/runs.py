"""A results folder as the page shows it: every inference run the pipeline wrote, and each run's table.

Reads only what the workflow wrote (``inferred/NETWORK/LABEL/SET/Nm.jsonl`` and, where KataGo scored
the run, ``scored/NETWORK/LABEL/KATAGO-vVISITS/SET/Nm.csv``); nothing is run again.  A run is named by
its path under the results folder; :meth:`Results.path` refuses any name that is not one of the runs
listed (an absolute path, ``..``, a link out of the folder), so no file outside the folder is read.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Dict, List, Optional

#: A run's file under the results folder: inferred/NETWORK/LABEL/SET/Nm.jsonl.
RUN_FILE = re.compile(r"^inferred/[^/]+/[^/]+/[^/]+/(\d+)m\.jsonl$")
#: The most runs listed and the most rows a run's file may hold (a set is 100 games).
MAX_RUNS = 2000
MAX_ROWS = 100_000
#: The largest run file read, in bytes (a row holds two orders and some numbers: under 4 kB).
MAX_RUN_BYTES = 64_000_000


class Results:
    """The runs of one results folder."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ValueError(f"--results {folder}: no such folder")
        self.root = self.folder.resolve()

    def runs(self) -> List[Dict]:
        """Every inference run of the folder: its name (path), network, label, set and length."""
        out = []
        base = self.root / "inferred"
        if not base.is_dir():
            return out
        for path in sorted(base.glob("*/*/*/*m.jsonl")):
            name = path.relative_to(self.root).as_posix()
            if not RUN_FILE.match(name) or not self._inside(path):
                continue
            _, network, label, dataset, file = name.split("/")
            out.append({"run": name, "network": network, "label": label, "set": dataset, "n": int(file[:-7])})
            if len(out) >= MAX_RUNS:
                break
        return out

    def _inside(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.root)
        except ValueError:
            return False
        return path.is_file()

    def path(self, run: str) -> Path:
        """The file of ``run`` (a name :meth:`runs` lists); ValueError for any other name."""
        if not isinstance(run, str) or not RUN_FILE.match(run) or "\\" in run or "/../" in f"/{run}/":
            raise ValueError(f"{run!r}: not a run of this results folder (inferred/NETWORK/LABEL/SET/Nm.jsonl)")
        path = self.root / run
        if not self._inside(path):
            raise ValueError(f"{run!r}: not a run of this results folder")
        return path

    def table(self, run: str) -> Dict:
        """The rows of ``run``: each arrangement's set, length, id, LGMs, exact match, matching prefix and
        moves, and KataGo's losses where the run was scored; the orders themselves for the boards."""
        path = self.path(run)
        if path.stat().st_size > MAX_RUN_BYTES:
            raise ValueError(f"{run}: larger than {MAX_RUN_BYTES:,} bytes; not a run the workflow wrote")
        rows = []
        with open(path, encoding="utf-8") as f:
            for k, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                if k > MAX_ROWS:
                    raise ValueError(f"{run}: more than {MAX_ROWS:,} rows; not a run the workflow wrote")
                try:
                    rows.append(_row(json.loads(line)))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                    raise ValueError(f"{run}: line {k} is not a row of an inference run ({err})") from None
        scored = self._scores(run)
        for r in rows:
            r |= scored["losses"].get(r["id"], {"loss_actual": None, "loss_inferred": None})
        return {"run": run, "rows": rows, "scored_by": scored["by"]}

    def _scores(self, run: str) -> Dict:
        """KataGo's losses of the run's sequences, id -> losses, from the first scoring of it found."""
        _, network, label, dataset, file = run.split("/")
        folder = self.root / "scored" / network / label
        for table in sorted(folder.glob(f"*/{dataset}/{file[:-6]}.csv")) if folder.is_dir() else []:
            if not self._inside(table) or table.stat().st_size > MAX_RUN_BYTES:
                continue
            losses = {}
            with open(table, newline="", encoding="utf-8") as f:
                for r in csv.DictReader(f):
                    losses[r.get("id", "")] = {
                        "loss_actual": _number(r.get("loss_actual")),
                        "loss_inferred": _number(r.get("loss_inferred")),
                    }
            return {"by": table.parent.parent.name, "losses": losses}
        return {"by": None, "losses": {}}


def _number(text: Optional[str]) -> Optional[float]:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _row(r: Dict) -> Dict:
    """A JSON line of infer-set as the page's table row."""
    inferred, actual = [str(m) for m in r["inferred"]], [str(m) for m in r["actual"]]
    return {
        "id": str(r["id"]),
        "set": str(r["set"]),
        "n": int(r["n"]),
        "lgm": float(r["lgm"]),
        "actual_lgm": float(r["actual_lgm"]),
        "exact_match": bool(r["exact_match"]),
        "chance": _number(r.get("chance")),
        "matching_prefix": int(r["matching_prefix"]),
        "matching_moves": int(r["matching_moves"]),
        "prisoners": [int(x) for x in r.get("prisoners", (0, 0))],
        "found": bool(r.get("found", True)),
        "source": str(r.get("source", "")),
        "inferred": inferred,
        "actual": actual,
    }
