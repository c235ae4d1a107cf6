"""moveorder.plots: the LGM-ratio colour scale and a figure written to disk."""

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
