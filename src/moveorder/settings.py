"""The settings of the search and the likelihood, with their defaults: one home for each default.

The command line (``moveorder infer``, ``infer-set``) takes its defaults from
here, and so does the code; ``config/config.yaml`` states the paper's values,
which are these.  Nothing here imports torch, so the command line starts fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

NEIGHBOURS = ("swp2", "mov2", "rot3", "mix")
INITS = ("greedy", "random", "beam")
METHODS = ("anneal", "beam", "beam+anneal")
SCHEDULES = ("geometric", "linear")
MIX_ORDER = ("swp2", "mov2", "rot3")
#: The paper's iterations per sequence length; other lengths take the nearest length's.
PAPER_ITERATIONS = {20: 5000, 40: 20000}


def iterations_for(n: int, table: Optional[Dict[int, int]] = None) -> int:
    """Iterations for ``n`` moves: ``table[n]``, else the nearest length's (ties: the shorter)."""
    table = {int(k): int(v) for k, v in (table or PAPER_ITERATIONS).items()}
    if n in table:
        return table[n]
    return table[min(table, key=lambda k: (abs(k - n), k))]


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
    method: str = "anneal"     # anneal (the paper's) | beam | beam+anneal (annealing from the beam's orders)
    beam_width: int = 32       # prefixes kept per arrangement and move number (beam, init beam)

    def __post_init__(self):
        if self.neighbour not in NEIGHBOURS:
            raise ValueError(f"neighbour {self.neighbour!r}: expected one of {NEIGHBOURS}")
        if self.init not in INITS:
            raise ValueError(f"init {self.init!r}: expected one of {INITS}")
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r}: expected one of {METHODS}")
        if self.method == "beam+anneal":
            self.init = "beam"
        if self.beam_width < 1:
            raise ValueError(f"beam_width {self.beam_width}: expected at least 1")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule {self.schedule!r}: expected one of {SCHEDULES}")
        if self.iterations < 1 or self.trials < 1 or not self.t_start >= self.t_end > 0:
            raise ValueError(f"need iterations >= 1 (got {self.iterations}), trials >= 1 (got {self.trials}) "
                             f"and t_start >= t_end > 0 (got {self.t_start}, {self.t_end})")


def temperature(cfg: AnnealConfig, t: int) -> float:
    """Temperature at iteration ``t`` (0-based): ``t_start`` at the first, ``t_end`` at the last."""
    frac = t / max(1, cfg.iterations - 1)
    if cfg.schedule == "geometric":
        return cfg.t_start * (cfg.t_end / cfg.t_start) ** frac
    return cfg.t_start + (cfg.t_end - cfg.t_start) * frac


PRECISIONS = ("float32", "bfloat16", "tf32")
#: Slots of the evaluator's position cache (each holds one distribution, 1.4 kB): 185 MB.
CACHE_SLOTS = 1 << 17
