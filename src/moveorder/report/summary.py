"""Summary tables, the side-by-side comparison with the paper, and every figure of a run.

Input: for each set and length, the inference table (``infer-set``) and the
scoring table (``score``), and the network each set was inferred with.
Output: ``summary.csv`` / ``summary.md`` (one row per set and length, naming
the network and dataset; with the cross-level tables of
:mod:`moveorder.report.cross_level` when given), ``paper_comparison.md`` (our
numbers beside the paper's, column by column) and the figures of
:mod:`moveorder.report.plots`, every panel titled with its set, length and network; where the answers
stated how sure they were (infer-set's JSONL beside its table), a section of ``summary.md`` and the
reliability diagrams ``reliability.png`` and ``reliability_moves.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import pandas as pd
import yaml

from moveorder.report import plots
from moveorder.report.calibration import how_sure
from moveorder.report.metrics import better_both_ways, summarize
from moveorder.search.results import load_results

COMPARED = [
    ("share_on_or_above", "share on/above y=x"),
    ("lgm_slope", "LGM slope"),
    ("exact_match_rate", "exact match"),
    ("mean_trial_std", "trial std"),
    ("loss_slope", "loss slope"),
]


def _label(set_name: str, n: int) -> str:
    return f"{set_name}{n}m"


Networks = Union[str, Dict[str, str]]


def network_of(networks: Networks, set_name: str) -> str:
    """The network a set was inferred with: one name for every set, or a set -> name mapping."""
    return networks if isinstance(networks, str) else networks.get(set_name, "")


def networks_line(networks: Networks) -> str:
    """``network X``, or ``networks: pro trained-pro, kgs trained-kgs`` when sets used different ones."""
    if isinstance(networks, str) or len(set(networks.values())) == 1:
        return f"network {networks if isinstance(networks, str) else next(iter(networks.values()))}"
    return "networks: " + ", ".join(f"{s} {n}" for s, n in networks.items())


def build_summary(
    entries: Sequence[Tuple[str, int, pd.DataFrame, pd.DataFrame]], network: Networks, datasets: Dict[str, str]
) -> pd.DataFrame:
    rows = []
    for set_name, n, inferred, scored in entries:
        rows.append(
            {
                "set": set_name,
                "n": n,
                **summarize(inferred, scored),
                "network": network_of(network, set_name),
                "dataset": datasets.get(set_name, set_name),
                "katago": f"{scored['katago_model'].iloc[0]} @ {scored['visits'].iloc[0]} visits"
                if len(scored)
                else "",
            }
        )
    return pd.DataFrame(rows)


def comparison_table(summary: pd.DataFrame, paper: Dict) -> pd.DataFrame:
    rows = []
    for _, r in summary.iterrows():
        counterpart = paper["counterparts"].get(r["set"])
        ref = paper["results"].get(counterpart, {}).get(int(r["n"]), {}) if counterpart else {}
        row = {"set": _label(r["set"], int(r["n"])), "paper set": f"{counterpart}{int(r['n'])}m" if ref else "-"}
        for key, name in COMPARED:
            row[f"{name} (ours)"] = r.get(key)
            row[f"{name} (paper)"] = ref.get(key)
        rows.append(row)
    return pd.DataFrame(rows)


def to_markdown(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """A table as markdown (pandas, through tabulate's pipe format): floats to ``floatfmt``, missing values blank."""
    return (
        df.astype(object)
        .where(df.notna(), None)
        .to_markdown(index=False, tablefmt="pipe", floatfmt=floatfmt, missingval="")
        + "\n"
    )


def make_report(
    entries: Sequence[Tuple[str, int, Path, Path]],
    paper_path: Path,
    out_dir: Path,
    figures_dir: Path,
    network: Networks,
    datasets: Dict[str, str],
    note: str = "",
    examples: int = 3,
    cross_level: Optional[Path] = None,
) -> pd.DataFrame:
    """Write the summary, the paper comparison and every figure; ``network``: one name, or one per set.

    ``cross_level``: the markdown of :mod:`moveorder.report.cross_level`, appended to ``summary.md``.
    """
    loaded = [(s, n, pd.read_csv(i), pd.read_csv(c)) for s, n, i, c in entries]
    paper = yaml.safe_load(Path(paper_path).read_text())
    summary = build_summary(loaded, network, datasets)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out_dir / "summary.csv", index=False)
    extra = "\n" + Path(cross_level).read_text() if cross_level else ""
    header = "; ".join(x for x in (networks_line(network), note) if x)
    sure = how_sure({_label(s, n): (n, _answers(i)) for s, n, i, _ in entries})
    (out_dir / "summary.md").write_text(
        f"# Summary\n\n{header}\n\n"
        + to_markdown(summary.drop(columns=["network", "dataset", "katago"]))
        + "\n"
        + to_markdown(summary[["set", "n", "network", "dataset", "katago"]])
        + how_sure_text(sure)
        + extra
    )
    comp = comparison_table(summary, paper)
    comp.insert(1, "network", [network_of(network, s) for s in summary["set"]])
    comp.to_csv(out_dir / "paper_comparison.csv", index=False)
    (out_dir / "paper_comparison.md").write_text(
        f"# Our numbers beside the paper's\n\nPaper: {paper['source']}; network {paper['network']}.\n"
        f"Ours: {header}.\n\n" + to_markdown(comp)
    )
    figures_dir = Path(figures_dir)
    lik, loss = {}, {}
    for s, n, inf, sc in loaded:
        title = f"{_label(s, n)}, {network_of(network, s)}"
        lik[title] = {"actual": inf["actual_lgm"].tolist(), "inferred": inf["lgm"].tolist()}
        loss[title] = {
            "loss_actual": sc["loss_actual"].tolist(),
            "loss_inferred": sc["loss_inferred"].tolist(),
            "ratio": sc["lgm_ratio"].tolist(),
        }
        plots.likelihood_scatter({title: lik[title]}, figures_dir / f"likelihood_{s}_{n}m", note)
        plots.loss_scatter({title: loss[title]}, figures_dir / f"loss_{s}_{n}m", note)
    plots.likelihood_scatter(lik, figures_dir / "likelihood_all", note)
    plots.loss_scatter(loss, figures_dir / "loss_all", note)
    unstated = "; ".join(f"{k}: {v[1]}" for k, v in list(sure["unstated"].items())[:1])
    plots.reliability_diagram(sure["order_panels"], figures_dir / "reliability", note, empty=unstated)
    plots.reliability_diagram(
        sure["move_panels"], figures_dir / "reliability_moves", note, what="the move's number right", empty=unstated
    )
    write_examples(loaded, figures_dir / "examples", examples, network)
    return summary


def _answers(table: Path) -> List[Dict]:
    """infer-set's rows beside its table (``NAME.jsonl`` beside ``NAME.csv``), each answer's chances
    with them; none where there is no such file."""
    rows = Path(table).with_suffix(".jsonl")
    return load_results(rows) if rows.is_file() else []


def how_sure_text(sure: Dict) -> str:
    """The summary's section on how sure the answers were (:func:`moveorder.report.calibration.how_sure`)."""
    if not len(sure["orders"]) and not sure["unstated"]:
        return ""
    text = "\n## How sure the answers are\n\n"
    if len(sure["orders"]):
        text += (
            "The chance each answer stated that its order is exact, against what happened (ECE: expected "
            "calibration error over 10 bins; AUROC: how well the chances tell the exact answers from the rest; "
            "figure: figures/reliability.png):\n\n"
            + to_markdown(sure["orders"])
            + "\nEach move's chance that its number is right (figures/reliability_moves.png):\n\n"
            + to_markdown(sure["moves"])
        )
    for label, (count, why) in sure["unstated"].items():
        text += f"\n{label}, {count} answer{'s' if count != 1 else ''}: {why}."
    return text + ("\n" if sure["unstated"] else "")


def write_examples(loaded, folder: Path, count: int, network: Networks = "") -> List[Path]:
    """The paper's Fig. 5: arrangements whose inferred sequence beats the actual one on both counts."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    picks = []
    for s, n, inf, sc in loaded:
        merged = sc.merge(inf[["id", "inferred", "actual"]], on="id")
        for _, r in better_both_ways(merged).head(count).iterrows():
            picks.append((r["gain"], s, n, r))
    picks.sort(key=lambda p: -p[0])
    written = []
    for k, (_, s, n, r) in enumerate(picks[:count], start=1):
        split = lambda t: [t[i : i + 2] for i in range(0, len(t), 2)]  # noqa: E731
        written += plots.sequence_pair(
            split(r["inferred"]),
            split(r["actual"]),
            folder / f"example_{k}",
            f"{_label(s, n)}, game {r['id']}" + (f", {network_of(network, s)}" if network_of(network, s) else ""),
            f"LGM {r['lgm']:.3f}, loss {r['loss_inferred']:.3f}",
            f"LGM {r['actual_lgm']:.3f}, loss {r['loss_actual']:.3f}",
        )
    if not written:  # say so in a figure, so the report never shows a missing file
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 1))
        ax.axis("off")
        ax.text(
            0.5,
            0.5,
            "No arrangement had an inferred sequence with both a higher likelihood and a lower loss.",
            ha="center",
            va="center",
            fontsize=9,
        )
        written += plots.save(fig, folder / "example_1")
    return written
