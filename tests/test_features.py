"""moveorder.nets.features: Leela Zero's input planes, from boards drawn in ASCII and from sequences (pure)."""

import numpy as np
import torch

from helpers import OPENING, load_board
from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets.features import (
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


def hand_planes(moves, i):
    """Leela Zero's 18 planes after ``i`` of ``moves`` (SGF points, no captures), written out plane by plane:
    0-7 the side to move's stones now and 1..7 moves ago, 8-15 the opponent's, 16 Black to move, 17 White."""
    planes = np.zeros((18, 361), dtype=np.float32)
    to_move = i % 2  # 0: Black
    for h in range(8):
        for t, m in enumerate(moves[: max(0, i - h)]):
            planes[h + (0 if t % 2 == to_move else 8), coords.to_lz(coords.from_sgf(m))] = 1
    planes[16 + to_move] = 1
    return planes.reshape(18, 19, 19)


def test_every_path_gives_the_planes_written_out_by_hand():
    """sequence_planes, the codes (position_codes then planes_from_codes, from an empty table cache) and
    board_history_planes, at every position of a 10-move opening, against the planes written out by hand."""
    from moveorder.nets import features

    features._PLANE_TABLES.clear()  # the table built here, not one an earlier test left in the cache
    moves = OPENING[:10]
    seq = torch.tensor([coords.sgf_to_lz(moves)])
    boards = np.zeros((11, 361), dtype=np.int8)
    for t, m in enumerate(moves):
        boards[t + 1 :, coords.to_flat(coords.from_sgf(m))] = 1 + t % 2
    all_planes = sequence_planes(seq)[0]
    codes = position_codes(seq, torch.zeros(10, dtype=torch.long), torch.arange(10))
    from_codes = planes_from_codes(codes)
    for i in range(10):
        expected = hand_planes(moves, i)
        assert np.array_equal(all_planes[i].numpy(), expected), i
        assert np.array_equal(from_codes[i].numpy(), expected), i
        assert np.array_equal(board_history_planes(boards, i, i % 2 == 0), expected), i
    # float16 planes from their own table, the same values
    assert torch.equal(planes_from_codes(codes, torch.float16).float(), from_codes)


def test_placement_times_by_hand():
    seq = torch.tensor([[300, 60, 5], [5, 60, 300]])  # Q16 D4 F1, and backwards
    times = placement_times(seq)
    assert times.shape == (2, 361) and times.dtype == torch.long
    assert [int(times[0, k]) for k in (300, 60, 5, 0)] == [0, 1, 2, NEVER]
    assert [int(times[1, k]) for k in (300, 60, 5)] == [2, 1, 0]
    padded = placement_times_padded(torch.tensor([[300, 60, PAD, PAD]]))
    assert padded.shape == (1, 362) and padded.dtype == torch.int16
    assert [int(padded[0, k]) for k in (300, 60, 5, PAD)] == [0, 1, 4, 4]  # n where nothing is placed
    long = placement_times_padded(torch.full((1, 1 << 14), PAD))  # n past int16's comfort: int32
    assert long.dtype == torch.int32 and int(long[0, 0]) == 1 << 14 and int(long[0, PAD]) == 1 << 14


def test_dtypes_and_devices_follow_the_contract():
    """Each function's output dtype as documented, and every tensor on its input's device: checked on
    torch's meta device (shapes without data, on any machine), as a GPU would need."""
    from moveorder.nets import features

    seq = torch.tensor([coords.sgf_to_lz(OPENING[:6])])
    codes = position_codes(seq, torch.zeros(6, dtype=torch.long), torch.arange(6))
    assert codes.dtype == torch.uint8 and sequence_planes(seq).dtype == torch.float32
    assert sequence_planes(seq, dtype=torch.float16).dtype == torch.float16
    features._PLANE_TABLES.clear()
    assert (
        planes_from_codes(codes).dtype == torch.float32
        and planes_from_codes(codes, torch.float16).dtype == torch.float16
    )
    boards = np.zeros((7, 361), dtype=np.int8)
    assert board_history_planes(boards, 6, True).dtype == np.float32
    meta = seq.to("meta")
    rows, positions = torch.zeros(6, dtype=torch.long, device="meta"), torch.arange(6, device="meta")
    for out in (
        placement_times(meta),
        placement_times_padded(meta),
        sequence_planes(meta),
        sequence_planes(meta, torch.arange(6, device="meta")[None]),
        position_codes(meta, rows, positions),
        planes_from_codes(position_codes(meta, rows, positions)),
    ):
        assert out.device.type == "meta"
