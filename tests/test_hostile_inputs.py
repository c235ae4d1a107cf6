"""Hostile inputs, as a new user might give them (issue 13): every one is refused with a clear
message naming the file (and the move, where there is one), exit code 2, no traceback, and
nothing written; or, where the input is valid after all, read correctly.

Every record and archive here is made by the test itself.
"""

import contextlib
import io
import logging
import math
import os
import subprocess
import sys
import tarfile
import zipfile

import py7zr
import pytest
from sgfmill import sgf

import helpers
from helpers import OPENING, REPO, filler_moves, make_sgf
from moveorder import cli
from moveorder.cli import search as cli_search
from moveorder.data.position import read_position
from moveorder.data.qualify import write_scan
from moveorder.data.records import RecordError, read_sgf

FIXTURE = str(helpers.FIXTURE)


@pytest.fixture
def no_search(monkeypatch):
    """Any attempt to load the network (which every search needs first) fails the test."""
    from moveorder.nets import likelihood

    def search_started(*args, **kwargs):
        raise AssertionError("the search started before the input was refused")

    monkeypatch.setattr(likelihood, "load_policy", search_started)
    monkeypatch.setattr(likelihood.PolicyLikelihood, "from_file", classmethod(search_started))
    monkeypatch.setattr(cli_search, "_evaluator", search_started)


def infer(*args):
    return cli.main(["infer", *map(str, args), "--network", FIXTURE, "--iterations", "30", "--trials", "1"])


def refused(caplog, code, *fragments):
    """Exit code 2 and one error message holding every fragment."""
    assert code == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, errors
    for f in fragments:
        assert f in errors[0], (f, errors[0])
    return errors[0]


def sgf_points(game):
    """The moves of an sgfmill game as (colour, SGF point) pairs."""
    out = []
    for node in game.get_main_sequence()[1:]:
        colour, (row, col) = node.get_move()
        out.append((colour, "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[18 - row]))
    return out


# --- infer: records that break the paper's assumptions are refused, never reinterpreted --------------


@pytest.mark.parametrize(
    "colours, move, text",
    [
        ("WB" * 11, 1, "move 1 is White, expected Black: the inference assumes Black moves first"),
        ("BWBWBB" + "WB" * 8, 6, "move 6 is Black, expected White: the inference assumes colours alternate"),
    ],
)
def test_infer_refuses_records_whose_colours_do_not_alternate_from_black(
    tmp_path, caplog, no_search, colours, move, text
):
    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(OPENING, colours=colours))
    out = tmp_path / "ordered.sgf"
    refused(caplog, infer(rec, "--moves", 12, "-o", out), str(rec), text)
    assert not out.exists()


def test_infer_uses_only_the_moves_it_is_given(tmp_path):
    """Two Black moves in a row at move 11 do not matter to the position after move 10."""
    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(OPENING, colours="BW" * 5 + "BB" + "WB" * 5))
    clean = tmp_path / "clean.sgf"
    clean.write_text(make_sgf(OPENING))
    assert read_position(rec, 10) == read_position(clean, 10)
    with pytest.raises(ValueError, match="move 12 is Black"):
        read_position(rec, 12)


@pytest.mark.parametrize(
    "root, expected",
    [
        ("HA[2]AB[dd][pp]", "HA[2]: a handicap game"),
        ("AB[dd][pp]", "holds both setup stones (AB/AW) and 20 moves; give either a position as setup stones only"),
        ("HA[2]", "HA[2]: a handicap game"),
    ],
)
@pytest.mark.parametrize("moves", [None, 10])
def test_infer_refuses_handicap_and_setup_stones_with_moves(tmp_path, caplog, no_search, root, expected, moves):
    rec = tmp_path / "handicap.sgf"
    # With the handicap stones ignored, move 1 (B dp) and move 3 (B cd) would be accepted as they are.
    rec.write_text(make_sgf(OPENING, root=root))
    out = tmp_path / "o.sgf"
    args = [rec, "-o", out] + (["--moves", moves] if moves else [])
    refused(caplog, infer(*args), str(rec), expected)
    assert not out.exists()


def test_infer_refuses_moves_onto_setup_stones_with_the_advice(tmp_path, caplog, no_search):
    rec = tmp_path / "both.sgf"
    rec.write_text(make_sgf(["dd", "pp", "dp"], root="AB[dd]AW[pd]"))  # B[dd] onto AB[dd]
    msg = refused(caplog, infer(rec, "--moves", 3, "-o", tmp_path / "o.sgf"), str(rec), "setup stones (AB/AW)")
    assert "with --moves N" in msg and "setup stones only" in msg


def test_infer_refuses_moves_for_a_setup_position(tmp_path, caplog, no_search):
    pos = tmp_path / "setup.sgf"
    pos.write_text("(;GM[1]FF[4]SZ[19]AB[dd][pp]AW[dp])")
    refused(
        caplog,
        infer(pos, "--moves", 2, "-o", tmp_path / "o.sgf"),
        str(pos),
        "--moves 2, but the file holds setup stones (AB/AW) and no moves; leave out --moves",
    )


@pytest.mark.parametrize("moves", [None, 4])
def test_infer_refuses_13x13(tmp_path, caplog, no_search, moves):
    rec = tmp_path / "small.sgf"
    rec.write_text(make_sgf(["dd", "jj", "dj", "jd", "gg", "gc"], size=13))
    args = [rec, "-o", tmp_path / "o.sgf"] + (["--moves", moves] if moves else [])
    refused(caplog, infer(*args), str(rec), "board size SZ[13]; only 19x19 is supported")
    assert not (tmp_path / "o.sgf").exists()


@pytest.mark.parametrize(
    "n, text",
    [
        (-3, "--moves -3: must be at least 1"),
        (0, "--moves 0: must be at least 1"),
        (21, "--moves 21, but the record has 20 moves"),
    ],
)
def test_infer_moves_out_of_range(tmp_path, caplog, no_search, n, text):
    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(OPENING))
    refused(caplog, infer(rec, "--moves", n, "-o", tmp_path / "o.sgf"), str(rec), text)
    assert not (tmp_path / "o.sgf").exists()


@pytest.mark.parametrize(
    "moves, n, extra, text",
    [
        (OPENING[:2] + [""] + OPENING[3:], 6, [], "move 3 (Black) is a pass; the inference assumes no passes"),
        (OPENING[:2] + ["tt"] + OPENING[3:], 6, [], "move 3 (Black) is a pass"),
        (
            ["dd", "ed", "pp", "dc", "pd", "de", "dp", "cd"],
            8,
            ["--quality", "paper"],  # the default's beam orders captures; the paper's annealing cannot
            "move 8 (White C16) captures 1 stone(s); the inference assumes no captures with method 'anneal'",
        ),
        (OPENING[:5] + ["dp"] + OPENING[6:], 8, [], "move 6 (White D4, W[dp]) is illegal: D4 is occupied"),
        (OPENING[:3] + ["zz"] + OPENING[4:], 8, [], "move 4: W[zz] is not a point on a 19x19 board"),
    ],
)
def test_infer_refuses_passes_captures_and_illegal_moves_with_the_move_number(
    tmp_path, caplog, no_search, moves, n, extra, text
):
    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(moves))
    refused(caplog, infer(rec, "--moves", n, "-o", tmp_path / "o.sgf", *extra), str(rec), text)
    assert not (tmp_path / "o.sgf").exists()


@pytest.mark.parametrize(
    "content, text",
    [
        ("(;GM[1]FF[4]SZ[19]AB[tt][dd]AW[pp])", "AB[tt] is not a point on a 19x19 board"),
        ("(;GM[1]FF[4]SZ[19]AB[dd][zz]AW[pp])", "AB[zz] is not a point on a 19x19 board"),
        ("(;GM[1]FF[4]SZ[19]AB[dd][pd]AW[pd])", "Q16 (pd) is given twice (AB and AW)"),
        ("(;GM[1]FF[4]SZ[19]AB[dd:ef]AW[pd][dp][pp])", "6 black and 3 white stones"),
        ("(;GM[1]FF[4]SZ[19]AB[dd][pp]AW[dp]AE[pp])", "AE[pp] removes stones"),
        ("(;GM[1]FF[4]SZ[19]KM[6.5])", "no stones: neither setup stones (AB/AW) nor moves"),
        (
            "(;GM[1]FF[4]SZ[19]AB[dd]AW[pp])(;GM[1]FF[4]SZ[19]AB[pd]AW[dp])",
            "2 games in one file; one game per file is expected",
        ),
        ("(;GM[1]FF[4]SZ[19]AB[dd]AW[pp", "not a readable SGF file"),
    ],
)
def test_infer_refuses_bad_setup_positions(tmp_path, caplog, no_search, content, text):
    pos = tmp_path / "pos.sgf"
    pos.write_text(content)
    refused(caplog, infer(pos, "-o", tmp_path / "o.sgf"), str(pos), text)
    assert not (tmp_path / "o.sgf").exists()


def test_infer_refuses_a_missing_or_unreadable_position(tmp_path, caplog, no_search):
    refused(caplog, infer(tmp_path / "none.sgf", "-o", tmp_path / "o.sgf"), str(tmp_path / "none.sgf"), "no such file")
    caplog.clear()
    refused(caplog, infer(tmp_path, "-o", tmp_path / "o.sgf"), str(tmp_path), "cannot be read")


def test_infer_checks_the_output_path_before_the_search(tmp_path, caplog, no_search):
    pos = tmp_path / "pos.sgf"
    pos.write_text("(;GM[1]FF[4]SZ[19]AB[dd][pp]AW[dp])")
    folder = tmp_path / "folder"
    folder.mkdir()
    refused(caplog, infer(pos, "-o", folder), str(folder), "-o names a folder; give a file name")
    assert list(folder.iterdir()) == []
    caplog.clear()
    refused(caplog, infer(pos, "-o", pos), "-o names the position file itself")
    assert pos.read_text() == "(;GM[1]FF[4]SZ[19]AB[dd][pp]AW[dp])"
    caplog.clear()
    refused(caplog, infer(pos, "-o", pos / "o.sgf"), "cannot be written", f"{pos} is not a folder")


@pytest.mark.parametrize(
    "name, content, what",
    [
        ("notanetwork.bin", b"\xcc\xfe\x00binary", "not a Leela Zero weights file"),  # failed in the ascii codec
        ("w.txt", b"1\n" + b"x y\n" * 18, "not a Leela Zero weights file"),  # the layout fits, the numbers do not
        ("model.pt", b"not a checkpoint", "not a moveorder checkpoint"),
    ],
)
def test_infer_refuses_a_file_that_is_not_a_network_naming_it(tmp_path, caplog, name, content, what):
    pos = tmp_path / "pos.sgf"
    pos.write_text("(;GM[1]FF[4]SZ[19]AB[dd][pp]AW[dp])")
    net = tmp_path / name
    net.write_bytes(content)
    code = cli.main(["infer", str(pos), "-o", str(tmp_path / "o.sgf"), "--network", str(net), "--quiet"])
    refused(caplog, code, f"{net}: {what}")
    assert not (tmp_path / "o.sgf").exists()


@pytest.mark.parametrize(
    "broken, detail",
    [
        ('{"id": "g2", "set": "pro" "n": 2}', "Expecting ',' delimiter"),  # no file name before (issue 24)
        ('{"id": "g2", "stones": []}', "unexpected keyword argument 'stones'"),
        ('["dd", "pp"]', "must be a mapping"),
    ],
)
def test_infer_set_refuses_a_broken_arrangements_line_naming_the_file_and_the_line(
    tmp_path, caplog, no_search, broken, detail
):
    from moveorder.data.arrangements import Arrangement

    arr = tmp_path / "20m.jsonl"
    good = Arrangement(id="g1", set="pro", n=2, black=["dd"], white=["pp"], actual=["dd", "pp"]).to_json()
    arr.write_text(f"{good}\n\n{broken}\n")
    out, table = tmp_path / "out.jsonl", tmp_path / "out.csv"
    code = cli.main(
        ["infer-set", "--arrangements", str(arr), "--out", str(out), "--table", str(table), "--network", FIXTURE]
    )
    refused(caplog, code, f"{arr}: line 3: not an arrangement", detail)
    assert not out.exists() and not table.exists()


def test_compressed_point_lists_are_read_and_the_answer_keeps_komi_and_players(tmp_path, capsys):
    pos = tmp_path / "pos.sgf"
    # AB[dd:ff] is 9 black stones, AW[pp:qs] 8 white ones (SGF FF[4] compressed point lists); PB in
    # Latin-1 with no CA (SGF's default charset).
    pos.write_bytes(b"(;GM[1]FF[4]SZ[19]KM[5.5]PB[M\xe9nard]PW[Lee]AB[dd:ff]AW[pp:qs])")
    black, white = read_position(pos).black, read_position(pos).white
    assert len(black) == 9 and len(white) == 8
    out = tmp_path / "ordered.sgf"
    assert infer(pos, "-o", out) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    root = game.get_root()
    assert root.get("KM") == 5.5 and root.get("PB") == "Ménard" and root.get("PW") == "Lee"
    played = sgf_points(game)
    assert [c for c, _ in played] == ["b", "w"] * 8 + ["b"]
    assert sorted(p for c, p in played if c == "b") == sorted(c + r for c in "def" for r in "def")
    assert sorted(p for c, p in played if c == "w") == sorted(c + r for c in "pq" for r in "pqrs")


def test_a_record_keeps_its_komi_players_and_colours(tmp_path):
    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(OPENING, root="PB[Black Player]PW[White Player]").replace("KM[6.5]", "KM[375]"))
    out = tmp_path / "o.sgf"
    assert infer(rec, "--moves", 6, "-o", out) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    root = game.get_root()
    assert root.get("KM") == 7.5 and root.get("PB") == "Black Player" and root.get("PW") == "White Player"
    played = sgf_points(game)
    assert sorted(p for c, p in played if c == "b") == sorted(OPENING[0:6:2])
    assert sorted(p for c, p in played if c == "w") == sorted(OPENING[1:6:2])


# --- filter -------------------------------------------------------------------------------------------------


def filter_args(tmp_path, input_path, *extra):
    out = tmp_path / "out"
    return [
        "filter",
        "--input",
        str(input_path),
        "--qualified",
        str(out / "q.jsonl"),
        "--report",
        str(out / "r.csv"),
        "--rejected",
        str(out / "x.csv"),
        *extra,
    ]


def test_filter_refuses_a_missing_folder_a_file_and_a_folder_without_records(tmp_path, caplog):
    one = tmp_path / "one.sgf"
    one.write_text(make_sgf(filler_moves(60)))
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no records here")
    cases = [
        (tmp_path / "nowhere", "no such folder"),
        (one, "not a folder"),
        (empty, "no SGF files (*.sgf) below this folder"),
    ]
    for path, text in cases:
        caplog.clear()
        refused(caplog, cli.main(filter_args(tmp_path, path)), str(path), text)
        assert not (tmp_path / "out").exists()
    caplog.clear()
    (empty / "a.sgf").write_text(make_sgf(filler_moves(60)))
    refused(caplog, cli.main(filter_args(tmp_path, empty, "--include", "*/9p/*")), "matching --include */9p/*")


def test_filter_reasons_are_the_true_ones(tmp_path, sgf_dir):
    game = make_sgf(filler_moves(60))
    (sgf_dir / "small.sgf").write_text(make_sgf(["dd", "pp", "jj"], size=13))  # pp is off a 13x13 board
    (sgf_dir / "no-paren.sgf").write_text(game[1:])  # ";GM[1]...": the opening '(' is missing
    # The same, with variations: the main line is the first branch, not the first variation.
    head = "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(filler_moves(60)[:10]))
    tail = "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(filler_moves(60)[10:], start=10))
    (sgf_dir / "no-paren-variations.sgf").write_text(f";GM[1]FF[4]SZ[19]{head}({tail})(;W[aa];B[bb]))")
    (sgf_dir / "two-games.sgf").write_text(game + "\n" + game)
    (sgf_dir / "latin1.sgf").write_bytes(make_sgf(filler_moves(60), root="PB[M\xe9nard]").encode("latin-1"))
    counts = write_scan(sgf_dir, tmp_path / "q.jsonl", tmp_path / "r.csv", tmp_path / "x.csv")
    rejected = {line.split(",")[0]: line for line in (tmp_path / "x.csv").read_text().splitlines()[1:]}
    assert set(rejected) == {"small.sgf", "two-games.sgf"}
    assert "not_19x19" in rejected["small.sgf"] and "SZ[13]" in rejected["small.sgf"]
    assert "several_games" in rejected["two-games.sgf"] and "2 games" in rejected["two-games.sgf"]
    assert counts["qualified"] == 3 and counts["not_19x19"] == 1 and counts["several_games"] == 1
    from moveorder.data.records import load_records

    recs = {r.source: r for r in load_records(tmp_path / "q.jsonl")}
    assert recs["no-paren-variations.sgf"].moves == "".join(filler_moves(60))
    assert recs["latin1.sgf"].black == "Ménard"


def test_record_messages_name_the_file_the_move_and_the_point(tmp_path):
    with pytest.raises(RecordError) as err:
        read_sgf(make_sgf(OPENING[:3] + ["zz"]).encode(), "games/x.sgf")
    assert err.value.reason == "illegal_move"
    assert str(err.value) == "illegal_move: games/x.sgf: move 4: W[zz] is not a point on a 19x19 board"


def test_filter_shows_progress_only_when_asked(tmp_path, sgf_dir, capsys):
    for i in range(3):
        (sgf_dir / f"g{i}.sgf").write_text(make_sgf(filler_moves(60)))
    write_scan(sgf_dir, tmp_path / "q.jsonl", tmp_path / "r.csv", tmp_path / "x.csv", progress=True)
    err = capsys.readouterr().err
    assert "filter" in err and "3/3" in err
    assert cli.main(filter_args(tmp_path, sgf_dir)) == 0  # stderr is not a terminal here
    assert "3/3" not in capsys.readouterr().err


# --- extract ------------------------------------------------------------------------------------------------


def make_archives(tmp_path):
    """A tar.gz, a zip and a 7z of 30 records each (random bytes, so they compress poorly)."""
    files = {f"set/g{i:02d}.sgf": os.urandom(2000) for i in range(30)}
    tgz = tmp_path / "games.tar.gz"
    with tarfile.open(tgz, "w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    zp = tmp_path / "games.zip"
    with zipfile.ZipFile(zp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    seven = tmp_path / "games.7z"
    with py7zr.SevenZipFile(seven, "w") as z:
        for name, data in files.items():
            z.writestr(data, name)
    return tgz, zp, seven


def cut(src, dest, keep=0.5):
    data = src.read_bytes()
    dest.write_bytes(data[: int(len(data) * keep)])
    return dest


def garble(src, dest):
    data = bytearray(src.read_bytes())
    for i in range(len(data) // 3, len(data) * 2 // 3, 5):
        data[i] ^= 0x5A
    dest.write_bytes(bytes(data))
    return dest


def test_broken_archives_give_errors_naming_them_and_leave_nothing(tmp_path, caplog):
    tgz, zp, seven = make_archives(tmp_path)
    cases = [
        (cut(tgz, tmp_path / "half.tar.gz"), "cannot unpack this tar archive (truncated, corrupt, or not tar)"),
        (garble(tgz, tmp_path / "garbled.tar.gz"), "cannot unpack this tar archive"),
        (cut(zp, tmp_path / "half.zip"), "cannot unpack this zip archive (truncated, corrupt, or not zip)"),
        (garble(zp, tmp_path / "garbled.zip"), "cannot unpack this zip archive"),
        (cut(seven, tmp_path / "short.7z", 0.97), "cannot unpack this 7z archive (truncated, corrupt, or not 7z)"),
        (cut(seven, tmp_path / "half.7z"), "cannot unpack this 7z archive"),
        (garble(seven, tmp_path / "garbled.7z"), "cannot unpack this 7z archive"),
    ]
    (tmp_path / "text.zip").write_text("not a zip at all")
    (tmp_path / "text.tar.gz").write_text("not a tarball at all")
    cases += [(tmp_path / "text.zip", "BadZipFile"), (tmp_path / "text.tar.gz", "ReadError")]
    for archive, text in cases:
        caplog.clear()
        dest = tmp_path / "extracted" / archive.name
        refused(caplog, cli.main(["extract", str(archive), "--dest", str(dest)]), str(archive), text)
        assert not dest.exists(), archive
    # A good archive unpacks, and a broken one beside it takes nothing of it along... or leaves
    # anything behind: all or nothing.
    caplog.clear()
    dest = tmp_path / "extracted" / "both"
    refused(caplog, cli.main(["extract", str(tgz), str(tmp_path / "half.zip"), "--dest", str(dest)]), "half.zip")
    assert not dest.exists()
    assert cli.main(["extract", str(tgz), str(zp), str(seven), "--dest", str(dest)]) == 0
    assert sorted(p.name for p in dest.iterdir()) == ["games.7z", "games.tar.gz", "games.zip"]
    assert len(list((dest / "games.7z").rglob("*.sgf"))) == 30


def test_extract_into_an_existing_folder_leaves_it_as_it_was(tmp_path, caplog):
    tgz, _, _ = make_archives(tmp_path)
    dest = tmp_path / "dest"
    assert cli.main(["extract", str(tgz), "--dest", str(dest)]) == 0
    before = sorted(p.relative_to(dest) for p in dest.rglob("*"))
    half = cut(tgz, tmp_path / "games.tar.gz.bad")
    half = half.rename(tmp_path / "half.tar.gz")
    refused(caplog, cli.main(["extract", str(half), "--dest", str(dest)]), "half.tar.gz")
    assert sorted(p.relative_to(dest) for p in dest.rglob("*")) == before


def test_links_in_archives_are_refused_by_our_own_check(tmp_path, caplog):
    link = tmp_path / "link"
    os.symlink("/etc/passwd", link)  # a target that exists however deep tmp_path is
    seven = tmp_path / "link.7z"
    with py7zr.SevenZipFile(seven, "w") as z:
        z.write(link, "set/evil.sgf")
    zp = tmp_path / "link.zip"
    with zipfile.ZipFile(zp, "w") as z:
        info = zipfile.ZipInfo("set/evil.sgf")
        info.external_attr = 0o120777 << 16
        z.writestr(info, "../../../../etc/passwd")
    for archive in (seven, zp):
        caplog.clear()
        dest = tmp_path / "out" / archive.name
        refused(
            caplog,
            cli.main(["extract", str(archive), "--dest", str(dest)]),
            str(archive),
            "member 'set/evil.sgf' is a link (links are refused",
        )
        assert not dest.exists()


def test_unknown_archive_types_are_refused_not_copied(tmp_path, caplog):
    rar = tmp_path / "games.rar"
    rar.write_bytes(b"Rar!\x1a\x07\x00" + os.urandom(100))
    dest = tmp_path / "out"
    refused(caplog, cli.main(["extract", str(rar), "--dest", str(dest)]), str(rar), "unknown archive type")
    assert not dest.exists()
    caplog.clear()
    refused(caplog, cli.main(["extract", str(tmp_path / "none.7z"), "--dest", str(dest)]), "none.7z", "no such file")
    assert not dest.exists()
    # A plain SGF file is still copied as it is.
    one = tmp_path / "one.sgf"
    one.write_text(make_sgf(OPENING))
    assert cli.main(["extract", str(one), "--dest", str(dest)]) == 0
    assert (dest / "one.sgf" / "one.sgf").read_text() == one.read_text()


# --- download -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sha", ["abc123", "g" * 64, "0" * 63])
def test_download_refuses_a_malformed_sha256_before_downloading(tmp_path, caplog, sha):
    dest = tmp_path / "sub" / "file.bin"
    # Port 9 (discard) on loopback: were the download tried, this would be a connection error.
    code = cli.main(
        [
            "download",
            "--url",
            "http://127.0.0.1:9/file.bin",
            "--dest",
            str(dest),
            "--sha256",
            sha,
            "--retries",
            "0",
            "--quiet",
        ]
    )
    msg = refused(caplog, code, "file.bin", f"--sha256 '{sha}' is not a sha256 (64 hexadecimal digits")
    assert "download failed" not in msg
    assert not (tmp_path / "sub").exists()


# --- no traceback from any of them --------------------------------------------------------------------------


def test_no_traceback_from_the_command_line(tmp_path):
    pos = tmp_path / "bad.sgf"
    pos.write_text("(;GM[1]FF[4]SZ[19]AB[tt][dd]AW[pp])")
    tgz = tmp_path / "cut.tar.gz"
    with tarfile.open(tgz, "w:gz") as t:
        data = os.urandom(50000)
        info = tarfile.TarInfo("a.sgf")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    cut(tgz, tgz)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    runs = [
        ["infer", str(pos), "-o", str(tmp_path / "o.sgf"), "--network", FIXTURE, "--iterations", "10"],
        ["extract", str(tgz), "--dest", str(tmp_path / "x")],
        ["filter"] + filter_args(tmp_path, tmp_path / "nowhere")[1:],
    ]
    for args in runs:
        proc = subprocess.run([sys.executable, "-m", "moveorder", *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and "ERROR" in proc.stderr, proc.stderr
    assert not (tmp_path / "o.sgf").exists() and not (tmp_path / "x").exists()


def test_score_shows_progress_over_the_positions_it_analyses(tmp_path, capsys):
    from moveorder.katago.engine import AnalysisCache, KataGoEngine
    from moveorder.katago.scoring import score_results

    rows = [
        {
            "id": "g1",
            "set": "t",
            "n": 4,
            "actual": OPENING[:4],
            "inferred": OPENING[:4][::-1],
            "lgm": 0.2,
            "actual_lgm": 0.1,
            "exact_match": False,
            "komi": 7.5,
        }
    ]
    fake = [sys.executable, str(REPO / "tests/fake_katago.py"), "normal"]
    with KataGoEngine(fake, timeout=300) as engine:  # replies come at once; far above a loaded machine's delays
        out = score_results(rows, engine, AnalysisCache(None), visits=1, model="m", progress=True)
        assert (
            f"{out['analysed']}/{out['analysed']}" in capsys.readouterr().err and out["analysed"] == 9
        )  # 5 + 5 positions, the empty board once
        score_results(rows, engine, AnalysisCache(None), visits=1, model="m")
        assert "score" not in capsys.readouterr().err


# --- infer: option values out of what the tool can do are refused before any work ----------------------------

TWO = "(;GM[1]FF[4]SZ[19]AB[dd]AW[pp])"  # one stone each: Black plays 1 + W moves, White 1 + B (prisoners B W)
THREE = "(;GM[1]FF[4]SZ[19]AB[dd][pd]AW[pp])"


class WorkStarted(Exception):
    """Raised where the network would be loaded: every check on the input has passed."""


@pytest.fixture
def work_starts(monkeypatch):
    def started(*args, **kwargs):
        raise WorkStarted

    monkeypatch.setattr(cli_search, "_evaluator", started)


@pytest.mark.parametrize(
    "position, prisoners, fragments",
    [
        # Consistent counts (Black 2 + 99...9 moves, White 1 + 10^20): once an OverflowError in the search.
        (
            THREE,
            ("100000000000000000000", "99999999999999999999"),
            ["--prisoners 100000000000000000000 99999999999999999999: each count must be at most 400", "400 moves"],
        ),
        # 3 stones + 300 + 299 = 602 moves; each count is below 400, their sum with the stones is not.
        (THREE, ("300", "299"), ["--prisoners 300 299 with 3 stones", "602 moves", "add up to at most 397"]),
        (TWO, ("199", "200"), ["--prisoners 199 200 with 2 stones", "401 moves", "add up to at most 398"]),
    ],
)
def test_infer_refuses_more_prisoners_than_a_search_can_take(
    tmp_path, caplog, no_search, position, prisoners, fragments
):
    pos = tmp_path / "pos.sgf"
    pos.write_text(position)
    out = tmp_path / "o.sgf"
    code = cli.main(["infer", str(pos), "-o", str(out), "--method", "beam", "--prisoners", *prisoners])
    refused(caplog, code, *fragments)
    assert not out.exists()


def test_infer_takes_a_sequence_of_400_moves_up_to_the_search(tmp_path, work_starts):
    """2 stones and prisoners 199 199: 400 moves, the most the tool orders; it gets as far as the network."""
    pos = tmp_path / "pos.sgf"
    pos.write_text(TWO)
    with pytest.raises(WorkStarted):
        cli.main(["infer", str(pos), "-o", str(tmp_path / "o.sgf"), "--method", "beam", "--prisoners", "199", "199"])


def test_infer_refusals_of_counts_and_dead_groups_say_what_to_do(tmp_path, caplog, no_search, work_starts):
    """Two black stones and no white one: refused without prisoners, saying how to give them and which method
    orders positions with captures; given (White A1 captured between: B, W, B), the tool goes on to the search.
    A group without liberties is refused with and without prisoners: no legal move leaves one."""
    pos = tmp_path / "pos.sgf"
    pos.write_text("(;GM[1]FF[4]SZ[19]AB[dd][pp])")
    out = tmp_path / "o.sgf"
    message = refused(caplog, cli.main(["infer", str(pos), "-o", str(out)]), f"{pos}: 2 black and 0 white stones")
    assert "give their counts with --prisoners B W" in message and "--method beam orders positions" in message
    with pytest.raises(WorkStarted):
        cli.main(["infer", str(pos), "-o", str(out), "--method", "beam", "--prisoners", "1", "0"])
    dead = tmp_path / "dead.sgf"
    dead.write_text("(;GM[1]FF[4]SZ[19]AB[aa][dd]AW[ba][ab])")  # Black A19 has no liberty
    for extra, suffix in (([], ""), (["--method", "beam", "--prisoners", "1", "1"], " (with --prisoners 1 1)")):
        caplog.clear()
        message = refused(caplog, cli.main(["infer", str(dead), "-o", str(out), *extra]), f"{dead}: ")
        assert "group(s) without liberties (A19): no legal move leaves a group so" in message
        assert message.endswith(suffix) and "which the inference assumes did not" not in message
    assert not out.exists()


def test_an_unknown_network_is_refused_with_the_shipped_names_and_no_progress(tmp_path, caplog, capsys, no_search):
    from moveorder.nets import shipped

    pos = tmp_path / "pos.sgf"
    pos.write_text(TWO)
    out = tmp_path / "o.sgf"
    names = sorted(p.name[: -len(".txt.gz")] for p in shipped.HERE.glob("*.txt.gz"))
    assert "tygem" in names and "tygem-6x128" in names
    for spec, what in (("tygem-9x999", "no such network file"), (str(tmp_path), "is a folder")):
        caplog.clear()
        refused(
            caplog,
            cli.main(["infer", str(pos), "-o", str(out), "--network", spec]),
            f"--network {spec!r}: {what}",
            f"(shipped: {', '.join(names)})",
        )
        assert capsys.readouterr().err == ""  # no progress bar before the refusal
    assert not out.exists()
    caplog.clear()  # infer-set: the same check
    arr = tmp_path / "20m.jsonl"
    arr.write_text('{"id": "g1", "set": "pro", "n": 2, "black": ["dd"], "white": ["pp"], "actual": ["dd", "pp"]}\n')
    args = ["--arrangements", arr, "--out", tmp_path / "r.jsonl", "--table", tmp_path / "r.csv"]
    code = cli.main(["infer-set", *map(str, args), "--network", "tygem-9x999"])
    refused(caplog, code, "--network 'tygem-9x999': no such network file", f"(shipped: {', '.join(names)})")
    assert not (tmp_path / "r.jsonl").exists() and not (tmp_path / "r.csv").exists()


def test_no_progress_is_shown_before_the_network_is_refused(tmp_path, caplog, capsys):
    """A network file that is no network: refused as it loads, before the progress bar is drawn."""
    pos = tmp_path / "pos.sgf"
    pos.write_text(TWO)
    net = tmp_path / "w.txt"
    net.write_bytes(b"1\n" + b"x y\n" * 18)
    refused(caplog, cli.main(["infer", str(pos), "-o", str(tmp_path / "o.sgf"), "--network", str(net)]), str(net))
    err = capsys.readouterr().err
    assert "infer" not in err and "it/s" not in err, err


def test_the_capture_search_shows_its_progress_in_network_evaluations(tmp_path, capsys):
    """B B1, W A1, B A2 takes A1: 3 moves; width 4, the default's two passes (the second twice as wide),
    one more beam on the capture sites' last rung as wide as the second (the two passes end below the
    ladder's third rung), patience 2: at most 4 x 3 x (1 + 2 + 2 + 2) = 84 a search, and the default
    searches the board from both seats: 168."""
    pos = tmp_path / "pos.sgf"
    pos.write_text("(;GM[1]FF[4]SZ[19]AB[bs][ar])")  # B1 (bs) and A2 (ar)
    out = tmp_path / "o.sgf"
    code = cli.main(
        ["infer", str(pos), "-o", str(out), "--network", FIXTURE, "--method", "beam", "--beam-width", "4"]
        + ["--prisoners", "1", "0"]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "infer (network evaluations, at most)" in err and "/168 " in err, err
    moves = sgf_points(sgf.Sgf_game.from_bytes(out.read_bytes()))
    assert sorted(moves[::2]) == [("b", "ar"), ("b", "bs")] and moves[1] == ("w", "as")


def torch_sees_cuda():
    import torch

    return torch.cuda.is_available()


# Every numeric and choice option of `infer` and what it accepts, worked out from its help and the limits
# the tool states (moveorder.settings): (low, high) for numbers, the choices for the others.
WHOLE = {
    "--iterations": (1, 10_000_000),
    "--trials": (1, 100),
    "--beam-width": (1, 4096),
    "--beam-passes": (1, 16),
    "--beam-widen": (1, 128),  # 4096 / the default width 32
    "--beam-widen-found": (1, 128),  # the same
    "--patience": (0, 100),
    "--cache-size": (0, 1 << 22),
    "--max-batch": (1, 4096),
    "--moves": (1, 20),  # the record below has 20 moves
    "--seed": (-math.inf, math.inf),
}
REAL = {"--beam-future": (0.0, 100.0), "--t-start": (0.1, 1e6), "--t-end": (1e-6, 1.0)}  # t_end <= t_start = 1
CHOICES = {
    "--method": ["anneal", "beam", "beam+anneal"],
    "--init": ["greedy", "random", "beam"],
    "--neighbour": ["swp2", "mov2", "rot3", "mix"],
    "--schedule": ["geometric", "linear"],
    "--precision": ["float32", "bfloat16"] + (["tf32"] if torch_sees_cuda() else []),
}


def number_texts():
    from hypothesis import strategies as st

    huge = st.sampled_from([2**31, 2**63, 10**20, -(10**20), 10**400])
    return st.one_of(
        st.integers(-5, 5000).map(str),
        st.integers(-(10**30), 10**30).map(str),
        huge.map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(["", " ", "1e3", "nan", "-inf", "0x10", "1_000", "٣", "12abc", "None", "4096.0", "1e-7"]),
        st.text(max_size=6),
    )


def accepted(option, text):
    """Whether ``option`` with ``text`` should pass every check (worked out here, not asked of the tool)."""
    if option in CHOICES:
        return text in CHOICES[option]
    try:
        value = int(text) if option in WHOLE else float(text)
    except ValueError:
        return False
    low, high = WHOLE.get(option) or REAL[option]
    return low <= value <= high


def run_infer(tmp, args):
    """``moveorder infer`` with ``args``: ('started', '') where it got to the network, else (code, message):
    the refusal's log message or argparse's error."""
    messages = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())
    log = logging.getLogger("moveorder")
    log.addHandler(handler)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["infer", *map(str, args)])
    except WorkStarted:
        return "started", err.getvalue()
    except SystemExit as exit:
        code = exit.code
    finally:
        log.removeHandler(handler)
    assert "Traceback" not in err.getvalue() and "it/s" not in err.getvalue(), err.getvalue()
    return code, "\n".join(messages) + err.getvalue()


@pytest.fixture
def hostile(tmp_path, work_starts):
    record = tmp_path / "record.sgf"
    record.write_text(make_sgf(OPENING[:20]))
    setup = tmp_path / "two.sgf"
    setup.write_text(TWO)
    return tmp_path, record, setup


@pytest.mark.parametrize("option", sorted(WHOLE) + sorted(REAL) + sorted(CHOICES))
def test_no_option_value_of_infer_reaches_the_user_as_an_exception(hostile, option):
    """Huge, negative, zero, non-numeric and empty values of every numeric and choice option: each is
    refused (exit code 2, a message naming the option, nothing written, no traceback) or, where valid,
    gets as far as loading the network and no further (no search runs here)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    tmp, record, _ = hostile
    out = tmp / "o.sgf"
    values = (
        number_texts() if option not in CHOICES else st.one_of(st.sampled_from(CHOICES[option]), st.text(max_size=12))
    )

    def verify(text):
        code, message = run_infer(tmp, [record, "-o", out, "--network", FIXTURE, f"{option}={text}"])
        assert not out.exists()
        if accepted(option, text):
            assert code == "started", (text, message)
        else:
            assert code == 2 and option in message, (text, code, message)

    # Each limit and its neighbours, then values drawn at random.
    if option in CHOICES:
        edges = CHOICES[option] + [c.upper() for c in CHOICES[option]] + ["", "tf32", "--"]
    else:
        low, high = WHOLE.get(option) or REAL[option]
        step = 1 if option in WHOLE else 1e-9 * max(1.0, abs(high))
        edges = [repr(v) if option in REAL else str(v) for v in (low, high) if math.isfinite(v)]
        edges += [repr(v - step) if option in REAL else str(v - 1) for v in (low,) if math.isfinite(v)]
        edges += [repr(v + step) if option in REAL else str(v + 1) for v in (high,) if math.isfinite(v)]
        edges += ["--"]  # argparse drops a value of "--" and leaves an empty list, unchecked
    for text in edges:
        verify(text)
    settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])(
        given(values)(verify)
    )()


def test_no_prisoners_device_or_network_value_reaches_the_user_as_an_exception(hostile):
    """--prisoners B W on one black and one white stone: Black plays 1 + W moves and White 1 + B, so W - B is 0
    or 1 (Black first, alternating), and 2 + B + W is at most 400; --device cpu (cuda only with a GPU);
    --network a file or a shipped name."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    tmp, record, setup = hostile
    out = tmp / "o.sgf"
    count = st.one_of(st.integers(-3, 450).map(str), number_texts().filter(lambda t: not t.startswith("-")))
    quick = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

    @settings(max_examples=150, **quick)
    @given(count, count)
    def prisoners(b, w):
        code, message = run_infer(tmp, [setup, "-o", out, "--method", "beam", "--prisoners", b, w])
        assert not out.exists()
        try:
            pb, pw = int(b), int(w)
        except ValueError:
            ok = False
        else:
            ok = pb >= 0 and pw >= 0 and pw - pb in (0, 1) and 2 + pb + pw <= 400
        if ok:
            assert code == "started", (b, w, message)
        else:
            assert code == 2 and ("--prisoners" in message or "argument --prisoners" in message), (b, w, message)

    prisoners()
    cuda = torch_sees_cuda()
    devices = {"cpu": True, "cpu:0": True, "": True, "cuda": cuda, "cuda:99": False, "bogus": False, "meta": False}
    devices |= {"mps": False, "0": False, "-1": False, "cpu:x": False}
    for device, ok in devices.items():
        code, message = run_infer(tmp, [record, "-o", out, "--network", FIXTURE, f"--device={device}"])
        assert (code == "started") if ok else (code == 2 and "--device" in message), (device, message)
    folder = tmp / "folder"
    folder.mkdir()
    networks = {FIXTURE: True, "tygem": True, "tygem-6x128": True, "tygem-9x999": False, "": False}
    networks |= {str(folder): False, str(tmp / "none.gz"): False}
    for network, ok in networks.items():
        code, message = run_infer(tmp, [record, "-o", out, f"--network={network}"])
        assert (code == "started") if ok else (code == 2 and "--network" in message), (network, message)
    assert not out.exists()


def test_any_seed_keys_the_chains(hostile):
    """--seed takes any whole number: huge and negative seeds key the chains as 32-bit keys."""
    from moveorder.search.anneal import chain_keys

    for seed in (0, -1, 2**63, -(10**30), 10**400):
        keys = chain_keys(seed, 3, 1)
        assert len(keys) == 2 and all(0 <= k < 2**32 for k in keys)
    assert chain_keys(-1, 0, 0) != chain_keys(0, 0, 0)


def test_a_record_longer_than_the_tool_orders_is_refused_with_the_moves_to_give():
    """A record's position after 401 moves (361 stones standing, 40 captured): over the 400-move limit."""
    from moveorder.data.position import Position, check_length

    points = [(r, c) for r in range(19) for c in range(19)]
    full = Position(points[:181], points[181:], prisoners=(20, 20))
    with pytest.raises(ValueError, match=r"^rec.sgf: the position after 401 moves: .*at most 400 moves.*--moves 400"):
        check_length(full, "rec.sgf", given=False)
    check_length(Position(points[:181], points[181:], prisoners=(20, 19)), "rec.sgf", given=False)  # 400: taken
