"""The figures' and tables' verbs: report, sweep-summary."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from moveorder.cli.common import verb, whole
from moveorder.report.sweeps import FIGURES

log = logging.getLogger("moveorder")


def _report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--entry",
        nargs=4,
        action="append",
        required=True,
        metavar=("SET", "N", "INFERRED_CSV", "SCORED_CSV"),
        help="one set and length: its inference table and its scored table (repeat for each)",
    )
    parser.add_argument("--paper", required=True, help="the paper's published numbers (config/paper_results.yaml)")
    parser.add_argument("--out-dir", required=True, help="summary.csv/.md, paper_comparison.csv/.md")
    parser.add_argument("--figures", required=True, help="folder for the figures")
    parser.add_argument("--network", default="", help="the network every set was inferred with; default: none")
    parser.add_argument(
        "--set-network",
        nargs="*",
        default=[],
        help="SET=NETWORK pairs: the network each set was inferred with (instead of --network); default: none",
    )
    parser.add_argument(
        "--cross-level", default="", help="markdown of cross-level to append to summary.md; default: none"
    )
    parser.add_argument("--dataset", nargs="*", default=[], help="SET=description pairs for the tables; default: none")
    parser.add_argument(
        "--note", default="", help="a line naming the configuration, printed under figures; default: none"
    )
    whole(parser, "--examples", 0, 3, "example sequences drawn per set")


@verb("report", "summary tables, the paper comparison and every figure of a run", _report_options)
def cmd_report(args: argparse.Namespace) -> int:
    from moveorder.report.summary import make_report

    entries = [(s, int(n), Path(i), Path(c)) for s, n, i, c in args.entry]
    datasets = dict(kv.split("=", 1) for kv in args.dataset)
    network = dict(kv.split("=", 1) for kv in args.set_network) if args.set_network else args.network
    make_report(
        entries,
        Path(args.paper),
        Path(args.out_dir),
        Path(args.figures),
        network,
        datasets,
        args.note,
        args.examples,
        Path(args.cross_level) if args.cross_level else None,
    )
    return 0


def _sweep_summary_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", required=True, help="the sweep's name")
    parser.add_argument(
        "--run",
        nargs=2,
        action="append",
        required=True,
        metavar=("LABEL", "INFERRED_CSV"),
        help="one run of the sweep: its label (AXIS=VALUE) and its inference table (repeat)",
    )
    parser.add_argument("--metric", default="lgm_slope", help="the summary column the figure shows")
    parser.add_argument("--paper", default="", help="the paper's numbers (config/paper_results.yaml); default: none")
    parser.add_argument("--paper-key", default="", help="the ablation's key in --paper; default: none")
    parser.add_argument("--table", required=True, help="CSV: one row per run")
    parser.add_argument("--figure", required=True, help="PNG path (a PDF is written beside it)")
    parser.add_argument(
        "--figure-kind", choices=FIGURES, default="bars", help="bars: the metric; cost: quality per evaluation"
    )


@verb("sweep-summary", "aggregate the runs of a sweep into a table and an ablation figure", _sweep_summary_options)
def cmd_sweep_summary(args: argparse.Namespace) -> int:
    from moveorder.report.sweeps import summarize_sweep

    summarize_sweep(
        args.name,
        [(label, Path(path)) for label, path in args.run],
        Path(args.table),
        Path(args.figure),
        args.metric,
        Path(args.paper) if args.paper else None,
        args.paper_key,
        args.figure_kind,
    )
    return 0
