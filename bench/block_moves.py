"""Can local moves of the order found raise its likelihood past the players'?  A hill climb from each
order a search found, by moves that keep the sequence legal and ending at the position.

    python bench/block_moves.py --arrangements ARRS.jsonl --results INFERRED.jsonl [--network tygem-6x128]
        [--budget 2000] [--max-shift 30] [--seed 0] [--threads 2]

``INFERRED.jsonl`` is ``moveorder infer-set``'s output for ``ARRS.jsonl``.  Each order is scored as
the given board and turned half a turn (both seats), and climbed in the likelier; the players' order
is scored in both and the likelier kept, as the search scores it.  A step proposes, at random from
``--seed``:

- a swap of two moves of one colour at most 20 moves apart (the paper's ``swp2`` on a real board);
- a block of 2, 4, 6 or 8 moves (a local exchange, Black and White alike) moved an even number of moves
  (at most ``--max-shift``) earlier or later, so every move keeps its colour.

A proposal is kept where it replays legally on the board (captures, ko, positional superko) to the
same position, so with the same prisoners, and is likelier.  The network sees each position's last 8
boards, so a proposal costs the evaluations of the positions it changes (a cache keeps the rest);
each order gets ``--budget`` of them.  Prints, per arrangement, the log-likelihood before and after
(the players' beside it) and the proposals made, legal and kept; then how many orders are on or above the
players' likelihood before and after.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

from moveorder.data.arrangements import load_arrangements
from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets import shipped
from moveorder.nets.features import HISTORY
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.nets.networks import turn_points
from moveorder.search.boards import position_log_probs, replay_boards

SEATS = (0, 3)  # the board as given and turned half a turn (settings.ORIENTATIONS["seats"])
BATCH = 64


class Scorer:
    """Log-likelihoods of whole sequences that may capture, each position's distribution cached by
    its network input (the last boards and the side to move)."""

    def __init__(self, likelihood: PolicyLikelihood):
        self.likelihood = likelihood
        self.cache: Dict[Tuple, np.ndarray] = {}
        self.evaluations = 0

    def score(self, order: List[int]) -> Tuple[Optional[bytes], float]:
        """The final board and log-likelihood of ``order``; (None, -inf) where it is not legal."""
        try:
            boards = replay_boards(order)
        except goboard.IllegalMove:
            return None, -np.inf
        if len(set(boards)) != len(boards):  # positional superko
            return None, -np.inf
        keys = [(tuple(boards[max(0, i - HISTORY + 1) : i + 1][::-1]), i % 2) for i in range(len(order))]
        for parity in (0, 1):
            need = list(dict.fromkeys(k for k in keys if k[1] == parity and k not in self.cache))
            for s in range(0, len(need), BATCH):
                chunk = need[s : s + BATCH]
                self.evaluations += len(chunk)
                for k, row in zip(chunk, position_log_probs(self.likelihood, [k[0] for k in chunk], parity == 0)):
                    self.cache[k] = row
        return boards[-1], float(sum(self.cache[k][m] for k, m in zip(keys, order)))


def propose(order: List[int], rng: random.Random, max_shift: int) -> Optional[List[int]]:
    """A same-colour swap or an even block moved an even distance, or None where the draw falls off."""
    n = len(order)
    if rng.random() < 0.3:
        i = rng.randrange(n)
        j = i + 2 * rng.randint(1, 10)
        if j >= n:
            return None
        out = order[:]
        out[i], out[j] = out[j], out[i]
        return out
    length = 2 * rng.randint(1, 4)
    i = rng.randrange(0, max(1, n - length + 1)) & ~1
    block, rest = order[i : i + length], order[:i] + order[i + length :]
    k = i + 2 * rng.randint(-(max_shift // 2), max_shift // 2)
    if k == i or k < 0 or k > len(rest):
        return None
    return rest[:k] + block + rest[k:]


def climb(scorer: Scorer, order: List[int], budget: int, rng: random.Random, max_shift: int):
    """First-improvement hill climb within ``budget`` evaluations: (order, ll, proposals, legal, kept);
    ``legal``: the proposals that replay legally to the position."""
    final, ll = scorer.score(order)
    start, proposals, legal, kept = scorer.evaluations, 0, 0, 0
    while scorer.evaluations - start < budget and proposals < 50 * budget:
        cand = propose(order, rng, max_shift)
        if cand is None:
            continue
        proposals += 1
        board, cll = scorer.score(cand)
        legal += board == final
        if board == final and cll > ll + 1e-9:
            order, ll, kept = cand, cll, kept + 1
    return order, ll, proposals, legal, kept


def checked(scorer: Scorer, order, ll_search, final, where: str) -> float:
    """``order``'s log-likelihood under the scorer's network, after replaying it to ``final``."""
    board, ll = scorer.score(order)
    if board != final:
        raise SystemExit(f"{where}: the order does not replay to the position")
    if ll_search is not None and abs(ll - ll_search) > 0.01 * len(order):
        raise SystemExit(f"{where}: the search's log-likelihood {ll_search:.2f} is not the order's {ll:.2f}")
    return ll


def players_in_seats(scorer: Scorer, arrangement) -> Tuple[Dict[int, Tuple[Optional[bytes], float]], float]:
    """The players' order in each seat: ``{seat: (final board, log-likelihood)}``, and the likelier seat's
    log-likelihood."""
    actual = coords.sgf_to_lz(arrangement.actual)
    as_played = {s: scorer.score(turn_points(actual, s)) for s in SEATS}
    return as_played, max(ll for _, ll in as_played.values())


def chosen_arrangements(path: str, ids: str) -> list:
    """The arrangements of ``path`` (JSONL from select), only those of ``ids`` (comma-separated) if given."""
    arrs = load_arrangements(Path(path))
    wanted = set(ids.split(",")) if ids else None
    return [a for a in arrs if wanted is None or a.id in wanted]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arrangements", required=True, help="JSONL of arrangements (from select)")
    ap.add_argument("--results", required=True, help="moveorder infer-set's JSONL for them")
    ap.add_argument("--network", default="tygem-6x128")
    ap.add_argument("--budget", type=int, default=2000, help="network evaluations an order")
    ap.add_argument("--max-shift", type=int, default=30, help="the farthest a block moves, in moves")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    arrs = {a.id: a for a in load_arrangements(Path(args.arrangements))}
    rows = [json.loads(line) for line in Path(args.results).read_text().splitlines() if line.strip()]
    likelihood = PolicyLikelihood.from_file(shipped.require(args.network), device="cpu", precision="float32")
    above = [0, 0]
    for r in rows:
        if not r.get("inferred"):
            continue
        start = time.perf_counter()
        scorer = Scorer(likelihood)
        inferred, actual = coords.sgf_to_lz(r["inferred"]), coords.sgf_to_lz(arrs[r["id"]].actual)
        seats = {s: scorer.score(turn_points(inferred, s))[1] for s in SEATS}
        seat = max(seats, key=seats.get)
        before = seats[seat]
        players = max(scorer.score(turn_points(actual, s))[1] for s in SEATS)
        rng = random.Random(f"{args.seed}-{r['id']}")
        _, after, proposals, legal, kept = climb(scorer, turn_points(inferred, seat), args.budget, rng, args.max_shift)
        above[0] += before >= players - 1e-9
        above[1] += after >= players - 1e-9
        print(
            f"{r['id']}: {before:.2f} -> {after:.2f} (players' {players:.2f}), {proposals} proposals, "
            f"{legal} legal, {kept} kept, {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    print(f"on or above the players' likelihood: {above[0]} before, {above[1]} after", file=sys.stderr)


if __name__ == "__main__":
    main()
