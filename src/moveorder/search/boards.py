"""A sequence played on the real board, and the network's view of it: the positions before each move
(captures, ko and superko applied by :class:`moveorder.go.board.Board`) and their network input.

The capture search and the scoring of a sequence that may capture share these, and the capture search
keeps what the network gave it in a :class:`PositionMemo`; boards are in the top-row-first flat order of
:mod:`moveorder.go.board`, moves Leela Zero indices.
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import MOVES, POINTS
from moveorder.nets.features import FLAT_OF_LZ, HISTORY, history_stack_planes
from moveorder.nets.likelihood import PolicyLikelihood, legal_renormalised, log

BLACK, WHITE, EMPTY = goboard.BLACK, goboard.WHITE, goboard.EMPTY
EMPTY_BOARD = bytes(POINTS)


def history_planes(histories: Sequence[Tuple[bytes, ...]], black_to_move: bool) -> torch.Tensor:
    """``(P, 18, 19, 19)`` float32 planes (Leela Zero order) from each prefix's last boards.

    ``histories[k]``: flat boards, the current one first, at most 8 (fewer near the start: the
    planes before the empty board are zeros), as :func:`moveorder.nets.features.board_history_planes`.
    """
    buf = b"".join(b"".join(h) + EMPTY_BOARD * (HISTORY - len(h)) for h in histories)
    boards = np.frombuffer(buf, dtype=np.uint8).reshape(len(histories), HISTORY, POINTS)[:, :, FLAT_OF_LZ]
    return torch.from_numpy(history_stack_planes(boards, black_to_move))


def position_probs(
    likelihood: PolicyLikelihood, histories: Sequence[Tuple[bytes, ...]], black_to_move: bool
) -> torch.Tensor:
    """``(P, 362)`` float32 ``P(move | position)`` (Leela Zero order) of the prefixes' positions, as the
    network gives them; with ``legal_only``, divided by the mass on the empty points and pass, as
    :meth:`moveorder.nets.likelihood.PolicyLikelihood.probs_of_codes` does."""
    t0 = time.perf_counter()
    probs = likelihood.probs_of_planes(history_planes(histories, black_to_move)).cpu()
    if likelihood.legal_only:
        cur = np.frombuffer(b"".join(h[0] for h in histories), dtype=np.uint8).reshape(len(histories), POINTS)
        probs = legal_renormalised(probs, torch.from_numpy(cur[:, FLAT_OF_LZ] == EMPTY))
    likelihood.seconds += time.perf_counter() - t0
    return probs


def position_log_probs(
    likelihood: PolicyLikelihood,
    histories: Sequence[Tuple[bytes, ...]],
    black_to_move: bool,
    memo: Optional["PositionMemo"] = None,
) -> np.ndarray:
    """``(P, 362)`` float64 log ``P(move | position)`` (Leela Zero order) of the prefixes' positions
    (:func:`position_probs`); with ``memo``, a position it holds is not evaluated again."""
    if memo is not None:
        return memo.log_probs(likelihood, histories, black_to_move)
    return log(position_probs(likelihood, histories, black_to_move)).numpy()


class PositionMemo:
    """The distributions one network has given a search, by the network's input (the last 8 boards and
    the side to move), so that a position the search reaches again is not evaluated again: a later pass's
    beam over the moves an earlier pass searched, the beam on the last rung of the capture sites, and
    backtracking, which starts again from the first move.

    A position's distribution does not depend on the positions evaluated with it (every network call is
    padded to one size, :class:`moveorder.nets.likelihood.PolicyLikelihood`), so what a search finds is
    the same with a memo or without; only the network's work is less.  Repeats within one call are
    evaluated once.  It holds at most ``slots`` distributions (1.4 kB each, float32), the oldest dropped
    first.  ``requests`` counts the positions asked for, ``hits`` those served without the network.
    """

    def __init__(self, slots: int):
        if slots < 1:
            raise ValueError(f"slots {slots}: expected at least 1 (no memo: pass none)")
        self.slots = slots
        self._rows: Dict[Tuple[Tuple[bytes, ...], bool], np.ndarray] = {}
        self.requests = 0
        self.hits = 0

    def log_probs(
        self, likelihood: PolicyLikelihood, histories: Sequence[Tuple[bytes, ...]], black_to_move: bool
    ) -> np.ndarray:
        """As :func:`position_log_probs` without a memo, the positions not held evaluated (once each)."""
        keys = [(tuple(h), bool(black_to_move)) for h in histories]
        missing: Dict[Tuple[Tuple[bytes, ...], bool], int] = {}
        for key in keys:
            if key not in self._rows and key not in missing:
                missing[key] = len(missing)
        self.requests += len(keys)
        self.hits += len(keys) - len(missing)
        if not keys:
            return log(torch.empty(0, MOVES)).numpy()
        fresh = position_probs(likelihood, [h for h, _ in missing], black_to_move).numpy() if missing else None
        rows = np.stack([fresh[missing[k]] if k in missing else self._rows[k] for k in keys])
        for key, j in missing.items():
            if len(self._rows) >= self.slots:
                del self._rows[next(iter(self._rows))]
            self._rows[key] = fresh[j].copy()
        return log(torch.from_numpy(rows)).numpy()


def replay_boards(moves: Sequence[int]) -> List[bytes]:
    """Flat boards before each move of a sequence (Leela Zero indices, Black first) and after the last.

    Raises :class:`moveorder.go.board.IllegalMove` naming the move for an illegal one.
    """
    board, out = goboard.Board(), [EMPTY_BOARD]
    for i, k in enumerate(moves):
        try:
            board.play(BLACK if i % 2 == 0 else WHITE, coords.from_lz(k))
        except goboard.IllegalMove as err:
            raise goboard.IllegalMove(f"move {i + 1}: {err}") from None
        out.append(bytes(board.points))
    return out


def sequence_log_probs(likelihood: PolicyLikelihood, moves: Sequence[int]) -> np.ndarray:
    """``(n,)`` log-probabilities of each move of a sequence that may capture (replayed on the board)."""
    boards = replay_boards(moves)
    out = np.empty(len(moves))
    for parity in (0, 1):
        idx = list(range(parity, len(moves), 2))
        if not idx:
            continue
        hist = [tuple(boards[max(0, i - HISTORY + 1) : i + 1][::-1]) for i in idx]
        lp = position_log_probs(likelihood, hist, parity == 0)
        out[idx] = lp[np.arange(len(idx)), [moves[i] for i in idx]]
    return out
