"""moveorder.search.polish: the hill climb over capture-legal orders.

The oracles are the test's own: legality and the position reached by sgfmill's board
(:func:`test_captures.replay`, which adds the rules sgfmill leaves out), the neighbours written again
here as rotations of one colour's moves, and every order's log-likelihood scored as a whole
(:func:`moveorder.search.boards.sequence_log_probs`), never from the terms the climb changed.  The
corner games were found by seeded random play (``test_captures.corner_play``), each chosen for the
refusals it holds, which the tests assert so that a changed case cannot pass silently.
"""

from __future__ import annotations

import itertools

import pytest

from moveorder.go import coords
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search import polish as pol
from moveorder.search.boards import sequence_log_probs
from test_captures import HAND_MADE, KO_THRICE, problem_of, sgf_moves

#: A 23-move game in the 4x4 corner two of whose neighbours repeat a whole-board position.
REPEATS = "dacadcddadbacdacbcdbbbbdccabaaabacaacbabcabaaa"
#: An 18-move corner game three of whose neighbours are legal but end on another board.
ELSEWHERE = "acadcdaabddccaccbccbabdddbbabbdaaaba"
#: An 8-move game in the 3x3 corner with a capture: 72 of its 576 orders (colours alternating) are legal
#: and reach its position (counted below on sgfmill's board).
SMALL = "aaabaccabbbcabcc"


@pytest.fixture(scope="module")
def shipped():
    return PolicyLikelihood.from_file("tygem", device="cpu")


def brute_neighbours(seq, reach):
    """Each neighbour as ``(kind, i, j)`` -> order: the moves of one colour at turns i, i + 2, .., j
    exchanged at the ends (swap) or rotated by one (later: the first to the end; earlier: the last first)."""
    out = {}
    for i in range(len(seq)):
        for step in range(1, reach + 1):
            j = i + 2 * step
            if j >= len(seq):
                break
            turns = list(range(i, j + 1, 2))
            vals = [seq[k] for k in turns]
            kinds = {"swap": [vals[-1]] + vals[1:-1] + [vals[0]]}
            if step > 1:
                kinds["later"] = vals[1:] + vals[:1]
                kinds["earlier"] = vals[-1:] + vals[:-1]
            for kind, new in kinds.items():
                s = list(seq)
                for k, v in zip(turns, new):
                    s[k] = v
                out[(kind, i, j)] = s
    return out


def verdict(seq, problem):
    """sgfmill's verdict on an order: ``ok``, ``elsewhere`` (legal, another board) or the rule it breaks."""
    try:
        return "ok" if problem_of(seq) == problem else "elsewhere"
    except AssertionError as err:
        return str(err).splitlines()[0].split(" ", 2)[2]


def whole(likelihood, seq):
    return float(sequence_log_probs(likelihood, seq).sum())


@pytest.mark.parametrize(
    "seq, reasons",
    [
        (KO_THRICE, {"ok", "is on a stone", "is a suicide", "retakes a ko"}),
        (sgf_moves(REPEATS), {"ok", "is on a stone", "is a suicide", "repeats a position"}),
        (sgf_moves(ELSEWHERE), {"ok", "is on a stone", "is a suicide", "elsewhere"}),
        (sgf_moves(HAND_MADE["snapback"]), {"ok", "is on a stone"}),
    ],
)
def test_each_neighbour_is_judged_as_sgfmill_does_and_gains_what_the_whole_orders_differ(shipped, seq, reasons):
    """Every neighbour within 3 turns: refused exactly where sgfmill's replay breaks a rule or ends
    elsewhere, and where legal, its gain is the difference of the two orders scored whole."""
    problem = problem_of(seq)
    boards = pol.replay(seq, problem.final_board())
    lp = pol.terms(shipped, seq, boards)
    cands = pol.neighbours(len(seq), 3)
    brute = brute_neighbours(seq, 3)
    assert {(c.kind, c.i, c.j) for c in cands} == set(brute)
    scored = pol.score_neighbours(shipped, seq, boards, lp, cands)
    base = whole(shipped, seq)
    seen = set()
    for c in cands:
        new = brute[(c.kind, c.i, c.j)]
        why = verdict(new, problem)
        seen.add(why)
        g = scored[c]
        assert (g is not None) == (why == "ok"), (c, why)
        if g is not None:
            assert g.moves == new
            assert g.gain == pytest.approx(whole(shipped, new) - base, abs=1e-6), c
    assert seen == reasons


def test_a_capture_game_climbs_to_an_order_no_neighbour_beats(shipped, capture_games):
    """From the players' first 40 moves of a game with captures, seen from the other seat (so that the
    network's view differs from the players'): every round likelier than the last, the order sgfmill's
    replay of it reaches is the position, what each round gained the sum of its changes' gains, its
    log-likelihood the whole order's, and none of its
    neighbours (enumerated and scored whole here) is likelier."""
    from moveorder.nets.networks import turn_points
    from test_captures import captures_by_move

    game = next(g[:40] for g in capture_games if sum(captures_by_move(g[:40])) > 0)
    seq = turn_points(game, 4)
    problem = problem_of(seq)
    got = pol.polish(shipped, problem, seq, reach=2)
    assert got.applied > 0 and got.lls[0] == pytest.approx(whole(shipped, seq), abs=1e-6)
    assert all(b > a for a, b in zip(got.lls, got.lls[1:]))
    # the changes a round takes are apart: their gains add up to the round's
    assert [b - a for a, b in zip(got.lls, got.lls[1:])] == pytest.approx(got.expected, abs=1e-6)
    assert problem_of(got.moves) == problem
    assert got.ll == pytest.approx(whole(shipped, got.moves), abs=1e-6)
    for key, new in brute_neighbours(got.moves, 2).items():
        if verdict(new, problem) == "ok":
            assert whole(shipped, new) <= got.ll + 1e-6, key


def test_on_a_small_board_the_climb_ends_on_an_exhaustive_local_optimum(shipped):
    """Every order of an 8-move corner game with a capture (4! x 4!, colours alternating), judged by
    sgfmill and scored whole: from each legal order the climb (reach 3: every move of a colour can reach
    every turn of it) ends on an order no neighbour beats, never below where it started, and the
    likeliest of them all is left as it is."""
    seq = sgf_moves(SMALL)
    problem = problem_of(seq)
    assert problem.prisoners != (0, 0)
    legal = {}
    for black in itertools.permutations(seq[0::2]):
        for white in itertools.permutations(seq[1::2]):
            order = [m for pair in zip(black, white) for m in pair]
            if verdict(order, problem) == "ok":
                legal[tuple(order)] = whole(shipped, order)
    assert len(legal) == 72
    optima = {
        order
        for order, ll in legal.items()
        if all(legal.get(tuple(new), -1e9) <= ll + 1e-9 for new in brute_neighbours(list(order), 3).values())
    }
    best = max(legal, key=legal.get)
    assert best in optima
    for order, ll in legal.items():
        got = pol.polish(shipped, problem, list(order), reach=3)
        assert tuple(got.moves) in optima, order
        assert got.ll >= ll - 1e-9 and got.ll == pytest.approx(legal[tuple(got.moves)], abs=1e-6)
    kept = pol.polish(shipped, problem, list(best), reach=3)
    assert kept.moves == list(best) and kept.applied == 0


def test_the_budget_stops_the_climb_between_rounds(shipped, capture_games):
    """With a budget of one evaluation the climb stops after its first round: one round's changes at most."""
    from moveorder.nets.networks import turn_points
    from test_captures import captures_by_move

    game = next(g[:40] for g in capture_games if sum(captures_by_move(g[:40])) > 0)
    seq = turn_points(game, 4)
    problem = problem_of(seq)
    free = pol.polish(shipped, problem, seq, reach=2)
    cut = pol.polish(shipped, problem, seq, reach=2, budget=1)
    assert len(free.lls) > 2 and len(cut.lls) == 2
    assert cut.lls[1] == pytest.approx(free.lls[1], abs=1e-9)


def test_an_order_that_does_not_reach_the_position_is_refused(shipped):
    seq = sgf_moves(SMALL)
    problem = problem_of(seq)
    with pytest.raises(ValueError, match="does not replay legally to the position"):
        pol.polish(shipped, problem, seq[::-1], reach=1)
    with pytest.raises(ValueError, match="does not replay legally"):
        pol.polish(shipped, problem, [coords.to_lz((18, 18))] + seq[1:], reach=1)
