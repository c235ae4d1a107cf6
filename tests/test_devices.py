"""The GPU path, checked on a CPU (issue 26): moveorder.nets.devices, and what training, the likelihood, scoring,
the SLURM GPU profile and bench/gpu_check.py do with a device.  Each test holds what a GPU machine would
see (a state loaded onto another device, a GPU allotted but unseen, a card's compute capability) against
the code; tests/test_gpu.py runs the same paths on a real CUDA device (``pytest -m gpu``)."""

import json
import logging
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
import yaml

from helpers import FIXTURE, MIRROR, REPO, run_snakemake
from moveorder import cli
from moveorder.katago.scoring import score_file
from moveorder.nets import devices
from moveorder.nets.likelihood import GPU_BATCH, PolicyLikelihood
from moveorder.nets.networks import LeelaNet, _symmetry_maps, load_policy, policy_probs
from moveorder.nets.sampling import PositionSampler, Prefetch, training_batches
from moveorder.nets.train import autocast_dtype, resume, train, value_loss
from moveorder.settings import ScoreConfig, TrainConfig

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="checks what happens where torch sees no GPU")
GPU_VARIABLES = ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE")


def tiny(**kw) -> TrainConfig:
    return TrainConfig(
        **{**dict(blocks=1, filters=8, steps=4, batch_size=16, heldout_positions=50, seed=5, threads=2), **kw}
    )


# --- 1. resuming: the checkpoint is read onto the CPU ------------------------------------------


def test_resume_reads_the_checkpoint_onto_the_cpu_whatever_the_device(pro2_pool, tmp_path):
    """As a GPU run loads it: with ``map_location`` the training device (meta stands in for CUDA), torch's RNG
    state and every tensor would land there; ``torch.set_rng_state`` takes only a CPU byte tensor."""
    cfg = tiny(checkpoint_every=2)
    train(pro2_pool, tmp_path, cfg, device="cpu", progress=False)
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    torch.manual_seed(123)  # another torch RNG state than the saved one
    net = LeelaNet(1, 8)
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    rng = np.random.default_rng(0)
    step = resume(tmp_path / "checkpoint.pt", cfg, net, opt, sched, rng, torch.device("meta"))
    assert step == 4
    assert torch.equal(torch.get_rng_state(), saved["torch_rng"])
    assert rng.bit_generator.state == saved["rng"]
    for name, value in net.state_dict().items():
        assert torch.equal(value, saved["model"][name]), name
    # AdamW (not fused, not capturable) reads its step counters on the host: they stay on the CPU.
    assert all(s["step"].device.type == "cpu" for s in opt.state.values()) and len(opt.state) > 0


# --- 5. bfloat16 only where the device has it --------------------------------------------------


@pytest.mark.parametrize("capability, native", [((7, 0), False), ((7, 5), False), ((8, 0), True), ((9, 0), True)])
def test_auto_precision_is_bfloat16_only_from_ampere_on(monkeypatch, capability, native):
    """A V100 (7.0) or T4 (7.5) emulates bfloat16, slower than float32: ``auto`` trains in float32 there."""
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    gpu = torch.device("cuda")
    assert autocast_dtype("auto", gpu) == (torch.bfloat16 if native else None)
    assert autocast_dtype("bfloat16", gpu) == torch.bfloat16 and autocast_dtype("float32", gpu) is None


# --- 4 and 9. float32 is float32, per call ------------------------------------------------------


def cuda_switches():
    return (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.deterministic)


def test_arithmetic_sets_the_switches_for_one_call_and_puts_them_back():
    before = cuda_switches()
    try:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.deterministic = False
        with devices.arithmetic(tf32=False):
            assert cuda_switches() == (False, False, True) and not torch.backends.cudnn.benchmark
            with devices.arithmetic(tf32=True):
                assert cuda_switches() == (True, True, True)
            assert cuda_switches() == (False, False, True)
        assert cuda_switches() == (True, True, False)
        with pytest.raises(KeyError), devices.arithmetic(tf32=False):
            raise KeyError("a failed call")
        assert cuda_switches() == (True, True, False)
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.deterministic = (
            before
        )


def test_each_likelihood_runs_its_network_in_its_own_arithmetic(monkeypatch):
    """The switches are process-wide: a likelihood sets them for its own calls, so a second one with another
    precision cannot change the first's (before, each set them once, when it was made)."""
    from moveorder.nets import likelihood

    seen = []
    real = likelihood.policy_probs

    def spy(net, planes, average_symmetries=False):
        seen.append(torch.backends.cudnn.allow_tf32)
        return real(net, planes, average_symmetries)

    monkeypatch.setattr(likelihood, "policy_probs", spy)
    plain = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    other = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    other.precision = "tf32"  # as a CUDA likelihood of precision tf32 would be (refused on a CPU)
    planes = torch.zeros(3, 18, 19, 19)
    before = torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = True  # PyTorch's default
        plain.probs_of_planes(planes)
        other.probs_of_planes(planes)
        plain.probs_of_planes(planes)
        assert seen == [False, True, False]
        assert torch.backends.cudnn.allow_tf32  # put back
    finally:
        torch.backends.cudnn.allow_tf32 = before


def test_training_and_its_evaluation_run_in_ieee_float32(pro2_pool, tmp_path, monkeypatch):
    seen = []
    real = LeelaNet.policy_logits

    def spy(self, x):
        seen.append((torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32))
        return real(self, x)

    monkeypatch.setattr(LeelaNet, "policy_logits", spy)
    train(pro2_pool, tmp_path, tiny(value_head=False, precision="float32"), device="cpu", progress=False)
    assert len(seen) > 4 and set(seen) == {(False, False)}  # the 4 steps and the held-out evaluation


def test_synchronize_waits_for_any_cuda_device_and_never_for_the_cpu(monkeypatch):
    """bench/networks.py synchronised only for the string "cuda": on "cuda:0" it timed queued work."""
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(str(device)))
    for name in ("cuda", "cuda:0", "cuda:1", torch.device("cuda", 0), "cpu"):
        devices.synchronize(name)
    assert calls == ["cuda", "cuda:0", "cuda:1", "cuda:0"]


# --- 3. softmax and the symmetry mean in float32 on both devices -------------------------------


def test_bfloat16_softmax_and_symmetry_mean_are_float32():
    """CUDA's autocast runs the softmax in float32; a CPU's kept it (and the mean of the 8 symmetries) in
    bfloat16, so a bfloat16 figure measured on a CPU did not carry over to a GPU."""
    net = load_policy(FIXTURE)
    planes = (torch.rand(6, 18, 19, 19, generator=torch.Generator().manual_seed(1)) > 0.8).float()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = net.policy_logits(planes)
        plain = policy_probs(net, planes)
        mean = policy_probs(net, planes, average_symmetries=True)
    assert logits.dtype == torch.bfloat16 and plain.dtype == mean.dtype == torch.float32
    assert torch.equal(plain, torch.softmax(logits.float(), dim=-1))
    assert torch.allclose(plain.sum(1), torch.ones(6), atol=1e-6) and torch.allclose(
        mean.sum(1), torch.ones(6), atol=1e-6
    )
    # float32 is untouched, bit for bit.
    assert torch.equal(policy_probs(net, planes), torch.softmax(net.policy_logits(planes), dim=-1))


def test_symmetry_maps_are_put_on_the_device_once():
    maps = _symmetry_maps(torch.device("meta"))
    assert all(m.device.type == "meta" for m in maps) and _symmetry_maps(torch.device("meta")) is maps
    assert all(
        torch.equal(a, b) for a, b in zip(_symmetry_maps(torch.device("cpu")), _symmetry_maps(torch.device("cpu")))
    )


# --- a GPU asked for, or given, that torch cannot see ------------------------------------------


@NO_CUDA
def test_a_cuda_device_torch_cannot_see_is_refused(pro2_pool, tmp_path, caplog, monkeypatch):
    for var in GPU_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="cuda.*(built without CUDA|finds no usable device).*--device cpu"):
        devices.resolve("cuda")
    with pytest.raises(ValueError, match="cuda:1"):
        PolicyLikelihood.from_file(FIXTURE, device="cuda:1")
    with pytest.raises(ValueError, match="cuda"):
        train(pro2_pool, tmp_path, tiny(), device="cuda", progress=False)
    position = tmp_path / "pos.sgf"
    position.write_text("(;GM[1]SZ[19]AB[dd][pp]AW[dp])")
    code = cli.main(
        ["infer", str(position), "-o", str(tmp_path / "o.sgf"), "--network", str(FIXTURE), "--device", "cuda"]
    )
    assert code == 2 and "--device cpu" in caplog.text
    caplog.clear()
    code = cli.main(
        ["cross-level", "--network", "n", str(FIXTURE), "--heldout", "pro", str(pro2_pool), "--device", "cuda"]
        + ["--table", str(tmp_path / "t.csv"), "--inference-table", str(tmp_path / "i.csv")]
        + ["--markdown", str(tmp_path / "m.md")]
    )
    assert code == 2 and "--device cpu" in caplog.text and not (tmp_path / "t.csv").exists()


@NO_CUDA
def test_a_job_given_a_gpu_that_torch_cannot_use_warns_and_runs_on_the_cpu(monkeypatch, caplog):
    for var in GPU_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SLURM_JOB_GPUS", "3")
    with caplog.at_level(logging.WARNING):
        assert devices.resolve(None) == torch.device("cpu")
    assert "SLURM_JOB_GPUS=3" in caplog.text and "running on the CPU" in caplog.text
    assert devices.gpu_present()  # KataGo may still find it (OpenCL)


def test_what_says_a_gpu_was_allotted(monkeypatch):
    for var in GPU_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # hidden on purpose: no device file counts either
    assert devices.gpus_allotted() is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert devices.gpus_allotted() == "CUDA_VISIBLE_DEVICES=0"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "0")
    assert devices.gpus_allotted() is None
    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "2")
    assert devices.gpus_allotted() == "SLURM_GPUS_ON_NODE=2"


# --- 8. batches made ahead, the same batches -----------------------------------------------------


def test_prefetched_batches_and_rng_states_are_the_plain_ones(real_games):
    sampler = PositionSampler.from_records(real_games[:20])
    plain = training_batches(sampler, np.random.default_rng(9), 32, True)
    ahead = Prefetch(training_batches(sampler, np.random.default_rng(9), 32, True), depth=2)
    try:
        for _ in range(6):
            (a, state_a), (b, state_b) = next(plain), next(ahead)
            assert all(torch.equal(x, y) for x, y in zip(a, b)) and state_a == state_b
    finally:
        ahead.close()
    # The state with a batch is the generator's right after drawing it: what a checkpoint after its step saves.
    rng = np.random.default_rng(9)
    _, state = next(training_batches(sampler, rng, 32, True))
    assert state == rng.bit_generator.state


def test_an_error_while_making_batches_reaches_the_training_loop():
    def broken():
        yield (torch.zeros(1),), {}
        raise OSError("disk gone")

    ahead = Prefetch(broken())
    assert torch.equal(next(ahead)[0][0], torch.zeros(1))
    got = []  # on a thread: an error lost on the way would leave the loop waiting for ever
    waiter = threading.Thread(target=lambda: got.append(pytest.raises(OSError, next, ahead)), daemon=True)
    waiter.start()
    waiter.join(timeout=60)
    assert got and "disk gone" in str(got[0].value)
    ahead.close()


def test_the_value_loss_without_a_mask_is_the_masked_mean_bit_for_bit():
    """The sync-free value loss (indices from the host) keeps the CPU's results: the same values, in order."""
    g = torch.Generator().manual_seed(4)
    for size in (256, 1000, 4099):
        v = torch.rand(size, generator=g) * 2 - 1
        z = torch.randint(-1, 2, (size,), generator=g).float()
        known = torch.from_numpy(np.flatnonzero(z.numpy() != 0))
        assert torch.equal(value_loss(v, z, known), ((v - z) ** 2)[z != 0].mean())
    assert value_loss(v, torch.zeros(size), torch.zeros(0, dtype=torch.long)) == 0


# --- 2. the GPU's fixed batch ---------------------------------------------------------------------


def test_the_gpu_batch_is_one_fixed_size_below_the_old_1024():
    assert GPU_BATCH == 256
    assert PolicyLikelihood.from_file(FIXTURE, device="cpu").max_batch == 64  # the CPU's, unchanged


# --- 6. KataGo on a GPU tunes for it ----------------------------------------------------------------


def engine_settings(path):
    return dict(line.split(" = ", 1) for line in path.read_text().splitlines())


@pytest.mark.parametrize(
    "gpu, tuning, tuner_given, fp16",
    [
        (True, "auto", False, "auto"),
        (False, "auto", True, "false"),
        (True, "cpu", True, "auto"),
        (False, "katago", False, "false"),
        (True, "mine", True, "auto"),
    ],
)
def test_the_engine_config_a_scoring_job_writes(tmp_path, gpu, tuning, tuner_given, fp16):
    """A job with a GPU gives KataGo no CPU tuning (tiny work-groups, FP16 off): KataGo tunes for the GPU;
    ``katago.tuning`` can still ask for the CPU's, none, or a file of the user's."""
    fake = tmp_path / "katago"
    fake.write_text(f'#!/bin/sh\nexec {sys.executable} {REPO / "tests/fake_katago.py"} "$@"\n')
    fake.chmod(0o755)
    row = {"id": "g", "set": "t", "n": 2, "actual": ["pd", "dp"], "inferred": ["dp", "pd"], "lgm": 0.2}
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps({**row, "actual_lgm": 0.1, "exact_match": False, "komi": 7.5}) + "\n")
    cpu_tuner, mine = tmp_path / "opencl-tune.txt", tmp_path / "my-gpu-tune.txt"
    cfg = ScoreConfig(visits=1, threads=1, tuning=str(mine) if tuning == "mine" else tuning)
    out, _ = score_file(results, fake, tmp_path / "m.bin.gz", tmp_path / "work", cfg, tuner=cpu_tuner, gpu=gpu)
    assert out["analysed"] == 5  # the fake engine answered
    settings = engine_settings(tmp_path / "work/analysis-0.cfg")
    expected = str(mine.resolve()) if tuning == "mine" else str(cpu_tuner.resolve())
    assert settings.get("openclTunerFile") == (expected if tuner_given else None)
    assert settings["openclUseFP16"] == fp16


def test_the_score_command_asks_whether_the_job_has_a_gpu(tmp_path, monkeypatch):
    """``moveorder score`` (the workflow's rule) decides from the job's devices when not told."""
    from moveorder.katago import scoring

    asked = {}

    def fake_score_file(*args, **kw):
        asked.update(kw, cfg=args[4])
        return {"rows": [], "moves": [], "positions": 0, "unique": 0, "analysed": 0, "seconds": 0.0}, {}

    monkeypatch.setattr(scoring, "score_file", fake_score_file)
    monkeypatch.setattr(scoring, "write_scores", lambda *a, **k: None)
    args = ["score", "--results", "r", "--katago", "k", "--model", "m", "--work-dir", str(tmp_path)]
    args += ["--table", "t", "--moves-table", "mt", "--tuner", "cpu.txt"]
    assert cli.main(args) == 0
    assert asked["cfg"].tuning == "auto" and asked.get("gpu") is None and str(asked["tuner"]) == "cpu.txt"
    assert cli.main(args + ["--tuning", "katago"]) == 0 and asked["cfg"].tuning == "katago"


def test_the_workflow_hands_katago_tuning_to_every_scoring_job(tmp_path):
    cfg = {"sets": ["pro"], "mirror": str(MIRROR), "training": {"sets": ["pro"]}, "policy": {"network": "trained-pro"}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg | {"katago": {"tuning": "/opt/my tune.txt"}}))
    proc = run_snakemake(tmp_path, "-n", "-p", "--configfile", str(tmp_path / "c.yaml"))
    lines = (proc.stdout + proc.stderr).splitlines()
    scores = [line for line in lines if "moveorder score " in line or "moveorder analyse-actual " in line]
    assert len(scores) > 1 and all("--tuning '/opt/my tune.txt'" in line for line in scores)
    assert any("moveorder analyse-actual " in line for line in scores)


# --- 9. the SLURM GPU profile: a GPU partition per GPU rule --------------------------------------------


def test_the_gpu_profile_sends_gpu_rules_to_a_gpu_partition():
    profile = yaml.safe_load((REPO / "config/profiles/slurm-gpu/config.yaml").read_text())
    rules = set(
        re.findall(r"^rule (\w+):", "".join(p.read_text() for p in (REPO / "workflow/rules").glob("*.smk")), re.M)
    )
    per_rule = profile["set-resources"]
    assert set(per_rule) <= rules, set(per_rule) - rules
    gpu_rules = {r for r, res in per_rule.items() if res.get("gpu")}
    assert gpu_rules == {"train_policy", "infer", "analyse_actual", "score"}
    assert all(per_rule[r].get("slurm_partition") for r in gpu_rules)
    # The CPU rules stay on the default partition (or the user's --default-resources).
    assert "slurm_partition" not in profile["default-resources"]
    assert not any("slurm_partition" in res for r, res in per_rule.items() if r not in gpu_rules)
    # The rest is the CPU profile's.
    cpu = yaml.safe_load((REPO / "config/profiles/slurm/config.yaml").read_text())
    assert {k: v for k, v in profile.items() if k != "set-resources"} == {
        k: v for k, v in cpu.items() if k != "set-resources"
    }


# --- the GPU check script ------------------------------------------------------------------------------


@NO_CUDA
def test_the_gpu_check_refuses_without_a_cuda_device():
    run = subprocess.run(
        [sys.executable, str(REPO / "bench/gpu_check.py")], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no CUDA device" in run.stderr and "nothing was run" in run.stderr
