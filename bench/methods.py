"""Search methods side by side: mean LGM, share on/above the actual sequence, exact matches, network
evaluations per arrangement and wall time, all on the same arrangements in one run.

    python bench/methods.py --network results/networks/trained-pro/model.pt \
        --arrangements data/arrangements/pro/20m.jsonl [--games 10] \
        --run anneal:300x3 --run beam:32 --run beam:128 --run beam+anneal:32:300x3:0.3

A run is ``anneal:ITERATIONSxTRIALS``, ``beam:WIDTH`` or ``beam+anneal:WIDTH:ITERATIONSxTRIALS:T_START``.
"""

import argparse
import math
import time

import numpy as np
import torch

from moveorder import annealing as sa
from moveorder.arrangements import load_arrangements
from moveorder.coords import sgf_to_lz
from moveorder.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.networks import load_policy


def parse_run(text):
    parts = text.split(":")
    if parts[0] == "anneal":
        it, tr = map(int, parts[1].split("x"))
        return sa.AnnealConfig(iterations=it, trials=tr, seed=1)
    if parts[0] == "beam":
        return sa.AnnealConfig(method="beam", beam_width=int(parts[1]))
    if parts[0] == "beam+anneal":
        it, tr = map(int, parts[2].split("x"))
        return sa.AnnealConfig(
            method="beam+anneal", beam_width=int(parts[1]), iterations=it, trials=tr, t_start=float(parts[3]), seed=1
        )
    raise SystemExit(f"unknown run {text!r}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--network", required=True)
    p.add_argument("--arrangements", required=True)
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--run", action="append", required=True)
    a = p.parse_args()
    net = load_policy(a.network)
    arrs = load_arrangements(a.arrangements)[: a.games]
    pairs = [(sgf_to_lz(x.black), sgf_to_lz(x.white)) for x in arrs]
    n = arrs[0].n
    ev0 = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
    actual = ev0.sequence_log_probs(torch.tensor([sgf_to_lz(x.actual) for x in arrs])).sum(1).tolist()
    print(
        f"{a.network}, {len(arrs)} arrangements of {n} moves ({a.arrangements}); torch threads "
        f"{torch.get_num_threads()}; actual sequences: mean LGM {np.mean([math.exp(x / n) for x in actual]):.4f}"
    )
    print("| run | mean LGM | on/above actual | exact matches | evaluations / arrangement | wall s |")
    print("|---|---|---|---|---|---|")
    for spec in a.run:
        cfg = parse_run(spec)
        ev = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
        t0 = time.perf_counter()
        res = sa.anneal(ev, pairs, cfg)
        wall = time.perf_counter() - t0
        best = [max(r, key=lambda t: t.best_log_likelihood) for r in res]
        lgms = [math.exp(b.best_log_likelihood / n) for b in best]
        above = np.mean([b.best_log_likelihood >= x - 1e-9 for b, x in zip(best, actual)])
        exact = sum(b.best == sgf_to_lz(x.actual) for b, x in zip(best, arrs))
        print(
            f"| {spec} | {np.mean(lgms):.4f} | {above:.0%} | {exact} | {ev.evaluations / len(arrs):,.0f} | {wall:.1f} |"
        )


if __name__ == "__main__":
    main()
