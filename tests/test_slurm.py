"""The workflow on a real one-node SLURM cluster (started here by scripts/slurm-cluster.sh), with the
shipped profile, gives the same results as a local run of the same configuration.

Two checks share one comparison, both marked ``cluster`` (CI runs them as their own step,
``pytest -q -m cluster``; README, "Test", has its time): a tiny configuration (2-3 minutes), and
``config/quick.yaml`` with ``config/cluster.yaml`` over it (quick's every job, each smaller: 3 games a set,
networks of 100 steps, SA 100 x 2, KataGo at 2 visits).
"""

import json
import math
import re
import subprocess

import pandas as pd
import pytest
import yaml

from helpers import (
    FIXTURE,
    KATRAIN_WHEEL,
    MIRROR,
    REPO,
    filler_moves,
    make_sgf,
    run_bounded,
    run_snakemake,
    slurm_jobs,
    snakemake_log,
)
from moveorder.report.sweeps import TIMING_COLUMNS

PROFILE = REPO / "config/profiles/slurm"
# Each run's limit: about twice its time on a slow hour of a 2-core CPU (the tiny one about 1-3 min a
# run, quick's 10-20 min), so that a run that stalls fails with its queue and logs instead of holding CI
# to its cut.
TINY_LIMIT_S = 6 * 60
QUICK_LIMIT_S = 30 * 60  # each of its two runs: one passed 20 min on a slow hour of 2 cores
START_LIMIT_S = 3 * 60  # the cluster's start: 30 s for its node at most, and Debian's packages where missing
LOSS_RTOL = 1e-6  # each position analysed alone (katago.shared_cache: false, max_batch: 1): only float printing


def tiny_config(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    base = filler_moves(60)
    for i in range(4):
        moves = base[:8] + base[8 + i :] + base[8 : 8 + i]
        (games / f"g{i}.sgf").write_text(make_sgf(moves[:60]))
    cfg = {
        "sets": ["mine"],
        "datasets": {"mine": {"path": str(games)}},
        "selection": {"games": 3, "lengths": [8]},
        "training": {"sets": []},
        "policy": {"network": str(FIXTURE)},
        "inference": {"iterations": {8: 40}, "trials": 2, "chunk": 2},
        "katago": {
            "binary": str(REPO / "tools/katago/bin/katago"),
            "model": str(REPO / "tools/katago/models/g170-b6c96-s175395328-d26788732.bin.gz"),
            "visits": 2,
            "threads": 1,
        },
        "sweeps": [],
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def slurm_cluster():
    """The one-node cluster, started for these tests (and stopped after them if it was not running)."""
    script = str(REPO / "scripts/slurm-cluster.sh")
    was_running = subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True).returncode == 0
    started = run_bounded(
        ["bash", script, "start"], START_LIMIT_S, f"the cluster had not started after {START_LIMIT_S} s"
    )
    assert started.returncode == 0, started.stdout + started.stderr
    yield
    if not was_running:
        subprocess.run(["bash", script, "stop"], capture_output=True)


def run_local_and_on_slurm(tmp_path, *config_args, timeout):
    """Run the whole workflow twice from empty folders: locally on 2 cores, then through SLURM; each run
    is stopped, and fails with what it was doing, after ``timeout`` seconds."""
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    run_snakemake(local, "--cores", "2", *config_args, timeout=timeout)
    run_snakemake(cluster, "--workflow-profile", str(PROFILE), *config_args, timeout=timeout)
    return local, cluster


def local_jobs(workdir):
    """Rule name of every job a local run executed (the target rule `all` runs no command)."""
    rules = re.findall(r"^(?:local)?rule (\w+):", snakemake_log(workdir), flags=re.M)
    return sorted(r for r in rules if r != "all")


def assert_same_results(local, cluster):
    """Every job went through SLURM, and every result equals the local run's."""
    submitted = slurm_jobs(cluster)
    assert submitted, "no job was submitted to SLURM"
    assert len({job for job, _ in submitted}) == len(submitted)  # one SLURM job id each
    assert sorted(rule for _, rule in submitted) == local_jobs(local)

    def files(pattern):
        a = sorted(p.relative_to(local) for p in local.glob(pattern))
        b = sorted(p.relative_to(cluster) for p in cluster.glob(pattern))
        assert a == b and a, f"{pattern}: {a} vs {b}"
        return a

    for rel in files("data/arrangements/*/*.jsonl"):  # the answer keys
        assert (local / rel).read_bytes() == (cluster / rel).read_bytes(), rel
    for rel in [p.relative_to(local) for p in local.glob("results/networks/*/policy.txt.gz")]:  # byte for byte
        assert (local / rel).read_bytes() == (cluster / rel).read_bytes(), rel
    for rel in [p.relative_to(local) for p in local.glob("results/networks/cross_level*.csv")]:
        pd.testing.assert_frame_equal(pd.read_csv(local / rel), pd.read_csv(cluster / rel), obj=str(rel))
    for rel in files("results/inferred/**/*m.jsonl"):
        a = [json.loads(x) for x in open(local / rel)]
        b = [json.loads(x) for x in open(cluster / rel)]
        assert [r["id"] for r in a] == [r["id"] for r in b], rel
        assert [r["inferred"] for r in a] == [r["inferred"] for r in b], rel
        assert [r["lgm"] for r in a] == [r["lgm"] for r in b], rel
    for rel in files("results/scored/**/*m.csv"):
        pa, pb = pd.read_csv(local / rel), pd.read_csv(cluster / rel)
        assert list(pa["id"]) == list(pb["id"]), rel
        for col in ("loss_actual", "loss_inferred"):
            pd.testing.assert_series_equal(pa[col], pb[col], rtol=LOSS_RTOL, obj=f"{rel} {col}")
    sweeps = [p.relative_to(local) for p in local.glob("results/sweeps/*/summary.csv")]
    for rel in [*files("results/summary.csv"), *sweeps]:
        pa, pb = pd.read_csv(local / rel), pd.read_csv(cluster / rel)
        timed = [c for c in TIMING_COLUMNS if c in pa.columns]  # wall time: measured, never reproduced
        assert all((pa[c] > 0).all() and (pb[c] > 0).all() for c in timed), rel
        pa, pb = pa.drop(columns=timed), pb.drop(columns=timed)
        pd.testing.assert_frame_equal(pa, pb, rtol=LOSS_RTOL, obj=str(rel))
    files("results/figures/*.png")
    files("results/figures/examples/*.png")


@pytest.mark.cluster
def test_slurm_run_equals_local_run(tmp_path, slurm_cluster):
    cfg = tiny_config(tmp_path)
    local, cluster = run_local_and_on_slurm(tmp_path, "--configfile", str(cfg), timeout=TINY_LIMIT_S)
    assert_same_results(local, cluster)
    rules = {rule for _, rule in slurm_jobs(cluster)}
    assert {"filter_records", "infer", "score", "figures"} <= rules
    assert len(slurm_jobs(cluster)) == 8  # every job: extract .. figures, the actual analyses included
    assert (cluster / "results/summary.md").exists()


@pytest.mark.cluster
def test_quick_configuration_on_slurm_equals_local(tmp_path, slurm_cluster):
    """The acceptance run: config/quick.yaml with config/cluster.yaml over it, offline mirror and the katrain
    wheel set-up downloaded (as on compute nodes without internet), locally and through SLURM."""
    local, cluster = run_local_and_on_slurm(
        tmp_path,
        "--configfile",
        str(REPO / "config/quick.yaml"),
        str(REPO / "config/cluster.yaml"),
        "--config",
        f"mirror={MIRROR}",
        f"katago={{'wheel': '{KATRAIN_WHEEL}'}}",  # set-up's, not 106 MB from PyPI in every run
        timeout=QUICK_LIMIT_S,
    )
    assert_same_results(local, cluster)
    rules = {rule for _, rule in slurm_jobs(cluster)}
    # Every stage went through the scheduler, both networks, the cross-level table and both sweeps included.
    assert {
        "download",
        "extract",
        "filter_records",
        "select_games",
        "katago_model",
        "train_policy",
        "infer",
        "install_katago",
        "analyse_actual",
        "score",
        "cross_level",
        "figures",
        "sweep_summary",
    } <= rules
    assert sorted(rule for _, rule in slurm_jobs(cluster)).count("train_policy") == 2
    assert len(list(cluster.glob("results/sweeps/*/summary.csv"))) == 2
    # The SLURM run trained the same networks: same held-out accuracy, to the last digit.
    for name in ("trained-pro", "trained-kgs"):
        ma = json.loads((local / f"results/networks/{name}/metrics.json").read_text())
        mb = json.loads((cluster / f"results/networks/{name}/metrics.json").read_text())
        assert ma["top1_accuracy"] == mb["top1_accuracy"]
        assert ma["mean_log_likelihood"] == mb["mean_log_likelihood"]
        # 100 steps learn little: held-out mean log-likelihood -5.757 (pro) and -5.785 (kgs) in this
        # configuration's run of 2026-11-25, against -5.892 for a uniform choice among 362 moves.
        assert ma["mean_log_likelihood"] > math.log(1 / 362) + 0.05
        assert ma["config"]["steps"] == 100
