"""moveorder.search.boards.PositionMemo: the capture search's memo of the network's distributions.

The oracle is the network asked for every position (``position_log_probs`` without a memo, and the
capture search run with the memo off): the memo must give the same distributions to the last bit and
the search the same orders, with fewer evaluations, counted at the network.
"""

from __future__ import annotations

import numpy as np
import pytest

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets.features import HISTORY
from moveorder.nets.likelihood import PolicyLikelihood, evaluator_over
from moveorder.search import dispatch
from moveorder.search.boards import PositionMemo, position_log_probs, replay_boards
from moveorder.search.problem import SearchStats, problem_of_stones
from moveorder.settings import SearchConfig


@pytest.fixture(scope="module")
def shipped():
    """The network shipped with the package (4x32, Tygem 9d games)."""
    return PolicyLikelihood.from_file("tygem", device="cpu")


def black_to_move_inputs(moves, count):
    """The network's input (the last 8 boards, the current one first) before the first ``count`` of
    Black's moves of a sequence (Leela Zero indices)."""
    boards = replay_boards(moves)
    return [tuple(boards[max(0, i - HISTORY + 1) : i + 1][::-1]) for i in range(0, 2 * count, 2)]


def problem_after(moves):
    """The position a legal sequence reaches (our board: captures applied) and its prisoners."""
    board, taken = goboard.replay([coords.from_lz(k) for k in moves])
    black = [coords.to_lz(p) for p in board.stones(goboard.BLACK)]
    white = [coords.to_lz(p) for p in board.stones(goboard.WHITE)]
    return problem_of_stones(black, white, (sum(taken[0::2]), sum(taken[1::2])))


def test_the_memo_gives_the_networks_own_distributions_evaluating_each_position_once(shipped, capture_games):
    h = black_to_move_inputs(capture_games[0], 3)
    asked = [h[0], h[1], h[0], h[2], h[1]]
    direct = position_log_probs(shipped, asked, True)  # the network asked for every one
    memo = PositionMemo(100)
    before = shipped.evaluations
    assert np.array_equal(memo.log_probs(shipped, asked, True), direct)
    assert shipped.evaluations - before == 3  # three distinct positions
    assert (memo.requests, memo.hits) == (5, 2)

    before = shipped.evaluations
    assert np.array_equal(memo.log_probs(shipped, [h[2], h[0]], True), direct[[3, 0]])
    assert shipped.evaluations == before and (memo.requests, memo.hits) == (7, 4)

    # The same boards with White to move are another input, with another distribution.
    white = memo.log_probs(shipped, [h[1]], False)
    assert shipped.evaluations == before + 1
    assert np.array_equal(white, position_log_probs(shipped, [h[1]], False))
    assert not np.array_equal(white, direct[1:2])


def test_a_full_memo_drops_its_oldest_distribution_first(shipped, capture_games):
    h = black_to_move_inputs(capture_games[1], 3)
    memo = PositionMemo(2)
    memo.log_probs(shipped, [h[0], h[1]], True)
    before = shipped.evaluations
    memo.log_probs(shipped, [h[2]], True)  # the third: h[0] goes
    memo.log_probs(shipped, [h[1], h[2]], True)  # both still held
    assert shipped.evaluations == before + 1
    assert np.array_equal(memo.log_probs(shipped, [h[0]], True), position_log_probs(shipped, [h[0]], True))
    assert shipped.evaluations == before + 3  # h[0] again, and the direct call beside it
    with pytest.raises(ValueError, match="slots 0: expected at least 1"):
        PositionMemo(0)


def test_the_capture_search_finds_the_same_orders_with_the_memo_and_fewer_evaluations(shipped, capture_games):
    """The tool's kind of search (both seats, two passes, the second wider where nothing was found,
    backtracking, one prefix a board) on real positions with captures, through the dispatcher with the
    evaluator's cache on (its default) and off (``--cache-size 0``): the same orders to the last bit;
    with the memo every position asked for is asked once of the network, and the positions asked are
    those the search without it sent to the network."""
    problems = [p for p in map(problem_after, (g[:30] for g in capture_games)) if p.prisoners_black + p.prisoners_white]
    problems = problems[:4]
    assert len(problems) == 4
    cfg = SearchConfig(
        method="beam",
        beam_width=4,
        orientations="seats",
        beam_passes=2,
        beam_widen=2,
        patience=1,
        capture_merge="board",
    )
    with_memo, without = SearchStats(), SearchStats()
    found = dispatch.run(evaluator_over(shipped), problems, cfg, stats=with_memo, keep=4)
    plain = dispatch.run(evaluator_over(shipped, 0), problems, cfg, stats=without, keep=4)
    assert [f.orders for f in found] == [f.orders for f in plain]
    assert sum(bool(f.orders) for f in found) >= 3
    assert without.hits == 0 and without.requests == without.evaluations
    assert with_memo.requests == without.evaluations
    assert with_memo.hits > 0 and with_memo.evaluations + with_memo.hits == with_memo.requests
