"""The annealer's work and speed: evaluations per iteration against the naive way, cache hits,
iterations per second, and the share of wall time spent outside the network.

    python bench/anneal.py --network results/networks/trained-pro/model.pt \
        --arrangements data/arrangements/pro/20m.jsonl [--games 10] [--iterations 300] [--trials 3]

Both variants run in this one process on the same arrangements, so the ratios compare like with like.
"""

import argparse
import json
import time

import numpy as np

from moveorder import annealing as sa
from moveorder.arrangements import load_arrangements
from moveorder.inference import lz_indices
from moveorder.likelihood import PolicyLikelihood


class TimedLikelihood(PolicyLikelihood):
    seconds = 0.0

    def probs_of_planes(self, planes):
        t0 = time.perf_counter()
        out = super().probs_of_planes(planes)
        TimedLikelihood.seconds += time.perf_counter() - t0
        return out


def run(model, pairs, cfg, scorer):
    TimedLikelihood.seconds = 0.0
    t0 = time.perf_counter()
    res = sa.anneal(scorer, pairs, cfg)
    wall = time.perf_counter() - t0
    return res, wall, TimedLikelihood.seconds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--network", required=True)
    p.add_argument("--arrangements", required=True)
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--naive", action="store_true", help="also run the naive reference (slow)")
    p.add_argument("--max-batch", type=int, nargs="+", default=[64],
                   help="network batch sizes to compare (incremental + cache variant)")
    a = p.parse_args()
    from moveorder.likelihood import load_policy

    net = load_policy(a.network)
    model = TimedLikelihood(net, device="cpu", max_batch=a.max_batch[0])
    arrs = load_arrangements(a.arrangements)[:a.games]
    pairs = [(lz_indices(x.black), lz_indices(x.white)) for x in arrs]
    n = arrs[0].n
    cfg = sa.AnnealConfig(iterations=a.iterations, trials=a.trials, seed=1)
    chains = len(pairs) * a.trials
    rows = {}
    for mb in a.max_batch:
        m = TimedLikelihood(net, device="cpu", max_batch=mb)
        fast = sa.PositionScorer(m)
        res, wall, secs = run(m, pairs, cfg, fast)
        rows[f"incremental + cache, batch {mb}"] = (fast.evaluations, fast.requests, fast.hits, wall, secs, res)
    res = rows[f"incremental + cache, batch {a.max_batch[0]}"][5]
    if a.naive:
        naive = sa.PositionScorer(model, cache_size=0, dedupe=False)
        ncfg = sa.AnnealConfig(**{**cfg.__dict__, "incremental": False, "cache_size": 0})
        res2, wall2, secs2 = run(model, pairs, ncfg, naive)
        rows[f"naive, batch {a.max_batch[0]}"] = (naive.evaluations, naive.requests, 0, wall2, secs2, res2)
        same = all(np.array_equal(x.best, y.best) for a_, b_ in zip(res, res2) for x, y in zip(a_, b_))
        print(f"identical results: {same}")
    print(f"{len(pairs)} arrangements of {n} moves x {a.trials} trials = {chains} chains, {a.iterations} iterations")
    print("| variant | evaluations / iteration / chain | requests / iteration / chain | cache hit rate | "
          "iterations / s | wall s | share outside network |")
    print("|---|---|---|---|---|---|---|")
    for name, (ev, rq, hits, wall, net, _) in rows.items():
        it = a.iterations
        print(f"| {name} | {ev / it / chains:.2f} | {rq / it / chains:.2f} | {hits / max(rq, 1):.1%} | "
              f"{it / wall:.1f} | {wall:.1f} | {1 - net / wall:.1%} |")
    print(json.dumps({k: v[:5] for k, v in rows.items()}))


if __name__ == "__main__":
    main()
