"""Leela Zero's 18 input planes, for every prefix of many sequences at once.

Every plane is a 19x19 grid in **Leela Zero order**: plane index ``k`` holds
point ``coords.from_lz(k)``, bottom row first (see :mod:`moveorder.coords`).

=========  ======  ==========================================================
planes     count   meaning (for the position where move ``i`` is to be played)
=========  ======  ==========================================================
0 - 7      8       stones of the side to move, now (0) and 1..7 moves ago
8 - 15     8       stones of the opponent, now (8) and 1..7 moves ago
16         1       all ones when Black is to move, else zeros
17         1       all ones when White is to move, else zeros
=========  ======  ==========================================================

"Side to move" is fixed by the current position: history planes show the
*current* mover's stones at earlier times.  History before the empty board
is zeros.  A position ``i`` of a sequence is the board after its first ``i``
moves (Black moved first), so move ``i`` is Black's when ``i`` is even.

Two builders:

* :func:`sequence_planes` is for capture-free sequences (arrangements): a
  stone placed at move ``t`` is on the board at every position ``> t``, so
  all positions of a batch of sequences are built with tensor comparisons.
* :func:`board_history_planes` takes explicit board states (games with
  captures, for training).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from . import coords

HISTORY = 8
PLANES = 18
N = coords.SIZE * coords.SIZE
NEVER = 1 << 20  # placement time of a point that never gets a stone

# Permutation from top-row-first flat order to Leela Zero order: lz[k] = flat[FLAT_OF_LZ[k]].
FLAT_OF_LZ = np.array([coords.lz_to_flat(k) for k in range(N)], dtype=np.int64)


def placement_times(sequences: torch.Tensor) -> torch.Tensor:
    """``(B, n)`` Leela Zero indices of moves -> ``(B, 361)`` move number placing each point (NEVER if none)."""
    B, n = sequences.shape
    times = torch.full((B, N + 1), NEVER, dtype=torch.long, device=sequences.device)
    steps = torch.arange(n, device=sequences.device).expand(B, n)
    times.scatter_(1, sequences.long(), steps)
    return times[:, :N]


def sequence_planes(sequences: torch.Tensor, positions: Optional[torch.Tensor] = None,
                    dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Input planes for positions of capture-free sequences.

    ``sequences``: ``(B, n)`` Leela Zero indices (no pass, no repeats, Black
    first).  ``positions``: ``(B, P)`` position numbers ``0 <= i < n`` to
    build for each sequence (default: all ``n``).  Returns
    ``(B, P, 18, 19, 19)``.
    """
    B, n = sequences.shape
    device = sequences.device
    if positions is None:
        positions = torch.arange(n, device=device).expand(B, n)
    times = placement_times(sequences)                               # (B, 361)
    colour_is_black = (times % 2 == 0)                               # Black moved at even times
    h = torch.arange(HISTORY, device=device)
    when = positions[:, :, None] - h[None, None, :]                   # (B, P, 8): board after `when` moves
    present = times[:, None, None, :] < when[..., None]               # (B, P, 8, 361); when<0 -> none
    black_to_move = (positions % 2 == 0)                              # (B, P)
    mine_black = black_to_move[..., None, None]                       # (B, P, 1, 1)
    stone_black = colour_is_black[:, None, None, :]                   # (B, 1, 1, 361)
    mine = present & (stone_black == mine_black)
    theirs = present & (stone_black != mine_black)
    side = torch.stack([black_to_move, ~black_to_move], dim=-1)       # (B, P, 2)
    side = side[..., None].expand(B, positions.shape[1], 2, N)
    planes = torch.cat([mine, theirs, side], dim=2).to(dtype)
    return planes.view(B, positions.shape[1], PLANES, coords.SIZE, coords.SIZE)


def board_history_planes(boards: np.ndarray, index: int, black_to_move: bool) -> np.ndarray:
    """Planes for the position after ``index`` moves of a game with captures.

    ``boards``: ``(moves + 1, 361)`` int8 board states in top-row-first flat
    order (0 empty, 1 black, 2 white), ``boards[0]`` the empty board.  Returns
    ``(18, 19, 19)`` float32 in Leela Zero order.
    """
    planes = np.zeros((PLANES, N), dtype=np.float32)
    mine, theirs = (1, 2) if black_to_move else (2, 1)
    for h in range(HISTORY):
        k = index - h
        if k < 0:
            break
        b = boards[k][FLAT_OF_LZ]
        planes[h] = b == mine
        planes[HISTORY + h] = b == theirs
    planes[16 if black_to_move else 17] = 1.0
    return planes.reshape(PLANES, coords.SIZE, coords.SIZE)


def to_lz_indices(moves: Sequence[coords.Move]) -> list:
    return [coords.to_lz(m) for m in moves]
