"""The summary and paper comparison, and every figure and table of a report."""

import pandas as pd
import pytest
import yaml

from helpers import REPO, fake_tables
from moveorder import cli, plots
from moveorder.metrics import better_both_ways, slope_through_origin, summarize
from moveorder.report import comparison_table, make_report


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
    # Through the command line, as the workflow's rule runs it.
    args = ["report", "--entry", "pro", "6", str(tmp_path / "i.csv"), str(tmp_path / "s.csv")]
    args += ["--paper", str(REPO / "config/paper_results.yaml"), "--out-dir", str(tmp_path / "out")]
    args += ["--figures", str(tmp_path / "fig"), "--network", "test-net", "--dataset", "pro=Fox pro"]
    assert cli.main([*args, "--note", "note", "--examples", "1"]) == 0
    for name in ("likelihood_all", "loss_all", "likelihood_pro_6m", "loss_pro_6m", "examples/example_1"):
        for ext in (".png", ".pdf"):
            f = tmp_path / "fig" / f"{name}{ext}"
            assert f.exists() and f.stat().st_size > 5000, f
    summary = pd.read_csv(tmp_path / "out/summary.csv")
    assert summary.loc[0, "network"] == "test-net" and summary.loc[0, "dataset"] == "Fox pro"
    # The paper's numbers, by hand from the two tables: slopes through the origin, shares, means.
    x, y = inferred["actual_lgm"], inferred["lgm"]
    la, li = scored["loss_actual"], scored["loss_inferred"]
    row = summary.loc[0]
    assert row["lgm_slope"] == pytest.approx((x * y).sum() / (x * x).sum(), rel=1e-12)
    assert row["share_on_or_above"] == pytest.approx((y >= x).sum() / 12, rel=1e-12)
    assert row["loss_slope"] == pytest.approx((la * li).sum() / (la * la).sum(), rel=1e-12)
    assert row["mean_loss_actual"] == pytest.approx(la.sum() / 12, rel=1e-12)
    assert row["share_loss_lower"] == pytest.approx((li < la).sum() / 12, rel=1e-12)
    assert row["exact_match_rate"] == pytest.approx(4 / 12) and row["arrangements"] == 12
    assert "LGM slope (paper)" in (tmp_path / "out/paper_comparison.md").read_text()


def test_report_names_each_sets_network_and_appends_cross_level(tmp_path, monkeypatch):
    titles = []
    real = plots.likelihood_scatter
    monkeypatch.setattr(
        plots, "likelihood_scatter", lambda panels, *a, **k: titles.append(list(panels)) or real(panels, *a, **k)
    )
    entries = []
    for s in ("pro", "kgs"):
        inferred, scored = fake_tables(seed=len(s))
        inferred.to_csv(tmp_path / f"{s}-i.csv", index=False)
        scored.to_csv(tmp_path / f"{s}-s.csv", index=False)
        entries.append((s, 6, tmp_path / f"{s}-i.csv", tmp_path / f"{s}-s.csv"))
    (tmp_path / "cross.md").write_text("## Networks across levels\n\n| a |\n|---|\n| 1 |\n")
    make_report(
        entries,
        REPO / "config/paper_results.yaml",
        tmp_path / "out",
        tmp_path / "fig",
        {"pro": "trained-pro", "kgs": "trained-kgs"},
        {},
        "note",
        cross_level=tmp_path / "cross.md",
    )
    summary = pd.read_csv(tmp_path / "out/summary.csv")
    assert dict(zip(summary["set"], summary["network"])) == {"pro": "trained-pro", "kgs": "trained-kgs"}
    text = (tmp_path / "out/summary.md").read_text()
    assert "networks: pro trained-pro, kgs trained-kgs" in text and "## Networks across levels" in text
    comp = pd.read_csv(tmp_path / "out/paper_comparison.csv")
    assert list(comp["network"]) == ["trained-pro", "trained-kgs"]
    # Every likelihood panel is titled with its set, length and network.
    assert titles[-1] == ["pro6m, trained-pro", "kgs6m, trained-kgs"]
