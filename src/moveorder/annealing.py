"""Simulated annealing over orders of play (the paper's Section 4), batched and incremental.

A *solution* for an arrangement is a sequence of its stones in which colours
alternate, Black first.  Its cost is ``1 / LGM``, the inverse of the
geometric mean of ``P(m_i | s_{i-1})`` over the sequence.  Sequences are
arrays of Leela Zero indices (:mod:`moveorder.coords`); Black's stones sit at
even positions.

Neighbours (each returns the new sequence and the range ``lo..hi`` of
positions whose move changed):

* ``swp2``: swap two stones of the same colour;
* ``mov2``: take two consecutive stones (one of each colour) and move the
  pair to another place of the same parity, so colours still alternate;
* ``rot3``: rotate three stones of the same colour;
* ``mix``: ``swp2``, ``mov2``, ``rot3`` in turn, one per iteration.

Every trial of every arrangement is one *chain*; all chains step together,
and each step sends every chain's changed positions to the network in one
call.  A move change at ``lo..hi`` alters the network input only at
positions ``lo .. hi + 7`` (the history window is 8 boards), so only those
are evaluated; a cache keyed by a position's network input (board before the
window, the last 7 moves, side to move) serves repeats.  Each chain draws
from its own generator, seeded by ``(seed, arrangement index, trial)``, so a
chain's result does not depend on which other chains share its batch.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .features import HISTORY
from .likelihood import PolicyLikelihood

NEIGHBOURS = ("swp2", "mov2", "rot3", "mix")
INITS = ("greedy", "random")
SCHEDULES = ("geometric", "linear")


@dataclass
class AnnealConfig:
    """Every choice of the search; the paper's values are the defaults (iterations: 5,000 for 20 moves)."""

    iterations: int = 5000
    trials: int = 5
    init: str = "greedy"
    neighbour: str = "mix"
    t_start: float = 1.0
    t_end: float = 0.1
    schedule: str = "geometric"
    seed: int = 0
    incremental: bool = True   # False: re-evaluate every position every iteration (the naive reference)
    cache_size: int = 500_000  # positions kept in the cache; 0 disables it

    def __post_init__(self):
        if self.neighbour not in NEIGHBOURS:
            raise ValueError(f"neighbour {self.neighbour!r}: expected one of {NEIGHBOURS}")
        if self.init not in INITS:
            raise ValueError(f"init {self.init!r}: expected one of {INITS}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule {self.schedule!r}: expected one of {SCHEDULES}")
        if self.iterations < 1 or self.trials < 1 or not self.t_start >= self.t_end > 0:
            raise ValueError("need iterations >= 1, trials >= 1 and t_start >= t_end > 0")


def temperature(cfg: AnnealConfig, t: int) -> float:
    """Temperature at iteration ``t`` (0-based): ``t_start`` at the first, ``t_end`` at the last."""
    frac = t / max(1, cfg.iterations - 1)
    if cfg.schedule == "geometric":
        return cfg.t_start * (cfg.t_end / cfg.t_start) ** frac
    return cfg.t_start + (cfg.t_end - cfg.t_start) * frac


# --- neighbours ---------------------------------------------------------------

def swp2(seq: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, int, int]:
    n = len(seq)
    colour = _colour_with(rng, n, 2)
    idx = np.arange(colour, n, 2)
    i, j = sorted(rng.choice(idx, 2, replace=False).tolist())
    new = seq.copy()
    new[i], new[j] = seq[j], seq[i]
    return new, i, j


def mov2(seq: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, int, int]:
    n = len(seq)
    k = int(rng.integers(0, n - 1))                 # the pair seq[k], seq[k + 1]
    dests = [d for d in range(k % 2, n - 1, 2) if d != k]
    if not dests:
        return seq.copy(), 0, -1
    d = int(dests[rng.integers(0, len(dests))])
    pair = seq[k:k + 2]
    rest = np.concatenate([seq[:k], seq[k + 2:]])
    new = np.concatenate([rest[:d], pair, rest[d:]])
    return new, min(k, d), max(k, d) + 1


def rot3(seq: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, int, int]:
    n = len(seq)
    colour = _colour_with(rng, n, 3)
    if colour is None:
        return swp2(seq, rng)
    idx = np.arange(colour, n, 2)
    a, b, c = rng.choice(idx, 3, replace=False).tolist()
    new = seq.copy()
    new[a], new[b], new[c] = seq[c], seq[a], seq[b]
    return new, min(a, b, c), max(a, b, c)


def _colour_with(rng: np.random.Generator, n: int, k: int) -> Optional[int]:
    """A colour (0 Black, 1 White) with at least ``k`` stones, chosen in proportion to its stones."""
    counts = [(n + 1) // 2, n // 2]
    ok = [c for c in (0, 1) if counts[c] >= k]
    if not ok:
        return None
    if len(ok) == 1:
        return ok[0]
    return 0 if rng.random() < counts[0] / n else 1


NEIGHBOUR_FUNCS = {"swp2": swp2, "mov2": mov2, "rot3": rot3}
MIX_ORDER = ("swp2", "mov2", "rot3")


def propose(name: str, t: int, seq: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, int, int]:
    """The neighbour of ``seq`` at iteration ``t``; returns (sequence, lo, hi) with lo > hi for no change."""
    if len(seq) < 3:
        return seq.copy(), 0, -1
    fn = NEIGHBOUR_FUNCS[MIX_ORDER[t % 3] if name == "mix" else name]
    return fn(seq, rng)


# --- scoring positions, with a cache --------------------------------------------

class PositionScorer:
    """Log-probabilities of the move at (sequence, position) pairs; caches per network input."""

    def __init__(self, likelihood: PolicyLikelihood, cache_size: int = 500_000, chunk: int = 64,
                 dedupe: bool = True):
        self.likelihood = likelihood
        self.cache_size = cache_size
        self.dedupe = dedupe  # False (with cache_size 0): every request goes to the network, the naive way
        self.cache: "OrderedDict[tuple, np.ndarray]" = OrderedDict()
        self.chunk = chunk
        self.requests = 0     # positions asked for
        self.hits = 0         # served from the cache
        self.evaluations = 0  # positions sent to the network

    @staticmethod
    def key(seq: Sequence[int], i: int) -> tuple:
        """What the network sees at position ``i``: stones placed before the window, the window, the mover."""
        k = max(0, i - HISTORY + 1)  # boards after k .. i moves are in the planes
        before = seq[:k]
        return (i & 1, tuple(sorted(before[0::2])), tuple(sorted(before[1::2])), tuple(seq[k:i]))

    def distributions(self, seqs: np.ndarray, pairs: List[Tuple[int, int]]) -> List[np.ndarray]:
        """For each (row of ``seqs``, position), the (362,) log-probability vector of the network."""
        if not self.dedupe:
            self.requests += len(pairs)
            rows = torch.as_tensor(np.stack([seqs[r] for r, _ in pairs]))
            return list(self._evaluate(rows, torch.as_tensor([[i] for _, i in pairs])))
        out: List[Optional[np.ndarray]] = [None] * len(pairs)
        misses: Dict[tuple, List[int]] = {}
        lists = {}
        for j, (r, i) in enumerate(pairs):
            self.requests += 1
            if r not in lists:
                lists[r] = seqs[r].tolist()
            key = self.key(lists[r], i)
            if self.cache_size and key in self.cache:
                self.cache.move_to_end(key)
                out[j] = self.cache[key]
                self.hits += 1
            else:
                misses.setdefault(key, []).append(j)
        if misses:
            firsts = [js[0] for js in misses.values()]
            rows = torch.as_tensor(np.stack([seqs[pairs[j][0]] for j in firsts]))
            pos = torch.as_tensor([[pairs[j][1]] for j in firsts])
            logp = self._evaluate(rows, pos)
            for (key, js), lp in zip(misses.items(), logp):
                for j in js:
                    out[j] = lp
                if self.cache_size:
                    self.cache[key] = lp
            while len(self.cache) > self.cache_size:
                self.cache.popitem(last=False)
        return out  # type: ignore[return-value]

    def _evaluate(self, rows: torch.Tensor, pos: torch.Tensor) -> np.ndarray:
        from .features import sequence_planes

        planes = sequence_planes(rows, pos).view(-1, 18, 19, 19)
        m = planes.shape[0]
        # Fixed-size chunks: a position's result must not depend on how many others share its call.
        pad = (-m) % self.chunk
        if pad:
            planes = torch.cat([planes, torch.zeros(pad, 18, 19, 19)])
        probs = self.likelihood.probs_of_planes(planes)[:m]
        self.evaluations += m
        return torch.log(probs.double().clamp_min(1e-30)).numpy()

    def log_probs(self, seqs: np.ndarray, pairs: List[Tuple[int, int]]) -> np.ndarray:
        """``log P(seq[i] | position i)`` for each (row, i) pair."""
        dists = self.distributions(seqs, pairs)
        return np.array([d[seqs[r][i]] for d, (r, i) in zip(dists, pairs)], dtype=np.float64)

    def sequence_log_probs(self, seqs: np.ndarray) -> np.ndarray:
        """``(C, n)`` log-probabilities of every move of every sequence."""
        C, n = seqs.shape
        pairs = [(r, i) for r in range(C) for i in range(n)]
        return self.log_probs(seqs, pairs).reshape(C, n)


# --- initial solutions ---------------------------------------------------------

def random_order(black: Sequence[int], white: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    seq = np.empty(len(black) + len(white), dtype=np.int64)
    seq[0::2] = rng.permutation(np.asarray(black, dtype=np.int64))
    seq[1::2] = rng.permutation(np.asarray(white, dtype=np.int64))
    return seq


def complete(prefix: List[int], black: Sequence[int], white: Sequence[int], n: int) -> List[int]:
    """``prefix`` followed by the unused stones, alternating: a valid sequence whose tail is arbitrary.

    Positions up to ``len(prefix)`` do not depend on the tail, so this is how a partial order is
    scored (greedy start, brute force).
    """
    used = set(prefix)
    rest = [[s for s in black if s not in used], [s for s in white if s not in used]]
    return list(prefix) + [rest[j % 2].pop(0) for j in range(len(prefix), n)]


def greedy_orders(scorer: PositionScorer, arrangements: Sequence[Tuple[Sequence[int], Sequence[int]]]
                  ) -> np.ndarray:
    """From the empty board, play the unused stone of the side to move with the highest probability.

    All arrangements advance together, one network call per move number.
    """
    n = len(arrangements[0][0]) + len(arrangements[0][1])
    left = [[sorted(b), sorted(w)] for b, w in arrangements]
    seqs = np.zeros((len(arrangements), n), dtype=np.int64)
    for i in range(n):
        for r, (b, w) in enumerate(left):
            seqs[r] = complete(seqs[r, :i].tolist(), b, w, n)
        dists = scorer.distributions(seqs, [(r, i) for r in range(len(arrangements))])
        for r, d in enumerate(dists):
            pool = left[r][i % 2]
            best = max(pool, key=lambda s: (d[s], -s))
            pool.remove(best)
            seqs[r, i] = best
    return seqs


# --- the annealer --------------------------------------------------------------

@dataclass
class ChainResult:
    best: np.ndarray
    best_log_likelihood: float
    accepted: int = 0


@dataclass
class AnnealStats:
    """Work counters over one or more :func:`anneal` calls (batches)."""

    iterations: int = 0         # iterations, summed over batches
    chains: int = 0             # chains, summed over batches
    requests: int = 0           # positions scored (filled in by the caller from its scorer)
    hits: int = 0               # of which served by the cache
    evaluations: int = 0        # positions the network evaluated
    naive_evaluations: int = 0  # what re-evaluating every position of every proposal would cost
    seconds: float = 0.0


def lgm(log_likelihood: float, n: int) -> float:
    """Geometric mean of the per-move likelihoods."""
    return math.exp(log_likelihood / n)


def anneal(scorer: PositionScorer, arrangements: Sequence[Tuple[Sequence[int], Sequence[int]]],
           cfg: AnnealConfig, indices: Optional[Sequence[int]] = None,
           stats: Optional[AnnealStats] = None) -> List[List[ChainResult]]:
    """Run ``cfg.trials`` chains per arrangement; return, per arrangement, each trial's best solution.

    ``arrangements``: (black stones, white stones) as Leela Zero indices, all
    of one length.  ``indices``: each arrangement's index in its set, which
    seeds its chains (default 0..len-1).
    """
    import time

    t0 = time.time()
    indices = list(range(len(arrangements))) if indices is None else list(indices)
    lengths = {len(b) + len(w) for b, w in arrangements}
    if len(lengths) != 1:
        raise ValueError(f"arrangements of different lengths in one batch: {sorted(lengths)}")
    n = lengths.pop()
    for b, w in arrangements:
        if len(b) - len(w) not in (0, 1):
            raise ValueError(f"{len(b)} black and {len(w)} white stones cannot alternate with Black first")
    rngs = [np.random.default_rng([cfg.seed, idx, trial]) for idx in indices for trial in range(cfg.trials)]
    if cfg.init == "greedy":
        start = np.repeat(greedy_orders(scorer, arrangements), cfg.trials, axis=0)
    else:
        start = np.stack([random_order(b, w, rngs[a * cfg.trials + k])
                          for a, (b, w) in enumerate(arrangements) for k in range(cfg.trials)])
    seqs = start.copy()
    C = len(seqs)
    logp = scorer.sequence_log_probs(seqs)
    cost = np.exp(-logp.mean(1))
    best = seqs.copy()
    best_ll = logp.sum(1)
    accepted = np.zeros(C, dtype=np.int64)
    naive = 0
    for t in range(cfg.iterations):
        temp = temperature(cfg, t)
        proposals, ranges = [], []
        for c in range(C):
            new, lo, hi = propose(cfg.neighbour, t, seqs[c], rngs[c])
            proposals.append(new)
            ranges.append((lo, hi))
        prop = np.stack(proposals)
        new_logp = logp.copy()
        if cfg.incremental:
            pairs = [(c, i) for c, (lo, hi) in enumerate(ranges) if lo <= hi
                     for i in range(lo, min(n - 1, hi + HISTORY - 1) + 1)]
            if pairs:
                vals = scorer.log_probs(prop, pairs)
                rows, cols = zip(*pairs)
                new_logp[list(rows), list(cols)] = vals
        else:
            new_logp = scorer.sequence_log_probs(prop)
        naive += C * n
        new_cost = np.exp(-new_logp.mean(1))
        for c in range(C):
            lo, hi = ranges[c]
            u = rngs[c].random()
            if lo > hi:
                continue
            d = new_cost[c] - cost[c]
            if d <= 0 or u < math.exp(-d / temp):
                seqs[c], logp[c], cost[c] = prop[c], new_logp[c], new_cost[c]
                accepted[c] += 1
                ll = logp[c].sum()
                if ll > best_ll[c]:
                    best[c], best_ll[c] = seqs[c].copy(), ll
    if stats is not None:
        stats.iterations += cfg.iterations
        stats.chains += C
        stats.naive_evaluations += naive
        stats.seconds += time.time() - t0
    out = []
    for a in range(len(arrangements)):
        out.append([ChainResult(best[a * cfg.trials + k], float(best_ll[a * cfg.trials + k]),
                                int(accepted[a * cfg.trials + k])) for k in range(cfg.trials)])
    return out


def brute_force(scorer: PositionScorer, black: Sequence[int], white: Sequence[int]) -> Tuple[np.ndarray, float]:
    """The exact most likely order, by searching every order (|B|! x |W|! of them; keep it small).

    Breadth-first over prefixes: one network distribution per distinct
    prefix scores every way to extend it, so shared prefixes cost once.
    """
    n = len(black) + len(white)
    level = [((), 0.0)]  # (prefix, its log-likelihood)
    for i in range(n):
        seqs = np.empty((len(level), n), dtype=np.int64)
        for r, (prefix, _) in enumerate(level):
            seqs[r] = complete(list(prefix), black, white, n)
        dists = scorer.distributions(seqs, [(r, i) for r in range(len(level))])
        nxt = []
        for (prefix, ll), d in zip(level, dists):
            for s in (black if i % 2 == 0 else white):
                if s not in prefix:
                    nxt.append((prefix + (s,), ll + float(d[s])))
        level = nxt
    seq, ll = max(level, key=lambda x: x[1])
    return np.array(seq, dtype=np.int64), ll
