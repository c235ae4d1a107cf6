"""Where the one-position tool's first pass finds no order in either seat, does a cheaper network's
capture plan help?  The tool's search (``--quality fast``) run on each position twice, without a
proposer and with one (``SearchConfig.capture_proposer``, :mod:`moveorder.search.captures`, "The
proposer").

    python bench/proposer.py --arrangements ARRS.jsonl [--ids ID,ID] [--proposer tygem] [--patience 0]
        [--no-without] [--threads 2]

Each run is the search ``moveorder infer`` makes (``tygem-6x128``, float32, both seats, the ``fast``
preset), through :func:`moveorder.search.dispatch.run`, with ``--patience`` (0: no backtracking, whose
budget would dominate the time where the passes find nothing).  Prints per arrangement and run: the
players' log-likelihood under the 6x128 (the likelier seat), the order found, the evaluations of the
6x128 and of the proposer, and the seconds; then, per run, how many orders were found and how many are
on or above the players'.  Every order is replayed on the board (captures, ko, superko) to the same
final board and rescored apart from the search before it counts.  The proposer acts only where the
first pass finds nothing in either seat, so ``--ids`` names such positions (elsewhere both runs are
the same search); ``--no-without``: the run with the proposer alone.
"""

import argparse
import sys
import time
from pathlib import Path

import torch

from moveorder.nets import shipped
from moveorder.nets.likelihood import PolicyLikelihood, evaluator_over
from moveorder.nets.networks import turn_points
from moveorder.search import dispatch
from moveorder.search.problem import SearchStats, problem_of_arrangement
from moveorder.settings import quality_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from block_moves import SEATS, Scorer, checked, chosen_arrangements, players_in_seats  # noqa: E402  (one scorer for the bench's long orders)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arrangements", required=True, help="JSONL of arrangements with captures (from select)")
    ap.add_argument("--ids", default="", help="only these arrangements (comma-separated ids)")
    ap.add_argument("--proposer", default="tygem", help="the shipped network that proposes (default: tygem)")
    ap.add_argument("--patience", type=int, default=0, help="backtracking's patience in both runs (default: 0)")
    ap.add_argument(
        "--without", action=argparse.BooleanOptionalAction, default=True, help="run the search without a proposer too"
    )
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    arrs = chosen_arrangements(args.arrangements, args.ids)
    big = PolicyLikelihood.from_file(shipped.require("tygem-6x128"), device="cpu", precision="float32")
    runs = ("none", args.proposer) if args.without else (args.proposer,)
    counts = {run: {"found": 0, "on or above": 0, "seconds": 0.0} for run in runs}
    for a in arrs:
        scorer = Scorer(big)
        as_played, players = players_in_seats(scorer, a)
        problem = problem_of_arrangement(a)
        for run in runs:
            cfg = quality_config("fast", {"patience": args.patience, "capture_proposer": run})
            stats = SearchStats()
            start = time.perf_counter()
            found = dispatch.run(evaluator_over(big), [problem], cfg, stats=stats)[0]
            seconds = time.perf_counter() - start
            ll = None
            if found.orders:
                order, ll_search = found.orders[0]
                checked(scorer, order, None, as_played[SEATS[0]][0], f"{a.id}: proposer {run}")
                ll = max(scorer.score(turn_points(order, s))[1] for s in SEATS)
                if abs(ll - ll_search) > 0.01 * len(order):
                    raise SystemExit(f"{a.id}: the search's {ll_search:.2f} is not the order's {ll:.2f}")
                counts[run]["found"] += 1
                counts[run]["on or above"] += ll >= players - 1e-9
            counts[run]["seconds"] += seconds
            print(
                f"{a.id}: proposer {run}: players' {players:.2f}, found "
                f"{'none' if ll is None else f'{ll:.2f}'}; {stats.evaluations} evaluations of the 6x128, "
                f"{stats.proposer_evaluations} of the proposer; {seconds:.0f} s",
                flush=True,
            )
    print(f"of {len(arrs)}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
