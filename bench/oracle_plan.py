"""Is the capture search short of the players' likelihood for want of their capture plan, or for want of
width within a plan?  The capture beam handed the players' own plan, against the order the search found.

    python bench/oracle_plan.py --arrangements ARRS.jsonl --results INFERRED.jsonl [--width 64]
        [--ids ID,ID] [--network tygem-6x128] [--threads 2]

``INFERRED.jsonl`` is ``moveorder infer-set``'s output for ``ARRS.jsonl``.  For each arrangement, in both
seats (the board as given and turned half a turn), the capture beam of ``--width`` searches with the
doomed stones held to the players' capture plan (:func:`moveorder.search.plans.capture_plan` of their
order: which points of which colour are captured), the plan the search's later passes take from an
order it found.  Prints, per arrangement, the players' log-likelihood (the likelier seat's), the found
order's, and the beam's with the players' plan in each seat; then how many of each are on or above
the players'.  Every order the beam returns is replayed on the board (captures, ko, superko) to the
same final board, and rescored apart from the search, before it counts.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from moveorder.go import coords
from moveorder.nets import shipped
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.nets.networks import turn_points
from moveorder.search.captures import capture_beam
from moveorder.search.dispatch import turned
from moveorder.search.plans import capture_plan
from moveorder.search.problem import problem_of_arrangement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from block_moves import SEATS, Scorer, checked, chosen_arrangements, players_in_seats  # noqa: E402  (one scorer for the bench's long orders)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arrangements", required=True, help="JSONL of arrangements (from select)")
    ap.add_argument("--results", required=True, help="moveorder infer-set's JSONL for them")
    ap.add_argument("--width", type=int, default=64, help="the beam's width within the players' plan")
    ap.add_argument("--ids", default="", help="only these arrangements (comma-separated ids)")
    ap.add_argument("--network", default="tygem-6x128")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    arrs = chosen_arrangements(args.arrangements, args.ids)
    found = {r["id"]: r for r in map(json.loads, Path(args.results).read_text().splitlines()) if r.get("inferred")}
    likelihood = PolicyLikelihood.from_file(shipped.require(args.network), device="cpu", precision="float32")
    above = {"found": 0, "players' plan": 0}
    for a in arrs:
        start = time.perf_counter()
        scorer = Scorer(likelihood)
        actual = coords.sgf_to_lz(a.actual)
        as_played, players = players_in_seats(scorer, a)
        inferred = coords.sgf_to_lz(found[a.id]["inferred"])
        searched = max(scorer.score(turn_points(inferred, s))[1] for s in SEATS)
        problem = problem_of_arrangement(a)
        with_plan = {}
        for s in SEATS:
            kept = capture_beam(
                likelihood, [turned(problem, s)], width=args.width, plans=[capture_plan(turn_points(actual, s))]
            )[0]
            with_plan[s] = checked(scorer, *kept[0], as_played[s][0], f"{a.id}: seat {s}") if kept else -np.inf
        above["found"] += searched >= players - 1e-9
        above["players' plan"] += max(with_plan.values()) >= players - 1e-9
        print(
            f"{a.id}: players' {players:.2f}; found {searched:.2f}; the players' plan at W {args.width}: "
            + " / ".join(f"{with_plan[s]:.2f}" for s in SEATS)
            + f"; {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    print(f"on or above the players' likelihood, of {len(arrs)}: {above}", file=sys.stderr)


if __name__ == "__main__":
    main()
