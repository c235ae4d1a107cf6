"""The exact solver (moveorder.search.exact): the same optimum as the merged breadth-first search over every order
(exact.brute_force), never below beam search's best, and fewer prefixes visited."""

import math

import pytest
import torch

from helpers import FIXTURE
from moveorder.data.arrangements import clip
from moveorder.go.coords import MOVES, sgf_to_lz
from moveorder.nets.likelihood import InputHasher, PolicyLikelihood, PositionEvaluator
from moveorder.search import anneal as sa
from moveorder.search import exact
from moveorder.search.beam import beam_search
from moveorder.search.exact import exact_orders


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One thread: these batches are small, and the tests run beside other work."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def pairs_of(records, stones):
    return [(sgf_to_lz(a.black), sgf_to_lz(a.white)) for a in (clip(r, stones, "pro") for r in records)]


def bfs(evaluator, black, white):
    """brute_force's order, log-likelihood and the prefixes it evaluated."""
    before = evaluator.requests
    seq, ll = exact.brute_force(evaluator, black, white)
    return seq, ll, evaluator.requests - before


def test_agrees_with_brute_force_with_the_fixture_network(real_games):
    """8 and 10 stones of real games, the 0k fixture network (nearly uniform: little can be pruned)."""
    model = PolicyLikelihood.from_file(FIXTURE, device="cpu")
    pairs = pairs_of(real_games[:3], 8) + pairs_of(real_games[3:4], 10)
    solved = exact_orders(PositionEvaluator(model), pairs, incumbent_width=8)
    beams = [beam_search(PositionEvaluator(model), [p], width=8, future=1.0)[0][0] for p in pairs]
    for (b, w), (order, ll, stats), (_, beam_ll) in zip(pairs, solved, beams):
        seq, best, visited = bfs(PositionEvaluator(model), b, w)
        assert order == seq and ll == pytest.approx(best, abs=1e-9)
        assert sorted(order[0::2]) == sorted(b) and sorted(order[1::2]) == sorted(w)
        assert ll >= beam_ll - 1e-9 and stats.incumbent_log_likelihood == pytest.approx(beam_ll, abs=1e-12)
        assert stats.prefixes <= visited
        # The log-likelihood is the order's own, scored move by move.
        assert float(model.log_probs(torch.tensor([order])).sum()) == pytest.approx(ll, abs=1e-6)
    assert sum(s.incumbent_optimal for _, _, s in solved) < len(pairs)  # the beam missed some optima here


def test_prunes_with_a_trained_network_and_still_agrees(request, real_games):
    """conftest's network trained on real games: fewer prefixes than the breadth-first search, same optimum."""
    # The fixture is trained on one torch thread (conftest), but its weights still follow the machine's
    # vector kernels: the solver visited 38,653 of the 41,331 merged prefixes on an AVX2 machine (6.5%
    # pruned) and 39,658 on an AVX-512 one (4.0%), all pruned at the last move. What holds on both: no
    # depth has more than the breadth-first search's prefixes, and over 2% of the last move's are pruned.
    out, _, _ = request.getfixturevalue("trained")
    model = PolicyLikelihood.from_file(out / "model.pt", device="cpu")
    ((b, w),) = pairs_of(real_games[:1], 10)
    ((order, ll, stats),) = exact_orders(PositionEvaluator(model), [(b, w)], incumbent_width=32)
    seq, best, visited = bfs(PositionEvaluator(model), b, w)
    assert order == seq and ll == pytest.approx(best, abs=1e-9)
    assert visited == 41331  # every merged prefix of 5 + 5 stones
    # Merged prefixes of k black and j white stones out of 5 + 5: 5!/(5-k)! x 5!/(5-j)!, by hand.
    full = [1, 5, 25, 100, 400, 1200, 3600, 7200, 14400, 14400]  # the last: 5! x 5!, white's fifth to come
    assert sum(full) == visited and sum(stats.per_depth) == stats.prefixes
    assert all(d <= f for d, f in zip(stats.per_depth, full, strict=True))
    assert stats.per_depth[-1] < 0.98 * full[-1]
    # The beam's positions come back from the evaluator's cache.
    assert stats.prefixes < stats.evaluations < stats.prefixes + stats.incumbent_evaluations
    # Without an incumbent nothing is pruned: it is the breadth-first search.
    ((b8, w8),) = pairs_of(real_games[:1], 8)
    seq8, _, visited8 = bfs(PositionEvaluator(model), b8, w8)
    ((order0, _, stats0),) = exact_orders(PositionEvaluator(model), [(b8, w8)], incumbent_width=0)
    assert order0 == seq8 and stats0.prefixes == visited8 == 1653 and stats0.incumbent_evaluations == 0


class PeakedEvaluator:
    """A stand-in for a strong network, with no network: each input's distribution is a fixed random
    peaked one drawn from its InputHasher key (so equal inputs get equal distributions, as merging needs)."""

    def __init__(self, sharpness: float = 4.0):
        self.device = torch.device("cpu")
        self.hasher = InputHasher(self.device)
        self.sharpness = sharpness
        self.requests = self.evaluations = 0

    def probs(self, sequences, rows, positions, moves=None):
        keys = self.hasher.keys(sequences, rows, positions)
        self.requests += len(rows)
        self.evaluations += len(rows)
        points = torch.arange(MOVES)[None, :]
        u = sa.uniform(sa.mix32((keys[:, None] & 0xFFFFFFFF) ^ sa.mix32(points + ((keys[:, None] >> 32) & 0xFFFF))))
        out = torch.softmax(-self.sharpness * torch.log(-torch.log(u)), 1).float()
        return out if moves is None else out.gather(1, moves[:, None]).squeeze(1)


@pytest.mark.parametrize("stones, count", [(8, 12), (10, 3)])
def test_agrees_with_brute_force_under_a_peaked_likelihood(real_games, stones, count):
    """Where much is pruned (a peaked likelihood): the same orders as brute force, and the beam's best
    never above the optimum."""
    ev = PeakedEvaluator()
    pairs = pairs_of(real_games[10 : 10 + count], stones)
    # A likelihood without structure gives the estimate of the stones to play nothing to go on: the
    # plain beam's incumbent.
    solved = exact_orders(ev, pairs, incumbent_width=4, incumbent_future=0.0)
    total, pruned_to = 0, 0
    for (b, w), (order, ll, stats) in zip(pairs, solved):
        seq, best, visited = bfs(ev, b, w)
        assert order == seq and ll == pytest.approx(best, abs=1e-9)
        assert stats.incumbent_log_likelihood <= ll + 1e-9 and math.isfinite(ll)
        total, pruned_to = total + visited, pruned_to + stats.prefixes
    assert pruned_to < 0.5 * total
    assert sum(s.incumbent_optimal for _, _, s in solved) < len(pairs)  # some incumbents were improved on
