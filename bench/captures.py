"""The search for positions with captures: what it finds on real games, and its cost, the
bookkeeping apart from the network.

    python bench/captures.py --network tygem --records data/records/pro/usable.jsonl \
        [--lengths 40 60 80 100] [--games 10] [--width 64] [--future 1] [--patience 2] [--passes 1] [--widen 1]
        [--sites 1,none] [--json out.json]
        [--where-it-dies]
    python bench/captures.py --arrangements data/arrangements/pro/100m.jsonl --games 20 ...

For each length ``n``: the first ``--games`` records (in file order) that qualify up to ``n`` but for
captures and capture before move ``n`` (``moveorder.data.arrangements.eligible``, ``required``), or
the first ``--games`` of an arrangements file (its own length).  ``--sites``: the rungs of the capture
sites (``moveorder.search.plans.SITE_LADDER``, the default; ``none``: anywhere, the search before the
sites; ``1,1``: the sites in every pass, never anywhere).  Each
length is searched twice in this one invocation:

1. with the network, recording every output it gives (wall time, and the network's own time: input
   planes, forward pass, softmax, as ``PolicyLikelihood.seconds`` counts it);
2. with a zero-cost stand-in that hands back the recorded outputs in the same order, so the search
   makes the same decisions: its wall time is the bookkeeping alone (boards, candidates, pruning,
   merging, ranking), what is left of the search on a fast accelerator.

Per length it prints the sequences found, how many are on or above the actual sequence's likelihood
(a problem with no sequence found counts as below), mean LGM of inferred and actual, exact matches,
matching prefix, captured points placed where the game placed them, network evaluations and children
built per arrangement, and the times.

``--where-it-dies``: the beam alone, no backtracking, one problem at a time; a JSON line per problem
with, where the beam kept no child, the move, its prefixes, the children tried of those it had, and
whether it tried them all.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import torch

from moveorder.data.arrangements import clip, eligible, load_arrangements
from moveorder.data.records import load_records
from moveorder.go import coords
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search import captures as cap
from moveorder.search import layer as capture_layer
from moveorder.search.boards import sequence_log_probs
from moveorder.search.plans import SITE_LADDER, captured_placed
from moveorder.search.problem import SearchStats, problem_of_arrangement
from moveorder.search.results import matching_prefix


class Recording:
    """Wraps a likelihood: every ``probs_of_planes`` output is kept, in call order."""

    def __init__(self, inner: PolicyLikelihood):
        self.inner, self.outputs = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def probs_of_planes(self, planes):
        out = self.inner.probs_of_planes(planes)
        self.outputs.append(out.clone())
        return out


class Replay:
    """A zero-cost stand-in: the recorded outputs, in the order they were given."""

    def __init__(self, outputs, legal_only: bool):
        self.outputs, self.k = outputs, 0
        self.legal_only, self.seconds, self.evaluations, self.precision = legal_only, 0.0, 0, "float32"

    def probs_of_planes(self, planes):
        out = self.outputs[self.k]
        assert out.shape[0] == planes.shape[0], "the replayed search asked for other positions"
        self.k += 1
        self.evaluations += len(out)
        return out


def problems_of(records_path, n, games):
    arrs = []
    for r in load_records(records_path):
        if len(r.moves) // 2 >= n and eligible(r, n, "required", n):
            arrs.append(clip(r, n, "bench"))
            if len(arrs) == games:
                break
    return arrs


def run_length(net: PolicyLikelihood, arrs, width, future, patience, passes=1, widen=1, sites=SITE_LADDER):
    problems = [problem_of_arrangement(a) for a in arrs]
    rec = Recording(net)
    net.seconds, net.evaluations = 0.0, 0
    stats = SearchStats()
    kw = {"beam_passes": passes, "beam_widen": widen, "sites": sites}
    t0 = time.perf_counter()
    found = cap.search(rec, problems, width, future, patience, stats=stats, **kw)
    wall = time.perf_counter() - t0
    network = rec.seconds  # set by the search's position_log_probs on the wrapper
    replay = Replay(rec.outputs, net.legal_only)
    t0 = time.perf_counter()
    again = cap.search(replay, problems, width, future, patience, **kw)
    bookkeeping = time.perf_counter() - t0
    assert again == found, "the replayed search found other sequences"
    rows = []
    for a, r in zip(arrs, found):
        n = a.n
        actual = coords.sgf_to_lz(a.actual)
        actual_ll = float(sequence_log_probs(net, actual).sum())
        row = {"actual_lgm": math.exp(actual_ll / n), "found": r is not None}
        if r is None:
            row |= {"lgm": 0.0, "above": False, "exact": False, "prefix": 0, "placed": 0.0}
        else:
            seq, ll = r
            row |= {
                "lgm": math.exp(ll / n),
                "above": ll >= actual_ll - 1e-9,
                "exact": seq == actual,
                "prefix": matching_prefix(seq, actual),
                "placed": captured_placed(actual, seq),
            }
        rows.append(row)
    k = len(arrs)
    return {
        "n": arrs[0].n,
        "games": k,
        "found": sum(r["found"] for r in rows),
        "on_or_above": sum(r["above"] for r in rows),
        "mean_lgm": float(np.mean([r["lgm"] for r in rows])),
        "mean_actual_lgm": float(np.mean([r["actual_lgm"] for r in rows])),
        "exact": sum(r["exact"] for r in rows),
        "matching_prefix": float(np.mean([r["prefix"] for r in rows])),
        "captured_placed": float(np.mean([r["placed"] for r in rows if r["found"]] or [0.0])),
        "prisoners": float(np.mean([sum(a.prisoners) for a in arrs])),
        "evaluations_per_arrangement": stats.evaluations / k,
        "children_per_arrangement": stats.children / k,
        "backtracked": stats.backtracked,
        "wall_s_per_arrangement": wall / k,
        "network_s_per_arrangement": network / k,
        "bookkeeping_s_per_arrangement": bookkeeping / k,
    }


def where_it_dies(net: PolicyLikelihood, arrs, width, future, sites=SITE_LADDER):
    """The beam alone (no backtracking), one problem at a time: for each problem it found nothing for,
    the move at which no child was kept, the prefixes it had, the children tried, and whether every
    child was tried (else the layer gave up after ``PRUNED_PER_CHILD x width`` pruned children)."""
    deaths, choose = [], capture_layer.Layer.choose

    def recording_choose(layer, *args, **kwargs):
        kept = choose(layer, *args, **kwargs)
        if not kept:
            deaths.append(
                {"move": layer.i + 1, "prefixes": len(layer.beam), "tried": int(layer.tried.sum())}
                | {"children": len(layer.g), "exhausted": layer.exhausted}
            )
        return kept

    capture_layer.Layer.choose = recording_choose
    try:
        for a in arrs:
            deaths.clear()
            found = cap.capture_beam(net, [problem_of_arrangement(a)], width, future, sites=sites[:1])[0]
            row = {"game": a.id, "n": a.n, "prisoners": list(a.prisoners), "found": bool(found)}
            print(json.dumps(row | (deaths[0] if deaths else {})), flush=True)
    finally:
        capture_layer.Layer.choose = choose


def _rungs(text: str):
    """``1,none`` -> (1, None): the rungs of ``--sites``."""
    try:
        return tuple(None if r.strip().lower() == "none" else int(r) for r in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected open sides (0-4) or none, comma-separated") from None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="tygem")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--records", help="JSONL records (a data stage's usable.jsonl)")
    src.add_argument("--arrangements", help="an arrangements file (a data stage's Nm.jsonl); --lengths unused")
    p.add_argument("--lengths", type=int, nargs="+", default=[40, 60, 80, 100])
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--future", type=float, default=1.0)
    p.add_argument("--patience", type=int, default=2)
    p.add_argument("--passes", type=int, default=1, help="runs of the beam (moveorder.search.captures.search)")
    p.add_argument("--widen", type=int, default=1, help="width factor of a later pass where none found yet")
    p.add_argument(
        "--sites",
        type=_rungs,
        default=SITE_LADDER,
        help="rungs of the capture sites, comma-separated open sides or none (anywhere); default: SITE_LADDER",
    )
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--json", default="")
    p.add_argument("--where-it-dies", action="store_true", help="only the beam's deaths, per problem")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    net = PolicyLikelihood.from_file(a.network, device="cpu")
    out = []
    batches = (
        [problems_of(a.records, n, a.games) for n in a.lengths]
        if a.records
        else [load_arrangements(a.arrangements)[: a.games]]
    )
    for arrs in batches:
        if a.where_it_dies:
            where_it_dies(net, arrs, a.width, a.future, a.sites)
            continue
        res = run_length(net, arrs, a.width, a.future, a.patience, a.passes, a.widen, a.sites)
        res |= {"width": a.width, "future": a.future, "patience": a.patience, "passes": a.passes, "widen": a.widen}
        res |= {"sites": ",".join("none" if r is None else str(r) for r in a.sites)}
        res |= {"threads": a.threads}
        out.append(res)
        print(json.dumps(res), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
