"""Selection is reproducible, clipping is right, and no evaluation game leaks into the pool."""

from helpers import filler_moves, make_sgf
from moveorder.data.arrangements import clip, select_games
from moveorder.data.records import read_sgf


def fake_records(k):
    base = filler_moves(60)
    recs = []
    for i in range(k):
        moves = base[:45] + base[45:][i % 15 :] + base[45:][: i % 15]  # differ late in the game
        rec = read_sgf(make_sgf(moves).encode(), f"dir/game{i:03d}.sgf")
        recs.append(rec)
    return recs


def test_clip():
    rec = fake_records(1)[0]
    arr = clip(rec, 20, "pro")
    assert arr.actual == [rec.moves[i : i + 2] for i in range(0, 40, 2)]
    assert arr.black == sorted(arr.actual[0::2]) and arr.white == sorted(arr.actual[1::2])
    assert len(arr.black) == 10 and arr.source == "dir/game000.sgf"


def test_selection_deterministic_and_order_free():
    base = filler_moves(60)
    recs = []
    for i in range(30):
        moves = list(base)
        moves[-1], moves[-1 - (i % 9) - 1] = moves[-1 - (i % 9) - 1], moves[-1]
        rec = read_sgf(make_sgf(moves).encode(), f"g{i:02d}.sgf")
        rec.moves = rec.moves[:-4] + f"{chr(97 + i % 19)}{chr(97 + i // 19)}"  # make each unique
        recs.append(rec)
    a = select_games(recs, 5, seed=7, set_name="pro", leak_prefix=40)
    b = select_games(list(reversed(recs)), 5, seed=7, set_name="pro", leak_prefix=40)
    c = select_games(recs, 5, seed=8, set_name="pro", leak_prefix=40)
    d = select_games(recs, 5, seed=7, set_name="ama", leak_prefix=40)

    def ids(r):
        return [x.id for x in r["selected"]]

    assert ids(a) == ids(b)
    assert ids(a) != ids(c)  # another seed
    assert ids(a) != ids(d)  # another set name
    # All games share their first 40 moves here, so none may enter the pool.
    assert a["pool"] == [] and a["leaked"] == 25


def test_pool_excludes_selected_and_duplicates():
    recs = fake_records(15)
    dup = read_sgf(
        make_sgf(recs[3].move_list() and [recs[3].moves[i : i + 2] for i in range(0, len(recs[3].moves), 2)]).encode(),
        "copy.sgf",
    )
    out = select_games(recs + [dup], 3, seed=1, set_name="kgs", leak_prefix=20)
    assert out["duplicates"] == 1
    sel = {r.moves for r in out["selected"]}
    assert not sel & {r.moves for r in out["pool"]}


def test_pool_takes_usable_records_but_no_evaluation_opening():
    from helpers import capture_at_30, handicap_sgf

    recs = fake_records(6)
    ha = read_sgf(handicap_sgf([m for m in filler_moves(60) if m not in ("dp", "pd")]).encode(), "ha.sgf")
    cap = read_sgf(make_sgf(capture_at_30()).encode(), "cap.sgf")
    out = select_games(recs, 2, seed=3, set_name="pro", leak_prefix=20, usable=recs + [ha, cap])
    chosen = out["selected"]
    # The evaluation draw does not depend on the usable records.
    alone = select_games(recs, 2, seed=3, set_name="pro", leak_prefix=20)["selected"]
    assert [r.id for r in chosen] == [r.id for r in alone]
    pool = {r.source for r in out["pool"]}
    assert {"ha.sgf"} <= pool and not pool & {r.source for r in chosen}
    # fake_records share their first 45 moves, so every non-selected one repeats an evaluation opening;
    # so does cap.sgf (the same first 26 moves).
    assert out["leaked"] == 5 and out["evaluation"] == 2 and out["usable"] == 8 and pool == {"ha.sgf"}
    # A game shorter than the opening that is the start of an evaluation game would leak it too.
    start = read_sgf(make_sgf([chosen[0].moves[i : i + 2] for i in range(0, 14, 2)]).encode(), "short.sgf")
    other = read_sgf(make_sgf(["aa", "ss", "as"]).encode(), "other.sgf")
    out = select_games(recs, 2, seed=3, set_name="pro", leak_prefix=20, usable=recs + [start, other])
    assert {r.source for r in out["pool"]} == {"other.sgf"}


def opening_records():
    """14 games with 14 different 20-move openings (a black stone swapped into move 1) and, for the first 6,
    a second game with the same opening and another ending: 20 records, 14 openings."""
    base = filler_moves(60)
    recs = []
    for i in range(14):
        moves = list(base)
        moves[0], moves[2 + 2 * i] = moves[2 + 2 * i], moves[0]
        recs.append(read_sgf(make_sgf(moves).encode(), f"g{i:02d}.sgf"))
        if i < 6:
            twin = list(moves)
            twin[-1], twin[-3] = twin[-3], twin[-1]
            recs.append(read_sgf(make_sgf(twin).encode(), f"twin{i:02d}.sgf"))
    return recs


def test_calibration_games_share_no_opening_and_leave_the_evaluation_draw_alone():
    import pytest

    recs = opening_records()
    opening = lambda r: r.moves[:40]  # noqa: E731  the first 20 moves
    assert len({r.moves for r in recs}) == 20 and len({opening(r) for r in recs}) == 14
    alone = select_games(recs, 4, seed=5, set_name="pro", leak_prefix=20)
    out = select_games(recs, 4, seed=5, set_name="pro", leak_prefix=20, calibration=6)
    assert [r.id for r in out["selected"]] == [r.id for r in alone["selected"]]
    assert alone["calibration"] == [] and len(out["calibration"]) == 6
    evaluation = {opening(r) for r in out["selected"]}
    kept = [opening(r) for r in out["calibration"]]
    # No calibration game is an evaluation game or opens as one; no two open alike.
    assert not set(kept) & evaluation and len(set(kept)) == 6
    # Neither kind reaches the pool, nor a game opening as either.
    assert not {opening(r) for r in out["pool"]} & (evaluation | set(kept))
    assert out["evaluation"] == 4 and out["calibration_used"] == 6
    assert len(out["pool"]) + out["leaked"] + out["evaluation"] + out["calibration_used"] == 20
    # The draw is the seed's, whatever the files' order.
    again = select_games(list(reversed(recs)), 4, seed=5, set_name="pro", leak_prefix=20, calibration=6)
    assert [r.id for r in again["calibration"]] == [r.id for r in out["calibration"]]
    other = select_games(recs, 4, seed=6, set_name="pro", leak_prefix=20, calibration=6)
    assert [r.id for r in other["calibration"]] != [r.id for r in out["calibration"]]
    # 14 openings: at most 10 are free of the evaluation games' (the 4 evaluation games may share with twins).
    free = 14 - len(evaluation)
    with pytest.raises(ValueError, match=f"only {free} qualified games outside .* {free + 1} calibration games"):
        select_games(recs, 4, seed=5, set_name="pro", leak_prefix=20, calibration=free + 1)
