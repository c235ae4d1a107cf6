"""The data stage through Snakemake itself: a local dataset, the real mirror, and bad config."""

import csv
import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from helpers import (
    KATAGO,
    KILL_GRACE_S,
    MIRROR,
    REPO,
    StillRunning,
    filler_moves,
    make_sgf,
    run_bounded,
    run_snakemake,
    time_limit,
)


def read_report(path, key="reason"):
    return {row[key]: int(row["count"]) for row in csv.DictReader(open(path))}


def test_lint_is_clean(tmp_path):
    proc = run_snakemake(tmp_path, "--lint")
    assert "Congratulations" in proc.stdout + proc.stderr


def test_bad_config_is_rejected_with_reason(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("selection:\n  games: 0\n")
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "0 is less than the minimum of 1" in out and "['selection']['games']" in out
    cfg.write_text("katago:\n  max_batch: 8\n")
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0 and "config: katago: max_batch > 1 needs shared_cache" in proc.stdout + proc.stderr


def test_a_run_past_its_limit_is_stopped_and_says_what_it_was_doing(tmp_path):
    """The cluster tests' guard against a stalled run: past ``timeout`` the run is killed with its process
    group, and the failure carries the end of Snakemake's log. The run stalls however fast the machine:
    its configuration file is a named pipe that nothing writes, so reading it waits for ever."""
    workdir = tmp_path / "stalls"
    never_written = tmp_path / "config.yaml"
    os.mkfifo(never_written)
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"snakemake still running after 1 s, stopped: -n data") as failed:
        run_snakemake(workdir, "-n", "data", "--configfile", str(never_written), timeout=1)
    assert time.monotonic() - start < 30
    assert "--- snakemake log (end):" in str(failed.value)
    assert f"--directory {workdir}" in str(failed.value).split("--- processes:")[1]  # the run, as it stood
    left = subprocess.run(["pgrep", "-f", str(workdir)], capture_output=True, text=True)
    assert left.stdout == ""  # nothing of the run is left running


def test_a_stalled_run_whose_output_a_stray_process_holds_still_fails_in_time(tmp_path):
    """A process that left the run's group (setsid) keeps the run's output open after the group is killed:
    the failure still comes within the kill's grace, and lists what held the output."""
    marker = tmp_path / "stray"
    stray = f"setsid {sys.executable} -c 'import time; time.sleep(300)' {marker}"
    cmd = ["bash", "-c", f"{stray} & sleep 300"]
    start = time.monotonic()
    try:
        with pytest.raises(AssertionError, match=r"^stuck\n+--- still holding the output") as failed:
            run_bounded(cmd, 1, "stuck", grace=3)
        assert time.monotonic() - start < 1 + 3 + 3 + KILL_GRACE_S  # the kill's grace, the wait's, and ps
        assert f"time.sleep(300) {marker}" in str(failed.value)
    finally:
        subprocess.run(["pkill", "-f", str(marker)])


def test_a_test_past_its_own_limit_stops_where_it_stands_and_its_run_with_it(tmp_path):
    """The cluster tests' last guard (conftest's ``cluster_test_limit``): a wait that no limit of its own
    bounds is broken off by the test's time limit, and a command it was waiting on is killed with it."""
    marker = tmp_path / "waited-on"
    cmd = [sys.executable, "-c", "import time; time.sleep(60)", str(marker)]
    start = time.monotonic()
    with pytest.raises(StillRunning, match="the wait still running after 1 s"):
        with time_limit(1, "the wait"):
            run_bounded(cmd, None, "not stopped by its own limit: it has none")
    assert time.monotonic() - start < 10
    assert subprocess.run(["pgrep", "-f", str(marker)], capture_output=True).stdout == b""
    with time_limit(1, "a wait within its limit"):  # nothing happens within the limit, nor after it
        time.sleep(0.1)
    time.sleep(1.5)


def test_a_mirror_is_read_from_the_working_directory(tmp_path):
    """Each configuration in its own folder (``--directory``): a relative mirror that is not there is refused
    before any job runs, naming the folder it was looked for from; the absolute one plans the downloads."""
    workdir = tmp_path / "runs" / "long"
    proc = run_snakemake(workdir, "-n", "data", "--config", "mirror=../shared/data/mirror", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config: mirror '../shared/data/mirror' is not a folder" in out
    assert str(workdir) in out
    proc = run_snakemake(workdir, "-n", "data", "--config", f"mirror={MIRROR}")
    assert "download" in proc.stdout and not (workdir / "data").exists()


def test_local_dataset_end_to_end(tmp_path):
    games = tmp_path / "mygames"
    games.mkdir()
    base = filler_moves(60)
    for i in range(12):
        moves = base[:50] + base[50:][i % 10 :] + base[50:][: i % 10]
        (games / f"g{i:02d}.sgf").write_text(make_sgf(moves[:50] + [f"{'abcdefghijklm'[i]}s"] + moves[50:]))
    (games / "handicap.sgf").write_text(make_sgf(base, root="HA[2]"))
    (games / "broken.sgf").write_text("(;GM[1]SZ[19];B[dd")
    cfg = {"sets": ["mine"], "datasets": {"mine": {"path": str(games)}}, "selection": {"games": 4, "lengths": [10, 20]}}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(tmp_path, "data", "--cores", "2", "--configfile", str(tmp_path / "cfg.yaml"))
    report = read_report(tmp_path / "results/data/mine/filter_report.csv")
    assert report["files"] == 14 and report["qualified"] == 12
    assert report["handicap"] == 1 and report["unreadable"] == 1
    for n in (10, 20):
        rows = [json.loads(line) for line in open(tmp_path / f"data/arrangements/mine/{n}m.jsonl")]
        assert len(rows) == 4 and all(len(r["actual"]) == n for r in rows)
    # All 12 share their first 20 moves with the selected games: none may be in the pool.
    assert (tmp_path / "data/pool/mine.jsonl").read_text() == ""


@pytest.mark.cluster
def test_mirror_pro_and_kgs_full_selection(tmp_path):
    """The data stage's acceptance run: 100 arrangements per set and length from the whole offline mirror
    (23,127 records read; about 50 s on 2 cores, so it runs in the `cluster` step with the workflow's other
    acceptance runs, not in the default suite)."""
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
    # Usable for training: all but unreadable files, colours that do not alternate, illegal moves, no moves.
    # (Reading the 19 Pro2 files without '(' whole made 10 unreadable and 6 bad-order files usable.)
    assert pro["usable"] == 9937 and pro["unusable_bad_move_order"] == 406 and pro["unusable_unreadable"] == 4
    assert pro["unusable_illegal_move"] == 2
    assert kgs["usable"] == 12767 and kgs["unusable_too_short"] == 11
    for s, report in (("pro", pro), ("kgs", kgs)):
        assert report["usable"] + sum(v for k, v in report.items() if k.startswith("unusable_")) == report["files"]
        pool = read_report(tmp_path / f"results/data/{s}/pool_report.csv", key="what")
        assert pool["candidates"] == report["usable"] and pool["evaluation_games"] == 100
        assert pool["candidates"] == sum(
            pool[k] for k in ("evaluation_games", "duplicates", "repeats_evaluation_opening", "pool")
        )
        assert sum(1 for _ in open(tmp_path / f"data/pool/{s}.jsonl")) == pool["pool"]
    for s in ("pro", "kgs"):
        for n in (20, 40):
            rows = [json.loads(line) for line in open(tmp_path / f"data/arrangements/{s}/{n}m.jsonl")]
            assert len(rows) == 100 and len({r["id"] for r in rows}) == 100
            assert all(len(r["black"]) == n // 2 and len(r["white"]) == n // 2 for r in rows)
        pool = {json.loads(line)["id"] for line in open(tmp_path / f"data/pool/{s}.jsonl")}
        assert not pool & {r["id"] for r in map(json.loads, open(tmp_path / f"data/arrangements/{s}/20m.jsonl"))}
    # Nothing downloaded is left half-written, and the extracted copies are temporary.
    assert not list((tmp_path / "data/raw").rglob("*.part"))
    assert not (tmp_path / "data/extracted").exists() or not any((tmp_path / "data/extracted").iterdir())


def test_paper_network_comes_through_the_download_rule(tmp_path):
    proc = run_snakemake(tmp_path, "-n", "-p", "data/networks/best_v1/best_v1.txt.zip")
    out = proc.stdout + proc.stderr
    assert "rule download_network" in out and "https://sjeng.org/zero/best_v1.txt.zip" in out


def planned_with(workdir, **config):
    """Commands a dry run plans for set pro with our trained pro network, ``config`` merged over that."""
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / "c.yaml"
    base = {"sets": ["pro"], "mirror": str(MIRROR), "training": {"sets": ["pro"]}, "policy": {"network": "trained-pro"}}
    cfg.write_text(yaml.safe_dump(base | config))
    return planned_commands(workdir, "--configfile", str(cfg))


def planned_commands(workdir, *args):
    proc = run_snakemake(workdir, "-n", "-p", *args)
    lines = (proc.stdout + proc.stderr).splitlines()
    return [line[line.index("moveorder ") :].strip() for line in lines if "moveorder " in line]


def test_katago_is_installed_from_a_wheel_given_or_refused_before_any_job(tmp_path):
    """katago.wheel (compute nodes without internet): install-katago is handed that file, and pip downloads
    nothing; a wheel that is not there stops the plan, naming it; a binary of one's own needs no wheel."""
    wheel = tmp_path / "katrain-1.20.0-py3-none-any.whl"
    wheel.write_bytes(b"not checked by the plan: install-katago checks its sha256")
    (install,) = [c for c in planned_with(tmp_path / "a", katago={"wheel": str(wheel)}) if "install-katago" in c]
    assert f"--wheel '{wheel}'" in install
    (install,) = [c for c in planned_with(tmp_path / "b") if "install-katago" in c]
    assert "[ -n '' ] && echo --wheel" in install  # pip's, as before
    missing = tmp_path / "nowhere.whl"
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({"sets": ["pro"], "mirror": str(MIRROR), "katago": {"wheel": str(missing)}}))
    proc = run_snakemake(tmp_path / "c", "-n", "--configfile", str(cfg), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Missing input files for rule install_katago" in out and str(missing) in out
    own = planned_with(tmp_path / "d", katago={"binary": str(KATAGO), "wheel": str(missing), "model": "b6c96"})
    (install,) = [c for c in own if "install-katago" in c]
    assert f"--binary '{KATAGO}'" in install and "nowhere.whl" not in install


def test_own_level_infers_each_set_with_its_own_network(tmp_path):
    """quick.yaml: one network per set; each set's main runs use its own; 20 moves also with the other."""
    cmds = planned_commands(tmp_path, "--configfile", str(REPO / "config/quick.yaml"), "--config", f"mirror={MIRROR}")
    trains = sorted(c.split("--pool ")[1].split()[0] for c in cmds if c.startswith("moveorder train-policy"))
    assert trains == ["data/pool/kgs.jsonl", "data/pool/pro.jsonl"]
    main = set()  # (set, length, network) of every run with the main settings
    for c in cmds:
        if c.startswith("moveorder infer-set") and "--init greedy --neighbour mix" in c:
            arr = c.split("--arrangements ")[1].split()[0]  # data/arrangements/SET/Nm.jsonl
            net = c.split("--network ")[1].split()[0]  # results/networks/trained-X/model.pt
            main.add((arr.split("/")[2], arr.split("/")[3], net.split("/")[2]))
    for s in ("pro", "kgs"):
        for n in ("20m.jsonl", "40m.jsonl"):
            assert (s, n, f"trained-{s}") in main
    # The cross-level runs: 20 moves only, each set with the other level's network.
    assert ("pro", "20m.jsonl", "trained-kgs") in main and ("kgs", "20m.jsonl", "trained-pro") in main
    assert ("pro", "40m.jsonl", "trained-kgs") not in main and ("kgs", "40m.jsonl", "trained-pro") not in main
    cross = [c for c in cmds if c.startswith("moveorder cross-level")]
    assert len(cross) == 1 and cross[0].count("--network ") == 3 and cross[0].count("--inferred ") == 4
    assert "--network tygem tygem" in cross[0]  # the shipped network, a row beside the trained ones
    report = next(c for c in cmds if c.startswith("moveorder report"))
    assert "--set-network pro=trained-pro kgs=trained-kgs" in report and "--cross-level" in report


def test_own_level_needs_a_network_for_every_set(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        yaml.safe_dump({"sets": ["pro", "kgs"], "training": {"sets": ["pro"]}, "policy": {"network": "own-level"}})
    )
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0 and "no network is trained for ['kgs']" in proc.stdout + proc.stderr
    cfg.write_text(yaml.safe_dump({"sets": ["pro"], "training": {"sets": ["pro"], "cross_lengths": [30]}}))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0 and "cross_lengths has 30" in proc.stdout + proc.stderr


def test_one_network_for_every_set_still_works(tmp_path):
    """policy.network naming one trained network: every set's runs use it, as before issue 15."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "sets": ["pro", "kgs"],
                "mirror": str(MIRROR),
                "training": {"sets": ["pro"]},
                "policy": {"network": "trained-pro"},
            }
        )
    )
    cmds = planned_commands(tmp_path, "--configfile", str(cfg))
    nets = {c.split("--network ")[1].split()[0] for c in cmds if c.startswith("moveorder infer-set")}
    assert nets == {"results/networks/trained-pro/model.pt"}
    assert sum(c.startswith("moveorder train-policy") for c in cmds) == 1


def test_tygem_is_an_evaluation_set_and_a_training_source(tmp_path):
    """Tygem (issue 24): 15 months and 3 yearly indexes by URL with sha256, read in its own format, its
    pool training the network, scored under its own rules and komi."""
    cmds = planned_with(
        tmp_path, sets=["pro", "tygem"], training={"sets": ["tygem"]}, policy={"network": "trained-tygem"}
    )
    downloads = [c for c in cmds if c.startswith("moveorder download") and "data/raw/tygem/" in c]
    assert len(downloads) == 18
    assert all("https://github.com/yenw/computer-go-dataset/raw/master/TYGEM/" in c for c in downloads)
    assert all("--sha256 ''" not in c for c in downloads)
    filters = {c.split("--input ")[1].split()[0]: c for c in cmds if c.startswith("moveorder filter")}
    assert "--record-format tygem" in filters["data/extracted/tygem"]
    assert "--record-format sgf" in filters["data/extracted/pro"]
    trains = [c for c in cmds if c.startswith("moveorder train-policy")]
    assert len(trains) == 1 and "--pool data/pool/tygem.jsonl" in trains[0]
    scores = [c for c in cmds if c.startswith("moveorder score")]
    assert any("/tygem/" in c for c in scores)
    assert all(("--rules japanese --komi 6.5" in c) == ("/tygem/" in c) for c in scores)
    # Each set's actual sequences are analysed once, every length of it, under the same rules and komi,
    # and every score job of the set starts from those analyses.
    actual = {c.split("--out ")[1].split()[0]: c for c in cmds if c.startswith("moveorder analyse-actual")}
    assert len(actual) == 2
    for name, c in actual.items():
        tygem = name.endswith("/tygem.jsonl")
        assert all(f"--arrangements data/arrangements/{'tygem' if tygem else 'pro'}/{n}m.jsonl" in c for n in (20, 40))
        assert ("--rules japanese --komi 6.5" in c) == tygem
        seeded = [x for x in scores if f"--seed-cache {name} " in x]
        assert len(seeded) == 2 and all(("/tygem/" in x) == tygem for x in seeded)


def test_per_level_networks_can_start_from_the_shipped_one(tmp_path):
    """training.init: each level's network is fine-tuned from the shipped Tygem network."""
    cmds = planned_with(tmp_path, training={"sets": ["pro"], "blocks": 4, "filters": 32, "init": "tygem"})
    trains = [c for c in cmds if c.startswith("moveorder train-policy")]
    assert len(trains) == 1 and "--init tygem " in trains[0] and "--blocks 4 --filters 32" in trains[0]
    (tmp_path / "plain").mkdir()
    cmds = planned_with(tmp_path / "plain")
    plain = [c for c in cmds if c.startswith("moveorder train-policy")]
    assert plain and all("--init" not in c and " --no-symmetries " not in c for c in plain)


def test_the_gpu_tygem_config_trains_from_the_packed_pool(tmp_path):
    """config/tygem-gpu.yaml (the shipped tygem-6x128): pack_pool, then train-policy on its .npz."""
    cmds = planned_commands(
        tmp_path, "--configfile", str(REPO / "config/tygem-gpu.yaml"), "--config", f"mirror={MIRROR}"
    )
    packs = [c for c in cmds if c.startswith("moveorder pack-pool")]
    assert packs == [next(c for c in packs if "--pool data/pool/tygem.jsonl --out data/pool/tygem.npz" in c)]
    trains = [c for c in cmds if c.startswith("moveorder train-policy")]
    assert len(trains) == 1 and "--pool data/pool/tygem.npz" in trains[0]
    assert "--blocks 6 --filters 128 --steps 14000 --batch-size 1024 --lr 0.002 --warmup-steps 300" in trains[0]


def job_counts(output):
    """The dry run's summary table (``job  count`` rows up to ``total``) as {rule: count}."""
    lines = output.splitlines()
    first = next(i for i, line in enumerate(lines) if line.split()[:2] == ["job", "count"])
    counts = {}
    for line in lines[first + 2 :]:
        rule, count = line.split()
        if rule == "total":
            return counts
        counts[rule] = int(count)
    raise AssertionError("no total in the job table")


def test_the_gpu_config_is_the_papers_experiment_with_both_searches(tmp_path):
    """config/gpu.yaml: the Fox pro and KGS pools packed without their handicap games, the shipped tygem-6x128
    fine-tuned on their first 60 moves; each set and length ordered by the paper's SA (5,000 / 20,000 x 5) and
    by the ranked beam (W 512), both in TF32 and scored with b10c384 at 100 visits and reported, the SA in results/ and the
    beam in results/methods/beam/; the two ablations. even_only without packed is refused with the reason."""
    proc = run_snakemake(
        tmp_path, "-n", "-p", "--configfile", str(REPO / "config/gpu.yaml"), "--config", f"mirror={MIRROR}"
    )
    out = proc.stdout + proc.stderr
    # 4 SA + 4 beam main runs; the init sweep adds random, the neighbour sweep swp2, mov2 and rot3 (mix is main)
    assert job_counts(out) == {
        "download": 9,
        "extract": 2,
        "filter_records": 2,
        "select_games": 2,
        "install_katago": 1,
        "analyse_actual": 2,
        "pack_pool": 2,
        "train_policy": 2,
        "cross_level": 1,
        "infer": 12,
        "score": 8,
        "sweep_summary": 2,
        "figures": 1,
        "method_figures": 1,
        "all": 1,
    }
    cmds = [line[line.index("moveorder ") :].strip() for line in out.splitlines() if "moveorder " in line]
    packs = sorted(c for c in cmds if c.startswith("moveorder pack-pool"))
    assert len(packs) == 2 and all("--even-only" in c for c in packs)
    trains = [c for c in cmds if c.startswith("moveorder train-policy")]
    assert len(trains) == 2 and all("--init tygem-6x128 " in c and "--max-move 60" in c for c in trains)
    assert all(
        "--blocks 6 --filters 128 --steps 800 --batch-size 256 --lr 0.001 --warmup-steps 50" in c for c in trains
    )
    assert {c.split("--pool ")[1].split()[0] for c in trains} == {"data/pool/pro.npz", "data/pool/kgs.npz"}
    infers = [c for c in cmds if c.startswith("moveorder infer-set")]
    beams = [c for c in infers if "--method beam --beam-width 512" in c]
    assert len(beams) == 4 and all("/beam512f1-tf32/" in c and "--precision tf32" in c for c in beams)
    sa = [c for c in infers if "--method anneal" in c and "--init greedy --neighbour mix" in c]
    assert sorted(c.split("--iterations ")[1].split()[0] for c in sa) == ["20000", "20000", "5000", "5000"]
    assert all("--trials 5" in c for c in sa)
    assert all(f"trained-{s}/model.pt" in c for c in infers for s in ("pro", "kgs") if f"arrangements/{s}/" in c)
    scores = [c for c in cmds if c.startswith("moveorder score")]
    assert all("b10c384" in c and "--visits 100" in c for c in scores)
    assert "results/methods/beam/paper_comparison.md" in out
    # one length alone (scripts/gpu_run.sh's stages): both searches of both sets and the sweeps, at 20 moves
    stage = run_snakemake(
        tmp_path,
        "-n",
        "--configfile",
        str(REPO / "config/gpu.yaml"),
        "--config",
        f"mirror={MIRROR}",
        "--",
        "results/lengths/20m.done",
    )
    counts = job_counts(stage.stdout + stage.stderr)
    assert (counts["infer"], counts["score"], counts["sweep_summary"], counts["length"]) == (8, 4, 2, 1)
    assert "figures" not in counts and "method_figures" not in counts
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump({"training": {"even_only": True}}))
    out = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert out.returncode != 0 and "training.even_only" in out.stdout + out.stderr
    assert "needs training.packed: true" in out.stdout + out.stderr


def test_the_long_config_selects_games_capture_free_to_its_longest_length(tmp_path):
    """config/long.yaml (issue 25): games qualified capture-free to move 100, clipped to 60, 80, 100, every
    length scored by KataGo; its methods sweep at those lengths only when asked for; a length beyond the
    filter, or a sweep at a length not selected, is refused with the reason before anything runs."""
    cmds = planned_commands(tmp_path, "--configfile", str(REPO / "config/long.yaml"), "--config", f"mirror={MIRROR}")
    filters = [c for c in cmds if c.startswith("moveorder filter")]
    assert len(filters) == 2 and all("--capture-free 100 --min-moves 100" in c for c in filters)
    selects = [c for c in cmds if c.startswith("moveorder select")]
    assert len(selects) == 2 and all("--lengths 60 80 100" in c and "--captures forbidden" in c for c in selects)
    infers = [c for c in cmds if c.startswith("moveorder infer-set")]
    assert not [c for c in cmds if c.startswith("moveorder train-policy")]
    main = {c.split("--arrangements ")[1].split()[0] for c in infers if "--method beam --beam-width 128" in c}
    assert main == {f"data/arrangements/{s}/{n}m.jsonl" for s in ("pro", "kgs") for n in (60, 80, 100)}
    assert all("shipped/tygem.txt.gz " in c.split("--network ")[1] for c in infers)
    assert len(infers) == 6 and not [c for c in cmds if c.startswith("moveorder sweep-summary")]
    scores = {c.split("--results ")[1].split()[0] for c in cmds if c.startswith("moveorder score")}
    assert scores == {f"results/inferred/tygem/beam128f1/{s}/{n}m.jsonl" for s in ("pro", "kgs") for n in (60, 80, 100)}
    # The methods sweep, asked for on the command line.
    sweep = f"sweeps=[{REPO / 'config/sweeps/methods-long.yaml'}]"
    cmds = planned_commands(
        tmp_path, "--configfile", str(REPO / "config/long.yaml"), "--config", f"mirror={MIRROR}", sweep
    )
    pro = [c for c in cmds if c.startswith("moveorder infer-set") and "data/arrangements/pro/100m.jsonl" in c]
    methods = {" ".join(c.split("--method ")[1].split()[:5]) for c in pro}
    assert methods == {
        "beam --beam-width 128 --beam-future 0",
        "beam --beam-width 32 --beam-future 1",
        "beam --beam-width 128 --beam-future 1",
        "beam+anneal --beam-width 128 --beam-future 1",
    }
    assert sum("--iterations 100 --trials 5" in c and "--t-start 0.3 " in c for c in pro) == 1
    assert any(c.startswith("moveorder sweep-summary") and "methods-long" in c for c in cmds)
    # Refused: a capture-free length beyond the filter's reach, and a sweep length not selected.
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump({"sets": ["pro"], "selection": {"lengths": [20, 60]}}))
    out = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert (
        out.returncode != 0 and "selection.lengths has 60, beyond filter.capture_free (50)" in out.stdout + out.stderr
    )
    cfg.write_text(yaml.safe_dump({"sets": ["pro"], "sweeps": [str(REPO / "config/sweeps/methods-long.yaml")]}))
    out = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert (
        out.returncode != 0
        and "has a run at n=60, which is not one of selection.lengths [20, 40]" in out.stdout + out.stderr
    )


def test_method_is_in_config_run_names_and_sweeps(tmp_path):
    """inference.method, beam_width and beam_future reach infer-set, name the run's folder, and are sweep axes."""
    cmds = planned_with(
        tmp_path,
        inference={"method": "beam", "beam_width": 64, "beam_future": 0.5},
        sweeps=[str(REPO / "config/sweeps/methods.yaml")],
    )
    runs = {}
    for c in cmds:
        if c.startswith("moveorder infer-set"):
            folder = c.split("--out ")[1].split()[0].split("/")[3]  # results/inferred/NETWORK/RUN/...
            runs.setdefault(folder.split("-")[0], set()).add(" ".join(c.split("--method ")[1].split()[:5]))
    assert runs["beam64f0.5"] == {"beam --beam-width 64 --beam-future 0.5"}  # the main runs, from config
    assert runs["anneal"] and all(a.split()[0] == "anneal" and "--beam-width" not in a for a in runs["anneal"])
    # methods.yaml: the plain beam (future 0) and the beam ranked with the estimate of the stones to play
    assert runs["beam32f0"] == {"beam --beam-width 32 --beam-future 0"}
    assert runs["beam128f1"] == {"beam --beam-width 128 --beam-future 1"}
    assert runs["beam128f1+anneal"] == {"beam+anneal --beam-width 128 --beam-future 1"}
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump({"sets": ["pro"], "inference": {"method": "greedy"}}))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "'greedy' is not one of ['anneal', 'beam', 'beam+anneal']" in out
    assert "['inference']['method']" in out


def test_init_beam_is_annealing_from_the_beams_orders_under_one_name(tmp_path):
    """init: beam (the annealer's third start) and method beam+anneal plan the same run, named by the beam."""
    folders = []
    for inference in ({"init": "beam", "beam_width": 16}, {"method": "beam+anneal", "beam_width": 16}):
        cmds = [c for c in planned_with(tmp_path, inference=inference, sweeps=[]) if "infer-set" in c]
        assert cmds and all(
            "--init beam" in c and "--method beam+anneal --beam-width 16 --beam-future 1" in c for c in cmds
        )
        folders.append({c.split("--out ")[1].split()[0].split("/")[3] for c in cmds})
    assert folders[0] == folders[1] and all(f.startswith("beam16f1+anneal-mix-it") for f in folders[0])


def test_a_length_between_the_tables_gets_the_command_lines_iterations(tmp_path):
    """30 moves: the workflow plans the iterations `moveorder infer` would use (settings.iterations_for)."""
    from moveorder.settings import SearchConfig

    cmds = [c for c in planned_with(tmp_path, selection={"lengths": [30, 31]}, sweeps=[]) if "infer-set" in c]
    planned = {c.split("--arrangements ")[1].split()[0]: int(c.split("--iterations ")[1].split()[0]) for c in cmds}
    assert planned == {f"data/arrangements/pro/{n}m.jsonl": SearchConfig().for_length(n).iterations for n in (30, 31)}
    assert sorted(planned.values()) == [5000, 20000]


def test_beam_width_per_length(tmp_path):
    """inference.beam_width as a table of length -> width: each length's runs are searched, and named, with
    its own width (the schema's check of the table: tests/test_settings.py); a length a table leaves out is
    refused before any job runs."""
    cmds = planned_with(
        tmp_path,
        training={"sets": []},
        policy={"network": "tygem"},
        selection={"lengths": [40, 60, 80], "captures": "required"},
        inference={
            "method": "beam",
            "beam_width": {40: 128, 60: 128, 80: 32},
            "beam_passes": {40: 1, 60: 1, 80: 2},
            "beam_widen": {40: 1, 60: 1, 80: 4},
        },
        sweeps=[],
    )
    infers = {c.split("--arrangements ")[1].split()[0]: c for c in cmds if c.startswith("moveorder infer-set")}
    widths = {a: c.split("--beam-width ")[1].split()[0] for a, c in infers.items()}
    assert widths == {f"data/arrangements/pro/{n}m.jsonl": w for n, w in ((40, "128"), (60, "128"), (80, "32"))}
    passes = {a: c.split("--beam-passes ")[1].split()[0] for a, c in infers.items()}  # inference.beam_passes alike
    assert passes == {f"data/arrangements/pro/{n}m.jsonl": p for n, p in ((40, "1"), (60, "1"), (80, "2"))}
    widen = {a: c.split("--beam-widen ")[1].split()[0] for a, c in infers.items()}
    assert widen == {f"data/arrangements/pro/{n}m.jsonl": p for n, p in ((40, "1"), (60, "1"), (80, "4"))}
    assert all(f"/beam{widths[a]}f1-" in c for a, c in infers.items())


def test_a_runs_folder_changes_with_what_changes_its_orders_and_only_with_that(tmp_path):
    """Two configurations differing only in beam_widen write two folders; only in iterations under the beam, one."""

    def folders(**inference):
        cfg = tmp_path / "c.yaml"
        base = {
            "sets": ["pro"],
            "mirror": str(MIRROR),
            "selection": {"lengths": [40], "captures": "required"},
            "training": {"sets": [], "cross_lengths": []},
            "policy": {"network": "tygem"},
            "sweeps": [],
            "inference": {"method": "beam", "beam_width": 16, "beam_passes": 2, "patience": 0, **inference},
        }
        cfg.write_text(yaml.safe_dump(base))
        cmds = [c for c in planned_commands(tmp_path, "--configfile", str(cfg)) if c.startswith("moveorder infer-set")]
        return {c.split("--out ")[1].split()[0].split("/")[3] for c in cmds}, cmds

    widen2, cmds2 = folders(beam_widen=2)
    widen4, cmds4 = folders(beam_widen=4)
    assert widen2 == {"beam16f1-pat0-pass2-widen2"} and widen4 == {"beam16f1-pat0-pass2-widen4"}
    assert all("--beam-widen 2 " in c for c in cmds2) and all("--beam-widen 4 " in c for c in cmds4)
    assert all("--beam-widen-found 1 " in c for c in cmds2 + cmds4)
    found2, cmds = folders(beam_widen=4, beam_widen_found=2)  # the widening within a plan: a folder of its own
    assert found2 == {"beam16f1-pat0-pass2-widen4-found2"} and all("--beam-widen-found 2 " in c for c in cmds)
    assert all("--capture-merge input" in c for c in cmds + cmds2)
    board, cmds = folders(beam_widen=4, capture_merge="board")  # merged by board: a folder of its own
    assert board == {"beam16f1-pat0-pass2-widen4-mergeboard"} and all("--capture-merge board" in c for c in cmds)
    assert all("--capture-proposer none" in c for c in cmds + cmds2)
    prop, cmds = folders(beam_widen=4, capture_proposer="tygem")  # a proposer: a folder of its own
    assert prop == {"beam16f1-pat0-pass2-widen4-proptygem"} and all("--capture-proposer tygem" in c for c in cmds)
    # the beam reads no annealing setting: its folder and its command's search are the same
    assert folders(beam_widen=2, iterations={40: 1000}, trials=2, neighbour="swp2")[0] == widen2


def test_a_per_length_table_without_a_configured_length_is_refused(tmp_path):
    """inference.beam_widen_found {40: 2, 80: 1} with lengths 40, 60 and 80: refused before any job runs, naming
    the key and the length 60, not searched with the nearest length's value. (The workflow checks every
    per-length key with one call, ``settings.check_per_length``; test_settings.py refuses each key's gap.)"""
    key = "beam_widen_found"
    cfg = tmp_path / "c.yaml"
    base = {"sets": ["pro"], "mirror": str(MIRROR), "training": {"sets": []}, "policy": {"network": "tygem"}}
    extra = {"selection": {"lengths": [40, 60, 80], "captures": "required"}, "sweeps": []}
    cfg.write_text(yaml.safe_dump(base | extra | {"inference": {"method": "beam", key: {40: 2, 80: 1}}}))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert (
        f"config: inference.{key} gives no value for 60 moves (it gives 40, 80): add 60 to the table, or give "
        "one value for every length (selection.lengths: 40, 60, 80)" in out
    ), out
    assert "Traceback" not in out and not (tmp_path / "data").exists() and not (tmp_path / "results").exists()


def test_the_orientations_searched_reach_infer_set_and_name_the_run(tmp_path):
    """inference.orientations: given (the paper's) leaves the command and folder as they were; seats
    reaches infer-set's --orientations and the folder's name; the annealing never sees it."""
    cmds = planned_with(tmp_path, inference={"method": "beam", "beam_width": 16, "orientations": "seats"})
    infer = [c for c in cmds if c.startswith("moveorder infer-set")]
    assert infer and all("--orientations seats" in c and "/beam16f1-turnseats/" in c for c in infer)
    cmds = planned_with(tmp_path, inference={"method": "anneal", "orientations": "seats"})
    infer = [c for c in cmds if c.startswith("moveorder infer-set")]
    assert infer and not any("--orientations" in c or "turn" in c for c in infer)


def test_calibration_games_reach_every_run_of_the_ranked_beam_and_name_its_folder(tmp_path):
    """selection.calibration: select draws the games, each beam run infers them (stating no chance), fits its
    calibration on each set and length it runs, and its evaluation answers state chances with it; its folder
    says so. The annealing states none, so it gets no such games' inference; captures are refused."""
    cfg = {"inference": {"method": "beam", "beam_width": 16, "orientations": "seats"}}
    cmds = planned_with(tmp_path, selection={"games": 5, "lengths": [20, 40], "calibration": 7}, **cfg)
    run = "results/inferred/trained-pro/beam16f1-turnseats-cal7"
    (select,) = [c for c in cmds if c.startswith("moveorder select")]
    assert "--calibration-count 7 --calibration-dir data/arrangements/pro/calibration" in select
    infer = [c for c in cmds if c.startswith("moveorder infer-set")]
    on_games = {c.split("--arrangements ")[1].split()[0]: c for c in infer}
    assert set(on_games) == {f"data/arrangements/pro/{p}{n}m.jsonl" for p in ("", "calibration/") for n in (20, 40)}
    for n in (20, 40):
        assert "--calibration none" in on_games[f"data/arrangements/pro/calibration/{n}m.jsonl"]
        assert f"--out {run}/calibration/pro/{n}m.jsonl" in on_games[f"data/arrangements/pro/calibration/{n}m.jsonl"]
        assert f"--calibration {run}/calibration.json" in on_games[f"data/arrangements/pro/{n}m.jsonl"]
    (fit,) = [c for c in cmds if c.startswith("moveorder calibrate")]
    assert fit.split("--results ")[1].split(" --network")[0].split() == [
        f"{run}/calibration/pro/20m.jsonl",
        f"{run}/calibration/pro/40m.jsonl",
    ]
    assert f"--network trained-pro --out {run}/calibration.json" in fit
    cmds = planned_with(tmp_path, selection={"games": 5, "lengths": [20], "calibration": 7})
    assert not any(c.startswith("moveorder calibrate") for c in cmds)
    assert not any("calibration/" in c or "-cal7" in c for c in cmds if c.startswith("moveorder infer-set"))
    cfg = tmp_path / "captures.yaml"
    cfg.write_text(yaml.safe_dump({"selection": {"captures": "allowed", "calibration": 7}, "mirror": str(MIRROR)}))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0 and "no chance is stated for a position with captures" in proc.stdout + proc.stderr


@pytest.mark.cluster
def test_a_calibrated_run_states_chances_from_its_own_fit(tmp_path):
    """A small calibrated run through Snakemake (the mirror's pro games, the shipped 4x32, a beam of 8):
    the calibration games are none of the evaluation games' openings, the run's fit names the answers it
    read (their sha256), and each evaluation answer's chance is that fit's logistic of its evidence."""
    import hashlib
    import math

    cfg = {
        "sets": ["pro"],
        "mirror": str(MIRROR),
        "selection": {"games": 6, "lengths": [10], "calibration": 16},
        "training": {"sets": []},
        "policy": {"network": "tygem"},
        "inference": {"method": "beam", "beam_width": 8},
        "sweeps": [],
    }
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    run = "results/inferred/tygem/beam8f1-cal16"
    cfg_file = str(tmp_path / "cfg.yaml")
    run_snakemake(tmp_path, f"{run}/pro/10m.csv", "--cores", "2", "--configfile", cfg_file, timeout=10 * 60)
    evaluation = [json.loads(x) for x in open(tmp_path / "data/arrangements/pro/10m.jsonl")]
    games = [json.loads(x) for x in open(tmp_path / "data/arrangements/pro/calibration/10m.jsonl")]
    assert len(evaluation) == 6 and len(games) == 16
    assert not {tuple(g["actual"]) for g in games} & {tuple(e["actual"]) for e in evaluation}
    assert len({tuple(g["actual"]) for g in games}) == 16
    fitted = json.loads((tmp_path / run / "calibration.json").read_text())
    assert fitted["network"] == "tygem" and list(fitted["fits"]) == ["beam8f1-given"]
    (used,) = fitted["fits"]["beam8f1-given"]["data"]["files"]
    answers = tmp_path / run / "calibration/pro/10m.jsonl"
    assert used["file"] == f"{run}/calibration/pro/10m.jsonl" and used["answers"] == 16
    assert used["sha256"] == hashlib.sha256(answers.read_bytes()).hexdigest()
    assert all(json.loads(x)["chance"] is None for x in open(answers))
    w = fitted["fits"]["beam8f1-given"]["order_weights"]
    rows = [json.loads(x) for x in open(tmp_path / run / "pro/10m.jsonl")]
    stated = [r for r in rows if r["chance"] is not None]
    assert stated, [r["chance_note"] for r in rows]
    for r in stated:
        ev = r["evidence"]
        z = w[0] + w[1] * ev["log_share"] + w[2] * ev["lgm_log"] + w[3] * math.log(10)
        assert r["chance"] == pytest.approx(1 / (1 + math.exp(-z)), rel=1e-9)
    table = list(csv.DictReader(open(tmp_path / run / "pro/10m.csv")))
    assert [float(t["chance"]) for t in table if t["chance"]] == pytest.approx([r["chance"] for r in stated])
