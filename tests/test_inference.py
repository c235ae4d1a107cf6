"""Inference outputs: a whole set (resumable), and the one-position command line tool."""

import math

import pytest
import torch
from sgfmill import sgf

import helpers
from helpers import OPENING, make_sgf
from moveorder import cli
from moveorder.data.arrangements import clip, write_jsonl
from moveorder.data.records import load_records
from moveorder.go.coords import sgf_to_lz
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.search import inference
from moveorder.search.inference import infer_arrangements, infer_set
from moveorder.search.problem import lgm
from moveorder.search.results import load_results, matching_prefix, write_table
from moveorder.settings import SearchConfig

FIXTURE = str(helpers.FIXTURE)


def test_infer_set_resumes_and_matches_a_full_run(tmp_path, pro2_pool, monkeypatch):
    arrs = [clip(r, 12, "pro") for r in load_records(pro2_pool)[:5]]
    write_jsonl(tmp_path / "12m.jsonl", arrs)
    cfg = SearchConfig(iterations=60, trials=2, seed=4)
    model = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    full = tmp_path / "full.jsonl"
    infer_set(tmp_path / "12m.jsonl", full, PositionEvaluator(model), cfg, chunk=2)
    lines = full.read_text().splitlines()
    assert len(lines) == 5
    # A job killed after two arrangements, half-way through writing the third line.
    part = tmp_path / "part.jsonl"
    part.write_text("\n".join(lines[:2]) + "\n" + lines[2][:30])
    inferred_ids = []

    def spy(evaluator, batch, *args, **kw):
        inferred_ids.extend(a.id for a in batch)
        return infer_arrangements(evaluator, batch, *args, **kw)

    monkeypatch.setattr(inference, "infer_arrangements", spy)
    infer_set(tmp_path / "12m.jsonl", part, PositionEvaluator(model), cfg, chunk=2)
    assert part.read_text().splitlines() == lines
    assert inferred_ids == [a.id for a in arrs[2:]]  # it did the missing three, and only them ...
    inferred_ids.clear()
    infer_set(tmp_path / "12m.jsonl", part, PositionEvaluator(model), cfg, chunk=2)
    assert inferred_ids == []  # ... and a finished file is left alone
    rows = load_results(full)
    for r, a in zip(rows, arrs):
        assert sorted(r["inferred"][0::2]) == a.black and sorted(r["inferred"][1::2]) == a.white
        assert r["lgm"] == pytest.approx(max(r["trial_lgms"]))
        assert r["exact_match"] == (r["inferred"] == a.actual)
        # The paper's numbers, by hand: each order's log-likelihood scored move by move, LGM its n-th root.
        for which, key in (("inferred", "log_likelihood"), ("actual", "actual_log_likelihood")):
            ll = float(model.log_probs(torch.tensor([sgf_to_lz(r[which])])).sum())
            assert r[key] == pytest.approx(ll, abs=1e-9)
        assert r["lgm"] == pytest.approx(math.exp(r["log_likelihood"] / 12), rel=1e-12)
        assert r["actual_lgm"] == pytest.approx(math.exp(r["actual_log_likelihood"] / 12), rel=1e-12)
        prefix = next((k for k in range(12) if r["inferred"][k] != a.actual[k]), 12)
        assert r["matching_prefix"] == prefix
        assert r["matching_moves"] == sum(x == y for x, y in zip(r["inferred"], a.actual))
    df = write_table(rows, tmp_path / "t.csv", tmp_path / "sgf", network="fixture")
    assert len(df) == 5 and (tmp_path / "sgf" / f"{rows[0]['id']}.sgf").exists()


def test_lgm_and_matching_moves_by_hand():
    """The likelihood geometric mean is the n-th root of the product of the n move probabilities."""
    assert lgm(math.log(0.5) * 4, 4) == pytest.approx(0.5, rel=1e-15)
    assert lgm(math.log(0.2 * 0.3 * 0.6), 3) == pytest.approx((0.2 * 0.3 * 0.6) ** (1 / 3), rel=1e-15)
    assert matching_prefix(["pd", "dp", "qp", "dd"], ["pd", "dp", "dd", "qp"]) == 2
    assert matching_prefix(["pd", "dp"], ["pd", "dp"]) == 2 and matching_prefix(["dp"], ["pd"]) == 0
    assert matching_prefix(["pd", "dp", "qp"], ["pd", "dp"]) == 2  # the shorter one ends the prefix


def test_legal_only_and_symmetries_reach_infer_set(tmp_path, pro2_pool):
    """The switches of the likelihood change what infer-set computes, as the likelihood module says."""
    import torch

    arrs = [clip(r, 10, "pro") for r in load_records(pro2_pool)[:3]]
    write_jsonl(tmp_path / "10m.jsonl", arrs)
    got = {}
    for flags in ((), ("--legal-only",), ("--average-symmetries",), ("--legal-only", "--average-symmetries")):
        out = tmp_path / ("-".join(flags) or "plain")
        assert (
            cli.main(
                [
                    "infer-set",
                    "--arrangements",
                    str(tmp_path / "10m.jsonl"),
                    "--out",
                    f"{out}.jsonl",
                    "--table",
                    f"{out}.csv",
                    "--network",
                    FIXTURE,
                    "--iterations",
                    "20",
                    "--trials",
                    "1",
                    "--quiet",
                    "--device",  # compared with a CPU model to 1e-9 below: a GPU's cuDNN differs by ~1e-7
                    "cpu",
                    *flags,
                ]
            )
            == 0
        )
        got[flags] = load_results(f"{out}.jsonl")
        model = PolicyLikelihood.from_file(
            FIXTURE,
            device="cpu",
            legal_only="--legal-only" in flags,
            average_symmetries="--average-symmetries" in flags,
        )
        for row, a in zip(got[flags], arrs):
            seq = torch.tensor([sgf_to_lz(a.actual)])
            assert row["actual_log_likelihood"] == pytest.approx(float(model.log_probs(seq).sum()), abs=1e-9)
            assert row["precision"] == "float32"
    plain = [r["actual_log_likelihood"] for r in got[()]]
    for flags in list(got)[1:]:
        assert all(x != y for x, y in zip(plain, [r["actual_log_likelihood"] for r in got[flags]])), flags
    assert all(x > y for x, y in zip([r["actual_log_likelihood"] for r in got[("--legal-only",)]], plain))


def run_cli(*args):
    return cli.main(["infer", *args, "--network", FIXTURE, "--iterations", "40", "--trials", "2"])


def test_one_position_from_setup_stones(tmp_path, capsys):
    black, white = sorted(OPENING[0::2]), sorted(OPENING[1::2])
    pos = tmp_path / "pos.sgf"
    pos.write_text(f"(;GM[1]FF[4]SZ[19]AB{''.join(f'[{p}]' for p in black)}AW{''.join(f'[{p}]' for p in white)})")
    out = tmp_path / "ordered.sgf"
    assert run_cli(str(pos), "-o", str(out)) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    moves = [n.get_move() for n in game.get_main_sequence()[1:]]
    assert [c for c, _ in moves] == ["b", "w"] * 10
    # sgfmill counts rows from the bottom: back to SGF points.
    played = [f"{'abcdefghijklmnopqrs'[col]}{'abcdefghijklmnopqrs'[18 - row]}" for _, (row, col) in moves]
    assert sorted(played[0::2]) == black and sorted(played[1::2]) == white
    assert "LGM" in game.get_root().get("C")
    assert "LGM" in capsys.readouterr().out


def test_one_position_from_a_record_after_n_moves(tmp_path):
    rec = tmp_path / "game.sgf"
    rec.write_text(make_sgf(OPENING))
    out = tmp_path / "o.sgf"
    assert run_cli(str(rec), "--moves", "9", "-o", str(out)) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    assert len(game.get_main_sequence()) == 10


@pytest.mark.parametrize(
    "content, message",
    [
        ("(;GM[1]SZ[19]AB[aa][bb][cc])", "3 black and 0 white"),
        ("(;GM[1]SZ[19]AB[aa][pp]AW[ba][ab])", "without liberties"),
    ],
)
def test_bad_positions_get_clear_errors(tmp_path, caplog, content, message):
    pos = tmp_path / "bad.sgf"
    pos.write_text(content)
    assert run_cli(str(pos), "-o", str(tmp_path / "o.sgf")) == 2
    assert message in caplog.text and "bad.sgf" in caplog.text


def test_record_with_capture_is_refused_by_the_papers_annealing(tmp_path, caplog):
    rec = tmp_path / "cap.sgf"
    rec.write_text(make_sgf(["dd", "ed", "pp", "dc", "pd", "de", "dp", "cd"]))
    assert run_cli(str(rec), "--moves", "8", "-o", str(tmp_path / "o.sgf"), "--quality", "paper") == 2
    assert "captures" in caplog.text and "--method beam orders positions with captures" in caplog.text
    assert not (tmp_path / "o.sgf").exists()


def test_record_with_capture_is_ordered_by_the_default(tmp_path):
    """The default (the ranked beam) sends a position with captures to the capture search: its order
    replays on sgfmill's board to the record's position after move 8, one white stone taken."""
    from sgfmill import boards

    rec = tmp_path / "cap.sgf"
    moves = ["dd", "ed", "pp", "dc", "pd", "de", "dp", "cd"]
    rec.write_text(make_sgf(moves))
    out = tmp_path / "o.sgf"
    assert run_cli(str(rec), "--moves", "8", "-o", str(out)) == 0

    def replay(points):  # the record's moves on sgfmill's board, which removes captured stones
        board = boards.Board(19)
        for k, p in enumerate(points):
            board.play(18 - (ord(p[1]) - 97), ord(p[0]) - 97, "bw"[k % 2])
        return board

    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    played = [n.get_move() for n in game.get_main_sequence()[1:]]
    assert [c for c, _ in played] == ["b", "w"] * 4
    ours = boards.Board(19)
    for colour, (row, col) in played:
        ours.play(row, col, colour)
    assert ours.list_occupied_points() == replay(moves).list_occupied_points()


def _turned_record(moves, name):
    """A record of ``moves`` (SGF points), and one of the same game turned half a turn."""
    from moveorder.data.records import read_sgf
    from moveorder.go.coords import lz_to_sgf
    from moveorder.nets.networks import turn_points

    turned = lz_to_sgf(turn_points(sgf_to_lz(moves), 3))
    return [read_sgf(make_sgf(m).encode(), f"{name}{k}.sgf") for k, m in enumerate((moves, turned))]


def test_the_actual_orders_likelihood_is_its_likeliest_orientation():
    """With both seats searched, the actual order scores as its likeliest orientation, capture-free or not.

    Each game comes as given and turned half a turn: what one scores as given, the other scores turned,
    so whichever orientation is likelier, one of the pair has it last and one first. The reference: each
    orientation's turned sequence replayed on the board move by move (``boards.sequence_log_probs``, one
    sequence at a time), the larger taken here."""
    from moveorder.nets import shipped
    from moveorder.nets.networks import turn_points
    from moveorder.search.boards import sequence_log_probs

    likelihood = PolicyLikelihood.from_file(shipped.resolve("tygem"), device="cpu")
    evaluator = PositionEvaluator(likelihood, cache_size=0)
    plain = [clip(r, 20, "x") for r in _turned_record(OPENING, "plain")]
    captures = [clip(r, 40, "x") for r in _turned_record(helpers.capture_at_30(), "captures")]
    assert all(not any(a.prisoners) for a in plain) and all(any(a.prisoners) for a in captures)
    arrs = plain + captures
    got = inference._actual_log_likelihoods(evaluator, arrs, (0, 3))
    each = [
        [float(sequence_log_probs(likelihood, turn_points(sgf_to_lz(a.actual), s)).sum()) for s in (0, 3)] for a in arrs
    ]
    assert got == pytest.approx([max(e) for e in each], abs=1e-4)
    # both orientations win somewhere, in each kind: a bug taking the last (or the first) is seen
    for pair in (each[:2], each[2:]):
        assert {e[0] > e[1] for e in pair} == {True, False}
    # as given alone: the given orientation's
    assert inference._actual_log_likelihoods(evaluator, arrs, (0,)) == pytest.approx([e[0] for e in each], abs=1e-4)


def test_infer_set_orders_a_file_of_two_lengths_each_in_its_own_batches(tmp_path, pro2_pool):
    """A file with arrangements of 10 and 12 moves, interleaved: each length is searched as it is alone
    (the beam's rows, the same as a file of that length), the annealing's settings named for each length."""
    records = load_records(pro2_pool)[:4]
    mixed = [clip(r, n, "pro") for r in records for n in (10, 12)]
    write_jsonl(tmp_path / "mixed.jsonl", mixed)
    cfg = SearchConfig(method="beam", beam_width=4)
    model = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    assert (
        cli.main(
            ["infer-set", "--arrangements", str(tmp_path / "mixed.jsonl"), "--out", str(tmp_path / "mixed-out.jsonl")]
            + ["--table", str(tmp_path / "t.csv"), "--stats", str(tmp_path / "s.json"), "--network", str(FIXTURE)]
            + ["--method", "beam", "--beam-width", "4", "--quiet"]
        )
        == 0
    )
    rows = {(r["id"], r["n"]): r for r in load_results(tmp_path / "mixed-out.jsonl")}
    assert sorted(rows) == sorted((a.id, a.n) for a in mixed)
    for n in (10, 12):
        alone = [a for a in mixed if a.n == n]
        write_jsonl(tmp_path / f"{n}m.jsonl", alone)
        infer_set(tmp_path / f"{n}m.jsonl", tmp_path / f"{n}-out.jsonl", PositionEvaluator(model), cfg)
        for r in load_results(tmp_path / f"{n}-out.jsonl"):
            assert rows[(r["id"], n)]["inferred"] == r["inferred"]
            assert rows[(r["id"], n)]["log_likelihood"] == pytest.approx(r["log_likelihood"], abs=1e-9)
    # with the paper's iterations for each length, the run's settings name both
    from moveorder.search.inference import settings_text

    text = settings_text("fixture", SearchConfig(), "float32", [20, 40])
    assert "20 moves: " in text and "5000 iterations" in text and "40 moves: " in text and "20000 iterations" in text
