"""What KataGo's judgment could buy by re-ranking the orders the search keeps: the likeliest order
against the one of the ``--keep`` likeliest that KataGo judges best (an upper bound on any re-ranking
of them, the judge being the yardstick) and against a blend of the two.

    python bench/rerank.py --arrangements ARRS.jsonl --out-dir OUT [--network tygem] [--width 128]
        [--orientations seats] [--patience 2] [--keep 16] [--games 10] [--visits 2] [--threads 2]
        [--weights 0.05 0.1 0.2 0.5]

1. ``moveorder``'s search (the ranked beam; the capture search where there are captures) orders each
   arrangement, keeping its ``--keep`` likeliest distinct orders, one infer-set-like row an order
   (``OUT/orders.jsonl``; ids ``ID-RANK``, rank 0 the likeliest);
2. ``moveorder score`` (the real KataGo, tools/katago from scripts/setup.sh) gives each order's loss
   (``OUT/scores.csv``; its analyses cached in ``OUT/analyses.jsonl``, so a rerun resumes);
3. per arrangement, the order chosen by the likelihood, by the smallest loss, and by
   ``log-likelihood / moves - weight x loss``: mean loss a move, prefix, on or above the players'
   likelihood.
"""

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import torch

from moveorder.data.arrangements import load_arrangements
from moveorder.go import coords
from moveorder.nets import shipped
from moveorder.nets.likelihood import evaluator_from_file
from moveorder.search.dispatch import run, turns
from moveorder.search.inference import _actual_log_likelihoods
from moveorder.search.problem import problem_of_arrangement
from moveorder.search.results import matching_prefix
from moveorder.settings import SearchConfig

KATAGO = Path(__file__).resolve().parents[1] / "tools/katago"


def orders(args, out: Path) -> None:
    """Step 1: each arrangement's kept orders, a row each."""
    torch.set_num_threads(args.threads)
    arrs = load_arrangements(Path(args.arrangements))[: args.games]
    ev = evaluator_from_file(shipped.require(args.network), device="cpu", precision="float32")
    cfg = SearchConfig(method="beam", beam_width=args.width, patience=args.patience, orientations=args.orientations)
    with out.open("w") as f:
        for a in arrs:
            start = time.perf_counter()
            (found,) = run(ev, [problem_of_arrangement(a)], cfg, keep=args.keep)
            (actual_ll,) = _actual_log_likelihoods(ev, [a], turns(cfg))
            for rank, (moves, ll) in enumerate(found.orders):
                inferred = coords.lz_to_sgf(moves)
                row = {"id": f"{a.id}-{rank}", "set": a.set, "n": a.n, "inferred": inferred, "actual": a.actual}
                row |= {"log_likelihood": ll, "lgm": math.exp(ll / a.n), "actual_log_likelihood": actual_ll}
                row |= {"actual_lgm": math.exp(actual_ll / a.n), "exact_match": inferred == a.actual}
                row |= {"matching_prefix": matching_prefix(inferred, a.actual), "komi": a.komi, "rank": rank}
                f.write(json.dumps(row) + "\n")
            print(f"{a.id}: {len(found.orders)} orders in {time.perf_counter() - start:.1f} s", file=sys.stderr)


def score(args, rows: Path, table: Path) -> None:
    """Step 2: ``moveorder score`` on every order."""
    out = Path(args.out_dir)
    cmd = ["moveorder", "score", "--results", str(rows), "--katago", str(KATAGO / "bin/katago")]
    cmd += ["--model", str(KATAGO / "models/g170-b6c96-s175395328-d26788732.bin.gz")]
    cmd += ["--tuner", str(KATAGO / "opencl-tune.txt"), "--visits", str(args.visits), "--threads", str(args.threads)]
    cmd += ["--cache", str(out / "analyses.jsonl"), "--work-dir", str(out / "katago"), "--table", str(table)]
    cmd += ["--moves-table", str(out / "moves.csv"), "--quiet"]
    subprocess.run(cmd, check=True)


def choices(args, rows: Path, table: Path) -> None:
    """Step 3: the orders each rule chooses."""
    import pandas as pd

    kept = pd.DataFrame([json.loads(line) for line in rows.open()])
    losses = pd.read_csv(table)[["id", "loss_inferred", "loss_actual"]]
    d = kept.merge(losses, on="id")
    d["position"] = d["id"].str.rsplit("-", n=1).str[0]
    rules = {"likelihood (rank 0)": d[d["rank"] == 0]}
    rules[f"smallest loss of {args.keep} (the judge itself)"] = d.loc[d.groupby("position").loss_inferred.idxmin()]
    for w in args.weights:
        blend = d.log_likelihood / d.n - w * d.loss_inferred
        rules[f"blend, weight {w}"] = d.loc[blend.groupby(d.position).idxmax()]
    print(
        f"{d.position.nunique()} positions, {len(d)} orders; the players' loss {rules['likelihood (rank 0)'].loss_actual.mean():.2f} a move"
    )
    print("| chosen by | loss a move | prefix | on/above | mean rank |")
    print("|---|---|---|---|---|")
    for name, c in rules.items():
        above = int((c.log_likelihood >= c.actual_log_likelihood - 1e-9).sum())
        print(
            f"| {name} | {c.loss_inferred.mean():.2f} | {c.matching_prefix.mean():.1f} | {above} | {c['rank'].mean():.1f} |"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arrangements", required=True, help="an arrangements JSONL (moveorder arrange)")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--network", default="tygem")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--orientations", default="seats")
    p.add_argument("--patience", type=int, default=2)
    p.add_argument("--keep", type=int, default=16)
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--visits", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--weights", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.5])
    args = p.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, table = out / "orders.jsonl", out / "scores.csv"
    orders(args, rows)
    score(args, rows, table)
    choices(args, rows, table)


if __name__ == "__main__":
    main()
