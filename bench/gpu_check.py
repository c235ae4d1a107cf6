"""The GPU check: what moveorder does on a CUDA device, in minutes, each step with its wall time.

    python bench/gpu_check.py [--out gpu-check.md] [--network PATH] [--arrangements PATH.jsonl]
                              [--katago tools/katago/bin/katago --katago-model MODEL.bin.gz] [--skip STEP ...] [--paper]
    python bench/gpu_check.py --prepare-only --env-file ENV.sh     # a bare GPU machine made ready, nothing checked

First it makes a bare machine ready (``--prepare-only``: that alone; scripts/gpu_run.sh calls it so, then
sources the ``--env-file`` it writes): the wheels of ``.whl/`` whose distributions the machine's Python
lacks are installed into ``--site`` (``pip --no-index --no-deps --target``; torch and its CUDA libraries
are never among them: the machine's own torch is used, and whether it sees CUDA is reported); a
``moveorder`` command for the workflow's jobs (``--site``/bin); and NVIDIA's OpenCL for KataGo: where a
``libnvidia-opencl.so*`` exists, an ``.icd`` file naming it in ``--opencl-vendors`` and
``OCL_ICD_VENDORS`` set to that folder (a GPU image's /etc/OpenCL/vendors may list pocl and not
NVIDIA, and KataGo then runs on the CPU beside an idle GPU). It prints the GPU (nvidia-smi), torch, its
CUDA, and the cores.

Run it on a machine with a CUDA device after ``bash scripts/setup.sh`` (a CUDA build of torch in the
venv: ``pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128``, or the wheel your
cluster provides), and paste its output into docs/benchmarks.md ("The GPU path").  It
refuses, running nothing, where torch sees no CUDA device.  Steps (``--skip`` any by name):

* ``tests``: ``pytest -m gpu`` (tests/test_gpu.py: the GPU against the CPU within stated tolerances, and
  against itself bit for bit: batching, two precisions in one process, resuming, repeating a training run)
  and tests/test_devices.py.
* ``batch``: network evaluations per second at the candidate fixed batch sizes (64 to 1,024), float32, for
  the network used and Leela Zero's 6 x 128 shape: the measurement the GPU default (256) still waits for.
* ``bookkeeping``: the annealer's bookkeeping per chain-iteration with the zero-cost stand-in network
  (bench/anneal.py zero-cost) on the GPU, 100 and 500 chains of 20 and 40 moves.
* ``position``: the one-position tool (``moveorder infer``) on a 20-stone position at the paper's budget.
* ``infer``: ``infer-set`` on 20 arrangements with the ranked beam (W 512) and with SA (300 iterations x 3
  trials), on the GPU and on the CPU: LGMs side by side, the largest difference, and SA at the paper's
  budget (5,000 iterations x 5 trials) on the GPU alone.
* ``train``: 200 training steps (4 x 32, batch 256), a run killed at step 150 and resumed from its step-100
  checkpoint, compared with the whole run byte for byte; steps per second.
* ``katago``: KataGo scoring of one arrangement's 21 positions (``katago.tuning: auto``: no CPU tuning
  on a GPU, so the first run includes KataGo's own tuning), then the same again.
* ``paper`` (only with ``--paper``, an hour or more): the paper's protocol time for Pro20 and Pro40, 100
  arrangements each at 5,000 / 20,000 iterations x 5 trials (``--paper-arrangements`` folder).

``--cpu-stands-in`` runs every step on the CPU at tiny budgets, to check the script itself; its figures
are no GPU figures.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO.parent / "shared/data/fixtures/leelaz-0k-1x8.txt.gz"
MIRROR = REPO.parent / "shared/data/mirror"
PRO2 = "github.com/featurecat/go-dataset/raw/master/Pro/Pro2.7z"
KATAGO = REPO / "tools/katago/bin/katago"
KATAGO_MODEL = REPO / "tools/katago/models/g170-b6c96-s175395328-d26788732.bin.gz"
STEPS = ("tests", "batch", "bookkeeping", "position", "infer", "train", "katago")


def wheel_distribution(wheel: Path) -> str:
    """A wheel file's distribution name, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


def installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def install_wheels(wheels: Path, site: Path) -> list:
    """Install the wheels of ``wheels`` whose distributions this Python lacks into ``site``; put it on
    sys.path and PYTHONPATH. The machine's own packages (torch above all) are never replaced."""
    site.mkdir(parents=True, exist_ok=True)
    for path in (str(site), str(REPO / "src")):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        dict.fromkeys([str(REPO / "src"), str(site), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
    )
    importlib.invalidate_caches()
    missing = [w for w in sorted(wheels.glob("*.whl")) if not installed(wheel_distribution(w))]
    # one wheel a distribution: the first (the pack step downloads one version of each)
    missing = list({wheel_distribution(w): w for w in reversed(missing)}.values())
    if missing:
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile"]
        subprocess.run(cmd + ["--no-cache-dir", "--target", str(site), *map(str, missing)], check=True)
        importlib.invalidate_caches()
    return [wheel_distribution(w) for w in missing]


def moveorder_command(site: Path) -> Path:
    """``site``/bin/moveorder: the workflow's jobs call ``moveorder VERB`` with this Python and PYTHONPATH."""
    bin_dir = site / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    cmd = bin_dir / "moveorder"
    cmd.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m moveorder.cli "$@"\n')
    cmd.chmod(0o755)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return cmd


def nvidia_opencl(vendors: Path) -> str:
    """An .icd file naming NVIDIA's OpenCL library in ``vendors`` and OCL_ICD_VENDORS set to it, where the
    library exists; returns the library's path ('' where there is none)."""
    found = []
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if os.path.exists(ldconfig):
        listed = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
        found = [line.split("=>")[-1].strip() for line in listed.splitlines() if "libnvidia-opencl.so" in line]
    for folder in (
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/local/nvidia/lib64",
        "/usr/local/nvidia/lib",
        "/usr/lib",
    ):
        found += glob.glob(f"{folder}/libnvidia-opencl.so*")
    if not found:  # anywhere else on this file system (the driver's libraries mounted at an odd place)
        try:
            out = subprocess.run(
                ["find", "/usr", "/opt", "-xdev", "-name", "libnvidia-opencl.so*", "-print", "-quit"],
                capture_output=True,
                text=True,
                timeout=120,
            ).stdout
            found = out.split()
        except subprocess.TimeoutExpired:
            pass
    if not found:
        return ""
    lib = sorted(found, key=len)[0]
    vendors.mkdir(parents=True, exist_ok=True)
    (vendors / "nvidia.icd").write_text(lib + "\n")
    os.environ["OCL_ICD_VENDORS"] = str(vendors)
    return lib


def machine_lines() -> list:
    import torch

    lines = []
    smi = shutil.which("nvidia-smi")
    if smi:
        q = subprocess.run(
            [smi, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        lines.append(f"nvidia-smi: {q.stdout.strip() or q.stderr.strip()}")
    else:
        lines.append("nvidia-smi: none")
    cuda = torch.cuda.is_available()
    lines.append(
        f"torch {torch.__version__} (CUDA build {torch.version.cuda}); CUDA device seen: "
        f"{torch.cuda.get_device_name(0) if cuda else 'no'}"
    )
    vendors = sorted(os.listdir("/etc/OpenCL/vendors")) if os.path.isdir("/etc/OpenCL/vendors") else []
    lines.append(f"OpenCL vendors listed by the system: {' '.join(vendors) or 'none'}")
    lines.append(f"cores: {os.cpu_count()}; python {sys.version.split()[0]} ({sys.executable})")
    return lines


def prepare(a) -> None:
    """The bare machine made ready: wheels, the moveorder command, NVIDIA's OpenCL; the env file for a shell."""
    site = Path(a.site)
    got = install_wheels(Path(a.wheels), site)
    print(f"wheels installed into {site}: {' '.join(got) or 'none needed'}", flush=True)
    moveorder_command(site)
    lib = nvidia_opencl(Path(a.opencl_vendors))
    print(f"NVIDIA OpenCL: {lib or 'none found (KataGo takes what /etc/OpenCL/vendors lists)'}", flush=True)
    for line in machine_lines():
        print(line, flush=True)
    if a.env_file:
        keys = ["PYTHONPATH", "PATH"] + (["OCL_ICD_VENDORS"] if lib else [])
        Path(a.env_file).write_text("".join(f"export {k}={shlex.quote(os.environ[k])}\n" for k in keys))


class Report:
    """Markdown to stdout and to ``--out``; one timed section a step."""

    def __init__(self, path):
        self.path = Path(path) if path else None
        self.lines = []

    def __call__(self, text=""):
        print(text, flush=True)
        self.lines.append(text)
        if self.path:
            self.path.write_text("\n".join(self.lines) + "\n")

    @contextlib.contextmanager
    def step(self, title):
        self(f"\n### {title}\n")
        t0 = time.perf_counter()
        try:
            yield
        except Exception as err:  # noqa: BLE001 - a failed step is reported, the others still run
            self(f"\n**failed**: {type(err).__name__}: {err}")
        self(f"\nwall time: {time.perf_counter() - t0:.1f} s")


def refuse_without_cuda():
    import torch

    if torch.cuda.is_available():
        return
    from moveorder.nets.devices import gpus_allotted, why_no_cuda

    allotted = gpus_allotted()
    print(
        f"gpu_check: no CUDA device: {why_no_cuda()}"
        + (f" (the machine says {allotted})" if allotted else "")
        + "; nothing was run. Run it where torch sees a GPU (python -c 'import torch; print(torch.cuda.is_available())').",
        file=sys.stderr,
    )
    sys.exit(2)


def pool_file(a, work: Path) -> Path:
    """Records to train on and to draw arrangements from: --pool, else the mirror's Fox Pro2 archive's."""
    if a.pool:
        return Path(a.pool)
    from moveorder.data.archives import extract_all
    from moveorder.data.qualify import write_scan

    pool = work / "pool.jsonl"
    if not pool.exists():
        extract_all([Path(a.mirror) / PRO2], work / "x")
        write_scan(work / "x", pool, work / "r.csv", work / "rej.csv")
    return pool


def arrangements_file(a, work: Path, n: int = 20) -> Path:
    """20 arrangements of ``n`` moves: --arrangements, else the first 20 qualified games of the pool."""
    if a.arrangements:
        return Path(a.arrangements)
    from moveorder.data.arrangements import clip, write_jsonl
    from moveorder.data.records import load_records

    out = work / f"{n}m.jsonl"
    if not out.exists():
        write_jsonl(out, [clip(r, n, "pro") for r in load_records(pool_file(a, work))[:20]])
    return out


def moveorder(*args):
    from moveorder import cli

    code = cli.main([str(x) for x in args])
    if code:
        raise RuntimeError(f"moveorder {' '.join(map(str, args))}: exit {code}")


def step_tests(r, a):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_gpu.py", "tests/test_devices.py"]
    out = subprocess.run(cmd + ["-m", "gpu or not gpu"], cwd=REPO, capture_output=True, text=True)
    tail = out.stdout.strip().splitlines()[-15:]
    r("```\n" + " ".join(cmd) + ' -m "gpu or not gpu"\n' + "\n".join(tail) + "\n```")
    if out.returncode:
        raise RuntimeError(f"pytest exit {out.returncode}")


def step_batch(r, a, dev):
    from moveorder.nets.devices import arithmetic, synchronize
    from moveorder.nets.networks import LeelaNet, load_policy, policy_probs

    r("| network | " + " | ".join(f"batch {b}" for b in a.batches) + " |")
    r("|---|" + "---|" * len(a.batches))
    for name, net in (("used", load_policy(a.network)), ("6x128", LeelaNet(6, 128))):
        net = net.eval().to(dev, memory_format=torch.channels_last)
        cells = []
        for b in a.batches:
            x = (torch.rand(b, 18, 19, 19, device=dev) > 0.7).float().contiguous(memory_format=torch.channels_last)
            with torch.no_grad(), arithmetic(tf32=False):
                policy_probs(net, x)
                synchronize(dev)
                n, t0 = 0, time.perf_counter()
                while time.perf_counter() - t0 < a.seconds:
                    policy_probs(net, x)
                    n += b
                synchronize(dev)
            cells.append(f"{n / (time.perf_counter() - t0):,.0f}")
        label = f"{net.blocks_n}x{net.filters}" + (f" ({Path(a.network).name})" if name == "used" else "")
        r(f"| {label} | " + " | ".join(cells) + " |")
    r("\npositions per second, float32 (no TF32), policy head, channels-last")


def step_bookkeeping(r, a, dev):
    sys.path.insert(0, str(REPO / "bench"))
    from anneal import ZeroCostLikelihood, synthetic_arrangements
    from moveorder.nets.likelihood import PositionEvaluator
    from moveorder.search import anneal as sa
    from moveorder.search.problem import SearchStats
    from moveorder.settings import SearchConfig

    r("| moves | chains | us / chain-iteration (no cache) | positions asked / chain-iteration |")
    r("|---|---|---|---|")
    for n in (20, 40):
        for chains in (100, 500):
            pairs = synthetic_arrangements(chains // 5, n)
            ev = PositionEvaluator(ZeroCostLikelihood(device=str(dev)), cache_size=0)
            sa.anneal(ev, pairs, SearchConfig(iterations=5, trials=5, seed=2))  # warm-up
            stats = SearchStats()
            sa.anneal(ev, pairs, SearchConfig(iterations=a.iterations_bookkeeping, trials=5, seed=1), stats=stats)
            ci = stats.chain_iterations
            r(
                f"| {n} | {chains} | {(stats.seconds - stats.network_seconds) / ci * 1e6:.1f} | {stats.requests / ci:.2f} |"
            )


def step_position(r, a, dev, work):
    from moveorder.data.arrangements import load_arrangements
    from moveorder.search.results import write_sgf

    arr = load_arrangements(arrangements_file(a, work))[0]
    pos = work / "position.sgf"
    write_sgf(pos, arr.actual, "gpu_check")
    for device in (dev, "cpu") if a.position_on_cpu else (dev,):
        t0 = time.perf_counter()
        args = ["infer", pos, "-o", work / f"ordered-{device}.sgf", "--network", a.network, "--device", device]
        moveorder(*args, "--iterations", a.iterations_position, "--trials", 5, "--quiet")
        r(
            f"- `moveorder infer` on {device}: {arr.n} stones, {a.iterations_position} iterations x 5 trials: "
            f"{time.perf_counter() - t0:.1f} s"
        )


def infer_set(a, arrangements, out, device, *method):
    t0 = time.perf_counter()
    args = ["infer-set", "--arrangements", arrangements, "--out", out, "--table", out.with_suffix(".csv")]
    moveorder(*args, "--network", a.network, "--device", device, "--quiet", *method)
    from moveorder.search.results import load_results

    return load_results(out), time.perf_counter() - t0


def step_infer(r, a, dev, work):
    arrangements = arrangements_file(a, work)
    methods = {
        f"ranked beam {a.beam_width}": ["--method", "beam", "--beam-width", a.beam_width],
        f"SA {a.sa_iterations} it. x 3": ["--iterations", a.sa_iterations, "--trials", 3],
    }
    for label, method in methods.items():
        slug = label.split()[0].lower()
        gpu, t_gpu = infer_set(a, arrangements, work / f"{dev.type}-{slug}.jsonl", dev, *method)
        cpu, t_cpu = infer_set(a, arrangements, work / f"cpu-{slug}-reference.jsonl", "cpu", *method)
        r(f"\n{label}, {len(gpu)} arrangements of {gpu[0]['n']} moves: {dev} {t_gpu:.1f} s, cpu {t_cpu:.1f} s\n")
        r(f"| arrangement | LGM {dev} | LGM cpu | actual LGM {dev} | actual LGM cpu | same order |")
        r("|---|---|---|---|---|---|")
        for g, c in zip(gpu, cpu):
            same = "yes" if g["inferred"] == c["inferred"] else "no"
            r(
                f"| {g['id']} | {g['lgm']:.6f} | {c['lgm']:.6f} | {g['actual_lgm']:.6f} | {c['actual_lgm']:.6f} | {same} |"
            )
        d_lgm = max(abs(g["lgm"] - c["lgm"]) for g, c in zip(gpu, cpu))
        d_actual = max(abs(g["actual_log_likelihood"] - c["actual_log_likelihood"]) for g, c in zip(gpu, cpu))
        same = sum(g["inferred"] == c["inferred"] for g, c in zip(gpu, cpu))
        r(
            f"\nlargest difference: LGM {d_lgm:.2e}; actual sequences' log-likelihood {d_actual:.2e} (the same "
            f"sequence: the network's arithmetic alone); same inferred order {same}/{len(gpu)}"
        )
    paper = ["--iterations", a.iterations_paper, "--trials", 5]
    rows, t = infer_set(a, arrangements, work / "gpu-paper.jsonl", dev, *paper)
    r(
        f"\nSA at the paper's budget ({a.iterations_paper} iterations x 5 trials) on {dev}: {len(rows)} arrangements "
        f"in {t:.1f} s; mean LGM {np.mean([x['lgm'] for x in rows]):.4f}"
    )


def step_train(r, a, dev, work):
    from moveorder.nets.sampling import PositionSampler
    from moveorder.nets.train import train
    from moveorder.settings import TrainConfig

    pool = pool_file(a, work)
    steps = a.train_steps
    cfg = TrainConfig(
        blocks=4, filters=32, steps=steps, batch_size=256, checkpoint_every=steps // 2, heldout_positions=5000, seed=1
    )
    t0 = time.perf_counter()
    whole = train(pool, work / "whole", cfg, device=str(dev), progress=False)
    r(
        f"- {steps} steps of 4x32 on {dev} ({whole['precision']}): {time.perf_counter() - t0:.1f} s, "
        f"{whole['steps_per_second']:.1f} steps/s, {whole['data_share']:.1%} of step time waiting for batches; "
        f"held-out top-1 {whole['top1_accuracy']:.3f}"
    )
    real, calls = PositionSampler.batch, []

    def killed(self, rows, rng):
        calls.append(1)
        if len(calls) == steps * 3 // 4 + 1:
            raise KeyboardInterrupt("killed")
        return real(self, rows, rng)

    PositionSampler.batch = killed
    try:
        train(pool, work / "resumed", cfg, device=str(dev), progress=False)
    except KeyboardInterrupt:
        pass
    finally:
        PositionSampler.batch = real
    t0 = time.perf_counter()
    train(pool, work / "resumed", cfg, device=str(dev), progress=False)
    same = (work / "whole/policy.txt.gz").read_bytes() == (work / "resumed/policy.txt.gz").read_bytes()
    r(
        f"- killed at step {steps * 3 // 4 + 1}, resumed from step {steps // 2} in {time.perf_counter() - t0:.1f} s: "
        f"weights {'identical to' if same else 'DIFFERENT from'} the whole run's"
    )


def step_katago(r, a, dev, work):
    from moveorder.data.arrangements import load_arrangements
    from moveorder.katago.scoring import score_file
    from moveorder.settings import ScoreConfig

    # One arrangement's actual sequence, scored as both sequences: its 21 positions (0 to 20 moves).
    arr = load_arrangements(arrangements_file(a, work))[0]
    one = work / "katago-input.jsonl"
    row = {"id": arr.id, "set": "pro", "n": arr.n, "actual": arr.actual, "inferred": arr.actual, "lgm": 1.0}
    one.write_text(json.dumps({**row, "actual_lgm": 1.0, "exact_match": True, "komi": 7.5}) + "\n")
    cfg = ScoreConfig(visits=a.visits, threads=1, tuning="auto")  # the workflow's default
    cpu_tuner = Path(a.katago).parents[1] / "opencl-tune.txt"
    for attempt in ("first (on a GPU: KataGo tunes for it)", "second"):
        t0 = time.perf_counter()
        out, _ = score_file(one, Path(a.katago), Path(a.katago_model), work / "katago", cfg, tuner=cpu_tuner)
        r(
            f"- {attempt}: {out['analysed']} positions at {a.visits} visits ({Path(a.katago_model).name}): "
            f"{time.perf_counter() - t0:.1f} s, {out['seconds']:.1f} s in KataGo"
        )
        (work / "katago").joinpath("analyses.jsonl").unlink(missing_ok=True)


def step_paper(r, a, dev, work):
    folder = Path(a.paper_arrangements)
    for n, iterations in ((20, 5000), (40, 20000)):
        rows, t = infer_set(
            a, folder / f"{n}m.jsonl", work / f"paper-{n}.jsonl", dev, "--iterations", iterations, "--trials", 5
        )
        r(
            f"- Pro{n}: {len(rows)} arrangements, {iterations} iterations x 5 trials: {t / 60:.1f} min "
            f"(mean LGM {np.mean([x['lgm'] for x in rows]):.4f})"
        )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="", help="also write the report here (markdown)")
    p.add_argument("--device", default="cuda", help="the CUDA device to check (default: %(default)s)")
    p.add_argument(
        "--network", default="", help="policy network (default: the quick run's trained-pro, else the 1x8 fixture)"
    )
    p.add_argument("--arrangements", default="", help="JSONL of arrangements (default: 20 made from the mirror's Pro2)")
    p.add_argument("--pool", default="", help="training pool JSONL (default: the Pro2 archive's records)")
    p.add_argument("--mirror", default=str(MIRROR), help="the URL mirror whose Fox Pro2 archive gives records")
    p.add_argument("--wheels", default=str(REPO / ".whl"), help="wheels to install where missing")
    p.add_argument("--site", default="/tmp/moveorder-site", help="where the missing wheels are installed")
    p.add_argument("--opencl-vendors", default="/tmp/moveorder-opencl", help="folder for NVIDIA's OpenCL .icd")
    p.add_argument("--env-file", default="", help="write the environment made here as shell exports")
    p.add_argument("--prepare-only", action="store_true", help="make the machine ready, check nothing")
    p.add_argument("--katago", default=str(KATAGO))
    p.add_argument("--katago-model", default=str(KATAGO_MODEL))
    p.add_argument("--visits", type=int, default=8)
    p.add_argument("--skip", nargs="*", default=[], choices=STEPS)
    p.add_argument("--paper", action="store_true", help="also the paper's protocol on 100 arrangements (long)")
    p.add_argument("--paper-arrangements", default=str(REPO / "data/arrangements/pro"))
    p.add_argument(
        "--cpu-stands-in", action="store_true", help="check the script on a CPU, tiny budgets: no GPU figures"
    )
    a = p.parse_args(argv)
    prepare(a)
    if a.prepare_only:
        return 0
    global np, torch
    import numpy as np
    import torch

    if not a.network:
        trained = REPO / "results/networks/trained-pro/model.pt"
        a.network = str(trained if trained.exists() else FIXTURE if FIXTURE.exists() else "tygem")
    a.batches, a.seconds, a.iterations_bookkeeping = [64, 128, 256, 512, 1024], 3.0, 200
    a.iterations_position, a.iterations_paper, a.train_steps, a.position_on_cpu = 5000, 5000, 200, True
    a.beam_width, a.sa_iterations = 512, 300
    if a.cpu_stands_in:
        dev = torch.device("cpu")
        a.batches, a.seconds, a.iterations_bookkeeping = [64, 256], 0.3, 10
        a.iterations_position, a.iterations_paper, a.train_steps, a.position_on_cpu = 30, 30, 8, False
        a.beam_width, a.sa_iterations = 8, 10
    else:
        refuse_without_cuda()
        from moveorder.nets.devices import resolve

        dev = resolve(a.device)
    r = Report(a.out)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "the CPU standing in (no GPU figures)"
    r(f"## GPU check: {name}\n")
    r(
        f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}; "
        f"network {a.network}; {time.strftime('%Y-%m-%d %H:%M')}"
    )
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        work = Path(tmp)
        steps = {
            "tests": lambda: step_tests(r, a),
            "batch": lambda: step_batch(r, a, dev),
            "bookkeeping": lambda: step_bookkeeping(r, a, dev),
            "position": lambda: step_position(r, a, dev, work),
            "infer": lambda: step_infer(r, a, dev, work),
            "train": lambda: step_train(r, a, dev, work),
            "katago": lambda: step_katago(r, a, dev, work),
        }
        if a.paper:
            steps["paper"] = lambda: step_paper(r, a, dev, work)
        for name, run in steps.items():
            if name in a.skip:
                continue
            with r.step(name):
                run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
