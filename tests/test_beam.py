"""moveorder.beam: beam search over orders, and the exact solver it becomes without a width limit."""

import itertools

import pytest
import torch

from moveorder import annealing as sa
from moveorder.arrangements import clip
from moveorder.beam import beam_search
from moveorder.coords import sgf_to_lz
from moveorder.likelihood import PositionEvaluator


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
        seq, best = sa.brute_force(ev, b, w)
        assert best == pytest.approx(float(ll.max()), abs=1e-9)
        assert float(model.log_probs(torch.tensor([seq])).sum()) == pytest.approx(best, abs=1e-9)


def test_beam_of_width_one_is_the_greedy_start_and_wider_beams_do_no_worse(model, real_games):
    arrs = [clip(r, 14, "pro") for r in real_games[70:76]]
    pairs = [(sgf_to_lz(a.black), sgf_to_lz(a.white)) for a in arrs]
    ev = PositionEvaluator(model)
    black, white = sa.stone_tensors(pairs, "cpu")
    greedy = sa.greedy_orders(ev, black, white).tolist()
    narrow = beam_search(ev, pairs, width=1)
    assert [found[0][0] for found in narrow] == greedy
    wide = beam_search(ev, pairs, width=16, keep=3)
    alone = beam_search(ev, pairs[2:3], width=16, keep=3)
    assert wide[2] == alone[0]  # an arrangement's beam does not depend on its batch
    for n_, w_ in zip(narrow, wide):
        assert w_[0][1] >= n_[0][1] - 1e-9 and len(w_) == 3 and w_[0][1] >= w_[1][1] >= w_[2][1]
        assert len({tuple(s) for s, _ in w_}) == 3
    # beam+anneal starts each trial from one of the beam's best orders and keeps the best it sees.
    cfg = sa.AnnealConfig(iterations=60, trials=3, method="beam+anneal", beam_width=16, t_start=0.3, seed=2)
    assert cfg.init == "beam"
    annealed = sa.anneal(ev, pairs, cfg)
    for w_, trials in zip(wide, annealed):
        for k, t in enumerate(trials):
            assert t.best_log_likelihood >= w_[k][1] - 1e-9
    only_beam = sa.anneal(ev, pairs, sa.AnnealConfig(method="beam", beam_width=16))
    assert [t[0].best for t in only_beam] == [w_[0][0] for w_ in wide]
