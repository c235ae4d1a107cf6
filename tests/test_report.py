"""Metrics against numpy, the colour scale, and the figures and tables of a report."""

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO
from moveorder import plots
from moveorder.metrics import better_both_ways, share_on_or_above, slope_through_origin, summarize
from moveorder.report import comparison_table, make_report


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


def test_ratio_one_is_white_and_extremes_are_blue_and_red():
    assert plots.ratio_colour(1.0)[:3] == (1.0, 1.0, 1.0)
    r, g, b, _ = plots.ratio_colour(4.0)
    assert r > 0.6 and b < 0.3
    r, g, b, _ = plots.ratio_colour(0.25)
    assert b > 0.6 and r < 0.3
    # Log scale: 2 and 1/2 are equally far from white.
    norm = plots.ratio_norm()
    assert norm(2.0) + norm(0.5) == pytest.approx(1.0) and norm(1.0) == pytest.approx(0.5)


def fake_tables(n=12, seed=0):
    rng = np.random.default_rng(seed)
    actual = rng.uniform(0.1, 0.3, n)
    lgm = actual * rng.uniform(0.95, 1.2, n)
    seqs = ["pddpqpdd" + "".join(rng.choice(list("abcdefghijklmnopqrs"), 4)) for _ in range(n)]
    inferred = pd.DataFrame({"set": "pro", "n": 6, "id": [f"g{i}" for i in range(n)], "lgm": lgm,
                             "actual_lgm": actual, "trial_std": rng.uniform(0, 0.02, n),
                             "exact_match": [i % 3 == 0 for i in range(n)], "matching_prefix": 2,
                             "matching_moves": 3, "inferred": seqs, "actual": seqs})
    scored = pd.DataFrame({"set": "pro", "n": 6, "id": inferred["id"], "lgm": lgm, "actual_lgm": actual,
                           "exact_match": inferred["exact_match"], "lgm_ratio": lgm / actual,
                           "loss_actual": rng.uniform(0.5, 2, n), "loss_inferred": rng.uniform(0.5, 2, n),
                           "katago_model": "g170", "visits": 8})
    return inferred, scored


def test_summary_and_comparison():
    inferred, scored = fake_tables()
    row = summarize(inferred, scored)
    assert row["arrangements"] == 12 and row["exact_match_rate"] == pytest.approx(4 / 12)
    assert row["loss_slope"] == pytest.approx(slope_through_origin(scored["loss_actual"], scored["loss_inferred"]))
    paper = yaml.safe_load((REPO / "config/paper_results.yaml").read_text())
    comp = comparison_table(pd.DataFrame([{"set": "pro", "n": 20, **row}]), paper)
    assert comp.loc[0, "LGM slope (paper)"] == 1.023 and comp.loc[0, "paper set"] == "Pro20m"
    both = better_both_ways(scored)
    assert ((both["lgm"] > both["actual_lgm"]) & (both["loss_inferred"] < both["loss_actual"])).all()


def test_report_writes_every_figure_and_table(tmp_path):
    inferred, scored = fake_tables()
    inferred.to_csv(tmp_path / "i.csv", index=False)
    scored.to_csv(tmp_path / "s.csv", index=False)
    make_report([("pro", 6, tmp_path / "i.csv", tmp_path / "s.csv")], REPO / "config/paper_results.yaml",
                tmp_path / "out", tmp_path / "fig", "test-net", {"pro": "Fox pro"}, "note")
    for name in ("likelihood_all", "loss_all", "likelihood_pro_6m", "loss_pro_6m", "examples/example_1"):
        for ext in (".png", ".pdf"):
            f = tmp_path / "fig" / f"{name}{ext}"
            assert f.exists() and f.stat().st_size > 5000, f
    summary = pd.read_csv(tmp_path / "out/summary.csv")
    assert summary.loc[0, "network"] == "test-net" and summary.loc[0, "dataset"] == "Fox pro"
    assert "LGM slope (paper)" in (tmp_path / "out/paper_comparison.md").read_text()


def test_report_names_each_sets_network_and_appends_cross_level(tmp_path, monkeypatch):
    titles = []
    real = plots.likelihood_scatter
    monkeypatch.setattr(plots, "likelihood_scatter",
                        lambda panels, *a, **k: titles.append(list(panels)) or real(panels, *a, **k))
    entries = []
    for s in ("pro", "kgs"):
        inferred, scored = fake_tables(seed=len(s))
        inferred.to_csv(tmp_path / f"{s}-i.csv", index=False)
        scored.to_csv(tmp_path / f"{s}-s.csv", index=False)
        entries.append((s, 6, tmp_path / f"{s}-i.csv", tmp_path / f"{s}-s.csv"))
    (tmp_path / "cross.md").write_text("## Networks across levels\n\n| a |\n|---|\n| 1 |\n")
    make_report(entries, REPO / "config/paper_results.yaml", tmp_path / "out", tmp_path / "fig",
                {"pro": "trained-pro", "kgs": "trained-kgs"}, {}, "note", cross_level=tmp_path / "cross.md")
    summary = pd.read_csv(tmp_path / "out/summary.csv")
    assert dict(zip(summary["set"], summary["network"])) == {"pro": "trained-pro", "kgs": "trained-kgs"}
    text = (tmp_path / "out/summary.md").read_text()
    assert "networks: pro trained-pro, kgs trained-kgs" in text and "## Networks across levels" in text
    comp = pd.read_csv(tmp_path / "out/paper_comparison.csv")
    assert list(comp["network"]) == ["trained-pro", "trained-kgs"]
    # Every likelihood panel is titled with its set, length and network.
    assert titles[-1] == ["pro6m, trained-pro", "kgs6m, trained-kgs"]
