"""Fixtures shared by the tests; plain helpers are in helpers.py."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from helpers import KATAGO, KATAGO_SMALL_MODEL, KATAGO_TUNER, MIRROR, time_limit

# The property tests draw the same examples on every run (a failure found once is found again, and a
# run never fails on a draw the last one did not make); the edge values each test names are always tried.
settings.register_profile("moveorder", derandomize=True)
settings.load_profile("moveorder")

#: A `cluster` test still running after this long fails where it stands (its traceback says where), so
#: that a wait no limit of its own bounds ends the test, not CI: above the acceptance test's two runs at
#: their limits (tests/test_slurm.py) and their stall reports.
CLUSTER_TEST_LIMIT_S = 45 * 60


@pytest.fixture(autouse=True)
def cluster_test_limit(request):
    """Every `cluster` test is stopped after :data:`CLUSTER_TEST_LIMIT_S` seconds."""
    if request.node.get_closest_marker("cluster") is None:
        yield
    else:
        with time_limit(CLUSTER_TEST_LIMIT_S, request.node.nodeid):
            yield


@pytest.fixture
def sgf_dir(tmp_path):
    """A folder to write records into."""
    d = tmp_path / "sgf"
    d.mkdir()
    return d


@pytest.fixture(scope="session")
def pro2_pool(tmp_path_factory):
    """Qualified records of the Fox Pro2 archive from the offline mirror (real games)."""
    from moveorder.data.archives import extract_all
    from moveorder.data.qualify import write_scan

    # MOVEORDER_TEST_POOLS=DIR: made once into DIR and reused by later test runs (mutation testing runs
    # the tests once per mutant; the scan is most of a run's time there). Left unset, made afresh.
    cache = os.environ.get("MOVEORDER_TEST_POOLS")
    if cache and (Path(cache) / "pro2" / "pool.jsonl").exists():
        return Path(cache) / "pro2" / "pool.jsonl"
    tmp = tmp_path_factory.mktemp("pro2")
    extract_all([MIRROR / "github.com/featurecat/go-dataset/raw/master/Pro/Pro2.7z"], tmp / "x")
    counts = write_scan(tmp / "x", tmp / "pool.jsonl", tmp / "r.csv", tmp / "rej.csv", usable_path=tmp / "usable.jsonl")
    assert counts["qualified"] > 100
    if cache:  # copied whole, then renamed: a run sees the whole folder or none
        Path(cache).mkdir(parents=True, exist_ok=True)
        part = Path(tempfile.mkdtemp(dir=cache))
        shutil.copytree(tmp, part / "pro2")
        try:
            (part / "pro2").rename(Path(cache) / "pro2")
        except OSError:  # made meanwhile by another run
            pass
        shutil.rmtree(part, ignore_errors=True)
        return Path(cache) / "pro2" / "pool.jsonl"
    return tmp / "pool.jsonl"


@pytest.fixture(scope="session")
def pro2_usable(pro2_pool):
    """Every record of the Fox Pro2 archive usable for training (captures included), beside ``pro2_pool``."""
    return pro2_pool.parent / "usable.jsonl"


@pytest.fixture(scope="session")
def trained(pro2_pool, tmp_path_factory):
    """A small network trained here (2 blocks x 16 filters, 300 steps) on real games.

    Trained on one torch thread, whatever the machine's cores or an earlier test left set: the network,
    and every exact-valued check tuned on it (the exact solver's counts, the annealer's evaluations),
    is the same on any machine with this torch. The caller's thread count is restored after."""
    import torch

    from moveorder.nets.train import train
    from moveorder.settings import TrainConfig

    out = tmp_path_factory.mktemp("net")
    cfg = TrainConfig(
        blocks=2,
        filters=16,
        steps=300,
        batch_size=64,
        lr=3e-3,
        checkpoint_every=100,
        seed=1,
        heldout_positions=3000,
        threads=1,
    )
    threads = torch.get_num_threads()
    try:
        metrics = train(pro2_pool, out, cfg, device="cpu", progress=False)
    finally:
        torch.set_num_threads(threads)
    return out, metrics, cfg


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """The real KataGo analysis engine (installed by scripts/setup.sh) with the small b6c96 network."""
    from moveorder.katago.engine import KataGoEngine, analysis_config, default_env

    assert KATAGO.exists() and KATAGO_SMALL_MODEL.exists(), "run scripts/setup.sh: it installs KataGo into tools/katago"
    tmp = tmp_path_factory.mktemp("katago")
    cfg = analysis_config(tmp / "analysis.cfg", KATAGO_TUNER, threads=2)
    with KataGoEngine.for_model(
        KATAGO, KATAGO_SMALL_MODEL, cfg, stderr_log=tmp / "stderr.log", env=default_env()
    ) as eng:
        yield eng


@pytest.fixture(scope="module")
def model(trained):
    """The small trained network (see ``trained``) as a likelihood on the CPU."""
    from moveorder.nets.likelihood import PolicyLikelihood

    out, _, _ = trained
    return PolicyLikelihood.from_file(out / "model.pt", device="cpu")


@pytest.fixture(scope="module")
def capture_games(pro2_usable):
    """Real Fox pro games without handicap whose first 60 moves are legal, with no pass, and capture
    (Leela Zero indices)."""
    from moveorder.data.records import load_records
    from moveorder.go import board as goboard
    from moveorder.go import coords

    out = []
    for r in load_records(pro2_usable):
        if r.handicap or r.setup_black or r.setup_white:
            continue
        moves = coords.from_sgf_string(r.moves)[:60]
        if len(moves) < 60 or None in moves:
            continue
        if sum(goboard.replay(moves)[1]) > 0:
            out.append([coords.to_lz(m) for m in moves])
    assert len(out) > 20
    return out


@pytest.fixture(scope="module")
def real_games(pro2_pool):
    """The qualified records of ``pro2_pool``."""
    from moveorder.data.records import load_records

    return load_records(pro2_pool)
