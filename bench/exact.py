"""Each search method against the exact optimum (moveorder.search.exact) on small arrangements of real games.

    OMP_NUM_THREADS=1 python bench/exact.py --network results/networks/trained-pro/model.pt \
        --pool pro=data/pool/pro.jsonl [--pool kgs=data/pool/kgs.jsonl] [--stones 12] [--count 30] \
        [--incumbent-width 64] [--incumbent-future 1] [--sa 300,2000] [--trials 5] [--brute-count 5] [--brute-stones 10] \
        [--distinct] [--optima optima.json] [--run beam:512 --run beam+anneal:128:300x5:0.3 ...]

For every arrangement (the first ``--stones`` moves of the first ``--count`` records of each pool): the
exact solver's wall time, network evaluations and prefixes, then the share of arrangements on which
beam W = 8, 32, 128, SA (``--sa`` iterations x ``--trials`` trials) and beam+anneal (W 32, 300 x 5)
reach the exact optimum (``--run``, in bench/methods.py's syntax: those runs instead).  ``--distinct``:
skip arrangements already taken (pools repeat openings).  ``--optima``: a JSON file of exact optima,
read if it exists (keyed by network, pool and stones; a stored one is used as is) and written after.
Every method gets a fresh evaluator (its own cache), on the CPU, one thread
by default.  Then brute force (the merged breadth-first search, exact.brute_force) against the exact
solver on ``--brute-count`` arrangements of ``--brute-stones`` stones, for the ratio of their times.
Prints markdown tables.
"""

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import torch

from moveorder.data.arrangements import clip
from moveorder.data.records import load_records
from moveorder.go.coords import sgf_to_lz
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.nets.networks import load_policy
from moveorder.search import anneal as sa
from moveorder.search.beam import beam_search
from moveorder.search.exact import brute_force, exact_orders
from moveorder.settings import SearchConfig

TOL = 1e-9


def arrangements(pool, stones, count, distinct=False):
    out, seen = [], set()
    for r in load_records(pool):
        if len(out) == count:
            break
        try:
            a = clip(r, stones, "pool")
        except ValueError:
            continue
        pair = (sgf_to_lz(a.black), sgf_to_lz(a.white))
        key = (tuple(sorted(pair[0])), tuple(sorted(pair[1])))
        if distinct and key in seen:
            continue
        seen.add(key)
        out.append(pair)
    return out


def methods(sa_iterations, trials):
    runs = [(f"beam W={w}, future {f:g}", ("beam", w, f)) for w in (8, 32, 128) for f in (0.0, 1.0)]
    runs += [(f"SA {it} it. x {trials}", SearchConfig(iterations=it, trials=trials, seed=7)) for it in sa_iterations]
    runs.append(
        (
            f"beam+anneal (W 32, 300 it. x {trials})",
            SearchConfig(method="beam+anneal", beam_width=32, iterations=300, trials=trials, seed=7),
        )
    )
    return runs


def parsed_runs(specs):
    from methods import parse_run  # bench/methods.py, beside this script

    out = []
    for text in specs:
        cfg, _, _ = parse_run(text)
        out.append((text, ("beam", cfg.beam_width, cfg.beam_future) if cfg.method == "beam" else cfg))
    return out


def run_method(net, spec, pairs):
    ev = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
    t0 = time.perf_counter()
    if isinstance(spec, tuple):
        best = [found[0][1] for found in beam_search(ev, pairs, width=spec[1], future=spec[2])]
    else:
        best = [max(t.log_likelihood for t in trials) for trials in sa.anneal(ev, pairs, spec)]
    return best, ev.evaluations / len(pairs), time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--network", required=True)
    p.add_argument("--pool", action="append", required=True, help="NAME=records.jsonl")
    p.add_argument("--stones", type=int, default=12)
    p.add_argument("--count", type=int, default=30)
    p.add_argument("--incumbent-width", type=int, default=64)
    p.add_argument(
        "--incumbent-future",
        type=float,
        default=SearchConfig().beam_future,
        help="the incumbent beam's future weight",
    )
    p.add_argument("--sa", default="300,2000", help="SA iterations, comma-separated")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--brute-count", type=int, default=5)
    p.add_argument("--brute-stones", type=int, default=10)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--distinct", action="store_true", help="skip arrangements already taken")
    p.add_argument("--optima", help="JSON file of exact optima: read if it exists, written after")
    p.add_argument("--run", action="append", default=[], help="methods to compare (bench/methods.py's syntax)")
    a = p.parse_args()
    optima = json.loads(Path(a.optima).read_text()) if a.optima and Path(a.optima).exists() else {}
    torch.set_num_threads(a.threads)
    net = load_policy(a.network)
    print(
        f"{a.network}; {a.stones} stones; CPU, torch threads {torch.get_num_threads()}; exact solver's "
        f"incumbent: beam W={a.incumbent_width}, future {a.incumbent_future:g}",
        flush=True,
    )
    for spec in a.pool if a.count else []:  # --count 0: only the brute force comparison
        name, path = spec.split("=", 1)
        pairs = arrangements(path, a.stones, a.count, a.distinct)
        exact, secs, evals, prefixes, inc_opt = [], [], [], [], 0
        stored = optima.setdefault(f"{a.network} {path} {a.stones}", {})
        for pair in pairs:
            key = json.dumps(pair)
            if key in stored:
                exact.append(stored[key])
                continue
            ev = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
            ((_, ll, st),) = exact_orders(
                ev, [pair], incumbent_width=a.incumbent_width, incumbent_future=a.incumbent_future
            )
            stored[key] = ll
            exact.append(ll)
            secs.append(st.seconds)
            evals.append(st.evaluations)
            prefixes.append(st.prefixes)
            inc_opt += st.incumbent_optimal
            print(
                f"  {name} #{len(exact)}: {st.seconds:.1f} s, {st.evaluations} evaluations, "
                f"{st.prefixes} prefixes, LGM {math.exp(ll / a.stones):.4f}",
                flush=True,
            )
        if a.optima:
            Path(a.optima).write_text(json.dumps(optima))
        print(f"\n### {name}: {len(pairs)} arrangements of {a.stones} stones\n")
        if not secs:
            print(f"exact optima from {a.optima}; mean optimum LGM {np.mean(np.exp(np.array(exact) / a.stones)):.4f}\n")
        else:
            print(
                f"exact solver: {np.mean(secs):.1f} s per arrangement (max {np.max(secs):.1f}); "
                f"network evaluations {np.mean(evals):,.0f} per arrangement (max {np.max(evals):,}), "
                f"prefixes {np.mean(prefixes):,.0f}; its incumbent (beam W={a.incumbent_width}) was already "
                f"optimal on {inc_opt}/{len(pairs)}; mean optimum LGM "
                f"{np.mean([math.exp(x / a.stones) for x in exact]):.4f}\n",
                flush=True,
            )
        print("| method | exact optimum found | mean gap (log-lik. per move) | evaluations / arrangement | wall s |")
        print("|---|---|---|---|---|")
        if secs:
            print(
                f"| exact (B&B, incumbent beam W={a.incumbent_width}) | {len(secs)}/{len(pairs)} computed | 0 | "
                f"{np.mean(evals):,.0f} | {sum(secs):.1f} |",
                flush=True,
            )
        runs = parsed_runs(a.run) if a.run else methods([int(x) for x in a.sa.split(",") if x], a.trials)
        for label, spec_ in runs:
            best, per, wall = run_method(net, spec_, pairs)
            for b, x in zip(best, exact):
                assert b <= x + 1e-6, f"{label} beat the exact optimum: {b} > {x}"
            found = sum(b >= x - TOL for b, x in zip(best, exact))
            gap = np.mean([max(0.0, x - b) / a.stones for b, x in zip(best, exact)])
            print(
                f"| {label} | {found}/{len(pairs)} ({found / len(pairs):.0%}) | {gap:.4f} | {per:,.0f} | {wall:.1f} |",
                flush=True,
            )
    if a.brute_count:
        name, path = a.pool[0].split("=", 1)
        pairs = arrangements(path, a.brute_stones, a.brute_count)
        print(f"\n### brute force vs exact: {len(pairs)} {name} arrangements of {a.brute_stones} stones\n")
        print("| arrangement | brute force s | exact s | ratio | brute force evaluations | exact evaluations |")
        print("|---|---|---|---|---|---|")
        tb_all, te_all = 0.0, 0.0
        for k, (b, w) in enumerate(pairs):
            ev = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
            t0 = time.perf_counter()
            _, best = brute_force(ev, b, w)
            tb = time.perf_counter() - t0
            ev2 = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
            ((_, ll, st),) = exact_orders(
                ev2, [(b, w)], incumbent_width=a.incumbent_width, incumbent_future=a.incumbent_future
            )
            assert abs(ll - best) < 1e-9, (ll, best)
            tb_all, te_all = tb_all + tb, te_all + st.seconds
            print(
                f"| {k + 1} | {tb:.1f} | {st.seconds:.1f} | {tb / st.seconds:.1f} | {ev.evaluations:,} | "
                f"{st.evaluations:,} |",
                flush=True,
            )
        print(f"| all | {tb_all:.1f} | {te_all:.1f} | {tb_all / te_all:.1f} | | |")


if __name__ == "__main__":
    main()
