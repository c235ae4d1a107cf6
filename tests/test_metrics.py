"""moveorder.report.metrics: pure functions of the tables, against numpy and by hand."""

import numpy as np
import pandas as pd
import pytest

from helpers import fake_tables
from moveorder.report.metrics import better_both_ways, share_on_or_above, slope_through_origin, summarize


def test_slope_through_origin_matches_numpy_lstsq():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.05, 0.4, 100)
    y = 1.07 * x + rng.normal(0, 0.01, 100)
    expected = np.linalg.lstsq(x[:, None], y, rcond=None)[0][0]
    assert slope_through_origin(x, y) == pytest.approx(expected, rel=1e-12)
    assert slope_through_origin([1, 2], [2, 4]) == 2.0
    with pytest.raises(ValueError):
        slope_through_origin([0, 0], [1, 1])


def test_share_counts_ties_as_on_the_line():
    x = [0.2, 0.3, 0.4, 0.5]
    y = [0.2, 0.3 * (1 - 1e-13), 0.39, 0.6]  # a tie, a tie up to rounding, one below, one above
    assert share_on_or_above(x, y) == 0.75


def test_summary_counts_every_arrangement_and_rates():
    inferred, scored = fake_tables(n=9, seed=3)
    row = summarize(inferred)
    assert row["arrangements"] == 9 and row["exact_match_rate"] == pytest.approx(3 / 9)
    assert row["lgm_slope"] == pytest.approx(slope_through_origin(inferred["actual_lgm"], inferred["lgm"]))
    assert row["share_on_or_above"] == pytest.approx(share_on_or_above(inferred["actual_lgm"], inferred["lgm"]))
    assert "loss_slope" not in row  # no scores given: no loss columns
    both = better_both_ways(
        pd.DataFrame(
            {"lgm": [0.2, 0.1], "actual_lgm": [0.1, 0.2], "loss_inferred": [0.5, 0.5], "loss_actual": [1.0, 1.0]}
        )
    )
    assert list(both["lgm"]) == [0.2]


def test_slope_and_share_on_hand_values():
    assert slope_through_origin([2.0], [3.0]) == 1.5  # one point is enough
    assert slope_through_origin([2**40, 2**41], [2**40, 2**41]) == 1.0  # as floats: no integer overflow
    for x in ([], [0.0, 0.0]):
        with pytest.raises(ValueError, match="^need at least one non-zero x for a slope$"):
            slope_through_origin(x, [1.0] * len(x))
    # A tie up to rtol * |x| counts (1 - 1e-9 is exactly x - rtol * x here); 1e-9 below 0.2 is 5 rtols below.
    assert share_on_or_above([1.0], [1.0 - 1e-9]) == 1.0
    assert share_on_or_above([0.2], [0.2 - 1e-9]) == 0.0
    assert share_on_or_above([1, 2], [1, 1]) == 0.5


def test_summary_row_by_hand():
    inferred = pd.DataFrame(
        {
            "actual_lgm": [0.1, 0.2, 0.4],
            "lgm": [0.2, 0.2, 0.2],
            "exact_match": [False, True, False],
            "matching_prefix": [1, 20, 3],
            "matching_moves": [4, 20, 8],
            "trial_std": [0.0, 0.03, 0.06],
        }
    )
    scored = pd.DataFrame({"loss_actual": [1.0, 2.0, 2.0], "loss_inferred": [0.5, 2.0, 4.0]})
    row = summarize(inferred, scored)
    expected = {
        "arrangements": 3,
        "share_on_or_above": 2 / 3,
        "lgm_slope": (0.02 + 0.04 + 0.08) / (0.01 + 0.04 + 0.16),
        "exact_match_rate": 1 / 3,
        "mean_matching_prefix": 8.0,
        "mean_matching_moves": 32 / 3,
        "mean_trial_std": 0.03,
        "mean_lgm_inferred": 0.2,
        "mean_lgm_actual": 0.7 / 3,
        "loss_slope": (0.5 + 4.0 + 8.0) / (1.0 + 4.0 + 4.0),
        "mean_loss_actual": 5 / 3,
        "mean_loss_inferred": 6.5 / 3,
        "share_loss_lower": 1 / 3,  # a tie is not lower
    }
    assert row == pytest.approx(expected, rel=1e-12) and list(row) == list(expected)
    assert "loss_slope" not in summarize(inferred, scored.iloc[:0])  # an empty score table: no loss columns


def test_better_both_ways_by_hand():
    scored = pd.DataFrame(
        {
            "id": ["tie-lgm", "gain2", "tie-loss", "gain4", "worse"],
            "lgm": [0.2, 0.2, 0.3, 0.4, 0.1],
            "actual_lgm": [0.2, 0.1, 0.1, 0.1, 0.2],
            "loss_inferred": [0.5, 0.5, 1.0, 0.9, 0.5],
            "loss_actual": [1.0, 1.0, 1.0, 1.0, 1.0],
        }
    )
    both = better_both_ways(scored)
    assert list(both["id"]) == ["gain4", "gain2"]  # strictly better both ways, the larger gain first
    assert list(both["gain"]) == pytest.approx([4.0, 2.0], rel=1e-12)


def test_summary_of_a_set_with_captures_counts_found_and_placed():
    """Rows without prisoners are blank in the capture columns and left out of both shares."""
    df = pd.DataFrame(
        {
            "actual_lgm": [0.1, 0.1, 0.1, 0.1],
            "lgm": [0.2, 0.0, 0.1, 0.3],
            "exact_match": [False] * 4,
            "matching_prefix": [1, 0, 2, 3],
            "matching_moves": [1, 0, 2, 3],
            "trial_std": [0.0] * 4,
            "found": [True, False, None, True],
            "captured_placed": [0.5, 0.0, None, 1.0],
        }
    )
    row = summarize(df)
    assert row["found_share"] == pytest.approx(2 / 3)
    assert row["mean_captured_placed"] == pytest.approx(0.75)
    assert "found_share" not in summarize(df.drop(columns=["found", "captured_placed"]))
