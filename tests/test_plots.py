"""moveorder.report.plots: the LGM-ratio colour scale and a figure written to disk."""

import pandas as pd
import pytest

from moveorder.report import plots


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


@pytest.fixture
def drawn(monkeypatch):
    """The figures a plot function saves, to be read after (saved and closed as usual: a closed figure
    keeps its axes and artists)."""
    figures = []
    save = plots.save

    def keep(fig, stem):
        figures.append(fig)
        return save(fig, stem)

    monkeypatch.setattr(plots, "save", keep)
    return figures


def lines_by_label(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_likelihood_scatter_draws_the_points_the_slope_and_y_equals_x(tmp_path, drawn):
    actual, inferred = [0.1, 0.2, 0.3], [0.25, 0.15, 0.3]
    paths = plots.likelihood_scatter({"pro, 20 moves": {"actual": actual, "inferred": inferred}}, tmp_path / "lgm")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 1000 for p in paths)
    (ax,) = drawn[0].axes
    assert ax.collections[0].get_offsets().tolist() == [list(p) for p in zip(actual, inferred)]
    slope = (0.1 * 0.25 + 0.2 * 0.15 + 0.3 * 0.3) / (0.1**2 + 0.2**2 + 0.3**2)  # through the origin, by hand: 1.036
    hi = 0.3 * 1.05
    lines = lines_by_label(ax)
    assert set(lines) == {"y = x", f"y = {slope:.3f} x"}
    assert lines["y = x"].get_xydata().flatten().tolist() == pytest.approx([0, 0, hi, hi])
    assert lines[f"y = {slope:.3f} x"].get_xydata().flatten().tolist() == pytest.approx([0, 0, hi, slope * hi])
    assert "67% on or above y = x" in ax.get_title()  # 0.15 < 0.2 is below; 0.3 = 0.3 is on the line
    assert ax.get_xlim() == pytest.approx((0, hi)) and ax.get_ylim() == pytest.approx((0, hi))


def test_loss_scatter_colours_each_point_by_its_ratio_on_a_shared_bar(tmp_path, drawn):
    panels = {
        f"set {k}": {"loss_actual": [1.0, 2.0, 3.0], "loss_inferred": [2.0, 1.0, 3.0], "ratio": [0.5, 8.0, 1.0]}
        for k in (1, 2)
    }
    plots.loss_scatter(panels, tmp_path / "loss")
    fig = drawn[0]
    *panels_ax, bar = fig.axes
    assert len(panels_ax) == 2 and bar.get_ylabel() == "LGM(inferred) / LGM(actual)"
    for ax in panels_ax:
        points = ax.collections[0]
        # The strongest colours drawn last (on top): ratio 1, then 1/2, then 8.
        assert points.get_offsets().tolist() == [[3.0, 3.0], [1.0, 2.0], [2.0, 1.0]]
        assert points.get_array().tolist() == [1.0, 0.5, 8.0]
        assert (points.norm.vmin, points.norm.vmax) == (0.25, 4.0)
        colours = points.get_facecolors()
        assert tuple(colours[0][:3]) == (1.0, 1.0, 1.0)  # a ratio of 1 is white
        assert tuple(colours[2]) == pytest.approx(plots.ratio_colour(4.0))  # 8 is beyond the scale: clipped to 4
        slope = (2 + 2 + 9) / (1 + 4 + 9)
        assert f"y = {slope:.3f} x" in lines_by_label(ax)
    assert [float(t) for t in bar.get_yticks()] == pytest.approx([0.25, 0.5, 1, 2, 4])
    assert bar.get_ylim() == pytest.approx((0.25, 4.0))


def test_method_curves_draw_a_line_per_method_and_set_in_a_column_per_length(tmp_path, drawn):
    def lgm(s, n, c, e):  # each curve its own values, to see which line drew which
        return 0.05 + e / 1e6 + (0.01 if c == "beam" else 0) + (0.001 if s == "kgs" else 0) + n / 1e4

    rows = [
        {
            "set": s,
            "n": n,
            "curve": c,
            "evaluations": e,
            "mean_lgm": lgm(s, n, c, e),
            "share_on_or_above": 0.5 if c == "beam" else 0.9,
            "mean_lgm_actual": 0.06 if s == "pro" else 0.07,
        }
        for s in ("pro", "kgs")
        for n in (20, 40)
        for c in ("beam", "SA x5")
        for e in (1000, 100)  # out of order: each line is drawn by evaluations
    ]
    paths = plots.method_curves(pd.DataFrame(rows), tmp_path / "methods")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and paths[0].stat().st_size > 1000
    top20, top40, bottom20, bottom40 = drawn[0].axes
    for n, top, bottom in ((20, top20, bottom20), (40, top40, bottom40)):
        assert top.get_title() == f"{n} moves (grey: actual sequences)" and top.get_xscale() == "log"
        curves, bars = lines_by_label(top), lines_by_label(bottom)
        labels = {f"{c} ({s})" for c in ("beam", "SA x5") for s in ("pro", "kgs")}
        assert labels <= set(curves) and labels <= set(bars)
        for c in ("beam", "SA x5"):
            for s in ("pro", "kgs"):
                line = curves[f"{c} ({s})"]
                assert list(line.get_xdata()) == [100, 1000]
                assert list(line.get_ydata()) == pytest.approx([lgm(s, n, c, 100), lgm(s, n, c, 1000)])
                assert list(bars[f"{c} ({s})"].get_ydata()) == pytest.approx([50, 50] if c == "beam" else [90, 90])
        actual = sorted(line.get_ydata()[0] for line in top.get_lines() if line.get_label().startswith("_"))
        assert actual == pytest.approx([0.06, 0.07])  # each set's actual sequences: a grey line
