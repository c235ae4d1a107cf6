"""Where the one-position tool's first pass finds no order in either seat, can a cheaper network propose
the capture plan?  The shipped 4x32 ``tygem`` searches such a position as ``config/captures.yaml`` does,
and the 6x128 then searches within the plan of the 4x32's order.

    python bench/proposer.py --arrangements ARRS.jsonl [--ids ID,ID] [--width 32] [--plan-width 64]
        [--threads 2]

For each arrangement: the tool's first pass (``tygem-6x128``, the capture beam of ``--width`` over both
seats, doomed stones on the capture sites, one prefix a board); where it found an order in a seat, the
position is one the tool answers as before and the bench says so.  Where it found none, the proposer
(``tygem``, a beam of ``--width`` over both seats, two passes, the second 4 times as wide, one prefix
for each last 8 boards: captures.yaml's search) looks for an order; where it finds one, the 6x128's
capture beam of ``--plan-width`` searches again in the proposer's likelier seat with the doomed stones
held to that order's capture plan (:func:`moveorder.search.plans.capture_plan`), starting from the
first pass's stone estimates.  Prints per arrangement the players' log-likelihood under the 6x128 (the
likelier seat), the proposer's order rescored under the 6x128, the order within its plan, the
evaluations of each network and the seconds; then how many are on or above the players'.  Every order
is replayed on the board (captures, ko, superko) to the same final board, and rescored apart from the
search, before it counts.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from moveorder.nets import shipped
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search import captures
from moveorder.search.dispatch import turned
from moveorder.search.layer import no_estimates
from moveorder.search.plans import SITE_LADDER, capture_plan
from moveorder.search.problem import problem_of_arrangement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from block_moves import SEATS, Scorer, checked, chosen_arrangements, players_in_seats  # noqa: E402  (one scorer for the bench's long orders)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arrangements", required=True, help="JSONL of arrangements with captures (from select)")
    ap.add_argument("--ids", default="", help="only these arrangements (comma-separated ids)")
    ap.add_argument("--width", type=int, default=32, help="the first pass's width, and the proposer's")
    ap.add_argument("--plan-width", type=int, default=64, help="the 6x128's width within the proposer's plan")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    arrs = chosen_arrangements(args.arrangements, args.ids)
    big = PolicyLikelihood.from_file(shipped.require("tygem-6x128"), device="cpu", precision="float32")
    small = PolicyLikelihood.from_file(shipped.require("tygem"), device="cpu", precision="float32")
    counts = {"first pass found": 0, "proposer found": 0, "on or above": 0}
    for a in arrs:
        start = time.perf_counter()
        scorer = Scorer(big)
        as_played, players = players_in_seats(scorer, a)
        problem = problem_of_arrangement(a)
        seats = [turned(problem, s) for s in SEATS]
        estimates = [no_estimates() for _ in SEATS]
        e0 = big.evaluations
        first = captures.capture_beam(
            big, seats, args.width, estimates=estimates, sites=[SITE_LADDER[0]] * len(SEATS), merge="board"
        )
        line = f"{a.id}: players' {players:.2f}"
        if any(first):
            counts["first pass found"] += 1
            best = max(kept[0][1] for kept in first if kept)
            print(f"{line}; the first pass found an order ({best:.2f}): the tool as before", flush=True)
            continue
        s0 = small.evaluations
        proposed = captures.search(
            small,
            seats,
            args.width,
            1.0,
            0,
            beam_passes=2,
            beam_widen=4,
            merge="input",
            groups=[0] * len(SEATS),
        )
        line += f"; 6x128 first pass {big.evaluations - e0} evaluations, none found"
        tries = [(j, r) for j, r in enumerate(proposed) if r is not None]
        if not tries:
            print(
                f"{line}; the proposer none ({small.evaluations - s0} evaluations); "
                f"{time.perf_counter() - start:.0f} s",
                flush=True,
            )
            continue
        counts["proposer found"] += 1
        j, (order, _) = max(tries, key=lambda t: t[1][1])
        rescored = checked(scorer, order, None, as_played[SEATS[j]][0], f"{a.id}: the proposer's order")
        e1 = big.evaluations
        kept = captures.capture_beam(
            big, [seats[j]], args.plan_width, estimates=[estimates[j]], plans=[capture_plan(order)], merge="board"
        )[0]
        within = -np.inf
        if kept:
            within = checked(scorer, kept[0][0], kept[0][1], as_played[SEATS[j]][0], f"{a.id}: within the plan")
        best = max(rescored, within)
        counts["on or above"] += best >= players - 1e-9
        print(
            f"{line}; the proposer (seat {SEATS[j]}, {small.evaluations - s0} evaluations) {rescored:.2f} under "
            f"the 6x128; within its plan at W {args.plan_width} {within:.2f} ({big.evaluations - e1} evaluations); "
            f"{time.perf_counter() - start:.0f} s",
            flush=True,
        )
    print(f"of {len(arrs)}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
