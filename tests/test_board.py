"""Captures, suicide and ko on moveorder.board."""

import pytest

from moveorder import board as gb
from moveorder import coords


def play_all(b, moves, colour=gb.BLACK):
    caps = []
    for m in moves:
        caps.append(b.play(colour, coords.from_gtp(m)))
        colour = gb.opponent(colour)
    return caps


def test_capture_in_corner():
    b = gb.Board()
    caps = play_all(b, ["A1", "A2", "pass", "B1"])  # white captures A1
    assert caps == [0, 0, 0, 1]
    assert b.get(coords.from_gtp("A1")) == gb.EMPTY


def test_group_capture_and_replay():
    moves = [coords.from_gtp(m) for m in ["B2", "A2", "B1", "C1", "pass", "C2", "pass", "B3", "pass", "A1"]]
    board, caps = gb.replay(moves)
    # After white A1 the black group B1-B2 has no liberty: two stones captured (A1 itself was empty).
    assert caps[-1] == 2
    assert board.get(coords.from_gtp("B2")) == gb.EMPTY


def test_suicide_is_illegal_and_board_unchanged():
    b = gb.Board()
    play_all(b, ["B1", "pass", "A2"])
    before = list(b.points)
    with pytest.raises(gb.IllegalMove, match="suicide"):
        b.play(gb.WHITE, coords.from_gtp("A1"))
    assert b.points == before


def test_ko_retake_forbidden_then_allowed():
    # White C4 stands alone in atari at D4: black D4 captures it and makes a ko.
    b = gb.from_stones(
        black=[coords.from_gtp(p) for p in ["B4", "C3", "C5"]],
        white=[coords.from_gtp(p) for p in ["D3", "D5", "E4", "C4"]],
    )
    assert b.play(gb.BLACK, coords.from_gtp("D4")) == 1  # captures C4
    with pytest.raises(gb.IllegalMove, match="ko"):
        b.play(gb.WHITE, coords.from_gtp("C4"))
    b.play(gb.WHITE, coords.from_gtp("Q16"))
    b.play(gb.BLACK, coords.from_gtp("Q4"))
    assert b.play(gb.WHITE, coords.from_gtp("C4")) == 1  # allowed after a move elsewhere


def test_occupied():
    b = gb.Board()
    b.play(gb.BLACK, (3, 3))
    with pytest.raises(gb.IllegalMove, match="occupied"):
        b.play(gb.WHITE, (3, 3))


def test_groups_without_liberties():
    b = gb.from_stones(black=[(0, 0)], white=[(0, 1), (1, 0)])
    assert gb.groups_without_liberties(b) == [[(0, 0)]]
    assert gb.groups_without_liberties(gb.from_stones([(3, 3)], [(15, 15)])) == []
