"""Parsing and qualifying records the tests write themselves."""

import csv

import pytest

from helpers import capture_at_30, filler_moves, handicap_sgf, make_sgf
from moveorder.data import records
from moveorder.data.qualify import write_scan
from moveorder.data.records import RecordError, qualify, read_sgf


def check(text, capture_free=50, min_moves=50, encoding="utf-8"):
    rec = read_sgf(text.encode(encoding) if isinstance(text, str) else text, "test.sgf")
    qualify(rec, capture_free, min_moves)
    return rec


def reason_of(text, **kw):
    with pytest.raises(RecordError) as err:
        check(text, **kw)
    return err.value.reason


def test_clean_game_qualifies():
    rec = check(make_sgf(filler_moves(60)))
    assert len(rec.move_list()) == 60 and rec.moves.startswith("dppp")


def test_handicap():
    assert reason_of(make_sgf(filler_moves(60), root="HA[2]")) == "handicap"


def test_setup_stones_in_root_and_later():
    assert reason_of(make_sgf(filler_moves(60), root="AB[aa]")) == "setup_stones"
    text = make_sgf(filler_moves(60)).replace(";W[pp]", ";W[pp]AW[ss]")
    assert reason_of(text) == "setup_stones"


def test_capture_at_move_31_rejected_and_allowed_after_limit():
    moves = capture_at_30()
    assert reason_of(make_sgf(moves)) == "capture_early"
    assert check(make_sgf(moves), capture_free=30)  # the capture is at move 31


def test_pass_early():
    moves = filler_moves(60)
    moves[10] = ""
    assert reason_of(make_sgf(moves)) == "pass_early"


def test_wrong_size():
    assert reason_of(make_sgf(["cc", "gg"], size=9)) == "not_19x19"


def test_white_first_and_double_colour():
    assert reason_of(make_sgf(filler_moves(60), colours="WB" * 31)) == "bad_move_order"
    assert reason_of(make_sgf(filler_moves(60), colours="BB" + "WB" * 30)) == "bad_move_order"


def test_too_short():
    assert reason_of(make_sgf(filler_moves(30))) == "too_short"


def test_illegal_move():
    moves = filler_moves(60)
    moves[5] = moves[2]  # occupied point
    assert reason_of(make_sgf(moves)) == "illegal_move"


def test_variation_tree_main_line_is_first_branch():
    main = filler_moves(60)
    head = "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(main[:10]))
    tail = "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(main[10:], start=10))
    text = f"(;GM[1]FF[4]SZ[19]{head}({tail})(;B[aa];W[bb]))"
    rec = check(text)
    assert rec.moves == "".join(main)


@pytest.mark.parametrize("raw, komi", [("375", 7.5), ("650", 6.5), ("750", 7.5), ("6.5", 6.5), ("0", 0.0)])
def test_fox_komi(raw, komi):
    rec = check(make_sgf(filler_moves(60)).replace("KM[6.5]", f"KM[{raw}]"))
    assert rec.komi == komi


def test_malformed_file():
    with pytest.raises(RecordError) as err:
        read_sgf(b"(;GM[1]SZ[19];B[dd];W[", "broken.sgf")
    assert err.value.reason == "unreadable" and "broken.sgf" in str(err.value)


def test_gbk_text_and_unknown_charset():
    text = make_sgf(filler_moves(60), root="PB[柯洁]PW[朴廷桓]CA[GB2312]")
    rec = check(text, encoding="gbk")
    assert rec.black == "柯洁" and rec.white == "朴廷桓"
    # GBK bytes with no CA at all, and a charset Python does not know.
    rec = check(make_sgf(filler_moves(60), root="PB[柯洁]"), encoding="gbk")
    assert rec.black == "柯洁"
    rec = check(make_sgf(filler_moves(60), root="PB[Lee]CA[no-such-charset]"))
    assert rec.black == "Lee"


def test_scan_counts_every_file(sgf_dir, tmp_path):
    (sgf_dir / "ok.sgf").write_text(make_sgf(filler_moves(60)))
    (sgf_dir / "ha.sgf").write_text(make_sgf(filler_moves(60), root="HA[3]"))
    (sgf_dir / "sub").mkdir()
    (sgf_dir / "sub" / "broken.SGF").write_bytes(b"(;GM[1]SZ[19];B[")
    (sgf_dir / "gbk.sgf").write_bytes(make_sgf(filler_moves(60), root="PB[柯洁]").encode("gbk"))
    (sgf_dir / "readme.txt").write_text("not a record")
    counts = write_scan(sgf_dir, tmp_path / "q.jsonl", tmp_path / "r.csv", tmp_path / "x.csv", workers=2)
    assert counts["files"] == 4 and counts["qualified"] == 2
    assert counts["handicap"] == 1 and counts["unreadable"] == 1
    rows = list(csv.DictReader(open(tmp_path / "x.csv")))
    assert {r["source"]: r["reason"] for r in rows} == {"ha.sgf": "handicap", "sub/broken.SGF": "unreadable"}
    loaded = records.load_records(tmp_path / "q.jsonl")
    assert sorted(r.source for r in loaded) == ["gbk.sgf", "ok.sgf"]
    assert records.sgf_files(sgf_dir, ["sub/*"]) == [sgf_dir / "sub" / "broken.SGF"]


# --- records usable for training (the pool) -----------------------------------------------------


def usable_reason(text):
    """Why a record cannot train: read_sgf refuses some (another board size), usable the rest."""
    with pytest.raises(RecordError) as err:
        records.usable(read_sgf(text.encode(), "t.sgf"))
    return err.value.reason


@pytest.mark.parametrize("node", [True, False])
def test_handicap_game_is_usable_with_its_stones(node):
    moves = [m for m in filler_moves(40) if m not in ("dp", "pd")]
    rec = read_sgf(handicap_sgf(moves, node).encode(), "ha.sgf")
    assert reason_of(handicap_sgf(moves, node)) in ("handicap", "setup_stones")
    records.usable(rec)
    assert rec.start_black == "dppd" and rec.start_white == "" and rec.first_player == "W"
    again = records.Record.from_json(rec.to_json())
    assert again.start_points() == ([(15, 3), (3, 15)], []) and again.first_player == "W"
    # A game without setup stones writes the same JSON as before the pool took handicap games.
    plain = read_sgf(make_sgf(filler_moves(60)).encode(), "p.sgf").to_json()
    assert "start_black" not in plain and "first_player" not in plain


def test_captures_passes_and_short_games_are_usable():
    for moves in (capture_at_30(), filler_moves(10)[:5] + [""] + filler_moves(12)[5:], filler_moves(3)):
        rec = read_sgf(make_sgf(moves).encode(), "c.sgf")
        records.usable(rec)


def test_unusable_records_and_why():
    moves = [m for m in filler_moves(30) if m not in ("dp", "pd")]
    # White first with no handicap stones; two moves of a colour in a row.
    assert usable_reason(make_sgf(filler_moves(30), colours="WB" * 16)) == "bad_move_order"
    assert usable_reason(make_sgf(filler_moves(30), colours="BWB" + "BW" * 15)) == "bad_move_order"
    # Stones set up in the middle of the game; a move onto a handicap stone; another board size; no moves.
    assert usable_reason(make_sgf(filler_moves(30)).replace(";W[pp]", ";W[pp]AW[ss]")) == "setup_stones"
    assert usable_reason(handicap_sgf(moves[:5] + ["pd"] + moves[5:])) == "illegal_move"
    assert usable_reason(make_sgf(["cc", "gg"], size=9)) == "not_19x19"
    assert usable_reason(make_sgf([])) == "too_short"


def test_scan_writes_usable_records_and_counts_the_rest(sgf_dir, tmp_path):
    moves = [m for m in filler_moves(60) if m not in ("dp", "pd")]
    (sgf_dir / "ok.sgf").write_text(make_sgf(filler_moves(60)))
    (sgf_dir / "ha.sgf").write_text(handicap_sgf(moves))
    (sgf_dir / "cap.sgf").write_text(make_sgf(capture_at_30()))
    (sgf_dir / "double.sgf").write_text(make_sgf(filler_moves(60), colours="BB" + "WB" * 30))
    (sgf_dir / "broken.sgf").write_text("(;GM[1]SZ[19];B[")
    counts = write_scan(
        sgf_dir, tmp_path / "q.jsonl", tmp_path / "r.csv", tmp_path / "x.csv", usable_path=tmp_path / "u.jsonl"
    )
    assert counts["files"] == 5 and counts["qualified"] == 1 and counts["usable"] == 3
    assert counts["unusable_bad_move_order"] == 1 and counts["unusable_unreadable"] == 1
    assert sorted(r.source for r in records.load_records(tmp_path / "u.jsonl")) == ["cap.sgf", "ha.sgf", "ok.sgf"]
    report = {row["reason"]: int(row["count"]) for row in csv.DictReader(open(tmp_path / "r.csv"))}
    assert report["usable"] == 3 and report["unusable_bad_move_order"] == 1
    # The qualified file is what it always was.
    plain = read_sgf(make_sgf(filler_moves(60)).encode(), "ok.sgf").to_json()
    assert (tmp_path / "q.jsonl").read_text() == plain + "\n"
