"""moveorder.plots: the LGM-ratio colour scale and a figure written to disk."""

import pandas as pd
import pytest

from moveorder import plots


def test_ratio_one_is_white_and_extremes_are_blue_and_red():
    assert plots.ratio_colour(1.0)[:3] == (1.0, 1.0, 1.0)
    r, g, b, _ = plots.ratio_colour(4.0)
    assert r > 0.6 and b < 0.3
    r, g, b, _ = plots.ratio_colour(0.25)
    assert b > 0.6 and r < 0.3
    # Log scale: 2 and 1/2 are equally far from white.
    norm = plots.ratio_norm()
    assert norm(2.0) + norm(0.5) == pytest.approx(1.0) and norm(1.0) == pytest.approx(0.5)


def test_ablation_bars_write_png_and_pdf(tmp_path):
    plots.ablation_bars(
        {"swp2": 0.9, "mix": 1.0}, tmp_path / "ablation", "LGM slope", "sweep test", {"swp2": 0.95, "mix": 1.02}
    )
    assert (tmp_path / "ablation.png").stat().st_size > 1000 and (tmp_path / "ablation.pdf").exists()


def test_method_curves_draw_a_line_per_method_and_set_in_a_column_per_length(tmp_path):
    rows = [
        {
            "set": s,
            "n": n,
            "curve": c,
            "evaluations": e,
            "mean_lgm": 0.05 + e / 1e6,
            "share_on_or_above": 0.9,
            "mean_lgm_actual": 0.06,
        }
        for s in ("pro", "kgs")
        for n in (20, 40)
        for c in ("beam", "SA x5")
        for e in (100, 1000)
    ]
    paths = plots.method_curves(pd.DataFrame(rows), tmp_path / "methods")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and paths[0].stat().st_size > 1000
