"""How sure an answer is: the evidence and chances from hand-worked likelihoods, the calibration fit on
a synthetic set whose true chances are known, the metrics against brute force, and every place the
chance is shown (terminal, SGF, diagram, infer-set's JSONL and CSV, the summary)."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import torch
from sgfmill import sgf

import helpers
from helpers import OPENING
from moveorder import cli
from moveorder.data.arrangements import clip, write_jsonl
from moveorder.data.records import load_records
from moveorder.go import coords
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.nets.networks import turn_points
from moveorder.report import diagram, metrics, plots
from moveorder.search import confidence
from moveorder.search.dispatch import run
from moveorder.search.problem import problem_of_stones
from moveorder.settings import DOUBT, MIN_ORDERS, NEARLY, SearchConfig

FIXTURE = str(helpers.FIXTURE)


def sig(z):
    return 1 / (1 + math.exp(-z))


# --- evidence and chances, by hand ------------------------------------------------------------------


ORDERS = [  # four moves, Black a and c, White b and d: every order of the arrangement
    (["a", "b", "c", "d"], math.log(0.4)),
    (["c", "b", "a", "d"], math.log(0.3)),
    (["a", "d", "c", "b"], math.log(0.2)),
    (["c", "d", "a", "b"], math.log(0.1)),
]


def test_evidence_of_hand_worked_likelihoods():
    ev = confidence.evidence(ORDERS, 4, possible=confidence.possible_orders(2, 2))
    # the likelihoods sum to 1: the best's share is 0.4
    assert ev["log_share"] == pytest.approx(math.log(0.4))
    assert ev["lgm_log"] == pytest.approx(math.log(0.4) / 4)
    # move 1 is 'a' in orders 1 and 3 (0.4 + 0.2), move 2 'b' in orders 1 and 2 (0.4 + 0.3), ...
    assert ev["agree"] == pytest.approx([0.6, 0.7, 0.6, 0.7])
    assert ev["orders"] == 4 and ev["all_orders"]
    assert not confidence.evidence(ORDERS[:3], 4, possible=4)["all_orders"]
    # the share is of the orders found: three found, 0.4 of 0.9
    assert confidence.evidence(ORDERS[:3], 4)["log_share"] == pytest.approx(math.log(0.4 / 0.9))


def test_possible_orders():
    assert confidence.possible_orders(2, 2) == 4
    assert confidence.possible_orders(10, 10) == math.factorial(10) ** 2


CAL = confidence.Calibration(
    "net", {"beam32f1-seats": confidence.Fit([0.5, 2.0, 3.0, -0.4], [1.0, -0.5, 0.25, 0.1, -0.3, 0.7])}
)


def test_chances_from_hand_worked_weights():
    # the four orders and eight far less likely ones that agree with the best at no move: twelve, enough
    orders = ORDERS + [(["x", "y", "z", str(k)], -20.0) for k in range(8)]
    judged = confidence.judge(orders, 4, None, CAL, "beam32f1-seats", "net")
    ev = judged["evidence"]
    total = 1.0 + 8 * math.exp(-20.0)
    assert ev["log_share"] == pytest.approx(math.log(0.4 / total))
    assert judged["chance"] == pytest.approx(
        sig(0.5 + 2.0 * math.log(0.4 / total) + 3.0 * math.log(0.4) / 4 - 0.4 * math.log(4))
    )
    # move 1: 'a' in orders 1 and 3 (0.6 of the likelihood): log(1 - 0.6)
    agree1 = 0.6 / total
    z = 1.0 - 0.5 * math.log(1 - agree1) + 0.25 * math.log(0.4) / 4 + 0.1 * math.log(0.4 / total)
    assert judged["move_chances"][0] == pytest.approx(sig(z), rel=1e-5)  # move 1: log(1 + 0) = 0, 0 / 4
    # move 3: 'c' in orders 1 and 3 again; log(1 + 2) and 2 / 4 of the way
    z3 = z - 0.3 * math.log(3) + 0.7 * 2 / 4
    assert judged["move_chances"][2] == pytest.approx(sig(z3), rel=1e-5)
    # every order agrees on nothing but the best is clipped: log(1 - agree) no lower than log(0.001)
    sure = confidence.move_features({"agree": [1.0, 0.9999999], "lgm_log": -1.0, "log_share": 0.0})
    assert sure[0][0] == pytest.approx(math.log(1e-3)) and sure[1][0] == pytest.approx(math.log(1e-3))
    assert judged["evidence"]["search"] == "beam32f1-seats"


def test_no_chance_is_stated_where_it_cannot_be():
    few = confidence.judge(ORDERS[:3], 4, None, CAL, "beam32f1-seats", "net")
    assert few["chance"] is None and "found only 3 distinct orders" in few["chance_note"]
    assert MIN_ORDERS > 3
    # ... but three orders of a position that has three is every order: a chance is stated
    assert confidence.judge(ORDERS[:3], 4, 3, CAL, "beam32f1-seats", "net")["chance"] is not None
    other = confidence.judge(ORDERS, 4, 4, CAL, "beam128f1-seats", "net")
    assert other["chance"] is None
    assert "no calibration for this search (beam128f1-seats; calibrated: beam32f1-seats)" in other["chance_note"]
    assert "moveorder calibrate" in other["chance_note"]
    none = confidence.judge(ORDERS, 4, 4, None, "beam32f1-seats", "mine.gz")
    assert "network mine.gz has no calibration" in none["chance_note"]
    anneal = confidence.judge(ORDERS, 4, 4, CAL, None, "net")
    assert "only the ranked beam" in anneal["chance_note"]
    caps = confidence.judge(ORDERS, 4, None, CAL, "beam32f1-seats", "net", captures=True)
    assert caps["chance"] is None and "captures" in caps["chance_note"]
    for j in (few, other, none, anneal, caps):
        assert confidence.chance_line(j) == j["chance_note"]


def test_search_key():
    assert confidence.search_key(SearchConfig(method="beam", beam_width=32, orientations="seats")) == "beam32f1-seats"
    assert confidence.search_key(SearchConfig(method="beam", beam_width=256, beam_future=0.5)) == "beam256f0.5-given"
    assert confidence.search_key(SearchConfig(method="anneal")) is None


def test_uncertain_groups_by_hand():
    best = list("abcdefghij")
    swap_2_5 = list("aecdbfghij")  # moves 2 and 5 swapped
    swap_8_9 = list("abcdefgihj")
    far = list("abcdefghji")  # 9 and 10: a move not in doubt below, and far less likely than the best
    orders = [(best, 0.0), (swap_2_5, -1.0), (swap_8_9, -1.5), (far, -9.0)]
    # an alternative under NEARLY times the best's likelihood names no stretch
    assert confidence.uncertain_groups([(best, 0.0), (far, math.log(NEARLY) - 0.01)], [1] * 8 + [0.1, 0.1]) == []
    assert confidence.uncertain_groups([(best, 0.0), (far, math.log(NEARLY) + 0.01)], [1] * 8 + [0.1, 0.1]) == [[9, 10]]
    chances = [1, 0.6, 1, 1, 0.6, 1, 1, 0.7, 0.7, 0.95]
    assert confidence.uncertain_groups(orders, chances, doubt=0.8) == [[2, 5], [8, 9]]
    assert confidence.uncertain_groups(orders, chances, doubt=0.65) == [[2, 5]]
    # a span overlapping another merges with it
    overlap = list("abcdgfehij")  # 5 and 7 swapped
    chances2 = [1, 0.6, 1, 1, 0.5, 1, 0.6, 1, 1, 1]
    assert confidence.uncertain_groups([(best, 0.0), (swap_2_5, -1.0), (overlap, -1.2)], chances2, 0.8) == [[2, 7]]
    assert confidence.uncertain_groups(orders, [1.0] * 10) == []
    # two swaps far apart in one alternative are two stretches, not one from the first to the last
    two = list("aecdbfghji")  # 2 and 5, 9 and 10
    chances3 = [1, 0.6, 1, 1, 0.6, 1, 1, 1, 0.7, 0.7]
    assert confidence.uncertain_groups([(best, 0.0), (two, -1.0)], chances3, 0.8) == [[2, 5], [9, 10]]
    assert confidence.blocks(two, best) == [(1, 4), (8, 9)]
    assert confidence.blocks(list("bcaxyz"), list("abcxyz")) == [(0, 2)]  # a rotation of three
    assert confidence.blocks(best, best) == []
    assert confidence.uncertain_groups(orders, None) == []
    assert confidence.groups_text([[2, 5], [8, 9]]) == "moves 2-5 and 8-9"
    assert confidence.groups_text([[8, 13]]) == "moves 8-13"


@pytest.mark.parametrize(
    "chance, text",
    [
        (0.46, "a 46% chance that this is the exact order"),
        (0.08, "an 8% chance that this is the exact order"),
        (0.11, "an 11% chance that this is the exact order"),
        (0.18, "an 18% chance that this is the exact order"),
        (0.83, "an 83% chance that this is the exact order"),
        (0.004, "under a 1% chance that this is the exact order"),
    ],
)
def test_chance_line(chance, text):
    judged = {"chance": chance, "chance_note": None, "uncertain": []}
    assert confidence.chance_line(judged) == text
    assert confidence.chance_line(judged | {"uncertain": [[8, 13]]}) == text + "; moves 8-13 uncertain"
    moves = [0.9, DOUBT - 0.1, 0.2, DOUBT]
    assert confidence.chance_line(judged | {"move_chances": moves}) == text + "; 2 of 4 moves in doubt"
    assert (
        confidence.chance_line(judged | {"move_chances": moves, "uncertain": [[2, 3]]})
        == text + "; moves 2-3 uncertain"
    )


def test_calibration_file_round_trip_and_refusals(tmp_path):
    path = tmp_path / "net.calibration.json"
    CAL.save(path)
    back = confidence.Calibration.load(path)
    assert back.network == "net" and back.fits["beam32f1-seats"].order_weights == [0.5, 2.0, 3.0, -0.4]
    assert confidence.calibration_path(tmp_path / "net.txt.gz") == path
    assert confidence.calibration_path(tmp_path / "net.pt") == path
    assert confidence.calibration_for(tmp_path / "net.txt.gz").network == "net"
    assert confidence.calibration_for(tmp_path / "other.txt.gz") is None
    bad = tmp_path / "bad.calibration.json"
    bad.write_text('{"network": "x", "fits": {"k": {"order_weights": [1], "move_weights": [1, 2, 3, 4, 5, 6]}}}')
    with pytest.raises(ValueError, match=r"bad.calibration.json: not a moveorder calibration .*expected 4 and 6"):
        confidence.Calibration.load(bad)
    bad.write_text("{")
    with pytest.raises(ValueError, match="bad.calibration.json: not a moveorder calibration"):
        confidence.Calibration.load(bad)


def test_the_shipped_network_has_a_calibration_for_the_players_default():
    from moveorder.cli.search import infer_request
    from moveorder.search.inference import network_calibration

    cal = network_calibration("tygem-6x128")
    _, cfg = infer_request(["x.sgf"])
    fit = cal.fits[confidence.search_key(cfg)]
    assert fit.data["answers"] >= 400 and 0 < fit.data["exact"] < fit.data["answers"]
    assert "moveorder calibrate" in fit.data["command"] and fit.data["files"]
    # the weights say what they must: a larger share, and an easier order, are likelier exact
    assert fit.order_weights[1] > 0 and fit.order_weights[2] > 0 and fit.order_weights[3] < 0


# --- the fit, on a synthetic set whose chances are known ------------------------------------------------


def test_logistic_recovers_known_weights():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(20000, 2))
    truth = 1 / (1 + np.exp(-(-0.7 + 1.5 * x[:, 0] - 0.8 * x[:, 1])))
    y = rng.random(20000) < truth
    w = confidence.logistic(x, y)
    assert w == pytest.approx([-0.7, 1.5, -0.8], abs=0.06)


def synthetic_rows(rng, count):
    """Answers of 4 or 8 moves whose true chance of being exact is sig(1 + 1.2 log_share + 4 lgm_log - 0.5 log n)."""
    rows = []
    for k in range(count):
        share = rng.uniform(0.05, 1.0)
        lgm_log = rng.uniform(-1.5, -0.2)
        n = int(rng.choice([4, 8]))
        p = sig(1 + 1.2 * math.log(share) + 4 * lgm_log - 0.5 * math.log(n))
        exact = bool(rng.random() < p)
        agree = [float(rng.uniform(0.5, 1.0)) for _ in range(n)]
        right = [exact or bool(rng.random() < a) for a in agree]
        actual = ["aa", "bb", "cc", "dd", "ee", "ff", "gg", "hh"][:n]
        inferred = [m if r else "zz" for m, r in zip(actual, right)]
        ev = {"orders": 32, "all_orders": False, "log_share": math.log(share), "lgm_log": lgm_log, "agree": agree}
        rows.append(
            {
                "id": str(k),
                "evidence": ev | {"search": "beam32f1-seats"},
                "exact_match": exact,
                "inferred": inferred,
                "actual": actual,
                "true_chance": p,
            }
        )
    return rows


def test_fit_is_calibrated_on_a_synthetic_set():
    rng = np.random.default_rng(3)
    fitted = confidence.fit(synthetic_rows(rng, 6000))
    assert fitted.order_weights == pytest.approx([1.0, 1.2, 4.0, -0.5], abs=0.35)
    fresh = synthetic_rows(rng, 4000)
    stated = [fitted.chance(r["evidence"]) for r in fresh]
    assert np.max(np.abs(np.array(stated) - [r["true_chance"] for r in fresh])) < 0.08
    assert metrics.expected_calibration_error(stated, [r["exact_match"] for r in fresh]) < 0.03
    with pytest.raises(ValueError, match="needs both exact and other answers"):
        confidence.fit([r | {"exact_match": True} for r in fresh[:10]])


def test_calibrate_writes_a_fit_from_results(tmp_path, capsys, caplog):
    rng = np.random.default_rng(5)
    rows = synthetic_rows(rng, 800)
    files = []
    for k in range(2):
        f = tmp_path / f"part{k}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows[k * 400 : (k + 1) * 400]))
        files.append(str(f))
    out = tmp_path / "net.calibration.json"
    assert cli.main(["calibrate", "--results", *files, "--network", "net", "--out", str(out)]) == 0
    cal = confidence.Calibration.load(out)
    fit = cal.fits["beam32f1-seats"]
    assert fit.data["answers"] == 800 and fit.data["exact"] == sum(r["exact_match"] for r in rows)
    assert [f["answers"] for f in fit.data["files"]] == [400, 400]
    assert fit.data["command"].startswith("moveorder calibrate --results")
    assert fit.order_weights == pytest.approx(confidence.fit(rows).order_weights)
    assert "800 answers" in capsys.readouterr().out
    # another network's file is not overwritten; answers without evidence are refused
    assert cli.main(["calibrate", "--results", *files, "--network", "other", "--out", str(out)]) == 2
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps({"id": "x1", "exact_match": True}) + "\n")
    assert cli.main(["calibrate", "--results", str(bare), "--network", "net", "--out", str(out)]) == 2
    err = caplog.text
    assert "the calibration of network net, not of other" in err
    assert "bare.jsonl: 1 of 1 answers carry no evidence (the first: x1)" in err


# --- metrics against brute force ----------------------------------------------------------------------


def test_metrics_against_brute_force():
    rng = np.random.default_rng(11)
    p = np.round(rng.random(60), 1)  # ties on purpose
    y = rng.random(60) < p
    pairs = [(a, b) for a, ya in zip(p, y) if ya for b, yb in zip(p, y) if not yb]
    brute = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs) / len(pairs)
    assert metrics.auroc(p, y) == pytest.approx(brute)
    assert metrics.brier([0.2, 0.9], [False, True]) == pytest.approx((0.04 + 0.01) / 2)
    # ECE by hand: bins [0,0.1): 0.05 stated, 0 happened (2 answers); [0.9,1]: 0.95 and 1.0 stated, 1 of 2
    chance, truth = [0.05, 0.05, 0.95, 1.0], [False, False, True, False]
    table = metrics.reliability(chance, truth)
    assert table["count"].tolist() == [2, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert metrics.expected_calibration_error(chance, truth) == pytest.approx((2 * 0.05 + 2 * abs(0.975 - 0.5)) / 4)


def test_reliability_diagram_draws_the_counts(tmp_path):
    rng = np.random.default_rng(2)
    chance = rng.random(300)
    truth = rng.random(300) < chance
    fig, ax = plots.plt.subplots()
    plots.reliability_axes(ax, chance, truth, "synthetic")
    drawn = {t.get_gid(): int(t.get_text()) for t in ax.texts if (t.get_gid() or "").startswith("count-")}
    by_hand = {f"count-{b}": int(((chance * 10).astype(int).clip(max=9) == b).sum()) for b in range(10)}
    assert drawn == {k: v for k, v in by_hand.items() if v}
    assert sum(drawn.values()) == 300
    assert "N 300" in ax.get_title()
    plots.plt.close(fig)
    paths = plots.reliability_diagram({"a": {"chance": chance, "truth": truth}}, tmp_path / "rel")
    assert all(p.is_file() for p in paths)


# --- shown where users look -------------------------------------------------------------------------


def test_diagram_marks_the_moves_in_doubt(tmp_path):
    fig = diagram.figure_data(OPENING[:6], doubt=[2, 5])
    assert [s.number for s in fig.stones if s.doubt] == [2, 5]
    text = diagram.text_board(fig)
    q = coords.to_gtp(coords.from_sgf(OPENING[1]))
    col = coords.GTP_COLUMNS.index(q[0])
    row_line = next(line for line in text.splitlines() if line.startswith(f"{int(q[1:]):>2} "))
    assert row_line[3 + 4 * col : 3 + 4 * col + 4] == "  2?"
    assert f"?: a move in doubt (its number is right with a chance under {DOUBT:.0%})." in text
    path = diagram.save(fig, tmp_path / "d.svg")
    svg = path.read_text()
    rings = set(re.findall(r'id="doubt-([A-T]\d+)"', svg))
    assert rings == {coords.to_gtp(coords.from_sgf(OPENING[k])) for k in (1, 4)}
    assert 'id="doubt"' in svg and "2, 5" in svg
    assert diagram.number_ranges([31, 14, 15, 16, 19, 26, 27]) == "14-16, 19, 26-27, 31"
    # a long list wraps to lines under the board's width, every number kept
    long = diagram.figure_data(OPENING[:20], doubt=list(range(1, 21, 2)))
    lines = diagram.doubt_lines(long)
    assert len(lines) > 1 and all(len(x) <= diagram.LEGEND_WIDTH for x in lines)
    assert " ".join(lines).endswith("1, 3, 5, 7, 9, 11, 13, 15, 17, 19")
    svg2 = diagram.save(long, tmp_path / "long.svg").read_text()
    assert 'id="doubt-2"' in svg2
    # without the answer's doubt nothing is marked
    plain = diagram.save(diagram.figure_data(OPENING[:6]), tmp_path / "p.svg").read_text()
    assert "doubt" not in plain


def test_doubtful_moves():
    assert diagram.doubtful_moves([0.9, DOUBT - 0.01, DOUBT, 0.1]) == [2, 4]
    assert diagram.doubtful_moves(None) is None


def test_the_order_found_is_the_same_whatever_is_kept():
    """The chance needs the search to keep more orders; the order it answers with stays the same,
    to the last bit of its log-likelihood (the beam, seats, on two real openings)."""
    model = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    cfg = SearchConfig(method="beam", beam_width=8, orientations="seats")
    probs = [
        problem_of_stones(coords.sgf_to_lz(sorted(o[0::2])), coords.sgf_to_lz(sorted(o[1::2])))
        for o in (OPENING[:12], OPENING[2:14])
    ]
    one = run(PositionEvaluator(model), probs, cfg, keep=1)
    many = run(PositionEvaluator(model), probs, cfg, keep=32)
    for a, b in zip(one, many):
        assert a.orders[0] == b.orders[0] and a.trials[0].moves == b.trials[0].moves
        assert a.trials[0].log_likelihood == b.trials[0].log_likelihood
        assert len(b.orders) == 8  # the beam keeps its width of complete orders at most


def position_file(tmp_path, moves):
    pos = tmp_path / "pos.sgf"
    black, white = sorted(moves[0::2]), sorted(moves[1::2])
    pos.write_text(f"(;GM[1]FF[4]SZ[19]AB{''.join(f'[{p}]' for p in black)}AW{''.join(f'[{p}]' for p in white)})")
    return pos


@pytest.fixture
def calibrated_fixture(tmp_path):
    """The test network's weights beside a calibration of the default search, chosen so that some moves are in doubt."""
    import shutil

    net = tmp_path / "net.txt.gz"
    shutil.copy(FIXTURE, net)
    confidence.Calibration(
        "net", {"beam32f1-seats": confidence.Fit([0.5, 1.0, 0.5, 0.0], [0.5, -1.0, 0.5, 0.0, 0.0, 0.0])}
    ).save(tmp_path / "net.calibration.json")
    return net


def test_infer_shows_the_chance_in_terminal_sgf_and_diagram(tmp_path, capsys, calibrated_fixture):
    pos = position_file(tmp_path, OPENING[:14])
    out, dia = tmp_path / "o.sgf", tmp_path / "d.svg"
    argv = ["infer", str(pos), "--network", str(calibrated_fixture), "-o", str(out), "--diagram", str(dia), "--quiet"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    main = game.get_main_sequence()
    letters = "abcdefghijklmnopqrs"  # sgfmill counts rows from the bottom
    moves = [letters[c] + letters[18 - r] for r, c in (n.get_move()[1] for n in main[1:])]
    # the chance, worked out again from the answer's own orders with the fit's weights
    from moveorder.cli.search import infer_request
    from moveorder.search.inference import infer_position

    args, cfg = infer_request([str(pos), "--network", str(calibrated_fixture)])
    from moveorder.nets.likelihood import evaluator_over, likelihood_of_options

    row = infer_position(
        pos,
        None,
        None,
        cfg,
        lambda: evaluator_over(likelihood_of_options(args)),
        args.network,
        args.precision,
        progress=False,
    )
    assert row["inferred"] == moves
    ev = row["evidence"]
    assert row["chance"] == pytest.approx(sig(0.5 + 1.0 * ev["log_share"] + 0.5 * ev["lgm_log"]))
    assert printed[2] == confidence.chance_line(row)
    assert printed[2].startswith(("a ", "an ", "under "))
    root = game.get_root().get("C")
    assert f"How sure: {confidence.chance_line(row)}." in root
    doubt = [k + 1 for k, p in enumerate(row["move_chances"]) if p < DOUBT]
    assert doubt, "the test's calibration puts some moves in doubt"
    marked = [k for k, n in enumerate(main[1:], start=1) if n.has_property("UC")]
    assert marked == doubt
    for k in marked:
        assert (
            main[k].get("C")
            == f"Move {k} is in doubt: its number is right with a chance of {row['move_chances'][k - 1]:.0%}."
        )
    svg = dia.read_text()
    drawn = set(re.findall(r'id="doubt-([A-T]\d+)"', svg))
    assert drawn == {coords.to_gtp(coords.from_sgf(moves[k - 1])) for k in doubt if moves[k - 1] not in moves[: k - 1]}
    assert f"{row['chance']:.0%} chance it is exact" in svg


def test_the_chance_changes_nothing_of_the_answer(tmp_path, capsys, calibrated_fixture):
    """With and without a calibration (no chance stated), the order, its LGM and the alternatives are the same."""
    import shutil

    pos = position_file(tmp_path, OPENING[:14])
    bare = tmp_path / "bare.txt.gz"
    shutil.copy(FIXTURE, bare)
    outs = []
    for net in (calibrated_fixture, bare):
        out = tmp_path / f"{net.name}.sgf"
        assert (
            cli.main(["infer", str(pos), "--network", str(net), "-o", str(out), "--alternatives", "3", "--quiet"]) == 0
        )
        lines = capsys.readouterr().out.splitlines()
        outs.append((lines[0], lines[1].split("->")[0], lines[3:]))
    assert outs[0] == outs[1]


def test_infer_set_writes_chances_to_jsonl_and_csv(tmp_path, pro2_pool, calibrated_fixture):
    arrs = [clip(r, 12, "pro") for r in load_records(pro2_pool)[:4]]
    write_jsonl(tmp_path / "12m.jsonl", arrs)
    out, table = tmp_path / "out.jsonl", tmp_path / "t.csv"
    argv = [
        "infer-set",
        "--arrangements",
        str(tmp_path / "12m.jsonl"),
        "--out",
        str(out),
        "--table",
        str(table),
        "--network",
        str(calibrated_fixture),
        "--method",
        "beam",
        "--orientations",
        "seats",
        "--quiet",
    ]
    assert cli.main(argv) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    df = pd.read_csv(table)
    model = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    for r, (_, c) in zip(rows, df.iterrows()):
        ev = r["evidence"]
        assert ev["search"] == "beam32f1-seats" and ev["orders"] >= MIN_ORDERS
        # the best order's log-likelihood from the network move by move, in its likelier seat: lgm_log is a move's
        seq = coords.sgf_to_lz(r["inferred"])
        ll = max(float(model.log_probs(torch.tensor([turn_points(seq, s)])).sum()) for s in (0, 3))
        assert ev["lgm_log"] == pytest.approx(ll / 12, abs=1e-9)
        assert r["chance"] == pytest.approx(sig(0.5 + ev["log_share"] + 0.5 * ev["lgm_log"]))
        assert c["chance"] == pytest.approx(r["chance"])
        assert (c["uncertain"] if isinstance(c["uncertain"], str) else "") == " ".join(
            f"{a}-{b}" for a, b in r["uncertain"]
        )
    # 'none': no chance, and the note says why
    out2 = tmp_path / "none.jsonl"
    argv2 = [*argv[:4], str(out2), "--table", str(tmp_path / "t2.csv"), *argv[7:], "--calibration", "none"]
    assert cli.main(argv2) == 0
    for r in (json.loads(x) for x in out2.read_text().splitlines()):
        assert r["chance"] is None and "has no calibration" in r["chance_note"]


def test_infer_set_refuses_a_missing_calibration_before_any_work(tmp_path, caplog):
    argv = [
        "infer-set",
        "--arrangements",
        str(tmp_path / "a.jsonl"),
        "--out",
        str(tmp_path / "o.jsonl"),
        "--table",
        str(tmp_path / "t.csv"),
        "--calibration",
        str(tmp_path / "nope.json"),
    ]
    (tmp_path / "a.jsonl").write_text("")
    assert cli.main(argv) == 2
    assert "nope.json: --calibration: no such file" in caplog.text
    assert not (tmp_path / "o.jsonl").exists()


def test_summary_sets_the_mean_chance_beside_the_exact_rate():
    df = pd.DataFrame(
        {
            "actual_lgm": [0.3, 0.4, 0.5, 0.6],
            "lgm": [0.31, 0.4, 0.5, 0.6],
            "exact_match": [False, True, True, False],
            "matching_prefix": [1, 4, 4, 2],
            "matching_moves": [2, 4, 4, 2],
            "trial_std": [0.0] * 4,
            "chance": [0.2, 0.9, None, 0.4],
        }
    )
    row = metrics.summarize(df)
    assert row["mean_chance"] == pytest.approx(0.5)
    assert row["exact_match_rate_stated"] == pytest.approx(1 / 3)
    assert row["chance_stated_share"] == pytest.approx(0.75)
    assert row["chance_auroc"] == pytest.approx(1.0)
    assert "mean_chance" not in metrics.summarize(df.drop(columns=["chance"]))
