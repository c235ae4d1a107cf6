"""moveorder.search.beam: beam search over orders, and the exact solver it becomes without a width limit."""

import itertools

import pytest
import torch

from moveorder.data.arrangements import clip
from moveorder.go.coords import lz_to_sgf, sgf_to_lz
from moveorder.nets.likelihood import PositionEvaluator
from moveorder.search import anneal as sa
from moveorder.search import exact
from moveorder.search.beam import _ranked, beam_search
from moveorder.search.dispatch import run
from moveorder.search.problem import problem_of_stones
from moveorder.settings import SearchConfig


def test_exact_solver_equals_enumerating_every_order(model, real_games):
    """The merged breadth-first search against scoring all |B|! x |W|! orders one by one."""
    ev = PositionEvaluator(model)
    for r in real_games[60:63]:
        a = clip(r, 7, "pro")
        b, w = sgf_to_lz(a.black), sgf_to_lz(a.white)
        orders = []
        for pb in itertools.permutations(b):
            for pw in itertools.permutations(w):
                seq = [None] * 7
                seq[0::2], seq[1::2] = pb, pw
                orders.append(seq)
        ll = model.log_probs(torch.tensor(orders)).sum(1)
        seq, best = exact.brute_force(ev, b, w)
        assert best == pytest.approx(float(ll.max()), abs=1e-9)
        assert float(model.log_probs(torch.tensor([seq])).sum()) == pytest.approx(best, abs=1e-9)


def test_beam_of_width_one_is_the_greedy_start(model, real_games):
    arrs = [clip(r, 14, "pro") for r in real_games[70:76]]
    pairs = [(sgf_to_lz(a.black), sgf_to_lz(a.white)) for a in arrs]
    ev = PositionEvaluator(model)
    black, white = sa.stone_tensors(pairs, "cpu")
    greedy = sa.greedy_orders(ev, black, white).tolist()
    assert [found[0][0] for found in beam_search(ev, pairs, width=1)] == greedy


@pytest.mark.parametrize("future", [0.0, 1.0])
def test_beams_keep_their_best_orders_alone_or_batched_and_start_the_annealer(model, real_games, future):
    arrs = [clip(r, 14, "pro") for r in real_games[70:76]]
    pairs = [(sgf_to_lz(a.black), sgf_to_lz(a.white)) for a in arrs]
    ev = PositionEvaluator(model)
    wide = beam_search(ev, pairs, width=16, keep=3, future=future)
    alone = beam_search(ev, pairs[2:3], width=16, keep=3, future=future)
    assert wide[2] == alone[0]  # an arrangement's beam does not depend on its batch
    for w_ in wide:
        assert len(w_) == 3 and w_[0][1] >= w_[1][1] >= w_[2][1]
        assert len({tuple(s) for s, _ in w_}) == 3
        for order, ll in w_:  # each order's log-likelihood is its own, as scored from scratch
            assert float(model.log_probs(torch.tensor([order])).sum()) == pytest.approx(ll, abs=1e-9)
    # beam+anneal starts each trial from one of the beam's best orders and keeps the best it sees.
    cfg = SearchConfig(
        iterations=60, trials=3, method="beam+anneal", beam_width=16, beam_future=future, t_start=0.3, seed=2
    )
    assert cfg.init == "beam"
    annealed = sa.anneal(ev, pairs, cfg)
    for w_, trials in zip(wide, annealed):
        for k, t in enumerate(trials):
            assert t.log_likelihood >= w_[k][1] - 1e-9
    # the beam alone, through the one entry point: its best order is the one trial, its 3 best the orders
    problems = [problem_of_stones(b, w) for b, w in pairs]
    only_beam = run(ev, problems, SearchConfig(method="beam", beam_width=16, beam_future=future), keep=3)
    assert [[t.moves for t in f.trials] for f in only_beam] == [[w_[0][0]] for w_ in wide]
    assert [f.orders for f in only_beam] == wide


def test_the_ranked_beam_keeps_half_by_likelihood_and_fills_by_score():
    """beam._ranked: each arrangement's width // 2 likeliest prefixes, then the best of the rest by score,
    ties in the score to the likelier prefix; arrangements never compete."""
    ll = torch.tensor([-1.0, -2.0, -3.0, -4.0, -5.0, -1.5, -0.5, -9.0], dtype=torch.float64)
    score = torch.tensor([-9.0, -8.0, 0.0, -1.0, 0.0, 0.0, -3.0, 5.0], dtype=torch.float64)
    owner = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1])
    kept = _ranked(ll, owner, 4, score).tolist()
    # arrangement 0: rows 0, 1 by likelihood, then 2 and 4 (score 0; 2 is likelier) before 3 (score -1)
    # arrangement 1: rows 6, 5 by likelihood, then 7 (the only one left)
    assert kept == [0, 1, 2, 4, 6, 5, 7]
    assert _ranked(ll, owner, 1, score).tolist() == [2, 7]  # width 1: no likelihood half, the best score


def reference_plain_beam(model, black, white, width):
    """The plain beam written out move by move, scoring each child with ``log_probs`` at its last move:
    children of the kept prefixes (stones in index order), prefixes that give the network the same
    input merged (same stones up to 8 moves ago, same last 7 moves: keep the likelier), then the
    ``width`` likeliest. Returns the likeliest complete order and its log-likelihood."""
    n = len(black) + len(white)
    kept = [((), 0.0)]
    for i in range(n):
        side = black if i % 2 == 0 else white
        children = [(p + (s,), ll) for p, ll in kept for s in sorted(side) if s not in p]
        full = []  # each child completed with its free stones, so that every position is a real one
        for c, _ in children:
            rest_b = [s for s in sorted(black) if s not in c]
            rest_w = [s for s in sorted(white) if s not in c]
            full.append(list(c) + [(rest_b if k % 2 == 0 else rest_w).pop(0) for k in range(i + 1, n)])
        terms = model.log_probs(torch.tensor(full), torch.full((len(full), 1), i)).squeeze(1).tolist()
        scored = [(c, ll + t) for (c, ll), t in zip(children, terms)]
        merged = {}
        for c, ll in scored:
            key = (frozenset(c[: max(0, i + 1 - 7)]), c[max(0, i + 1 - 7) :])
            if key not in merged or ll > merged[key][1]:
                merged[key] = (c, ll)
        kept = sorted(merged.values(), key=lambda x: -x[1])[: width if i + 1 < n else 1]
    return list(kept[0][0]), kept[0][1]


def test_the_plain_beam_keeps_the_likeliest_prefixes(model, real_games):
    """future 0 (the default) is the plain beam: at each move number the ``width`` likeliest prefixes,
    as the reference above finds them; future > 0 ranks otherwise."""
    arrs = [clip(r, 12, "pro") for r in real_games[80:86]]
    pairs = [(sgf_to_lz(a.black), sgf_to_lz(a.white)) for a in arrs]
    ev = PositionEvaluator(model, cache_size=0)
    plain = beam_search(ev, pairs, width=4)
    for (b, w), found in zip(pairs, plain):
        order, ll = reference_plain_beam(model, b, w, 4)
        assert found[0][0] == order and found[0][1] == pytest.approx(ll, abs=1e-9)
    assert beam_search(ev, pairs, width=4, future=1.0) != plain


def turn_sgf(point: str, s: int) -> str:
    """Symmetry ``s`` of the board on an SGF point, written out by hand: bit 4 swaps the axes, then
    bit 1 mirrors the columns and bit 2 the rows (the 8 symmetries, the identity first)."""
    col, row = ord(point[0]) - 97, ord(point[1]) - 97
    if s & 4:
        col, row = row, col
    if s & 1:
        col = 18 - col
    if s & 2:
        row = 18 - row
    return chr(97 + col) + chr(97 + row)


def test_searching_every_orientation_finds_the_likeliest_order_of_any(model, real_games):
    """The exact solver over the 8 orientations against enumerating every order in every orientation,
    each scored from scratch in that orientation; the order comes back in the given orientation."""
    ev = PositionEvaluator(model)
    gained = 0
    for r in real_games[60:63]:
        a = clip(r, 7, "pro")
        orders = []
        for pb in itertools.permutations(a.black):
            for pw in itertools.permutations(a.white):
                seq = [None] * 7
                seq[0::2], seq[1::2] = pb, pw
                orders.append(seq)
        scored = []
        for s in range(8):
            turned = torch.tensor([sgf_to_lz([turn_sgf(p, s) for p in seq]) for seq in orders])
            scored += zip(model.log_probs(turned).sum(1).tolist(), orders)
        best = max(scored, key=lambda x: x[0])
        pair = (sgf_to_lz(a.black), sgf_to_lz(a.white))
        ((order, ll),) = beam_search(ev, [pair], width=None, orientations=range(8))[0]
        ((_, given),) = beam_search(ev, [pair], width=None)[0]
        assert ll == pytest.approx(best[0], abs=1e-9)
        assert order == sgf_to_lz(best[1])  # the given orientation's points
        gained += ll > given + 1e-9
    assert gained >= 1  # this network is not symmetric: another orientation scores likelier for some


def test_an_arrangement_and_its_turned_copy_get_the_same_order(model, real_games):
    """With every orientation searched, turning the stones turns the answer and keeps its likelihood."""
    ev = PositionEvaluator(model)
    for r in real_games[70:73]:
        a = clip(r, 14, "pro")
        pair = (sgf_to_lz(a.black), sgf_to_lz(a.white))
        for s in (3, 5):  # half a turn; the diagonal mirror and a mirror of the columns
            turned = (sgf_to_lz([turn_sgf(p, s) for p in a.black]), sgf_to_lz([turn_sgf(p, s) for p in a.white]))
            ((order, ll),) = beam_search(ev, [pair], width=8, future=1.0, orientations=range(8))[0]
            ((t_order, t_ll),) = beam_search(ev, [turned], width=8, future=1.0, orientations=range(8))[0]
            assert t_ll == pytest.approx(ll, abs=1e-9)
            assert t_order == sgf_to_lz([turn_sgf(p, s) for p in lz_to_sgf(order)])
        # The order the symmetries are named in breaks no tie: the same search, the same answer.
        assert beam_search(ev, [pair], width=8, future=1.0, orientations=range(7, -1, -1))[0] == [(order, ll)]


@pytest.mark.parametrize("orientations", [[], [0, 0], [8]])
def test_orientations_must_be_distinct_symmetries(model, orientations):
    with pytest.raises(ValueError, match="distinct symmetries among 0..7"):
        beam_search(PositionEvaluator(model), [([60], [])], width=2, orientations=orientations)


def test_the_orientations_of_an_arrangement_share_one_beam(model, real_games):
    """``width`` prefixes in all at each move number, whatever the orientations: after the 8 empty
    boards (one a orientation), at most ``width`` positions a move are asked of the network."""
    from moveorder.search.problem import counters

    a = clip(real_games[75], 14, "pro")
    pair = (sgf_to_lz(a.black), sgf_to_lz(a.white))
    for turns, most in (((0,), 1 + 2 * 13), (range(8), 8 + 2 * 13)):
        ev = PositionEvaluator(model, cache_size=0)
        beam_search(ev, [pair], width=2, future=1.0, orientations=turns)
        assert counters(ev)[0] <= most
