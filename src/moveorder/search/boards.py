"""A sequence played on the real board, and the network's view of it: the positions before each move
(captures, ko and superko applied by :class:`moveorder.go.board.Board`) and their network input.

The capture search and the scoring of a sequence that may capture share these; boards are in the
top-row-first flat order of :mod:`moveorder.go.board`, moves Leela Zero indices.
"""

from __future__ import annotations

import time
from typing import List, Sequence, Tuple

import numpy as np
import torch

from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import POINTS
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


def position_log_probs(
    likelihood: PolicyLikelihood, histories: Sequence[Tuple[bytes, ...]], black_to_move: bool
) -> np.ndarray:
    """``(P, 362)`` float64 log ``P(move | position)`` (Leela Zero order) of the prefixes' positions.

    With ``legal_only``, divided by the mass on the empty points and pass, as
    :meth:`moveorder.nets.likelihood.PolicyLikelihood.probs_of_codes` does.
    """
    t0 = time.perf_counter()
    probs = likelihood.probs_of_planes(history_planes(histories, black_to_move)).cpu()
    if likelihood.legal_only:
        cur = np.frombuffer(b"".join(h[0] for h in histories), dtype=np.uint8).reshape(len(histories), POINTS)
        probs = legal_renormalised(probs, torch.from_numpy(cur[:, FLAT_OF_LZ] == EMPTY))
    likelihood.seconds += time.perf_counter() - t0
    return log(probs).numpy()


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
