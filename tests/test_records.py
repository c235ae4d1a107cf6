"""Parsing and qualifying records the tests write themselves."""

import csv

import pytest

from conftest import OPENING, filler_moves, make_sgf
from moveorder import records
from moveorder.records import RecordError, qualify, read_sgf


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


def capture_at_30():
    """29 quiet moves, then black captures a white stone at move 30... as move 31 here."""
    moves = filler_moves(26)
    # White stone at ra (top right edge), black surrounds it: qa, rb, sa.
    moves += ["qa", "ra", "rb", "sq", "sa"]  # move 31 (black sa) captures ra
    return moves + filler_moves(60, moves)[len(moves):]


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
    counts = records.write_scan(sgf_dir, tmp_path / "q.jsonl", tmp_path / "r.csv", tmp_path / "x.csv", workers=2)
    assert counts["files"] == 4 and counts["qualified"] == 2
    assert counts["handicap"] == 1 and counts["unreadable"] == 1
    rows = list(csv.DictReader(open(tmp_path / "x.csv")))
    assert {r["source"]: r["reason"] for r in rows} == {"ha.sgf": "handicap", "sub/broken.SGF": "unreadable"}
    loaded = records.load_records(tmp_path / "q.jsonl")
    assert sorted(r.source for r in loaded) == ["gbk.sgf", "ok.sgf"]
    assert records.sgf_files(sgf_dir, ["sub/*"]) == [sgf_dir / "sub" / "broken.SGF"]
