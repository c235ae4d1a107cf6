"""What KataGo's judgment could buy by re-ranking the orders the search keeps: the likeliest order
against the one of the ``--keep`` likeliest that KataGo judges best (an upper bound on any re-ranking
of them, the judge being the yardstick) and against a blend of the two.

    python bench/rerank.py --arrangements ARRS.jsonl --out-dir OUT [--network tygem] [--width 128]
        [--orientations seats] [--patience 2] [--keep 16] [--games 10] [--visits 2] [--threads 2]
        [--weights 0.05 0.1 0.2 0.5]
    python bench/rerank.py --arrangements ARRS.jsonl --out-dir OUT --tool [--patience 0]

``--tool``: the one-position tool's own search (``tygem-6x128``, the ``fast`` preset, as ``moveorder
infer`` runs it, through :func:`moveorder.search.dispatch.run`), with ``--patience``; ``--network``,
``--width`` and ``--orientations`` are then unused.

1. ``moveorder``'s search (the ranked beam; the capture search where there are captures) orders each
   arrangement, keeping its ``--keep`` likeliest distinct orders, one infer-set-like row an order
   (``OUT/orders.jsonl``; ids ``ID-RANK``, rank 0 the likeliest);
2. ``moveorder score`` (the real KataGo, tools/katago from scripts/setup.sh) gives each order's loss
   (``OUT/scores.csv``; its analyses cached in ``OUT/analyses.jsonl``, so a rerun resumes);
3. per arrangement, the order chosen by the likelihood, by the smallest loss, and by
   ``log-likelihood / moves - weight x loss``: mean loss a move, prefix, on or above the players'
   likelihood;
4. with ``--check-visits V``: the orders chosen (and the players') judged again by KataGo at ``V``
   visits (``OUT/check-scores.csv``), so that the loss of a choice is not read off the very figures
   that made it (the smallest of 16 noisy losses tends to lie below its order's own).

``OUT/orders.jsonl`` already there is read back, not searched again.
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
from moveorder.settings import SearchConfig, quality_config

KATAGO = Path(__file__).resolve().parents[1] / "tools/katago"


def orders(args, out: Path) -> None:
    """Step 1: each arrangement's kept orders, a row each."""
    torch.set_num_threads(args.threads)
    arrs = load_arrangements(Path(args.arrangements))[: args.games]
    network = "tygem-6x128" if args.tool else args.network
    ev = evaluator_from_file(shipped.require(network), device="cpu", precision="float32")
    if args.tool:
        cfg = quality_config("fast", {"patience": args.patience})
    else:
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


def score(args, rows: Path, table: Path, visits: int = 0, name: str = "") -> None:
    """Step 2: ``moveorder score`` on every order of ``rows`` (at ``visits``, else ``--visits``; its
    files named with ``name``)."""
    out = Path(args.out_dir)
    cmd = ["moveorder", "score", "--results", str(rows), "--katago", str(KATAGO / "bin/katago")]
    cmd += ["--model", str(KATAGO / "models/g170-b6c96-s175395328-d26788732.bin.gz")]
    cmd += ["--tuner", str(KATAGO / "opencl-tune.txt"), "--visits", str(visits or args.visits)]
    cmd += ["--threads", str(args.threads), "--cache", str(out / f"{name}analyses.jsonl")]
    cmd += ["--work-dir", str(out / f"{name}katago"), "--table", str(table)]
    cmd += ["--moves-table", str(out / f"{name}moves.csv"), "--quiet"]
    subprocess.run(cmd, check=True)


def choices(args, rows: Path, table: Path) -> None:
    """Step 3: the orders each rule chooses; with ``--check-visits``, their loss judged again by a
    KataGo of that many visits, apart from the one that chose them."""
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
    check = None
    if args.check_visits:
        chosen = set(pd.concat(rules.values())["id"])
        check_rows, check_table = Path(args.out_dir) / "chosen.jsonl", Path(args.out_dir) / "check-scores.csv"
        with check_rows.open("w") as f:
            for line in rows.open():
                if json.loads(line)["id"] in chosen:
                    f.write(line)
        score(args, check_rows, check_table, visits=args.check_visits, name="check-")
        check = pd.read_csv(check_table).set_index("id")
    answers = rules["likelihood (rank 0)"]  # the search's own choices; their rows carry the players' loss
    print(
        f"{d.position.nunique()} positions, {len(d)} orders; the players' loss {answers.loss_actual.mean():.2f} a move"
    )
    if check is not None:
        print(
            f"judged again at {args.check_visits} visits: the players' {check.loc[answers.id].loss_actual.mean():.2f}"
        )
    print(
        f"| chosen by | loss a move | prefix | on/above | mean rank |{' loss judged again |' if check is not None else ''}"
    )
    print(f"|---|---|---|---|---|{'---|' if check is not None else ''}")
    for name, c in rules.items():
        above = int((c.log_likelihood >= c.actual_log_likelihood - 1e-9).sum())
        again = f" {check.loc[c.id].loss_inferred.mean():.2f} |" if check is not None else ""
        print(
            f"| {name} | {c.loss_inferred.mean():.2f} | {c.matching_prefix.mean():.1f} | {above} | {c['rank'].mean():.1f} |{again}"
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
    p.add_argument("--tool", action="store_true", help="the one-position tool's search (tygem-6x128, --quality fast)")
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--visits", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--weights", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.5])
    p.add_argument("--check-visits", type=int, default=0, help="judge the chosen orders again at this many visits")
    args = p.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, table = out / "orders.jsonl", out / "scores.csv"
    if not rows.exists():
        orders(args, rows)
    score(args, rows, table)
    choices(args, rows, table)


if __name__ == "__main__":
    main()
