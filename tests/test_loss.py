"""moveorder.katago.loss: the paper's loss of a move and of a sequence, by hand (pure, no engine)."""

import pytest

from moveorder.katago.loss import compact_analysis, move_losses, sequence_loss


def test_move_losses_perspective_and_options():
    # Before each move: the best lead available to the mover; after: the opponent's root lead.
    before = [{"best_lead": 2.0, "root_lead": 1.5}, {"best_lead": -1.0, "root_lead": -1.2}]
    after = [{"root_lead": -1.0}, {"root_lead": 2.0}]
    rows = move_losses(before, after)
    assert [r["loss"] for r in rows] == [1.0, 1.0]  # 2 - 1 ; -1 - (-2)
    assert sequence_loss(rows) == 1.0
    assert [r["loss"] for r in move_losses(before, after, delta_max="root")] == [0.5, pytest.approx(0.8)]
    better = [{"root_lead": -3.0}, {"root_lead": 2.0}]  # the move beats the "best" estimate
    assert move_losses(before, better)[0]["loss"] == -1.0
    assert move_losses(before, better, clamp=True)[0]["loss"] == 0.0


def test_compact_analysis_takes_max_lead_among_moves():
    reply = {
        "rootInfo": {"scoreLead": 1.0, "visits": 9, "winrate": 0.6},
        "moveInfos": [{"move": "D4", "scoreLead": 1.2, "order": 0}, {"move": "Q16", "scoreLead": 1.5, "order": 1}],
    }
    c = compact_analysis(reply)
    assert c["best_lead"] == 1.5 and c["root_lead"] == 1.0 and c["best_move"] == "D4"


def test_compact_analysis_every_field_and_its_defaults():
    reply = {
        "rootInfo": {"scoreLead": -2.0, "visits": 9, "winrate": 0.25},
        # KataGo's order 0 is its best move, wherever it is listed; a move without an order counts as 0.
        "moveInfos": [{"move": "Q16", "scoreLead": -1.5, "order": 1}, {"move": "D4", "scoreLead": -1.75, "order": 0}],
    }
    assert compact_analysis(reply) == {
        "root_lead": -2.0,
        "best_lead": -1.5,
        "best_move": "D4",
        "visits": 9,
        "winrate": 0.25,
    }
    unordered = {"rootInfo": {"scoreLead": 0.0}, "moveInfos": [{"move": "C3", "scoreLead": 0.0, "order": 1}]}
    unordered["moveInfos"].append({"move": "K10", "scoreLead": 0.0})
    assert compact_analysis(unordered)["best_move"] == "K10"
    # No moves analysed (visits 0): the root's lead is the best there is; no visits or winrate: 0 and even.
    bare = compact_analysis({"rootInfo": {"scoreLead": 3.5}})
    assert bare == {"root_lead": 3.5, "best_lead": 3.5, "best_move": "", "visits": 0, "winrate": 0.5}


def test_move_losses_rows_and_refusals():
    rows = move_losses([{"best_lead": 2.0, "root_lead": 1.0}], [{"root_lead": -0.5}])
    assert rows == [{"delta_max": 2.0, "delta": 0.5, "loss": 1.5}]
    with pytest.raises(ValueError, match=r"delta_max 'mean': expected one of \('best_move', 'root'\)"):
        move_losses([], [], delta_max="mean")
    with pytest.raises(ValueError, match="^before and after must have one analysis per move$"):
        move_losses([{"best_lead": 0.0, "root_lead": 0.0}], [])
    with pytest.raises(ValueError, match="^a sequence with no moves has no loss$"):
        sequence_loss([])
