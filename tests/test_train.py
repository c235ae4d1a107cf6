"""Training's pieces: handicap boards, batch planes, the held-out split, the learning rate, the value head."""

import json
import math

import numpy as np
import pytest
import torch

from helpers import capture_at_30, filler_moves, handicap_sgf, killed_then_resumed, make_sgf, native_bfloat16_cpu
from moveorder.cli import main
from moveorder.data.records import load_records, read_sgf
from moveorder.go import coords
from moveorder.nets.features import board_history_planes
from moveorder.nets.networks import SYMMETRY_MAPS, LeelaNet, symmetry_planes
from moveorder.nets.sampling import PositionSampler, game_data, split_games
from moveorder.nets.train import autocast_dtype, lr_factor, train
from moveorder.report.cross_level import heldout_table
from moveorder.settings import TrainConfig


def test_handicap_game_starts_from_its_stones_with_white_to_move():
    moves = [m for m in filler_moves(30) if m not in ("dp", "pd")]
    gd = game_data(read_sgf(handicap_sgf(moves).encode(), "ha.sgf"))
    dp, pd = coords.to_flat(coords.from_sgf("dp")), coords.to_flat(coords.from_sgf("pd"))
    assert gd.boards[0][dp] == gd.boards[0][pd] == 1 and gd.boards[0].sum() == 2
    assert not gd.black_first and not gd.black_to_move()[0] and gd.black_to_move()[1]
    planes = board_history_planes(gd.boards, 0, False)
    # White to move: the handicap stones are the opponent's (plane 8), the side plane is White's (17).
    assert planes[8].sum() == 2 and planes[0].sum() == 0 and planes[17].all() and not planes[16].any()
    assert planes[9:16].sum() == 0  # no history before the first board


def test_batch_planes_equal_the_reference_builder():
    """Bit-packed batches give exactly board_history_planes' planes, for captures and handicap games too."""
    games = [
        game_data(read_sgf(t.encode(), f"g{i}.sgf"))
        for i, t in enumerate(
            [
                make_sgf(filler_moves(40)),
                make_sgf(capture_at_30()),
                handicap_sgf([m for m in filler_moves(30) if m not in ("dp", "pd")]),
                make_sgf(filler_moves(12)[:6] + [""] + filler_moves(12)[6:]),
            ]
        )
    ]
    sampler = PositionSampler(games)
    index = [(g, i) for g, gd in enumerate(games) for i in range(len(gd.targets))]
    assert len(sampler) == len(index) and sampler.games == 4
    rows = np.arange(len(sampler))
    x, t, z = sampler.batch(rows, None)
    for r, (g, i) in enumerate(index):
        black = bool(games[g].black_to_move()[i])
        assert np.array_equal(x[r].numpy(), board_history_planes(games[g].boards, i, black)), (g, i)
        assert t[r] == games[g].targets[i]


def test_symmetries_turn_planes_and_targets_together():
    gd = game_data(read_sgf(make_sgf(filler_moves(20)).encode(), "a.sgf"))
    sampler = PositionSampler([gd])
    rows = np.arange(len(sampler))
    x0, t0, _ = sampler.batch(rows, None)
    x, t, _ = sampler.batch(rows, np.random.default_rng(5))
    assert not torch.equal(x, x0)
    turned = 0
    for r in rows:  # each sample is one symmetry of the plain one, with its target turned alike
        fits = [s for s in range(8) if torch.equal(x[r], symmetry_planes(x0[r], s))]
        assert any(t[r] == SYMMETRY_MAPS[s][t0[r]] for s in fits), r
        turned += 0 not in fits
    assert turned > len(rows) // 2


def test_split_depends_on_each_game_alone(pro2_pool):
    recs = load_records(pro2_pool)
    _, held = split_games(recs, 0.1, seed=4)
    part = recs[::3]
    _, held_part = split_games(part, 0.1, seed=4)
    assert {r.id for r in held_part} == {r.id for r in held} & {r.id for r in part}
    assert 0.05 < len(held) / len(recs) < 0.15
    assert {r.id for r in split_games(recs, 0.1, seed=5)[1]} != {r.id for r in held}
    two = split_games(recs[:2], 0.01, seed=4)
    assert len(two[0]) == 1 and len(two[1]) == 1


def test_learning_rate_warms_up_then_follows_a_cosine():
    assert lr_factor(0, 1000, 100) == pytest.approx(0.01 * 1.0, rel=1e-3)
    assert lr_factor(49, 1000, 100) == pytest.approx(0.5 * 0.5 * (1 + math.cos(math.pi * 49 / 1000)))
    assert lr_factor(500, 1000, 100) == pytest.approx(0.5)
    assert lr_factor(999, 1000, 100) < 1e-4 and lr_factor(1000, 1000, 100) == 0
    assert lr_factor(0, 1000, 0) == 1.0
    assert lr_factor(10, 1000, 100, "constant") == pytest.approx(0.11) and lr_factor(500, 1000, 100, "constant") == 1
    with pytest.raises(ValueError, match="schedule"):
        lr_factor(0, 10, 1, "linear")


def test_training_follows_the_schedule(pro2_pool, tmp_path, monkeypatch):
    """The learning rate of each optimiser step is the schedule's, worked out by hand for 6 steps with 2 of
    warm-up (step 0 at half the peak; cosine: 0.5 (1 + cos(pi s / 6)) from step 1 on; constant: the peak),
    and the scheduler saved at the end holds the rate after the last step (cosine: 0; constant: the peak)."""
    base = dict(
        blocks=1, filters=8, steps=6, batch_size=16, lr=0.01, warmup_steps=2, heldout_positions=50, seed=2, threads=2
    )
    root3 = math.sqrt(3) / 2
    by_hand = {
        "cosine": ([0.5, 0.5 * (1 + root3), 0.75, 0.5, 0.25, 0.5 * (1 - root3)], 0.0),
        "constant": ([0.5, 1, 1, 1, 1, 1], 1.0),
    }
    seen = []
    adamw_step = torch.optim.AdamW.step

    def spy(self, *args, **kwargs):  # the rate each step of training is taken with
        seen.append(self.param_groups[0]["lr"])
        return adamw_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", spy)
    for schedule, (steps, after) in by_hand.items():
        seen.clear()
        train(pro2_pool, tmp_path / schedule, TrainConfig(**base, lr_schedule=schedule), device="cpu", progress=False)
        assert seen == pytest.approx([0.01 * f for f in steps], rel=1e-9, abs=1e-15), schedule
        state = torch.load(tmp_path / schedule / "checkpoint.pt", weights_only=False)
        assert state["scheduler"]["_last_lr"][0] == pytest.approx(0.01 * after, abs=1e-15)
        assert state["scheduler"]["last_epoch"] == 6


def value_params(net):
    return [p.detach().clone() for m in (net.value_conv, net.value_fc1, net.value_fc2) for p in m.parameters()]


def test_value_head_is_optional(pro2_pool, tmp_path):
    cfg = dict(blocks=1, filters=8, steps=8, batch_size=16, heldout_positions=200, seed=3, threads=2)
    torch.manual_seed(3)
    initial = value_params(LeelaNet(1, 8))
    for on in (True, False):
        out = tmp_path / str(on)
        m = train(pro2_pool, out, TrainConfig(**cfg, value_head=on), device="cpu", progress=False)
        net = LeelaNet(1, 8)
        net.load_state_dict(torch.load(out / "model.pt", weights_only=False)["model"])
        same = all(torch.equal(a, b) for a, b in zip(value_params(net), initial))
        assert same == (not on), on  # without the head, its weights stay as initialised
        assert json.loads((out / "metrics.json").read_text())["config"]["value_head"] == on
        # The held-out figures are the saved network's, read back from model.pt and re-evaluated on the
        # same held-out positions (200: a share of them is a whole number of positions).
        again = heldout_table(
            {"net": out / "model.pt"}, {"pool": pro2_pool}, TrainConfig().heldout_fraction, 3, 200
        ).iloc[0]
        assert m["positions"] == again["positions"] == 200 and (m["top1_accuracy"] * 200) % 1 == 0
        assert again["top1_accuracy"] == m["top1_accuracy"]
        assert again["mean_log_likelihood"] == pytest.approx(m["mean_log_likelihood"], abs=1e-9)
        # Where the time went, and the share of step time spent assembling batches.
        assert 0 <= m["data_share"] < 1 and m["seconds"]["compute"] > 0
    # Policy-only training repeats itself bit for bit too.
    train(pro2_pool, tmp_path / "again", TrainConfig(**cfg, value_head=False), device="cpu", progress=False)
    assert (tmp_path / "again/policy.txt.gz").read_bytes() == (tmp_path / "False/policy.txt.gz").read_bytes()


def test_a_killed_run_resumes_to_the_same_weights(pro2_pool, tmp_path, monkeypatch):
    cfg = TrainConfig(
        blocks=1,
        filters=8,
        steps=6,
        batch_size=16,
        heldout_positions=100,
        seed=6,
        threads=2,
        value_head=False,
        symmetries=True,
        checkpoint_every=3,
    )
    train(pro2_pool, tmp_path / "one", cfg, device="cpu", progress=False)
    assert killed_then_resumed(monkeypatch, pro2_pool, tmp_path / "two", cfg, "cpu") == 3
    assert (tmp_path / "one/policy.txt.gz").read_bytes() == (tmp_path / "two/policy.txt.gz").read_bytes()


def test_precision_choice():
    """``auto`` on a GPU by its compute capability: tests/test_devices.py."""
    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    assert autocast_dtype("float32", gpu) is None and autocast_dtype("bfloat16", cpu) == torch.bfloat16
    native = native_bfloat16_cpu()  # AVX-512 alone is not: oneDNN emulates bfloat16 there
    assert autocast_dtype("auto", cpu) == (torch.bfloat16 if native else None)
    with pytest.raises(ValueError, match="precision"):
        autocast_dtype("float16", cpu)


def test_bfloat16_training_repeats_itself(pro2_pool, tmp_path):
    cfg = TrainConfig(
        blocks=1,
        filters=8,
        steps=5,
        batch_size=16,
        heldout_positions=100,
        seed=8,
        threads=2,
        value_head=False,
        precision="bfloat16",
    )
    a = train(pro2_pool, tmp_path / "a", cfg, device="cpu", progress=False)
    train(pro2_pool, tmp_path / "b", cfg, device="cpu", progress=False)
    assert a["precision"] == "bfloat16"
    assert (tmp_path / "a/policy.txt.gz").read_bytes() == (tmp_path / "b/policy.txt.gz").read_bytes()
    c = train(
        pro2_pool, tmp_path / "c", TrainConfig(**{**cfg.__dict__, "precision": "float32"}), device="cpu", progress=False
    )
    assert c["precision"] == "float32"
    assert (tmp_path / "c/policy.txt.gz").read_bytes() != (tmp_path / "a/policy.txt.gz").read_bytes()


def test_pre_trained_weights_start_fine_tuning_where_they_are(pro2_pool):
    """Leela Zero's files fold each batch norm's shift into its mean; training mode normalises with the
    batch's mean, so copied naively the shipped network forgets its shifts. start_from re-expresses
    them: the eval-mode network is the file's, and in training mode it predicts nearly as well."""
    from moveorder.nets.networks import load_policy
    from moveorder.nets.train import start_from

    sampler = PositionSampler.from_records(load_records(pro2_pool)[:60])
    calibrate = sampler.batch(np.random.default_rng(1).integers(0, len(sampler), 512), None)[0]
    x, t, _ = sampler.batch(np.random.default_rng(2).integers(0, len(sampler), 512), None)
    source = load_policy("tygem")
    net = LeelaNet(source.blocks_n, source.filters)
    start_from(net, "tygem", calibrate)
    naive = LeelaNet(source.blocks_n, source.filters)
    naive.load_state_dict(source.state_dict())
    ce = torch.nn.functional.cross_entropy
    with torch.no_grad():
        reference = source.policy_logits(x)
        assert torch.allclose(net.eval().policy_logits(x), reference, atol=1e-4)
        eval_loss = ce(reference, t).item()
        assert eval_loss < 3.0  # a network that has learnt something
        assert abs(ce(net.train().policy_logits(x), t).item() - eval_loss) < 0.1
        assert ce(naive.train().policy_logits(x), t).item() > eval_loss + 2  # what the re-expression avoids
    with pytest.raises(ValueError, match=r"tygem\.txt\.gz: a 4x32 network cannot start the training of a 3x16"):
        start_from(LeelaNet(3, 16), "tygem", calibrate)


def test_fine_tuning_continues_the_pre_trained_network(pro2_pool, tmp_path):
    """A run with ``init`` starts from that network: a few steps at a tiny learning rate keep its
    held-out accuracy, which random weights are far from; its checkpoint cannot be resumed by a run
    with another ``init``."""
    from moveorder.nets import shipped

    tune = TrainConfig(
        blocks=4, filters=32, steps=2, batch_size=16, lr=1e-7, warmup_steps=0, seed=5, heldout_positions=2000,
        threads=1, value_head=False, init="tygem",
    )  # fmt: skip
    tuned = train(pro2_pool, tmp_path / "tuned", tune, device="cpu", progress=False)
    assert tuned["config"]["init"] == "tygem"
    before = heldout_table({"tygem": shipped.weights("tygem")}, {"pool": pro2_pool}, tune.heldout_fraction, 5, 2000)
    assert before.iloc[0]["top1_accuracy"] > 0.3
    assert tuned["top1_accuracy"] == pytest.approx(before.iloc[0]["top1_accuracy"], abs=0.01)
    scratch = train(
        pro2_pool, tmp_path / "scratch", TrainConfig(**{**tune.__dict__, "init": ""}), device="cpu", progress=False
    )
    assert scratch["top1_accuracy"] < 0.05
    with pytest.raises(ValueError, match="checkpoint was made with another configuration"):
        train(
            pro2_pool,
            tmp_path / "tuned",
            TrainConfig(**{**tune.__dict__, "init": "other"}),
            device="cpu",
            progress=False,
        )


def test_max_move_trains_and_measures_only_the_opening(pro2_pool, tmp_path):
    """``--max-move``: the positions before that move of each game, in training and in the held-out
    figures, through the command line; a checkpoint from before the option (no ``max_move`` in its
    configuration) still resumes a run on every position."""
    args = "--blocks 1 --filters 8 --steps 2 --batch-size 16 --warmup-steps 0 --no-value-head --seed 3 --threads 1"
    assert main(["train-policy", "--pool", str(pro2_pool), "--out-dir", str(tmp_path / "o"), "--max-move", "20",
                 *args.split(), "--quiet"]) == 0  # fmt: skip
    metrics = json.loads((tmp_path / "o/metrics.json").read_text())
    train_games, held_games = split_games(load_records(pro2_pool), 0.05, 3)
    assert metrics["config"]["max_move"] == 20
    assert metrics["train_positions"] == sum(min(20, len(r.move_list())) for r in train_games)
    assert metrics["heldout_positions_available"] == sum(min(20, len(r.move_list())) for r in held_games)
    cfg = TrainConfig(blocks=1, filters=8, steps=2, batch_size=16, warmup_steps=0, value_head=False, seed=3)
    train(pro2_pool, tmp_path / "all", cfg, device="cpu", progress=False)
    state = torch.load(tmp_path / "all/checkpoint.pt", weights_only=False)
    del state["config"]["max_move"]
    torch.save(state, tmp_path / "all/checkpoint.pt")
    again = train(pro2_pool, tmp_path / "all", cfg, device="cpu", progress=False)  # resumed at its last step
    assert again["train_positions"] == sum(len(r.move_list()) for r in train_games) > metrics["train_positions"]
