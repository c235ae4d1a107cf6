"""Held-out top-1 against training wall time, one finished training run a point.

    python bench/top1_vs_time.py --runs docs/figures/top1_vs_time.csv --out docs/figures/top1_vs_time.png

``--runs``: a CSV of measured runs, one a row: ``run`` (a label), ``device``, ``shape`` (e.g. 4x32),
``steps``, ``batch``, ``minutes`` (forward, backward and update: the training itself, without reading
or replaying the pool; a fine-tuned network counts its pre-training too) and the held-out top-1 on
each set's held-out games (``pro``, ``kgs``, ``tygem``; empty where not measured; in percent), with
``source`` naming where each row's figures come from.  Draws one panel per set (log time axis),
one marker per device (each run labelled on the first panel), and prints the table as markdown.
"""

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

SETS = ("pro", "kgs", "tygem")
MARKERS = {"cpu": "o", "gpu": "s"}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", required=True, help="CSV of measured runs (see the module docstring)")
    p.add_argument("--out", required=True, help="the figure (.png or .pdf)")
    a = p.parse_args(argv)
    runs = pd.read_csv(a.runs)
    missing = {"run", "device", "shape", "steps", "batch", "minutes", *SETS} - set(runs.columns)
    if missing:
        raise SystemExit(f"{a.runs}: no column {', '.join(sorted(missing))}")
    fig, axes = plt.subplots(1, len(SETS), figsize=(4.2 * len(SETS), 3.8), sharey=True)
    for ax, level in zip(axes, SETS):
        for _, r in runs.dropna(subset=[level]).iterrows():
            kind = "gpu" if str(r.device).lower().startswith(("nvidia", "gpu", "cuda")) else "cpu"
            ax.scatter(r.minutes, r[level], marker=MARKERS[kind], s=45, color="C1" if kind == "gpu" else "C0")
            if level != SETS[0]:  # labels on the first panel only: the points of a run sit alike in each
                continue
            label = r["run"] if str(r["shape"]) in str(r["run"]) else f"{r['shape']} {r['run']}"
            ax.annotate(
                label,
                (r.minutes, r[level]),
                fontsize=7,
                xytext=(4, -3),
                textcoords="offset points",
            )
        ax.set_xscale("log")
        ax.set_title(f"{level} held-out games")
        ax.set_xlabel("training wall time (minutes, log)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("top-1 of the played move (%)")
    handles = [
        plt.Line2D([], [], marker=m, ls="", color="C1" if k == "gpu" else "C0", label=k.upper())
        for k, m in MARKERS.items()
    ]
    axes[-1].legend(handles=handles, loc="lower right")
    fig.tight_layout()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=130)
    print(runs.astype(object).where(runs.notna(), "").to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
