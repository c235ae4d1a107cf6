"""moveorder.nets.likelihood, the one likelihood path: input keys, the evaluator's cache, legal_only, precision,
and the heatmap against leelaz."""

import pytest
import torch

from helpers import FIXTURE, OPENING
from leelaz_ref import heatmaps
from moveorder import cli
from moveorder.go import coords
from moveorder.nets.features import position_codes, sequence_planes
from moveorder.nets.likelihood import InputHasher, PolicyLikelihood, PositionEvaluator, policy_heatmap
from moveorder.nets.networks import FusedPolicy, policy_probs


def random_sequences(count, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(361, generator=g)[:n] for _ in range(count)])


def test_input_keys_are_equal_exactly_when_the_network_inputs_are():
    base = random_sequences(1, 24, seed=3)[0]
    # Swapping two Black stones played 10 and 8 moves before position 16 leaves its input alone
    # (both are older than the 7-move window), but changes the input at position 14.
    other = base.clone()
    other[[2, 4]] = base[[4, 2]]
    seqs = torch.stack([base, other])
    hasher = InputHasher("cpu")
    rows = torch.tensor([0, 1, 0, 1])
    pos = torch.tensor([16, 16, 6, 6])
    keys = hasher.keys(seqs, rows, pos)
    codes = position_codes(seqs, rows, pos)
    assert keys[0] == keys[1] and torch.equal(codes[0], codes[1])
    assert keys[2] != keys[3] and not torch.equal(codes[2], codes[3])
    # Many random positions: equal keys <=> equal codes.
    seqs = random_sequences(20, 20, seed=5)
    g = torch.Generator().manual_seed(6)
    tails = torch.stack([12 + torch.randperm(8, generator=g) for _ in range(20)])
    seqs = torch.cat([seqs, torch.cat([seqs[:, :12], seqs.gather(1, tails)], 1)])  # shared openings repeat inputs
    rows = torch.arange(40).repeat_interleave(20)
    pos = torch.arange(20).repeat(40)
    keys = hasher.keys(seqs, rows, pos)
    codes = position_codes(seqs, rows, pos)
    _, key_groups = torch.unique(keys, return_inverse=True)
    _, code_groups = torch.unique(codes, dim=0, return_inverse=True)
    assert (
        len(set(zip(key_groups.tolist(), code_groups.tolist())))
        == len(set(key_groups.tolist()))
        == len(set(code_groups.tolist()))
        < len(keys)
    )
    # Sums wrap modulo 2^64 like the reference computed with Python integers.
    ref = int(hasher.prefix(seqs[:1])[0, -1])
    total = sum(int(hasher.stone[i % 2, int(m)]) for i, m in enumerate(seqs[0]))
    assert (ref - total) % (1 << 64) == 0


@pytest.fixture(scope="module")
def model():
    return PolicyLikelihood.from_file(FIXTURE, device="cpu")


def test_cache_changes_speed_not_results(model):
    seqs = random_sequences(4, 16, seed=9)
    seqs = torch.cat([seqs, torch.cat([seqs[:, :10], seqs[:, 10:].flip(1)], 1)])  # shared openings
    rows = torch.arange(8).repeat_interleave(16)
    pos = torch.arange(16).repeat(8)
    cached = PositionEvaluator(model, cache_size=1 << 16)
    first = cached.probs(seqs, rows, pos)
    again = cached.log_probs(seqs, rows, pos)
    plain = PositionEvaluator(model, cache_size=0, dedupe=False)
    assert torch.equal(first, plain.probs(seqs, rows, pos))
    assert torch.equal(again, plain.log_probs(seqs, rows, pos))
    assert cached.hits == len(rows) and cached.evaluations < len(rows)  # repeats merged, second call all hits
    assert torch.equal(cached.sequence_log_probs(seqs), model.log_probs(seqs).double())


def test_legal_only_and_symmetries_go_through_the_one_path():
    seq = torch.tensor([coords.sgf_to_lz(OPENING)])
    planes = sequence_planes(seq).view(-1, 18, 19, 19)
    for symmetries in (False, True):
        raw = PolicyLikelihood.from_file(FIXTURE, device="cpu", average_symmetries=symmetries)
        legal = PolicyLikelihood.from_file(FIXTURE, device="cpu", average_symmetries=symmetries, legal_only=True)
        with torch.no_grad():
            probs = policy_probs(raw.net, planes, symmetries)
        empty = (planes[:, 0] + planes[:, 8]).view(-1, 361) == 0
        mass = (probs[:, :361] * empty).sum(1) + probs[:, 361]
        expected = probs.gather(1, seq.T).squeeze(1)
        for ev_raw, ev_legal in (
            (PositionEvaluator(raw), PositionEvaluator(legal)),
            (PositionEvaluator(raw, cache_size=0, dedupe=False), PositionEvaluator(legal, cache_size=0, dedupe=False)),
        ):
            got_raw = ev_raw.sequence_log_probs(seq)[0].exp()
            got_legal = ev_legal.sequence_log_probs(seq)[0].exp()
            assert torch.allclose(got_raw, expected.double(), rtol=1e-5)
            assert torch.allclose(got_legal, (expected / mass).double(), rtol=1e-5)
            assert (got_legal[1:] > got_raw[1:]).all()


def test_precision_is_checked_and_bfloat16_runs():
    net = PolicyLikelihood.from_file(FIXTURE, device="cpu").net
    with pytest.raises(ValueError, match="tf32 needs a CUDA device"):
        PolicyLikelihood(net, device="cpu", precision="tf32")
    with pytest.raises(ValueError, match="precision"):
        PolicyLikelihood(net, device="cpu", precision="float8")
    seq = torch.tensor([coords.sgf_to_lz(OPENING)])
    f32 = PolicyLikelihood(net, device="cpu").log_probs(seq)
    bf16 = PolicyLikelihood(net, device="cpu", precision="bfloat16").log_probs(seq)
    assert not torch.equal(f32, bf16) and torch.allclose(f32, bf16, atol=0.1)


def test_float32_on_a_cpu_runs_a_fused_copy_of_the_policy_with_the_modules_outputs():
    lik = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    planes = (torch.rand(70, 18, 19, 19, generator=torch.Generator().manual_seed(1)) > 0.7).float()
    got = lik.probs_of_planes(planes)  # two batches of 64, the second padded
    assert isinstance(lik._policy, FusedPolicy)
    with torch.no_grad():
        expected = policy_probs(lik.net, planes)
    assert torch.allclose(got, expected, atol=1e-6)
    # The fused copy holds the weights it was made with: changing the module afterwards does not
    # reach it (a likelihood evaluates the network it was given).
    with torch.no_grad():
        lik.net.policy_fc.bias.add_(1.0 * torch.arange(362) / 362)
    assert torch.allclose(lik.probs_of_planes(planes), got, atol=1e-6)
    # bfloat16 autocast runs the module itself.
    assert PolicyLikelihood(lik.net, device="cpu", precision="bfloat16")._policy is lik.net


def test_policy_heatmap_is_leelaz_heatmap(capsys):
    """`moveorder policy` prints what leelaz's GTP heatmap prints (permille, occupied points 0), A1 included."""
    moves = ["A1", "Q16", "D4", "T19", "K10"]
    assert cli.main(["policy", str(FIXTURE), *moves]) == 0
    printed_by_cli = capsys.readouterr().out
    assert printed_by_cli == policy_heatmap(FIXTURE, [coords.from_gtp(m) for m in moves]) + "\n"
    ours = [line.split() for line in printed_by_cli.splitlines()]
    printed = heatmaps(str(FIXTURE), [moves])[0]
    grid = [[int(v) for v in row] for row in ours[:19]]
    assert ours[19][0] == "pass:" and abs(int(ours[19][1]) - printed[361]) <= 1
    for r in range(19):  # ours: top row first; printed: Leela Zero order
        for c in range(19):
            k = coords.to_lz((r, c))
            assert abs(grid[r][c] - printed[k]) <= 1, (r, c)  # truncation to permille may differ by one
            if coords.to_gtp((r, c)) in moves:
                assert grid[r][c] == 0 == printed[k]
