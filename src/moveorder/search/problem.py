"""What every search takes and gives: the problem (a position's stones and the prisoners each side
took), the refusals of a position no legal sequence reaches, an order found, and the work counters.

A :class:`Problem` without prisoners is the paper's capture-free arrangement, which every method
orders; one with prisoners is ordered by the capture search (:mod:`moveorder.search.captures`).
Stones are Leela Zero indices (:mod:`moveorder.go.coords`), sorted.  The points are checked on the
board as given (:func:`check_position`); the counts and the board with prisoners by
:func:`check_problem`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields
from typing import Dict, List, Sequence, Tuple

from moveorder.go import board as goboard
from moveorder.go import coords

BLACK, WHITE = goboard.BLACK, goboard.WHITE


@dataclass(frozen=True)
class Problem:
    """One position to order: final stones (Leela Zero indices) and the prisoners each side took."""

    black: Tuple[int, ...]
    white: Tuple[int, ...]
    prisoners_black: int = 0  # white stones Black captured
    prisoners_white: int = 0  # black stones White captured

    @property
    def moves(self) -> int:
        return len(self.black) + len(self.white) + self.prisoners_black + self.prisoners_white

    @property
    def prisoners(self) -> Tuple[int, int]:
        """Black's prisoners, White's."""
        return self.prisoners_black, self.prisoners_white

    @property
    def capture_free(self) -> bool:
        """No stone was captured: the paper's problem, which every method orders."""
        return not (self.prisoners_black or self.prisoners_white)

    def moves_of(self, colour: int) -> int:
        """Moves ``colour`` plays: its final stones and its stones the other side captured."""
        if colour == BLACK:
            return len(self.black) + self.prisoners_white
        return len(self.white) + self.prisoners_black

    def captured_of(self, colour: int) -> int:
        """Stones of ``colour`` the sequence captures (the other side's prisoners)."""
        return self.prisoners_white if colour == BLACK else self.prisoners_black

    def final_board(self) -> bytes:
        """The position as a flat board (``bytes``, one value per point)."""
        b = bytearray(coords.POINTS)
        for colour, stones in ((BLACK, self.black), (WHITE, self.white)):
            for k in stones:
                b[coords.lz_to_flat(k)] = colour
        return bytes(b)


def problem_of_stones(black: Sequence[int], white: Sequence[int], prisoners: Sequence[int] = (0, 0)) -> Problem:
    """The problem of stones (Leela Zero indices, any order) and prisoners (Black's, White's)."""
    return Problem(tuple(sorted(black)), tuple(sorted(white)), int(prisoners[0]), int(prisoners[1]))


def problem_of_arrangement(arrangement) -> Problem:
    """The problem of an :class:`moveorder.data.arrangements.Arrangement`: its stones and prisoners."""
    return problem_of_stones(
        coords.sgf_to_lz(arrangement.black), coords.sgf_to_lz(arrangement.white), arrangement.prisoners
    )


# --- refusals --------------------------------------------------------------------------------------

#: How a position reached with captures is given, for a refusal of one given without them.
GIVE_PRISONERS = (
    "if stones were captured before this position, give their counts with --prisoners B W (the white stones "
    "Black captured, the black stones White captured): --method beam orders positions with captures"
)


def check_position(
    black: Sequence[coords.Point], white: Sequence[coords.Point], where: str, prisoners: Sequence[int] = (0, 0)
) -> None:
    """Raise ValueError naming ``where`` and the problem if a position breaks the paper's assumptions.

    With prisoners, the position may have arisen with captures: the counts
    and the board are checked by :func:`check_problem` instead.  Points are
    named in GTP terms (``Q16``).
    """
    seen: Dict[coords.Point, str] = {}
    for colour, pts in (("black", black), ("white", white)):
        for p in pts:
            try:
                coords.to_flat(p)
            except (ValueError, TypeError):
                raise ValueError(f"{where}: a {colour} stone at {p!r} is not on the 19x19 board") from None
            if p in seen:
                raise ValueError(f"{where}: {coords.to_gtp(p)} holds two stones ({seen[p]} and {colour})")
            seen[p] = colour
    if any(prisoners):
        check_problem(black, white, (int(prisoners[0]), int(prisoners[1])), where)
        return
    if len(black) + len(white) < 1:
        raise ValueError(f"{where}: the position has no stones")
    if len(black) - len(white) not in (0, 1):
        raise ValueError(
            f"{where}: {len(black)} black and {len(white)} white stones: with Black first and "
            f"alternating moves and no captures, Black has as many stones as White or one more; {GIVE_PRISONERS}"
        )
    _refuse_dead_groups(black, white, where, with_captures=False)


def check_problem(
    black: Sequence[coords.Point], white: Sequence[coords.Point], prisoners: Tuple[int, int], where: str
) -> None:
    """Raise ValueError naming ``where`` and the reason unless some legal sequence could end at this position.

    Refused: negative prisoner counts, move counts that cannot alternate from
    Black even with the prisoners, no move at all, a group without liberties
    (after any legal move every group on the board has one), and no stone of
    the colour that moved last (its last stone cannot have been captured).  The
    point checks (on the board, one stone a point) are :func:`check_position`'s,
    which runs first.
    """
    pb, pw = prisoners
    if pb < 0 or pw < 0:
        raise ValueError(f"{where}: prisoners {pb} {pw}: counts cannot be negative")
    moves_b, moves_w = len(black) + pw, len(white) + pb
    if moves_b + moves_w < 1:
        raise ValueError(f"{where}: the position has no stones and no prisoners")
    if moves_b - moves_w not in (0, 1):
        raise ValueError(
            f"{where}: {len(black)} black and {len(white)} white stones with prisoners {pb} (Black's) and "
            f"{pw} (White's) make {moves_b} black and {moves_w} white moves: with Black first and alternating "
            "moves, Black plays as many moves as White or one more"
        )
    _refuse_dead_groups(black, white, where, with_captures=True)
    last, stones = ("Black", black) if (moves_b + moves_w) % 2 == 1 else ("White", white)
    if not stones:
        raise ValueError(
            f"{where}: the last of the {moves_b + moves_w} moves is {last}'s, but {last} has no stone on the "
            "board: nothing after the last move can have captured it"
        )


def _refuse_dead_groups(black, white, where: str, with_captures: bool) -> None:
    """Refuse a board with a group without liberties: no legal move leaves one so."""
    dead = goboard.groups_without_liberties(goboard.from_stones(black, white))
    if not dead:
        return
    names = "; ".join(" ".join(coords.to_gtp(p) for p in g) for g in dead)
    if with_captures:
        raise ValueError(f"{where}: group(s) without liberties ({names}): no legal move leaves a group so")
    raise ValueError(
        f"{where}: group(s) without liberties ({names}): no legal move leaves a group so (the move that "
        "takes its last liberty captures it, or is suicide), with captures or without; no prisoners "
        "make this position reachable"
    )


# --- what a search gives ---------------------------------------------------------------------------


@dataclass
class Order:
    """An order of play found: its moves (Leela Zero indices, Black first) and their log-likelihood;
    ``accepted``: the annealing moves its chain accepted (0 for the beam and the capture search)."""

    moves: List[int]
    log_likelihood: float
    accepted: int = 0


def lgm(log_likelihood: float, n: int) -> float:
    """Geometric mean of the per-move likelihoods."""
    return math.exp(log_likelihood / n)


@dataclass
class SearchStats:
    """Work counters of every search, summed over the calls (batches) it is passed to."""

    iterations: int = 0  # annealing iterations, summed over batches
    chains: int = 0  # annealing chains, summed over batches
    chain_iterations: int = 0  # chains x iterations, summed over batches
    requests: int = 0  # positions asked of the evaluator (the capture search: of its network or its memo)
    hits: int = 0  # of which served by its cache (the capture search: by its memo)
    evaluations: int = 0  # positions the network evaluated
    naive_evaluations: int = 0  # what re-evaluating every position of every proposal would cost
    seconds: float = 0.0
    network_seconds: float = 0.0
    not_found: int = 0  # positions with captures for which no sequence was found
    unreachable: int = 0  # of which the search proved that none exists
    children: int = 0  # the capture search: children built
    pruned: int = 0  # of which pruned (illegal, or unable to reach the position)
    backtracked: int = 0  # problems the capture beam found nothing for, searched again by backtracking
    proposer_evaluations: int = 0  # the capture search's proposer: positions its network evaluated

    def add(self, other: "SearchStats") -> None:
        """Add every counter of ``other``."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def add_evaluator(self, evaluator, before: Tuple = (0, 0, 0, 0.0)) -> None:
        """Add what ``evaluator`` did since its :func:`counters` were ``before``."""
        now = counters(evaluator)
        self.requests += now[0] - before[0]
        self.hits += now[1] - before[1]
        self.evaluations += now[2] - before[2]
        self.network_seconds += now[3] - before[3]

    def add_likelihood(self, likelihood, before: Tuple) -> None:
        """Add the network evaluations and the time since ``before`` (:func:`likelihood_counters`): a
        capture beam's, which asks the network itself, so that every request reaching it is an evaluation
        (the positions its memo served are added by :func:`moveorder.search.captures.search`)."""
        evaluations = likelihood.evaluations - before[0]
        self.evaluations += evaluations
        self.requests += evaluations
        self.network_seconds += likelihood.seconds - before[1]
        self.seconds += time.perf_counter() - before[2]


def likelihood_counters(likelihood) -> Tuple:
    """A :class:`moveorder.nets.likelihood.PolicyLikelihood`'s evaluations and network seconds so far, and
    the clock."""
    return likelihood.evaluations, likelihood.seconds, time.perf_counter()


def counters(evaluator) -> Tuple:
    """A :class:`moveorder.nets.likelihood.PositionEvaluator`'s requests, cache hits, evaluations and
    network seconds so far."""
    return evaluator.requests, evaluator.hits, evaluator.evaluations, evaluator.likelihood.seconds
