"""SA against the exact optimum (merged breadth-first search over every order) on small arrangements of real games.

    python bench/exact.py --network results/networks/trained-pro/model.pt --pool data/pool/pro.jsonl \
        [--stones 10] [--count 50] [--iterations 1000] [--trials 5]
"""

import argparse
import time

from moveorder import annealing as sa
from moveorder.arrangements import clip
from moveorder.coords import sgf_to_lz
from moveorder.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.records import load_records


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--network", required=True)
    p.add_argument("--pool", required=True)
    p.add_argument("--stones", type=int, default=10)
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--trials", type=int, default=5)
    a = p.parse_args()
    model = PolicyLikelihood.from_file(a.network, device="cpu")
    scorer = PositionEvaluator(model, cache_size=1 << 20)
    recs = load_records(a.pool)[: a.count]
    pairs = [(sgf_to_lz(x.black), sgf_to_lz(x.white)) for x in (clip(r, a.stones, "pool") for r in recs)]
    t0 = time.time()
    results = sa.anneal(scorer, pairs, sa.AnnealConfig(iterations=a.iterations, trials=a.trials, seed=7))
    t_sa = time.time() - t0
    found, gaps = 0, []
    t0 = time.time()
    for (b, w), trials in zip(pairs, results):
        _, exact = sa.brute_force(scorer, b, w)
        best = max(t.best_log_likelihood for t in trials)
        found += best >= exact - 1e-9
        gaps.append(exact - best)
    print(
        f"{a.count} arrangements of {a.stones} stones, SA {a.iterations} iterations x {a.trials} trials "
        f"({t_sa:.0f} s), brute force ({time.time() - t0:.0f} s): SA found the exact optimum on "
        f"{found}/{a.count}; largest log-likelihood gap {max(gaps):.3g}"
    )


if __name__ == "__main__":
    main()
