"""moveorder.metrics: pure functions of the tables, against numpy and by hand."""

import numpy as np
import pandas as pd
import pytest

from helpers import fake_tables
from moveorder.metrics import better_both_ways, share_on_or_above, slope_through_origin, summarize


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
