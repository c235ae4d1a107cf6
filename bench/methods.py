"""Search methods side by side: mean LGM, share on/above the actual sequence, exact matches, network
evaluations per arrangement, wall time and the gap to the best order any of them found, all on the
same arrangements in one run; and the figure of quality against evaluations from such runs.

    python bench/methods.py run --network results/networks/trained-pro/model.pt \
        --arrangements data/arrangements/pro/20m.jsonl --set pro [--games 20] [--csv rows.csv] \
        --run anneal:300x5 --run beam:32 --run beam:128 --run beam+anneal:32:300x5:0.3
    python bench/methods.py figure --csv rows.csv [more.csv ...] --out docs/figures/methods
    python bench/methods.py prefix --orders orders.jsonl --arrangements data/arrangements/pro/20m.jsonl
    python bench/methods.py compare --orders orders.jsonl [more.jsonl ...] --reference anneal:5000x5 \
        --reference anneal:20000x5

``compare`` puts every run on the arrangements a reference run covers (``run --orders`` files: one
line per run and arrangement): mean LGM and share on/above the actual sequences on those, and the
run's evaluations per arrangement as a fraction of the reference's (for runs of other invocations,
the mean over their own invocation's arrangements).

A run is ``anneal:ITERATIONSxTRIALS``, ``beam:WIDTH[:fFUTURE]`` or
``beam+anneal:WIDTH:ITERATIONSxTRIALS:T_START[:fFUTURE]`` (annealing from the beam's best orders, one a
trial, from T_START down to 0.1); FUTURE is the beam's weight of the estimate of the stones still to play
(``f0``: the plain beam; default: settings.SearchConfig's).  Each run has an
evaluator (and position cache) of its own, so its evaluations are its own.  The best-of-all gap is
per arrangement the best log-likelihood any run of this invocation (or the actual order) reached
minus the run's, per move, averaged over the arrangements.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from moveorder.data.arrangements import load_arrangements
from moveorder.go.coords import sgf_to_lz
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.nets.networks import load_policy
from moveorder.report.metrics import share_on_or_above
from moveorder.report.plots import method_curves
from moveorder.search import dispatch
from moveorder.search.problem import problem_of_stones
from moveorder.search.results import matching_prefix
from moveorder.settings import SearchConfig


def parse_run(text):
    """(config, curve, budget): the run's settings, the curve it belongs to and its place on it."""
    parts = text.split(":")
    future = SearchConfig().beam_future
    if parts[-1].startswith("f"):
        future = float(parts.pop()[1:])
    beam = "beam" if future == 0 else f"beam f{future:g}"
    if parts[0] == "anneal" and len(parts) == 2:
        it, tr = map(int, parts[1].split("x"))
        return SearchConfig(iterations=it, trials=tr, seed=1), f"SA x{tr}", it
    if parts[0] == "beam" and len(parts) == 2:
        return SearchConfig(method="beam", beam_width=int(parts[1]), beam_future=future), beam, int(parts[1])
    if parts[0] == "beam+anneal" and len(parts) == 4:
        it, tr = map(int, parts[2].split("x"))
        cfg = SearchConfig(
            method="beam+anneal",
            beam_width=int(parts[1]),
            beam_future=future,
            iterations=it,
            trials=tr,
            t_start=float(parts[3]),
            seed=1,
        )
        return cfg, f"{beam} {parts[1]} + SA x{tr} from T {parts[3]}", it
    raise SystemExit(f"unknown run {text!r}: anneal:ITxTR, beam:W[:fF] or beam+anneal:W:ITxTR:T[:fF]")


def run(a):
    torch.set_num_threads(a.threads) if a.threads else None
    net = load_policy(a.network)
    arrs = load_arrangements(a.arrangements)[a.skip : a.skip + a.games]
    pairs = [(sgf_to_lz(x.black), sgf_to_lz(x.white)) for x in arrs]
    n = arrs[0].n
    ev0 = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
    orders = [sgf_to_lz(x.actual) for x in arrs]
    actual = np.array(ev0.sequence_log_probs(torch.tensor(orders)).sum(1).tolist())
    print(
        f"{a.network}, {len(arrs)} arrangements of {n} moves ({a.arrangements}, from #{a.skip}); torch threads "
        f"{torch.get_num_threads()}; actual sequences: mean LGM {np.mean(np.exp(actual / n)):.4f}",
        flush=True,
    )
    problems = [problem_of_stones(b, w) for b, w in pairs]
    rows, lls = [], []
    for spec in a.run:
        cfg, curve, budget = parse_run(spec)
        ev = PositionEvaluator(PolicyLikelihood(net, device="cpu"))
        t0 = time.perf_counter()
        res = [f.trials for f in dispatch.run(ev, problems, cfg)]  # annealing's trials, or the beam's best
        wall = time.perf_counter() - t0
        best = [max(r, key=lambda t: t.log_likelihood) for r in res]
        ll = np.array([b.log_likelihood for b in best])
        lls.append(ll)
        if a.orders:
            with open(a.orders, "a") as f:
                for k, (r, b, x) in enumerate(zip(res, best, arrs)):
                    rec = {
                        "set": a.set,
                        "n": n,
                        "run": spec,
                        "index": a.skip + k,
                        "id": x.id,
                        "log_likelihood": b.log_likelihood,
                        "actual_log_likelihood": float(actual[k]),
                        "trials": [t.log_likelihood for t in r],
                        "order": b.moves,
                        "evaluations_per_arrangement": ev.evaluations / len(arrs),
                        "wall_s": wall,
                    }
                    f.write(json.dumps(rec) + "\n")
        rows.append(
            {
                "set": a.set,
                "n": n,
                "run": spec,
                "curve": curve,
                "budget": budget,
                "arrangements": len(arrs),
                "evaluations": ev.evaluations / len(arrs),
                "wall_s": wall,
                "mean_lgm": float(np.mean(np.exp(ll / n))),
                "mean_lgm_actual": float(np.mean(np.exp(actual / n))),
                "share_on_or_above": share_on_or_above(np.exp(actual / n), np.exp(ll / n)),
                "exact_matches": int(sum(b.moves == o for b, o in zip(best, orders))),
                "matching_prefix": float(np.mean([matching_prefix(b.moves, o) for b, o in zip(best, orders)])),
            }
        )
        r = rows[-1]
        print(
            f"  {spec}: {wall:.1f} s; mean LGM {r['mean_lgm']:.4f}, on/above {r['share_on_or_above']:.0%}, "
            f"exact {r['exact_matches']}, {r['evaluations']:,.0f} evaluations / arrangement",
            flush=True,
        )
    top = np.max(np.vstack(lls + [actual]), axis=0)
    for row, ll in zip(rows, lls):
        row["gap_per_move"] = float(np.mean((top - ll) / n))
    df = pd.DataFrame(rows)
    if a.csv:
        # Appended as rows of the file's own columns (a CSV from before a column was added reads on).
        old = pd.read_csv(a.csv) if Path(a.csv).exists() else None
        pd.concat([old, df], ignore_index=True).to_csv(a.csv, index=False)
    print(
        "| run | mean LGM | on/above actual | exact | matching prefix | best-of-all gap / move | "
        "evaluations / arrangement | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['run']} | {r['mean_lgm']:.4f} | {r['share_on_or_above']:.0%} | {r['exact_matches']} | "
            f"{r['matching_prefix']:.2f} | {r['gap_per_move']:.4f} | {r['evaluations']:,.0f} | {r['wall_s']:.1f} |"
        )


def load_orders(paths):
    """The lines of ``run --orders`` files, one row per run and arrangement.  A run repeated (a stopped
    invocation run again): its last lines count."""
    rows = [json.loads(line) for path in paths for line in Path(path).read_text().splitlines() if line]
    return pd.DataFrame(rows).drop_duplicates(["set", "n", "run", "id"], keep="last")


def compare(a):
    df = load_orders(a.orders)  # a repeated reference run counts by its last lines too
    for (s, n), part in df.groupby(["set", "n"], sort=False):
        refs = [r for r in a.reference if r in set(part["run"])]
        if not refs:
            continue
        ref = part[part["run"] == refs[0]]
        ids = list(ref["id"])
        ref_evals = float(ref["evaluations_per_arrangement"].iloc[0])
        ref_lgm = float(np.mean(np.exp(ref["log_likelihood"] / n)))
        print(f"\n{s}, {n} moves: the {len(ids)} arrangements of {refs[0]} ({', '.join(ids)})\n")
        print(
            "| run | mean LGM | on/above actual | >= reference (arrangements) | evaluations / arrangement | share of the reference's |"
        )
        print("|---|---|---|---|---|---|")
        ref_ll = ref.set_index("id")["log_likelihood"]
        actual = ref.set_index("id")["actual_log_likelihood"]
        print(f"| actual sequences | {np.mean(np.exp(actual / n)):.4f} | | | | |")
        for run, r in part.groupby("run", sort=False):
            r = r.set_index("id")
            if not set(ids) <= set(r.index):
                continue
            ll = r.loc[ids, "log_likelihood"]
            lgm = float(np.mean(np.exp(ll / n)))
            evals = float(r["evaluations_per_arrangement"].iloc[0])
            mark = "**" if lgm >= ref_lgm and evals <= ref_evals / 50 else ""
            print(
                f"| {mark}{run}{mark} | {lgm:.4f} | {np.mean(ll >= actual.loc[ids] - 1e-9):.0%} | "
                f"{int(np.sum(ll >= ref_ll.loc[ids] - 1e-9))}/{len(ids)} | {evals:,.0f} | 1/{ref_evals / evals:,.0f} |"
            )


def prefix(a):
    """Mean matching prefix (moves from the first that equal the actual sequence's) of every run in
    ``--orders`` files, the actual orders read from the arrangement files the runs were made on."""
    actual = {(x.id, x.n): sgf_to_lz(x.actual) for path in a.arrangements for x in load_arrangements(path)}
    df = load_orders(a.orders)
    df["prefix"] = [matching_prefix(o, actual[(i, n)]) for o, i, n in zip(df["order"], df["id"], df["n"])]
    print("| set | n | run | arrangements | mean matching prefix |")
    print("|---|---|---|---|---|")
    for (s, n, run), part in df.groupby(["set", "n", "run"], sort=False):
        print(f"| {s} | {n} | {run} | {len(part)} | {part['prefix'].mean():.2f} |")


def figure(a):
    df = pd.concat([pd.read_csv(p) for p in a.csv], ignore_index=True)
    for path in method_curves(df, Path(a.out)):
        print(path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="run the methods on one set of arrangements")
    r.add_argument("--network", required=True)
    r.add_argument("--arrangements", required=True)
    r.add_argument("--set", default="", help="the set's name, for the CSV rows")
    r.add_argument("--games", type=int, default=10)
    r.add_argument("--skip", type=int, default=0, help="start at this arrangement")
    r.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    r.add_argument("--csv", help="append one row per run to this CSV")
    r.add_argument(
        "--orders", help="append one JSON line per run and arrangement (its best order, every trial's log-likelihood)"
    )
    r.add_argument("--run", action="append", required=True)
    r.set_defaults(func=run)
    c = sub.add_parser("compare", help="every run on the arrangements of a reference run, from --orders files")
    c.add_argument("--orders", nargs="+", required=True)
    c.add_argument("--reference", action="append", required=True, help="the reference run (first found a set/length)")
    c.set_defaults(func=compare)
    m = sub.add_parser("prefix", help="mean matching prefix of every run, from --orders files and their arrangements")
    m.add_argument("--orders", nargs="+", required=True)
    m.add_argument("--arrangements", nargs="+", required=True, help="the arrangement files the runs were made on")
    m.set_defaults(func=prefix)
    f = sub.add_parser("figure", help="mean LGM and share on/above against evaluations, from run CSVs")
    f.add_argument("--csv", nargs="+", required=True)
    f.add_argument("--out", required=True, help="figure path without suffix (PNG and PDF)")
    f.set_defaults(func=figure)
    a = p.parse_args()
    a.func(a)


if __name__ == "__main__":
    main()
