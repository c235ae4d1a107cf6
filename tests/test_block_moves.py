"""bench/block_moves.py's proposals: each is the same moves, every move keeping its colour (its
number's parity), so a proposal can only fail where the board says it is illegal."""

import importlib.util
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import REPO

_spec = importlib.util.spec_from_file_location("block_moves", REPO / "bench/block_moves.py")
block_moves = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(block_moves)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 100), seed=st.integers(0, 2**32 - 1), max_shift=st.sampled_from([2, 10, 30]))
def test_a_proposal_keeps_the_moves_and_their_colours(n, seed, max_shift):
    order = list(range(100, 100 + n))  # move k stands at number k - 100 at first
    rng = random.Random(seed)
    for _ in range(50):
        cand = block_moves.propose(order, rng, max_shift)
        if cand is None:
            continue
        assert sorted(cand) == order
        assert all((m - 100) % 2 == i % 2 for i, m in enumerate(cand)), cand
        assert cand != order


def test_proposals_move_blocks_as_far_as_allowed():
    order = list(range(80))
    rng = random.Random(0)
    shifts = set()
    for _ in range(3000):
        cand = block_moves.propose(order, rng, 30)
        if cand is not None:
            shifts.add(max(abs(i - m) for i, m in enumerate(cand)))
    # a swap moves two moves at most 20 apart; a block of up to 8 moves at most 30, the moves it passes
    # at most 8 the other way
    assert max(shifts) == 30 and 2 in shifts
