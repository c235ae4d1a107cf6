"""Helpers shared by the tests (one home): paths to ../shared, real openings, records written by the
tests themselves, an ASCII board loader (as minigo's ``load_board``), fake inference tables, and a
Snakemake runner.  Fixtures live in conftest.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np
import pandas as pd

from moveorder.go import coords

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MIRROR = SHARED / "data" / "mirror"
#: Leela Zero's 1x8 test network (real weights file format), for leelaz cross-checks.
FIXTURE = SHARED / "data" / "fixtures" / "leelaz-0k-1x8.txt.gz"
#: The real KataGo, installed by scripts/setup.sh, and KataGo's small test network.
KATAGO = REPO / "tools/katago/bin/katago"
KATAGO_TUNER = REPO / "tools/katago/opencl-tune.txt"
KATAGO_SMALL_MODEL = REPO / "tools/katago/models/g170-b6c96-s175395328-d26788732.bin.gz"
#: The katrain wheel scripts/setup.sh downloaded KataGo from.
KATRAIN_WHEEL = REPO / "tools/katago/katrain-1.20.0-py3-none-any.whl"


def cpu_flags() -> List[str]:
    """The CPU's feature flags as Linux reports them (an oracle apart from torch's own checks)."""
    with open("/proc/cpuinfo") as f:
        return next(line for line in f if line.startswith("flags")).split(":", 1)[1].split()


def native_bfloat16_cpu() -> bool:
    """Whether this x86 CPU computes bfloat16 natively: AVX512-BF16 or AMX, by Linux's flags."""
    return bool({"avx512_bf16", "amx_bf16"} & set(cpu_flags()))


# A real professional opening (the first 20 moves of a Fox game), no captures.
OPENING = [
    "dp",
    "pp",
    "cd",
    "pc",
    "qe",
    "ec",
    "hd",
    "ef",
    "dc",
    "fd",
    "cg",
    "od",
    "kc",
    "qh",
    "gc",
    "db",
    "cb",
    "dd",
    "cc",
    "eh",
]


def filler_moves(count: int, start: Sequence[str] = ()) -> list:
    """Legal, capture-free moves: the opening, then points far from each other on rows r..s."""
    moves = list(start) or list(OPENING)
    used = set(moves)
    cols = "abcdefghijklmnopqrs"
    # Stones on alternate points of the bottom-right area never capture anything.
    candidates = [c + r for r in "klmno" for c in cols[::2]] + [c + r for r in "klmno" for c in cols[1::2]]
    for pt in candidates:
        if len(moves) >= count:
            break
        if pt not in used:
            moves.append(pt)
            used.add(pt)
    assert len(moves) >= count
    return moves[:count]


def make_sgf(moves: Sequence[str], size: int = 19, root: str = "", colours: str | None = None) -> str:
    """An SGF game record: ``root`` properties are added to the root node as written."""
    colours = colours or "BW" * (len(moves) // 2 + 1)
    body = "".join(f";{colours[i]}[{m}]" for i, m in enumerate(moves))
    return f"(;GM[1]FF[4]SZ[{size}]KM[6.5]{root}{body})"


def capture_at_30():
    """29 quiet moves, then black captures a white stone at move 30... as move 31 here."""
    moves = filler_moves(26)
    # White stone at ra (top right edge), black surrounds it: qa, rb, sa.
    moves += ["qa", "ra", "rb", "sq", "sa"]  # move 31 (black sa) captures ra
    return moves + filler_moves(60, moves)[len(moves) :]


def handicap_sgf(moves, node=True):
    """A Fox-style handicap game: HA[2], the stones in the first node (or the root), White moves first."""
    stones = "AB[dp][pd]"
    body = "".join(f";{'WB'[i % 2]}[{m}]" for i, m in enumerate(moves))
    if node:
        return f"(;GM[1]FF[4]SZ[19]HA[2]KM[0.5];{stones}{body})"
    return f"(;GM[1]FF[4]SZ[19]HA[2]KM[0.5]{stones}{body})"


def load_board(text: str) -> Tuple[List[coords.Point], List[coords.Point]]:
    """Black and white stones of an ASCII board: 19 rows top first, ``X`` black, ``O`` white, ``.`` empty.

    Spaces are ignored, so rows may be written ``. . X . .``; fewer than 19 rows
    (or columns) are the top-left corner of the board.
    """
    black, white = [], []
    rows = [line.replace(" ", "") for line in text.strip("\n").splitlines()]
    for r, line in enumerate(rows):
        for c, ch in enumerate(line):
            if ch not in "XO.":
                raise ValueError(f"row {r + 1}: {ch!r} is not X, O or .")
            if ch == "X":
                black.append((r, c))
            elif ch == "O":
                white.append((r, c))
    return black, white


def fake_tables(n=12, seed=0):
    rng = np.random.default_rng(seed)
    actual = rng.uniform(0.1, 0.3, n)
    lgm = actual * rng.uniform(0.95, 1.2, n)
    seqs = ["pddpqpdd" + "".join(rng.choice(list("abcdefghijklmnopqrs"), 4)) for _ in range(n)]
    inferred = pd.DataFrame(
        {
            "set": "pro",
            "n": 6,
            "id": [f"g{i}" for i in range(n)],
            "lgm": lgm,
            "actual_lgm": actual,
            "trial_std": rng.uniform(0, 0.02, n),
            "exact_match": [i % 3 == 0 for i in range(n)],
            "matching_prefix": 2,
            "matching_moves": 3,
            "inferred": seqs,
            "actual": seqs,
        }
    )
    scored = pd.DataFrame(
        {
            "set": "pro",
            "n": 6,
            "id": inferred["id"],
            "lgm": lgm,
            "actual_lgm": actual,
            "exact_match": inferred["exact_match"],
            "lgm_ratio": lgm / actual,
            "loss_actual": rng.uniform(0.5, 2, n),
            "loss_inferred": rng.uniform(0.5, 2, n),
            "katago_model": "g170",
            "visits": 8,
        }
    )
    return inferred, scored


SNAKEMAKE = [sys.executable, "-m", "snakemake"]
#: Seconds a killed run's output may stay open, and a command of a stall report may take.
KILL_GRACE_S = 30


def run_snakemake(workdir, *args, check=True, timeout=None):
    """Snakemake on the repository's workflow in ``workdir``; a run through a SLURM profile names it in args.

    Snakemake imports every executor plugin when it starts, and the SLURM plugin's import runs
    ``scontrol show config``, which, where SLURM is installed (scripts/setup.sh) but no controller is
    running, waits about 9 s for one. A run that is not through SLURM gets an empty SLURM_CONF, so that
    ``scontrol`` fails at once (the plugin then goes on without the value).

    ``timeout`` (seconds): a run still going then is stopped, with the SLURM jobs it submitted, and fails
    with what it was doing (:func:`stalled_run_report`), so that a stalled run costs minutes, not the
    whole CI job.
    """
    slurm = any("profiles/slurm" in str(a) or a == "--executor" for a in args)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if not slurm:
        env["SLURM_CONF"] = os.devnull
    cmd = SNAKEMAKE + ["-s", str(REPO / "Snakefile"), "--directory", str(workdir), *args]

    def cancel_jobs() -> str:
        jobs = [job for job, _ in slurm_jobs(workdir)] if slurm else []
        return "\n--- scancel:\n" + said(["scancel", *jobs]) if jobs else ""

    result = run_bounded(
        cmd,
        timeout,
        f"snakemake still running after {timeout or 0:.0f} s, stopped: {' '.join(args)}",
        before_kill=lambda: stalled_run_report(workdir, slurm),  # the jobs as they stood
        after_kill=cancel_jobs,
        env=env,
    )
    if check and result.returncode != 0:
        raise AssertionError(result.stdout[-3000:] + result.stderr[-3000:])
    return result


def run_bounded(
    cmd, timeout, stalled: str, before_kill=str, after_kill=str, grace=KILL_GRACE_S, **popen
) -> subprocess.CompletedProcess:
    """``cmd`` in a process group of its own; past ``timeout`` seconds the group is killed and an
    AssertionError says ``stalled``, then what ``before_kill()`` and ``after_kill()`` report. A process
    that holds the output open after the kill (one outside the group, or one that cannot die) delays the
    failure by ``grace`` seconds at most, and the report lists the processes then."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **popen
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        report = before_kill()
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            proc.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            report += "\n--- still holding the output after the kill:\n" + process_list()
            proc.stdout.close()
            proc.stderr.close()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            report += f"\n--- process {proc.pid} did not die when killed"
        raise AssertionError(f"{stalled}\n{report}{after_kill()}") from None
    except BaseException:  # stopped from outside (a test's own limit, ^C): the run goes with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


class StillRunning(Exception):
    """Raised where a :func:`time_limit` found its code."""


@contextlib.contextmanager
def time_limit(seconds: int, what: str):
    """Raise :class:`StillRunning` where the code inside is after ``seconds`` (SIGALRM: main thread only;
    a :func:`run_bounded` command it interrupts is killed with its group)."""

    def stop(signum, frame):
        raise StillRunning(f"{what} still running after {seconds} s")

    before = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


SLURM_SUBMITTED = re.compile(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: .*?slurm_logs/rule_(\w+)/")


def snakemake_log(workdir) -> str:
    """Every log Snakemake wrote in ``workdir``, oldest first."""
    return "".join(p.read_text() for p in sorted((Path(workdir) / ".snakemake/log").glob("*.log")))


def slurm_jobs(workdir) -> List[Tuple[str, str]]:
    """(SLURM job id, rule) of every job a run in ``workdir`` submitted."""
    return SLURM_SUBMITTED.findall(snakemake_log(workdir))


def process_list() -> str:
    """Every process on the machine but the kernel's, as a tree: group, state, age, CPU time and command
    line (each line cut at 300 characters)."""
    ps = ["ps", "-ww", "-N", "--pid", "2", "--ppid", "2", "-o", "pid,ppid,pgid,stat,etime,time,args", "--forest"]
    return "\n".join(line[:300] for line in said(ps).splitlines())


def said(cmd) -> str:
    """What ``cmd`` printed, or why it printed nothing, within :data:`KILL_GRACE_S` seconds: a stall report
    must not keep the stalled run from being stopped."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=KILL_GRACE_S)
        return done.stdout + done.stderr
    except (OSError, subprocess.SubprocessError) as err:
        return f"{type(err).__name__}: {err}"


def stalled_run_report(workdir, slurm: bool) -> str:
    """What a run that has not finished was doing: the end of Snakemake's log and every process, and on
    SLURM the queue, the node and the end of the controller's and the node daemon's logs."""
    parts = ["--- snakemake log (end):", snakemake_log(workdir)[-3000:], "--- processes:", process_list()]
    if slurm:
        for cmd in (["squeue", "--states=all"], ["sinfo", "-N", "-l"], ["scontrol", "show", "node"]):
            parts += [f"--- {' '.join(cmd)}:", said(cmd)]
        for log in ("/var/log/slurm/slurmctld.log", "/var/log/slurm/slurmd.log"):
            if Path(log).exists():
                parts += [f"--- {log} (end):", "\n".join(Path(log).read_text(errors="replace").splitlines()[-30:])]
    return "\n".join(parts)


def killed_then_resumed(monkeypatch, pool, out, cfg, device, kill_at=5):
    """Train ``cfg`` into ``out``, killed (KeyboardInterrupt) when it asks for its ``kill_at``-th batch, then
    resumed from the checkpoint it left; the checkpoint's step at the kill is returned."""
    import pytest
    import torch

    from moveorder.nets.sampling import PositionSampler
    from moveorder.nets.train import train

    real, calls = PositionSampler.batch, []

    def dies(self, rows, rng):
        calls.append(1)
        if len(calls) == kill_at:
            raise KeyboardInterrupt("killed")
        return real(self, rows, rng)

    monkeypatch.setattr(PositionSampler, "batch", dies)
    with pytest.raises(KeyboardInterrupt):
        train(pool, out, cfg, device=device, progress=False)
    monkeypatch.setattr(PositionSampler, "batch", real)
    step = torch.load(out / "checkpoint.pt", weights_only=False)["step"]
    train(pool, out, cfg, device=device, progress=False)
    return step


def chromium(profile, width: int = 1400, height: int = 1000):
    """Debian's chromium, headless, driven by selenium through Debian's chromedriver (no browser of its
    own is downloaded), with a fresh profile in the folder ``profile`` (the caller's temporary folder, so
    that pytest removes it) and no background connections (the machine has no network)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--window-size={width},{height}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def start_server(*options: str, cwd=None):
    """``moveorder serve --port 0 OPTIONS`` in its own process: the process and the page's address."""
    import re

    proc = subprocess.Popen(
        [sys.executable, "-m", "moveorder.cli", "serve", "--port", "0", *options],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    line = proc.stdout.readline()
    found = re.search(r"http://\S+/", line)
    if not found:
        proc.kill()
        raise RuntimeError(f"moveorder serve did not start: {line}{proc.stdout.read()}")
    import threading

    threading.Thread(target=proc.stdout.read, daemon=True).start()  # its log, read so it never blocks
    return proc, found.group(0)
