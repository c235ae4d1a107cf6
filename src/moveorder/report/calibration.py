"""Fitting a network's calibration on results of known games (:func:`calibrate`, ``moveorder
calibrate``), with its in-sample figures; how the chances answers stated match what happened, per set
and pooled by length (:func:`how_sure`: the tables and panels of ``moveorder report`` and
bench/confidence.py).  The chances themselves: :mod:`moveorder.search.confidence`;
the measures of stated chances against what happened: :mod:`moveorder.report.metrics`; the reliability
diagram: :func:`moveorder.report.plots.reliability_diagram`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pandas as pd

from moveorder.report.metrics import auroc, brier, expected_calibration_error, stated_chances
from moveorder.search import confidence
from moveorder.search.results import load_results


def read_answers(paths: Sequence[Path]) -> List[Dict]:
    """infer-set's rows of ``paths``, each checked to carry the search's evidence."""
    rows = []
    for path in map(Path, paths):
        if not path.is_file():
            raise ValueError(f"{path}: --results: no such file")
        these = load_results(path)
        missing = [r.get("id", "?") for r in these if not r.get("evidence")]
        if missing:
            raise ValueError(
                f"{path}: {len(missing)} of {len(these)} answers carry no evidence (the first: {missing[0]}); "
                "infer-set writes it with --method beam"
            )
        rows += [r | {"file": str(path)} for r in these]
    return rows


def calibrate(paths: Sequence[Path], network: str, out: Path, command: str) -> str:
    """Fit ``network``'s calibration for the one search of the answers in ``paths`` (infer-set
    results of games in no evaluation set) and write it to ``out`` (kept: an existing file's fits
    for other searches); returns a line saying what was fitted."""
    rows = read_answers(paths)
    if not rows:
        raise ValueError(f"{', '.join(map(str, paths))}: no answers")
    keys = sorted({str(r["evidence"].get("search")) for r in rows})
    if len(keys) != 1 or keys[0] == "None":
        raise ValueError(f"--results: answers of {len(keys)} searches ({', '.join(keys)}); fit one search at a time")
    out = Path(out)
    existing = confidence.Calibration.load(out) if out.is_file() else None
    if existing is not None and existing.network != network:
        raise ValueError(f"{out}: the calibration of network {existing.network}, not of {network}")
    files = [
        {
            "file": str(p),
            "sha256": hashlib.sha256(Path(p).read_bytes()).hexdigest(),
            "answers": sum(r["file"] == str(p) for r in rows),
        }
        for p in paths
    ]
    fitted = confidence.fit(rows, {"files": files, "command": command})
    chances = [fitted.chance(r["evidence"]) for r in rows]
    exact = [bool(r["exact_match"]) for r in rows]
    fitted.data["in_sample"] = {
        "auroc": round(auroc(chances, exact), 4),
        "ece": round(expected_calibration_error(chances, exact), 4),
        "brier": round(brier(chances, exact), 4),
    }
    calibration = existing or confidence.Calibration(network)
    calibration.fits[keys[0]] = fitted
    calibration.save(out)
    return (
        f"{out}: {network}, search {keys[0]}: {fitted.data['answers']} answers ({fitted.data['exact']} exact), "
        f"{fitted.data['moves']} moves; in-sample AUROC {fitted.data['in_sample']['auroc']:.3f}, "
        f"ECE {fitted.data['in_sample']['ece']:.3f}"
    )


def how_sure(answers: Dict[str, Tuple[int, Sequence[Dict]]]) -> Dict[str, object]:
    """How the chances stated by each set's answers (``answers[label] = (n, infer-set rows)``) match what
    happened, per set and pooled by length: ``orders`` (a table, :func:`moveorder.report.metrics.
    stated_chances` of "the order is exact"), ``moves`` (the same of "this move's number is right", with
    ``in doubt``: moves stated below :data:`moveorder.settings.DOUBT`), the reliability diagrams' panels
    (``order_panels``, ``move_panels``: title -> chance, truth) and ``unstated`` (label -> answers
    without a chance, and the first's reason).  Answers that stated no chance are left out."""
    orders, moves, order_panels, move_panels, unstated = [], [], {}, {}, {}
    pooled: Dict[int, Dict[str, List]] = {}

    def add(label: str, d: Dict[str, List]) -> None:
        orders.append(stated_chances(label, d["chance"], d["exact"]))
        moves.append(stated_chances(label, d["mc"], d["right"]) | {"in doubt": len(confidence.in_doubt(d["mc"]))})
        order_panels[label] = {"chance": d["chance"], "truth": d["exact"]}

    for label, (n, rows) in answers.items():
        without = [r for r in rows if r.get("chance") is None]
        if without:
            unstated[label] = (len(without), without[0].get("chance_note") or "no chance stated")
        rows = [r for r in rows if r.get("chance") is not None]
        if not rows:
            continue
        d = {
            "chance": [r["chance"] for r in rows],
            "exact": [bool(r["exact_match"]) for r in rows],
            "mc": [p for r in rows for p in r["move_chances"]],
            "right": [x == y for r in rows for x, y in zip(r["inferred"], r["actual"])],
        }
        add(label, d)
        acc = pooled.setdefault(int(n), {"sets": 0, **{k: [] for k in d}})
        acc["sets"] += 1
        for k, these in d.items():
            acc[k].extend(these)
    for n, acc in sorted(pooled.items()):
        if acc["sets"] > 1:
            add(f"pooled, {n} moves", acc)
        move_panels[f"every move, {n}-move answers"] = {"chance": acc["mc"], "truth": acc["right"]}
    return {
        "orders": pd.DataFrame(orders),
        "moves": pd.DataFrame(moves).rename(
            columns={
                "answers": "moves",
                "exact": "right",
                "exact rate": "right rate",
                "exact of those": "right of those",
            }
        ),
        "order_panels": order_panels,
        "move_panels": move_panels,
        "unstated": unstated,
    }
