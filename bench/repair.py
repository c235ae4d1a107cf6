"""Repair of the capture search's orders (moveorder.search.repair): what it adds to likelihood and at what cost.

    python bench/repair.py --network tygem --records data/records/pro/usable.jsonl --length 80 --games 10 \
        [--width 32] [--passes 2] [--widen 4] [--patience 0] [--window 10] [--repair-width 16] [--rounds 2] \
        [--threads 2] [--json out.json]

The positions: the last ``--games`` records of the file (read from its end, so outside the evaluation
sets drawn from its start in file order) that qualify at ``--length`` moves with a capture before it
(``moveorder.data.arrangements.eligible``, ``required``), clipped there.  Each is ordered by the capture
search (``moveorder.search.captures.search``) and its order repaired; a JSON line per position (LGM of
the actual order, of the order found and of the repaired one, on or above the actual before and after,
seconds and network evaluations of each step), then the totals.
"""

import argparse
import json
import math
import time

import torch

from moveorder.data.arrangements import clip, eligible
from moveorder.data.records import load_records
from moveorder.go import coords
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search import captures as cap
from moveorder.search.boards import sequence_log_probs
from moveorder.search.problem import problem_of_arrangement
from moveorder.search.repair import repair
from moveorder.search.results import matching_prefix


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="tygem")
    p.add_argument("--records", required=True)
    p.add_argument("--length", type=int, default=80)
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--widen", type=int, default=4)
    p.add_argument("--patience", type=int, default=0)
    p.add_argument("--window", type=int, default=10)
    p.add_argument("--repair-width", type=int, default=16)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--json", default="")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    net = PolicyLikelihood.from_file(a.network, device="cpu")
    arrs = []
    for r in reversed(list(load_records(a.records))):
        if len(r.moves) // 2 >= a.length and eligible(r, a.length, "required", a.length):
            arrs.append(clip(r, a.length, "bench"))
            if len(arrs) == a.games:
                break
    rows = []
    for arr in arrs:
        problem = problem_of_arrangement(arr)
        n = problem.moves
        actual = coords.sgf_to_lz(arr.actual)
        actual_ll = float(sequence_log_probs(net, actual).sum())
        t0, e0 = time.perf_counter(), net.evaluations
        found = cap.search(net, [problem], a.width, 1.0, a.patience, beam_passes=a.passes, beam_widen=a.widen)[0]
        t1, e1 = time.perf_counter(), net.evaluations
        row = {"id": arr.id, "moves": n, "prisoners": list(arr.prisoners), "actual_lgm": math.exp(actual_ll / n)}
        row |= {"search_s": t1 - t0, "search_evaluations": e1 - e0, "found": found is not None}
        if found is not None:
            seq, ll = repair(net, found[0], a.window, a.repair_width, a.rounds)
            row |= {"lgm": math.exp(found[1] / n), "repaired_lgm": math.exp(ll / n)}
            row |= {"above": found[1] >= actual_ll - 1e-9, "repaired_above": ll >= actual_ll - 1e-9}
            row |= {"prefix": matching_prefix(found[0], actual), "repaired_prefix": matching_prefix(seq, actual)}
            row |= {"repair_s": time.perf_counter() - t1, "repair_evaluations": net.evaluations - e1}
        rows.append(row)
        print(json.dumps(row), flush=True)
    done = [r for r in rows if r["found"]]
    total = {
        "positions": len(rows),
        "found": len(done),
        "on_or_above": sum(r["above"] for r in done),
        "repaired_on_or_above": sum(r["repaired_above"] for r in done),
        "mean_lgm": sum(r["lgm"] for r in done) / max(1, len(done)),
        "mean_repaired_lgm": sum(r["repaired_lgm"] for r in done) / max(1, len(done)),
        "search_evaluations": sum(r["search_evaluations"] for r in rows),
        "repair_evaluations": sum(r["repair_evaluations"] for r in done),
        "settings": vars(a),
    }
    print(json.dumps(total), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"positions": rows, "total": total}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
