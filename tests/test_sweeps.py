"""moveorder.report.sweeps: sweep files read and checked, their runs, and the summary table and figure (no Snakemake)."""

import json
import math

import pandas as pd
import pytest
import yaml

from helpers import REPO, fake_tables
from moveorder import cli
from moveorder.report import sweeps


def test_the_shipped_sweeps_name_known_axes_and_expand_to_their_runs():
    neighbours = sweeps.load_sweep(REPO / "config/sweeps/neighbours.yaml")
    runs = sweeps.combinations(neighbours)
    assert [label for _, label in runs] == [f"neighbour={v}" for v in neighbours["axes"]["neighbour"]]
    methods = sweeps.load_sweep(REPO / "config/sweeps/methods.yaml")
    assert len(sweeps.combinations(methods)) >= 4
    for path in sorted((REPO / "config/sweeps").glob("*.yaml")):
        assert set(sweeps.load_sweep(path).get("axes", {})) <= set(sweeps.AXES), path


def test_product_of_axes_over_base_and_explicit_runs(tmp_path):
    spec = {"name": "t", "base": {"trials": 2, "n": 40}, "axes": {"init": ["greedy", "random"], "trials": [1, 3]}}
    runs = sweeps.combinations(spec)
    assert [label for _, label in runs] == [
        "init=greedy trials=1",
        "init=greedy trials=3",
        "init=random trials=1",
        "init=random trials=3",
    ]
    assert runs[1][0] == {"trials": 3, "n": 40, "init": "greedy"}  # the axis overrides the base
    listed = sweeps.combinations({"name": "t", "runs": [{"t_end": 0.05}, {}]})
    assert listed == [({"t_end": 0.05}, "t_end=0.05"), ({}, "base")]


def test_an_unknown_axis_is_refused_with_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "bad", "axes": {"temperature": [1, 2]}}))
    with pytest.raises(ValueError, match=r"bad.yaml: unknown sweep axes \['temperature'\]"):
        sweeps.load_sweep(path)


def test_summary_has_a_row_per_run_and_draws_the_paper_beside_it(tmp_path):
    paths = []
    for seed in (1, 2):
        inferred, _ = fake_tables(n=8, seed=seed)
        paths.append(tmp_path / f"run{seed}.csv")
        inferred.to_csv(paths[-1], index=False)
    # Through the command line, as the workflow's rule runs it.
    args = ["sweep-summary", "--name", "init", "--run", "init=greedy", str(paths[0]), "--run", "init=random"]
    args += [str(paths[1]), "--metric", "mean_trial_std", "--paper", str(REPO / "config/paper_results.yaml")]
    args += ["--paper-key", "init_trial_std", "--table", str(tmp_path / "summary.csv")]
    assert cli.main([*args, "--figure", str(tmp_path / "ablation.png")]) == 0
    table = pd.read_csv(tmp_path / "summary.csv")
    assert list(table["run"]) == ["init=greedy", "init=random"]
    for k, path in enumerate(paths):  # each run's numbers, by hand from its table
        run = pd.read_csv(path)
        x, y = run["actual_lgm"], run["lgm"]
        assert table.loc[k, "mean_trial_std"] == pytest.approx(run["trial_std"].sum() / 8, rel=1e-12)
        assert table.loc[k, "lgm_slope"] == pytest.approx((x * y).sum() / (x * x).sum(), rel=1e-12)
        assert table.loc[k, "share_on_or_above"] == (y >= x).sum() / 8
        assert table.loc[k, "arrangements"] == 8
    assert (tmp_path / "ablation.png").stat().st_size > 1000 and (tmp_path / "ablation.pdf").exists()


def test_cost_summary_reads_each_runs_evaluations_and_draws_a_curve_per_method(tmp_path):
    runs = []
    for i, (label, evaluations) in enumerate(
        [("method=beam beam_width=8", 800), ("method=beam beam_width=32", 3200), ("method=anneal iterations=300", 9000)]
    ):
        inferred, _ = fake_tables(n=8, seed=i)
        path = tmp_path / f"run{i}" / "20m.csv"
        path.parent.mkdir()
        inferred.to_csv(path, index=False)
        if i < 2:  # the third run has no stats: its cost is unknown, not zero
            (path.parent / "20m-stats.json").write_text(json.dumps({"evaluations": evaluations, "seconds": 4.0}))
        runs.append((label, path))
    df = sweeps.summarize_sweep("methods", runs, tmp_path / "summary.csv", tmp_path / "cost.png", kind="cost")
    assert list(df["curve"]) == ["method=beam", "method=beam", "method=anneal"]
    assert list(df["evaluations"][:2]) == [100.0, 400.0] and math.isnan(df["evaluations"][2])
    assert list(df["n"]) == [6, 6, 6] and (tmp_path / "cost.png").stat().st_size > 1000
    assert sweeps.curve_of("n=40 dataset=kgs method=beam+anneal beam_width=32 t_start=0.3") == (
        "method=beam+anneal t_start=0.3"
    )


def test_an_unknown_figure_kind_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\naxes: {init: [greedy]}\nfigure: pie\n")
    with pytest.raises(ValueError, match=r"bad.yaml: unknown figure 'pie'"):
        sweeps.load_sweep(path)


def test_summary_hands_the_figure_its_values_labels_and_the_papers(tmp_path, monkeypatch):
    """What summarize_sweep gives the plots: a bar per run named by its one axis value (the whole label
    when it has more), the metric as the axis label, the paper's ablation values; the table's columns."""
    from moveorder.report import plots

    drawn = {}
    monkeypatch.setattr(plots, "ablation_bars", lambda *a: drawn.setdefault("bars", a))
    monkeypatch.setattr(plots, "method_curves", lambda *a: drawn.setdefault("curves", a))
    runs = []
    for i, label in enumerate(["init=greedy", "init=random neighbour=mix", "t_start=1=2"]):
        inferred, _ = fake_tables(n=8, seed=i)
        inferred.to_csv(tmp_path / f"run{i}.csv", index=False)
        runs.append((label, tmp_path / f"run{i}.csv"))
    paper = REPO / "config/paper_results.yaml"
    df = sweeps.summarize_sweep(
        "init", runs, tmp_path / "s.csv", tmp_path / "f.png", "lgm_slope", paper, "init_trial_std"
    )
    values, stem, ylabel, title, reference = drawn.pop("bars")
    assert list(values) == ["greedy", "init=random neighbour=mix", "t_start=1=2"]
    assert list(values.values()) == list(df["lgm_slope"]) and stem == tmp_path / "f"
    assert ylabel == "lgm slope" and title == "sweep init"
    assert reference == yaml.safe_load(paper.read_text())["ablations"]["init_trial_std"]
    table = pd.read_csv(tmp_path / "s.csv")
    assert list(table.columns[:5]) == ["run", "path", "set", "n", "curve"] and list(table["n"]) == [6, 6, 6]
    assert list(table["path"]) == [str(p) for _, p in runs] and list(table["set"]) == ["pro"] * 3
    sweeps.summarize_sweep("init", runs[:1], tmp_path / "s.csv", tmp_path / "f.png")  # no paper: no reference
    assert drawn.pop("bars")[4] is None and "curves" not in drawn
    sweeps.summarize_sweep("m", runs[:1], tmp_path / "s.csv", tmp_path / "f.png", kind="cost")
    assert list(drawn) == ["curves"] and drawn["curves"][1] == tmp_path / "f"


def test_run_cost_curve_of_and_combinations_by_hand(tmp_path):
    inferred, _ = fake_tables(n=8)
    inferred.to_csv(tmp_path / "20m.csv", index=False)
    nan = sweeps.run_cost(tmp_path / "20m.csv")
    assert list(nan) == ["evaluations", "seconds"] and all(math.isnan(v) for v in nan.values())
    (tmp_path / "20m-stats.json").write_text(json.dumps({"evaluations": 800, "seconds": 4.0}))
    assert sweeps.run_cost(tmp_path / "20m.csv") == {"evaluations": 100.0, "seconds": 0.5}
    assert sweeps.curve_of("n=40 dataset=kgs iterations=300") == "base"
    assert sweeps.curve_of("dataset=x=y method=beam") == "method=beam"
    assert sweeps.combinations({"base": {"trials": 2}}) == [({"trials": 2}, "base")]
