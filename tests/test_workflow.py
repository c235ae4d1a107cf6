"""The data stage through Snakemake itself: a local dataset, the real mirror, and bad config."""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import MIRROR, REPO, filler_moves, make_sgf

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def run_snakemake(workdir, *args, check=True):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(SNAKEMAKE + ["-s", str(REPO / "Snakefile"), "--directory", str(workdir), *args],
                          capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


def read_report(path):
    return {row["reason"]: int(row["count"]) for row in csv.DictReader(open(path))}


def test_lint_is_clean(tmp_path):
    proc = run_snakemake(tmp_path, "--lint")
    assert "Congratulations" in proc.stdout + proc.stderr


def test_bad_config_is_rejected_with_reason(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("selection:\n  games: 0\n")
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0 and "games" in proc.stdout + proc.stderr


def test_local_dataset_end_to_end(tmp_path):
    games = tmp_path / "mygames"
    games.mkdir()
    base = filler_moves(60)
    for i in range(12):
        moves = base[:50] + base[50:][i % 10:] + base[50:][:i % 10]
        (games / f"g{i:02d}.sgf").write_text(make_sgf(moves[:50] + [f"{'abcdefghijklm'[i]}s"] + moves[50:]))
    (games / "handicap.sgf").write_text(make_sgf(base, root="HA[2]"))
    (games / "broken.sgf").write_text("(;GM[1]SZ[19];B[dd")
    cfg = {"sets": ["mine"], "datasets": {"mine": {"path": str(games)}},
           "selection": {"games": 4, "lengths": [10, 20]}}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(tmp_path, "data", "--cores", "2", "--configfile", str(tmp_path / "cfg.yaml"))
    report = read_report(tmp_path / "results/data/mine/filter_report.csv")
    assert report["files"] == 14 and report["qualified"] == 12
    assert report["handicap"] == 1 and report["unreadable"] == 1
    for n in (10, 20):
        rows = [json.loads(l) for l in open(tmp_path / f"data/arrangements/mine/{n}m.jsonl")]
        assert len(rows) == 4 and all(len(r["actual"]) == n for r in rows)
    # All 12 share their first 20 moves with the selected games: none may be in the pool.
    assert (tmp_path / "data/pool/mine.jsonl").read_text() == ""


def test_mirror_pro_and_kgs_full_selection(tmp_path):
    """The issue's acceptance run: 100 arrangements per set and length from the offline mirror."""
    cfg = {"sets": ["pro", "kgs"], "mirror": str(MIRROR), "selection": {"games": 100, "lengths": [20, 40]}}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(tmp_path, "data", "--cores", "2", "--configfile", str(tmp_path / "cfg.yaml"))
    pro = read_report(tmp_path / "results/data/pro/filter_report.csv")
    kgs = read_report(tmp_path / "results/data/kgs/filter_report.csv")
    # Pro.7z + Pro2.7z hold 9,669 + 680 files; Pro.7z alone has 2,115 qualifying games (shared/data/README),
    # Pro2.7z 200: 19 of its files start ';GM[1]' without the '(' and are now read whole (issue 13; before,
    # 10 were unreadable and 9 were read from their first variation).
    assert pro["files"] == 10349 and pro["qualified"] == 2315 and pro["handicap"] == 6391
    assert pro["unreadable"] == 4 and pro["several_games"] == 0
    assert kgs["files"] == 12778 and kgs["qualified"] == 4694  # as the mirror's README measured
    for s in ("pro", "kgs"):
        for n in (20, 40):
            rows = [json.loads(l) for l in open(tmp_path / f"data/arrangements/{s}/{n}m.jsonl")]
            assert len(rows) == 100 and len({r["id"] for r in rows}) == 100
            assert all(len(r["black"]) == n // 2 and len(r["white"]) == n // 2 for r in rows)
        pool = {json.loads(l)["id"] for l in open(tmp_path / f"data/pool/{s}.jsonl")}
        assert not pool & {r["id"] for r in map(json.loads, open(tmp_path / f"data/arrangements/{s}/20m.jsonl"))}
    # Nothing downloaded is left half-written, and the extracted copies are temporary.
    assert not list((tmp_path / "data/raw").rglob("*.part"))
    assert not (tmp_path / "data/extracted").exists() or not any((tmp_path / "data/extracted").iterdir())


def test_paper_network_comes_through_the_download_rule(tmp_path):
    proc = run_snakemake(tmp_path, "-n", "-p", "data/networks/best_v1/best_v1.txt.zip")
    out = proc.stdout + proc.stderr
    assert "rule download_network" in out and "https://sjeng.org/zero/best_v1.txt.zip" in out
