"""moveorder.features: Leela Zero's input planes, from boards drawn in ASCII and from sequences (pure)."""

import numpy as np
import torch

from helpers import OPENING, load_board
from moveorder import board as goboard
from moveorder import coords
from moveorder.features import (
    FLAT_OF_LZ,
    HISTORY,
    NEVER,
    PAD,
    board_history_planes,
    placement_times,
    placement_times_padded,
    planes_from_codes,
    position_codes,
    sequence_planes,
)


def random_sequences(count, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(361, generator=g)[:n] for _ in range(count)])


def test_codes_expand_to_the_planes_of_sequence_planes():
    seqs = random_sequences(6, 30)
    rows = torch.arange(6).repeat_interleave(30)
    pos = torch.arange(30).repeat(6)
    planes = planes_from_codes(position_codes(seqs, rows, pos))
    assert torch.equal(planes, sequence_planes(seqs).view(-1, 18, 19, 19))
    assert planes.is_contiguous(memory_format=torch.channels_last)
    # A partial sequence (PAD after the position) gives the same input as the full one.
    part = seqs.clone()
    part[:, 12:] = PAD
    assert torch.equal(
        position_codes(part, torch.arange(6), torch.full((6,), 12)),
        position_codes(seqs, torch.arange(6), torch.full((6,), 12)),
    )
    assert int(placement_times_padded(part)[0, 361]) == 30  # PAD places nothing


def test_planes_of_a_drawn_board():
    """Plane 0 holds the stones of the side to move, plane 8 the opponent's, 16/17 the side; Leela Zero order."""
    black, white = load_board("""
        . . . . .
        . . . X .
        . . O . .
        . X . . .
    """)
    assert black == [(1, 3), (3, 1)] and white == [(2, 2)]
    seq = coords.sgf_to_lz(coords.to_sgf(p) for p in [black[0], white[0], black[1]])
    planes = sequence_planes(torch.tensor([seq + [PAD]]), torch.tensor([[3]]))[0, 0]  # White to move
    for r in range(coords.SIZE):
        for c in range(coords.SIZE):
            # planes are in Leela Zero order: row 0 of a plane is the bottom row of the board
            lz_r, lz_c = divmod(coords.to_lz((r, c)), coords.SIZE)
            assert planes[0, lz_r, lz_c] == ((r, c) in white)
            assert planes[HISTORY, lz_r, lz_c] == ((r, c) in black)
    assert planes[17].all() and not planes[16].any()  # White to move


def test_placement_times_and_history_planes_agree_with_a_replayed_board():
    seq = coords.sgf_to_lz(OPENING[:10])
    times = placement_times(torch.tensor([seq]))[0]
    assert [int(times[k]) for k in seq] == list(range(10))
    assert int((times == NEVER).sum()) == 361 - 10
    padded = placement_times_padded(torch.tensor([seq + [PAD, PAD]]))[0]
    assert int(padded[coords.PASS_INDEX]) == 12 and [int(padded[k]) for k in seq] == list(range(10))
    # The capture-free path (sequence_planes) and the board path (board_history_planes) give one input.
    boards = np.zeros((11, 361), dtype=np.int8)
    b = goboard.Board()
    for i, m in enumerate(OPENING[:10]):
        b.play(goboard.BLACK if i % 2 == 0 else goboard.WHITE, coords.from_sgf(m))
        for r, c in b.stones(goboard.BLACK):
            boards[i + 1, coords.to_flat((r, c))] = 1
        for r, c in b.stones(goboard.WHITE):
            boards[i + 1, coords.to_flat((r, c))] = 2
    ours = sequence_planes(torch.tensor([seq + [PAD]]), torch.tensor([[10]]))[0, 0].numpy()
    assert np.array_equal(board_history_planes(boards, 10, True), ours)
    assert sorted(FLAT_OF_LZ.tolist()) == list(range(361))
