"""What the hill climb over capture-legal orders (:mod:`moveorder.search.polish`) adds to the one-position
tool's search on positions with captures: each arrangement ordered by the tool's search (``tygem-6x128``,
the ``fast`` preset, through :func:`moveorder.search.dispatch.run`, its order cached in
``OUT/orders.jsonl`` so that a rerun polishes again without searching again), then climbed from in the
orientation the search found it in, for each ``--reach``.

    python bench/polish.py --arrangements ARRS.jsonl --out-dir OUT [--games 10] [--reach 1 2 3]
        [--budget N] [--threads 2]

Prints, per arrangement and reach: the players' log-likelihood (the likeliest of the orientations
searched, as the search scores its orders), the search's, the climb's, the changes it applied, its
network evaluations and seconds; then each reach's share on or above the players' before and after,
mean gain and seconds.  ``OUT/polish.csv`` holds the rows.
"""

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

import torch

from moveorder.data.arrangements import load_arrangements
from moveorder.go import coords
from moveorder.nets import shipped
from moveorder.nets.likelihood import evaluator_from_file
from moveorder.nets.networks import turn_points
from moveorder.search.boards import sequence_log_probs
from moveorder.search.dispatch import run, turned, turns
from moveorder.search.inference import _actual_log_likelihoods
from moveorder.search.polish import polish
from moveorder.search.problem import problem_of_arrangement
from moveorder.settings import quality_config


def searched(args, arrs, ev, cfg, out: Path) -> dict:
    """Each arrangement's tool order and the players' log-likelihood, searched once and cached."""
    path = out / "orders.jsonl"
    rows = {}
    if path.exists():
        rows = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
    with path.open("a") as f:
        for a in arrs:
            if a.id in rows:
                continue
            t0 = time.perf_counter()
            (found,) = run(ev, [problem_of_arrangement(a)], cfg)
            seconds = time.perf_counter() - t0
            (actual,) = _actual_log_likelihoods(ev, [a], turns(cfg))
            moves, ll = found.orders[0] if found.orders else (None, None)
            row = {"id": a.id, "moves": moves, "ll": ll, "actual_ll": actual, "seconds": seconds}
            f.write(json.dumps(row) + "\n")
            f.flush()
            rows[a.id] = row
            print(f"{a.id}: searched in {seconds:.1f} s", file=sys.stderr)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arrangements", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--reach", type=int, nargs="+", default=[1, 2])
    p.add_argument("--budget", type=int, default=None)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrs = load_arrangements(Path(args.arrangements))[: args.games]
    ev = evaluator_from_file(shipped.require("tygem-6x128"), device="cpu", precision="float32")
    cfg = quality_config("fast", {})
    rows = searched(args, arrs, ev, cfg, out)
    table = []
    for a in arrs:
        r = rows[a.id]
        if r["moves"] is None:
            print(f"{a.id}: no order found", file=sys.stderr)
            continue
        problem = problem_of_arrangement(a)
        # the orientation the search found it in: where its log-likelihood is the search's
        sym = turns(cfg)
        lls = [float(sequence_log_probs(ev.likelihood, turn_points(r["moves"], s)).sum()) for s in sym]
        s = sym[min(range(len(sym)), key=lambda k: abs(lls[k] - r["ll"]))]
        for reach in args.reach:
            t0 = time.perf_counter()
            got = polish(ev.likelihood, turned(problem, s), turn_points(r["moves"], s), reach, args.budget)
            seconds = time.perf_counter() - t0
            back = turn_points(got.moves, s, back=True)
            row = {
                "id": a.id,
                "reach": reach,
                "actual_ll": r["actual_ll"],
                "search_ll": r["ll"],
                "polished_ll": got.ll,
                "applied": got.applied,
                "rounds": len(got.lls) - 1,
                "scored": got.scored,
                "evaluations": got.evaluations,
                "search_seconds": r["seconds"],
                "polish_seconds": seconds,
                "exact_before": coords.lz_to_sgf(r["moves"]) == a.actual,
                "exact_after": coords.lz_to_sgf(back) == a.actual,
            }
            table.append(row)
            print(
                f"{a.id} reach {reach}: players {r['actual_ll']:.2f} search {r['ll']:.2f} -> {got.ll:.2f} "
                f"({got.applied} changes, {len(got.lls) - 1} rounds, {got.evaluations} evaluations, {seconds:.1f} s)"
            )
    with (out / "polish.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    for reach in args.reach:
        rs = [r for r in table if r["reach"] == reach]
        before = sum(r["search_ll"] >= r["actual_ll"] - 1e-9 for r in rs)
        after = sum(r["polished_ll"] >= r["actual_ll"] - 1e-9 for r in rs)
        gain = sum(r["polished_ll"] - r["search_ll"] for r in rs) / len(rs)
        secs = sum(r["polish_seconds"] for r in rs) / len(rs)
        evals = sum(r["evaluations"] for r in rs) / len(rs)
        n = rs[0]["actual_ll"] and len(rs)
        print(
            f"reach {reach}: on/above {before} -> {after} of {n}; mean gain {gain:.2f} nats "
            f"({math.exp(gain / arrs[0].n):.4f} x LGM); {evals:.0f} evaluations, {secs:.1f} s a position"
        )


if __name__ == "__main__":
    main()
