"""The annealer: neighbours keep the stones and the alternation, the fast path equals the naive one,
and SA finds the exact optimum on small real arrangements."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moveorder import annealing as sa
from moveorder.arrangements import clip
from moveorder.inference import lz_indices
from moveorder.likelihood import PolicyLikelihood
from moveorder.records import load_records


@st.composite
def sequences(draw):
    n = draw(st.integers(min_value=3, max_value=41))
    stones = draw(st.lists(st.integers(0, 360), min_size=n, max_size=n, unique=True))
    return np.array(stones, dtype=np.int64), draw(st.integers(0, 2**32 - 1))


@pytest.mark.parametrize("name", ["swp2", "mov2", "rot3", "mix"])
@settings(max_examples=150, deadline=None)
@given(data=sequences(), t=st.integers(0, 100))
def test_neighbours_keep_stones_and_colours(name, data, t):
    seq, seed = data
    new, lo, hi = sa.propose(name, t, seq, np.random.default_rng(seed))
    assert sorted(new[0::2]) == sorted(seq[0::2])  # Black's stones stay Black's
    assert sorted(new[1::2]) == sorted(seq[1::2])
    changed = np.nonzero(new != seq)[0]
    if len(changed):
        assert lo <= changed.min() and changed.max() <= hi  # the reported range covers every change
    else:
        assert lo > hi or name in ("mov2",)


def test_mix_uses_each_in_turn():
    seq = np.arange(20)
    rng = np.random.default_rng(0)
    kinds = []
    for t in range(6):
        new, lo, hi = sa.propose("mix", t, seq, rng)
        kinds.append("mov2" if np.any(new[0::2] != seq[0::2]) and np.any(new[1::2] != seq[1::2]) else "same-colour")
    assert kinds[1] == kinds[4] == "mov2" and kinds[0] == kinds[2] == "same-colour"


def test_temperature_schedule():
    cfg = sa.AnnealConfig(iterations=101)
    assert sa.temperature(cfg, 0) == pytest.approx(1.0) and sa.temperature(cfg, 100) == pytest.approx(0.1)
    assert sa.temperature(cfg, 50) == pytest.approx(0.1 ** 0.5)
    lin = sa.AnnealConfig(iterations=101, schedule="linear")
    assert sa.temperature(lin, 50) == pytest.approx(0.55)
    with pytest.raises(ValueError):
        sa.AnnealConfig(neighbour="swp3")


@pytest.fixture(scope="module")
def model(trained):
    out, _, _ = trained
    return PolicyLikelihood.from_file(out / "model.pt", device="cpu")


@pytest.fixture(scope="module")
def real_games(pro2_pool):
    return load_records(pro2_pool)


def test_incremental_and_cache_equal_naive(model, real_games):
    arrs = [clip(r, 12, "pro") for r in real_games[:4]]
    pairs = [(lz_indices(a.black), lz_indices(a.white)) for a in arrs]
    for init in ("greedy", "random"):
        cfg = sa.AnnealConfig(iterations=150, trials=2, init=init, seed=3)
        fast_scorer = sa.PositionScorer(model, cache_size=100_000)
        fast = sa.anneal(fast_scorer, pairs, cfg)
        naive_cfg = sa.AnnealConfig(**{**cfg.__dict__, "incremental": False, "cache_size": 0})
        naive_scorer = sa.PositionScorer(model, cache_size=0, dedupe=False)
        naive = sa.anneal(naive_scorer, pairs, naive_cfg)
        for a, b in zip(fast, naive):
            for x, y in zip(a, b):
                assert np.array_equal(x.best, y.best)
                assert x.best_log_likelihood == y.best_log_likelihood
                assert x.accepted == y.accepted
        # ... and it did less work.
        assert naive_scorer.evaluations == 8 * 12 * (150 + 1) + (12 * 4 if init == "greedy" else 0)
        assert fast_scorer.evaluations < naive_scorer.evaluations / 2


def test_chain_results_do_not_depend_on_batch(model, real_games):
    arrs = [clip(r, 10, "pro") for r in real_games[:3]]
    pairs = [(lz_indices(a.black), lz_indices(a.white)) for a in arrs]
    cfg = sa.AnnealConfig(iterations=100, trials=2, seed=5)
    together = sa.anneal(sa.PositionScorer(model), pairs, cfg)
    alone = sa.anneal(sa.PositionScorer(model), pairs[2:], cfg, indices=[2])
    assert np.array_equal(together[2][1].best, alone[0][1].best)


def test_sa_finds_exact_optimum_on_50_small_real_arrangements(model, real_games):
    """Arrangements of 6 to 8 stones from real games: SA (600 iterations, 3 trials) vs brute force.

    (bench/exact.py runs the same check on 10-stone arrangements with the trained network.)
    """
    scorer = sa.PositionScorer(model, cache_size=1_000_000)
    cfg = sa.AnnealConfig(iterations=600, trials=3, seed=11)
    found, start = 0, 0
    for size, count in ((6, 10), (7, 20), (8, 20)):
        arrs = [clip(r, size, "pro") for r in real_games[start:start + count]]
        start += count
        pairs = [(lz_indices(a.black), lz_indices(a.white)) for a in arrs]
        results = sa.anneal(scorer, pairs, cfg)
        for (b, w), trials in zip(pairs, results):
            exact_seq, exact_ll = sa.brute_force(scorer, b, w)
            best = max(t.best_log_likelihood for t in trials)
            assert best <= exact_ll + 1e-9  # nothing beats the exact optimum
            found += best >= exact_ll - 1e-9
    assert found == 50
