"""The paper's figures with matplotlib (PNG and PDF).

* :func:`likelihood_scatter` (Fig. 3): x = LGM of the actual sequence, y = LGM of the inferred one,
  the line y = x, the zero-intercept regression line with its slope, the share on or above y = x.
* :func:`loss_scatter` (Fig. 4): losses, each point coloured by LGM(inferred) / LGM(actual) on a
  log scale that is white at 1, red above and blue below (:func:`ratio_norm`).
* :func:`sequence_pair` (Fig. 5): a board with numbered stones, inferred left and actual right.
* :func:`method_curves`: search quality against network evaluations, a curve per method.
* :func:`ablation_bars`: one value per variant (trial std for initial solutions, slopes for
  neighbour functions).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import colors  # noqa: E402

from moveorder.go import coords  # noqa: E402
from moveorder.report.metrics import share_on_or_above, slope_through_origin  # noqa: E402

# Blue - white - red with an odd number of entries, so the middle entry (a ratio of 1) is pure white.
RATIO_CMAP = colors.LinearSegmentedColormap.from_list("lgm_ratio", ["#2166ac", "#ffffff", "#b2182b"], N=257)


def ratio_norm(vmax: float = 4.0) -> colors.Normalize:
    """Log scale for likelihood ratios, symmetric around 1 (white): 1/vmax full blue, vmax full red."""
    return colors.LogNorm(vmin=1.0 / vmax, vmax=vmax, clip=True)


def ratio_colour(ratio: float, vmax: float = 4.0):
    """The RGBA colour a ratio gets in the loss figure."""
    return RATIO_CMAP(ratio_norm(vmax)(ratio))


def save(fig, stem: Path) -> List[Path]:
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in paths:
        fig.savefig(p, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return paths


def _diagonal(ax, lo, hi, slope, label_y="y"):
    xs = np.array([lo, hi])
    ax.plot(xs, xs, color="0.5", lw=1, ls="--", label="y = x")
    ax.plot(xs, slope * xs, color="C3", lw=1.2, label=f"{label_y} = {slope:.3f} x")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")


def likelihood_axes(ax, actual: Sequence[float], inferred: Sequence[float], title: str) -> None:
    slope = slope_through_origin(actual, inferred)
    share = share_on_or_above(actual, inferred)
    hi = max(max(actual), max(inferred)) * 1.05
    ax.scatter(actual, inferred, s=12, color="C0", alpha=0.8, edgecolor="none")
    _diagonal(ax, 0, hi, slope)
    ax.set_xlabel("LGM of the actual sequence")
    ax.set_ylabel("LGM of the inferred sequence")
    ax.set_title(f"{title}\n{share:.0%} on or above y = x", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)


def loss_axes(ax, loss_actual, loss_inferred, ratio, title: str, vmax: float = 4.0):
    slope = slope_through_origin(loss_actual, loss_inferred)
    lo = min(0.0, min(loss_actual), min(loss_inferred))
    hi = max(max(loss_actual), max(loss_inferred)) * 1.05
    order = np.argsort(np.abs(np.log(np.asarray(ratio))))  # strongest colours on top
    sc = ax.scatter(
        np.asarray(loss_actual)[order],
        np.asarray(loss_inferred)[order],
        c=np.asarray(ratio)[order],
        cmap=RATIO_CMAP,
        norm=ratio_norm(vmax),
        s=16,
        edgecolor="0.3",
        linewidth=0.3,
    )
    _diagonal(ax, lo, hi, slope)
    ax.set_xlabel("loss of the actual sequence (points)")
    ax.set_ylabel("loss of the inferred sequence (points)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    return sc


def likelihood_scatter(panels: Dict[str, Dict[str, Sequence[float]]], stem: Path, note: str = "") -> List[Path]:
    """One panel per set and length: ``panels[title] = {"actual": [...], "inferred": [...]}``."""
    k = len(panels)
    fig, axes = plt.subplots(1, k, figsize=(3.6 * k, 3.9), squeeze=False)
    for ax, (title, d) in zip(axes[0], panels.items()):
        likelihood_axes(ax, d["actual"], d["inferred"], title)
    if note:
        fig.text(0.01, -0.02, note, fontsize=7, color="0.3")
    fig.tight_layout()
    return save(fig, stem)


def loss_scatter(
    panels: Dict[str, Dict[str, Sequence[float]]], stem: Path, note: str = "", vmax: float = 4.0
) -> List[Path]:
    """``panels[title] = {"loss_actual", "loss_inferred", "ratio"}``; a shared colour bar."""
    k = len(panels)
    fig, axes = plt.subplots(1, k, figsize=(3.6 * k + 0.8, 3.9), squeeze=False)
    sc = None
    for ax, (title, d) in zip(axes[0], panels.items()):
        sc = loss_axes(ax, d["loss_actual"], d["loss_inferred"], d["ratio"], title, vmax)
    fig.tight_layout()
    cbar = fig.colorbar(sc, ax=list(axes[0]), shrink=0.85, pad=0.02)
    ticks = [t for t in (1 / 4, 1 / 2, 1, 2, 4, 8) if 1 / vmax <= t <= vmax]
    cbar.set_ticks(ticks)
    cbar.set_ticklabels([f"{t:g}" for t in ticks])
    cbar.minorticks_off()
    cbar.set_label("LGM(inferred) / LGM(actual)")
    if note:
        fig.text(0.01, -0.02, note, fontsize=7, color="0.3")
    return save(fig, stem)


def _board(ax, moves: Sequence[str], title: str, subtitle: str):
    ax.set_facecolor("#dcb35c")
    last = coords.SIZE - 1
    for k in range(coords.SIZE):
        ax.plot([0, last], [k, k], color="k", lw=0.5, zorder=1)
        ax.plot([k, k], [0, last], color="k", lw=0.5, zorder=1)
    for r, c in [(3, 3), (3, 9), (3, 15), (9, 3), (9, 9), (9, 15), (15, 3), (15, 9), (15, 15)]:
        ax.plot(*coords.to_cartesian((r, c)), "k.", ms=4, zorder=1)
    for i, m in enumerate(moves):
        x, y = coords.to_cartesian(coords.from_sgf(m))
        black = i % 2 == 0
        ax.add_patch(plt.Circle((x, y), 0.47, facecolor="k" if black else "w", edgecolor="k", lw=0.6, zorder=2))
        ax.text(
            x,
            y,
            str(i + 1),
            ha="center",
            va="center",
            fontsize=6 if i < 99 else 5,
            color="w" if black else "k",
            zorder=3,
        )
    ax.set_xticks(range(coords.SIZE))
    ax.set_xticklabels(list(coords.GTP_COLUMNS[: coords.SIZE]), fontsize=5)
    ax.set_yticks(range(coords.SIZE))
    ax.set_yticklabels([str(k + 1) for k in range(coords.SIZE)], fontsize=5)
    ax.set_xlim(-0.7, last + 0.7)
    ax.set_ylim(-0.7, last + 0.7)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(subtitle, fontsize=8)


def sequence_pair(
    inferred: Sequence[str], actual: Sequence[str], stem: Path, title: str, inferred_note: str, actual_note: str
) -> List[Path]:
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.9))
    _board(axes[0], inferred, "inferred", inferred_note)
    _board(axes[1], actual, "actual", actual_note)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save(fig, stem)


def ablation_bars(
    values: Dict[str, float], stem: Path, ylabel: str, title: str, paper: Optional[Dict[str, float]] = None
) -> List[Path]:
    names = list(values)
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2, 3.4))
    x = np.arange(len(names))
    w = 0.38 if paper else 0.6
    ax.bar(x - (w / 2 if paper else 0), [values[n] for n in names], w, label="this run", color="C0")
    if paper:
        ax.bar(x + w / 2, [paper.get(n, np.nan) for n in names], w, label="paper", color="0.6")
        ax.legend(fontsize=8)
    ax.set_xticks(x)
    ax.set_xticklabels(names)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return save(fig, stem)


def method_curves(df, stem: Path) -> List[Path]:
    """Search quality against its cost: mean LGM (top) and share on/above y = x (bottom)
    against network evaluations per arrangement (log scale), a column per sequence length.

    ``df``: one row per run, with ``n``, ``curve`` (the method: the points of one curve differ in
    budget only), ``evaluations``, ``mean_lgm``, ``share_on_or_above``, ``mean_lgm_actual`` and
    optionally ``set`` (each set its own line style).  The actual sequences' mean LGM is the dashed
    grey line of each set.
    """
    df = df.assign(set=df["set"].fillna("") if "set" in df else "")
    lengths, sets, curves = sorted(df["n"].unique()), sorted(df["set"].unique()), list(dict.fromkeys(df["curve"]))
    styles = dict(zip(sets, ["-", "--", ":", "-."] * 2))
    markers = dict(zip(curves, "osD^vP*X" * 2))
    fig, axes = plt.subplots(2, len(lengths), figsize=(5.2 * len(lengths), 7), squeeze=False, sharex="col")
    for j, n in enumerate(lengths):
        top, bottom = axes[0, j], axes[1, j]
        for (s, c), part in df[df["n"] == n].groupby(["set", "curve"], sort=False):
            part = part.sort_values("evaluations")
            label = f"{c} ({s})" if len(sets) > 1 else c
            kw = dict(ls=styles[s], marker=markers[c], color=f"C{curves.index(c) % 10}", ms=4, label=label)
            top.plot(part["evaluations"], part["mean_lgm"], **kw)
            bottom.plot(part["evaluations"], 100 * part["share_on_or_above"], **kw)
        for s, part in df[df["n"] == n].groupby("set"):
            top.axhline(part["mean_lgm_actual"].iloc[0], color="0.5", lw=0.8, ls=styles[s])
        top.set_title(f"{n} moves (grey: actual sequences)", fontsize=10)
        top.set_ylabel("mean LGM")
        bottom.set_ylabel("% on or above the actual sequence")
        bottom.set_xlabel("network evaluations per arrangement")
        bottom.set_ylim(-2, 102)
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.grid(alpha=0.3)
    handles = {h.get_label(): h for ax in axes.flat for h in ax.get_lines() if not h.get_label().startswith("_")}
    fig.legend(handles.values(), handles.keys(), fontsize=7, loc="lower center", ncol=min(4, len(handles)))
    fig.tight_layout(rect=(0, 0.04 * (1 + (len(handles) - 1) // 4), 1, 1))
    return save(fig, stem)


def reliability_axes(ax, chance: Sequence[float], truth: Sequence[bool], title: str, what: str = "exact") -> None:
    """A reliability diagram: per bin of stated chance (:func:`moveorder.report.metrics.reliability`),
    the share that happened against the bin's mean stated chance, each point labelled with its count
    (a Text with gid ``count-BIN``); the diagonal is a perfect calibration."""
    from moveorder.report.metrics import auroc, expected_calibration_error, reliability

    table = reliability(chance, truth)
    used = table[table["count"] > 0]
    ax.plot([0, 1], [0, 1], color="0.5", lw=1, ls="--", label="stated = observed")
    ax.plot(used["stated"], used["observed"], "o-", color="C0", ms=4, lw=1.2)
    for b, r in used.iterrows():
        t = ax.annotate(
            str(int(r["count"])),
            (r["stated"], r["observed"]),
            textcoords="offset points",
            xytext=(0, 6),
            ha="center",
            fontsize=7,
            color="C0",
        )
        t.set_gid(f"count-{b}")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.05)
    ax.set_aspect("equal")
    ax.set_xlabel("stated chance")
    ax.set_ylabel(f"observed: {what}")
    ece = expected_calibration_error(chance, truth)
    area = auroc(chance, truth)
    ax.set_title(f"{title}\nN {len(chance)}, ECE {ece:.3f}, AUROC {area:.3f}", fontsize=9)
    ax.grid(alpha=0.3)


def reliability_diagram(
    panels: Dict[str, Dict[str, Sequence]], stem: Path, note: str = "", what: str = "exact", empty: str = ""
) -> List[Path]:
    """One reliability diagram per panel, four a row: ``panels[title] = {"chance": [...], "truth": [...]}``;
    without panels, a figure saying that no answer stated a chance, and ``empty`` (why) under it."""
    k = len(panels)
    if not k:
        fig, ax = plt.subplots(figsize=(6, 1.6))
        ax.axis("off")
        ax.text(0.5, 0.6, "No answer stated a chance.", ha="center", va="center", fontsize=11, gid="no-chance")
        ax.text(0.5, 0.2, textwrap.fill(empty, 90), ha="center", va="center", fontsize=7, color="0.3")
        return save(fig, stem)
    cols = min(k, 4)
    rows = -(-k // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 3.7 * rows), squeeze=False)
    for ax, (title, d) in zip(axes.flat, panels.items()):
        reliability_axes(ax, d["chance"], d["truth"], title, what)
    for ax in list(axes.flat)[k:]:
        ax.axis("off")
    if note:
        fig.text(0.01, -0.02, note, fontsize=7, color="0.3")
    fig.tight_layout()
    return save(fig, stem)
