"""Beam search over orders of play, and the exact solver it becomes without a width limit.

The objective is a sum over a sequence's prefixes, ``log P(m_1|s_0) + ... +
log P(m_n|s_{n-1})``, so orders can be built move by move: one network
evaluation of a prefix scores every way to extend it.  Beam search keeps the
``width`` most likely prefixes of each arrangement at every move number (the
paper's greedy start is width 1).  Prefixes that give the network the same
input at the next move (same stones before the history window, same last
moves, same side to move) have the same remaining stones and the same
likelihood for every continuation, so only the more likely is kept
(``merge``); with no width limit that makes the search exact.

Ranking prefixes: the estimate of the stones still to play
------------------------------------------------------------
Prefixes of one move number hold the same number of stones but not the same
ones, and a prefix that has put off its unlikely stones looks better than it
is: it will pay for them later.  Beam search in phrase-based machine
translation meets the same problem with the source words a hypothesis has
not covered yet, and ranks hypotheses by their score plus an estimate of the
cost of those words (Koehn's "future cost").  Here each stone's estimate is
the highest log-probability the network has given it at any position
evaluated so far in this arrangement's search (where it was free and its
side to move): every evaluation scores every free stone, so the estimates
cost nothing.  A prefix's *score* is ``g + future * (sum of the estimates of
its stones still to play)`` (``g``: its log-likelihood); since the sum over
all of an arrangement's stones is the same for its prefixes, that ranks as
``g - future * (sum of the estimates of the stones played)``: how far below
their best each move was played.  The estimates are optimistic, so the score
alone favours prefixes of unlikely moves each played at its best, which
narrow beams pay for (measured: at width 8 the score alone ends far below the
plain beam).  So the beam keeps half its width by ``g`` and fills the other
half with the best of the rest by score; ties in the score go to the larger
``g``.  ``future`` 0 is the plain beam; a weight above 1 overstates the
estimates.  Merging and the final choice among complete orders use ``g``
alone.  Measured (docs/benchmarks.md): with ``future`` 1 a beam of 32 finds
likelier orders than a plain beam of 512 on 20 Pro arrangements of 20 moves,
and no width did worse than the plain beam.

The board's orientation
-----------------------
A record's orientation is its writer's choice, and a network trained without
symmetry augmentation learns its games' habit: Black opens in the upper right
in 96% of the Tygem games the shipped networks learned from, but in 54% of
the Fox professional openings of ``config/cpu.yaml`` (43% open in the lower
left, the same board seen from the other side).  Given only the stones, the
orientation is one more unknown; ``orientations`` searches each arrangement
in several of the board's 8 symmetries at once: each (arrangement,
orientation) is a beam of its own for merging and the estimates, but all the
orientations of one arrangement share the ``width`` prefixes kept at each
move number, so the unlikely ones drop out after a few moves and the search
costs about what one orientation does.  The orders come back in the given
orientation; their likelihood is the network's in the orientation searched.

All arrangements of a batch advance together on the evaluator's device.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch

from moveorder.go.coords import MOVES
from moveorder.nets.features import PAD
from moveorder.nets.likelihood import InputHasher, PositionEvaluator, log
from moveorder.nets.networks import turn_points


def stone_tensors(arrangements: Sequence[Tuple[Sequence[int], Sequence[int]]], device):
    """``(A, |B|)`` and ``(A, |W|)`` sorted stone indices; every arrangement of one length."""
    lengths = {len(b) + len(w) for b, w in arrangements}
    if len(lengths) != 1:
        raise ValueError(f"arrangements of different lengths in one batch: {sorted(lengths)}")
    for b, w in arrangements:
        if len(b) - len(w) not in (0, 1):
            raise ValueError(f"{len(b)} black and {len(w)} white stones cannot alternate with Black first")
    black = torch.tensor([sorted(b) for b, _ in arrangements], dtype=torch.long, device=device)
    white = torch.tensor([sorted(w) for _, w in arrangements], dtype=torch.long, device=device)
    return black.view(len(arrangements), -1), white.view(len(arrangements), -1)


def beam_search(
    evaluator: PositionEvaluator,
    arrangements,
    width: Optional[int] = None,
    merge: bool = True,
    keep: int = 1,
    future: float = 0.0,
    orientations: Sequence[int] = (0,),
) -> List[List[Tuple[List[int], float]]]:
    """The ``keep`` most likely complete orders found for each arrangement, best first, with log-likelihoods.

    ``width``: prefixes kept per arrangement and move number (None: all, the exact solver).
    ``future``: weight of the estimate of the stones still to play in ranking prefixes (module
    docstring; 0: rank by log-likelihood alone).  ``orientations``: the board's symmetries
    (0..7, :func:`moveorder.nets.networks.turn_points`; 0 the given one) in which each
    arrangement is searched, all in one beam of ``width`` (module docstring, "The board's
    orientation"); orders come back in the given orientation.  Ties go to the first in
    enumeration order (an arrangement's boards in the order of their sorted stones, whatever order
    ``orientations`` gives; stones in index order), so results are deterministic on any device; an
    arrangement's search depends on its own stones only, not on the batch, and a turned copy of it
    searched in the same symmetries (a group: all 8, or the board and its half turn) is searched
    alike, its answer the same order turned.
    """
    device = evaluator.device
    orientations = list(orientations)
    if not orientations or len(set(orientations)) != len(orientations) or not set(orientations) <= set(range(8)):
        raise ValueError(f"orientations {orientations}: expected distinct symmetries among 0..7")
    # Each arrangement's boards in a canonical order (by their stones), not in the order given: the
    # order breaks ties, and an arrangement and a turned copy of it searched in the same symmetries
    # search the same boards, so they get the same search and the answer turned (on any machine).
    turned, turn_of = [], []
    for b, w in arrangements:
        boards = sorted(((sorted(turn_points(b, s)), sorted(turn_points(w, s))), s) for s in orientations)
        turned += [board for board, _ in boards]
        turn_of += [s for _, s in boards]
    # Every orientation of one arrangement is one group: the width and ``keep`` apply to the group.
    group_of = torch.arange(len(arrangements), device=device).repeat_interleave(len(orientations))
    black, white = stone_tensors(turned, device)
    A, n = len(black), black.shape[1] + white.shape[1]
    hasher = InputHasher(device)
    seqs = torch.full((A, n), PAD, dtype=torch.long, device=device)
    owner = torch.arange(A, device=device)  # the arrangement of each prefix
    ll = torch.zeros(A, dtype=torch.float64, device=device)
    # Per arrangement and point: the highest log-probability its stone has had so far (-inf: none yet).
    estimate = torch.full((A, MOVES), -torch.inf, dtype=torch.float64, device=device)
    for i in range(n):
        stones = (black if i % 2 == 0 else white)[owner]  # (P, k)
        seqs, ll, parent, term = expand(evaluator, seqs, ll, stones, i)
        owner = owner[parent]
        if future:
            estimate.view(-1).scatter_reduce_(0, owner * MOVES + seqs[:, i], term, "amax")
        if merge and i + 1 < n:
            seqs, ll, owner = merge_transpositions(hasher, seqs, ll, owner, i + 1)
        if width is not None and i + 1 < n:
            if future:
                score = ll - future * estimate[owner[:, None], seqs[:, : i + 1]].sum(1)
                rows = _ranked(ll, group_of[owner], width, score)
            else:
                rows = _best(ll, group_of[owner], width)
            seqs, ll, owner = seqs[rows], ll[rows], owner[rows]
    rows = _best(ll, group_of[owner], keep)
    seqs, ll, owner = seqs[rows], ll[rows], owner[rows]
    out: List[List[Tuple[List[int], float]]] = [[] for _ in range(len(arrangements))]
    for seq, v, a in zip(seqs.cpu().tolist(), ll.cpu().tolist(), owner.cpu().tolist()):
        out[a // len(orientations)].append((turn_points(seq, turn_of[a], back=True), v))
    return out


def expand(evaluator: PositionEvaluator, seqs, ll, stones, i: int, bound: Optional[float] = None):
    """Every child of each prefix: the prefix with one of its free ``stones`` as move ``i``.

    ``seqs`` ``(P, n)`` prefixes of ``i`` moves (``PAD`` after), ``ll`` their log-likelihoods,
    ``stones`` ``(P, k)`` the stones of the side to move of each prefix's arrangement.  One
    batched evaluation of the ``P`` positions scores every child.  With ``bound``, children
    whose log-likelihood is below it are left out.  Returns the children (prefix by prefix,
    stones in their given order), their log-likelihoods, each child's parent row and the
    log-probability of its last move.
    """
    rows = torch.arange(len(seqs), device=seqs.device)
    probs = evaluator.probs(seqs, rows, torch.full_like(rows, i))
    terms = log(probs.gather(1, stones))
    cand = ll[:, None] + terms
    keep = ~(seqs[:, :i, None] == stones[:, None, :]).any(1)  # the stones not yet played
    if bound is not None:
        keep &= cand >= bound
    p_idx, s_idx = keep.nonzero(as_tuple=True)
    children = seqs[p_idx]
    children[:, i] = stones[p_idx, s_idx]
    return children, cand[p_idx, s_idx], p_idx, terms[p_idx, s_idx]


def _best(key, owner, keep: int, tie=None):
    """Rows of the ``keep`` largest ``key`` of each arrangement, grouped by arrangement, best first.

    Ties go to the larger ``tie`` (if given), then to the first row.
    """
    order = torch.arange(len(key), device=key.device)
    if tie is not None:
        order = torch.argsort(-tie, stable=True)
    order = order[torch.argsort(-key[order], stable=True)]
    order = order[torch.argsort(owner[order], stable=True)]
    o = owner[order]
    if len(o):
        new_group = torch.ones_like(o, dtype=torch.bool)
        new_group[1:] = o[1:] != o[:-1]
        idx = torch.arange(len(o), device=o.device)
        start = torch.cummax(torch.where(new_group, idx, torch.zeros_like(idx)), 0).values
        order = order[(idx - start) < keep]
    return order


def _ranked(ll, owner, width: int, score):
    """Rows kept by the ranked beam: each arrangement's ``width // 2`` most likely prefixes, and the
    best of the rest by ``score`` (ties: the more likely) up to ``width``."""
    priority = score.clone()
    priority[_best(ll, owner, width // 2)] = torch.inf
    return _best(priority, owner, width, tie=ll)


def merge_transpositions(hasher: InputHasher, seqs, ll, owner, i: int):
    """Of the prefixes of one arrangement whose input at position ``i`` is the same, keep the most likely."""
    rows = torch.arange(len(seqs), device=seqs.device)
    keys = hasher.keys(seqs, rows, torch.full_like(rows, i))
    _, group = torch.unique(torch.stack([owner, keys], 1), dim=0, return_inverse=True)
    top = torch.full((int(group.max()) + 1,), -torch.inf, dtype=ll.dtype, device=ll.device)
    top.scatter_reduce_(0, group, ll, "amax")
    first = torch.full_like(top, len(rows), dtype=torch.long)
    cand = torch.where(ll == top[group], rows, torch.full_like(rows, len(rows)))
    first.scatter_reduce_(0, group, cand, "amin")
    keep = torch.sort(first).values
    return seqs[keep], ll[keep], owner[keep]
