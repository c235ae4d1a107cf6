"""The workflow on a real one-node SLURM cluster (started here by scripts/slurm-cluster.sh), with the
shipped profile, gives the same results as a local run of the same configuration."""

import json
import subprocess

import pandas as pd
import yaml

from conftest import REPO, SHARED, filler_moves, make_sgf
from test_workflow import run_snakemake

FIXTURE = SHARED / "data/fixtures/leelaz-0k-1x8.txt.gz"


def tiny_config(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    base = filler_moves(60)
    for i in range(4):
        moves = base[:8] + base[8 + i:] + base[8:8 + i]
        (games / f"g{i}.sgf").write_text(make_sgf(moves[:60]))
    cfg = {
        "sets": ["mine"], "datasets": {"mine": {"path": str(games)}},
        "selection": {"games": 3, "lengths": [8]}, "training": {"sets": []},
        "policy": {"network": str(FIXTURE)},
        "inference": {"iterations": {8: 40}, "trials": 2, "chunk": 2},
        "katago": {"binary": str(REPO / "tools/katago/bin/katago"),
                   "model": str(REPO / "tools/katago/models/g170-b6c96-s175395328-d26788732.bin.gz"),
                   "visits": 2, "threads": 1},
        "sweeps": [],
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_slurm_run_equals_local_run(tmp_path):
    started = subprocess.run(["bash", str(REPO / "scripts/slurm-cluster.sh"), "start"], capture_output=True, text=True)
    assert started.returncode == 0, started.stdout + started.stderr
    cfg = tiny_config(tmp_path)
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    run_snakemake(local, "--cores", "2", "--configfile", str(cfg))
    run_snakemake(cluster, "--workflow-profile", str(REPO / "config/profiles/slurm"), "--configfile", str(cfg))
    # The jobs really went through SLURM: the scheduler gave each one a job id.
    log = "".join(p.read_text() for p in (cluster / ".snakemake/log").glob("*.log"))
    for rule in ("filter_records", "infer", "score", "figures"):
        assert f"slurm_logs/rule_{rule}" in log, f"rule {rule} was not submitted to SLURM"
    assert log.count("has been submitted with SLURM jobid") == 7  # every job: extract .. figures
    run = next((local / "results/inferred").glob("*/*/mine/8m.jsonl")).relative_to(local)
    a = [json.loads(x) for x in open(local / run)]
    b = [json.loads(x) for x in open(cluster / run)]
    assert [r["inferred"] for r in a] == [r["inferred"] for r in b] and len(a) == 3
    assert [r["lgm"] for r in a] == [r["lgm"] for r in b]
    scored = next((local / "results/scored").rglob("8m.csv")).relative_to(local)
    pa, pb = pd.read_csv(local / scored), pd.read_csv(cluster / scored)
    assert list(pa["id"]) == list(pb["id"])
    pd.testing.assert_series_equal(pa["loss_actual"], pb["loss_actual"], rtol=1e-3)
    pd.testing.assert_series_equal(pa["loss_inferred"], pb["loss_inferred"], rtol=1e-3)
    assert (cluster / "results/summary.md").exists() and (cluster / "results/figures/likelihood_all.png").exists()
