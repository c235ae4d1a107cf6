"""The likelihood of move sequences under a human-move policy network.

:class:`PolicyLikelihood` is the one interface inference uses: for a batch
of capture-free sequences (Leela Zero indices, Black first) and, optionally,
the positions within them to evaluate, it returns ``log P(m_i | s_{i-1})``.
The probability is the network's softmax over all 362 outputs, as the
network gives it (the paper's definition); ``legal_only=True`` renormalises
over the empty points and pass instead.

The model behind it is any file :func:`load_policy` reads: a Leela Zero
weights file (``.txt``, ``.txt.gz``, ``.zip``; the paper's ``best_v1``) or
a checkpoint (``.pt``) from :mod:`moveorder.train`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import torch

from .features import sequence_planes
from .networks import LeelaNet, load_leela, policy_probs


def load_policy(path: Path) -> LeelaNet:
    """A policy network from a Leela Zero weights file or a moveorder checkpoint."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such network file")
    if path.suffix == ".pt":
        from .train import load_checkpoint

        return load_checkpoint(path)
    return load_leela(path)


class PolicyLikelihood:
    """``log P(move | position)`` for positions of capture-free sequences."""

    def __init__(self, net: LeelaNet, device: Optional[str] = None, average_symmetries: bool = False,
                 legal_only: bool = False, max_batch: Optional[int] = None):
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        # Channels-last: 1.12-1.16x more evaluations per second on a CPU (bench/networks.py).
        self.net = net.to(self.device, memory_format=torch.channels_last).eval()
        self.average_symmetries = average_symmetries
        self.legal_only = legal_only
        # On a CPU, batches of 64 run fastest (bench/networks.py: 2x faster than 512 for 4x32).
        self.max_batch = max_batch or (64 if self.device.type == "cpu" else 1024)
        self.evaluations = 0  # network evaluations (positions) so far

    @classmethod
    def from_file(cls, path: Path, **kw) -> "PolicyLikelihood":
        return cls(load_policy(path), **kw)

    @torch.no_grad()
    def probs_of_planes(self, planes: torch.Tensor) -> torch.Tensor:
        """``(M, 18, 19, 19)`` planes -> ``(M, 362)`` probabilities, in chunks of ``max_batch``."""
        out = []
        for k in range(0, planes.shape[0], self.max_batch):
            chunk = planes[k:k + self.max_batch].to(self.device, memory_format=torch.channels_last)
            out.append(policy_probs(self.net, chunk, self.average_symmetries).float())
        self.evaluations += planes.shape[0]
        return torch.cat(out) if out else torch.empty(0, 362)

    @torch.no_grad()
    def log_probs(self, sequences: torch.Tensor, positions: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``(B, n)`` sequences -> ``(B, P)`` log-probabilities of the move at each position.

        ``positions`` ``(B, P)`` picks the moves to score (default: all ``n``).
        """
        sequences = sequences.to(self.device)
        B, n = sequences.shape
        if positions is None:
            positions = torch.arange(n, device=self.device).expand(B, n)
        positions = positions.to(self.device)
        P = positions.shape[1]
        planes = sequence_planes(sequences, positions).view(B * P, 18, 19, 19)
        probs = self.probs_of_planes(planes).view(B, P, 362)
        moves = sequences.gather(1, positions)
        p = probs.gather(2, moves[..., None]).squeeze(-1)
        if self.legal_only:
            occupied = planes.view(B, P, 18, 361)[:, :, 0] + planes.view(B, P, 18, 361)[:, :, 8]
            legal_mass = probs[..., :361].mul(1 - occupied).sum(-1) + probs[..., 361]
            p = p / legal_mass
        return torch.log(p.clamp_min(1e-30)).cpu()

    def sequence_log_likelihood(self, sequences: torch.Tensor) -> torch.Tensor:
        """``(B, n)`` -> ``(B,)`` sum of log-probabilities over each sequence."""
        return self.log_probs(sequences).sum(1)
