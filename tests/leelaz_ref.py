"""Leela Zero itself (Debian's leelaz) as the reference for the policy: GTP `heatmap` in permille."""

import re
import shutil
import subprocess
from typing import List, Sequence

import numpy as np

LEELAZ = shutil.which("leelaz") or "/usr/games/leelaz"


def heatmaps(weights: str, positions: Sequence[Sequence[str]], mode: str = "") -> List[np.ndarray]:
    """For each position (GTP moves, Black first), leelaz's heatmap as a (362,) int array.

    Index order is Leela Zero's: bottom row first, pass last. ``mode``: "" (identity) or "average".
    """
    script = []
    for moves in positions:
        script.append("clear_board")
        for i, m in enumerate(moves):
            script.append(f"play {'bw'[i % 2]} {m}")
        script.append(f"heatmap {mode}".strip())
    script.append("quit")
    proc = subprocess.run(
        [LEELAZ, "--cpu-only", "-g", "--noponder", "-t", "1", "-w", weights],
        input="\n".join(script) + "\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    text = proc.stdout + proc.stderr
    grids = re.findall(r"((?:(?:\s*\d+){19}\s*\n){19})pass: (\d+)", proc.stderr)
    if len(grids) != len(positions):
        raise RuntimeError(f"leelaz printed {len(grids)} heatmaps for {len(positions)} positions:\n{text[-2000:]}")
    out = []
    for grid, pss in grids:
        rows = [list(map(int, line.split())) for line in grid.strip().split("\n")]
        flat = [v for row in reversed(rows) for v in row]  # printed top row first
        out.append(np.array(flat + [int(pss)]))
    return out
