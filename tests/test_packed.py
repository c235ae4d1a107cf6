"""A packed pool: the same positions, planes, targets and trained network as its JSONL pool."""

import logging

import numpy as np
import pytest
import torch

from helpers import capture_at_30, filler_moves, handicap_sgf, make_sgf
from moveorder.cli import main
from moveorder.data.records import load_records, read_sgf
from moveorder.nets import packed as packed_module
from moveorder.nets.packed import (
    NEVER,
    PackedPool,
    PackedSampler,
    game_moves,
    pack_file,
    pack_pool,
    pack_records,
    starts_empty,
)
from moveorder.nets.sampling import PositionSampler
from moveorder.nets.train import train
from moveorder.settings import TrainConfig


def _from_empty(path):
    return [r for r in load_records(path) if starts_empty(r)]


def test_capture_numbers_follow_the_board():
    rec = read_sgf(make_sgf(capture_at_30()).encode(), "c.sgf")
    points, captured = game_moves(rec)
    taken = np.flatnonzero(captured != NEVER)
    assert len(taken) == 1  # one white stone, taken by move 31 (number 30)
    assert captured[taken[0]] == 30 and taken[0] % 2 == 1 and len(points) > 31


def test_packed_batches_equal_the_replayed_ones(pro2_usable):
    """Real games with captures and passes: every position's planes, target and value are the
    bit-packed sampler's, with and without symmetries (the same draws)."""
    records = _from_empty(pro2_usable)[:40]
    records.append(read_sgf(make_sgf(filler_moves(12)[:6] + [""] + filler_moves(12)[6:]).encode(), "pass.sgf"))
    reference = PositionSampler.from_records(records)
    assert any(c != NEVER for c in pack_records(records).captured)
    packed = PackedSampler(pack_records(records), range(len(records)))
    assert len(packed) == len(reference) and packed.games == reference.games
    rows = np.random.default_rng(0).permutation(len(reference))[:3000]
    for rng in (None, 7):
        x0, t0, z0 = reference.batch(rows, None if rng is None else np.random.default_rng(rng))
        x1, t1, z1 = packed.batch(rows, None if rng is None else np.random.default_rng(rng))
        assert torch.equal(x0, x1) and torch.equal(t0, t1) and torch.equal(z0, z1)
        # torch.equal compares values across types: the types too (float32 planes and values, int64 moves)
        assert (
            [v.dtype for v in (x0, t0, z0)]
            == [v.dtype for v in (x1, t1, z1)]
            == [torch.float32, torch.int64, torch.float32]
        )


def test_a_subset_of_games_numbers_its_positions_in_order(pro2_usable):
    records = _from_empty(pro2_usable)[:10]
    pool = pack_records(records)
    some = [7, 2, 5]
    reference = PositionSampler.from_records([records[i] for i in some])
    packed = PackedSampler(pool, some)
    rows = np.arange(len(reference))
    assert len(packed) == len(reference)
    assert torch.equal(packed.batch(rows, None)[0], reference.batch(rows, None)[0])


def sgfmill_moves_and_winner(path):
    """A game's moves as Leela Zero indices (361: pass) and its winner (+1 Black, -1 White, 0 none),
    read by sgfmill from the SGF file itself: its points count rows from the bottom, as Leela Zero's."""
    from sgfmill import sgf

    game = sgf.Sgf_game.from_bytes(path.read_bytes())
    moves = [n.get_move() for n in game.get_main_sequence()[1:]]
    moves = [(c, m) for c, m in moves if c is not None]
    assert [c for c, _ in moves] == ["b", "w"] * (len(moves) // 2) + ["b"] * (len(moves) % 2)
    points = [361 if m is None else m[0] * 19 + m[1] for _, m in moves]
    return points, {"b": 1, "w": -1, None: 0}[game.get_winner()]


@pytest.mark.parametrize("max_move", [0, 40])
def test_a_subset_of_games_has_its_own_moves_and_results_as_targets(pro2_usable, max_move):
    """Policy and value targets of a subset of games (in the subset's order, each game's first
    ``max_move`` moves if given): each position's move and result from its own SGF file, read by
    sgfmill; the value from the side to move's view (+1: the mover won)."""
    records = _from_empty(pro2_usable)[:10]
    pool = pack_records(records)
    some = [7, 2, 5]
    targets, values = [], []
    for g in some:
        points, winner = sgfmill_moves_and_winner(pro2_usable.parent / "x" / records[g].source)
        points = points[:max_move] if max_move else points
        targets += points
        values += [winner if i % 2 == 0 else -winner for i in range(len(points))]
    assert len(set(targets[:40])) > 30 and {1, -1} <= set(values)  # real moves, both results seen
    packed = PackedSampler(pool, some, max_move=max_move)
    assert len(packed) == len(targets) and packed.games == 3
    rows = np.random.default_rng(1).permutation(len(targets))
    _, t, z = packed.batch(rows, None)
    assert t.tolist() == [targets[r] for r in rows]
    assert z.tolist() == [values[r] for r in rows]


def test_max_move_keeps_each_games_opening_alike_in_both_samplers(pro2_usable):
    """``max_move``: each game's positions before that move, numbered as the whole game's first ones,
    the same in the replayed and the packed sampler (a capture after the cut is never reached)."""
    records = _from_empty(pro2_usable)[:12]
    full = PositionSampler.from_records(records)
    cut = PositionSampler.from_records(records, max_move=30)
    packed = PackedSampler(pack_records(records), range(len(records)), max_move=30)
    assert len(cut) == sum(min(30, len(r.move_list())) for r in records) < len(full)
    assert len(packed) == len(cut) and cut.games == full.games == packed.games
    first = np.concatenate(
        [np.flatnonzero(full.move_no == 0)[g] + np.arange(min(30, len(r.move_list()))) for g, r in enumerate(records)]
    )
    rows = np.arange(len(cut))
    x_cut, t_cut, _ = cut.batch(rows, None)
    x_full, t_full, _ = full.batch(first, None)
    assert torch.equal(x_cut, x_full) and torch.equal(t_cut, t_full)
    assert torch.equal(packed.batch(rows, None)[0], x_cut)
    assert int(cut.move_no.max()) == 29


def test_the_file_round_trips_and_parallel_packing_changes_nothing(pro2_usable, tmp_path):
    records = _from_empty(pro2_usable)[:30]
    one, two = pack_records(records), pack_pool(records, processes=2)
    one.save(tmp_path / "p.npz")
    back = PackedPool.load(tmp_path / "p.npz")
    for k in ("ids", "offsets", "points", "captured", "winner"):
        assert np.array_equal(getattr(back, k), getattr(one, k)) and np.array_equal(getattr(two, k), getattr(one, k))


def test_training_on_the_packed_pool_makes_the_same_network(pro2_pool, tmp_path):
    records = _from_empty(pro2_pool)
    jsonl = tmp_path / "pool.jsonl"
    jsonl.write_text("".join(r.to_json() + "\n" for r in records))
    assert main(["pack-pool", "--pool", str(jsonl), "--out", str(tmp_path / "pool.npz"), "--quiet"]) == 0
    cfg = TrainConfig(blocks=1, filters=8, steps=4, batch_size=32, heldout_positions=500, seed=3, threads=1)
    a = train(jsonl, tmp_path / "a", cfg, device="cpu", progress=False)
    b = train(tmp_path / "pool.npz", tmp_path / "b", cfg, device="cpu", progress=False)
    for k in ("train_games", "heldout_games", "train_positions", "top1_accuracy", "mean_log_likelihood"):
        assert a[k] == b[k], k
    wa = torch.load(tmp_path / "a" / "model.pt", weights_only=False)["model"]
    wb = torch.load(tmp_path / "b" / "model.pt", weights_only=False)["model"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_what_cannot_be_packed_is_refused(tmp_path):
    ha = read_sgf(handicap_sgf([m for m in filler_moves(10) if m not in ("dp", "pd")]).encode(), "ha.sgf")
    with pytest.raises(ValueError, match="setup stones"):
        game_moves(ha)
    (tmp_path / "x.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="x.npz: not a packed pool"):
        PackedPool.load(tmp_path / "x.npz")
    np.savez(tmp_path / "y.npz", ids=np.array(["a"]))
    with pytest.raises(ValueError, match="y.npz: not a packed pool .no offsets"):
        PackedPool.load(tmp_path / "y.npz")
    pool = tmp_path / "ha.jsonl"
    pool.write_text(ha.to_json() + "\n")
    assert main(["pack-pool", "--pool", str(pool), "--out", str(tmp_path / "ha.npz"), "--quiet"]) == 2
    assert not (tmp_path / "ha.npz").exists()


def test_pack_pool_names_the_file_and_game_it_refuses(tmp_path, caplog):
    ha = read_sgf(handicap_sgf([m for m in filler_moves(10) if m not in ("dp", "pd")]).encode(), "ha.sgf")
    pool = tmp_path / "ha.jsonl"
    pool.write_text(ha.to_json() + "\n")
    assert main(["pack-pool", "--pool", str(pool), "--out", str(tmp_path / "ha.npz"), "--quiet"]) == 2
    assert f"{pool}: game {ha.id}: setup stones" in caplog.text and "nothing written" in caplog.text
    assert not (tmp_path / "ha.npz").exists()


def test_even_only_leaves_handicap_games_out(pro2_usable, tmp_path, caplog):
    ha = read_sgf(handicap_sgf([m for m in filler_moves(10) if m not in ("dp", "pd")]).encode(), "ha.sgf")
    even = _from_empty(pro2_usable)[:3]
    pool = tmp_path / "mixed.jsonl"
    pool.write_text("".join(r.to_json() + "\n" for r in [even[0], ha, *even[1:]]))
    out = tmp_path / "even.npz"
    caplog.set_level(logging.INFO)
    assert main(["pack-pool", "--pool", str(pool), "--out", str(out), "--even-only", "--quiet"]) == 0
    packed = PackedPool.load(out)
    assert list(packed.ids) == [r.id for r in even]
    assert "1 of 4 games left out" in caplog.text


def hand_made_records():
    """Three even games of known lengths (10 quiet moves; a capture at move 31 in 60; 13 with a pass)
    and a handicap game, in that order, the handicap game second."""
    sgfs = [
        (make_sgf(filler_moves(10)), 10),
        (handicap_sgf([m for m in filler_moves(10) if m not in ("dp", "pd")]), None),
        (make_sgf(capture_at_30()), len(capture_at_30())),
        (make_sgf(filler_moves(12)[:6] + [""] + filler_moves(12)[6:]), 13),
    ]
    return [(read_sgf(s.encode(), f"g{i}.sgf"), n) for i, (s, n) in enumerate(sgfs)]


def test_pack_file_by_hand_its_log_its_defaults_and_its_processes(tmp_path, caplog, monkeypatch):
    """`pack_file`: the log names the pool, the games left out, the games and positions packed (counted
    by hand) and the file; by default a handicap game is refused, nothing written, with one process;
    ``processes`` reaches the replay; an output that is not .npz is refused."""
    games = hand_made_records()
    assert games[2][1] == 60
    pool = tmp_path / "mixed.jsonl"
    pool.write_text("".join(r.to_json() + "\n" for r, _ in games))
    calls = []
    real = packed_module.pack_pool
    monkeypatch.setattr(
        packed_module, "pack_pool", lambda records, processes=1: calls.append(processes) or real(records)
    )
    out = tmp_path / "deep" / "er" / "even.npz"  # folders made as needed
    with pytest.raises(ValueError) as err:
        pack_file(pool, out)
    assert str(err.value).startswith(f"{pool}: game {games[1][0].id}: setup stones") and "nothing written" in str(err)
    assert not out.exists() and calls == [1]
    caplog.set_level(logging.INFO, logger="moveorder.nets.packed")
    packed = pack_file(pool, out, processes=3, even_only=True)
    assert calls == [1, 3] and list(PackedPool.load(out).ids) == [games[i][0].id for i in (0, 2, 3)]
    assert [r.getMessage() for r in caplog.records if r.name == "moveorder.nets.packed"] == [
        f"{pool}: 1 of 4 games left out (setup stones or White first)",
        f"{pool}: 3 games, {10 + 60 + 13} positions packed into {out}",
    ]
    assert len(packed) == 3 and len(packed.points) == 83
    with pytest.raises(ValueError, match=r"^x\.zip: a packed pool is an \.npz file$"):
        pack_file(pool, "x.zip")


def test_a_file_lacking_arrays_is_refused_naming_each(tmp_path):
    np.savez(tmp_path / "y.npz", ids=np.array(["a"]))
    with pytest.raises(ValueError) as err:
        PackedPool.load(tmp_path / "y.npz")
    path = tmp_path / "y.npz"
    assert (
        str(err.value) == f"{path}: not a packed pool (no offsets, points, captured, winner); make one with pack-pool"
    )


def test_parallel_packing_keeps_the_arrays_types_and_the_samplers_moves(pro2_usable):
    """Packed in 2 processes (joined by `concatenate`): the same arrays, of the same types (offsets are
    integers that index the moves), and a sampler over them gives each game's moves as targets."""
    records = _from_empty(pro2_usable)[:8]
    one, two = pack_records(records), pack_pool(records, processes=2)
    assert two.offsets.dtype == np.int64 and two.points.dtype == np.int16 and two.captured.dtype == np.int16
    assert two.winner.dtype == np.int8 and one.offsets.dtype == np.int64
    _, t, _ = PackedSampler(two, [6, 1]).batch(np.arange(20), None)
    expected, _ = sgfmill_moves_and_winner(pro2_usable.parent / "x" / records[6].source)
    assert t.tolist() == expected[:20]


def test_a_sampler_of_no_games_has_no_positions():
    """No games (a held-out share that holds none): no positions, in any list of games."""
    pool = pack_records([r for r, n in hand_made_records() if n])
    for games in ([], np.zeros(0, np.int64), range(0)):
        sampler = PackedSampler(pool, games)
        assert len(sampler) == 0 and sampler.games == 0


def test_batches_are_built_on_the_samplers_device():
    """On torch's meta device (shapes and devices, no values): the planes and policy targets are made
    there, the value targets on the host."""
    pool = pack_records([r for r, n in hand_made_records() if n])
    sampler = PackedSampler(pool, [2, 0], device="meta")
    assert sampler.device == torch.device("meta") and len(sampler) == 13 + 10
    x, t, z = sampler.batch(np.arange(23), np.random.default_rng(0))
    assert (x.device.type, t.device.type, z.device.type) == ("meta", "meta", "cpu")
    assert x.shape == (23, 18, 19, 19) and t.shape == (23,) and z.shape == (23,)
    assert PackedSampler(pool, [0]).device == torch.device("cpu")


def test_the_replay_is_spread_over_processes_with_at_least_two_games_each(monkeypatch):
    """`pack_pool`: one process unless asked for more and there are at least two games a process; then a
    pool of that many forked processes; the same arrays either way."""
    import multiprocessing

    games = [r for r, n in hand_made_records() if n]
    games.append(read_sgf(make_sgf(filler_moves(20)).encode(), "g4.sgf"))  # four even games
    pools = []
    real = multiprocessing.get_context

    class Spy:
        def __init__(self, method):
            self.method, self.ctx = method, real(method)

        def Pool(self, n):
            pools.append((self.method, n))
            return self.ctx.Pool(n)

    monkeypatch.setattr(multiprocessing, "get_context", Spy)
    one = pack_records(games)
    for records, processes, used in (
        (games, None, []),
        (games, 1, []),
        (games, 2, [("fork", 2)]),
        (games[:3], 2, []),
        (games, 3, []),
    ):
        pools.clear()
        two = pack_pool(records) if processes is None else pack_pool(records, processes)
        assert pools == used, (len(records), processes)
        assert np.array_equal(two.points, pack_records(records).points)
    assert np.array_equal(pack_pool(games, 2).captured, one.captured) and pools == [("fork", 2)]


def test_packed_arrays_have_the_files_types_and_an_empty_pool_is_one():
    """`game_moves` and `pack_records` give the types the file keeps (int16 moves and capture numbers,
    int8 winners, int64 offsets, text ids), with no games too: an empty pool that saves and loads."""
    games = [r for r, n in hand_made_records() if n]
    points, captured = game_moves(games[1])
    assert points.dtype == np.int16 and captured.dtype == np.int16
    pool = pack_records(games)
    kinds = (pool.ids.dtype.kind, pool.offsets.dtype, pool.points.dtype, pool.captured.dtype, pool.winner.dtype)
    assert kinds == ("U", np.int64, np.int16, np.int16, np.int8)
    empty = pack_records([])
    assert len(empty) == 0 and empty.offsets.tolist() == [0] and empty.offsets.dtype == np.int64
    assert empty.ids.dtype.kind == "U" and empty.points.dtype == np.int16 and empty.captured.dtype == np.int16
    assert len(empty.points) == len(empty.captured) == len(empty.winner) == 0 and empty.winner.dtype == np.int8


def test_what_a_packed_game_must_start_from(tmp_path):
    """From the empty board with Black: a game with a black or a white setup stone, or White first, is
    not; each is refused by `game_moves`, naming the game."""
    moves = filler_moves(6)
    cases = {
        "even": (make_sgf(moves), True),
        "black stone": (make_sgf(moves, root="AB[dd]"), False),
        "white stone": (make_sgf(moves, root="AW[jj]"), False),
        "white first": (make_sgf(moves, colours="WB" * 3), False),
    }
    for name, (sgf, ok) in cases.items():
        rec = read_sgf(sgf.encode(), f"{name}.sgf")
        assert starts_empty(rec) == ok, name
        if not ok:
            with pytest.raises(ValueError) as err:
                game_moves(rec)
            assert str(err.value) == (
                f"game {rec.id}: setup stones or White first; a packed game starts from the empty board with "
                "Black (train on the JSONL pool instead)"
            )


def test_a_game_too_long_or_with_an_illegal_move_is_refused_naming_it():
    """A packed game holds at most 32,766 moves (32,767 marks a stone never captured); a move the rules
    forbid is refused with its number, from 1."""
    long = read_sgf(make_sgf([""] * 32767).encode(), "long.sgf")
    with pytest.raises(ValueError) as err:
        game_moves(long)
    assert str(err.value) == f"game {long.id}: 32767 moves, more than a packed game holds (32766)"
    points, captured = game_moves(read_sgf(make_sgf([""] * 32766).encode(), "longest.sgf"))
    assert len(points) == 32766 and set(points.tolist()) == {361} and set(captured.tolist()) == {32767}
    taken = read_sgf(make_sgf(["pd", "dp", "pd"]).encode(), "taken.sgf")
    with pytest.raises(ValueError) as err:
        game_moves(taken)
    assert str(err.value).startswith(f"game {taken.id}, move 3: ")


def test_a_file_whose_arrays_disagree_in_length_is_refused(tmp_path):
    """Offsets one per game and one more, the last the number of moves; a capture number for each move."""
    good = pack_records([r for r, n in hand_made_records() if n])
    arrays = {k: getattr(good, k) for k in ("ids", "offsets", "points", "captured", "winner")}
    for name, change in (
        ("offsets", dict(offsets=np.array([0, 10, 70, 83, 83]))),  # one too many, ending right
        ("last", dict(offsets=np.array([0, 10, 70, 82]))),  # right count, wrong end
        ("captured", dict(captured=good.captured[:-1])),
    ):
        path = tmp_path / f"{name}.npz"
        np.savez(path, **(arrays | change))
        with pytest.raises(ValueError) as err:
            PackedPool.load(path)
        assert str(err.value) == f"{path}: the arrays of a packed pool disagree in length", name
    np.savez(tmp_path / "good.npz", **arrays)
    assert PackedPool.load(tmp_path / "good.npz").offsets.tolist() == [0, 10, 70, 83]
