"""The device-dependent paths on a real CUDA device: marked ``gpu``, left out of the default run (no GPU in CI),
run by ``bench/gpu_check.py`` or ``pytest -m gpu`` on a machine with one.

Where a GPU and the CPU compute the same thing, results agree within a stated tolerance (cuDNN's float32
convolutions sum in another order than oneDNN's: about 1e-7 relative); where the GPU is compared with itself
(batching, resuming, repeating a run), bit for bit.
"""

import numpy as np
import pytest
import torch

from helpers import FIXTURE, killed_then_resumed
from moveorder import cli
from moveorder.data.arrangements import clip, write_jsonl
from moveorder.go.coords import sgf_to_lz
from moveorder.nets.features import position_codes
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.nets.networks import LeelaNet
from moveorder.nets.train import train
from moveorder.search import anneal as sa
from moveorder.search.results import load_results
from moveorder.settings import SearchConfig, TrainConfig

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (bench/gpu_check.py)"),
]

#: float32 on a GPU against float32 on a CPU: largest difference of a probability.
FLOAT32_ATOL = 1e-5
#: bfloat16 on each: the logits carry 8 bits of mantissa on both, rounded in other places.
BFLOAT16_ATOL = 3e-2


def real_codes(real_games, count=300):
    """Network inputs of real positions: every position of the first games' 30-move sequences."""
    seqs = torch.tensor([sgf_to_lz(clip(r, 30, "pro").actual) for r in real_games[: count // 30 + 1]])
    rows = torch.arange(len(seqs)).repeat_interleave(30)
    positions = torch.arange(30).repeat(len(seqs))
    return position_codes(seqs, rows, positions)[:count]


def random_net():
    torch.manual_seed(0)
    net = LeelaNet(2, 16)
    for m in net.modules():  # running statistics away from 0 and 1, as a trained network's
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return net.eval()


@pytest.mark.parametrize("symmetries", [False, True])
def test_float32_on_the_gpu_is_the_cpus_within_tolerance(real_games, symmetries):
    codes = real_codes(real_games)
    for net in (random_net(), PolicyLikelihood.from_file(FIXTURE, device="cpu").net):
        cpu = PolicyLikelihood(net, device="cpu", average_symmetries=symmetries).probs_of_codes(codes)
        gpu = PolicyLikelihood(net, device="cuda", average_symmetries=symmetries).probs_of_codes(codes.cuda())
        assert (gpu.cpu() - cpu).abs().max() < FLOAT32_ATOL


def test_bfloat16_on_the_gpu_is_the_cpus_within_tolerance(real_games):
    codes = real_codes(real_games)
    net = random_net()
    cpu = PolicyLikelihood(net, device="cpu", precision="bfloat16").probs_of_codes(codes)
    gpu = PolicyLikelihood(net, device="cuda", precision="bfloat16").probs_of_codes(codes.cuda()).cpu()
    assert gpu.dtype == torch.float32 and torch.allclose(gpu.sum(1), torch.ones(len(codes)), atol=1e-5)
    assert (gpu - cpu).abs().max() < BFLOAT16_ATOL


def test_a_positions_output_on_the_gpu_does_not_depend_on_its_batch(real_games):
    codes = real_codes(real_games).cuda()  # 300: one full batch of 256 and a padded one
    model = PolicyLikelihood(random_net(), device="cuda")
    together = model.probs_of_codes(codes)
    for k in (0, 255, 256, 299):
        assert torch.equal(model.probs_of_codes(codes[k : k + 1])[0], together[k])


def test_two_precisions_in_one_process_keep_their_own_arithmetic(real_games):
    codes = real_codes(real_games).cuda()
    net = random_net()
    plain = PolicyLikelihood(net, device="cuda")
    before = plain.probs_of_codes(codes)
    PolicyLikelihood(random_net(), device="cuda", precision="tf32").probs_of_codes(codes)
    assert torch.equal(plain.probs_of_codes(codes), before)


def test_annealing_on_the_gpu_alone_equals_in_a_batch(real_games):
    arrs = [clip(r, 10, "pro") for r in real_games[:20]]
    pairs = [(sgf_to_lz(a.black), sgf_to_lz(a.white)) for a in arrs]
    model = PolicyLikelihood.from_file(FIXTURE, device="cuda")
    cfg = SearchConfig(iterations=100, trials=2, seed=5, init="random")
    together = sa.anneal(PositionEvaluator(model, cache_size=0), pairs, cfg)
    for k in (0, 13):
        alone = sa.anneal(PositionEvaluator(model, cache_size=0), pairs[k : k + 1], cfg, indices=[k])
        for x, y in zip(together[k], alone[0]):
            assert x.moves == y.moves and x.log_likelihood == y.log_likelihood and x.accepted == y.accepted


def test_infer_set_on_the_default_device_matches_the_cpu_within_tolerance(tmp_path, real_games):
    """No --device: the GPU; its actual sequences' log-likelihoods against the CPU's."""
    arrs = [clip(r, 10, "pro") for r in real_games[:3]]
    write_jsonl(tmp_path / "10m.jsonl", arrs)
    rows = {}
    for device in ("default", "cpu"):
        extra = [] if device == "default" else ["--device", "cpu"]
        args = ["infer-set", "--arrangements", str(tmp_path / "10m.jsonl"), "--out", str(tmp_path / f"{device}.jsonl")]
        args += ["--table", str(tmp_path / f"{device}.csv"), "--network", str(FIXTURE), "--iterations", "20"]
        assert cli.main(args + ["--trials", "1", "--quiet", *extra]) == 0
        rows[device] = load_results(tmp_path / f"{device}.jsonl")
    for g, c in zip(rows["default"], rows["cpu"]):
        assert g["actual_log_likelihood"] == pytest.approx(c["actual_log_likelihood"], abs=1e-4)


def test_training_on_the_gpu_repeats_itself_and_resumes_to_the_same_weights(pro2_pool, tmp_path, monkeypatch):
    """cuDNN's deterministic algorithms and cuBLAS's fixed workspace: one seed, one set of weights; a run killed
    after its checkpoint and resumed (the checkpoint read onto the CPU) ends where the whole run ends."""
    cfg = TrainConfig(blocks=1, filters=8, steps=6, batch_size=16, heldout_positions=100, seed=6, checkpoint_every=3)
    first = train(pro2_pool, tmp_path / "one", cfg, device="cuda", progress=False)
    train(pro2_pool, tmp_path / "again", cfg, device="cuda", progress=False)
    assert first["device"] == "cuda"
    assert (tmp_path / "one/policy.txt.gz").read_bytes() == (tmp_path / "again/policy.txt.gz").read_bytes()
    assert killed_then_resumed(monkeypatch, pro2_pool, tmp_path / "two", cfg, "cuda") == 3
    assert (tmp_path / "one/policy.txt.gz").read_bytes() == (tmp_path / "two/policy.txt.gz").read_bytes()


def test_float32_training_metrics_on_the_gpu_are_the_cpus_evaluation(pro2_pool, tmp_path):
    """No TF32: cross_level's float32 re-evaluation on the CPU gives the GPU's metrics.json, within tolerance."""
    from moveorder.report.cross_level import heldout_table

    cfg = TrainConfig(blocks=2, filters=16, steps=20, batch_size=32, heldout_positions=500, seed=7, precision="float32")
    metrics = train(pro2_pool, tmp_path / "net", cfg, device="cuda", progress=False)
    table = heldout_table({"net": tmp_path / "net/model.pt"}, {"pro": pro2_pool}, cfg.heldout_fraction, cfg.seed, 500)
    row = table.iloc[0]
    assert row["mean_log_likelihood"] == pytest.approx(metrics["mean_log_likelihood"], abs=1e-5)
    assert np.isclose(
        row["top1_accuracy"], metrics["top1_accuracy"], atol=2 / metrics["positions"]
    )  # an argmax tie or two
    # The cross-level table run on the GPU (moveorder cross-level --device cuda) is the CPU's, in float32.
    on_gpu = heldout_table(
        {"net": tmp_path / "net/model.pt"}, {"pro": pro2_pool}, cfg.heldout_fraction, cfg.seed, 500, device="cuda"
    ).iloc[0]
    assert on_gpu["mean_log_likelihood"] == pytest.approx(row["mean_log_likelihood"], abs=1e-5)
    assert np.isclose(on_gpu["top1_accuracy"], row["top1_accuracy"], atol=2 / metrics["positions"])
