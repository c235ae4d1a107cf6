"""The cross-level tables: every trained network on every set's held-out games, and inference runs."""

import pandas as pd
import pytest

from helpers import fake_tables
from moveorder.cli import main
from moveorder.data.records import load_records
from moveorder.report.cross_level import heldout_table, inference_table, trained_on


def test_network_on_its_own_set_equals_its_training_metrics(trained, tmp_path):
    out, metrics, cfg = trained
    pool = metrics["pool"]
    half = tmp_path / "half.jsonl"
    half.write_text("".join(r.to_json() + "\n" for r in load_records(pool)[::2]))
    table = heldout_table(
        {"trained-pro2": out / "model.pt", "someone-else": out / "model.pt"},
        {"pro2": pool, "half": half},
        cfg.heldout_fraction,
        cfg.seed,
        cfg.heldout_positions,
    )
    assert len(table) == 4 and list(table["own_level"]) == [True, False, False, False]
    own = table.iloc[0]
    assert own["network"] == "trained-pro2" and own["set"] == "pro2"
    # The same held-out games and positions as training evaluated: the same numbers.
    assert own["heldout_games"] == metrics["heldout_games"] and own["positions"] == metrics["positions"]
    assert own["top1_accuracy"] == metrics["top1_accuracy"]
    assert own["mean_log_likelihood"] == pytest.approx(metrics["mean_log_likelihood"], abs=1e-9)
    # Half the pool holds out exactly its part of the pool's held-out games (the split is per game).
    assert 0 < table.iloc[1]["heldout_games"] < own["heldout_games"]


def test_inference_table_and_command(trained, tmp_path):
    out, metrics, cfg = trained
    inferred, _ = fake_tables()
    inferred.to_csv(tmp_path / "a.csv", index=False)
    (inferred.assign(lgm=inferred["actual_lgm"] * 0.9)).to_csv(tmp_path / "b.csv", index=False)
    inf = inference_table(
        [("pro2", 6, "trained-pro2", tmp_path / "a.csv"), ("pro2", 6, "trained-kgs", tmp_path / "b.csv")]
    )
    assert list(inf["own_level"]) == [True, False]
    assert inf.iloc[1]["lgm_slope"] == pytest.approx(0.9) and inf.iloc[1]["share_on_or_above"] == 0
    assert trained_on("trained-kgs") == "kgs" and trained_on("best_v1") == ""
    rc = main(
        [
            "cross-level",
            "--network",
            "trained-pro2",
            str(out / "model.pt"),
            "--heldout",
            "pro2",
            metrics["pool"],
            "--inferred",
            "pro2",
            "6",
            "trained-pro2",
            str(tmp_path / "a.csv"),
            "--heldout-fraction",
            str(cfg.heldout_fraction),
            "--seed",
            str(cfg.seed),
            "--positions",
            str(cfg.heldout_positions),
            "--table",
            str(tmp_path / "t.csv"),
            "--inference-table",
            str(tmp_path / "i.csv"),
            "--markdown",
            str(tmp_path / "t.md"),
        ]
    )
    assert rc == 0
    table = pd.read_csv(tmp_path / "t.csv")
    assert table.loc[0, "top1_accuracy"] == metrics["top1_accuracy"]
    text = (tmp_path / "t.md").read_text()
    # The grid of top-1 accuracy, the held-out table and the inference table, each under its heading.
    assert "pro2 (top-1)" in text and "LGM slope" in text and "lgm_slope" in text
    row = pd.read_csv(tmp_path / "i.csv").loc[0]
    assert row["network"] == "trained-pro2" and row["arrangements"] == len(inferred)
    # The slope through the origin of a.csv's points, as the paper draws it: sum(x y) / sum(x x).
    x, y = inferred["actual_lgm"], inferred["lgm"]
    assert row["lgm_slope"] == pytest.approx(float((x * y).sum() / (x * x).sum()), rel=1e-12)
    assert f"{row['lgm_slope']:.3f}" in text
