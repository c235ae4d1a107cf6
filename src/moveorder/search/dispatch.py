"""One entry point for every search: :func:`run` chooses, once, how each problem is ordered.

=========================  ====================================================================
problem, ``method``        search
=========================  ====================================================================
capture-free, ``anneal``   :func:`moveorder.search.anneal.anneal` (the paper's), greedy or random
                           start (``init``)
capture-free,              annealing from the beam's orders (``init`` beam)
``beam+anneal``
capture-free, ``beam``     :func:`moveorder.search.beam.beam_search`, the ranked beam
with prisoners, ``beam``   :func:`moveorder.search.captures.search`, the ranked beam over legal
                           play, with passes and backtracking
with prisoners, other      refused (:func:`refuse`): annealing's neighbours keep the stones
                           and cannot capture
=========================  ====================================================================

The exact optimum (:mod:`moveorder.search.exact`) is a yardstick for benchmarks and tests, not a
method of a run: its cost grows without bound.  Every search takes one :class:`SearchConfig`,
adds its work to one :class:`moveorder.search.problem.SearchStats`, and reports to ``progress``
(anything with ``update(k)``, a tqdm bar) :func:`steps` steps a call.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from moveorder.nets import shipped
from moveorder.nets.likelihood import PolicyLikelihood, PositionEvaluator
from moveorder.nets.networks import turn_points
from moveorder.search import captures
from moveorder.search.anneal import anneal, distinct_orders
from moveorder.search.beam import beam_search
from moveorder.search.problem import Order, Problem, SearchStats, counters
from moveorder.settings import ORIENTATIONS, SearchConfig

#: The methods that order a position with captures.
CAPTURE_METHODS = ("beam",)


@dataclass
class Found:
    """What the search found for one problem."""

    #: Annealing: each trial's best order; the beam and the capture search: their best order alone.
    #: Empty where no order was found (a position with captures only).
    trials: List[Order]
    #: The ``keep`` likeliest distinct orders found, best first (moves, log-likelihood).
    orders: List[Tuple[List[int], float]]


def refuse(problem: Problem, method: str, where: str, cause: str = "") -> None:
    """Raise ValueError naming ``where`` where ``method`` cannot order ``problem`` (one with captures
    for a method other than the beam); ``cause``: what makes it one (a record's first capture)."""
    if problem.capture_free or method in CAPTURE_METHODS:
        return
    what = cause or f"a position with captures (prisoners {problem.prisoners_black} {problem.prisoners_white})"
    raise ValueError(
        f"{where}: {what}; the inference assumes no captures with method {method!r}: "
        "--method beam orders positions with captures"
    )


def steps(cfg: SearchConfig, problems: Sequence[Problem]) -> int:
    """What one :func:`run` call reports to ``progress``: the iterations (annealing; the beam reports
    them at its end) where a problem is capture-free, else the capture search's most network evaluations."""
    if not problems:
        return 0
    cfg = cfg.for_length(problems[0].moves)
    if any(p.capture_free for p in problems):
        return cfg.iterations
    budget = captures.evaluation_budget(
        problems,
        cfg.beam_width,
        cfg.beam_passes,
        cfg.beam_widen,
        cfg.patience,
        beam_widen_found=cfg.beam_widen_found,
    )
    return budget * len(turns(cfg))


def run(
    evaluator: PositionEvaluator,
    problems: Sequence[Problem],
    cfg: SearchConfig,
    indices: Optional[Sequence[int]] = None,
    stats: Optional[SearchStats] = None,
    progress=None,
    keep: int = 1,
    names: Optional[Sequence[str]] = None,
) -> List[Found]:
    """Order ``problems`` (all of one length) by ``cfg``; one :class:`Found` per problem.

    ``indices``: each problem's index in its set, which keys annealing's randomness (default
    0..len-1).  ``keep``: how many distinct orders each :class:`Found` lists (the best is the same
    whatever ``keep`` is).  ``names``: each problem's name for a refusal (default ``problem k``).
    A problem with captures and a method that cannot order it is refused (:func:`refuse`) before
    any search runs.
    """
    names = [f"problem {k}" for k in range(len(problems))] if names is None else names
    for problem, where in zip(problems, names):
        refuse(problem, cfg.method, where)
    if not problems:
        return []
    cfg = cfg.for_length(problems[0].moves)
    indices = list(range(len(problems))) if indices is None else list(indices)
    plain = [k for k, p in enumerate(problems) if p.capture_free]
    with_captures = [k for k, p in enumerate(problems) if not p.capture_free]
    out: List[Optional[Found]] = [None] * len(problems)
    if plain:
        pairs = [(problems[k].black, problems[k].white) for k in plain]
        if cfg.method == "beam":
            found = _beam(evaluator, pairs, cfg, stats, progress, keep)
        else:
            trials = anneal(evaluator, pairs, cfg, [indices[k] for k in plain], stats, progress)
            found = [Found(t, distinct_orders(t, keep)) for t in trials]
        for k, f in zip(plain, found):
            out[k] = f
    if with_captures:
        # a batch with capture-free problems counts iterations, not the capture search's evaluations
        found = _captures(
            evaluator, [problems[k] for k in with_captures], cfg, stats, None if plain else progress, keep
        )
        for k, f in zip(with_captures, found):
            out[k] = f
    return out


def turns(cfg: SearchConfig) -> Tuple[int, ...]:
    """The board's symmetries a search looks at (``cfg.orientations``, :data:`moveorder.settings.ORIENTATIONS`)."""
    return ORIENTATIONS[cfg.orientations]


def turned(problem: Problem, s: int) -> Problem:
    """``problem`` with every stone moved by symmetry ``s`` (0..7) of the board."""
    black, white = turn_points(problem.black, s), turn_points(problem.white, s)
    return Problem(tuple(sorted(black)), tuple(sorted(white)), problem.prisoners_black, problem.prisoners_white)


def _captures(evaluator, problems: Sequence[Problem], cfg: SearchConfig, stats, progress, keep: int) -> List[Found]:
    """The capture search of each problem in each of its orientations (:func:`turns`) at once (one
    batch of that many times the problems in the first pass; after it, a problem's work goes to its
    likeliest orientation so far: ``captures.search``'s ``groups``), the likeliest order turned back."""
    sym = turns(cfg)
    orders: list = []
    proven: list = []
    inner = SearchStats()
    captures.search(
        evaluator.likelihood,
        [turned(p, s) for p in problems for s in sym],
        cfg.beam_width,
        cfg.beam_future,
        cfg.patience,
        stats=inner,
        proven=proven,
        beam_passes=cfg.beam_passes,
        beam_widen=cfg.beam_widen,
        beam_widen_found=cfg.beam_widen_found,
        keep=keep,
        merge=cfg.capture_merge,
        orders=orders,
        progress=progress,
        groups=[a for a in range(len(problems)) for _ in sym],
        proposer=proposer_of(cfg.capture_proposer, evaluator.likelihood),
        memo_slots=evaluator.slots,
    )
    out = []
    for a in range(len(problems)):
        found = [
            (turn_points(seq, s, back=True), ll) for j, s in enumerate(sym) for seq, ll in orders[a * len(sym) + j]
        ]
        # The likeliest first; ties to the earlier orientation (the given one first).
        ranked = [Order(seq, ll) for seq, ll in sorted(found, key=lambda o: -o[1])]
        out.append(Found(ranked[:1], distinct_orders(ranked, keep)))
    # Found and proven counted a position, not an orientation: a proof in one orientation holds in all.
    inner.not_found = sum(not f.trials for f in out)
    inner.unreachable = sum(any(proven[a * len(sym) : (a + 1) * len(sym)]) for a in range(len(problems)))
    if stats is not None:
        stats.add(inner)
    return out


def proposer_of(name: str, likelihood: PolicyLikelihood) -> Optional[PolicyLikelihood]:
    """The shipped network ``name`` as a proposer for the capture search beside ``likelihood`` (on its
    device, at its precision and batch), or None for ``none``; loaded once a process.  Before each of
    its calls it calls ``likelihood``'s ``on_batch`` with 0, so that whatever stops a search there (the
    page's cancel) stops the proposer's too, and its evaluations are not counted as ``likelihood``'s."""
    if name == "none":
        return None
    if name not in shipped.names():
        raise ValueError(
            f"capture_proposer {name!r}: expected none or a shipped network ({', '.join(shipped.names())})"
        )
    proposer = _loaded(name, str(likelihood.device), likelihood.precision, likelihood.max_batch)

    def relay(k: int) -> None:
        if likelihood.on_batch is not None:
            likelihood.on_batch(0)

    proposer.on_batch = relay
    return proposer


@functools.lru_cache(maxsize=4)
def _loaded(name: str, device: str, precision: str, max_batch: int) -> PolicyLikelihood:
    return PolicyLikelihood.from_file(shipped.require(name), device=device, precision=precision, max_batch=max_batch)


def _beam(evaluator, pairs, cfg: SearchConfig, stats, progress, keep: int) -> List[Found]:
    """The ranked beam alone: each arrangement's ``keep`` likeliest complete orders, its best the one trial."""
    t0, before = time.perf_counter(), counters(evaluator)
    found = beam_search(evaluator, pairs, cfg.beam_width, keep=keep, future=cfg.beam_future, orientations=turns(cfg))
    if stats is not None:
        stats.seconds += time.perf_counter() - t0
        stats.add_evaluator(evaluator, before)
    if progress is not None:
        progress.update(cfg.iterations)
    out = []
    for orders in found:
        ranked = [Order(seq, ll) for seq, ll in orders]
        out.append(Found(ranked[:1], distinct_orders(ranked, keep)))
    return out
