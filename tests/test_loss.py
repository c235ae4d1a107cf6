"""moveorder.loss: the paper's loss of a move and of a sequence, by hand (pure, no engine)."""

import pytest

from moveorder.loss import compact_analysis, move_losses, sequence_loss


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
