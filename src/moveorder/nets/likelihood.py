"""The likelihood of move sequences under a human-move policy network: the one path to ``log P(m | s)``.

Everything that needs the probability of a move (annealing, the greedy start,
the exact solver, the actual sequences' LGMs, the one-position tool) goes
through :meth:`PolicyLikelihood.probs_of_codes`: network input (position
codes, :mod:`moveorder.nets.features`) -> planes -> network -> softmax over all 362
outputs (the paper's definition), optionally averaged over the 8 symmetries,
and with ``legal_only=True`` renormalised over the empty points and pass.

:class:`PositionEvaluator` serves (sequence, position) pairs on the network's
device: it hashes each pair's network input (64-bit Zobrist-style keys built
from the sequence with a few gathers), merges pairs with the same input,
serves repeats from a direct-mapped cache of distributions (as KataGo's
neural-net cache does: slot = key's low bits, the full key kept to verify),
and sends only the rest to the network.  The cache changes speed, never
results: a position's output does not depend on which other positions share
its network batch (batches have one fixed size, padded).

The model behind it is any file :func:`moveorder.nets.networks.load_policy` reads: a Leela Zero
weights file (``.txt``, ``.txt.gz``, ``.zip``; the paper's ``best_v1``) or
a checkpoint (``.pt``) from :mod:`moveorder.nets.train`.
"""

from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch

from moveorder.go import coords
from moveorder.go.coords import MOVES, POINTS
from moveorder.nets import devices
from moveorder.nets.features import HISTORY, PAD, PLANES, planes_from_codes, position_codes, sequence_planes
from moveorder.nets.networks import FusedPolicy, LeelaNet, load_policy, policy_probs
from moveorder.settings import CACHE_SLOTS, PRECISIONS

logger = logging.getLogger(__name__)

#: Positions a network call holds on a CPU: batches of 64 run fastest (bench/networks.py: 2x faster than 512
#: for 4x32).
CPU_BATCH = 64
#: On a GPU (docs/benchmarks.md, "The GPU path"): one size, so results do not depend on batching, and near
#: where a card fills for our 4x32 networks.  A call of the one-position tool asks 69-112 positions (median,
#: 20 and 40 stones) and one of infer-set's SA chunks 1,300-2,100: 1,024 padded 89-93% and 24-36% of them,
#: 256 pads 57-74% and 7-10%.  Not measured on a GPU yet: bench/gpu_check.py times 64-1,024.
GPU_BATCH = 256


def default_device() -> str:
    """A GPU when torch sees one, else the CPU (warning when the job was given a GPU torch cannot use)."""
    return str(devices.resolve(None))


def default_cache_size(device) -> int:
    """The cache pays on a CPU (a hit saves a ~0.4 ms evaluation, an insert costs ~2 us); on a GPU
    an evaluation costs about what an insert does, and no measurement says it pays: none there."""
    return CACHE_SLOTS if torch.device(device).type == "cpu" else 0


class PolicyLikelihood:
    """``P(move | position)`` from a policy network, on one device, at one precision."""

    def __init__(
        self,
        net: LeelaNet,
        device: Optional[str] = None,
        average_symmetries: bool = False,
        legal_only: bool = False,
        max_batch: Optional[int] = None,
        precision: str = "float32",
    ):
        self.device = devices.resolve(device)
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: expected one of {PRECISIONS}")
        if precision == "tf32" and self.device.type != "cuda":
            raise ValueError(f"precision tf32 needs a CUDA device, not {self.device}")
        if precision == "bfloat16" and self.device.type == "cuda" and not devices.native_bfloat16(self.device):
            logger.warning("precision bfloat16 on %s: emulated there, slower than float32", self.device)
        self.precision = precision
        # Channels-last: 1.12-1.16x more evaluations per second on a CPU (bench/networks.py).
        self.net = net.to(self.device, memory_format=torch.channels_last).eval()
        # float32 on a CPU: the policy path with batch norm folded in (measured there; on a GPU and
        # under bfloat16 autocast the module itself, as before).
        fused = self.device.type == "cpu" and precision == "float32"
        self._policy = FusedPolicy(self.net) if fused else self.net
        self.average_symmetries = average_symmetries
        self.legal_only = legal_only
        self.max_batch = max_batch or (CPU_BATCH if self.device.type == "cpu" else GPU_BATCH)
        self.evaluations = 0  # positions evaluated by the network so far
        self.seconds = 0.0  # wall time spent in the network (planes, forward pass, softmax)
        # On a GPU a call returns once its work is queued; waiting for it costs a host sync a call, so
        # `seconds` counts the queueing only, unless a benchmark asks for the wait.
        self.sync_timing = self.device.type != "cuda"
        #: Called before each network call with the positions it evaluates; it may raise to stop the
        #: search there (the page's worker counts progress and cancels through it).  None: nothing.
        self.on_batch: Optional[Callable[[int], None]] = None

    @classmethod
    def from_file(cls, path: Path, **kw) -> "PolicyLikelihood":
        return cls(load_policy(path), **kw)

    def _autocast(self):
        if self.precision == "bfloat16":
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    @torch.no_grad()
    def probs_of_planes(self, planes: torch.Tensor) -> torch.Tensor:
        """``(M, 18, 19, 19)`` planes -> ``(M, 362)`` float32 softmax of the network, as the network gives it.

        Batches always hold ``max_batch`` positions (the last one padded), so a position's output
        does not depend on how many others are evaluated with it.
        """
        m = planes.shape[0]
        pad = (-m) % self.max_batch
        if pad:
            planes = torch.cat([planes, planes.new_zeros((pad, *planes.shape[1:]))])
        out = []
        # TF32 only for precision tf32, set for this call alone (another likelihood may want other arithmetic).
        with devices.arithmetic(tf32=self.precision == "tf32"), self._autocast():
            for k in range(0, m + pad, self.max_batch):
                if self.on_batch is not None:
                    self.on_batch(min(self.max_batch, m - k))
                chunk = planes[k : k + self.max_batch].to(self.device).contiguous(memory_format=torch.channels_last)
                out.append(policy_probs(self._policy, chunk, self.average_symmetries).float())
        self.evaluations += m
        return torch.cat(out)[:m] if out else torch.empty(0, MOVES, device=self.device)

    @torch.no_grad()
    def probs_at(self, sequences: torch.Tensor, rows: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``(M, 362)`` float32 ``P(move | position)`` at the positions ``(sequences[rows[k]], positions[k])``.

        The one path to the likelihood: network input (position codes), planes, the network's
        softmax over all 362 outputs, with ``legal_only`` divided by its mass on the empty points
        and pass.  Building the input is timed with the network (``seconds``): it is work per
        evaluated position, like the forward pass.
        """
        t0 = time.perf_counter()
        probs = self.probs_of_codes(position_codes(sequences, rows, positions))
        if self.sync_timing:
            devices.synchronize(self.device)
        self.seconds += time.perf_counter() - t0
        return probs

    @torch.no_grad()
    def probs_of_codes(self, codes: torch.Tensor) -> torch.Tensor:
        """``(M, 362)`` position codes -> ``(M, 362)`` float32 ``P(move | position)`` (see :meth:`probs_at`)."""
        m = len(codes)
        pad = (-m) % self.max_batch  # padded here, where a row is 362 bytes, not 26 kB of planes
        padded = torch.cat([codes, codes.new_zeros(pad, MOVES)]) if pad else codes
        probs = self.probs_of_planes(planes_from_codes(padded))[:m]
        self.evaluations -= pad
        if self.legal_only:
            probs = legal_renormalised(probs, codes[:, :POINTS] == 0)
        return probs

    @torch.no_grad()
    def log_probs(self, sequences: torch.Tensor, positions: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``(B, n)`` sequences -> ``(B, P)`` float64 log-probabilities of the move at each position.

        ``positions`` ``(B, P)`` picks the moves to score (default: all ``n``).  No cache: for a
        few sequences; the search uses :class:`PositionEvaluator`.
        """
        sequences = sequences.to(self.device)
        B, n = sequences.shape
        if positions is None:
            positions = torch.arange(n, device=self.device).expand(B, n)
        positions = positions.to(self.device)
        rows = torch.arange(B, device=self.device).repeat_interleave(positions.shape[1])
        flat = positions.reshape(-1)
        probs = self.probs_at(sequences, rows, flat)
        p = probs.gather(1, sequences[rows, flat][:, None]).squeeze(1)
        return log(p).view(B, -1).cpu()


def legal_renormalised(probs: torch.Tensor, empty: torch.Tensor) -> torch.Tensor:
    """``(M, 362)`` probabilities divided by their mass on the legal moves: the empty points
    (``empty``, ``(M, 361)`` bool, Leela Zero order) and pass (``legal_only``)."""
    legal = torch.ones_like(probs, dtype=torch.bool)
    legal[:, :POINTS] = empty
    return probs / (probs * legal).sum(1, keepdim=True)


def log(p: torch.Tensor) -> torch.Tensor:
    """float32 probabilities -> float64 log-probabilities (floored at 1e-30): how every sum is taken."""
    return torch.log(p.double().clamp_min(1e-30))


# --- hashing network inputs ------------------------------------------------------------


def _random_int64(shape, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-(1 << 63), (1 << 63) - 1, shape, generator=g, dtype=torch.int64)


class InputHasher:
    """64-bit keys of network inputs: positions with the same input get the same key.

    The input at position ``i`` of a capture-free sequence is the set of stones placed before
    move ``i - 7`` (with their colours), the moves ``i - 7 .. i - 1`` in order, and the side to
    move.  Key = sum (mod 2^64) of a random number per earlier stone and colour (prefix sums,
    so one gather), one per (age, point) of the window, and one for the side.
    """

    WINDOW = HISTORY - 1  # moves shown individually; older stones are a set

    def __init__(self, device):
        self.stone = _random_int64((2, MOVES), 0x5EED1).to(device)  # colour x point
        self.window = _random_int64((self.WINDOW, MOVES + 1), 0x5EED2).to(device)  # age x point or none
        self.side = _random_int64((2,), 0x5EED3).to(device)
        self.device = device
        self.ages = torch.arange(self.WINDOW, device=device)
        self.age_offsets = self.ages * (MOVES + 1)

    def prefix(self, sequences: torch.Tensor) -> torch.Tensor:
        """``(B, n + 1)``: column ``k`` is the key part of the first ``k`` moves as a set."""
        B, n = sequences.shape
        colour = (torch.arange(n, device=sequences.device) % 2) * MOVES
        vals = self.stone.view(-1).take(sequences + colour)
        return torch.cat([vals.new_zeros(B, 1), torch.cumsum(vals, 1)], 1)

    def keys(
        self,
        sequences: torch.Tensor,
        rows: torch.Tensor,
        positions: torch.Tensor,
        prefix: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """``(M,)`` int64 keys of the inputs at ``(sequences[rows[k]], positions[k])``."""
        if prefix is None:
            prefix = self.prefix(sequences)
        n = sequences.shape[1]
        at = positions[:, None] - 1 - self.ages  # (M, 7) move numbers
        pts = sequences.take((rows * n)[:, None] + at.clamp(min=0))
        pts = torch.where(at >= 0, pts, MOVES)  # before the first move: none
        window = self.window.view(-1).take(self.age_offsets + pts).sum(1)
        before = prefix.take(rows * (n + 1) + (positions - self.WINDOW).clamp(min=0))
        return before + window + self.side.take(positions % 2)


# --- the evaluator ---------------------------------------------------------------------


class PositionEvaluator:
    """``P(move | position)`` for (sequence, position) pairs, with merged repeats and a cache.

    ``cache_size``: slots of the direct-mapped cache (rounded up to a power of two; each holds a
    362-float distribution, 1.4 kB); 0 disables it.  ``dedupe=False`` (with no cache) sends every
    pair to the network: the naive reference.
    """

    def __init__(self, likelihood: PolicyLikelihood, cache_size: int = CACHE_SLOTS, dedupe: bool = True):
        if cache_size < 0:
            raise ValueError(f"cache_size {cache_size}: expected 0 (no cache) or more slots")
        self.likelihood = likelihood
        self.device = likelihood.device
        self.dedupe = dedupe or cache_size > 0
        self.slots = 1 << (cache_size - 1).bit_length() if cache_size else 0
        self.hasher = InputHasher(self.device)
        self._keys: Optional[torch.Tensor] = None
        self._values: Optional[torch.Tensor] = None
        self.requests = 0  # pairs asked for
        self.hits = 0  # served from the cache
        self.evaluations = 0  # positions sent to the network

    def _table(self):
        if self._keys is None:
            # Key 0 marks an empty slot (a real key is 0 with probability 2^-64).  Zeros, not empty:
            # the memory is touched once here, not page by page in the search.
            self._keys = torch.zeros(self.slots, dtype=torch.int64, device=self.device)
            self._values = torch.zeros(self.slots, MOVES, dtype=torch.float32, device=self.device)
        return self._keys, self._values

    def _network(self, sequences, rows, positions) -> torch.Tensor:
        self.evaluations += len(rows)
        return self.likelihood.probs_at(sequences, rows, positions)

    @torch.no_grad()
    def probs(
        self, sequences: torch.Tensor, rows: torch.Tensor, positions: torch.Tensor, moves: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """Distributions ``(M, 362)`` of the pairs ``(sequences[rows[k]], positions[k])``.

        With ``moves`` ``(M,)``: only each pair's probability of that move, ``(M,)``.
        ``sequences`` may end in ``features.PAD`` after every position asked for.
        """
        M = len(rows)
        self.requests += M
        if M == 0:
            return torch.empty((0, MOVES) if moves is None else (0,), device=self.device)
        if not self.dedupe:
            out = self._network(sequences, rows, positions)
            return out if moves is None else out.gather(1, moves[:, None]).squeeze(1)
        keys = self.hasher.keys(sequences, rows, positions)
        out = torch.empty((M, MOVES) if moves is None else (M,), dtype=torch.float32, device=self.device)
        if self.slots:
            table_keys, table_values = self._table()
            slot = keys & (self.slots - 1)
            hit = table_keys.index_select(0, slot) == keys
            hit_idx = hit.nonzero().squeeze(1)
            self.hits += len(hit_idx)
            hit_slot = slot.index_select(0, hit_idx)
            if moves is None:
                out.index_copy_(0, hit_idx, table_values.index_select(0, hit_slot))
            else:
                out.index_copy_(
                    0, hit_idx, table_values.view(-1).take(hit_slot * MOVES + moves.index_select(0, hit_idx))
                )
            miss_idx = (~hit).nonzero().squeeze(1)
        else:
            miss_idx = torch.arange(M, device=self.device)
        if len(miss_idx):
            ukeys, inverse = torch.unique(keys.index_select(0, miss_idx), return_inverse=True)
            first = torch.full((len(ukeys),), M, dtype=torch.long, device=self.device)
            first.scatter_reduce_(0, inverse, miss_idx, "amin")
            dists = self._network(sequences, rows.index_select(0, first), positions.index_select(0, first))
            if moves is None:
                out.index_copy_(0, miss_idx, dists.index_select(0, inverse))
            else:
                out.index_copy_(0, miss_idx, dists.reshape(-1).take(inverse * MOVES + moves.index_select(0, miss_idx)))
            if self.slots:
                self._insert(ukeys, dists)
        return out

    def _insert(self, ukeys: torch.Tensor, dists: torch.Tensor) -> None:
        """Store new distributions; of keys sharing a slot the largest wins (deterministic on any device)."""
        table_keys, table_values = self._table()
        slot = ukeys & (self.slots - 1)
        order = torch.argsort(slot, stable=True)  # ukeys are sorted, so each run ends with its largest key
        s = slot.index_select(0, order)
        last = torch.ones_like(s, dtype=torch.bool)
        last[:-1] = s[1:] != s[:-1]
        win = order.index_select(0, last.nonzero().squeeze(1))
        where = slot.index_select(0, win)
        table_keys.index_copy_(0, where, ukeys.index_select(0, win))
        table_values.index_copy_(0, where, dists.index_select(0, win))

    def log_probs(self, sequences: torch.Tensor, rows: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``(M,)`` float64 ``log P(sequences[r, i] | position i)`` for the pairs ``(rows, positions)``."""
        moves = sequences.take(rows * sequences.shape[1] + positions)
        return log(self.probs(sequences, rows, positions, moves))

    def sequence_log_probs(self, sequences: torch.Tensor) -> torch.Tensor:
        """``(B, n)`` float64 log-probabilities of every move of every sequence."""
        sequences = sequences.to(self.device)
        B, n = sequences.shape
        rows = torch.arange(B, device=self.device).repeat_interleave(n)
        positions = torch.arange(n, device=self.device).repeat(B)
        return self.log_probs(sequences, rows, positions).view(B, n)


def evaluator_from_file(
    path: Path,
    device: Optional[str] = None,
    average_symmetries: bool = False,
    legal_only: bool = False,
    max_batch: Optional[int] = None,
    precision: str = PRECISIONS[0],
    cache_size: Optional[int] = None,
) -> PositionEvaluator:
    """A :class:`PositionEvaluator` of the network in ``path``; ``cache_size`` None: the device's default."""
    model = PolicyLikelihood.from_file(
        Path(path),
        device=device,
        average_symmetries=average_symmetries,
        legal_only=legal_only,
        max_batch=max_batch,
        precision=precision,
    )
    return evaluator_over(model, cache_size)


def evaluator_over(model: PolicyLikelihood, cache_size: Optional[int] = None) -> PositionEvaluator:
    """A fresh :class:`PositionEvaluator` (its own cache) over a loaded network; ``cache_size`` None: the device's default."""
    return PositionEvaluator(model, cache_size=default_cache_size(model.device) if cache_size is None else cache_size)


def likelihood_of_options(options) -> PolicyLikelihood:
    """The network a search's options name (``network``, ``device``, ``average_symmetries``, ``legal_only``,
    ``max_batch``, ``precision``, as ``moveorder infer`` and ``infer-set`` parse them), loaded."""
    return PolicyLikelihood.from_file(
        Path(options.network),
        device=options.device,
        average_symmetries=options.average_symmetries,
        legal_only=options.legal_only,
        max_batch=options.max_batch,
        precision=options.precision,
    )


def policy_heatmap(path: Path, moves: Sequence[coords.Move], average_symmetries: bool = False) -> str:
    """The network's policy after ``moves`` (Black first) in permille, laid out as Leela Zero's ``heatmap``.

    Rows top to bottom, occupied points 0, then a line ``pass: K``; for cross-checks against leelaz.
    """
    model = PolicyLikelihood.from_file(Path(path), device="cpu", average_symmetries=average_symmetries)
    lz = [coords.to_lz(m) for m in moves]
    planes = sequence_planes(torch.tensor([lz + [PAD]]), torch.tensor([[len(lz)]]))
    probs = model.probs_of_planes(planes.view(1, PLANES, coords.SIZE, coords.SIZE))[0]
    occupied = set(lz)
    lines = []
    for row in range(coords.SIZE):  # top row first
        ks = [coords.to_lz((row, col)) for col in range(coords.SIZE)]
        lines.append(" ".join(f"{0 if k in occupied else int(probs[k] * 1000):3d}" for k in ks))
    lines.append(f"pass: {int(probs[coords.PASS_INDEX] * 1000)}")
    return "\n".join(lines)


__all__ = [
    "PolicyLikelihood",
    "PositionEvaluator",
    "InputHasher",
    "log",
    "PRECISIONS",
    "PAD",
    "evaluator_from_file",
    "evaluator_over",
    "likelihood_of_options",
    "policy_heatmap",
]
