"""The capture search's merge of prefixes (``SearchConfig.capture_merge``, search/layer.merge_key).

Oracles from elsewhere: an exhaustive search over every legal sequence in a corner of the board, on
sgfmill's board (test_captures.replay's rules: captures, no suicide, no simple-ko retake, positional
superko), under a stand-in likelihood that sees the board alone; and sgfmill's replay of every
answer.  Under a likelihood that sees the board alone, merging prefixes with the same board loses
nothing, so a beam wide enough to keep every board finds the exhaustive optimum; with the history
a network sees, it is a heuristic, and the tests on the real network check only what must hold.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np
import pytest
import torch

from moveorder.go import coords
from moveorder.nets.likelihood import PolicyLikelihood
from moveorder.search import captures as cap
from moveorder.search import layer as capture_layer
from moveorder.search.boards import sequence_log_probs
from moveorder.settings import SearchConfig
from test_captures import assert_answers, captures_by_move, corner_play, problem_of, replay, unreachable_problem

SIZE = coords.SIZE
CORNER = 4  # the problems are played in the top-left 4x4 corner
REACH = 5  # the exhaustive search plays in the top-left 5x5 (one line more than the problems use)


@lru_cache(maxsize=None)
def _distribution(key: bytes) -> np.ndarray:
    """A fixed random peaked distribution over the 362 moves for one board and side to move (float32,
    as a network gives it)."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))
    logits = 3.0 * rng.gumbel(size=SIZE * SIZE + 1)
    e = np.exp(logits - logits.max())
    return (e / e.sum()).astype(np.float32)


def board_key(own: np.ndarray, opponent: np.ndarray, black_to_move: bool) -> bytes:
    """The stand-in's input: the stones of the side to move and of the other side (Leela Zero order)."""
    return own.astype(np.uint8).tobytes() + opponent.astype(np.uint8).tobytes() + bytes([black_to_move])


class BoardOnlyLikelihood:
    """A stand-in for the policy network that reads only the current board and the side to move of its
    input planes (planes 0 and 8, 16), never the history planes."""

    legal_only = False

    def __init__(self):
        self.evaluations, self.seconds = 0, 0.0

    def probs_of_planes(self, planes: torch.Tensor) -> torch.Tensor:
        flat = planes.reshape(len(planes), planes.shape[1], SIZE * SIZE).numpy() > 0.5
        self.evaluations += len(planes)
        if not len(planes):
            return torch.empty(0, SIZE * SIZE + 1)
        return torch.from_numpy(np.stack([_distribution(board_key(f[0], f[8], bool(f[16, 0]))) for f in flat]))


def _sgfmill_lz(board, colour: str) -> np.ndarray:
    """The ``colour`` stones of an sgfmill board as a Leela Zero-order mask (sgfmill's row 0 the bottom)."""
    out = np.zeros(SIZE * SIZE, dtype=bool)
    for c, (row, col) in board.list_occupied_points():
        if c == colour:
            out[row * SIZE + col] = True  # Leela Zero index: row from the bottom, then column
    return out


def exhaustive_best(problem, reach: int = REACH):
    """The likeliest legal sequence reaching ``problem`` with every move in the top-left ``reach`` x
    ``reach``, under :class:`BoardOnlyLikelihood`, by trying them all on sgfmill's board; None where none
    does.  A move for a colour onto a point the position does not give that colour must be captured
    later, so such moves are at most the colour's stones captured (the one pruning, sound)."""
    from sgfmill import boards

    final = {"b": set(problem.black), "w": set(problem.white)}
    budget = {"b": problem.prisoners_white, "w": problem.prisoners_black}  # stones of each colour captured
    points = [coords.to_lz((r, c)) for r in range(reach) for c in range(reach)]
    target = frozenset(("b", k) for k in final["b"]) | frozenset(("w", k) for k in final["w"])
    best = [None, -np.inf]

    def position(board):
        return frozenset((c, r * SIZE + q) for c, (r, q) in board.list_occupied_points())

    def walk(board, ko, seen, moves, ll, spent):
        i = len(moves)
        if i == problem.moves:
            if position(board) == target and ll > best[1]:
                best[0], best[1] = list(moves), ll
            return
        colour, other = "bw"[i % 2], "wb"[i % 2]
        left = {c: sum(1 for j in range(i, problem.moves) if "bw"[j % 2] == c) for c in "bw"}
        placed = {c: sum(1 for k in final[c] if board.get(k // SIZE, k % SIZE) == c) for c in "bw"}
        if any(len(final[c]) - placed[c] > left[c] for c in "bw"):
            return
        dist = _distribution(board_key(_sgfmill_lz(board, colour), _sgfmill_lz(board, other), colour == "b"))
        for k in points:
            row, col = divmod(k, SIZE)
            if board.get(row, col) is not None or (row, col) == ko:
                continue
            doomed = k not in final[colour]
            if doomed and spent[colour] >= budget[colour]:
                continue
            after = board.copy()
            new_ko = after.play(row, col, colour)
            if after.get(row, col) != colour:  # suicide
                continue
            now = position(after)
            if now in seen:  # positional superko
                continue
            walk(
                after,
                new_ko,
                seen | {now},
                moves + [k],
                ll + float(np.log(dist[k])),
                {**spent, colour: spent[colour] + doomed},
            )

    walk(boards.Board(SIZE), None, {frozenset()}, [], 0.0, {"b": 0, "w": 0})
    return None if best[0] is None else (best[0], best[1])


def corner_problems(count: int, moves: int, seed: int):
    """``count`` problems from seeded random legal play in the top-left corner with at least one capture
    (each checked on sgfmill's board by :func:`problem_of`)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        seq = corner_play(rng, moves, CORNER)
        if len(seq) == moves and sum(captures_by_move(seq)) == 1:
            out.append(problem_of(seq))
    return out


def test_the_stand_in_reads_the_board_alone():
    """Two orders of the same stones: the stand-in gives the last position the same distribution, and
    sequence_log_probs' terms match the stand-in's by hand."""
    like = BoardOnlyLikelihood()
    a = [coords.to_lz(coords.from_gtp(m)) for m in "D4 Q16 Q4 D16 C3".split()]
    b = [coords.to_lz(coords.from_gtp(m)) for m in "Q4 D16 D4 Q16 C3".split()]
    la, lb = sequence_log_probs(like, a), sequence_log_probs(like, b)
    assert la[-1] == pytest.approx(lb[-1], abs=1e-12)  # C3 on the same four stones
    assert la[1] != pytest.approx(lb[1])  # other boards, other distributions
    from sgfmill import boards

    board = boards.Board(SIZE)
    for i, k in enumerate(a[:4]):
        board.play(k // SIZE, k % SIZE, "bw"[i % 2])
    dist = _distribution(board_key(_sgfmill_lz(board, "b"), _sgfmill_lz(board, "w"), True))
    assert la[-1] == pytest.approx(float(np.log(dist[a[-1]])), abs=1e-6)


@pytest.fixture(scope="module")
def corner_optima():
    """Four corner problems of 8 moves and their exhaustive optima (worked out once for both merges)."""
    return [(problem, exhaustive_best(problem)) for problem in corner_problems(4, 8, seed=11)]


@pytest.mark.parametrize("merge", ["board", "input"])
def test_a_beam_keeping_every_board_finds_the_exhaustive_optimum(merge, corner_optima):
    """Under a likelihood of the board alone, both merges lose nothing: a beam wide enough for every
    prefix (doomed stones anywhere on the board) finds the likeliest order of the exhaustive search on
    sgfmill's board, to the same log-likelihood, and it replays to the position."""
    like = BoardOnlyLikelihood()
    problems = [problem for problem, _ in corner_optima]
    found = cap.capture_beam(like, problems, width=4096, future=0.0, merge=merge)
    for (problem, want), got in zip(corner_optima, found):
        assert want is not None and got, problem
        seq, ll = got[0]
        assert_answers(seq, problem)
        assert ll == pytest.approx(want[1], abs=1e-4), (problem, seq, want)  # float32 logs over 8 moves


def test_merging_by_board_keeps_one_prefix_a_board_and_the_likeliest():
    """A layer's children kept under ``board`` hold distinct boards (sgfmill's replay of their moves),
    each the likeliest of the legal children with its board; under ``input`` the same layer keeps
    boards twice (so the first check can fail)."""
    like = BoardOnlyLikelihood()
    (problem,) = corner_problems(1, 8, seed=11)
    beams = {}
    for merge in ("board", "input"):
        (found,) = cap.capture_beam(like, [problem], width=4096, future=0.0, merge=merge)
        assert found
        beams[merge] = _kept_at(like, problem, merge, depth=4)
    boards = [replay(p.moves)[0][-1] for p in beams["board"]]
    assert len(set(boards)) == len(boards) > 1
    inputs = [replay(p.moves)[0][-1] for p in beams["input"]]
    assert len(set(inputs)) < len(inputs)  # the same board reached in other orders
    assert set(inputs) == set(boards)  # no board is lost, only its other orders
    best = {}
    for p in beams["input"]:
        b = replay(p.moves)[0][-1]
        best[b] = max(best.get(b, -np.inf), float(sequence_log_probs(like, p.moves).sum()))
    for p, b in zip(beams["board"], boards):
        assert float(sequence_log_probs(like, p.moves).sum()) == pytest.approx(best[b], abs=1e-9)


def _kept_at(like, problem, merge: str, depth: int):
    """The prefixes a beam of unlimited width keeps after ``depth`` moves (the layers built by hand, as
    capture_beam builds them)."""
    from moveorder.search.boards import position_log_probs
    from moveorder.search.prunes import Target

    target, estimate = Target(problem), capture_layer.no_estimates()
    beam = [capture_layer.root()]
    for i in range(depth):
        lp = position_log_probs(like, [p.hist for p in beam], i % 2 == 0)[:, : SIZE * SIZE]
        beam = capture_layer.Layer(target, beam, lp, i, estimate, 0.0, merge).choose(4096, 0.0)
    return beam


def test_an_unknown_merge_is_refused_naming_it():
    with pytest.raises(ValueError, match="capture_merge 'set': expected input or board"):
        capture_layer.merge_key("set")
    with pytest.raises(ValueError, match=r"capture_merge 'set': expected one of \('input', 'board'\)"):
        SearchConfig(method="beam", capture_merge="set")


@pytest.fixture(scope="module")
def shipped():
    return PolicyLikelihood.from_file("tygem", device="cpu")


def test_merged_by_board_real_answers_replay_and_a_position_none_reaches_is_proven(shipped, capture_games, model):
    """With the real network and the board merge: every answer on real games (Fox pro, their first 40 moves
    with a capture) replays on sgfmill's board to exactly the position; and backtracking still proves a
    position no sequence reaches."""
    actual = [g[:40] for g in capture_games if sum(captures_by_move(g[:40])) > 0][:4]
    problems = [problem_of(a) for a in actual]
    found = cap.search(shipped, problems, width=16, patience=0, beam_passes=2, beam_widen=4, merge="board")
    assert sum(r is not None for r in found) >= 3
    for problem, r in zip(problems, found):
        if r is not None:
            assert_answers(r[0], problem)
            assert float(sequence_log_probs(shipped, r[0]).sum()) == pytest.approx(r[1], abs=1e-9)
    from moveorder.search import problem as prob

    nowhere = unreachable_problem()
    stats, proven = prob.SearchStats(), []
    assert cap.search(model, [nowhere], width=8, stats=stats, proven=proven, merge="board") == [None]
    assert proven == [True] and stats.unreachable == 1


def test_the_setting_reaches_every_layer_of_the_beam_and_of_backtracking(model, monkeypatch):
    """``capture_merge`` from SearchConfig through the dispatcher to each layer the capture search builds,
    its passes and its backtracking alike; ``input`` unless set."""
    from moveorder.nets.likelihood import PositionEvaluator
    from moveorder.search import dispatch
    from moveorder.search import problem as prob

    seen = []

    class Recording(capture_layer.Layer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(args[6] if len(args) > 6 else kwargs.get("merge", "input"))

    monkeypatch.setattr(cap, "Layer", Recording)
    nowhere = unreachable_problem()
    (problem,) = corner_problems(1, 8, seed=11)
    for merge in ("board", "input"):
        seen.clear()
        stats = prob.SearchStats()
        cfg = SearchConfig(method="beam", beam_width=4, beam_passes=2, capture_merge=merge)
        for problems in ([problem], [nowhere]):  # one length a batch
            dispatch.run(PositionEvaluator(model), problems, cfg, stats=stats)
        assert stats.backtracked == 1 and len(seen) > 16 and set(seen) == {merge}
    seen.clear()
    dispatch.run(PositionEvaluator(model), [problem], SearchConfig(method="beam", beam_width=4))
    assert seen and set(seen) == {"input"}


def test_the_one_position_tool_merges_by_board_unless_told(tmp_path):
    """``moveorder infer``'s default (the fast preset) merges by board, says so in the answer's settings,
    and ``--capture-merge input`` is the other way; the answer replays on sgfmill's board either way."""
    from helpers import make_sgf
    from test_captures import HAND_MADE, infer_tool, replayed_by_sgfmill, sgf_moves

    text = HAND_MADE["snapback"]
    rec = tmp_path / "corner.sgf"
    rec.write_text(make_sgf([text[k : k + 2] for k in range(0, len(text), 2)]))
    for extra, said in (([], True), (["--capture-merge", "input"], False)):
        out = tmp_path / f"ordered{len(extra)}.sgf"
        assert infer_tool(rec, "--network", "tygem", "-o", out, *extra) == 0
        sgf = out.read_text()
        assert ("prefixes with the same board merged" in sgf) == said
        black, white, taken = replayed_by_sgfmill(out)
        want = problem_of(sgf_moves(text))  # the record's own final position, on sgfmill's board
        assert sorted(coords.to_lz(coords.from_sgf(m)) for m in black) == sorted(want.black)
        assert sorted(coords.to_lz(coords.from_sgf(m)) for m in white) == sorted(want.white)
        assert taken == (want.prisoners_black, want.prisoners_white)
