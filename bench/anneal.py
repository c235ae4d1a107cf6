"""The annealer's cost: bookkeeping alone (a zero-cost network), and with a real network against naive and
against a previous engine.

    # Bookkeeping: a stand-in network that costs nothing (uniform probabilities), 100 and 500 chains of
    # 20 and 40 moves; with and without the position cache.  Optionally the same for a previous engine.
    python bench/anneal.py zero-cost [--chains 100 500] [--lengths 20 40] [--iterations 200] \
        [--previous /path/to/previous/src --previous-iterations 30]

    # A real network: evaluations per chain-iteration (incremental + cache vs naive), iterations per second,
    # the share of wall time in the network, and the previous engine on the same arrangements.
    python bench/anneal.py network --network results/networks/trained-pro/model.pt \
        --arrangements data/arrangements/pro/20m.jsonl [--games 10] [--iterations 300] [--trials 3] \
        [--naive] [--previous /path/to/previous/src]

Every variant runs in this one invocation (a previous engine in a subprocess, one after the other), so the
ratios compare like with like.  ``--previous`` is the ``src`` folder of an older checkout
(``git archive COMMIT src | tar -x -C /tmp/prev``).
"""

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import torch

from moveorder.go.coords import MOVES
from moveorder.nets.features import planes_from_codes, position_codes
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.nets.networks import load_policy
from moveorder.search import anneal as sa
from moveorder.search.problem import SearchStats
from moveorder.settings import SearchConfig


class ZeroCostLikelihood(PolicyLikelihood):
    """A network stand-in that costs nothing: uniform probabilities, whatever the input."""

    def __init__(self, device="cpu"):
        self.device = torch.device(device)
        self.precision, self.legal_only, self.average_symmetries = "float32", False, False
        self.max_batch, self.evaluations, self.seconds = 64, 0, 0.0

    def probs_at(self, sequences, rows, positions):
        t0 = time.perf_counter()
        self.evaluations += len(rows)
        out = torch.full((len(rows), MOVES), 1.0 / MOVES, device=self.device)
        self.seconds += time.perf_counter() - t0
        return out


def synthetic_arrangements(count, n, seed=0):
    """``count`` arrangements of ``n`` distinct random points (the bookkeeping does not care which)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        pts = rng.choice(361, n, replace=False).tolist()
        out.append((pts[0::2], pts[1::2]))
    return out


PREVIOUS_ZERO_COST = textwrap.dedent("""
    import json, sys, time
    import numpy as np, torch
    from moveorder.search import anneal as sa
    from moveorder.nets.likelihood import PolicyLikelihood
    class Zero(PolicyLikelihood):
        def __init__(self):
            self.device, self.legal_only, self.average_symmetries = torch.device("cpu"), False, False
            self.max_batch, self.evaluations = 64, 0
        def probs_of_planes(self, planes):
            self.evaluations += planes.shape[0]
            return torch.full((planes.shape[0], 362), 1.0 / 362)
    pairs, iterations, trials = json.loads(sys.argv[1])
    torch.set_num_threads(int(sys.argv[2]))
    t0 = time.perf_counter()
    sa.anneal(sa.PositionScorer(Zero()), [tuple(p) for p in pairs], sa.AnnealConfig(iterations=iterations,
              trials=trials, seed=1))
    print(json.dumps({"seconds": time.perf_counter() - t0}))
""")

PREVIOUS_NETWORK = textwrap.dedent("""
    import json, sys, time
    import torch
    from moveorder.search import anneal as sa
    from moveorder.nets.likelihood import PolicyLikelihood
    network, pairs, iterations, trials = json.loads(sys.argv[1])
    torch.set_num_threads(int(sys.argv[2]))
    model = PolicyLikelihood.from_file(network, device="cpu")
    scorer = sa.PositionScorer(model)
    t0 = time.perf_counter()
    res = sa.anneal(scorer, [tuple(p) for p in pairs], sa.AnnealConfig(iterations=iterations, trials=trials,
                    seed=1))
    print(json.dumps({"seconds": time.perf_counter() - t0, "evaluations": scorer.evaluations,
                      "lgms": [max(r.best_log_likelihood for r in a) for a in res]}))
""")


def run_previous(src, script, payload):
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(payload), str(torch.get_num_threads())],
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def zero_cost(a):
    trials = 5
    print(
        f"zero-cost network; {trials} trials per arrangement, mix neighbour, greedy start; "
        f"{a.iterations} iterations; torch threads {torch.get_num_threads()}"
    )
    print(
        "| moves | chains | variant | microseconds / chain-iteration | positions asked / chain-iteration | "
        "cache hit rate | network inputs built / chain-iteration |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = []
    for n in a.lengths:
        for chains in a.chains:
            pairs = synthetic_arrangements(chains // trials, n)
            cfg = SearchConfig(iterations=a.iterations, trials=trials, seed=1)
            for label, slots in (("cache", a.cache_size), ("no cache", 0)):
                ev = PositionEvaluator(ZeroCostLikelihood(), cache_size=slots)
                sa.anneal(ev, pairs, SearchConfig(iterations=5, trials=trials, seed=2))  # warm-up
                ev.requests = ev.hits = ev.evaluations = 0
                stats = SearchStats()
                sa.anneal(ev, pairs, cfg, stats=stats)
                ci = stats.chain_iterations
                us = (stats.seconds - stats.network_seconds) / ci * 1e6  # all but the stand-in's own time
                rows.append({"n": n, "chains": chains, "variant": label, "us": us})
                print(
                    f"| {n} | {chains} | {label} | {us:.1f} | {stats.requests / ci:.2f} | "
                    f"{stats.hits / max(stats.requests, 1):.1%} | {stats.evaluations / ci:.2f} |"
                )
            if a.previous:
                it = a.previous_iterations
                prev = run_previous(a.previous, PREVIOUS_ZERO_COST, [pairs, it, trials])
                us = prev["seconds"] / (chains * it) * 1e6
                rows.append({"n": n, "chains": chains, "variant": "previous", "us": us})
                print(f"| {n} | {chains} | previous engine ({it} iterations) | {us:.1f} | | | |")
    # What a real network's input layer adds per evaluated position: codes -> planes.
    codes = position_codes(
        torch.randint(0, 361, (64, 40)), torch.arange(64).repeat(64), torch.arange(40).repeat(103)[:4096]
    )
    t0 = time.perf_counter()
    for _ in range(20):
        planes_from_codes(codes)
    per = (time.perf_counter() - t0) / (20 * len(codes)) * 1e6
    print(f"\nexpanding codes into planes (the network's input, timed with the network): {per:.2f} us per position")
    print(json.dumps(rows))


def network(a):
    net = load_policy(a.network)
    from moveorder.data.arrangements import load_arrangements
    from moveorder.go.coords import sgf_to_lz

    arrs = load_arrangements(a.arrangements)[: a.games]
    pairs = [(sgf_to_lz(x.black), sgf_to_lz(x.white)) for x in arrs]
    n = arrs[0].n
    chains = len(pairs) * a.trials
    cfg = SearchConfig(iterations=a.iterations, trials=a.trials, seed=1)
    print(
        f"{a.network}: {len(pairs)} arrangements of {n} moves x {a.trials} trials = {chains} chains, "
        f"{a.iterations} iterations, torch threads {torch.get_num_threads()}"
    )
    variants = [("incremental + cache", cfg, a.cache_size, True), ("incremental, no cache", cfg, 0, True)]
    if a.naive:
        variants.append(
            (
                "naive (every position, every iteration)",
                SearchConfig(**{**cfg.__dict__, "incremental": False}),
                0,
                False,
            )
        )
    print(
        "| variant | network evaluations / chain-iteration | cache hit rate | iterations / s | wall s | "
        "share of wall time in the network | mean best log-likelihood |"
    )
    print("|---|---|---|---|---|---|---|")
    results = {}
    for label, c, slots, dedupe in variants:
        ev = PositionEvaluator(PolicyLikelihood(net, device="cpu"), cache_size=slots, dedupe=dedupe)
        stats = SearchStats()
        res = sa.anneal(ev, pairs, c, stats=stats)
        results[label] = res
        ci = stats.chain_iterations
        mean_ll = np.mean([max(t.log_likelihood for t in r) for r in res])
        print(
            f"| {label} | {stats.evaluations / ci:.2f} | {stats.hits / max(stats.requests, 1):.1%} | "
            f"{a.iterations / stats.seconds:.2f} | {stats.seconds:.1f} | "
            f"{stats.network_seconds / stats.seconds:.1%} | {mean_ll:.4f} |"
        )
    first = results["incremental + cache"]
    for label, res in results.items():
        same = all(
            x.moves == y.moves and x.log_likelihood == y.log_likelihood
            for p, q in zip(first, res)
            for x, y in zip(p, q)
        )
        print(f"identical to incremental + cache: {label}: {same}")
    if a.previous:
        prev = run_previous(a.previous, PREVIOUS_NETWORK, [a.network, pairs, a.iterations, a.trials])
        print(
            f"| previous engine | {prev['evaluations'] / (chains * a.iterations):.2f} | | "
            f"{a.iterations / prev['seconds']:.2f} | {prev['seconds']:.1f} | | "
            f"{np.mean(prev['lgms']):.4f} |"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    z = sub.add_parser("zero-cost")
    z.add_argument("--chains", type=int, nargs="+", default=[100, 500])
    z.add_argument("--lengths", type=int, nargs="+", default=[20, 40])
    z.add_argument("--iterations", type=int, default=200)
    z.add_argument("--cache-size", type=int, default=1 << 17)
    z.add_argument("--previous", default="", help="src folder of a previous engine to time the same way")
    z.add_argument("--previous-iterations", type=int, default=30)
    w = sub.add_parser("network")
    w.add_argument("--network", required=True)
    w.add_argument("--arrangements", required=True)
    w.add_argument("--games", type=int, default=10)
    w.add_argument("--iterations", type=int, default=300)
    w.add_argument("--trials", type=int, default=3)
    w.add_argument("--cache-size", type=int, default=1 << 17)
    w.add_argument("--naive", action="store_true", help="also run the naive reference (slow)")
    w.add_argument("--previous", default="", help="src folder of a previous engine, run on the same arrangements")
    a = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    zero_cost(a) if a.mode == "zero-cost" else network(a)


if __name__ == "__main__":
    main()
