"""The exact most likely order of play: branch and bound over merged prefixes, depth by depth.

This module owns the exact optimum, the yardstick that says how far each
search method (beam, annealing, beam+anneal) is from the true best order.
:func:`brute_force` is the reference it must agree with:
the merged breadth-first search over every order
(:func:`moveorder.search.beam.beam_search` with no width limit).

Why it is exact
---------------
The log-likelihood of an order is ``log P(m_1|s_0) + ... + log P(m_n|s_{n-1})``
and every term is ``<= 0``.  So a prefix's log-likelihood ``g`` is an upper
bound on the log-likelihood of every order that starts with it.  An
*incumbent* (the best order of a beam search, by default of width 64, ranked
with the estimate of the stones still to play) has a
log-likelihood ``L <= optimum``; a prefix with ``g < L`` cannot start an order
better than the incumbent and is dropped (pruned), and nothing else is.
Every prefix of an optimal order has ``g >= optimum >= L``, so it is never
pruned, and the search returns the optimum.

Prefixes that give the network the same input at the next move (same stones
before the history window, same last moves, same side to move: the keys of
:class:`moveorder.nets.likelihood.InputHasher`) have the same remaining stones and
the same likelihood for every continuation, so of each such group only the
most likely is kept, as the breadth-first search does.

The prefixes kept are exactly the breadth-first search's with ``g >= L``,
in the same order, so ties go the same way: the result is the breadth-first
search's order, not just its value.

The bound on the remaining terms is 0.  A tighter admissible one (say, the
best term any position of a later move number can give) would need the
network's output at the positions still to come, which is what the search is
trying not to evaluate; maxima over the positions evaluated so far are not
bounds for the others.  So what is expanded is what uniform-cost search
would expand, every merged prefix with ``g >= L``: how much that prunes
depends on the network.  With the quick run's trained 4x32 network on 30 Pro
12-stone arrangements (``bench/exact.py``) it evaluated 16,633 prefixes per
arrangement on average (at most 72,588) of the breadth-first search's
839,923, 13 s each on one CPU thread; with the untrained fixture network
(every order's LGM near 1/361) it prunes almost nothing.

The search goes depth by depth: all kept prefixes of a depth are evaluated
in one batched call of the evaluator (in chunks of ``chunk`` prefixes, which
bounds memory), as the beam search does, so it runs on any device.  Complete
orders appear only at the last depth; the incumbent is replaced there if one
beats it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

import torch

from moveorder.nets.features import PAD
from moveorder.nets.likelihood import InputHasher, PositionEvaluator
from moveorder.search.beam import beam_search, expand, merge_transpositions, stone_tensors
from moveorder.settings import SearchConfig

Arrangement = Tuple[Sequence[int], Sequence[int]]  # (black stones, white stones) as Leela Zero indices

#: Slack on the pruning test (``g < L - TOLERANCE``): float64 sums of the same terms agree exactly,
#: but a float32 probability may round a hair above 1; this keeps such a prefix.
TOLERANCE = 1e-9


@dataclass
class ExactStats:
    """What one arrangement's exact solve cost."""

    prefixes: int = 0  # prefixes evaluated (one position each), the incumbent's beam not included
    evaluations: int = 0  # positions the network evaluated, the incumbent's beam included
    incumbent_evaluations: int = 0  # of which by the incumbent's beam search
    incumbent_log_likelihood: float = -math.inf
    incumbent_optimal: bool = False  # the beam's order was already an optimum
    seconds: float = 0.0
    per_depth: List[int] = field(default_factory=list)  # prefixes evaluated at each move number


def exact_orders(
    evaluator: PositionEvaluator,
    arrangements: Sequence[Arrangement],
    incumbent_width: int = 64,
    chunk: int = 8192,
    incumbent_future: float = SearchConfig.beam_future,
) -> List[Tuple[List[int], float, ExactStats]]:
    """The most likely order of each arrangement, its log-likelihood, and what finding it cost.

    ``incumbent_width``: width of the beam search whose best order is the first incumbent
    (0: none, so nothing is pruned and this is the full merged breadth-first search);
    ``incumbent_future``: that beam's weight of the estimate of the stones still to play
    (:func:`moveorder.search.beam.beam_search`).  Arrangements are solved one after another; each
    one's search is batched over its prefixes.
    """
    return [solve(evaluator, black, white, incumbent_width, chunk, incumbent_future) for black, white in arrangements]


def solve(
    evaluator: PositionEvaluator,
    black: Sequence[int],
    white: Sequence[int],
    incumbent_width: int = 64,
    chunk: int = 8192,
    incumbent_future: float = SearchConfig.beam_future,
) -> Tuple[List[int], float, ExactStats]:
    """One arrangement: see :func:`exact_orders`."""
    t0 = time.perf_counter()
    stats = ExactStats()
    before = evaluator.evaluations
    device = evaluator.device
    incumbent, bound = None, -math.inf
    if incumbent_width:
        ((incumbent, bound),) = beam_search(
            evaluator, [(black, white)], width=incumbent_width, future=incumbent_future
        )[0]
        stats.incumbent_log_likelihood = bound
    stats.incumbent_evaluations = evaluator.evaluations - before
    b, w = stone_tensors([(black, white)], device)
    stone_rows = (b[0], w[0])
    n = b.shape[1] + w.shape[1]
    hasher = InputHasher(device)
    seqs = torch.full((1, n), PAD, dtype=torch.long, device=device)
    ll = torch.zeros(1, dtype=torch.float64, device=device)
    owner = torch.zeros(1, dtype=torch.long, device=device)  # one arrangement: merge groups by owner
    for i in range(n):
        stones = stone_rows[i % 2]
        stats.per_depth.append(len(seqs))
        stats.prefixes += len(seqs)
        kept_seqs, kept_ll = [], []
        for k in range(0, len(seqs), chunk):
            part = seqs[k : k + chunk]
            child, child_ll = expand(
                evaluator, part, ll[k : k + chunk], stones.expand(len(part), -1), i, bound - TOLERANCE
            )[:2]
            kept_seqs.append(child)
            kept_ll.append(child_ll)
        seqs, ll = torch.cat(kept_seqs), torch.cat(kept_ll)
        if not len(seqs):
            break
        if i + 1 < n:
            seqs, ll, _ = merge_transpositions(hasher, seqs, ll, owner.expand(len(seqs)), i + 1)
    stats.evaluations = evaluator.evaluations - before
    if len(seqs):
        best = int(torch.argmax(ll))  # the first maximum, as the breadth-first search's stable sort takes
        order, value = seqs[best].tolist(), float(ll[best])
    else:  # only if the incumbent's own prefixes were dropped: floats disagreeing beyond TOLERANCE
        order, value = incumbent, bound
    if incumbent is not None:
        stats.incumbent_optimal = stats.incumbent_log_likelihood >= value
    stats.seconds = time.perf_counter() - t0
    return order, value, stats


def brute_force(evaluator: PositionEvaluator, black: Sequence[int], white: Sequence[int]) -> Tuple[List[int], float]:
    """The exact most likely order and its log-likelihood by the merged breadth-first search over every
    order (:func:`moveorder.search.beam.beam_search` with no width limit): :func:`solve`'s test oracle."""
    ((seq, ll),) = beam_search(evaluator, [(black, white)], width=None)[0]
    return seq, ll
