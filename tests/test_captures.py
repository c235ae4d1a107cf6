"""moveorder.search.captures: orders of play for positions with captures (issue 25).

The property every test checks: a sequence the search returns, replayed
from the empty board on sgfmill's board (with the rules it leaves out:
no suicide, no simple-ko retake, positional superko; :func:`replay`), is
legal and gives exactly the input stones and prisoner counts.  The
prisoners of a sequence are counted on that replay too, never by the
module under test.  The hand-made cases were found by
seeded random play in the top-left 4x4 corner (each one's pattern is
asserted below, so a changed case cannot pass silently).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets.features import board_history_planes
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator, evaluator_over
from moveorder.search import captures as cap
from moveorder.search import dispatch, prunes
from moveorder.search import layer as capture_layer
from moveorder.search import problem as prob
from moveorder.search.beam import beam_search
from moveorder.search.boards import history_planes, position_log_probs, replay_boards, sequence_log_probs
from moveorder.search.plans import capture_plan, capture_sites, captured_placed, captured_points
from moveorder.settings import SearchConfig


def replay(moves_lz):
    """An independent replay of a sequence (Leela Zero indices, Black first) on sgfmill's board.

    sgfmill captures but allows suicide and has no ko rule: a move onto an occupied point, a suicide,
    a retake of the point sgfmill names as simple ko, and a move repeating any earlier whole-board
    position (positional superko) raise AssertionError naming the move.  Returns the positions (a
    frozenset of ``(colour, point)`` each, the empty board first) and, per move, the points (ours:
    row 0 the top) of the stones it captured.
    """
    from sgfmill import boards

    board, ko = boards.Board(coords.SIZE), None
    positions, captured = [frozenset()], []
    for i, k in enumerate(moves_lz):
        colour, point = "bw"[i % 2], coords.from_lz(k)
        row, col = coords.to_sgfmill(point)
        assert board.get(row, col) is None, f"move {i + 1} is on a stone"
        assert (row, col) != ko, f"move {i + 1} retakes a ko"
        ko = board.play(row, col, colour)
        now = frozenset((c, (coords.SIZE - 1 - r, q)) for c, (r, q) in board.list_occupied_points())
        assert ("bw"[i % 2], point) in now, f"move {i + 1} is a suicide"
        assert now not in positions, f"move {i + 1} repeats a position"
        gone = positions[-1] - now
        assert all(c != colour for c, _ in gone)
        captured.append(sorted(p for _, p in gone))
        positions.append(now)
    return positions, captured


def problem_of(moves_lz):
    """The problem a legal sequence answers: its final stones and the prisoners it took (:func:`replay`)."""
    positions, captured = replay(moves_lz)
    black = tuple(sorted(coords.to_lz(p) for c, p in positions[-1] if c == "b"))
    white = tuple(sorted(coords.to_lz(p) for c, p in positions[-1] if c == "w"))
    taken = [len(c) for c in captured]
    return prob.Problem(black, white, sum(taken[0::2]), sum(taken[1::2]))


def assert_answers(seq, problem):
    """``seq`` replays legally from the empty board to exactly ``problem``'s stones and prisoners."""
    assert len(seq) == problem.moves
    assert problem_of(seq) == problem


def problem_of_board(text, prisoners):
    """The problem of an ASCII board (:func:`helpers.load_board`) with prisoners (Black's, White's)."""
    from helpers import load_board

    black, white = load_board(text)
    return prob.Problem(
        tuple(sorted(coords.to_lz(p) for p in black)), tuple(sorted(coords.to_lz(p) for p in white)), *prisoners
    )


def gtp_moves(text):
    return [coords.to_lz(coords.from_gtp(m)) for m in text.split()]


def sgf_moves(text):
    return coords.sgf_to_lz([text[k : k + 2] for k in range(0, len(text), 2)])


def captures_by_move(moves_lz):
    return [len(c) for c in replay(moves_lz)[1]]


def unreachable_problem():
    """Two black stones far apart and one white stone captured: the counts fit, but no sequence reaches it
    (a capture needs the capturer's stones around the captured one)."""
    return prob.Problem((coords.to_lz(coords.from_gtp("K10")), coords.to_lz(coords.from_gtp("Q16"))), (), 1, 0)


def corner_play(rng, moves: int, corner: int = 4):
    """Random legal play in the top-left ``corner`` x ``corner`` (Leela Zero indices, Black first): each
    move the first legal point of a random permutation; shorter where a side has no legal move."""
    board, seq = goboard.Board(), []
    for i in range(moves):
        for p in rng.permutation(corner * corner):
            move = (int(p) // corner, int(p) % corner)
            try:
                board.play(goboard.BLACK if i % 2 == 0 else goboard.WHITE, move)
            except goboard.IllegalMove:
                continue
            seq.append(coords.to_lz(move))
            break
        else:
            break
    return seq


# Found by seeded random play in the 4x4 corner; what happens in each is asserted in the test.
HAND_MADE = {
    "four stones at once": "cadcbdabccbbbabcdbddacaacbbb",
    "captured, then the capturer plays on its point": "cacddcabaadbccbcbdbaacaaadcb",
    "snapback": "dbbdcdaabcadabbbdcdacacbbaaa",
    "ko fight": "aadddbcbcaadbbbdccbcdadcabcdaccb",
}


def check_pattern(name, seq):
    _, captured = replay(seq)
    caps = [len(c) for c in captured]
    points = [coords.from_lz(k) for k in seq]

    def taken_at(i):  # points emptied by move i (0-based)
        return captured[i]

    if name == "four stones at once":
        assert caps[12] == 4
    elif name == "captured, then the capturer plays on its point":
        (q,) = taken_at(9)
        assert caps[9] == 1 and q in points[11::2]  # the capturer's colour plays there later
    elif name == "snapback":
        (q,) = taken_at(12)
        assert caps[12] == 1 and points[13] == q and caps[13] == 2
    elif name == "ko fight":
        (q,) = taken_at(8)
        assert caps[8] == 1 and points[15] == q and caps[15] == 1 and taken_at(15) == [points[8]]
        assert all(points[j] != q for j in range(9, 15))  # the retake waited (simple ko)


@pytest.fixture(scope="module")
def shipped():
    """The network shipped with the package (4x32, Tygem 9d games): the tool's default likelihood."""
    return PolicyLikelihood.from_file("tygem", device="cpu")


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_hand_made_positions_are_answered_exactly(shipped, name):
    """A beam of 64 finds an answer for each (the backtracking is tested where it runs out, below)."""
    actual = sgf_moves(HAND_MADE[name])
    check_pattern(name, actual)
    problem = problem_of(actual)
    assert problem.prisoners_black + problem.prisoners_white > 0
    stats = prob.SearchStats()
    (found,) = cap.search(shipped, [problem], width=64, stats=stats)
    assert found is not None, f"{name}: no sequence found"
    seq, ll = found
    assert_answers(seq, problem)
    assert float(sequence_log_probs(shipped, seq).sum()) == pytest.approx(ll, abs=1e-9)
    assert stats.evaluations > 0 and stats.children >= stats.pruned


@pytest.mark.parametrize("n", [30, 50])
def test_real_games_with_captures_every_answer_replays_to_the_input(shipped, capture_games, n):
    """A property over real games: whatever the search returns is legal and exactly the input."""
    actual = [g[:n] for g in capture_games if sum(captures_by_move(g[:n])) > 0][:6]
    assert len(actual) == 6
    problems = [problem_of(a) for a in actual]
    stats = prob.SearchStats()
    found = cap.search(shipped, problems, width=16, patience=0, stats=stats)
    for problem, a, r in zip(problems, actual, found):
        if r is None:
            continue
        seq, ll = r
        assert_answers(seq, problem)
        assert float(sequence_log_probs(shipped, seq).sum()) == pytest.approx(ll, abs=1e-9)
    assert sum(r is not None for r in found) >= 4  # measured: 6 of 6 at 30 moves, 4 of 6 at 60
    assert stats.not_found == sum(r is None for r in found)
    # Batched or alone, a problem's search is its own.
    k = next(k for k, r in enumerate(found) if r is not None)
    assert cap.search(shipped, problems[k : k + 1], width=16, patience=0) == found[k : k + 1]


def test_the_search_never_prunes_a_real_sequence(capture_games):
    """The necessary conditions hold along every actual sequence: the candidate filter keeps each move,
    and every prefix passes :func:`moveorder.search.captures._alive` (real games, and random corner play)."""
    from moveorder.nets.features import FLAT_OF_LZ

    rng = np.random.default_rng(5)
    corner = []
    while len(corner) < 150:  # random legal play in the 4x4 corner: captures galore
        moves = corner_play(rng, 16)
        if len(moves) == 16 and sum(captures_by_move(moves)):
            corner.append(moves)
    for actual in corner + capture_games:
        problem = problem_of(actual)
        if not (problem.black and problem.white):
            continue
        t = prunes.Target(problem)
        board = goboard.Board()
        for i, k in enumerate(actual):
            colour = goboard.BLACK if i % 2 == 0 else goboard.WHITE
            cur = np.frombuffer(bytes(board.points), dtype=np.uint8)[FLAT_OF_LZ][None, :]
            allowed = (cur == 0) & ((t.final_lz == colour)[None, :] | prunes.doomed_allowed(t, cur, colour, i))
            assert allowed[0, k], (actual, i)
            board.play(colour, coords.from_lz(k))
            assert i + 1 == len(actual) or prunes.alive(t, board, i + 1), (actual, i)


def test_the_doomed_set_tier_keeps_one_child_a_set(shipped, capture_games):
    """The tier that keeps the beam from dying together: each child it keeps stands for a set of
    doomed points (stones the rest must capture) no other kept child has, likeliest first."""
    actual = next(g[:50] for g in capture_games if sum(captures_by_move(g[:50])) >= 2)
    problem = problem_of(actual)
    t = prunes.Target(problem)
    final = np.frombuffer(t.final, dtype=np.uint8)

    def doomed(p):
        cur = np.frombuffer(p.hist[0], dtype=np.uint8)
        return frozenset(np.nonzero((cur != 0) & (cur != final))[0].tolist())

    parent, i = capture_layer.root(), 0
    while True:  # the first move of the actual sequence with three or more places for a doomed stone
        colour = goboard.BLACK if i % 2 == 0 else goboard.WHITE
        lp = position_log_probs(shipped, [parent.hist], i % 2 == 0)[:, : coords.POINTS]
        layer = capture_layer.Layer(t, [parent], lp, i, capture_layer.no_estimates(), 1.0)
        doomed_children = [
            k
            for k in layer.pts.tolist()
            if t.final_lz[k] != colour and capture_layer.make_child(t, parent, k, colour, 0.0, i, False) is not None
        ]
        if len(doomed_children) >= 3:
            break
        parent = capture_layer.make_child(t, parent, actual[i], colour, 0.0, i, False)
        i += 1
        assert i < 40, "no move with three places for a doomed stone"
    kept = []
    layer.prune_budget = 10**6
    layer._fill_doomed_sets(kept, 8)
    sets = [doomed(c) for c in kept]
    assert len(kept) == min(8, 1 + len(doomed_children)) and len(set(sets)) == len(kept)
    # From one parent, one child plays a final stone (its set is the parent's); the others each put a
    # doomed stone somewhere else, the likeliest of those places first.
    own = [c.moves[-1] for c in kept if t.final_lz[c.moves[-1]] == colour]
    assert len(own) == 1
    assert [c.ll for c in kept] == sorted((c.ll for c in kept), reverse=True)
    free = [k for k in range(coords.POINTS) if t.final_lz[k] == colour and parent.hist[0][coords.lz_to_flat(k)] == 0]
    assert own == [max(free, key=lambda k: lp[0, k])]


# A ko in the top-left corner, taken three times with moves elsewhere between (no simple-ko retake).
# After move 8 (W B18), 9 (B C18 takes B18), 12 (W B18 takes C18) and 15 (B C18 takes B18):
#
#       A B C D      A B C D      A B C D      A B C D
#   19  . X O .      . X O .      . X O .      . X O .
#   18  X O . O      X . X O      X O . O      X . X O
#   17  . X O .      . X O .      . X O .      . X O .
#
# Moves 1-7 place the shape (B B19, W C19, B A18, W D18, B B17, W C17, B K10); 10, 11, 13, 14 are far.
KO_THRICE = gtp_moves("B19 C19 A18 D18 B17 C17 K10 B18 C18 Q16 D4 B18 Q4 K4 C18")


def test_capture_plan_names_each_captured_point_once():
    """An order's capture plan: the colour and point of each stone of it that is captured, sorted, a point
    captured twice (White's B18, in the ko) once."""
    b18, c18 = gtp_moves("B18 C18")
    assert [len(c) for c in replay(KO_THRICE)[1]] == [0] * 8 + [1, 0, 0, 1, 0, 0, 1]
    assert captured_points(KO_THRICE) == [(goboard.WHITE, b18), (goboard.BLACK, c18), (goboard.WHITE, b18)]
    assert capture_plan(KO_THRICE) == ((goboard.BLACK, c18), (goboard.WHITE, b18))
    assert capture_plan(KO_THRICE[:9]) == ((goboard.WHITE, b18),)
    assert capture_plan(KO_THRICE[:8]) == ()
    ko = sgf_moves(HAND_MADE["ko fight"])  # White's stone of move 4 and Black's of move 9 are captured
    assert capture_plan(ko) == ((goboard.BLACK, ko[8]), (goboard.WHITE, ko[3]))
    four = sgf_moves(HAND_MADE["four stones at once"])  # move 13 takes four white stones
    (taken,) = [c for c in replay(four)[1] if c]
    assert capture_plan(four) == tuple(sorted((goboard.WHITE, coords.to_lz(p)) for p in taken))
    assert len(capture_plan(four)) == 4


def test_a_move_repeating_an_earlier_position_is_refused():
    """Positional superko beyond the simple ko: Black's move 11 takes two stones and leaves the position
    after move 6 (White to move there, Black here).  The board module plays it (it is no simple-ko
    retake); the search's child builder refuses it, though the position is the target itself."""
    seq = gtp_moves("A18 B17 B18 A17 C19 C18 A19 B19 A18 A19 B18")
    after_6 = """
        . . X
        X X O
        O O .
        """
    after_10 = """
        O O X
        X . O
        O O .
        """
    from helpers import load_board

    positions, captured = replay(seq[:10])
    for text, k in ((after_6, 6), (after_10, 10)):
        black, white = load_board(text)
        assert positions[k] == {("b", p) for p in black} | {("w", p) for p in white}
    with pytest.raises(AssertionError, match="^move 11 repeats a position"):
        replay(seq)
    board = goboard.Board()
    for i, k in enumerate(seq):
        board.play(goboard.BLACK if i % 2 == 0 else goboard.WHITE, coords.from_lz(k))
    # Black took 2 (moves 11: A19 B19), White 3 (move 8: A18 B18 A19); 6 black and 5 white moves.
    problem = problem_of_board(after_6, (2, 3))
    assert problem.moves == 11 and sum(len(c) for c in captured) == 3
    t = prunes.Target(problem)
    assert bytes(board.points) == t.final
    parent = capture_layer.root()
    for i, k in enumerate(seq[:10]):
        parent = capture_layer.make_child(t, parent, k, goboard.BLACK if i % 2 == 0 else goboard.WHITE, 0.0, i, False)
        assert parent is not None, i
    assert capture_layer.make_child(t, parent, seq[10], goboard.BLACK, 0.0, 10, True) is None


def test_a_plan_keeps_doomed_stones_on_its_points_and_every_actual_move(capture_games):
    """With the capture plan of a real sequence, each of its moves stays a candidate of the search,
    and every doomed stone offered is on a point of the plan (without it, others are offered too)."""
    narrowed = 0
    for actual in capture_games[:8]:
        problem = problem_of(actual)
        plan = capture_plan(actual)
        t, free = prunes.Target(problem, plan), prunes.Target(problem)
        parent = capture_layer.root()
        for i, k in enumerate(actual):
            colour = goboard.BLACK if i % 2 == 0 else goboard.WHITE
            zeros = np.zeros((1, coords.POINTS))
            layer = capture_layer.Layer(t, [parent], zeros, i, capture_layer.no_estimates(), 0.0)
            doomed = [q for q in layer.pts.tolist() if t.final_lz[q] != colour]
            assert k in layer.pts.tolist() and all((colour, q) in plan for q in doomed), (actual, i)
            unplanned = capture_layer.Layer(free, [parent], zeros, i, capture_layer.no_estimates(), 0.0)
            narrowed += len(unplanned.pts) > len(layer.pts)
            parent = capture_layer.make_child(t, parent, k, colour, 0.0, i, i == len(actual) - 1)
            assert parent is not None, (actual, i)
    assert narrowed > 0


def test_a_second_pass_keeps_the_likelier_order_and_answers_exactly(shipped, capture_games):
    """Two passes: every order is still an exact answer, never less likely than one pass's, likelier
    for some (measured: 3 of these 6 at width 4), at about twice the evaluations; a pass with a plan
    keeps its captured stones on the plan's points."""
    actual = [g[:40] for g in capture_games if sum(captures_by_move(g[:40])) > 0][:6]
    problems = [problem_of(a) for a in actual]
    one, two = prob.SearchStats(), prob.SearchStats()
    first = cap.search(shipped, problems, width=4, patience=0, stats=one)
    second = cap.search(shipped, problems, width=4, patience=0, stats=two, beam_passes=2)
    for problem, r1, r2 in zip(problems, first, second):
        assert r1 is None or (r2 is not None and r2[1] >= r1[1])
        if r2 is not None:
            assert_answers(r2[0], problem)
            assert float(sequence_log_probs(shipped, r2[0]).sum()) == pytest.approx(r2[1], abs=1e-9)
    assert sum(r2 is not None and (r1 is None or r2[1] > r1[1]) for r1, r2 in zip(first, second)) >= 1
    assert 1.5 * one.evaluations <= two.evaluations <= 2.5 * one.evaluations
    k = next(k for k, r in enumerate(first) if r is not None)
    plan = capture_plan(first[k][0])
    (found,) = cap.capture_beam(shipped, problems[k : k + 1], width=4, plans=[plan])
    assert found and set(capture_plan(found[0][0])) <= set(plan)


def test_a_wider_pass_goes_only_to_positions_not_answered_yet(shipped, capture_games, monkeypatch):
    """``widen``: a pass after the first searches each position with no order yet with a wider beam, apart
    from the others (which keep the width and their plan, each plan searched once), and finds orders the
    narrow beam did not (measured: all 4 of these at 60 moves, against 3 after the first pass of width 4)."""
    problems = [problem_of(capture_games[k]) for k in (0, 1, 3, 13)]
    calls, outs = [], []
    real = cap.capture_beam

    def spy(likelihood, batch, width, *args, **kwargs):
        plans = kwargs.get("plans") or [None] * len(batch)
        out = real(likelihood, batch, width, *args, **kwargs)
        calls.append((width, [problems.index(p) for p in batch], plans, [bool(r) for r in out]))
        outs.append(out)
        return out

    monkeypatch.setattr(cap, "capture_beam", spy)
    wide = cap.search(shipped, problems, width=4, patience=0, beam_passes=3, beam_widen=4)
    first = [r[0] if r else None for r in outs[0]]  # the first pass: one pass of width 4
    unanswered = [k for k, r in enumerate(first) if r is None]
    assert [c[:2] for c in calls[:3]] == [(4, [0, 1, 2, 3]), (4, [k for k in range(4) if first[k]]), (16, unanswered)]
    answered, plans_of = set(), {k: [] for k in range(4)}
    for j, (width, members, plans, got) in enumerate(calls):
        for k, plan, ok in zip(members, plans, got):
            if j:  # a later pass: wide exactly where no order was found before, else with a plan not searched yet
                assert (width == 16) == (k not in answered) == (plan is None)
                assert plan is None or plan not in plans_of[k]
            plans_of[k].append(plan)
            answered |= {k} if ok else set()
    assert sum(len(c[1]) for c in calls[3:]) < 4  # the third pass skips the plans searched in the second
    for problem, r1, r2 in zip(problems, first, wide):
        assert r1 is None or (r2 is not None and r2[1] >= r1[1])
        if r2 is not None:
            assert_answers(r2[0], problem)
            assert float(sequence_log_probs(shipped, r2[0]).sum()) == pytest.approx(r2[1], abs=1e-9)
    assert sum(r is not None for r in wide) == 4 > sum(r is not None for r in first)
    with pytest.raises(ValueError, match="^beam_widen 0: expected at least 1$"):
        cap.search(shipped, problems, width=4, beam_widen=0)


def test_a_pass_within_a_plan_may_be_wider_too(shipped, capture_games, monkeypatch):
    """``widen found``: a later pass searches a position answered before within that order's capture plan
    with its own width (2 x 4 = 8 here), apart from the positions with no order yet (4 x 4 = 16); every
    order found replays to the position (sgfmill), none less likely than the first pass's, and the
    network evaluations stay within the budget worked out by hand: 4 a move x (1 + 4) beams at most."""
    problems = [problem_of(capture_games[k]) for k in (0, 1, 3, 13)]
    calls = []
    real = cap.capture_beam

    def spy(likelihood, batch, width, *args, **kwargs):
        out = real(likelihood, batch, width, *args, **kwargs)
        plans = kwargs.get("plans") or [None] * len(batch)
        calls.append((width, [problems.index(p) for p in batch], [p is not None for p in plans], out))
        return out

    monkeypatch.setattr(cap, "capture_beam", spy)
    stats = prob.SearchStats()
    found = cap.search(
        shipped, problems, width=4, patience=0, beam_passes=2, beam_widen=4, beam_widen_found=2, stats=stats
    )
    first = [bool(r) for r in calls[0][3]]
    answered = [k for k in range(4) if first[k]]
    assert calls[0][:2] == (4, [0, 1, 2, 3]) and answered and len(answered) < 4
    assert calls[1][:3] == (8, answered, [True] * len(answered))  # within each order's plan, twice as wide
    assert calls[2][:2] == (16, [k for k in range(4) if not first[k]])  # no order yet: four times as wide
    for k, (problem, r) in enumerate(zip(problems, found)):
        if k in answered:
            assert r is not None and r[1] >= calls[0][3][k][0][1]
        if r is not None:
            assert_answers(r[0], problem)
            assert float(sequence_log_probs(shipped, r[0]).sum()) == pytest.approx(r[1], abs=1e-9)
    # One beam of 4, then one of 8 or 16 (4 x 4 at most), then the last rung's (16) where none was found.
    budget = sum(4 * p.moves * (1 + 4 + 4) for p in problems)
    assert stats.evaluations <= budget == cap.evaluation_budget(problems, 4, 2, 4, 0, beam_widen_found=2)
    assert cap.evaluation_budget(problems, 4, 2, 1, 0, beam_widen_found=2) == sum(
        4 * p.moves * (1 + 2 + 1) for p in problems
    )
    with pytest.raises(ValueError, match="^beam_widen_found 0: expected at least 1$"):
        cap.search(shipped, problems, width=4, beam_widen_found=0)


def test_after_the_first_pass_a_position_is_searched_in_its_likeliest_orientation_only(
    shipped, capture_games, monkeypatch
):
    """``groups`` (the orientations of one position): after the first pass, of a group with an order, only
    the member whose order is likeliest is searched again (the others get no later pass, last rung or
    backtracking), so the orientations searched cost about one orientation's evaluations from then on;
    a group with none is searched everywhere, as without groups.  Every order replays to its problem
    (sgfmill), and no group's best is less likely than after its first pass."""
    games = [capture_games[k] for k in (0, 1, 3, 7)]
    problems = [dispatch.turned(problem_of(g), s) for g in games for s in (0, 3)]  # as given, half a turn
    groups = [k // 2 for k in range(len(problems))]
    calls, backtracked = [], []
    real, real_bt = cap.capture_beam, cap._backtrack_counted

    def spy(likelihood, batch, width, *args, **kwargs):
        out = real(likelihood, batch, width, *args, **kwargs)
        calls.append(([problems.index(p) for p in batch], out))
        return out

    def spy_bt(likelihood, problem, *args):
        backtracked.append(problems.index(problem))
        return real_bt(likelihood, problem, *args)

    monkeypatch.setattr(cap, "capture_beam", spy)
    monkeypatch.setattr(cap, "_backtrack_counted", spy_bt)
    found = cap.search(shipped, problems, width=4, patience=1, beam_passes=2, beam_widen=4, groups=groups)
    first = [r[0] if r else None for r in calls[0][1]]  # (order, ll) or None, problem by problem
    assert calls[0][0] == list(range(8))
    later = [a for members, _ in calls[1:] for a in members] + backtracked
    for g in range(4):
        a, b = 2 * g, 2 * g + 1
        if first[a] is None and first[b] is None:
            continue  # searched everywhere, as without groups
        lead = a if first[b] is None or (first[a] is not None and first[a][1] >= first[b][1]) else b
        assert (a if lead == b else b) not in later, (g, later)  # the other orientation rests
        best = max(r[1] for r in found[a : a + 2] if r is not None)
        assert best >= first[lead][1]
    assert sum(first[2 * g] is not None or first[2 * g + 1] is not None for g in range(4)) >= 2
    for problem, r in zip(problems, found):
        if r is not None:
            assert_answers(r[0], problem)
    with pytest.raises(ValueError, match="^groups: 3 labels for 8 problems$"):
        cap.search(shipped, problems, width=4, groups=[0, 0, 1])


def test_history_planes_are_the_training_planes(capture_games):
    """The search's input for positions with captures is training's (features.board_history_planes)."""
    moves = capture_games[0]
    boards = replay_boards(moves)
    stack = np.array([np.frombuffer(b, dtype=np.uint8) for b in boards], dtype=np.int8)
    assert any(np.count_nonzero(stack[i + 1]) <= np.count_nonzero(stack[i]) for i in range(len(moves)))
    for i in (0, 1, 5, 20, len(moves) - 1):
        hist = tuple(boards[max(0, i - 7) : i + 1][::-1])
        ours = history_planes([hist], i % 2 == 0)[0].numpy()
        assert np.array_equal(ours, board_history_planes(stack, i, i % 2 == 0))


@pytest.mark.parametrize("future", [0.0, 1.0])
def test_capture_free_positions_get_the_beams_orders(model, real_games, future):
    """Without captures the search is the ranked beam of moveorder.search.beam, order for order."""
    from moveorder.data.arrangements import clip

    arrs = [clip(r, 14, "pro") for r in real_games[70:74]]
    pairs = [(coords.sgf_to_lz(a.black), coords.sgf_to_lz(a.white)) for a in arrs]
    ours = cap.capture_beam(model, [prob.Problem(tuple(sorted(b)), tuple(sorted(w))) for b, w in pairs], 8, future)
    theirs = beam_search(PositionEvaluator(model), pairs, width=8, future=future)
    for (seq, ll), ((ref, ref_ll),) in zip((o[0] for o in ours), theirs):
        assert seq == ref
        assert ll == pytest.approx(ref_ll, abs=1e-9)
    # and the likelihood of a capture-free sequence is the same on both paths
    seq = torch.tensor([coords.sgf_to_lz(arrs[0].actual)])
    assert np.allclose(sequence_log_probs(model, seq[0].tolist()), model.log_probs(seq)[0].numpy(), atol=1e-9)


def test_a_position_no_sequence_reaches_is_not_answered(model):
    """Two black stones far apart cannot have captured a white stone: counts fit, the board does not."""
    problem = unreachable_problem()
    stats = prob.SearchStats()
    assert cap.search(model, [problem], width=8, stats=stats) == [None]
    assert stats.not_found == 1 and stats.backtracked == 1 and stats.unreachable == 1


@pytest.mark.parametrize("max_beams", [5, 12])
def test_backtracking_stops_after_its_budget_of_beams_each_one_network_call(shipped, max_beams):
    """Backtracking's budget counts beams, one network call each however few prefixes it holds (a call
    costs a padded batch), not evaluations: on the 32-move ko fight, which a narrow beam cannot finish
    within 12 beams (32 are needed on the way down), exactly ``max_beams`` calls are made, counted at the
    network, and the search gives up without a proof."""
    problem = problem_of(sgf_moves(HAND_MADE["ko fight"]))
    calls = []
    real = shipped.probs_of_planes

    def counted(planes):
        calls.append(planes.shape[0])
        return real(planes)

    shipped.probs_of_planes = counted
    try:
        assert cap.backtrack(shipped, problem, 4, 1.0, max_beams) == (None, False)
    finally:
        del shipped.probs_of_planes
    assert len(calls) == max_beams
    assert max(calls) <= 4 and sum(calls) > max_beams  # beams of up to 4 prefixes, more than one a beam


@pytest.mark.parametrize(
    "black, white, prisoners, reason",
    [
        (["D4"], ["Q16"], (-1, 0), "cannot be negative"),
        (["D4"], [], (0, 1), "Black plays as many moves as White or one more"),
        (["D4", "Q16"], ["D16"], (2, 0), "Black plays as many moves as White or one more"),
        ([], [], (0, 0), "no stones and no prisoners"),
        (["A2", "B1"], ["A1"], (0, 0), "without liberties (A1)"),
        (["D4"], [], (1, 0), "White has no stone on the board"),
    ],
)
def test_impossible_counts_and_boards_are_refused(black, white, prisoners, reason):
    with pytest.raises(ValueError, match=reason.replace("(", r"\(").replace(")", r"\)")) as err:
        prob.check_problem([coords.from_gtp(p) for p in black], [coords.from_gtp(p) for p in white], prisoners, "x.sgf")
    assert str(err.value).startswith("x.sgf: ")


def test_the_refusals_say_what_is_wrong_word_for_word():
    """The whole messages, for a reader: each count worked out by hand."""

    def refused(black, white, prisoners):
        with pytest.raises(ValueError) as err:
            prob.check_problem(
                [coords.from_gtp(p) for p in black], [coords.from_gtp(p) for p in white], prisoners, "x.sgf"
            )
        return str(err.value)

    # Two white groups without liberties on the bottom row, A1 B1 (under A2 B2, beside C1) and T1 (5 black
    # moves, 3 + 2 white).
    assert refused(["A2", "B2", "C1", "S1", "T2"], ["A1", "B1", "T1"], (2, 0)) == (
        "x.sgf: group(s) without liberties (A1 B1; T1): no legal move leaves a group so"
    )
    # A white stone and two black stones taken: Black's 2 moves, White's 1; Black's move is the last (3rd).
    assert refused([], ["D4"], (0, 2)) == (
        "x.sgf: the last of the 3 moves is Black's, but Black has no stone on the board: nothing after the "
        "last move can have captured it"
    )
    assert refused(["D4"], [], (1, 0)) == (
        "x.sgf: the last of the 2 moves is White's, but White has no stone on the board: nothing after the "
        "last move can have captured it"
    )
    assert refused(["D4", "Q16"], ["D16"], (2, 0)) == (
        "x.sgf: 2 black and 1 white stones with prisoners 2 (Black's) and 0 (White's) make 2 black and 3 white "
        "moves: with Black first and alternating moves, Black plays as many moves as White or one more"
    )
    assert refused([], [], (0, 0)) == "x.sgf: the position has no stones and no prisoners"
    assert refused(["D4"], [], (0, -1)) == "x.sgf: prisoners 0 -1: counts cannot be negative"


def test_one_stone_is_a_position():
    prob.check_problem([coords.from_gtp("D4")], [], (0, 0), "x.sgf")  # one move, Black's


def test_a_consistent_position_passes_the_checks():
    prob.check_problem([coords.from_gtp("B1"), coords.from_gtp("A2")], [], (1, 0), "x.sgf")  # W A1 was captured


def test_only_the_beam_orders_positions_with_captures():
    with_captures, plain = prob.Problem((0,), (), 1, 0), prob.Problem((0,), ())
    dispatch.refuse(with_captures, "beam", "x.sgf")
    dispatch.refuse(plain, "anneal", "x.sgf")
    for method in ("anneal", "beam+anneal"):
        expected = (
            "x.sgf: a position with captures (prisoners 1 0); the inference assumes no captures with method "
            f"'{method}': --method beam orders positions with captures"
        )
        with pytest.raises(ValueError, match=re.escape(expected)):
            dispatch.refuse(with_captures, method, "x.sgf")
        # the one entry point refuses it before any search: no evaluator is needed to find out
        cfg = SearchConfig(method=method, iterations=1)
        with pytest.raises(ValueError, match=re.escape(expected.replace("x.sgf", "problem 1"))):
            dispatch.run(None, [plain, with_captures], cfg)


def test_feasibility_conditions():
    """Each necessary condition of the search, on hand-built states (flat boards)."""
    # Target: black B1 A2, White's A1 captured (Black 1 prisoner); 3 moves: B B1, W A1, B A2.
    problem = prob.Problem(tuple(sorted(coords.to_lz(coords.from_gtp(p)) for p in ("B1", "A2"))), (), 1, 0)
    t = prunes.Target(problem)
    board = goboard.Board()
    board.play(goboard.BLACK, coords.from_gtp("B1"))
    board.play(goboard.WHITE, coords.from_gtp("A1"))
    assert prunes.alive(t, board, 2)  # A1 is doomed, and its only other liberty is a final black point
    board = goboard.Board()
    board.play(goboard.BLACK, coords.from_gtp("B1"))
    board.play(goboard.WHITE, coords.from_gtp("C1"))
    assert not prunes.alive(t, board, 2)  # C1's liberties C2, D1 are no final black points: no budget left
    board = goboard.Board()
    board.play(goboard.BLACK, coords.from_gtp("B1"))
    board.play(goboard.WHITE, coords.from_gtp("A1"))
    board.play(goboard.BLACK, coords.from_gtp("C1"))
    assert not prunes.alive(t, board, 3)  # C1 is a doomed black stone: Black's budget is 0
    # Target: black B1 A2, white C3, and a white stone captured (4 moves: B W B W).  After B B1, W C3,
    # B A2 every stone stands where it ends and White still owes a stone, but Black has no move left.
    problem = prob.Problem(
        tuple(sorted(coords.to_lz(coords.from_gtp(p)) for p in ("B1", "A2"))),
        (coords.to_lz(coords.from_gtp("C3")),),
        1,
        0,
    )
    t = prunes.Target(problem)
    board = goboard.Board()
    for colour, p in ((goboard.BLACK, "B1"), (goboard.WHITE, "C3"), (goboard.BLACK, "A2")):
        board.play(colour, coords.from_gtp(p))
    assert not prunes.alive(t, board, 3)
    board = goboard.Board()
    board.play(goboard.BLACK, coords.from_gtp("B1"))
    assert prunes.alive(t, board, 1)  # W A1, B A2 (capturing it), W C3 is still open


def test_a_final_stone_joined_to_more_doomed_stones_than_can_be_captured_is_pruned():
    """The slack prune of ``_alive``: after B A18, W B19, B A19 the black group A18 A19 holds a stone where
    the position has none (A19), so both stones are captured later; White captures one black stone in
    all (Black's slack 1 - 0 - 2 = -1), so no continuation reaches the position.  Every other condition
    holds (White's slack 3 - 0 - 1 = 2; the only liberty that costs a move is B18), so without the slack
    check the child is kept; the search offers the move (Black's budget is unused), and the prune is
    the one that cuts it."""
    problem = problem_of_board(
        """
        . . X
        X . X
        O X .
        """,
        (3, 1),
    )  # 5 black moves (4 stones, 1 captured), 4 white (1 stone, 3 captured)
    assert problem.moves == 9
    t = prunes.Target(problem)
    a19, a18, b19 = gtp_moves("A19 A18 B19")
    parent = capture_layer.root()
    for i, k in enumerate((a18, b19)):
        parent = capture_layer.make_child(t, parent, k, goboard.BLACK if i % 2 == 0 else goboard.WHITE, 0.0, i, False)
    board = parent.board.copy()
    board.play(goboard.BLACK, coords.from_lz(a19))
    assert not prunes.alive(t, board, 3)
    # The prefix B A18, W B19 is alive: a sequence through it reaches the position (Black plays C18 next).
    answer = gtp_moves("A18 B19 C18 B18 B17 A17 C19 A19 A18")
    assert problem_of(answer) == problem and answer[:2] == [a18, b19]
    # In the search: the layer after those two moves offers A19 and, building every child, prunes it.
    layer = capture_layer.Layer(t, [parent], np.zeros((1, coords.POINTS)), 2, capture_layer.no_estimates(), 0.0)
    assert a19 in layer.pts.tolist() and answer[2] in layer.pts.tolist()
    kept = layer.choose(len(layer.pts), 0.0)
    assert layer.exhausted and layer.pruned >= 1
    assert answer[2] in [c.moves[-1] for c in kept] and a19 not in [c.moves[-1] for c in kept]
    assert capture_layer.make_child(t, parent, a19, goboard.BLACK, 0.0, 2, False) is None


def test_slack_is_the_moves_left_less_the_final_points_not_held():
    """``_slack``: a colour's capture budget less its stones captured so far and its stones where the
    position has none of its colour, which is, counted on the independent replay, its moves left less
    its final points it does not hold.  (So where it is 0 and all the final points of the colour that
    plays last are held, that colour has no move left: the last move always has a point.)"""
    for seq in [sgf_moves(HAND_MADE[name]) for name in sorted(HAND_MADE)] + [KO_THRICE]:
        problem = problem_of(seq)
        t = prunes.Target(problem)
        positions, captured = replay(seq)
        finals = {"b": set(problem.black), "w": set(problem.white)}
        values = set()
        for i in range(len(seq)):
            cur = np.zeros((1, coords.POINTS), dtype=np.uint8)
            for c, q in positions[i]:
                cur[0, coords.to_lz(q)] = 1 if c == "b" else 2
            for colour, name in ((goboard.BLACK, "b"), (goboard.WHITE, "w")):
                parity = 0 if name == "b" else 1
                left = len(seq[parity::2]) - len(seq[parity:i:2])
                held = {coords.to_lz(q) for c, q in positions[i] if c == name}
                want = left - len(finals[name] - held)
                assert prunes.slack(t, cur, colour, i).tolist() == [want], (seq, i, name)
                # the same board beside the empty one, where the slack is the stones of the colour the
                # sequence captures less its moves so far: each row its own
                lost = sum(len(c) for c in captured[1 - parity :: 2])
                both = np.concatenate([cur, np.zeros_like(cur)])
                empty = lost - len(seq[parity:i:2])
                assert prunes.slack(t, both, colour, i).tolist() == [want, empty], (seq, i, name)
                values.add(want)
        assert max(values) > 0


def alive_after(black, white, prisoners, moves):
    """``_alive`` after ``moves`` (GTP points, Black first), against the position of ``black`` and ``white``."""
    problem = prob.Problem(tuple(sorted(gtp_moves(black))), tuple(sorted(gtp_moves(white))), *prisoners)
    board = goboard.Board()
    for i, m in enumerate(moves.split()):
        board.play(goboard.BLACK if i % 2 == 0 else goboard.WHITE, coords.from_gtp(m))
    return prunes.alive(prunes.Target(problem), board, len(moves.split()))


def test_alive_counts_every_doomed_group_and_every_costly_liberty():
    """The counts of ``_alive`` on hand-built states, each worked out by hand."""
    # Black A1 and T1 stand where the position has no black stone: two groups, two black stones to be
    # captured, and White captures one (prisoners 0 1).  Their liberties are final white points.
    assert not alive_after("D4 D10 D16 K4", "A2 B1 S1 T2", (0, 1), "A1 A2 T1")
    # Black A1 alone is doomed (Black's slack 2 - 0 - 1 = 1, White's 0): its liberty A2 costs a move,
    # B1 is a final white point; 1 <= 1.  (B A1, W B1, B A2, W B2, B D4, W A3 taking two, B D10 reaches
    # the position, replayed by sgfmill here.)
    assert alive_after("D4 D10", "A3 B1 B2", (0, 2), "A1")
    final = prob.Problem(tuple(sorted(gtp_moves("D4 D10"))), tuple(sorted(gtp_moves("A3 B1 B2"))), 0, 2)
    assert problem_of(gtp_moves("A1 B1 A2 B2 D4 A3 D10")) == final
    # With B1 no white point: A2 and B1 both cost a move, and the slacks add up to 1.
    assert not alive_after("D4 D10", "Q4 Q16 Q10", (0, 2), "A1")
    # White A1 is doomed (White's slack 2 - 0 - 1 = 1) and Black has played all its moves: nothing can
    # capture A1, though its one costly liberty (A2) is within the slack.
    assert not alive_after("B1 D4 D10", "Q16", (2, 0), "B1 A1 D4 Q16 D10")
    # With A2 a black point and one white stone captured, Black's A2 is still to come and takes A1.
    assert alive_after("A2 B1 D4", "Q16", (1, 0), "B1 A1 D4 Q16")
    final = prob.Problem(tuple(sorted(gtp_moves("A2 B1 D4"))), tuple(sorted(gtp_moves("Q16"))), 1, 0)
    assert problem_of(gtp_moves("B1 A1 D4 Q16 A2")) == final


def test_doomed_stones_go_where_the_budgets_can_pay_for_their_liberties():
    """``_doomed_ok`` on the position of the slack test after B A18, W B19 (Black to move): Black's
    slack 1 - 0 - 0 = 1, White's 3 - 0 - 1 = 2, so a black doomed stone may go where at most 2 of its
    empty neighbours are no final white point: A19 (none), B18 (C18, B17), C19 (D19, C18), A17 (A16,
    B17), A16 (A15, B16; A17 is White's) and three corners of the board; nowhere with a budget of 0."""
    from moveorder.nets.features import FLAT_OF_LZ

    problem = problem_of_board(
        """
        . . X
        X . X
        O X .
        """,
        (3, 1),
    )
    t = prunes.Target(problem)
    board = goboard.Board()
    board.play(goboard.BLACK, coords.from_gtp("A18"))
    board.play(goboard.WHITE, coords.from_gtp("B19"))
    cur = np.frombuffer(bytes(board.points), dtype=np.uint8)[FLAT_OF_LZ][None, :]
    ok = prunes.doomed_allowed(t, cur, goboard.BLACK, 2)
    assert ok.shape == (1, coords.POINTS)
    allowed = {coords.to_gtp(coords.from_lz(k)) for k in np.nonzero(ok[0] & (cur[0] == 0))[0].tolist()}
    assert allowed == {"A19", "B18", "C19", "A17", "A16", "A1", "T1", "T19"}
    # Without captures of Black to spare (prisoners 3 0 and one more white stone), no doomed black stone.
    t0 = prunes.Target(prob.Problem(problem.black, tuple(sorted(problem.white + tuple(gtp_moves("Q16")))), 3, 0))
    assert not prunes.doomed_allowed(t0, cur, goboard.BLACK, 2)[0].any()


# --- the arrangements and the one-position tool ---------------------------------------------------


def record_of(moves_sgf_text):
    from helpers import make_sgf
    from moveorder.data.records import read_sgf

    moves = [moves_sgf_text[k : k + 2] for k in range(0, len(moves_sgf_text), 2)]
    return read_sgf(make_sgf(moves).encode(), "corner.sgf")


def test_an_arrangement_with_captures_keeps_the_stones_standing_and_the_prisoners():
    from moveorder.data.arrangements import Arrangement, clip, eligible

    text = HAND_MADE["four stones at once"]
    rec = record_of(text)
    a = clip(rec, 14, "pro")
    problem = problem_of(sgf_moves(text))
    assert a.prisoners == [problem.prisoners_black, problem.prisoners_white] == [4, 0]
    assert coords.sgf_to_lz(a.black) == sorted(problem.black) or sorted(coords.sgf_to_lz(a.black)) == list(
        problem.black
    )
    assert sorted(coords.sgf_to_lz(a.white)) == list(problem.white)
    assert a.black == sorted(a.black) and a.white == sorted(a.white)
    assert Arrangement.from_json(a.to_json()) == a
    assert prob.problem_of_arrangement(a) == problem
    before = clip(rec, 12, "pro")  # before the capture: every move's stone, no prisoners
    assert before.prisoners == [0, 0] and len(before.black) + len(before.white) == 12
    # which records may be drawn, by the selection's captures option
    assert eligible(rec, 14, "allowed", 14) and eligible(rec, 14, "required", 14)
    assert eligible(rec, 12, "allowed", 12) and not eligible(rec, 12, "required", 12)
    assert not eligible(rec, 15, "allowed", 15)  # too short
    with pytest.raises(ValueError, match="captures 'sometimes'"):
        eligible(rec, 14, "sometimes", 14)


def test_an_old_arrangement_line_reads_as_capture_free():
    import json

    from moveorder.data.arrangements import Arrangement

    line = json.dumps({"id": "g", "set": "pro", "n": 2, "black": ["dd"], "white": ["pp"], "actual": ["dd", "pp"]})
    assert Arrangement.from_json(line).prisoners == [0, 0]


def infer_tool(*args):
    from moveorder import cli

    return cli.main(["infer", *map(str, args), "--quiet"])


def replayed_by_sgfmill(path):
    """The stones after replaying an SGF file's moves with sgfmill (an external board), and its prisoners."""
    from sgfmill import boards, sgf

    game = sgf.Sgf_game.from_bytes(path.read_bytes())
    board, taken = boards.Board(19), {"b": 0, "w": 0}
    for node in game.get_main_sequence()[1:]:
        colour, (row, col) = node.get_move()
        before = sum(1 for _ in board.list_occupied_points())
        board.play(row, col, colour)
        after = sum(1 for _ in board.list_occupied_points())
        taken[colour] += before + 1 - after
    stones = {
        c: sorted(coords.to_sgf((18 - r, col)) for c2, (r, col) in board.list_occupied_points() if c2 == c)
        for c in "bw"
    }
    return stones["b"], stones["w"], (taken["b"], taken["w"])


def test_the_tool_orders_a_record_with_captures_with_the_beam_only(tmp_path, caplog):
    from helpers import make_sgf

    text = HAND_MADE["captured, then the capturer plays on its point"]
    rec = tmp_path / "corner.sgf"
    rec.write_text(make_sgf([text[k : k + 2] for k in range(0, len(text), 2)]))
    out = tmp_path / "ordered.sgf"
    # The paper's annealing: refused, naming the capture and the beam (the default is the beam).
    assert infer_tool(rec, "--moves", 14, "--quality", "paper", "-o", out) == 2
    (error,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert (
        error.startswith(f"{rec}: move 10 (White B19)") and "captures 1 stone(s)" in error and "--method beam" in error
    )
    assert not out.exists()
    assert infer_tool(rec, "--moves", 14, "--method", "beam", "--beam-width", 16, "-o", out) == 0
    a = record_of(text)
    from moveorder.data.arrangements import clip

    want = clip(a, 14, "x")
    black, white, taken = replayed_by_sgfmill(out)
    assert (black, white) == (want.black, want.white)
    assert list(taken) == want.prisoners == [0, 1]
    assert "Prisoners: Black 0, White 1." in out.read_text()


def test_the_tool_orders_setup_stones_with_prisoners(tmp_path, caplog):
    from moveorder.data.arrangements import clip

    want = clip(record_of(HAND_MADE["ko fight"]), 16, "x")
    pos = tmp_path / "pos.sgf"
    pos.write_text(f"(;GM[1]FF[4]SZ[19]KM[6.5]AB[{']['.join(want.black)}]AW[{']['.join(want.white)}])")
    out = tmp_path / "ordered.sgf"
    args = [pos, "--method", "beam", "--beam-width", 16, "-o", out, "--prisoners", *want.prisoners]
    assert infer_tool(*args) == 0
    black, white, taken = replayed_by_sgfmill(out)
    assert (black, white, list(taken)) == (want.black, want.white, want.prisoners)
    # a record's prisoners come from the record: --prisoners with one is refused
    rec = tmp_path / "rec.sgf"
    from helpers import make_sgf

    rec.write_text(make_sgf(["dd", "pp"]))
    assert infer_tool(rec, "-o", tmp_path / "o.sgf", "--prisoners", 1, 0) == 2
    assert "a record's prisoners come from its own moves" in caplog.records[-1].getMessage()


@pytest.mark.parametrize(
    "stones, prisoners, reason",
    [
        ("AB[jj][pd]", (1, 0), "no legal sequence from the empty board reaches this position with prisoners 1 0"),
        ("AB[jj]", (0, 1), "Black plays as many moves as White or one more"),
        ("AB[ab][ba]AW[aa]", (1, 0), "group(s) without liberties (A19)"),
    ],
)
def test_the_tool_refuses_a_position_no_sequence_reaches(tmp_path, caplog, stones, prisoners, reason):
    pos = tmp_path / "pos.sgf"
    pos.write_text(f"(;GM[1]FF[4]SZ[19]{stones})")
    out = tmp_path / "o.sgf"
    assert infer_tool(pos, "--method", "beam", "--beam-width", 8, "-o", out, "--prisoners", *prisoners) == 2
    message = caplog.records[-1].getMessage()
    assert message.startswith(f"{pos}: ") and reason in message
    assert not out.exists()


def test_infer_set_orders_a_file_with_and_without_captures(tmp_path, shipped):
    """infer-set on a file mixing positions with captures and without: the beam answers both kinds (the
    capture-free one exactly as alone), the rows say what was captured where, and the annealer refuses."""
    from moveorder.data.arrangements import clip, write_jsonl
    from moveorder.search.inference import infer_set
    from moveorder.search.results import load_results

    arrs = [clip(record_of(HAND_MADE[name]), 14, "corner") for name in sorted(HAND_MADE)]
    for k, a in enumerate(arrs):
        a.id = f"c{k}"
    plain = clip(record_of("ddpppdpqdpqdcqcpdcqcpcqpjjkk"), 14, "corner")
    assert plain.prisoners == [0, 0]
    plain.id = "plain"
    arrs.append(plain)
    path = tmp_path / "14m.jsonl"
    write_jsonl(path, arrs)
    ev = PositionEvaluator(shipped)
    cfg = SearchConfig(method="beam", beam_width=64, iterations=1)
    stats = infer_set(path, tmp_path / "out.jsonl", ev, cfg, chunk=3)
    rows = {r["id"]: r for r in load_results(tmp_path / "out.jsonl")}
    assert set(rows) == {a.id for a in arrs}
    for a in arrs:
        r = rows[a.id]
        if a.id == "plain":
            assert "prisoners" not in r
            alone = beam_search(ev, [(coords.sgf_to_lz(a.black), coords.sgf_to_lz(a.white))], width=64)
            assert coords.sgf_to_lz(r["inferred"]) == alone[0][0][0]
            continue
        assert r["prisoners"] == a.prisoners and r["found"]
        seq = coords.sgf_to_lz(r["inferred"])
        assert_answers(seq, prob.problem_of_arrangement(a))
        assert r["captured_placed"] == captured_placed(coords.sgf_to_lz(a.actual), seq)
        assert 0.0 <= r["captured_placed"] <= 1.0
        assert r["actual_log_likelihood"] == pytest.approx(
            float(sequence_log_probs(shipped, coords.sgf_to_lz(a.actual)).sum()), abs=1e-9
        )
    assert stats.evaluations > 0 and stats.not_found == 0
    # the table keeps the capture columns, blank for the capture-free row; the summary counts them
    from moveorder.report.metrics import summarize
    from moveorder.search.results import write_table

    table = write_table(load_results(tmp_path / "out.jsonl"), tmp_path / "14m.csv", tmp_path / "sgf")
    assert list(table.columns[-3:]) == ["prisoners", "found", "captured_placed"]
    plain_row = table[table["id"] == "plain"].iloc[0]
    assert plain_row["prisoners"] == "0 0" and plain_row["found"] is None
    assert set(table.loc[table["id"] != "plain", "prisoners"]) == {" ".join(map(str, a.prisoners)) for a in arrs[:-1]}
    import pandas as pd

    read = pd.read_csv(tmp_path / "14m.csv")
    row = summarize(read)
    assert row["found_share"] == 1.0
    assert row["mean_captured_placed"] == pytest.approx(np.mean([rows[a.id]["captured_placed"] for a in arrs[:-1]]))
    assert (tmp_path / "sgf" / "c0.sgf").exists()
    with pytest.raises(ValueError, match=r"corner.sgf \(c0\): a position with captures .* method 'anneal'"):
        infer_set(path, tmp_path / "anneal.jsonl", ev, SearchConfig(iterations=5, trials=1))


def test_captured_placed_counts_the_actual_captures_the_inference_repeats():
    """The share of the game's captured stones (a multiset of colour and point) that the inference also
    played, and lost, on the same point, worked out by hand on the ko taken three times (White's B18
    twice, Black's C18 once: 3 stones)."""
    far = gtp_moves("Q16 D4 Q4 K4 D16 Q10")
    once = KO_THRICE[:9] + far  # only move 9's capture of B18
    twice = KO_THRICE[:14] + far[4:5]  # B18 and C18 taken, B18 not retaken: Black plays D16 instead
    for seq, captures in ((once, 1), (twice, 2), (KO_THRICE, 3)):
        assert sum(len(c) for c in replay(seq)[1]) == captures
    assert captured_placed(KO_THRICE, once) == pytest.approx(1 / 3)
    assert captured_placed(KO_THRICE, twice) == pytest.approx(2 / 3)
    assert captured_placed(KO_THRICE, KO_THRICE) == 1.0
    assert captured_placed(twice, KO_THRICE) == 1.0  # both of its captures, and more
    assert captured_placed(once, twice) == 1.0
    assert captured_placed(KO_THRICE, KO_THRICE[:8] + far) == 0.0  # nothing captured in the inference
    assert captured_placed(far, far) == 1.0  # nothing to repeat
    # The hand-made case loses four white stones at once, A19 A18 B18 B17: of those, the ko loses B18 only.
    four = sgf_moves(HAND_MADE["four stones at once"])
    assert sorted(replay(four)[1][12]) == sorted(coords.from_gtp(p) for p in ("A19", "A18", "B18", "B17"))
    assert captured_placed(four, once) == pytest.approx(1 / 4)
    assert captured_placed(four, KO_THRICE) == pytest.approx(1 / 4)  # White's B18 twice, the game's once
    assert captured_placed(once, four) == 1.0
    assert captured_placed(KO_THRICE, four) == pytest.approx(1 / 3)  # B18 once of its twice; C18 is Black's


def turn_point(k: int, s: int) -> int:
    """Symmetry ``s`` of the board on a Leela Zero index, by hand (bit 4 swaps the axes, then bit 1
    mirrors the columns and bit 2 the rows); the pass stays."""
    if k == coords.PASS_INDEX:
        return k
    col, row = k % coords.SIZE, k // coords.SIZE
    if s & 4:
        col, row = row, col
    if s & 1:
        col = coords.SIZE - 1 - col
    if s & 2:
        row = coords.SIZE - 1 - row
    return row * coords.SIZE + col


@pytest.mark.parametrize("orientations, turns", [("seats", (0, 3)), ("all", range(8))])
def test_a_position_with_captures_is_searched_in_each_orientation(shipped, orientations, turns):
    """The capture search over several orientations of the board: its answer replays to the given
    position on sgfmill's board, and is the likeliest of the orders found by searching each turned
    position alone, turned back, with its likelihood as scored in the orientation it came from."""
    problem = problem_of(sgf_moves(HAND_MADE["snapback"]))
    ev = PositionEvaluator(shipped, cache_size=0)
    cfg = dict(method="beam", beam_width=8, patience=0)
    stats = prob.SearchStats()
    (found,) = dispatch.run(ev, [problem], SearchConfig(**cfg, orientations=orientations), stats=stats, keep=3)
    best = found.trials[0]
    assert_answers(best.moves, problem)
    alone = []
    for s in turns:
        turned = prob.Problem(
            tuple(sorted(turn_point(k, s) for k in problem.black)),
            tuple(sorted(turn_point(k, s) for k in problem.white)),
            *problem.prisoners,
        )
        (r,) = dispatch.run(ev, [turned], SearchConfig(**cfg))
        if r.trials:
            moves = r.trials[0].moves
            assert float(sequence_log_probs(shipped, moves).sum()) == pytest.approx(r.trials[0].log_likelihood)
            back = [next(k for k in range(coords.MOVES) if turn_point(k, s) == m) for m in moves]
            alone.append((r.trials[0].log_likelihood, back))
    top = max(alone, key=lambda x: x[0])
    assert best.log_likelihood == pytest.approx(top[0], abs=1e-9) and best.moves == top[1]
    assert [ll for _, ll in found.orders] == sorted((ll for _, ll in found.orders), reverse=True)
    assert len({tuple(m) for m, _ in found.orders}) == len(found.orders) >= 2  # distinct, turned back
    for moves, _ in found.orders:
        assert_answers(moves, problem)
    assert stats.not_found == 0


def test_a_position_no_sequence_reaches_is_proven_so_once_over_all_orientations(model):
    problem = unreachable_problem()
    stats = prob.SearchStats()
    cfg = SearchConfig(method="beam", beam_width=8, orientations="all")
    (found,) = dispatch.run(PositionEvaluator(model), [problem], cfg, stats=stats)
    assert found.trials == [] and stats.not_found == 1 and stats.unreachable == 1 and stats.backtracked == 8


# --- capture sites and the ladder of where doomed stones stand (search.plans, captures "Sites") ----


def _final_of(text):
    """The flat board (top row first) of an ASCII corner (:func:`helpers.load_board`)."""
    from helpers import load_board

    black, white = load_board(text)
    final = np.zeros(coords.POINTS, dtype=np.uint8)
    for colour, points in ((goboard.BLACK, black), (goboard.WHITE, white)):
        for p in points:
            final[coords.to_flat(p)] = colour
    return final


def _named(sites, colour):
    return {coords.to_gtp(coords.from_lz(int(k))) for k in np.nonzero(sites[colour])[0]}


def _random_corner_positions(seed, moves=200, corner=6):
    """Positions of seeded random play in the top-left ``corner`` x ``corner`` points, played on sgfmill's
    board (a move onto a stone, a suicide or a ko retake is skipped): full of groups in atari and captures."""
    import random

    from sgfmill import boards

    rng, board, ko, colour, out = random.Random(seed), boards.Board(coords.SIZE), None, "b", []
    for _ in range(moves):
        point = (rng.randrange(corner), rng.randrange(corner))
        row, col = coords.to_sgfmill(point)
        if board.get(row, col) is not None or (row, col) == ko:
            continue
        trial = board.copy()
        new_ko = trial.play(row, col, colour)
        if trial.get(row, col) is None:
            continue  # suicide
        board, ko, colour = trial, new_ko, "w" if colour == "b" else "b"
        out.append(board)  # a copy of its own: the next move plays on a copy of it
    return out


def _our_board(sgfmill_board):
    ours = goboard.Board()
    for c, (row, col) in sgfmill_board.list_occupied_points():
        ours.points[coords.to_flat((coords.SIZE - 1 - row, col))] = goboard.BLACK if c == "b" else goboard.WHITE
    return ours


def _captures_on_sgfmill(board, capturer):
    """Leela Zero index -> the stones of the other colour that ``capturer`` (``"b"`` or ``"w"``) removes by
    playing there, on a copy of sgfmill's ``board``, at every empty point next to one of those stones (no
    other point can take any).  sgfmill allows suicide: only the other colour's stones count."""
    enemy = "w" if capturer == "b" else "b"
    stones = {(row, col) for c, (row, col) in board.list_occupied_points() if c == enemy}
    out = {}
    for q in range(coords.POINTS):
        row, col = coords.to_sgfmill(coords.from_lz(q))
        if board.get(row, col) is not None or not stones & {
            (row + 1, col),
            (row - 1, col),
            (row, col + 1),
            (row, col - 1),
        }:
            continue
        trial = board.copy()
        trial.play(row, col, capturer)
        taken = len(stones) - sum(c == enemy for c, _ in trial.list_occupied_points())
        if taken > 0:
            out[q] = taken
    return out


@pytest.mark.parametrize("seed", range(4))
def test_capturing_points_are_what_sgfmill_captures_there(seed):
    """The capture beam's capturing points (``layer._capturing_points``, the stones a move there takes)
    in seeded random play, denser in groups in atari than real games, against sgfmill's board."""
    in_atari = 0
    for theirs in _random_corner_positions(seed):
        ours = _our_board(theirs)
        for enemy, capturer in ((goboard.BLACK, "w"), (goboard.WHITE, "b")):
            expected = _captures_on_sgfmill(theirs, capturer)
            assert capture_layer._capturing_points(ours, enemy) == expected
            in_atari += len(expected)
    assert in_atari >= 20  # the random play put many groups in atari


def test_capturing_points_by_hand():
    """Worked by hand (row 19 at the top): Black's A19 and C19 each have B19 as their one liberty, so White
    takes both there (groups sharing a liberty add up); Black's B18 has B17 too.  White's A18 has A17
    alone; D19 and C18 have two liberties."""
    from helpers import load_board

    black, white = load_board(
        """
        X . X O
        O X O .
        """
    )
    board = goboard.from_stones(black, white)
    lz = {m: coords.to_lz(coords.from_gtp(m)) for m in ("B19", "A17")}
    assert capture_layer._capturing_points(board, goboard.BLACK) == {lz["B19"]: 2}
    assert capture_layer._capturing_points(board, goboard.WHITE) == {lz["A17"]: 1}


def _regions_by_relabelling(points):
    """Empty regions found another way: every empty point starts with its own label and takes the smallest
    label among its empty neighbours until nothing changes."""
    adj = goboard.adjacent_points(coords.SIZE)
    label = {p: p for p, v in enumerate(points) if v == goboard.EMPTY}
    changed = True
    while changed:
        changed = False
        for p in label:
            low = min([label[p]] + [label[q] for q in adj[p] if q in label])
            if low < label[p]:
                label[p], changed = low, True
    regions = {}
    for p, name in label.items():
        regions.setdefault(name, set()).add(p)
    return {frozenset(r): {q for p in r for q in adj[p] if points[q] != goboard.EMPTY} for r in regions.values()}


@pytest.mark.parametrize("seed", range(2))
def test_empty_regions_match_an_independent_relabelling(seed):
    from moveorder.search.plans import _empty_regions

    adj = goboard.adjacent_points(coords.SIZE)
    for theirs in _random_corner_positions(seed)[::8]:
        final = np.array(_our_board(theirs).points, dtype=np.uint8)
        region_of, borders = _empty_regions(final, adj)
        got = {}
        for p, r in enumerate(region_of):
            assert (r >= 0) == (final[p] == goboard.EMPTY)
            if r >= 0:
                got.setdefault(r, set()).add(p)
        assert {frozenset(points): borders[r] for r, points in got.items()} == _regions_by_relabelling(final.tolist())


def test_capture_sites_are_the_points_the_other_colour_nearly_surrounds():
    """Worked by hand on the corner below (row 19 at the top).  Black sites, where no black stone
    stands and at most ``open_sides`` neighbours are not White's: A19 (B19, A18: none open); C19 (C18
    open), B18 (C18), A17 (A16), C17 (C18) with one; D18 (C18, E18), E19 (F19, E18), B16 (A16, B15) and
    the three far corners of the board (two empty neighbours each) with two.  No white site at 0 or 1:
    Black's one stone surrounds nothing; at 2, the far corners."""
    final = _final_of(
        """
        . O . O . .
        O . . . . .
        . O . O . .
        . . O X . .
        """
    )
    assert _named(capture_sites(final, 0), goboard.BLACK) == {"A19"}
    assert _named(capture_sites(final, 1), goboard.BLACK) == {"A19", "C19", "B18", "A17", "C17"}
    assert _named(capture_sites(final, 2), goboard.BLACK) == set("A19 C19 B18 A17 C17 D18 E19 B16 A1 T1 T19".split())
    assert _named(capture_sites(final, 1), goboard.WHITE) == set()
    assert _named(capture_sites(final, 2), goboard.WHITE) == {"A1", "T1", "T19", "A19"}


# Found by seeded random play in the top-left 5x5 corner: White's A17 (the eighth move) captures three
# black stones (A19, B19, A18), and White's last move plays A19 again.  The empty B19 and A18 stand in a
# region only White borders (sites), but A19 holds a white stone with two empty neighbours (two open
# sides), so no order with its doomed stones on the first rungs' sites answers it.
OFF_THE_SITES = "aaddcdcababbabacdcaa"


@pytest.mark.parametrize("passes", [1, 2])
def test_a_capture_off_the_sites_is_answered_on_the_last_rung(shipped, passes):
    """The sites alone (``sites=(1,)``) find nothing for it; the ladder (the default: the tight sites,
    the sites with one open side, anywhere) answers it with the beams it adds on the rungs left, where the
    passes (one or two here) end below the last."""
    actual = sgf_moves(OFF_THE_SITES)
    assert captures_by_move(actual) == [0] * 7 + [3, 0, 0]
    problem = problem_of(actual)
    sites = capture_sites(np.frombuffer(problem.final_board(), dtype=np.uint8), 1)
    off = [(c, k) for c, k in capture_plan(actual) if not sites[c][k]]
    assert [(c, coords.to_gtp(coords.from_lz(k))) for c, k in off] == [(goboard.BLACK, "A19")]
    assert cap.search(shipped, [problem], width=64, patience=0, sites=(1,)) == [None]
    (found,) = cap.search(shipped, [problem], width=64, patience=0, beam_passes=passes, beam_widen=2)
    assert found is not None
    assert_answers(found[0], problem)


# Worked by hand: White's C19 takes Black's A19 and B19 together.  Each of the two points has the other
# as a neighbour, empty at the end, so neither is a site of the point rule without open sides (every
# neighbour White's); together they are an empty region that only White's A18, B18 and C19 border.
TWO_TAKEN = "D4 Q16 A19 A18 B19 B18 C16 C19"


def test_an_empty_region_only_the_capturer_borders_is_a_tight_site():
    """TWO_TAKEN, worked by hand: A19 and B19 are Black's sites without open sides (the region rule), and
    nothing else is (D4, Q16 and C16 stand apart; every other empty point is in the board's one big
    region, which both colours border); White has none.  With the point rule alone (a planted bug:
    regions ignored) Black would have none."""
    problem = problem_of(gtp_moves(TWO_TAKEN))
    final = np.frombuffer(problem.final_board(), dtype=np.uint8)
    assert _named(capture_sites(final, 0), goboard.BLACK) == {"A19", "B19"}
    assert _named(capture_sites(final, 0), goboard.WHITE) == set()
    assert {"A19", "B19"} <= _named(capture_sites(final, 1), goboard.BLACK)


# Found by seeded random play in the top-left 5x5 corner: White's D18 (the tenth move) takes Black's C19
# and D19, and White's last move plays D19 again.  C19 is an empty region only White borders (B19, C18,
# D19): a site without open sides.  D19 holds a white stone with one empty neighbour (C19; E19 and D18
# White's): a site with one open side only.
CLIMB = "B17 E15 D19 C18 C19 E19 C16 B19 C17 D18 A18 D19"


@pytest.mark.parametrize("passes", [1, 2])
def test_the_ladder_climbs_from_the_tight_sites_to_one_open_side(shipped, passes, monkeypatch):
    """The default ladder searches the tight sites first (no order: D19 is not one), then the sites with
    one open side, which answer it, and nothing anywhere: the rungs the beams are given are ``[0]`` then
    ``[1]``, with one pass (the beams after the passes climb rung by rung) or two.  The order found
    replays on sgfmill's board to the position, taking C19 and D19."""
    actual = gtp_moves(CLIMB)
    assert captures_by_move(actual) == [0] * 9 + [2, 0, 0]
    problem = problem_of(actual)
    final = np.frombuffer(problem.final_board(), dtype=np.uint8)
    assert "D19" not in _named(capture_sites(final, 0), goboard.BLACK)
    assert {"C19", "D19"} <= _named(capture_sites(final, 1), goboard.BLACK)
    rungs, real = [], cap.capture_beam

    def spy(likelihood, batch, width, *args, **kwargs):
        out = real(likelihood, batch, width, *args, **kwargs)
        rungs.append((kwargs["sites"], [bool(r) for r in out]))
        return out

    monkeypatch.setattr(cap, "capture_beam", spy)
    (found,) = cap.search(shipped, [problem], width=16, patience=0, beam_passes=passes, beam_widen=2)
    assert found is not None
    assert rungs == [([0], [False]), ([1], [True])]  # nothing anywhere, nor within the plan found
    assert_answers(found[0], problem)
    assert sorted(coords.to_gtp(coords.from_lz(k)) for _, k in captured_points(found[0])) == ["C19", "D19"]


def test_a_proposer_plans_the_captures_where_the_first_pass_found_no_order(shipped, monkeypatch):
    """``proposer``: where the first pass found an order for no orientation of a position (OFF_THE_SITES:
    a capture off the sites), the proposer's own search runs over its orientations only, and the pass
    after the first searches the orientation of the proposer's likeliest order within that order's
    capture plan (the points sgfmill's replay of it captures, each colour's) and the other orientation as
    before; a position answered in the first pass is not proposed for.  The orders found replay to the
    position (sgfmill)."""
    off = problem_of(sgf_moves(OFF_THE_SITES))
    easy = problem_of(gtp_moves("D4 T1 Q16 D16 S1 C3 T2 R17 C17 Q3"))  # T2 takes T1, at 10 moves too
    problems = [dispatch.turned(p, s) for p in (off, easy) for s in (0, 3)]
    groups = [0, 0, 1, 1]
    proposer = PolicyLikelihood.from_file("tygem", device="cpu")
    calls, proposals = [], []
    real, real_search = cap.capture_beam, cap.search

    def spy(likelihood, batch, width, *args, **kwargs):
        out = real(likelihood, batch, width, *args, **kwargs)
        if likelihood is shipped:
            plans = kwargs.get("plans") or [None] * len(batch)
            calls.append(([problems.index(p) for p in batch], width, plans, out))
        return out

    def spy_search(likelihood, batch, *args, **kwargs):
        out = real_search(likelihood, batch, *args, **kwargs)
        if likelihood is proposer:
            proposals.append(([problems.index(p) for p in batch], kwargs.get("groups"), out))
        return out

    monkeypatch.setattr(cap, "capture_beam", spy)
    monkeypatch.setattr(cap, "search", spy_search)
    stats = prob.SearchStats()
    found = real_search(
        shipped, problems, width=16, patience=0, beam_passes=2, beam_widen=2, beam_widen_found=2,
        groups=groups, proposer=proposer, stats=stats,
    )  # fmt: skip
    first = calls[0][3]
    assert calls[0][0] == [0, 1, 2, 3] and not first[0] and not first[1] and (first[2] or first[3])
    assert [(members, g) for members, g, _ in proposals] == [([0, 1], [0, 0])]  # the unanswered position only
    proposed = proposals[0][2]
    j = max((a for a in (0, 1) if proposed[a] is not None), key=lambda a: proposed[a][1])
    order = proposed[j][0]
    assert_answers(order, problems[j])
    positions, _ = replay(order)
    gone = {(c, coords.to_lz(p)) for before, after in zip(positions, positions[1:]) for c, p in before - after}
    plan = {(goboard.BLACK if c == "b" else goboard.WHITE, k) for c, k in gone}
    second = [(a, w, p) for members, w, plans, _ in calls[1:2] for a, p in zip(members, plans)]
    assert (j, 32, tuple(sorted(plan))) in second  # the proposed plan, twice as wide
    assert (1 - j, 32, None) in second  # the other orientation as before (beam_widen 2)
    assert stats.proposer_evaluations == proposer.evaluations > 0
    assert found[0] is not None or found[1] is not None
    for problem, r in zip(problems, found):
        if r is not None:
            assert_answers(r[0], problem)


def test_the_proposer_is_the_shipped_network_and_stops_where_the_search_is_stopped():
    """``capture_proposer`` tygem: the dispatcher's proposer is the shipped 4x32 (its weights' shapes), on
    the search network's device, and each of its calls first calls the search network's ``on_batch``
    with 0, so a search stopped there (the page's cancel) stops inside the proposer's search too."""
    off = problem_of(sgf_moves(OFF_THE_SITES))
    main = PolicyLikelihood.from_file("tygem-6x128", device="cpu")
    cfg = SearchConfig(method="beam", beam_width=8, beam_passes=2, patience=0, capture_proposer="tygem")
    proposer = dispatch.proposer_of("tygem", main)
    assert (proposer.net.blocks_n, proposer.net.filters, proposer.device) == (4, 32, main.device)
    assert dispatch.proposer_of("none", main) is None
    with pytest.raises(
        ValueError, match=r"^capture_proposer 'leela': expected none or a shipped network \(tygem, tygem-6x128\)$"
    ):
        dispatch.proposer_of("leela", main)

    class Stopped(Exception):
        pass

    seen = []

    def on_batch(k):
        seen.append(k)
        if k == 0:
            raise Stopped

    main.on_batch = on_batch
    with pytest.raises(Stopped):
        dispatch.run(evaluator_over(main), [off], cfg)
    assert seen[-1] == 0 and all(k > 0 for k in seen[:-1])  # the first pass's calls, then the proposer's first
    assert proposer.evaluations == 0  # stopped before its first call


def test_the_one_position_tool_has_the_4x32_propose_unless_told(tmp_path):
    """``moveorder infer``'s default (the fast preset) has the shipped 4x32 propose capture plans and says so
    in the answer's settings; ``--capture-proposer none`` leaves it out.  On OFF_THE_SITES (no order on
    the first pass's sites) the answer replays on sgfmill's board to the record's own final position and
    prisoners either way."""
    from helpers import make_sgf

    rec = tmp_path / "corner.sgf"
    rec.write_text(make_sgf([OFF_THE_SITES[k : k + 2] for k in range(0, len(OFF_THE_SITES), 2)]))
    want = problem_of(sgf_moves(OFF_THE_SITES))
    for extra, said in (([], True), (["--capture-proposer", "none"], False)):
        out = tmp_path / f"ordered{len(extra)}.sgf"
        assert infer_tool(rec, "--network", "tygem", "--precision", "float32", "-o", out, *extra) == 0
        assert ("tygem proposing capture plans" in out.read_text()) == said
        black, white, taken = replayed_by_sgfmill(out)
        assert sorted(coords.to_lz(coords.from_sgf(m)) for m in black) == sorted(want.black)
        assert sorted(coords.to_lz(coords.from_sgf(m)) for m in white) == sorted(want.white)
        assert taken == (want.prisoners_black, want.prisoners_white) == (0, 3)


def _open_sides_on_sgfmill(moves_lz, colour_name, point):
    """Neighbours of ``point`` (ours) not holding the other colour after ``moves_lz``, on sgfmill's board,
    what stands on ``point``, and whether it is empty in a region that only the other colour borders."""
    from sgfmill import boards

    board = boards.Board(coords.SIZE)
    for i, k in enumerate(moves_lz):
        board.play(*coords.to_sgfmill(coords.from_lz(k)), "bw"[i % 2])
    other = "w" if colour_name == "b" else "b"

    def near(p):
        row, col = p
        around = [(row + dr, col + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))]
        return [(r, c) for r, c in around if 0 <= r < coords.SIZE and 0 <= c < coords.SIZE]

    def at(p):
        return board.get(*coords.to_sgfmill(p))

    region, stack, enclosed = {point}, [point], at(point) is None
    while stack and enclosed:  # the empty points connected to ``point``, and the stones around them
        for q in near(stack.pop()):
            if at(q) is None and q not in region:
                region.add(q)
                stack.append(q)
            elif at(q) is not None and at(q) != other:
                enclosed = False
    return sum(at(q) != other for q in near(point)), at(point), enclosed


@pytest.mark.parametrize("limit", [0, 1])
def test_the_first_rung_puts_doomed_stones_only_on_sites(shipped, capture_games, limit):
    """Real games at 40 moves with captures, searched on one rung alone: every stone an order found
    loses where the position has none of its colour stands on a point with at most ``limit`` (the rung's
    ``open_sides``) neighbours not the capturer's, or in an empty region only the capturer's stones border,
    counted on sgfmill's board after the order's own replay."""
    problems = [problem_of(m[:40]) for m in capture_games[:6]]
    problems = [p for p in problems if p.prisoners_black + p.prisoners_white]
    found = cap.search(shipped, problems, width=16, patience=0, sites=(limit,))
    checked = 0
    for problem, r in zip(problems, found):
        if r is None:
            continue
        assert_answers(r[0], problem)
        for colour, k in captured_points(r[0]):
            name = "b" if colour == goboard.BLACK else "w"
            open_sides, now, enclosed = _open_sides_on_sgfmill(r[0], name, coords.from_lz(k))
            if now != name:  # a doomed stone (a final stone captured and played again is not)
                assert open_sides <= limit or enclosed
                checked += 1
    assert checked >= 3


def test_the_points_where_a_move_captures_are_sgfmills(capture_games):
    """``layer._capturing_points``: for each position of real games, every empty point where the side
    to move captures and the stones it takes, against playing each empty point on sgfmill's board."""
    from sgfmill import boards

    for moves in capture_games[:4]:
        board, ours = boards.Board(coords.SIZE), goboard.Board()
        for i, k in enumerate(moves[:50]):
            colour = goboard.BLACK if i % 2 == 0 else goboard.WHITE
            if i % 5 == 0:
                expected = _captures_on_sgfmill(board, "bw"[i % 2])
                assert capture_layer._capturing_points(ours, goboard.opponent(colour)) == expected
            board.play(*coords.to_sgfmill(coords.from_lz(k)), "bw"[i % 2])
            ours.play(colour, coords.from_lz(k))


def test_the_players_order_is_scored_in_its_likeliest_orientation(capture_games):
    """Searched from both seats, an order is scored in the orientation where it is likeliest, and so is
    the players' own (on or above rests on it): each arrangement turned half a turn by hand (a <-> s on
    both axes) and scored as given, the likelier of the two kept; each game also played turned, so that
    some arrangements of each kind (capture-free at 20 moves, with captures at 40) are likelier turned."""
    from moveorder.data.arrangements import clip
    from moveorder.search.inference import _actual_log_likelihoods, infer_arrangements

    def half_turned(points):
        return ["".join(chr(ord("a") + ord("s") - ord(c)) for c in p) for p in points]

    shipped = PolicyLikelihood.from_file("tygem", device="cpu", max_batch=32)  # a sequence's 20 positions a batch

    def scored(points):
        return float(sequence_log_probs(shipped, coords.sgf_to_lz(points)).sum())

    ev = PositionEvaluator(shipped)
    cfg = SearchConfig(method="beam", beam_width=2, patience=0, orientations="seats")
    wins = {}
    for n, captures in ((20, False), (40, True)):
        games = [coords.lz_to_sgf(g[:n]) for g in capture_games if (sum(captures_by_move(g[:n])) > 0) == captures]
        arrs = [clip(record_of("".join(m)), n, "pro") for g in games[:3] for m in (g, half_turned(g))]
        assert len(arrs) == 6 and all(any(a.prisoners) == captures for a in arrs)
        for k, a in enumerate(arrs):
            a.id = f"g{k}"
        actual = _actual_log_likelihoods(ev, arrs, dispatch.turns(cfg))
        if not captures:  # the rows of an inference from both seats hold them (capture-free: the search is cheap)
            rows = infer_arrangements(ev, arrs, cfg, range(len(arrs)))
            assert [r["actual_log_likelihood"] for r in rows] == actual
        for a, ll in zip(arrs, actual):
            given, turned = scored(a.actual), scored(half_turned(a.actual))
            assert ll == pytest.approx(max(given, turned), abs=1e-4), a.id
            wins.setdefault(captures, set()).add(given > turned)
    # a value taken from either seat alone (the last one searched, or the board never turned) is caught
    assert wins == {False: {True, False}, True: {True, False}}


def _corner_states(n: int, corner: int):
    """Every board play in the top-left ``corner`` x ``corner`` reaches after 0..``n`` moves
    (Black first), by capture and suicide rules alone (no ko rule: a superset of legal play), each layer
    ``{board bytes: Board}``, and each board's children a layer on."""
    layers, children = [{bytes(goboard.Board().points): goboard.Board()}], []
    points = [(r, c) for r in range(corner) for c in range(corner)]
    for i in range(n):
        colour = goboard.BLACK if i % 2 == 0 else goboard.WHITE
        nxt, kids = {}, {}
        for key, board in layers[-1].items():
            kids[key] = set()
            for move in points:
                child = board.copy()
                child.ko = None
                try:
                    child.play(colour, move)
                except goboard.IllegalMove:
                    continue
                now = bytes(child.points)
                nxt.setdefault(now, child)
                kids[key].add(now)
        layers.append(nxt)
        children.append(kids)
    return layers, children


def test_alive_keeps_every_state_an_exhaustive_search_completes():
    """The exhaustive check of the prunes on a small board: in the 3x3 corner, every board play reaches
    after each number of moves, and whether some continuation in the corner reaches the position (found
    backwards from the position, by capture and suicide rules alone).  :func:`prunes.alive` must keep
    every board that reaches it, and cut most of the others (boards the rules allow but no continuation
    completes), so that the check is not empty."""
    rng = np.random.default_rng(11)
    problems = []
    while len(problems) < 6:
        moves = corner_play(rng, 10, corner=3)
        if len(moves) == 10 and sum(captures_by_move(moves)) >= 2:
            problem = problem_of(moves)
            if problem not in problems:
                problems.append(problem)
    layers, children = _corner_states(10, 3)
    dead = cut = 0
    for problem in problems:
        t = prunes.Target(problem)
        reaches = {t.final} if t.final in layers[10] else set()
        assert reaches, problem
        for i in range(9, -1, -1):
            reaches = {key for key, kids in children[i].items() if kids & reaches}
            for key in reaches:
                assert prunes.alive(t, layers[i][key], i), (problem, i, key)
            others = [b for key, b in layers[i].items() if key not in reaches]
            dead += len(others)
            cut += sum(not prunes.alive(t, b, i) for b in others)
    assert dead > 40_000 and cut > 0.95 * dead
