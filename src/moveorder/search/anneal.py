"""Simulated annealing over orders of play (the paper's Section 4), with every chain a row of a tensor.

A *solution* for an arrangement is a sequence of its stones in which colours
alternate, Black first.  Its cost is ``1 / LGM``, the inverse of the
geometric mean of ``P(m_i | s_{i-1})`` over the sequence.  Sequences are rows
of Leela Zero indices (:mod:`moveorder.go.coords`); Black's stones sit at even
positions.

Neighbours (each gives, per chain, a permutation of positions and the range
``lo .. hi`` of positions whose move changed; ``lo > hi`` for no change):

* ``swp2``: swap two stones of the same colour;
* ``mov2``: take two consecutive stones (one of each colour) and move the
  pair to another place of the same parity, so colours still alternate;
* ``rot3``: rotate three stones of the same colour;
* ``mix``: ``swp2``, ``mov2``, ``rot3`` in turn, one per iteration.

Every trial of every arrangement is one *chain*; all chains of a job live on
the network's device as one ``(chains, n)`` tensor and step together: each
iteration draws every chain's neighbour with tensor operations, evaluates
the positions whose network input or move changed (``lo .. hi + 7``: the
history window is 8 boards) through
:class:`moveorder.nets.likelihood.PositionEvaluator`, and accepts or rejects all
chains at once.  There is no Python loop over chains.

Randomness is counter-based: every draw is a hash of (seed, arrangement
index, trial, iteration, draw number), computed with integer tensor ops, so a
chain gives the same draws alone or in a batch of any size, on any device.
"""

from __future__ import annotations

import time
from typing import List, Optional, Sequence, Tuple

import torch

from moveorder.nets.features import HISTORY, PAD
from moveorder.nets.likelihood import PositionEvaluator
from moveorder.search.beam import beam_search, stone_tensors
from moveorder.search.problem import Order, SearchStats, counters
from moveorder.settings import MIX_ORDER, SearchConfig, temperature

Arrangement = Tuple[Sequence[int], Sequence[int]]  # (black stones, white stones) as Leela Zero indices


# --- counter-based randomness --------------------------------------------------------

M32 = 0xFFFFFFFF
DRAWS = 8  # counter values reserved per iteration (5 used)
INIT_STREAM = 1 << 31  # counters of the random start


def mix32(x):
    """A 32-bit integer hash (Wellons' lowbias32) of ints or int64 tensors holding 32-bit values."""
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & M32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & M32
    return x ^ (x >> 16)


def chain_keys(seed: int, index: int, trial: int) -> Tuple[int, int]:
    """The two 32-bit keys of a chain: a function of (seed, arrangement index, trial) alone."""
    k = mix32(mix32(mix32(mix32(seed & M32) ^ ((seed >> 32) & M32)) ^ (index & M32)) ^ (trial & M32))
    return k, mix32(k ^ 0x9E3779B9)


class ChainRandom:
    """Uniform 32-bit draws for many chains: ``draws(i)[c, j]`` depends on chain ``c``'s keys, ``i`` and
    ``j`` only."""

    def __init__(self, keys: Sequence[Tuple[int, int]], device):
        k = torch.tensor(keys, dtype=torch.int64, device=device).view(-1, 2)
        self.k1, self.k2 = k[:, :1], k[:, 1:]
        self.device = device

    def at(self, counters: torch.Tensor) -> torch.Tensor:
        """``(C, K)`` draws for ``(K,)`` counters."""
        return mix32(mix32((self.k1 + counters[None, :]) & M32) ^ self.k2)

    def draws(self, iteration: int) -> torch.Tensor:
        """``(C, 5)`` draws of iteration ``iteration``: four for the neighbour, one for acceptance."""
        return self.at(torch.arange(iteration * DRAWS, iteration * DRAWS + 5, device=self.device))


def below(draw: torch.Tensor, bound) -> torch.Tensor:
    """A draw (32 bits) -> an integer in ``0 .. bound - 1`` (``bound`` an int or a tensor)."""
    return (draw * bound) >> 32


def uniform(draw: torch.Tensor) -> torch.Tensor:
    """A draw -> a float64 in (0, 1)."""
    return (draw.double() + 0.5) * 2.0**-32


# --- neighbours, for all chains at once -----------------------------------------------


def _colour(draws: torch.Tensor, n: int, at_least: int) -> Optional[torch.Tensor]:
    """Per chain, a colour (0 Black, 1 White) with at least ``at_least`` stones, in proportion to its stones."""
    counts = ((n + 1) // 2, n // 2)
    ok = [c for c in (0, 1) if counts[c] >= at_least]
    if not ok:
        return None
    if len(ok) == 1:
        return torch.full_like(draws, ok[0])
    return (below(draws, n) >= counts[0]).long()


def _scatter_perm(
    chains: int, n: int, device, targets: List[torch.Tensor], sources: List[torch.Tensor]
) -> torch.Tensor:
    perm = torch.arange(n, device=device).repeat(chains, 1)
    for target, source in zip(targets, sources):
        perm.scatter_(1, target[:, None], source[:, None])
    return perm


def swp2(n: int, draws: torch.Tensor):
    colour = _colour(draws[:, 0], n, 2)
    m = torch.where(colour == 0, (n + 1) // 2, n // 2)
    i = below(draws[:, 1], m)
    j = below(draws[:, 2], m - 1)
    j = j + (j >= i)
    p, q = colour + 2 * i, colour + 2 * j
    return _scatter_perm(len(draws), n, draws.device, [p, q], [q, p]), torch.minimum(p, q), torch.maximum(p, q)


def rot3(n: int, draws: torch.Tensor):
    colour = _colour(draws[:, 0], n, 3)
    if colour is None:
        return swp2(n, draws)
    m = torch.where(colour == 0, (n + 1) // 2, n // 2)
    a = below(draws[:, 1], m)
    b = below(draws[:, 2], m - 1)
    b = b + (b >= a)
    x, y = torch.minimum(a, b), torch.maximum(a, b)
    c = below(draws[:, 3], m - 2)
    c = c + (c >= x)
    c = c + (c >= y)
    pa, pb, pc = colour + 2 * a, colour + 2 * b, colour + 2 * c
    perm = _scatter_perm(len(draws), n, draws.device, [pa, pb, pc], [pc, pa, pb])  # new[a], new[b], new[c] = c, a, b
    return perm, torch.minimum(torch.minimum(pa, pb), pc), torch.maximum(torch.maximum(pa, pb), pc)


def mov2(n: int, draws: torch.Tensor):
    k = below(draws[:, 0], n - 1)  # the pair at k, k + 1
    parity = k % 2
    places = (n - parity) // 2  # starts of the same parity: parity, parity + 2, ... <= n - 2
    e = below(draws[:, 1], (places - 1).clamp(min=1))
    di = e + (e >= k // 2)  # skip k itself
    d = parity + 2 * di
    moved = places > 1
    j = torch.arange(n, device=draws.device)[None, :]
    K, D = k[:, None], d[:, None]
    earlier = torch.where(j < D, j, torch.where(j < D + 2, K + j - D, torch.where(j <= K + 1, j - 2, j)))
    later = torch.where(j < K, j, torch.where(j < D, j + 2, torch.where(j < D + 2, K + j - D, j)))
    perm = torch.where(D < K, earlier, later)
    perm = torch.where(moved[:, None], perm, j.expand_as(perm))
    lo = torch.where(moved, torch.minimum(k, d), torch.zeros_like(k))
    hi = torch.where(moved, torch.maximum(k, d) + 1, torch.full_like(k, -1))
    return perm, lo, hi


NEIGHBOUR_FUNCS = {"swp2": swp2, "mov2": mov2, "rot3": rot3}


def neighbour_kind(name: str, iteration: int) -> str:
    return MIX_ORDER[iteration % 3] if name == "mix" else name


def propose(name: str, iteration: int, seqs: torch.Tensor, draws: torch.Tensor):
    """Every chain's neighbour at ``iteration``: (sequences, lo, hi); ``lo > hi`` where nothing changed."""
    C, n = seqs.shape
    if n < 3:
        return (
            seqs.clone(),
            torch.zeros(C, dtype=torch.long, device=seqs.device),
            torch.full((C,), -1, dtype=torch.long, device=seqs.device),
        )
    perm, lo, hi = NEIGHBOUR_FUNCS[neighbour_kind(name, iteration)](n, draws)
    return seqs.gather(1, perm), lo, hi


# --- initial solutions --------------------------------------------------------------------


def interleave(black: torch.Tensor, white: torch.Tensor) -> torch.Tensor:
    seqs = torch.empty(len(black), black.shape[1] + white.shape[1], dtype=torch.long, device=black.device)
    seqs[:, 0::2], seqs[:, 1::2] = black, white
    return seqs


def random_orders(rand: ChainRandom, black: torch.Tensor, white: torch.Tensor) -> torch.Tensor:
    """Each chain's stones in a random order of its own (black and white rows, one per chain)."""
    nb = black.shape[1]
    keys = rand.at(torch.arange(INIT_STREAM, INIT_STREAM + nb + white.shape[1], device=black.device))
    b = black.gather(1, torch.argsort(keys[:, :nb], dim=1, stable=True))
    w = white.gather(1, torch.argsort(keys[:, nb:], dim=1, stable=True))
    return interleave(b, w)


def greedy_orders(evaluator: PositionEvaluator, black: torch.Tensor, white: torch.Tensor) -> torch.Tensor:
    """From the empty board, play the unused stone of the side to move with the highest probability.

    All arrangements advance together, one network call per move number; ties go to the lower index.
    """
    A, n = len(black), black.shape[1] + white.shape[1]
    seqs = torch.full((A, n), PAD, dtype=torch.long, device=black.device)
    used = [torch.zeros_like(black, dtype=torch.bool), torch.zeros_like(white, dtype=torch.bool)]
    rows = torch.arange(A, device=black.device)
    for i in range(n):
        stones = black if i % 2 == 0 else white
        probs = evaluator.probs(seqs, rows, torch.full_like(rows, i))
        cand = probs.gather(1, stones).masked_fill(used[i % 2], -1.0)
        pick = torch.argmax(cand, dim=1)  # the first maximum: stones are sorted, so the lower index
        seqs[:, i] = stones[rows, pick]
        used[i % 2][rows, pick] = True
    return seqs


def beam_starts(
    evaluator: PositionEvaluator, arrangements: Sequence[Arrangement], width: int, trials: int, future: float
) -> torch.Tensor:
    """``(A * trials, n)``: each arrangement's ``trials`` best beam orders, one a trial (the last repeated
    where the beam holds fewer)."""
    found = beam_search(evaluator, arrangements, width=width, keep=trials, future=future)
    return torch.tensor(
        [orders[min(k, len(orders) - 1)][0] for orders in found for k in range(trials)], dtype=torch.long
    )


# --- the annealer ---------------------------------------------------------------------------


def anneal(
    evaluator: PositionEvaluator,
    arrangements: Sequence[Arrangement],
    cfg: SearchConfig,
    indices: Optional[Sequence[int]] = None,
    stats: Optional[SearchStats] = None,
    progress=None,
) -> List[List[Order]]:
    """Run ``cfg.trials`` chains per arrangement; return, per arrangement, each trial's best solution.

    ``arrangements``: (black stones, white stones) as Leela Zero indices, all
    of one length.  ``indices``: each arrangement's index in its set, which
    keys its chains' randomness (default 0..len-1).  ``progress``: anything
    with ``update(k)`` (a tqdm bar), told of every iteration.  ``cfg.init``
    chooses the chains' start: greedy, random, or the beam's orders (method
    beam+anneal).  The beam alone is :func:`moveorder.search.dispatch.run`'s choice,
    never this function's.
    """
    t0 = time.perf_counter()
    before = counters(evaluator)
    if arrangements:
        cfg = cfg.for_length(len(arrangements[0][0]) + len(arrangements[0][1]))
    device = evaluator.device
    indices = list(range(len(arrangements))) if indices is None else list(indices)
    black, white = stone_tensors(arrangements, device)
    T = cfg.trials
    rand = ChainRandom([chain_keys(cfg.seed, idx, k) for idx in indices for k in range(T)], device)
    if cfg.init == "greedy":
        seqs = greedy_orders(evaluator, black, white).repeat_interleave(T, dim=0)
    elif cfg.init == "beam":
        seqs = beam_starts(evaluator, arrangements, cfg.beam_width, T, cfg.beam_future).to(device)
    else:
        seqs = random_orders(rand, black.repeat_interleave(T, dim=0), white.repeat_interleave(T, dim=0))
    C, n = seqs.shape
    logp = evaluator.sequence_log_probs(seqs)
    cost = torch.exp(-logp.mean(1))
    best, best_ll = seqs.clone(), logp.sum(1)
    accepted = torch.zeros(C, dtype=torch.long, device=device)
    positions = torch.arange(n, device=device)[None, :]
    for iteration in range(cfg.iterations):
        draws = rand.draws(iteration)
        prop, lo, hi = propose(cfg.neighbour, iteration, seqs, draws)
        changed = lo <= hi
        if cfg.incremental:
            window = (positions >= lo[:, None]) & (positions <= hi[:, None] + HISTORY - 1) & changed[:, None]
            rows, cols = window.nonzero(as_tuple=True)
            new_logp = logp.clone()
            new_logp.view(-1).index_copy_(0, rows * n + cols, evaluator.log_probs(prop, rows, cols))
        else:
            new_logp = evaluator.sequence_log_probs(prop)
        new_cost = torch.exp(-new_logp.mean(1))
        d = new_cost - cost
        accept = changed & ((d <= 0) | (uniform(draws[:, 4]) < torch.exp(-d / temperature(cfg, iteration))))
        seqs = torch.where(accept[:, None], prop, seqs)
        logp = torch.where(accept[:, None], new_logp, logp)
        cost = torch.where(accept, new_cost, cost)
        accepted += accept
        ll = logp.sum(1)
        better = accept & (ll > best_ll)
        best = torch.where(better[:, None], seqs, best)
        best_ll = torch.where(better, ll, best_ll)
        if progress is not None:
            progress.update(1)
    if stats is not None:
        stats.iterations += cfg.iterations
        stats.chains += C
        stats.chain_iterations += C * cfg.iterations
        stats.naive_evaluations += C * n * (cfg.iterations + 1)
        stats.seconds += time.perf_counter() - t0
        stats.add_evaluator(evaluator, before)
    best, best_ll, accepted = best.cpu().tolist(), best_ll.cpu().tolist(), accepted.cpu().tolist()
    return [
        [Order(best[a * T + k], best_ll[a * T + k], accepted[a * T + k]) for k in range(T)]
        for a in range(len(arrangements))
    ]


def distinct_orders(results: Sequence[Order], keep: int) -> List[Tuple[List[int], float]]:
    """The ``keep`` likeliest distinct orders among ``results`` (an arrangement's trials, or the beam's
    orders), best first, with their log-likelihoods; fewer where fewer are distinct.

    Ties go to the earlier result, so the first is the order :func:`max` over the results gives.
    """
    out: List[Tuple[List[int], float]] = []
    seen = set()
    for r in sorted(results, key=lambda r: -r.log_likelihood):  # stable: ties keep their order
        if tuple(r.moves) not in seen and len(out) < keep:
            seen.add(tuple(r.moves))
            out.append((list(r.moves), r.log_likelihood))
    return out
