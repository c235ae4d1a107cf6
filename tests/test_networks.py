"""Our torch Leela Zero network against the real leelaz, the weights format, and training."""

import json

import numpy as np
import pytest
import torch

from helpers import FIXTURE, OPENING
from leelaz_ref import heatmaps
from moveorder.go import coords
from moveorder.nets.features import board_history_planes, sequence_planes
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.nets.networks import load_leela, load_policy, policy_probs
from moveorder.nets.sampling import game_data
from moveorder.nets.train import train
from moveorder.settings import TrainConfig

SECOND = [
    "pd",
    "dp",
    "qp",
    "dd",
    "fq",
    "cn",
    "nq",
    "qf",
    "nc",
    "rd",
    "qc",
    "qi",
    "pl",
    "jp",
    "ep",
    "eq",
    "dq",
    "fp",
    "eo",
    "gq",
    "cq",
    "fr",
]  # a second opening; its move 22 (fr) captures at fq

# 24 positions: every prefix of one opening (both colours to move, history up to 8 moves back)
# and three of another.
POSITIONS = [OPENING[:k] for k in range(0, 21)] + [SECOND[:k] for k in (9, 16, 21)]


def gtp(moves):
    return [coords.to_gtp(coords.from_sgf(m)) for m in moves]


def our_probs(net, positions, average=False):
    out = []
    for moves in positions:
        seq = torch.tensor([coords.sgf_to_lz(moves) + [0]])
        planes = sequence_planes(seq, torch.tensor([[len(moves)]])).view(1, 18, 19, 19)
        with torch.no_grad():
            out.append(policy_probs(net, planes, average)[0].double().numpy())
    return out


def assert_matches_leelaz(net, weights_path, positions, mode=""):
    ref = heatmaps(str(weights_path), [gtp(m) for m in positions], mode)
    ours = our_probs(net, positions, average=(mode == "average"))
    checked = 0
    for moves, printed, p in zip(positions, ref, ours):
        occupied = set(coords.sgf_to_lz(moves))
        for k in range(362):
            if k in occupied:
                assert printed[k] == 0
                continue
            # leelaz prints int(p * 1000): ours must truncate to the same permille.
            assert printed[k] - 1e-3 <= p[k] * 1000 < printed[k] + 1 + 1e-3, (moves, k, printed[k], p[k])
            checked += 1
    return checked, ref


def test_fixture_matches_leelaz():
    net = load_leela(FIXTURE)
    assert (net.blocks_n, net.filters) == (1, 8)
    checked, _ = assert_matches_leelaz(net, FIXTURE, POSITIONS)
    assert checked > 24 * 330


def test_trained_network_learns_and_exports(trained):
    out, metrics, _ = trained
    # 300 small steps on one thread (conftest): held out, top-1 0.0113 (26 of 2,307 positions) and a mean
    # log-likelihood of -5.662, against 1/362 and -5.89 for a uniform policy; a network that learned
    # nothing (say, no optimiser steps) stays at about those.
    assert metrics["positions"] == 2307 and metrics["top1_accuracy"] >= 20 / 2307
    assert metrics["mean_log_likelihood"] > -5.68
    # What professionals do, which a uniform or scrambled policy does not: on the empty board the third
    # and fourth lines (the 3-3, 3-4, 4-4 openings) get well over uniform, the first line almost nothing.
    empty = sequence_planes(torch.tensor([[0]]), torch.tensor([[0]])).view(1, 18, 19, 19)
    with torch.no_grad():
        p = policy_probs(load_policy(out / "model.pt"), empty)[0]
    line = [min(r, c, 18 - r, 18 - c) + 1 for r, c in map(coords.from_lz, range(361))]
    mean_on = {k: float(np.mean([float(p[i]) for i in range(361) if line[i] == k])) * 361 for k in (1, 3, 4)}
    assert mean_on[3] > 2 and mean_on[4] > 2 and mean_on[1] < 0.1, mean_on
    assert json.loads((out / "metrics.json").read_text())["top1_accuracy"] == metrics["top1_accuracy"]
    ours = load_policy(out / "model.pt")
    exported = load_policy(out / "policy.txt.gz")
    x = sequence_planes(torch.tensor([coords.sgf_to_lz(OPENING)]))
    x = x.view(-1, 18, 19, 19)
    with torch.no_grad():
        a, b = policy_probs(ours, x), policy_probs(exported, x)
    assert torch.allclose(a, b, atol=1e-5)


def test_trained_network_matches_leelaz(trained):
    out, _, _ = trained
    net = load_policy(out / "policy.txt.gz")
    checked, ref = assert_matches_leelaz(net, out / "policy.txt.gz", POSITIONS)
    # The trained policy is far from flat, so the permille check has teeth.
    assert max(int(r[:361].max()) for r in ref) >= 20


def test_symmetry_average_matches_leelaz(trained):
    out, _, _ = trained
    net = load_policy(out / "policy.txt.gz")
    assert_matches_leelaz(net, out / "policy.txt.gz", POSITIONS[5:9], mode="average")


def test_training_is_reproducible(trained, pro2_pool, tmp_path):
    """The same seed gives the same weights file, byte for byte (what makes a SLURM run equal a local one)."""
    _, _, cfg = trained
    short = TrainConfig(**{**cfg.__dict__, "steps": 20, "heldout_positions": 200, "threads": 2})
    a, b = tmp_path / "a", tmp_path / "b"
    train(pro2_pool, a, short, device="cpu", progress=False)
    train(pro2_pool, b, short, device="cpu", progress=False)
    assert (a / "policy.txt.gz").read_bytes() == (b / "policy.txt.gz").read_bytes()
    other = TrainConfig(**{**short.__dict__, "seed": short.seed + 1})
    train(pro2_pool, tmp_path / "c", other, device="cpu", progress=False)
    assert (tmp_path / "c/policy.txt.gz").read_bytes() != (a / "policy.txt.gz").read_bytes()


def test_resume_continues_from_checkpoint(trained, pro2_pool):
    out, metrics, cfg = trained
    # Rerunning with the same config finds the final checkpoint and only evaluates.
    again = train(pro2_pool, out, cfg, device="cpu", progress=False)
    assert again["top1_accuracy"] == metrics["top1_accuracy"]
    other = TrainConfig(**{**cfg.__dict__, "steps": cfg.steps + 1})
    with pytest.raises(ValueError, match="another configuration"):
        train(pro2_pool, out, other, device="cpu", progress=False)


def test_history_planes_with_captures_match_sequence_planes():
    """For a capture-free game both feature builders agree, position by position."""
    from helpers import filler_moves, make_sgf
    from moveorder.data.records import read_sgf

    rec = read_sgf(make_sgf(filler_moves(30)).encode(), "x.sgf")
    gd = game_data(rec)
    seq = torch.tensor([[coords.to_lz(m) for m in rec.move_list()]])
    ours = sequence_planes(seq)[0].numpy()
    for i in range(30):
        assert np.array_equal(board_history_planes(gd.boards, i, i % 2 == 0), ours[i])


def test_capture_history_against_leelaz():
    """After a capture, history planes still show the captured stone in earlier boards, as leelaz does."""
    moves = ["dd", "ed", "pp", "dc", "pd", "de", "dp", "cd"]  # white captures D16 (dd) at move 8
    net = load_leela(FIXTURE)
    from helpers import make_sgf
    from moveorder.data.records import read_sgf

    gd = game_data(read_sgf(make_sgf(moves).encode(), "cap.sgf"))
    assert gd.boards[-1][coords.to_flat(coords.from_sgf("dd"))] == 0
    planes = torch.from_numpy(board_history_planes(gd.boards, len(moves), True))[None]
    with torch.no_grad():
        p = policy_probs(net, planes)[0].numpy()
    printed = heatmaps(str(FIXTURE), [gtp(moves)])[0]
    occupied = set(coords.sgf_to_lz(m for m in moves if m != "dd"))
    for k in range(362):
        if k not in occupied:
            assert printed[k] - 1e-3 <= p[k] * 1000 < printed[k] + 1 + 1e-3


def test_likelihood_interface_positions_subset():
    model = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    seq = torch.tensor([coords.sgf_to_lz(OPENING)] * 2)
    full = model.log_probs(seq)
    part = model.log_probs(seq, torch.tensor([[3, 7], [0, 19]]))
    assert torch.allclose(part[0], full[0, [3, 7]]) and torch.allclose(part[1], full[1, [0, 19]])
    legal = PolicyLikelihood.from_file(FIXTURE, device="cpu", legal_only=True).log_probs(seq)
    assert (legal[:, 1:] > full[:, 1:]).all()  # renormalising over fewer points raises each probability


def test_zip_and_plain_text_weights_load_alike(tmp_path):
    import gzip
    import zipfile

    text = gzip.decompress(FIXTURE.read_bytes())
    (tmp_path / "w.txt").write_bytes(text)
    with zipfile.ZipFile(tmp_path / "w.txt.zip", "w") as z:
        z.writestr("w.txt", text)
    a, b = load_leela(tmp_path / "w.txt"), load_leela(tmp_path / "w.txt.zip")
    x = sequence_planes(torch.tensor([coords.sgf_to_lz(OPENING)])).view(-1, 18, 19, 19)
    with torch.no_grad():
        assert torch.equal(policy_probs(a, x), policy_probs(b, x))
    (tmp_path / "v2.txt").write_text("2\n" + "0\n" * 20)
    with pytest.raises(ValueError, match="version"):
        load_leela(tmp_path / "v2.txt")


def test_train_policy_verb_trains_what_it_is_told_and_leelaz_reads_its_export(pro2_pool, tmp_path):
    """`moveorder train-policy` on a few steps: the network has the size asked for, its metrics are its
    own, and Leela Zero itself reads the exported weights and gives the policy ours gives."""
    from moveorder import cli

    args = ["train-policy", "--pool", str(pro2_pool), "--out-dir", str(tmp_path), "--blocks", "1", "--filters", "8"]
    args += ["--steps", "4", "--batch-size", "16", "--seed", "3", "--threads", "1", "--device", "cpu", "--quiet"]
    assert cli.main(args) == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["config"]["steps"] == 4 and metrics["config"]["blocks"] == 1 and metrics["config"]["seed"] == 3
    net = load_policy(tmp_path / "model.pt")
    assert (net.blocks_n, net.filters) == (1, 8)
    checked, _ = assert_matches_leelaz(net, tmp_path / "policy.txt.gz", POSITIONS[:6])
    assert checked > 6 * 340


def test_shipped_network_matches_leelaz():
    """The network shipped as the default likelihood is a Leela Zero weights file that leelaz itself reads alike."""
    from moveorder import settings
    from moveorder.nets import shipped

    net = load_policy(settings.SHIPPED_NETWORK)
    checked, ref = assert_matches_leelaz(net, shipped.weights(settings.SHIPPED_NETWORK), POSITIONS[:6])
    assert checked > 6 * 330
    # A trained human policy: on the empty board its favourite point holds over 10% of the mass.
    assert int(ref[0][:361].max()) >= 100
