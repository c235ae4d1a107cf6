"""Leela Zero's 18 input planes, for every prefix of many sequences at once.

Every plane is a 19x19 grid in **Leela Zero order**: plane index ``k`` holds
point ``coords.from_lz(k)``, bottom row first (see :mod:`moveorder.go.coords`).

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

Builders:

* :func:`sequence_planes` is for capture-free sequences (arrangements): a
  stone placed at move ``t`` is on the board at every position ``> t``, so
  all positions of a batch of sequences are built with tensor comparisons.
* :func:`position_codes` is the compact form of the same input that the
  search uses: one byte per point (and one for the side to move), 20 times
  smaller than the planes, built on the device for any (sequence, position)
  pairs; :func:`planes_from_codes` expands codes into exactly the planes of
  :func:`sequence_planes` (one table look-up, channels-last), right before
  the network.
* :func:`board_history_planes` takes explicit board states (games with
  captures: the reference for training's batched planes), and
  :func:`history_stack_planes` many such histories at once (the search
  with captures, :mod:`moveorder.search.captures`).

Position codes (``(M, 362)`` uint8, points in Leela Zero order, then the side):

=========  ==================================================================
code       meaning of a point's byte, for the position where move ``i`` is next
=========  ==================================================================
0          empty (no stone placed before move ``i``)
1 - 8      the mover's stone, placed ``a`` moves ago (``a`` = 1..7), or 8 if 8+
9 - 16     the opponent's stone, placed ``a - 8`` moves ago, likewise
=========  ==================================================================

Entry 361 is 0 when Black is to move, 1 when White is.  A stone placed ``a``
moves ago appears in history planes ``0 .. a - 1``, so the byte holds
everything the 16 stone planes say about that point.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from moveorder.go import coords
from moveorder.go.coords import MOVES, POINTS

HISTORY = 8
PLANES = 18
NEVER = 1 << 20  # placement time of a point that never gets a stone

# Permutation from top-row-first flat order to Leela Zero order: lz[k] = flat[FLAT_OF_LZ[k]].
FLAT_OF_LZ = np.array(coords.lz_to_flat_table(), dtype=np.int64)


def placement_times(sequences: torch.Tensor) -> torch.Tensor:
    """``(B, n)`` Leela Zero indices of moves -> ``(B, 361)`` move number placing each point (NEVER if none)."""
    B, n = sequences.shape
    times = torch.full((B, MOVES), NEVER, dtype=torch.long, device=sequences.device)
    steps = torch.arange(n, device=sequences.device).expand(B, n)
    times.scatter_(1, sequences.long(), steps)
    return times[:, :POINTS]


def sequence_planes(
    sequences: torch.Tensor, positions: Optional[torch.Tensor] = None, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
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
    times = placement_times(sequences)  # (B, 361)
    colour_is_black = times % 2 == 0  # Black moved at even times
    h = torch.arange(HISTORY, device=device)
    when = positions[:, :, None] - h[None, None, :]  # (B, P, 8): board after `when` moves
    present = times[:, None, None, :] < when[..., None]  # (B, P, 8, 361); when<0 -> none
    black_to_move = positions % 2 == 0  # (B, P)
    mine_black = black_to_move[..., None, None]  # (B, P, 1, 1)
    stone_black = colour_is_black[:, None, None, :]  # (B, 1, 1, 361)
    mine = present & (stone_black == mine_black)
    theirs = present & (stone_black != mine_black)
    side = torch.stack([black_to_move, ~black_to_move], dim=-1)  # (B, P, 2)
    side = side[..., None].expand(B, positions.shape[1], 2, POINTS)
    planes = torch.cat([mine, theirs, side], dim=2).to(dtype)
    return planes.view(B, positions.shape[1], PLANES, coords.SIZE, coords.SIZE)


def placement_times_padded(sequences: torch.Tensor) -> torch.Tensor:
    """``(B, n)`` sequences -> ``(B, 362)`` move number placing each point; ``n`` where none.

    Index 361 (pass) is a scratch slot: a sequence may end in ``PAD`` (361) entries standing for
    "not yet chosen" (partial orders), which place nothing.
    """
    B, n = sequences.shape
    times = torch.full((B, MOVES), n, dtype=torch.int16 if n < 1 << 14 else torch.int32, device=sequences.device)
    steps = torch.arange(n, dtype=times.dtype, device=sequences.device).expand(B, n)
    times.scatter_(1, sequences.long(), steps)
    times[:, POINTS] = n
    return times


PAD = coords.PASS_INDEX  # a not-yet-chosen move in a partial sequence


def _code_table(n: int, device) -> torch.Tensor:
    """``table[i - t + n]``: the code of a stone placed at move ``t`` seen from position ``i``."""
    d = torch.arange(-n, n + 1, device=device)  # i - t
    age = d.clamp(1, HISTORY)
    theirs = d % 2 == 1  # placed an odd number of moves ago
    return torch.where(d >= 1, age + HISTORY * theirs, torch.zeros_like(d)).to(torch.uint8)


def position_codes(
    sequences: torch.Tensor, rows: torch.Tensor, positions: torch.Tensor, times: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """Codes of the positions ``(sequences[rows[k]], positions[k])``: ``(M, 362)`` uint8 (table above).

    ``sequences`` ``(B, n)`` Leela Zero indices (``PAD`` allowed after the positions asked for);
    ``times``: :func:`placement_times_padded` of ``sequences``, when the caller has it.
    """
    n = sequences.shape[1]
    if times is None:
        times = placement_times_padded(sequences)
    table = _code_table(n, sequences.device)
    t = times.index_select(0, rows)[:, :POINTS].to(torch.int32)  # (M, 361)
    idx = (positions.to(torch.int32) + n)[:, None] - t  # i - t + n, in 0 .. 2n
    codes = torch.empty(len(rows), MOVES, dtype=torch.uint8, device=sequences.device)
    codes[:, :POINTS] = table[idx]
    codes[:, POINTS] = (positions % 2).to(torch.uint8)
    return codes


def _plane_table(device) -> torch.Tensor:
    """``(34, 18)``: row ``code + 17 * side`` holds that point's value in each of the 18 planes."""
    table = torch.zeros(2, 17, PLANES)
    for code in range(1, 17):
        base, age = (0, code) if code <= HISTORY else (HISTORY, code - HISTORY)
        table[:, code, base : base + age] = 1.0
    table[0, :, 16] = 1.0  # Black to move
    table[1, :, 17] = 1.0  # White to move
    return table.view(34, PLANES).to(device)


_PLANE_TABLES: dict = {}


def planes_from_codes(codes: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """``(M, 362)`` codes -> ``(M, 18, 19, 19)`` planes, equal to :func:`sequence_planes`'s, channels-last."""
    key = (codes.device, dtype)
    if key not in _PLANE_TABLES:
        _PLANE_TABLES[key] = _plane_table(codes.device).to(dtype)
    idx = codes[:, :POINTS].long() + 17 * codes[:, POINTS:].long()
    flat = torch.nn.functional.embedding(idx, _PLANE_TABLES[key])  # (M, 361, 18)
    return flat.view(-1, coords.SIZE, coords.SIZE, PLANES).permute(0, 3, 1, 2)


def history_stack_planes(boards: np.ndarray, black_to_move: bool) -> np.ndarray:
    """Planes from explicit board histories: ``(P, 8, 361)`` boards in Leela Zero order (0 empty, 1
    black, 2 white), the current one first and empty boards before the game began, all with the same
    side to move -> ``(P, 18, 19, 19)`` float32."""
    mine, theirs = (1, 2) if black_to_move else (2, 1)
    planes = np.zeros((len(boards), PLANES, POINTS), dtype=np.float32)
    planes[:, :HISTORY] = boards == mine
    planes[:, HISTORY : 2 * HISTORY] = boards == theirs
    planes[:, 16 if black_to_move else 17] = 1.0
    return planes.reshape(len(boards), PLANES, coords.SIZE, coords.SIZE)


def board_history_planes(boards: np.ndarray, index: int, black_to_move: bool) -> np.ndarray:
    """Planes for the position after ``index`` moves of a game with captures.

    ``boards``: ``(moves + 1, 361)`` int8 board states in top-row-first flat
    order (0 empty, 1 black, 2 white), ``boards[0]`` the empty board.  Returns
    ``(18, 19, 19)`` float32 in Leela Zero order (:func:`history_stack_planes`).
    """
    stack = np.zeros((1, HISTORY, POINTS), dtype=boards.dtype)
    for h in range(min(HISTORY, index + 1)):
        stack[0, h] = boards[index - h][FLAT_OF_LZ]
    return history_stack_planes(stack, black_to_move)[0]
