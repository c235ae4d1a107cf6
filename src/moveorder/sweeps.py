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


def load_sweep(path: Path) -> Dict:
    """A sweep file, checked: ValueError naming the file and any axis it may not vary."""
    spec = yaml.safe_load(Path(path).read_text())
    unknown = set(spec.get("axes", {})) - set(AXES)
    if unknown:
        raise ValueError(f"{path}: unknown sweep axes {sorted(unknown)}; known: {AXES}")
    return spec


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
):
    """One summary row per run (its label and inference table) to ``table``; the metric as bars to ``figure``.

    ``figure``: a PNG path, with a PDF beside it.  With ``paper_key``, the
    paper's value for that ablation (from ``paper``, config/paper_results.yaml)
    is drawn beside each bar.  Returns the table.
    """
    import pandas as pd

    from .metrics import summarize
    from .plots import ablation_bars

    rows, values = [], {}
    for label, path in runs:
        row = {"run": label, "path": path, **summarize(pd.read_csv(path))}
        rows.append(row)
        values[label.split("=", 1)[-1] if label.count("=") == 1 else label] = row[metric]
    df = pd.DataFrame(rows)
    df.to_csv(table, index=False)
    reference = None
    if paper_key:
        reference = yaml.safe_load(Path(paper).read_text())["ablations"].get(paper_key)
    ablation_bars(values, Path(figure).with_suffix(""), metric.replace("_", " "), f"sweep {name}", reference)
    return df
