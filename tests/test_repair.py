"""moveorder.search.repair: a found order mended window by window, every capture kept legal.

Oracles from elsewhere: every order is replayed on sgfmill's board (``test_captures.replay``, with the
ko and superko rules sgfmill leaves out) to exactly the position and prisoners it answers, and its
log-likelihood is the network's on that replay (``sequence_log_probs``); on a small corner position
with captures the repair with one window over every move and an unbounded beam is checked against
an exhaustive enumeration of every order of the same moves.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from moveorder.go import coords
from moveorder.nets.features import HISTORY
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search import captures as cap
from moveorder.search import repair as rep
from moveorder.search.boards import position_log_probs, replay_boards, sequence_log_probs
from test_captures import assert_answers, capture_games, captures_by_move, problem_of, sgf_moves  # noqa: F401


@pytest.fixture(scope="module")
def shipped():
    return PolicyLikelihood.from_file("tygem", device="cpu")


def every_order(moves):
    """Every order of ``moves`` with its Black moves on Black's turns and White's on White's, that
    is legal on sgfmill's board (``problem_of`` replays it) and answers the same problem."""
    target = problem_of(moves)
    black, white = moves[0::2], moves[1::2]
    out = set()
    for b in set(itertools.permutations(black)):
        for w in set(itertools.permutations(white)):
            seq = [None] * len(moves)
            seq[0::2], seq[1::2] = b, w
            try:
                if problem_of(seq) == target:
                    out.add(tuple(seq))
            except AssertionError:  # illegal on the independent replay
                continue
    return sorted(out)


# Found by seeded random play in the 4x4 corner: 8 moves, a capture at move 6 (White takes) and one
# at move 8 (White takes); 204 orders of each reach the same position and prisoners.
CORNERS = {"capture at move 6": "baacdabbabaaccbd", "capture at the last move": "baadcdacabbbbcaa"}


@pytest.fixture(scope="module", params=sorted(CORNERS))
def corner(request):
    moves = sgf_moves(CORNERS[request.param])
    caps = captures_by_move(moves)
    assert sum(caps) == 1 and caps.index(1) == (5 if request.param.endswith("6") else 7)
    orders = every_order(moves)
    assert len(orders) == 204  # of the 4! x 4! orders of the same moves
    return moves, orders


@pytest.fixture(scope="module")
def scores(shipped, corner):
    """Each order of ``corner`` with its log-likelihood, scored all at once (one batch a side to move)."""
    _, orders = corner
    hist, black, chosen = [], [], []
    for o in orders:
        boards = replay_boards(list(o))
        for i, k in enumerate(o):
            hist.append(tuple(boards[max(0, i - HISTORY + 1) : i + 1][::-1]))
            black.append(i % 2 == 0)
            chosen.append(k)
    ll = np.zeros(len(hist))
    for side in (True, False):
        rows = [r for r, b in enumerate(black) if b == side]
        lp = position_log_probs(shipped, [hist[r] for r in rows], side)
        ll[rows] = lp[np.arange(len(rows)), [chosen[r] for r in rows]]
    per = ll.reshape(len(orders), -1).sum(1)
    return {o: float(v) for o, v in zip(orders, per)}


def test_one_window_over_every_move_finds_the_likeliest_legal_order(shipped, corner, scores):
    moves, orders = corner
    best_ll, best = max((v, o) for o, v in scores.items())
    worst_ll, worst = min((v, o) for o, v in scores.items())
    assert float(sequence_log_probs(shipped, list(best)).sum()) == pytest.approx(best_ll, abs=1e-6)
    assert best_ll > worst_ll + 1.0
    got, ll = rep.repair(shipped, list(worst), window=len(moves), width=10**6, rounds=1)
    assert ll == pytest.approx(best_ll, abs=1e-6)
    assert tuple(got) in orders
    assert float(sequence_log_probs(shipped, got).sum()) == pytest.approx(ll, abs=1e-9)


def test_the_likeliest_order_is_left_as_it_is(shipped, corner, scores):
    best_ll, best = max((v, o) for o, v in scores.items())
    got, ll = rep.repair(shipped, list(best), window=4, width=8)
    assert got == list(best)
    assert ll == pytest.approx(best_ll, abs=1e-9)


@pytest.mark.parametrize("window", [2, 3, 6])
def test_every_repair_of_the_corner_is_legal_and_never_less_likely(shipped, corner, scores, window):
    moves, orders = corner
    for o in orders[:: len(orders) // 5]:
        got, ll = rep.repair(shipped, list(o), window=window, width=4)
        assert tuple(got) in orders  # legal on sgfmill's board, the same position and prisoners
        assert ll >= scores[o] - 1e-6
        assert ll == pytest.approx(scores[tuple(got)], abs=1e-6)


def test_real_orders_with_captures_are_mended_and_still_answer_their_positions(shipped, capture_games):  # noqa: F811
    """The capture search's orders of real positions at 60 moves: each repaired order replays to the
    same stones and prisoners, and is at least as likely; some are likelier (measured: 5 of 6)."""
    actual = [g[:60] for g in capture_games if sum(captures_by_move(g[:60])) > 0][:6]
    problems = [problem_of(a) for a in actual]
    found = cap.search(shipped, problems, width=8, patience=0)
    gains = []
    for problem, r in zip(problems, found):
        if r is None:
            continue
        got, ll = rep.repair(shipped, r[0])
        assert_answers(got, problem)
        assert float(sequence_log_probs(shipped, got).sum()) == pytest.approx(ll, abs=1e-9)
        assert ll >= r[1] - 1e-9
        gains.append(ll - r[1])
    assert len(gains) >= 4 and sum(g > 1e-6 for g in gains) >= 3


def test_an_illegal_order_or_a_window_of_one_is_refused(shipped):
    a, b = (coords.to_lz(coords.from_gtp(m)) for m in ("D4", "Q16"))
    with pytest.raises(ValueError, match="not legal"):
        rep.repair(shipped, [a, a])
    with pytest.raises(ValueError, match="window 1"):
        rep.repair(shipped, [a, b], window=1)


def test_legal_boards_refuses_superko_and_suicide():
    # White A1 between Black's A2 and B1 is suicide; a board seen twice is refused (superko)
    pts = {m: coords.to_lz(coords.from_gtp(m)) for m in ("A2", "A1", "B1", "Q16", "D4")}
    assert rep.legal_boards([pts["A2"], pts["Q16"], pts["B1"], pts["A1"]]) is None
    assert rep.legal_boards([pts["A2"], pts["A1"]]) is not None
    assert rep.legal_boards([pts["D4"], pts["Q16"]]) is not None
