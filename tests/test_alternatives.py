"""moveorder infer --alternatives: the likeliest distinct orders as SGF variations, checked by replaying them."""

import math
import re

import pytest
import torch
from sgfmill import boards, sgf

import helpers
from helpers import OPENING
from moveorder import cli
from moveorder.go.coords import sgf_to_lz
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search.anneal import distinct_orders
from moveorder.search.problem import Order

FIXTURE = str(helpers.FIXTURE)
LETTERS = "abcdefghijklmnopqrs"
STONES = OPENING[:12]


def setup_position(tmp_path):
    """The opening's first 12 stones as setup stones: their sgfmill points per colour."""
    pos = tmp_path / "pos.sgf"
    ab = "".join(f"[{p}]" for p in sorted(STONES[0::2]))
    aw = "".join(f"[{p}]" for p in sorted(STONES[1::2]))
    pos.write_text(f"(;GM[1]FF[4]SZ[19]KM[6.5]AB{ab}AW{aw})")
    return pos


def to_sgf_point(move):
    row, col = move
    return LETTERS[col] + LETTERS[18 - row]  # sgfmill counts rows from the bottom


def lines_of_play(node, prefix=(), note=None):
    """Every root-to-leaf path of the game tree: its moves, and the last comment on it (below the root).

    An alternative's comment sits on its first move of its own, the deepest commented node of its path.
    """
    out = []
    for child in node:
        moves = prefix + (child.get_move(),)
        here = child.get("C") if child.has_property("C") else note
        out.extend(lines_of_play(child, moves, here) if len(child) else [(moves, here)])
    return out


def replay(moves):
    """sgfmill's board after the moves, Black first; no move may capture (the position has no captures)."""
    board = boards.Board(19)
    for i, (colour, (row, col)) in enumerate(moves):
        assert colour == "bw"[i % 2]
        assert board.play(row, col, colour) is None
    return board


def log_likelihood(model, points):
    """log P(order) under the network, one move at a time: each position evaluated on its own."""
    seq = torch.tensor([sgf_to_lz(points)], dtype=torch.long)
    total = 0.0
    for i in range(len(points)):
        probs = model.probs_at(seq, torch.tensor([0]), torch.tensor([i]))
        total += math.log(float(probs[0, int(seq[0, i])]))
    return total


def infer(*args):
    return cli.main(["infer", *args, "--network", FIXTURE, "--device", "cpu", "--quiet"])


@pytest.mark.parametrize(
    "search",
    [
        ("--method", "beam", "--beam-width", "8", "--orientations", "given"),
        ("--method", "anneal", "--iterations", "60", "--trials", "6", "--seed", "3"),
    ],
)
def test_each_alternative_replays_to_the_position_and_states_its_likelihood(tmp_path, capsys, search):
    pos = setup_position(tmp_path)
    root = sgf.Sgf_game.from_bytes(pos.read_bytes()).get_root()
    black, white, _ = root.get_setup_stones()
    out, one = tmp_path / "alt.sgf", tmp_path / "one.sgf"
    assert infer(str(pos), "-o", str(one), *search) == 0
    assert infer(str(pos), "-o", str(out), "--alternatives", "4", *search) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    found = lines_of_play(game.get_root())
    assert 2 <= len(found) <= 4
    lines = [moves for moves, _ in found]
    assert len(set(lines)) == len(lines)  # distinct orders
    for moves in lines:
        board = replay(moves)
        assert {p for c, p in board.list_occupied_points() if c == "b"} == black
        assert {p for c, p in board.list_occupied_points() if c == "w"} == white
    # The main line (the tree's first line, with no comment of its own) is the answer without --alternatives.
    main = [n.get_move() for n in game.get_main_sequence()[1:]]
    assert list(lines[0]) == main and found[0][1] is None
    assert main == [n.get_move() for n in sgf.Sgf_game.from_bytes(one.read_bytes()).get_main_sequence()[1:]]
    # Each alternative's comment: how likely it is beside the main line, recomputed here move by move.
    model = PolicyLikelihood.from_file(helpers.FIXTURE, device="cpu")
    best = log_likelihood(model, [to_sgf_point(p) for _, p in lines[0]])
    ranked = sorted(found[1:], key=lambda line: int(re.search(r"Alternative (\d+) of", line[1]).group(1)))
    assert [re.search(r"Alternative (\d+) of (\d+)", note).groups() for _, note in ranked] == [
        (str(k), str(len(found))) for k in range(2, len(found) + 1)
    ]
    relative = [float(re.search(r"x([0-9.e+-]+) as likely as the main line", note).group(1)) for _, note in ranked]
    assert all(0 < r <= 1 for r in relative) and relative == sorted(relative, reverse=True)
    for r, (moves, note) in zip(relative, ranked):
        ll = log_likelihood(model, [to_sgf_point(p) for _, p in moves])
        assert ll <= best + 1e-9
        assert r == pytest.approx(math.exp(ll - best), rel=2e-3)
        stated = float(re.search(r"\(LGM ([0-9.]+),", note).group(1))
        assert stated == pytest.approx(math.exp(ll / len(STONES)), abs=6e-5)
    text = game.get_root().get("C")
    assert "geometric mean of the network's probability of each move" in text and "another network" in text
    stated = float(re.search(r"LGM ([0-9.]+);", text).group(1))
    assert stated == pytest.approx(math.exp(best / len(STONES)), abs=6e-5)
    assert "alternative 2: x" in capsys.readouterr().out


def half_turn(point: str) -> str:
    """An SGF point seen from the other player's seat: both axes mirrored."""
    return LETTERS[18 - LETTERS.index(point[0])] + LETTERS[18 - LETTERS.index(point[1])]


def test_the_board_from_both_seats_gives_one_answer_and_the_likelier_seats_likelihood(tmp_path):
    """--orientations seats: the position and the same position turned half a turn get the same order,
    turned; its stated LGM is the likelier of its two seats', each recomputed here move by move."""
    answers = []
    for name, stones in (("pos", STONES), ("turned", [half_turn(p) for p in STONES])):
        pos, out = tmp_path / f"{name}.sgf", tmp_path / f"{name}-out.sgf"
        ab = "".join(f"[{p}]" for p in sorted(stones[0::2]))
        aw = "".join(f"[{p}]" for p in sorted(stones[1::2]))
        pos.write_text(f"(;GM[1]FF[4]SZ[19]KM[6.5]AB{ab}AW{aw})")
        assert infer(str(pos), "-o", str(out), "--beam-width", "8", "--orientations", "seats") == 0
        game = sgf.Sgf_game.from_bytes(out.read_bytes())
        moves = [to_sgf_point(n.get_move()[1]) for n in game.get_main_sequence()[1:]]
        stated = float(re.search(r"LGM ([0-9.]+);", game.get_root().get("C")).group(1))
        answers.append((moves, stated))
    (moves, stated), (turned_moves, turned_stated) = answers
    assert turned_moves == [half_turn(p) for p in moves] and turned_stated == stated
    model = PolicyLikelihood.from_file(helpers.FIXTURE, device="cpu")
    seats = [log_likelihood(model, moves), log_likelihood(model, [half_turn(p) for p in moves])]
    assert stated == pytest.approx(math.exp(max(seats) / len(STONES)), abs=6e-5)
    assert abs(seats[0] - seats[1]) > 1e-3  # the network tells the seats apart: the test can fail


def test_more_alternatives_than_found_writes_what_was_found_and_says_so(tmp_path, capsys):
    pos = setup_position(tmp_path)
    out = tmp_path / "alt.sgf"
    # Two trials of the paper's annealing: at most two distinct orders.
    args = ["-o", str(out), "--alternatives", "5", "--quality", "paper", "--iterations", "30", "--trials", "2"]
    assert infer(str(pos), *args) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    found = len(lines_of_play(game.get_root()))
    assert found in (1, 2)
    assert f"Asked for 5 orders; the search found {found} distinct" in game.get_root().get("C")
    assert f"asked for 5 orders; the search found {found} distinct" in capsys.readouterr().out


def test_alternatives_of_a_position_with_captures_replay_to_it_and_its_prisoners(tmp_path):
    from moveorder.data.arrangements import clip
    from moveorder.search.boards import sequence_log_probs
    from test_captures import HAND_MADE, record_of

    want = clip(record_of(HAND_MADE["ko fight"]), 16, "x")
    pos = tmp_path / "pos.sgf"
    pos.write_text(f"(;GM[1]FF[4]SZ[19]AB[{']['.join(want.black)}]AW[{']['.join(want.white)}])")
    out, one = tmp_path / "alt.sgf", tmp_path / "one.sgf"
    search = [
        "--method",
        "beam",
        "--beam-width",
        "16",
        "--orientations",
        "given",
        "--prisoners",
        *map(str, want.prisoners),
    ]
    assert infer(str(pos), "-o", str(one), *search) == 0
    assert infer(str(pos), "-o", str(out), "--alternatives", "3", *search) == 0
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    found = lines_of_play(game.get_root())
    assert len(found) >= 2 and len({moves for moves, _ in found}) == len(found)
    main = [n.get_move() for n in game.get_main_sequence()[1:]]
    assert main == [n.get_move() for n in sgf.Sgf_game.from_bytes(one.read_bytes()).get_main_sequence()[1:]]
    model = PolicyLikelihood.from_file(helpers.FIXTURE, device="cpu")
    lls = []
    for moves, _ in found:
        board, taken = boards.Board(19), {"b": 0, "w": 0}
        for i, (colour, (row, col)) in enumerate(moves):
            assert colour == "bw"[i % 2]
            before = len(board.list_occupied_points())
            board.play(row, col, colour)
            taken[colour] += before + 1 - len(board.list_occupied_points())
        stones = {c: sorted(to_sgf_point(p) for c2, p in board.list_occupied_points() if c2 == c) for c in "bw"}
        assert (stones["b"], stones["w"], [taken["b"], taken["w"]]) == (want.black, want.white, want.prisoners)
        lls.append(float(sequence_log_probs(model, sgf_to_lz([to_sgf_point(p) for _, p in moves])).sum()))
    for (moves, note), ll in zip(found[1:], lls[1:]):
        r = float(re.search(r"x([0-9.e+-]+) as likely as the main line", note).group(1))
        assert 0 < r <= 1 and r == pytest.approx(math.exp(ll - lls[0]), rel=2e-3)


def test_distinct_orders_by_hand():
    trials = [
        Order([1, 2, 3], -5.0),
        Order([2, 1, 3], -4.0),
        Order([1, 2, 3], -5.0),  # a second trial that ended on the same order
        Order([3, 2, 1], -4.0),  # tied with the second: the earlier trial ranks first
        Order([3, 1, 2], -9.0),
    ]
    assert distinct_orders(trials, 3) == [([2, 1, 3], -4.0), ([3, 2, 1], -4.0), ([1, 2, 3], -5.0)]
    assert distinct_orders(trials, 10) == [([2, 1, 3], -4.0), ([3, 2, 1], -4.0), ([1, 2, 3], -5.0), ([3, 1, 2], -9.0)]
    assert distinct_orders(trials, 1) == [([2, 1, 3], -4.0)]


def test_the_capture_search_answer_is_the_same_whatever_it_keeps(passes=3, widen=2):
    """Three passes, the later ones wider where none was found: the alternatives pool every pass's."""
    from moveorder.data.arrangements import clip
    from moveorder.search import boards, captures
    from moveorder.search.problem import problem_of_arrangement
    from test_captures import HAND_MADE, record_of

    model = PolicyLikelihood.from_file(helpers.FIXTURE, device="cpu")
    answered = 0
    for name, text in HAND_MADE.items():
        problem = problem_of_arrangement(clip(record_of(text), len(text) // 2, "x"))
        (alone,) = captures.search(model, [problem], 8, 1.0, 0, beam_passes=passes, beam_widen=widen)
        orders = []
        (best,) = captures.search(
            model, [problem], 8, 1.0, 0, beam_passes=passes, beam_widen=widen, keep=5, orders=orders
        )
        assert best == alone, name
        (found,) = orders
        if alone is None:  # none found at this width: no alternatives either
            assert found == []
            continue
        answered += 1
        assert found[0] == alone and 1 <= len(found) <= 5
        assert len({tuple(m) for m, _ in found}) == len(found)
        assert [ll for _, ll in found[1:]] == sorted((ll for _, ll in found[1:]), reverse=True)
        for moves, ll in found:  # every one reaches the position, with its log-likelihood rescored here
            assert boards.replay_boards(moves)[-1] == problem.final_board()
            assert ll == pytest.approx(float(boards.sequence_log_probs(model, moves).sum()), abs=1e-6)
    assert answered >= 2


def test_the_capture_search_tells_its_progress_the_evaluations_it_spends():
    """The capture search reports to ``progress`` each network evaluation as it is spent, up to the most it
    may spend (width x moves x (1 + (passes - 1) x widen + widen + patience): the passes, the beam on the
    capture sites' last rung where two passes end below it, backtracking), and fills the rest at its end;
    the answer is the one found without a progress bar."""
    from moveorder.data.arrangements import clip
    from moveorder.search import captures
    from moveorder.search.problem import problem_of_arrangement
    from test_captures import HAND_MADE, record_of

    class Bar:
        def __init__(self):
            self.steps = []

        def update(self, k):
            self.steps.append(k)

    model = PolicyLikelihood.from_file(helpers.FIXTURE, device="cpu")
    text = next(iter(HAND_MADE.values()))
    problem = problem_of_arrangement(clip(record_of(text), len(text) // 2, "x"))
    (alone,) = captures.search(model, [problem], 8, 1.0, 1, beam_passes=2, beam_widen=2)
    bar, before = Bar(), model.evaluations
    (found,) = captures.search(model, [problem], 8, 1.0, 1, beam_passes=2, beam_widen=2, progress=bar)
    spent = model.evaluations - before
    most = 8 * problem.moves * (1 + (2 - 1) * 2 + 2 + 1)
    assert found == alone
    assert len(bar.steps) >= 2 and all(k >= 0 for k in bar.steps)  # told as it went, then at the end
    assert sum(bar.steps[:-1]) == min(spent, most)  # every evaluation, as it was spent
    assert sum(bar.steps) == most  # the rest at the end
