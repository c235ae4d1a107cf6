"""The coordinate table in moveorder.go.coords, row by row, against sgfmill."""

import itertools

import pytest
from sgfmill import common, sgf_properties

from moveorder.go import coords

CORNERS = {  # name: (internal, sgf, gtp, flat, lz, sgfmill, cartesian): the docstring's table
    "top-left": ((0, 0), "aa", "A19", 0, 342, (18, 0), (0, 18)),
    "top-right": ((0, 18), "sa", "T19", 18, 360, (18, 18), (18, 18)),
    "bottom-left": ((18, 0), "as", "A1", 342, 0, (0, 0), (0, 0)),
    "bottom-right": ((18, 18), "ss", "T1", 360, 18, (0, 18), (18, 0)),
    "pass": (None, "", "pass", 361, 361, None, None),
}


@pytest.mark.parametrize("name", CORNERS)
def test_table(name):
    point, sgf, gtp, flat, lz, sgfmill_point, xy = CORNERS[name]
    assert coords.to_sgf(point) == sgf and coords.from_sgf(sgf) == point
    assert coords.to_gtp(point) == gtp and coords.from_gtp(gtp) == point
    assert coords.to_flat(point) == flat and coords.from_flat(flat) == point
    assert coords.to_lz(point) == lz and coords.from_lz(lz) == point
    assert coords.to_sgfmill(point) == sgfmill_point
    if point is not None:
        assert coords.to_cartesian(point) == xy


def test_index_space_sizes():
    assert (coords.POINTS, coords.MOVES, coords.PASS_INDEX) == (361, 362, 361)
    table = coords.lz_to_flat_table()
    assert sorted(table) == list(range(361)) and table[0] == 342 and table[360] == 18


def test_sequences_of_moves():
    points = ["pd", "dp", "qq", "aa"]
    assert coords.sgf_to_lz(points) == [coords.to_lz(coords.from_sgf(p)) for p in points] == [300, 60, 54, 342]
    assert coords.lz_to_sgf(coords.sgf_to_lz(points)) == points
    assert coords.sgf_to_gtp(points) == ["Q16", "D4", "R3", "A19"]
    assert coords.from_sgf_string("pddptt") == [(3, 15), (15, 3), None]
    assert coords.to_sgf_string([(3, 15), (15, 3), None]) == "pddptt"


def test_tt_is_pass_and_gtp_skips_i():
    assert coords.from_sgf("tt") is None
    assert coords.to_gtp((0, 8)) == "J19"
    with pytest.raises(ValueError):
        coords.from_gtp("I5")


def test_every_point_against_sgfmill():
    """sgfmill is the external reference for SGF and GTP: its (row, col) has row 0 at the bottom."""
    for row, col in itertools.product(range(19), range(19)):
        ours = (row, col)
        sgfmill_point = (18 - row, col)
        assert coords.to_sgf(ours) == sgf_properties.serialise_go_point(sgfmill_point, 19).decode()
        assert coords.from_sgf(coords.to_sgf(ours)) == ours
        assert coords.to_gtp(ours) == common.format_vertex(sgfmill_point)
        assert common.move_from_vertex(coords.to_gtp(ours), 19) == sgfmill_point
        # Leela Zero's index counts rows from the bottom, as sgfmill's rows do.
        assert coords.to_lz(ours) == sgfmill_point[0] * 19 + sgfmill_point[1]
        assert coords.lz_to_flat(coords.flat_to_lz(coords.to_flat(ours))) == coords.to_flat(ours)
        assert coords.to_sgfmill(ours) == sgfmill_point
        assert sgf_properties.interpret_go_point(coords.to_sgf(ours).encode(), 19) == coords.to_sgfmill(ours)


@pytest.mark.parametrize("bad", ["a", "abc", "a!", "zz"])
def test_bad_sgf_points(bad):
    with pytest.raises(ValueError):
        coords.from_sgf(bad)


def test_off_board():
    with pytest.raises(ValueError):
        coords.to_gtp((19, 0))
    with pytest.raises(ValueError):
        coords.from_flat(362)


def test_leela_zero_index_against_leelaz():
    """leelaz prints 0 at occupied points: they must be exactly where coords.to_lz puts the stones."""
    from helpers import FIXTURE
    from leelaz_ref import heatmaps

    moves = ["A1", "T19", "J10", "A19", "T1", "C17"]
    grid = heatmaps(str(FIXTURE), [moves])[0]
    zeros = sorted(int(k) for k in (grid[:361] == 0).nonzero()[0])
    assert zeros == sorted(coords.to_lz(coords.from_gtp(m)) for m in moves)


@pytest.mark.parametrize("size", [9, 20, 25])
def test_other_board_sizes_against_sgfmill(size):
    """Every conversion takes the board size through: each point of a 9x9, 20x20 and 25x25 board against
    sgfmill (SGF and GTP on that size; Leela Zero's index is sgfmill's row times size plus column)."""
    last = coords.SGF_LETTERS[size - 1]
    for sgf_point in (f"{a}{b}" for a in ("a", "b", last) for b in ("a", "c", last)):
        sgfmill_point = sgf_properties.interpret_go_point(sgf_point.encode(), size)
        lz = sgfmill_point[0] * size + sgfmill_point[1]
        flat = (size - 1 - sgfmill_point[0]) * size + sgfmill_point[1]
        assert coords.sgf_to_lz([sgf_point], size) == [lz] and coords.lz_to_sgf([lz], size) == [sgf_point]
        assert coords.sgf_to_gtp([sgf_point], size) == [common.format_vertex(sgfmill_point)]
        assert coords.flat_to_lz(flat, size) == lz and coords.lz_to_flat(lz, size) == flat
        assert coords.lz_to_flat_table(size)[lz] == flat
        assert coords.from_sgf_string(sgf_point * 2, size) == [coords.from_sgf(sgf_point, size)] * 2
        assert coords.to_sgf_string([coords.from_sgf(sgf_point, size), None], size) == sgf_point + "tt"
    # "tt" is a pass up to 19x19 (FF[3]); from 20x20 it is the point at column t, row t.
    assert (coords.from_sgf("tt", size) is None) == (size <= 19)


def test_errors_name_the_input():
    with pytest.raises(ValueError, match=r"^point \(0, 19\) is off a 19x19 board$"):
        coords.to_flat((0, 19))
    with pytest.raises(ValueError, match=r"^point \(9, 0\) is off a 9x9 board$"):
        coords.sgf_to_lz(["aj"], 9)
    for bad in ("a!", "!a", "abc"):
        with pytest.raises(ValueError, match=rf"^not an SGF point: '{bad}'$"):
            coords.from_sgf(bad)
    with pytest.raises(ValueError, match=r"^not a GTP vertex: 'I5'$"):
        coords.from_gtp("i5")
    with pytest.raises(ValueError, match=r"^flat index 362 out of range for size 19$"):
        coords.from_flat(362)
    with pytest.raises(ValueError, match=r"^Leela Zero index -1 out of range for size 19$"):
        coords.from_lz(-1)
