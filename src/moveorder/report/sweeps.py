"""Ablation sweeps: what a sweep file may vary, the runs it names, and their summary table and figure.

A sweep file (``config/sweeps/*.yaml``) has a ``name``, ``axes`` (each a
list of values; the runs are their product) or an explicit list of ``runs``,
an optional ``base`` (settings every run shares), the ``metric`` its figure
shows and the ``paper`` key of the ablation it reproduces.  The workflow
(``workflow/rules/common.smk``) turns each combination into a run of the main
experiment with those settings changed; :func:`summarize_sweep` (``moveorder
sweep-summary``) gathers the runs' inference tables.

Loading a file needs only PyYAML (the Snakefile imports this module);
summaries import pandas and matplotlib when called.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import yaml

#: What a sweep may vary: the search's settings, the network, the set and the length.
AXES = (
    "method",
    "beam_width",
    "beam_future",
    "orientations",
    "init",
    "neighbour",
    "iterations",
    "trials",
    "t_start",
    "t_end",
    "network",
    "dataset",
    "n",
)
DEFAULT_METRIC = "lgm_slope"
#: What a sweep's figure shows: ``bars`` (its metric, one bar a run) or ``cost`` (mean LGM and share
#: on/above against network evaluations per arrangement, a curve per method).
FIGURES = ("bars", "cost")
#: The axes that set a search's budget: the runs of one ``cost`` curve differ only in these.
BUDGET_AXES = ("beam_width", "iterations", "trials")
#: Summary columns that time a run on its machine: the only ones two runs of one config may differ in.
TIMING_COLUMNS = ("seconds",)


def load_sweep(path: Path) -> Dict:
    """A sweep file, checked: ValueError naming the file and any axis it may not vary."""
    spec = yaml.safe_load(Path(path).read_text())
    unknown = set(spec.get("axes", {})) - set(AXES)
    if unknown:
        raise ValueError(f"{path}: unknown sweep axes {sorted(unknown)}; known: {AXES}")
    if spec.get("figure", "bars") not in FIGURES:
        raise ValueError(f"{path}: unknown figure {spec['figure']!r}; known: {FIGURES}")
    return spec


def curve_of(label: str) -> str:
    """The ``cost`` curve a run belongs to: its label without the budget axes, the set and the length."""
    skip = BUDGET_AXES + ("dataset", "n")
    return " ".join(p for p in label.split() if p.split("=", 1)[0] not in skip) or "base"


def run_cost(inferred_csv: Path) -> Dict[str, float]:
    """Network evaluations and seconds per arrangement, from the ``-stats.json`` infer-set writes beside
    its table (NaN where there is none)."""
    import json

    import pandas as pd

    stats_path = Path(inferred_csv).with_name(Path(inferred_csv).stem + "-stats.json")
    count = len(pd.read_csv(inferred_csv))
    if not stats_path.exists() or not count:
        return {"evaluations": float("nan"), "seconds": float("nan")}
    stats = json.loads(stats_path.read_text())
    return {"evaluations": stats["evaluations"] / count, "seconds": stats["seconds"] / count}


def combinations(spec: Dict) -> List[Tuple[Dict, str]]:
    """Each run of a sweep as (its settings: ``base`` updated by the combination, its label ``AXIS=VALUE ...``)."""
    axes = spec.get("axes", {})
    combos = spec.get("runs") or [dict(zip(axes, vals)) for vals in itertools.product(*axes.values())]
    return [
        ({**spec.get("base", {}), **combo}, " ".join(f"{k}={v}" for k, v in combo.items()) or "base")
        for combo in combos
    ]


def summarize_sweep(
    name: str,
    runs: Sequence[Tuple[str, Path]],
    table: Path,
    figure: Path,
    metric: str = DEFAULT_METRIC,
    paper: Optional[Path] = None,
    paper_key: str = "",
    kind: str = "bars",
):
    """One summary row per run (its label and inference table) to ``table``, with its network
    evaluations and seconds per arrangement; the figure to ``figure`` (a PNG path, with a PDF beside it).

    ``kind`` ``bars``: the metric, a bar a run; with ``paper_key``, the paper's value for that ablation
    (from ``paper``, config/paper_results.yaml) beside each bar.  ``cost``: mean LGM and share on/above
    against evaluations per arrangement, a curve per method (:func:`curve_of`), a column per length.
    Returns the table.
    """
    import pandas as pd

    from moveorder.report.metrics import summarize
    from moveorder.report.plots import ablation_bars, method_curves

    rows, values = [], {}
    for label, path in runs:
        inferred = pd.read_csv(path)
        row = {"run": label, "path": path, "set": inferred["set"].iloc[0], "n": int(inferred["n"].iloc[0])}
        row.update(curve=curve_of(label), **summarize(inferred), **run_cost(path))
        rows.append(row)
        values[label.split("=", 1)[-1] if label.count("=") == 1 else label] = row[metric]
    df = pd.DataFrame(rows)
    df.to_csv(table, index=False)
    if kind == "cost":
        curves = df.rename(columns={"mean_lgm_inferred": "mean_lgm"})
        method_curves(curves, Path(figure).with_suffix(""))
        return df
    reference = None
    if paper_key:
        reference = yaml.safe_load(Path(paper).read_text())["ablations"].get(paper_key)
    ablation_bars(values, Path(figure).with_suffix(""), metric.replace("_", " "), f"sweep {name}", reference)
    return df
