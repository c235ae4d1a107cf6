"""The board to look at: figure data, the text board, the drawing's artists and the written files.

Expected values come from sgfmill (its own SGF point reader, vertex names and
board replay) or are written out by hand, never from moveorder.go.coords.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from matplotlib.colors import to_rgba
from sgfmill import boards, common, sgf_properties

from helpers import OPENING
from moveorder.report import diagram


def sgfmill_point(text):
    """sgfmill's reading of an SGF point: (row from the bottom, col)."""
    return sgf_properties.interpret_go_point(text.encode(), 19)


def sgfmill_replay(moves):
    """The board after ``moves`` (Black first) on sgfmill's board, which captures on its own."""
    board = boards.Board(19)
    for k, m in enumerate(moves):
        row, col = sgfmill_point(m)
        board.play(row, col, "bw"[k % 2])
    return board


# A ko built by hand around E15 / F15 (SGF row e = 15, columns e, f), retaken twice:
#   1 E16  2 F16  3 D15  4 G15  5 E14  6 F14  7 Q4 (elsewhere)
#   8 White E15 (inside Black's mouth, one liberty at F15)
#   9 Black F15 captures 8: a ko (F15 alone, in atari at E15)
#  10 White D4 (a threat elsewhere)  11 Black Q17 (answers)
#  12 White E15 retakes, capturing 9
#  13 Black L10  14 White C17
#  15 Black F15 retakes, capturing 12
KO = ["ed", "fd", "de", "ge", "ef", "ff", "pp", "ee", "fe", "dp", "pc", "ee", "kj", "cc", "fe"]


def test_the_ko_sequence_is_what_its_comment_says():
    board = boards.Board(19)
    captures = {}
    for k, m in enumerate(KO, start=1):
        row, col = sgfmill_point(m)
        before = sum(1 for r in range(19) for c in range(19) if board.get(r, c))
        board.play(row, col, "bw"[(k - 1) % 2])
        after = sum(1 for r in range(19) for c in range(19) if board.get(r, c))
        captures[k] = before + 1 - after
    assert {k: n for k, n in captures.items() if n} == {9: 1, 12: 1, 15: 1}
    assert common.format_vertex(sgfmill_point("ee")) == "E15" and common.format_vertex(sgfmill_point("fe")) == "F15"
    # Black's F15 stands, White's E15 is gone.
    assert board.get(*sgfmill_point("fe")) == "b" and board.get(*sgfmill_point("ee")) is None


def test_figure_data_numbers_first_moves_and_notes_retaken_points():
    fig = diagram.figure_data(KO)
    by_name = {common.format_vertex(sgfmill_point(_sgf(s.point))): s for s in fig.stones}
    # Every point played is numbered once, with the first move played there (a Go book's figure).
    assert len(fig.stones) == 13
    assert (by_name["E15"].number, by_name["E15"].colour) == (8, "W")
    assert (by_name["F15"].number, by_name["F15"].colour) == (9, "B")
    assert (by_name["D4"].number, by_name["D4"].colour) == (10, "W")
    assert [n.text() for n in fig.notes] == ["8 = 12", "9 = 15"]
    assert fig.matching is None and not any(s.mismatch for s in fig.stones)


def _sgf(point):
    """Internal (row from the top, col) -> SGF letters, written out here: column letter, then row letter."""
    letters = "abcdefghijklmnopqrs"
    return letters[point[1]] + letters[point[0]]


def test_points_played_again_list_every_move_there():
    # White's A19 (2) is taken by 3; Black fills the point at 5.
    moves = ["ab", "aa", "ba", "pp", "aa"]
    assert sgfmill_replay(moves).get(18, 0) == "b"
    assert [n.text() for n in diagram.figure_data(moves).notes] == ["2 = 5"]
    # Taken and not replaced (after move 3): still numbered where it was played, as a Go book shows it.
    assert sgfmill_replay(moves[:3]).get(18, 0) is None
    taken = diagram.figure_data(moves[:3])
    assert [(s.point, s.number, s.colour) for s in taken.stones] == [
        ((1, 0), 1, "B"),
        ((0, 0), 2, "W"),
        ((0, 1), 3, "B"),
    ]
    assert taken.notes == ()
    # The ko once more: 16 White R3, 17 Black K10 (elsewhere), 18 White retakes E15 a second time.
    longer = KO + ["qq", "jj", "ee"]
    assert sgfmill_replay(longer).get(*sgfmill_point("ee")) == "w"
    assert sgfmill_replay(longer).get(*sgfmill_point("fe")) is None
    assert [n.text() for n in diagram.figure_data(longer).notes] == ["8 = 12 = 18", "9 = 15"]


def test_illegal_orders_and_passes_are_refused():
    with pytest.raises(ValueError, match=r"move 2 \(D4\) is illegal"):
        diagram.figure_data(["dp", "dp"])
    with pytest.raises(ValueError, match="move 2 is a pass"):
        diagram.figure_data(["dp", ""])


def test_comparison_with_the_game():
    swapped = list(OPENING)
    swapped[3], swapped[5] = OPENING[5], OPENING[3]  # White's 4 (pc = Q17) and 6 (ec = E17) exchanged
    assert diagram.compare(swapped, OPENING) == (18, 4)
    assert diagram.comparison_line(swapped, OPENING) == (
        "18 of 20 moves at the game's own move number; first difference at move 4: inferred E17, played Q17"
    )
    assert diagram.comparison_line(OPENING, OPENING) == (
        "20 of 20 moves at the game's own move number: the game's order exactly"
    )
    fig = diagram.figure_data(swapped, OPENING)
    assert {s.number for s in fig.stones if s.mismatch} == {4, 6}
    assert (fig.matching, fig.first_difference, fig.moves) == (18, 4, 20)
    with pytest.raises(ValueError, match="20 moves and the game 19"):
        diagram.compare(OPENING, OPENING[:19])


def test_a_later_move_at_another_number_turns_its_note_red():
    # A game that played C17 at 12 and the retake at 14: the inferred 12 (E15) and 14 (C17) differ.
    game = KO[:11] + ["cc", "kj", "ee", "fe"]
    fig = diagram.figure_data(KO, game)
    assert {n.text(): n.mismatch for n in fig.notes} == {"8 = 12": True, "9 = 15": False}
    # 12 is not drawn on the board (its point shows 8); 14 is C17's number.
    assert {s.number for s in fig.stones if s.mismatch} == {14}
    assert (fig.matching, fig.first_difference) == (13, 12)


EMPTY = "  . "
STAR = "  + "
HEADER = "     A   B   C   D   E   F   G   H   J   K   L   M   N   O   P   Q   R   S   T"


def test_text_board_written_out_by_hand():
    text = diagram.text_board(diagram.figure_data(KO))
    lines = text.splitlines()
    assert lines[0] == HEADER and lines[20] == HEADER
    assert lines[1] == "19" + " " + EMPTY * 19 + " 19"
    assert lines[3] == "17   .   .  14   .   .   .   .   .   .   .   .   .   .   .   .  11   .   .   .  17"
    assert lines[4] == "16   .   .   .   +   1   2   .   .   .   +   .   .   .   .   .   +   .   .   .  16"
    assert lines[5] == "15   .   .   .   3   8   9   4   .   .   .   .   .   .   .   .   .   .   .   .  15"
    assert lines[6] == "14   .   .   .   .   5   6   .   .   .   .   .   .   .   .   .   .   .   .   .  14"
    assert lines[10] == "10   .   .   .   +   .   .   .   .   .   +  13   .   .   .   .   +   .   .   .  10"
    assert lines[16] == " 4   .   .   .  10   .   .   .   .   .   +   .   .   .   .   .   7   .   .   .  4"
    for k in (2, 7, 8, 9, 11, 12, 13, 14, 15, 17, 18, 19):
        label = 19 - k + 1
        assert lines[k] == f"{label:>2} " + EMPTY * 19 + f" {label}", k
    assert lines[21:] == ["Black plays the odd numbers, White the even ones.", "Points played again: 8 = 12, 9 = 15"]
    assert STAR in lines[4]


def test_text_board_marks_moves_not_at_the_games_number():
    swapped = list(OPENING)
    swapped[3], swapped[5] = OPENING[5], OPENING[3]
    lines = diagram.text_board(diagram.figure_data(swapped, OPENING)).splitlines()
    # Row 17: C17 (cc) 19, D17 (dc) 9, E17 (ec) now 4, G17 (gc) 15, L17 (kc) 13, Q17 (pc) now 6.
    assert lines[3] == "17   .   .  19   9   4*  .  15   .   .   .  13   .   .   .   .   6*  .   .   .  17"
    assert lines[-1] == "*: not at the game's own move number."
    game = _long_game()
    lines = diagram.text_board(diagram.figure_data(game)).splitlines()
    row, col = sgfmill_point(game[104])
    assert lines[19 - row][3 + 4 * col : 7 + 4 * col] == "105 "


def _long_game():
    """105 legal capture-free moves: the opening, then alternate points of rows 10-14 and the left edge."""
    moves = list(OPENING)
    used = set(moves)
    for r in "jklmnopqr":
        for c in "abcdefghijklmnopqrs"[::2]:
            if len(moves) == 105:
                return moves
            if c + r not in used:
                moves.append(c + r)
                used.add(c + r)
    raise AssertionError("not enough points")


# --- the drawing ---------------------------------------------------------------------------


def artists(mpl):
    (ax,) = mpl.axes
    texts = {t.get_gid(): t for t in ax.texts if t.get_gid()}
    patches = {p.get_gid(): p for p in ax.patches if p.get_gid()}
    return ax, texts, patches


def test_drawn_numbers_sit_on_their_points_in_contrasting_colours():
    mpl = diagram.draw(diagram.figure_data(OPENING))
    _, texts, patches = artists(mpl)
    final = sgfmill_replay(OPENING)  # no captures in the opening: every stone stands
    numbers = {gid: t for gid, t in texts.items() if gid.startswith("number-")}
    assert len(numbers) == 20
    for k, m in enumerate(OPENING, start=1):
        row, col = sgfmill_point(m)
        name = common.format_vertex((row, col))
        t, stone = numbers[f"number-{name}"], patches[f"stone-{name}"]
        assert t.get_text() == str(k)
        # x = column, y = row from the bottom (sgfmill's row): the board's own grid units.
        assert t.get_position() == (col, row) and stone.center == (col, row)
        black = final.get(row, col) == "b"
        assert black == (k % 2 == 1)
        assert stone.get_facecolor() == to_rgba("black" if black else "white")
        assert to_rgba(t.get_color()) == to_rgba("white" if black else "black")
    assert not any(gid.startswith("ring-") for gid in patches)


def test_coordinates_and_star_points():
    _, texts, patches = artists(diagram.draw(diagram.figure_data(OPENING[:1])))
    bottom = sorted((t.get_position()[0], t.get_text()) for g, t in texts.items() if g.startswith("coordinate-bottom"))
    assert "".join(s for _, s in bottom) == "ABCDEFGHJKLMNOPQRST"
    assert [x for x, _ in bottom] == list(range(19))
    left = sorted((t.get_position()[1], t.get_text()) for g, t in texts.items() if g.startswith("coordinate-left"))
    assert left == [(y, str(y + 1)) for y in range(19)]
    stars = sorted(p.center for g, p in patches.items() if g.startswith("star-"))
    assert stars == sorted((x, y) for x in (3, 9, 15) for y in (3, 9, 15))
    assert sorted(g for g in patches if g.startswith("star-")) == sorted(
        f"star-{c}{r}" for c in "DKQ" for r in (4, 10, 16)
    )


def test_drawn_ko_keeps_first_numbers_and_lists_the_retakes():
    _, texts, patches = artists(diagram.draw(diagram.figure_data(KO)))
    # E15 = column 4, row 14 from the bottom (0-based); F15 = column 5.
    assert texts["number-E15"].get_text() == "8" and texts["number-E15"].get_position() == (4, 14)
    assert patches["stone-E15"].get_facecolor() == to_rgba("white")
    assert texts["number-F15"].get_text() == "9" and texts["number-F15"].get_position() == (5, 14)
    assert patches["stone-F15"].get_facecolor() == to_rgba("black")
    notes = [texts[g].get_text() for g in sorted(g for g in texts if g.startswith("note-"))]
    assert notes == ["8 = 12", "9 = 15"]
    # Below the board (the lowest row of points is y = 0, its coordinates at y = -1).
    assert all(texts[g].get_position()[1] < -1 for g in texts if g.startswith("note-"))


def test_mismatches_get_red_rings_and_red_notes():
    swapped = list(OPENING)
    swapped[3], swapped[5] = OPENING[5], OPENING[3]
    _, texts, patches = artists(diagram.draw(diagram.figure_data(swapped, OPENING)))
    rings = {g: p for g, p in patches.items() if g.startswith("ring-")}
    assert set(rings) == {"ring-E17", "ring-Q17"}
    assert rings["ring-E17"].center == (4, 16) and rings["ring-Q17"].center == (15, 16)
    assert all(p.get_edgecolor() == to_rgba(diagram.RED) for p in rings.values())
    assert texts["comparison"].get_text() == (
        "18 of 20 moves at the game's own move number, the first difference at move 4 (red: played at another number)"
    )
    game = KO[:11] + ["cc", "kj", "ee", "fe"]
    _, texts, patches = artists(diagram.draw(diagram.figure_data(KO, game)))
    assert to_rgba(texts["note-1"].get_color()) == to_rgba(diagram.RED)
    assert to_rgba(texts["note-2"].get_color()) == to_rgba("black")
    assert set(g for g in patches if g.startswith("ring-")) == {"ring-C17"}


def test_three_digit_numbers_fit_inside_their_stones():
    mpl = diagram.draw(diagram.figure_data(_long_game()))
    ax, texts, patches = artists(mpl)
    renderer = mpl.canvas.get_renderer()
    for k in (5, 20, 105):
        name = next(g[7:] for g, t in texts.items() if g.startswith("number-") and t.get_text() == str(k))
        box = texts[f"number-{name}"].get_window_extent(renderer)
        stone = patches[f"stone-{name}"]
        # The stone's diameter on screen, from the data-to-pixel transform.
        (x0, _), (x1, _) = ax.transData.transform([(0, 0), (2 * stone.radius, 0)])
        assert box.width < 0.85 * (x1 - x0), k


# The ko's numbered points, worked out by hand from the comment above KO.
KO_NUMBERS = {
    "E16": "1",
    "F16": "2",
    "D15": "3",
    "G15": "4",
    "E14": "5",
    "F14": "6",
    "Q4": "7",
    "E15": "8",
    "F15": "9",
    "D4": "10",
    "Q17": "11",
    "L10": "13",
    "C17": "14",
}
SVG = "{http://www.w3.org/2000/svg}"


def svg_groups(path):
    """Text of each SVG group whose id names a number, note or coordinate (matplotlib writes gids as ids)."""
    found = {}
    for g in ET.parse(path).getroot().iter(SVG + "g"):
        texts = [t.text for t in g.iter(SVG + "text")]
        if g.get("id", "").startswith(("number-", "note-", "coordinate-")) and texts:
            found[g.get("id")] = texts[0]
    return found


def test_svg_keeps_numbers_as_text_and_png_is_a_png(tmp_path):
    fig = diagram.figure_data(KO)
    svg = diagram.save(fig, tmp_path / "ko.svg")
    groups = svg_groups(svg)
    assert {g[7:]: t for g, t in groups.items() if g.startswith("number-")} == KO_NUMBERS
    assert [t for g, t in sorted(groups.items()) if g.startswith("note-")] == ["8 = 12", "9 = 15"]
    assert groups["coordinate-bottom-T"] == "T" and groups["coordinate-left-19"] == "19"
    png = diagram.save(fig, tmp_path / "ko.PNG")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "name, message",
    [
        ("board.pdf", "--diagram writes SVG or PNG"),
        ("board", "no suffix is neither"),
        ("nowhere/b.svg", "does not exist"),
    ],
)
def test_diagram_paths_are_checked(tmp_path, name, message):
    with pytest.raises(ValueError, match=message):
        diagram.check_path(tmp_path / name)
    (tmp_path / "folder.svg").mkdir()
    with pytest.raises(ValueError, match="names a folder"):
        diagram.check_path(tmp_path / "folder.svg")


# --- moveorder infer --diagram ---------------------------------------------------------------


def infer(*args):
    from moveorder import cli

    return cli.main(["infer", *args, "--method", "beam", "--beam-width", "4", "--quiet"])


def test_infer_draws_prints_and_compares_with_the_game(tmp_path, capsys):
    from helpers import make_sgf

    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(OPENING))
    svg = tmp_path / "x.svg"
    assert infer(str(rec), "--moves", "8", "--diagram", str(svg)) == 0
    out = capsys.readouterr().out.splitlines()
    played = [common.format_vertex(sgfmill_point(m)) for m in OPENING[:8]]
    inferred = out[0].split()
    # The answer orders the game's stones: Black's on odd numbers, White's on even ones.
    assert sorted(inferred[0::2]) == sorted(played[0::2]) and sorted(inferred[1::2]) == sorted(played[1::2])
    same = [k for k in range(8) if inferred[k] == played[k]]
    first = next(k for k in range(8) if inferred[k] != played[k]) if len(same) < 8 else None
    expected = f"{len(same)} of 8 moves at the game's own move number"
    if first is not None:
        expected += f"; first difference at move {first + 1}: inferred {inferred[first]}, played {played[first]}"
    else:
        expected += ": the game's order exactly"
    # how sure: a beam of width 4 has no calibration of the shipped network, and the answer says so
    assert out[2].startswith("no chance stated: network tygem-6x128 has no calibration for this search (beam4f1-seats")
    assert out[3] == expected
    # Without -o: the text board, its header and the game's rows.
    assert out[4] == HEADER and out[24] == HEADER
    row_16 = out[5 + 19 - 16]
    assert row_16.startswith("16 ") and row_16.endswith(" 16")
    groups = svg_groups(svg)
    numbers = {g[7:]: int(t) for g, t in groups.items() if g.startswith("number-")}
    assert numbers == {name: k for k, name in enumerate(inferred, start=1)}
    assert not (tmp_path / "o.sgf").exists()


def test_infer_with_output_and_png(tmp_path, capsys):
    pos = tmp_path / "pos.sgf"
    black, white = OPENING[0:6:2], OPENING[1:6:2]
    pos.write_text(f"(;GM[1]FF[4]SZ[19]AB{''.join(f'[{p}]' for p in black)}AW{''.join(f'[{p}]' for p in white)})")
    png, out = tmp_path / "b.png", tmp_path / "o.sgf"
    assert infer(str(pos), "-o", str(out), "--diagram", str(png)) == 0
    printed = capsys.readouterr().out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.exists()
    # Setup stones: no game to compare with; -o given: no text board.
    assert "game's own move number" not in printed and HEADER not in printed


def test_infer_on_a_record_with_a_capture_notes_the_replayed_point(tmp_path, capsys):
    from helpers import make_sgf

    # Black A18, White A19, Black B19 takes it, White Q4, Black fills A19. Black's three moves are the
    # three black stones at the end, so no black stone was taken and White's taken stone had at most two
    # black neighbours at the time: the corner A19, which Black fills after the capture. Every order
    # reaching the position plays A19 at 2 (White) and at 5 (Black), Q4 at 4: the figure notes "2 = 5".
    moves = ["ab", "aa", "ba", "pp", "aa"]
    rec = tmp_path / "corner.sgf"
    rec.write_text(make_sgf(moves))
    svg = tmp_path / "corner.svg"
    assert infer(str(rec), "--diagram", str(svg)) == 0
    out = capsys.readouterr().out.splitlines()
    inferred = out[0].split()
    assert (inferred[1], inferred[3], inferred[4]) == ("A19", "Q4", "A19")
    board = boards.Board(19)
    for k, name in enumerate(inferred):
        board.play(*common.move_from_vertex(name, 19), "bw"[k % 2])
    assert board.list_occupied_points() == sgfmill_replay(moves).list_occupied_points()
    assert "Points played again: 2 = 5" in out
    groups = svg_groups(svg)
    assert groups["note-1"] == "2 = 5" and groups["number-A19"] == "2"


@pytest.mark.parametrize("name, message", [("x.pdf", "SVG or PNG"), ("missing/x.svg", "does not exist")])
def test_infer_checks_the_diagram_path_before_anything(tmp_path, caplog, name, message):
    # The position does not exist either: the diagram's path is refused first.
    assert infer(str(tmp_path / "absent.sgf"), "--diagram", str(tmp_path / name)) == 2
    assert message in caplog.text and "absent.sgf" not in caplog.text
