"""Is the capture search short of the players' likelihood for want of their capture plan, or for want of
width within a plan?  The capture beam handed the players' own plan, against the order the search found.

    python bench/oracle_plan.py --arrangements ARRS.jsonl [--results INFERRED.jsonl] [--width 64]
        [--ids ID,ID] [--network tygem-6x128] [--threads 2] [--merge input] [--future 1.0]
        [--seats both] [--trace] [--early W:K] [--plan-tiers A,B,C]

``INFERRED.jsonl`` is ``moveorder infer-set``'s output for ``ARRS.jsonl`` (without it, "found" is not
compared).  For each arrangement, in both
seats (the board as given and turned half a turn), the capture beam of ``--width`` searches with the
doomed stones held to the players' capture plan (:func:`moveorder.search.plans.capture_plan` of their
order: which points of which colour are captured), the plan the search's later passes take from an
order it found.  Prints, per arrangement, the players' log-likelihood (the likelier seat's), the found
order's, and the beam's with the players' plan in each seat; then how many of each are on or above
the players'.  Every order the beam returns is replayed on the board (captures, ko, superko) to the
same final board, and rescored apart from the search, before it counts.  ``--merge`` and ``--future``: the
beam's (``--capture-merge``, ``--beam-future``); ``--seats likelier``: only the seat where the players'
order is likelier.

``--early W:K``: a width of W for the first K moves and ``--width`` after (to ask where width is worth most);
``--plan-tiers``: the shares of the width within a plan by likelihood, fewest captures still to make and
doomed set (the rest by the score), set in :data:`moveorder.search.layer.PLAN_TIERS` for the whole run.

``--trace``: in the seat where the players' order is likelier, where the players' board leaves the beam
(the first move after which no kept prefix stands on the board their first moves made): the move, their
log-likelihood up to it against the kept prefixes' lowest and highest, and their move's rank among the
layer's children by likelihood (0 the likeliest; children of every kept prefix, before merging); then
how far (points that differ) the players' board is from the kept boards there and they from each other, and
after which moves the players' board was among the kept again.
"""

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from moveorder.go import coords
from moveorder.go.coords import POINTS
from moveorder.nets import shipped
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.nets.networks import turn_points
from moveorder.search import layer
from moveorder.search.boards import replay_boards, sequence_log_probs
from moveorder.search.captures import capture_beam
from moveorder.search.dispatch import turned
from moveorder.search.plans import capture_plan
from moveorder.search.problem import problem_of_arrangement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from block_moves import SEATS, Scorer, checked, chosen_arrangements, players_in_seats  # noqa: E402  (one scorer for the bench's long orders)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arrangements", required=True, help="JSONL of arrangements (from select)")
    ap.add_argument("--results", default="", help="moveorder infer-set's JSONL for them (optional)")
    ap.add_argument("--width", type=int, default=64, help="the beam's width within the players' plan")
    ap.add_argument("--ids", default="", help="only these arrangements (comma-separated ids)")
    ap.add_argument("--network", default="tygem-6x128")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--merge", choices=("input", "board"), default="input", help="which prefixes count as one")
    ap.add_argument("--future", type=float, default=1.0, help="the weight of the estimate of the stones to play")
    ap.add_argument("--seats", choices=("both", "likelier"), default="both")
    ap.add_argument("--trace", action="store_true", help="where the players' board leaves the beam")
    ap.add_argument("--early", type=schedule, help="W:K: a width of W for the first K moves, --width after")
    ap.add_argument("--plan-tiers", type=shares, help="a,b,c: the width's shares within a plan (layer.PLAN_TIERS)")
    args = ap.parse_args()
    if args.plan_tiers:
        layer.PLAN_TIERS = args.plan_tiers
    torch.set_num_threads(args.threads)
    arrs = chosen_arrangements(args.arrangements, args.ids)
    rows = map(json.loads, Path(args.results).read_text().splitlines()) if args.results else []
    found = {r["id"]: r for r in rows if r.get("inferred")}
    likelihood = PolicyLikelihood.from_file(shipped.require(args.network), device="cpu", precision="float32")
    above = {"found": 0, "players' plan": 0}
    for a in arrs:
        start = time.perf_counter()
        scorer = Scorer(likelihood)
        actual = coords.sgf_to_lz(a.actual)
        as_played, players = players_in_seats(scorer, a)
        inferred = coords.sgf_to_lz(found[a.id]["inferred"]) if a.id in found else None
        searched = max(scorer.score(turn_points(inferred, s))[1] for s in SEATS) if inferred else -np.inf
        problem = problem_of_arrangement(a)
        likelier = max(SEATS, key=lambda s: as_played[s][1])
        seats = SEATS if args.seats == "both" else (likelier,)
        with_plan = {s: -np.inf for s in seats}
        trace = None
        for s in seats:
            players_order = turn_points(actual, s)
            tracer = Tracer(likelihood, players_order) if args.trace and s == likelier else None
            with contextlib.ExitStack() as patched:
                if args.early:
                    patched.enter_context(choosing(widened(*args.early)))
                if tracer:
                    patched.enter_context(choosing(tracer.wrap))
                kept = capture_beam(
                    likelihood,
                    [turned(problem, s)],
                    width=args.width,
                    future=args.future,
                    plans=[capture_plan(players_order)],
                    merge=args.merge,
                )[0]
            with_plan[s] = checked(scorer, *kept[0], as_played[s][0], f"{a.id}: seat {s}") if kept else -np.inf
            trace = tracer.report() if tracer else trace
        above["found"] += searched >= players - 1e-9
        above["players' plan"] += max(with_plan.values()) >= players - 1e-9
        print(
            f"{a.id}: players' {players:.2f}; found {f'{searched:.2f}' if inferred else '-'}; the players' plan at W {args.width}: "
            + " / ".join(f"{with_plan[s]:.2f}" for s in seats)
            + (f"; {trace}" if args.trace else "")
            + f"; {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    print(f"on or above the players' likelihood, of {len(arrs)}: {above}", file=sys.stderr)


def _runs(moves) -> str:
    """Sorted move numbers as runs: 3-5,9."""
    out, start = [], None
    for k, m in enumerate(moves):
        start = m if start is None else start
        if k + 1 == len(moves) or moves[k + 1] != m + 1:
            out.append(f"{start}-{m}" if m > start else f"{m}")
            start = None
    return ",".join(out)


def _spread(players: bytes, kept) -> str:
    """How far the players' board is from the kept boards, and they from each other: points that differ."""
    a = np.frombuffer(players, dtype=np.uint8)
    k = np.stack([np.frombuffer(b, dtype=np.uint8) for b in kept])
    to_players = (k != a).sum(axis=1)
    apart = (k[:, None, :] != k[None, :, :]).sum(axis=2)
    pairs = apart[np.triu_indices(len(kept), 1)]
    np.fill_diagonal(apart, POINTS + 1)
    nearest = apart.min(axis=1) if len(kept) > 1 else np.zeros(1)
    return (
        f"the players' board {to_players.min()} points from the nearest kept (median {np.median(to_players):.0f}); "
        f"the kept boards {np.median(nearest):.0f} from their nearest (median), "
        f"{np.median(pairs) if len(pairs) else 0:.0f} apart (median of pairs)"
    )


def schedule(text: str):
    """``--early``'s W:K, two positive integers."""
    try:
        w, k = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected W:K, two whole numbers (e.g. 256:20)") from None
    if w < 1 or k < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: W and K must be at least 1")
    return w, k


def shares(text: str):
    """``--plan-tiers``' three shares of the width, each in [0, 1], summing to at most 1."""
    try:
        tiers = tuple(float(v) for v in text.split(","))
    except ValueError:
        tiers = ()
    if len(tiers) != 3 or min(tiers) < 0 or sum(tiers) > 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected three shares of at least 0, summing to at most 1")
    return tiers


@contextlib.contextmanager
def choosing(wrap):
    """While entered, :meth:`moveorder.search.layer.Layer.choose` is ``wrap`` of the one it replaces."""
    real = layer.Layer.choose
    layer.Layer.choose = wrap(real)
    try:
        yield
    finally:
        layer.Layer.choose = real


def widened(w: int, k: int):
    """For :func:`choosing`: every layer of the first ``k`` moves keeps a width of ``w`` (``--early``)."""

    def wrap(real):
        def choose(lay, width, future, keep=1):
            return real(lay, w if lay.i < k else width, future, keep)

        return choose

    return wrap


class Tracer:
    """Its :meth:`wrap`, entered with :func:`choosing`, watches every :class:`moveorder.search.layer.Layer`'s first choice of the capture
    beam, and keeps in ``left`` where the players' board left the beam and in ``on`` the moves after which it
    was among the kept (``--trace``)."""

    def __init__(self, likelihood, order):
        self.order = order
        self.boards = replay_boards(order)  # before each move, and after the last
        self.cumulative = np.concatenate([[0.0], np.cumsum(sequence_log_probs(likelihood, order))])
        self.left = "the players' board stayed in the beam to the end"
        self._done = False
        self.on = set()  # the moves after which the players' board is among the kept (first choices)

    def report(self) -> str:
        """``left``, after how many moves the players' board was kept, and after which it was kept again once
        it had left."""
        gone = min(set(range(1, len(self.boards))) - self.on, default=len(self.boards))
        back = sorted(m for m in self.on if m > gone)
        return (
            f"{self.left}; the players' board kept after {len(self.on)} of {len(self.boards) - 1} moves, "
            f"back in the beam after moves {_runs(back) or 'none'}"
        )

    def wrap(self, real):
        """``real`` (:meth:`moveorder.search.layer.Layer.choose`) watched."""
        tracer = self

        def choose(lay, width, future, keep=1):
            first = lay.first
            watched = first and not tracer._done and any(p.hist[0] == tracer.boards[lay.i] for p in lay.beam)
            rank = tracer._rank(lay) if watched else None
            kept = real(lay, width, future, keep)
            theirs = first and any(p.hist[0] == tracer.boards[lay.i + 1] for p in kept)
            if theirs:
                tracer.on.add(lay.i + 1)
            elif watched:
                tracer._look(lay, kept, rank)
            return kept

        return choose

    def _rank(self, lay):
        """The players' move's rank by likelihood among the layer's children (their board is among its
        prefixes), or None where it is not a child."""
        row = next(r for r, p in enumerate(lay.beam) if p.hist[0] == self.boards[lay.i])
        j = np.nonzero((lay.rows == row) & (lay.pts == self.order[lay.i]))[0]
        return int(np.nonzero(lay.by_g == j[0])[0][0]) if len(j) else None

    def _look(self, lay, kept, rank):
        """The players' board has just left the beam: say where, and how."""
        lls = [p.ll for p in kept]
        if not lls:
            self.left = f"the beam kept no prefix after move {lay.i + 1}"
            self._done = True
            return
        self.left = (
            f"left the beam after move {lay.i + 1}: the players' {self.cumulative[lay.i + 1]:.2f} against the kept "
            f"{min(lls):.2f} to {max(lls):.2f}, their move {'not a child' if rank is None else rank} by likelihood "
            f"of {len(lay.g)} children; {_spread(self.boards[lay.i + 1], [p.hist[0] for p in kept])}"
        )
        self._done = True


if __name__ == "__main__":
    main()
