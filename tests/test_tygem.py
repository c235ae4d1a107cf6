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
from moveorder.data.records import RecordError, qualify, read_sgf, usable

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


def test_a_game_line_by_hand():
    """Each field of a game line read by hand: a pass is `tt` (written empty or as `tt`), spaces around
    the id, the moves and a point are dropped, White may move first, a line may hold no moves."""
    r = tygem.read_game(" 77 \t ;B[pd];W[tt];B[];W[ dp ] ", "2016-12:3")
    assert (r.id, r.source, r.size, r.moves, r.colours, r.first_player) == (
        "77",
        "2016-12:3",
        19,
        "pdttttdp",
        "BWBW",
        "B",
    )
    assert (r.komi, r.rules, r.black_rank, r.white_rank) == (6.5, "Japanese", "9d", "9d")
    assert (r.black, r.white, r.date, r.result) == ("", "", "", "")
    assert r.move_list() == [(3, 15), None, None, (15, 3)]  # (row from the top, column)
    w = tygem.read_game("78\t;W[pd];B[dp]", "m:1", ("2016.12.01 00:03", "b b2", "w", "B+1.5"))
    assert (w.first_player, w.colours, w.moves) == ("W", "WB", "pddp")
    assert (w.date, w.black, w.white, w.result) == ("2016.12.01 00:03", "b b2", "w", "B+1.5")
    empty = tygem.read_game("79\t", "m:2")
    assert (empty.id, empty.moves, empty.colours, empty.first_player) == ("79", "", "", "B")


@pytest.mark.parametrize(
    "text, reason, detail",
    [
        ("\t;B[pd]", "unreadable", "m:4: no game id before the tab"),
        ("  \t;B[pd]", "unreadable", "m:4: no game id before the tab"),
        ("81 ;B[pd]", "unreadable", "m:4: no tab between the game id and the moves"),
        ("91\t;B[pd]\t;W[dp]", "unreadable", "m:4: move 2: '\\t;W[dp]' is not a move node ;B[..] or ;W[..]"),
        (
            "82\t;B[pd]W[dp];B[dd];W[pp]",
            "unreadable",
            "m:4: move 2: 'W[dp];B[dd];' is not a move node ;B[..] or ;W[..]",
        ),
        ("83\t;B[pd];W[pdd]", "illegal_move", "m:4: move 2: W[pdd] is not a point on a 19x19 board"),
        ("84\t;B[p]", "illegal_move", "m:4: move 1: B[p] is not a point on a 19x19 board"),
        ("85\t;B[pt]", "illegal_move", "m:4: move 1: B[pt] is not a point on a 19x19 board"),
        ("86\t;B[ta]", "illegal_move", "m:4: move 1: B[ta] is not a point on a 19x19 board"),
        ("87\t;B[sA]", "illegal_move", "m:4: move 1: B[sA] is not a point on a 19x19 board"),
    ],
)
def test_a_line_that_cannot_be_read_names_the_file_line_and_move(text, reason, detail):
    with pytest.raises(RecordError) as err:
        tygem.read_game(text, "m:4")
    assert (err.value.reason, err.value.detail) == (reason, detail)


def test_the_corners_and_the_edges_are_points():
    r = tygem.read_game("88\t;B[aa];W[ss];B[as];W[sa]", "m:5")
    assert r.moves == "aassassa" and r.move_list() == [(0, 0), (18, 18), (18, 0), (0, 18)]


def test_index_lines_by_hand(tmp_path, caplog):
    """The index: a byte-order mark and CR LF line ends dropped (a line's last empty column kept), the date's `C` dropped (and a date
    without it kept), a player's English id added where it differs and is given, damaged lines skipped
    and counted in the log, only the wanted games kept."""
    rows = [
        "\ufeff1\tC2016.12.01 00:03\twname\twname\t2\tbname\tbeng\t2\tW+Resign\t60\t30/3 5m",
        "2\t2016.12.02 10:00\t w \t\t0\tb\tb \t0\tB+1.5\t61\t20/3 0m",
        "3\tC2016.12.03\tonly\tfour",
        "4\tC2016.12.04\tw4\tw4e\t0\tb4\tb4\t0\tDraw",
        "5\tC2016\tfew",
        "6\tC2016.12.06\tw6\tw6\t0\tb6\tb6\t0\t",  # no result: 9 columns, the last empty
    ]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Kifu2016.index").write_bytes("\r\n".join(rows).encode() + b"\r\n")
    (tmp_path / "Kifu2015.index").write_text("9\tC2015.01.01\tw\tw\t0\tb\tb\t0\tB+R\n")
    (tmp_path / "notes.txt").write_text("1\t2\n")
    paths = tygem.index_files(tmp_path)
    assert paths == [tmp_path / "Kifu2015.index", tmp_path / "sub" / "Kifu2016.index"]
    caplog.set_level(logging.WARNING)
    every = tygem.read_index(paths)
    assert every == {
        "9": ("2015.01.01", "b", "w", "B+R"),
        "1": ("2016.12.01 00:03", "bname beng", "wname", "W+Resign"),
        "2": ("2016.12.02 10:00", "b", "w", "B+1.5"),
        "4": ("2016.12.04", "b4", "w4 w4e", "Draw"),
        "6": ("2016.12.06", "b6", "w6", ""),
    }
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / 'sub' / 'Kifu2016.index'}: 2 index lines with fewer than 9 columns skipped"
    ]
    caplog.clear()
    assert tygem.read_index(paths, {"2", "3", "7"}) == {"2": every["2"]}
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / 'sub' / 'Kifu2016.index'}: 1 index lines with fewer than 9 columns skipped"
    ]


def test_month_files_ids_and_lines_by_hand(tmp_path):
    """Month files are the files named YYYY-MM at any depth, sorted, picked by globs on their path below
    the folder; their lines are numbered from 1, blank ones skipped, each joined with its index entry."""
    for name in ("a/2016-12", "2016-11", "b/c/2017-01", "2016-1", "2016-12.txt", "x2016-10", "Kifu2016.index"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf11\t;B[pd]\r\n \r\n12 \t;B[dd];W[pp]\n\n13\t;B[\xff]\nX9\tX\tX\n")
    (tmp_path / "d" / "2018-01").mkdir(parents=True)  # a folder is not a file
    found = tygem.month_files(tmp_path)
    assert found == [tmp_path / "2016-11", tmp_path / "a/2016-12", tmp_path / "b/c/2017-01"]
    assert tygem.month_files(tmp_path, ["a/*", "*/*/2017-*"]) == found[1:]
    assert tygem.month_files(tmp_path, ["2016-1?"]) == found[:1]
    assert tygem.check_input_folder(tmp_path, ["a/*"]) == [tmp_path / "a/2016-12"]
    assert tygem.game_ids(found[:1]) == {"11", "12", "13", "", "X9"}
    lines = list(tygem.games(tmp_path, found[1:2], {"12": ("d", "b", "w", "r"), "X9": ("x", "", "", "")}))
    assert lines == [
        ("a/2016-12:1", "11\t;B[pd]", None),
        ("a/2016-12:3", "12 \t;B[dd];W[pp]", ("d", "b", "w", "r")),
        ("a/2016-12:5", "13\t;B[\ufffd]", None),
        ("a/2016-12:6", "X9\tX\tX", ("x", "", "", "")),  # the id is what comes before the first tab
    ]


def test_a_folder_without_month_files_is_refused_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"^{tmp_path / 'none'}: no such folder$"):
        tygem.check_input_folder(tmp_path / "none")
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError) as err:
        tygem.check_input_folder(tmp_path / "f")
    assert str(err.value) == f"{tmp_path / 'f'}: not a folder; give the folder that holds the Tygem month files"
    (tmp_path / "2016-12").write_text("")
    with pytest.raises(ValueError) as err:
        tygem.check_input_folder(tmp_path, ["a/*", "b/*"])
    assert str(err.value) == (
        f"{tmp_path}: no Tygem month files (named YYYY-MM, one game a line) matching --include a/* b/* below this folder"
    )
    (tmp_path / "2016-12").unlink()
    with pytest.raises(ValueError) as err:
        tygem.check_input_folder(tmp_path)
    assert str(err.value) == f"{tmp_path}: no Tygem month files (named YYYY-MM, one game a line) below this folder"


def capture_at(n):
    """Black takes a white stone with move ``n`` (quiet moves before it), then quiet moves to 60."""
    moves = filler_moves(n - 5) + ["qa", "ra", "rb", "sq", "sa"]
    return moves + filler_moves(60, moves)[len(moves) :]


@pytest.fixture
def months(tmp_path):
    """Two month files and an index: 50 moves (long enough by default), 49 (not), a capture at move 51
    (capture-free long enough by default) and at move 31; the index has games 1 and 2, and one not read."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "2016-12").write_text(
        "\n".join([line(1, filler_moves(50)), line(2, filler_moves(49)), line(3, capture_at(51))]) + "\n"
    )
    (tmp_path / "2017-01").write_text(line(4, capture_at(31)) + "\n")
    entry = "\tC2016.12.01 00:03\tw\tw\t0\tb\tb\t0\tB+R\t50\t30/3 5m\n"
    (tmp_path / "Kifu2016.index").write_text("".join(f"{g}{entry}" for g in (1, 2, 99)))
    return tmp_path


def test_scan_by_hand_its_defaults_its_limits_and_its_month_files(months, caplog):
    caplog.set_level(logging.INFO, logger="moveorder.data.tygem")
    checked = list(tygem.scan(months))
    assert [(c.source, c.reason) for c in checked] == [
        ("2017-01:1", "capture_early"),
        ("a/2016-12:1", None),
        ("a/2016-12:2", "too_short"),
        ("a/2016-12:3", None),
    ]
    assert [r.getMessage() for r in caplog.records] == [f"{months}: 2 month files, 2 games in the index"]
    loose = [c.reason for c in tygem.scan(months, capture_free=30, min_moves=40)]
    assert loose == [None, None, None, None]
    strict = [c.reason for c in tygem.scan(months, capture_free=51, min_moves=50)]
    assert strict == ["capture_early", None, "too_short", "capture_early"]
    caplog.clear()
    only = list(tygem.scan(months, months=[months / "a" / "2016-12"]))
    assert [c.source for c in only] == ["a/2016-12:1", "a/2016-12:2", "a/2016-12:3"]
    assert json.loads(only[0].payload)["result"] == "B+R"
    assert [r.getMessage() for r in caplog.records] == [f"{months}: 1 month files, 2 games in the index"]


def test_chunks_of_lines_and_the_work_in_flight(months, monkeypatch):
    """Lines go out in chunks of CHUNK; with workers, a pool of that many, and at most AHEAD chunks a
    worker in flight (a stand-in pool that does each chunk at once counts the chunks not yet taken)."""
    assert list(tygem._chunks(iter(range(5)), 2)) == [[0, 1], [2, 3], [4]]
    sizes = []
    check = tygem._check_chunk
    monkeypatch.setattr(tygem, "_check_chunk", lambda job: sizes.append(len(job[0])) or check(job))
    monkeypatch.setattr(tygem, "CHUNK", 1)
    monkeypatch.setattr(tygem, "AHEAD", 1)
    pools = []

    class Pool:
        def __init__(self, workers):
            pools.append(self)
            self.workers, self.out, self.most = workers, 0, 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, job):
            value, pool = fn(job), self
            self.out += 1
            self.most = max(self.most, self.out)

            class Done:
                def result(self):
                    pool.out -= 1
                    return value

            return Done()

    monkeypatch.setattr(tygem, "ProcessPoolExecutor", Pool)
    one = list(tygem.scan(months, workers=1)) + list(tygem.scan(months))
    assert pools == [] and sizes == [1] * 8
    sizes.clear()
    two = list(tygem.scan(months, workers=2))  # 4 chunks, at most 2 in flight
    assert [p.workers for p in pools] == [2] and pools[0].most == 2 and sizes == [1] * 4
    assert two == one[:4]
