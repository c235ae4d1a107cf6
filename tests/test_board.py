"""Captures, suicide and ko on moveorder.go.board."""

import pytest

from moveorder.go import board as gb
from moveorder.go import coords


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


def test_group_is_the_connected_stones_of_one_colour_and_whether_one_has_a_liberty():
    # Black B1-B2-B3 in a line, White A1-A2-A3 and C1-C2-C3 on both sides of it: B4 is black's last
    # liberty, A4 white's on the left.
    b = gb.from_stones(
        [coords.from_gtp(m) for m in ("B1", "B2", "B3")],
        [coords.from_gtp(m) for m in ("A1", "A2", "A3", "C1", "C2", "C3")],
    )
    flat = {m: coords.to_flat(coords.from_gtp(m)) for m in ("A1", "A2", "A3", "B1", "B2", "B3")}
    group, free = b.group(flat["B2"])
    assert sorted(group) == sorted(flat[m] for m in ("B1", "B2", "B3")) and free
    white, white_free = b.group(flat["A1"])
    assert sorted(white) == sorted(flat[m] for m in ("A1", "A2", "A3")) and white_free
    b.play(gb.WHITE, coords.from_gtp("B4"))  # fills black's last liberty: captured
    assert all(b.points[flat[m]] == gb.EMPTY for m in ("B1", "B2", "B3"))


def test_groups_without_liberties():
    b = gb.from_stones(black=[(0, 0)], white=[(0, 1), (1, 0)])
    assert gb.groups_without_liberties(b) == [[(0, 0)]]
    assert gb.groups_without_liberties(gb.from_stones([(3, 3)], [(15, 15)])) == []


def test_adjacent_points_by_hand():
    gb._NEIGHBOURS.pop(3, None)  # the table computed here, not one an earlier test left in the cache
    gb._NEIGHBOURS.pop(4, None)
    # 3x3, flat top row first: 0 1 2 / 3 4 5 / 6 7 8; up, down, left, right.
    assert gb.adjacent_points(3) == [
        (3, 1),
        (4, 0, 2),
        (5, 1),
        (0, 6, 4),
        (1, 7, 3, 5),
        (2, 8, 4),
        (3, 7),
        (4, 6, 8),
        (5, 7),
    ]
    assert gb.adjacent_points(4)[5] == (1, 9, 4, 6) and gb.adjacent_points(4) is gb.adjacent_points(4)


def test_a_small_board_names_its_points_by_its_size():
    """9x9: points, captures and messages on that board (GTP rows count from 9)."""
    b = gb.Board(9)
    assert b.play(gb.BLACK, coords.from_gtp("B8", 9)) == 0 and b.get((1, 1)) == gb.BLACK
    assert b.points[1 * 9 + 1] == gb.BLACK and sum(b.points) == gb.BLACK
    with pytest.raises(gb.IllegalMove, match="^B8 is occupied$"):
        b.play(gb.WHITE, (1, 1))
    s = gb.from_stones([coords.from_gtp(p, 9) for p in ["A8", "B9"]], [], 9)
    with pytest.raises(gb.IllegalMove, match="^A9 is suicide$"):
        s.play(gb.WHITE, coords.from_gtp("A9", 9))
    ko = gb.from_stones(
        [coords.from_gtp(p, 9) for p in ["B4", "C3", "C5"]],
        [coords.from_gtp(p, 9) for p in ["D3", "D5", "E4", "C4"]],
        9,
    )
    assert ko.play(gb.BLACK, coords.from_gtp("D4", 9)) == 1
    with pytest.raises(gb.IllegalMove, match="^C4 retakes a ko$"):
        ko.play(gb.WHITE, coords.from_gtp("C4", 9))


def test_a_long_chain_is_captured_whole_and_ko_only_after_a_single_stone_recapture():
    # White's three stones on the top edge, A19 B19 C19, taken by Black D19 with A18 B18 C18 in place.
    b = gb.from_stones(
        [coords.from_gtp(p) for p in ["A18", "B18", "C18"]], [coords.from_gtp(p) for p in ["A19", "B19", "C19"]]
    )
    assert b.play(gb.BLACK, coords.from_gtp("D19")) == 3 and b.ko is None
    assert b.stones(gb.WHITE) == []
    # One stone takes one stone but keeps two liberties: not a ko (White may not play there: suicide).
    c = gb.from_stones([coords.from_gtp("B1")], [coords.from_gtp("A1")])
    assert c.play(gb.BLACK, coords.from_gtp("A2")) == 1 and c.ko is None
    with pytest.raises(gb.IllegalMove, match="^A1 is suicide$"):
        c.play(gb.WHITE, coords.from_gtp("A1"))
    assert c.play(gb.WHITE, None) == 0 and c.ko is None


def test_a_copy_is_independent():
    b = gb.from_stones([(3, 3)], [(15, 15)])
    c = b.copy()
    assert c.points == b.points and c.ko is b.ko and c.size == 19
    c.play(gb.BLACK, (0, 0))
    assert b.get((0, 0)) == gb.EMPTY and c.get((0, 0)) == gb.BLACK


def test_stones_and_positions_by_hand():
    b = gb.from_stones([(3, 3)], [(15, 15), (0, 1)])
    assert b.stones(gb.WHITE) == [(0, 1), (15, 15)] and b.stones(gb.BLACK) == [(3, 3)]
    with pytest.raises(ValueError, match="^D16 holds two stones$"):
        gb.from_stones([(3, 3)], [(3, 3)])
    with pytest.raises(ValueError, match="^B8 holds two stones$"):
        gb.from_stones([(1, 1)], [(1, 1)], 9)
    assert gb.Board().ko is None and gb.Board(9).points == [gb.EMPTY] * 81
    # An eye (an empty point with no empty neighbour) is not a group without liberties.
    assert gb.groups_without_liberties(gb.from_stones([(0, 1), (1, 0)], [])) == []


def test_a_board_prints_with_coordinates_and_reads_back():
    b = gb.Board()
    b.play(gb.BLACK, coords.from_gtp("D4"))
    b.play(gb.WHITE, coords.from_gtp("Q16"))
    b.play(gb.BLACK, coords.from_gtp("T19"))
    lines = str(b).splitlines()
    assert len(lines) == 21
    assert lines[0] == "   A B C D E F G H J K L M N O P Q R S T" == lines[-1]
    # row 19 is the top line: T19 is its last point; row 16 has Q16; row 4 has D4, fourth column
    assert lines[1] == "19 " + ". " * 18 + "X 19"
    assert lines[4] == "16 " + ". " * 15 + "O . . . 16"
    assert lines[16] == " 4 . . . X " + ". " * 15 + "4"
    again = gb.from_text(str(b))
    assert again.points == b.points
    assert again.stones(gb.BLACK) == [coords.from_gtp("T19"), coords.from_gtp("D4")]


def test_a_corner_drawn_in_rows_is_the_top_left_of_the_board():
    b = gb.from_text(
        """
        . X O
        X O .
        """
    )
    assert b.stones(gb.BLACK) == [(0, 1), (1, 0)] and b.stones(gb.WHITE) == [(0, 2), (1, 1)]
    assert gb.from_text("XXXXXXXXXXXXXXXXXXX").stones(gb.BLACK) == [(0, c) for c in range(19)]
    with pytest.raises(ValueError, match=r"row 2, column 2: '#' is not X, O or \."):
        gb.from_text("...\n.#.")
    with pytest.raises(ValueError, match="row 1 has 20 points"):
        gb.from_text("." * 20)


# Top-left corner, row 19 at the top, worked by hand for the flood fill:
#   A19 B19 C19 D19        X X O .     Black A19-B19-A18: one liberty, A17.   White C19: D19, C18.
#   A18 B18 C18 D18        X O . O     White B18: one liberty, C18.           Black B17: A17, B16.
#   A17 B17 C17 D17        . X O O     White D18-C17-D17: D19, C18, E18, C16, D16, E17.
#   A16 B16 C16 D16        X . . .     Black A16: A17, A15, B16.
FLOOD_CORNER = """
X X O .
X O . O
. X O O
X . . .
"""


def _gtp_set(flat_points):
    return {coords.to_gtp(divmod(p, coords.SIZE)) for p in flat_points}


@pytest.mark.parametrize(
    "start, members, edge",
    [
        ("B19", "A19 B19 A18", "A17"),
        ("C19", "C19", "D19 C18"),
        ("B18", "B18", "C18"),
        ("B17", "B17", "A17 B16"),
        ("C17", "D18 C17 D17", "D19 C18 E18 C16 D16 E17"),
        ("A16", "A16", "A17 A15 B16"),
        # Empty points: the region and the stones bordering it.
        ("A17", "A17", "A18 B17 A16"),
        ("C18", "C18", "C19 B18 D18 C17"),
    ],
)
def test_flood_fill_by_hand(start, members, edge):
    b = gb.from_text(FLOOD_CORNER)
    first = coords.to_flat(coords.from_gtp(start))
    got, got_edge = gb.flood_fill(b.points, gb.adjacent_points(coords.SIZE), first)
    assert got[0] == first and len(got) == len(set(got))
    assert _gtp_set(got) == set(members.split())
    assert _gtp_set(got_edge) == set(edge.split())


def test_flood_fill_empty_region_spans_the_open_board():
    b = gb.from_text(FLOOD_CORNER)
    region, border = gb.flood_fill(b.points, gb.adjacent_points(coords.SIZE), coords.to_flat(coords.from_gtp("D19")))
    assert len(region) == coords.POINTS - 10 - 2  # every point but the 10 stones, A17 and C18
    assert _gtp_set(border) == set("C19 D18 D17 C17 B17 A16".split())


def test_flood_fill_adds_to_a_shared_seen_set():
    b = gb.from_text(FLOOD_CORNER)
    adj, seen = gb.adjacent_points(coords.SIZE), {0}
    group, _ = gb.flood_fill(b.points, adj, coords.to_flat(coords.from_gtp("C17")), seen)
    assert seen == {0} | set(group)
