"""The Tygem dataset's one-game-a-line files: read into records as its own converter would write them,
joined with the yearly index, bad lines rejected with file and line; and one real month from the mirror."""

import csv
import json
import logging
import zipfile

import pytest

from helpers import MIRROR, filler_moves
from moveorder import cli
from moveorder.data import tygem
from moveorder.data.archives import extract_all
from moveorder.data.qualify import write_scan
from moveorder.data.records import qualify, read_sgf, usable

TYGEM = MIRROR / "github.com/yenw/computer-go-dataset/raw/master/TYGEM"


def line(game_id, moves):
    return f"{game_id}\t" + "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(moves))


def converter_sgf(moves, dt, pb, pw, re_):
    """What TYGEM/Converter.py writes for a game (its header, verbatim), then the line's nodes."""
    head = f"(;CA[UTF-8]GM[1]FF[4]AP[converter]\nSZ[19]GN[1]\nDT[{dt}]\nPB[{pb}]BR[9d]\nPW[{pw}]WR[9d]\n"
    head += f"RE[{re_}]RO[60]KM[6.5]RU[Japanese]TM[5 min]OT[3x 30 sec]\nPC[TYGEM]"
    return head + line(1, moves).split("\t")[1] + ")"


@pytest.fixture
def tygem_zips(tmp_path):
    """A month zip and its year's index, as the dataset ships them (one file each), made here."""
    moves = filler_moves(60)
    lines = [
        line(901, moves),  # in the index
        line(902, moves[:45]),  # not in the index: still read (too short to qualify)
        "903 " + line(0, moves).split("\t")[1],  # no tab
        line(904, moves[:10]) + ";X[aa]",  # not a move node
        line(905, moves[:4] + ["zz"]),  # a point off the board
        "",  # blank lines are not games
        line(906, moves[:30] + [""] + moves[30:]),  # a pass at move 31 (Tygem writes none, but B[] is one)
    ]
    month, index = tmp_path / "2016-12.zip", tmp_path / "Kifu2016.zip"
    with zipfile.ZipFile(month, "w") as z:
        z.writestr("2016-12", "\n".join(lines) + "\n")
    with zipfile.ZipFile(index, "w") as z:
        z.writestr(
            "Kifu2016.index",
            "901\tC2016.12.01 00:03\tmelt(P)\tmeltP\t2\t霍比特(P)\tBbazhu(P)\t2\tW+Resign\t60\t30/3 5m\n"
            "899\tC2016.12.01 00:01\ttoo\tfew\n"  # a damaged index line costs no game
            "906\tC2016.12.02 10:00\tsame\tsame\t0\tother\tother\t0\tB+1.5\t61\t20/3 0m\n",
        )
    return moves, [month, index]


def scan_to(tmp_path, files, **kw):
    extract_all(files, tmp_path / "x")
    out = {k: tmp_path / f"{k}.{ext}" for k, ext in [("q", "jsonl"), ("u", "jsonl"), ("r", "csv"), ("rej", "csv")]}
    counts = write_scan(
        tmp_path / "x", out["q"], out["r"], out["rej"], usable_path=out["u"], record_format="tygem", **kw
    )
    records = {r["id"]: r for r in map(json.loads, open(out["u"]))}
    rejected = {row["source"]: row for row in csv.DictReader(open(out["rej"]))}
    return counts, records, rejected, out


def test_games_are_read_as_the_converter_writes_them_and_joined_with_the_index(tmp_path, tygem_zips):
    moves, files = tygem_zips
    counts, records, rejected, out = scan_to(tmp_path, files)
    assert counts["files"] == 6  # the blank line is no game
    assert counts["qualified"] == 1 and counts["too_short"] == 1 and counts["pass_early"] == 1
    assert counts["unreadable"] == 2 and counts["illegal_move"] == 1
    assert counts["usable"] == 3 and counts["unusable_unreadable"] == 2 and counts["unusable_illegal_move"] == 1
    a, b, c = records["901"], records["902"], records["906"]
    # Index joined: the name, then the English id where it differs (as the converter's PB/PW); date without 'C'.
    assert (a["black"], a["white"], a["date"], a["result"]) == (
        "霍比特(P) Bbazhu(P)",
        "melt(P) meltP",
        "2016.12.01 00:03",
        "W+Resign",
    )
    assert (c["black"], c["white"], c["result"]) == ("other", "same", "B+1.5")
    assert a["source"] == "2016-12.zip/2016-12:1" and b["source"] == "2016-12.zip/2016-12:2"
    # The same game through sgfmill, from the SGF the dataset's converter writes: same moves and fields.
    ref = read_sgf(
        converter_sgf(moves, "2016.12.01 00:03", "霍比特(P) Bbazhu(P)", "melt(P) meltP", "W+Resign").encode(), "ref.sgf"
    )
    for key in ("moves", "komi", "rules", "black", "white", "black_rank", "white_rank", "date", "result", "handicap"):
        assert a[key] == getattr(ref, key), key
    assert a["moves"] == "".join(moves) and (a["komi"], a["rules"], a["black_rank"]) == (6.5, "Japanese", "9d")
    assert c["moves"] == "".join(moves[:30]) + "tt" + "".join(moves[30:])  # a pass, as read_sgf writes it
    # Missing from the index: read all the same, with the dataset's komi, rules and ranks.
    assert (b["black"], b["white"], b["date"], b["result"]) == ("", "", "", "")
    assert (b["komi"], b["rules"], b["white_rank"], len(b["moves"])) == (6.5, "Japanese", "9d", 90)
    assert [json.loads(x)["id"] for x in open(out["q"])] == ["901"]
    # Bad lines: rejected, counted, each naming the file and the line.
    assert rejected["2016-12.zip/2016-12:3"]["reason"] == "unreadable"
    assert "2016-12.zip/2016-12:3: no tab" in rejected["2016-12.zip/2016-12:3"]["detail"]
    assert "2016-12.zip/2016-12:4: move 11: ';X[aa]' is not a move node" in rejected["2016-12.zip/2016-12:4"]["detail"]
    assert rejected["2016-12.zip/2016-12:5"]["reason"] == "illegal_move"
    assert "2016-12.zip/2016-12:5: move 5: B[zz] is not a point" in rejected["2016-12.zip/2016-12:5"]["detail"]


def test_workers_give_the_same_files_in_the_same_order(tmp_path, tygem_zips, monkeypatch):
    _, files = tygem_zips
    one = scan_to(tmp_path / "one", files)
    monkeypatch.setattr(tygem, "CHUNK", 2)  # several chunks in flight, answered out of order or not
    monkeypatch.setattr(tygem, "AHEAD", 1)
    two = scan_to(tmp_path / "two", files, workers=2)
    assert one[0] == two[0]
    for key in ("q", "u", "r", "rej"):
        assert one[3][key].read_bytes() == two[3][key].read_bytes(), key


def test_filter_command_reads_tygem_and_refuses_a_folder_without_month_files(tmp_path, tygem_zips, caplog):
    caplog.set_level(logging.INFO)
    _, files = tygem_zips
    extract_all(files, tmp_path / "x")
    args = [
        "filter",
        "--input",
        str(tmp_path / "x"),
        "--qualified",
        str(tmp_path / "q.jsonl"),
        "--report",
        str(tmp_path / "r.csv"),
        "--rejected",
        str(tmp_path / "rej.csv"),
    ]
    assert cli.main([*args, "--record-format", "tygem"]) == 0
    assert "6 records, 1 qualified" in caplog.text
    (tmp_path / "empty").mkdir()
    args[2] = str(tmp_path / "empty")
    assert cli.main([*args, "--record-format", "tygem"]) == 2
    assert f"{tmp_path / 'empty'}: no Tygem month files" in caplog.text


def test_a_real_month_from_the_mirror(tmp_path):
    """2016-12.zip: 5,204 games (shared/data/README); every line reads, every game is in the 2016 index."""
    extract_all([TYGEM / "Kifu/2016-12.zip", TYGEM / "index/Kifu2016.zip"], tmp_path)
    months = tygem.month_files(tmp_path)
    assert [m.relative_to(tmp_path).as_posix() for m in months] == ["2016-12.zip/2016-12"]
    index = tygem.read_index(tygem.index_files(tmp_path), tygem.game_ids(months))
    games = list(tygem.games(tmp_path, months, index))
    assert len(games) == 5204 and sum(e is not None for _, _, e in games) == 5204
    records = [tygem.read_game(text, source, entry) for source, text, entry in games]
    assert len({r.id for r in records}) == 5204
    first = records[0]  # the file's first line and its index line, read by hand
    assert (first.id, first.source, first.moves[:12]) == ("915969008", "2016-12.zip/2016-12:1", "qdqpdddpopoq")
    assert (first.black, first.white, first.date, first.result) == (
        "霍比特(P) Bbazhu(P)",
        "melt(P) meltP",
        "2016.12.01 00:03",
        "W+Resign",
    )
    for r in records[:300]:  # replaying every game on a board is the data stage's work; a prefix here
        usable(r)
    qualify(records[0])
