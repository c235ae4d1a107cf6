"""Positions of a training pool, and what a network does on them: the split of a pool's games into
train and held-out (a hash of each game's id and the seed, :func:`split_games`), every position of
a game as network input (:class:`PositionSampler`, batches of planes built at once; a pool packed
by ``moveorder pack-pool`` gives the same through :mod:`moveorder.nets.packed`), and a network's
top-1 accuracy and log-likelihood on held-out positions (:func:`evaluate`); training's endless
stream of batches (:func:`training_batches`), made ahead on a thread for a GPU (:class:`Prefetch`).

Training (:mod:`moveorder.nets.train`) and the cross-level tables
(:mod:`moveorder.report.cross_level`) read pools through these, so both hold out the same games.
"""

from __future__ import annotations

import hashlib
import math
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
import torch

from moveorder.data.records import Record, load_records
from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import POINTS
from moveorder.nets import devices
from moveorder.nets.features import FLAT_OF_LZ, HISTORY, PLANES
from moveorder.nets.networks import SYMMETRY_MAPS, LeelaNet


@dataclass
class GameData:
    boards: np.ndarray  # (moves + 1, 361) int8, top-row-first; boards[0] the setup (empty but for handicap)
    targets: np.ndarray  # (moves,) Leela Zero index of each move, 361 = pass
    winner: int  # +1 black won, -1 white won, 0 unknown/draw
    black_first: bool = True  # False: White made the first move (after handicap stones)

    def black_to_move(self) -> np.ndarray:
        """(moves,) bool: Black plays move ``i``."""
        return (np.arange(len(self.targets)) % 2 == 0) == self.black_first


def game_data(rec: Record, max_move: int = 0) -> GameData:
    """Replay a record from its setup stones (captures included) and keep every board state;
    ``max_move``: only its first ``max_move`` moves (0: all of them)."""
    moves = rec.move_list()
    if max_move:
        moves = moves[:max_move]
    black, white = rec.start_points()
    b = goboard.from_stones(black, white, rec.size)
    boards = np.zeros((len(moves) + 1, rec.size * rec.size), dtype=np.int8)
    boards[0] = b.points
    colour = goboard.BLACK if rec.first_player == "B" else goboard.WHITE
    for i, m in enumerate(moves):
        b.play(colour, m)
        boards[i + 1] = b.points
        colour = goboard.opponent(colour)
    targets = np.array([coords.to_lz(m) for m in moves], dtype=np.int64)
    return GameData(boards, targets, rec.winner(), rec.first_player == "B")


class PositionSampler:
    """Every (game, move) pair of a list of games, and batches of their input planes.

    Boards are kept bit-packed in Leela Zero order (2 x 46 bytes a board,
    not 361), all games in one array, so a batch is a few array lookups
    rather than a Python loop over samples.
    """

    def __init__(self, games: Iterable[GameData]):
        black, white, rows, move_no, btm, targets, values = [], [], [], [], [], [], []
        first = 0
        for gd in games:
            lz = gd.boards[:, FLAT_OF_LZ]
            black.append(np.packbits(lz == goboard.BLACK, axis=1))
            white.append(np.packbits(lz == goboard.WHITE, axis=1))
            m = len(gd.targets)
            rows.append(first + np.arange(m))
            move_no.append(np.arange(m))
            b = gd.black_to_move()
            btm.append(b)
            targets.append(gd.targets)
            values.append(np.where(b, gd.winner, -gd.winner).astype(np.float32))
            first += m + 1

        def cat(parts, dtype, shape=(0,)):
            return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(shape, dtype)

        self.black = cat(black, np.uint8, (0, (POINTS + 7) // 8))
        self.white = cat(white, np.uint8, (0, (POINTS + 7) // 8))
        self.board_row = cat(rows, np.int64)  # row of the board before each position's move
        self.move_no = cat(move_no, np.int64)  # moves played before it (history available)
        self.black_to_move = cat(btm, bool)
        self.targets = cat(targets, np.int64)
        self.values = cat(values, np.float32)
        self.games = len(rows)

    @classmethod
    def from_records(cls, records: Iterable[Record], max_move: int = 0) -> "PositionSampler":
        """The positions of ``records`` (of their first ``max_move`` moves each; 0: every move)."""
        return cls(game_data(r, max_move) for r in records)

    def __len__(self):
        return len(self.targets)

    def planes(self, rows: np.ndarray) -> np.ndarray:
        """``(B, 18, 19, 19)`` float32 planes of positions ``rows``, as :func:`board_history_planes` builds them."""
        h = np.arange(HISTORY)
        valid = self.move_no[rows][:, None] >= h  # (B, 8): before the first board: zeros
        k = np.where(valid, self.board_row[rows][:, None] - h, 0)
        black = np.unpackbits(self.black[k], axis=-1, count=POINTS).astype(bool) & valid[..., None]  # (B, 8, 361)
        white = np.unpackbits(self.white[k], axis=-1, count=POINTS).astype(bool) & valid[..., None]
        btm = self.black_to_move[rows]
        out = np.empty((len(rows), PLANES, POINTS), dtype=np.float32)
        out[:, :HISTORY] = np.where(btm[:, None, None], black, white)
        out[:, HISTORY : 2 * HISTORY] = np.where(btm[:, None, None], white, black)
        out[:, 16] = btm[:, None]
        out[:, 17] = ~btm[:, None]
        return out.reshape(len(rows), PLANES, coords.SIZE, coords.SIZE)

    def batch(self, rows: np.ndarray, rng: Optional[np.random.Generator]) -> Tuple[torch.Tensor, ...]:
        """Planes, policy targets and value targets (from the side to move) of ``rows``.

        With ``rng``, each sample is turned by one of the 8 symmetries drawn from it.
        """
        x = self.planes(rows)
        t = self.targets[rows]
        if rng is not None:  # one of the 8 symmetries per sample (numpy: no thread pool for small copies)
            sym = rng.integers(0, 8, len(rows))
            for s in range(1, 8):
                sel = np.nonzero(sym == s)[0]
                if len(sel):
                    x[sel] = symmetry_array(x[sel], s)
                    t[sel] = _SYMMETRY_MAPS_NP[s][t[sel]]
        return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(t), torch.from_numpy(self.values[rows])


_SYMMETRY_MAPS_NP = [m.numpy() for m in SYMMETRY_MAPS]


def symmetry_array(x: np.ndarray, s: int) -> np.ndarray:
    """:func:`moveorder.nets.networks.symmetry_planes` for numpy arrays (a view)."""
    if s & 4:
        x = np.swapaxes(x, -1, -2)
    if s & 1:
        x = x[..., ::-1]
    if s & 2:
        x = x[..., ::-1, :]
    return x


def _game_hash(record_id: str, seed: int) -> float:
    """A number in [0, 1) fixed by a game's id and the seed."""
    digest = hashlib.sha256(f"{seed}/{record_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2**64


def heldout_games(ids: List[str], fraction: float, seed: int) -> set:
    """The positions in ``ids`` of the held-out games: those whose id hashes (with ``seed``) below ``fraction``.

    Whether a game is held out depends only on the game and the seed, so a
    pool and any part of it (e.g. its qualified games) hold out the same
    games.  At least one game lands on each side (in a pool of two or more).
    """
    keys = [_game_hash(i, seed) for i in ids]
    held = {i for i, k in enumerate(keys) if k < fraction}
    if not held and ids:  # a tiny pool: its lowest hash
        held = {min(range(len(ids)), key=keys.__getitem__)}
    if len(held) == len(ids) > 1:
        held.discard(max(range(len(ids)), key=keys.__getitem__))
    return held


def split_games(records: List[Record], fraction: float, seed: int) -> Tuple[List[Record], List[Record]]:
    """Train and held-out games (:func:`heldout_games`), each in the pool's order."""
    held = heldout_games([r.id for r in records], fraction, seed)
    return ([r for i, r in enumerate(records) if i not in held], [r for i, r in enumerate(records) if i in held])


def samplers(pool: Path, fraction: float, seed: int, dev: torch.device, max_move: int = 0) -> Tuple[object, object]:
    """The train and held-out samplers of a pool: a JSONL pool replayed into :class:`PositionSampler`
    (batches made on the host), a packed one (``.npz``, :mod:`moveorder.nets.packed`) into
    :class:`moveorder.nets.packed.PackedSampler` (batches made on ``dev``).  The same games and
    positions either way; ``max_move``: only the positions before each game's move ``max_move``
    (0: every position)."""
    if Path(pool).suffix == ".npz":
        from moveorder.nets.packed import PackedPool, PackedSampler

        packed = PackedPool.load(pool)
        if len(packed) < 2:
            raise ValueError(f"{pool}: {len(packed)} games in the training pool, need at least 2")
        held = heldout_games(list(packed.ids), fraction, seed)
        train_idx = [i for i in range(len(packed)) if i not in held]
        return PackedSampler(packed, train_idx, dev, max_move), PackedSampler(packed, sorted(held), dev, max_move)
    records = load_records(pool)
    if len(records) < 2:
        raise ValueError(f"{pool}: {len(records)} games in the training pool, need at least 2")
    train_recs, held_recs = split_games(records, fraction, seed)
    return PositionSampler.from_records(train_recs, max_move), PositionSampler.from_records(held_recs, max_move)


@torch.no_grad()
def evaluate(
    net: LeelaNet, sampler: PositionSampler, limit: int, device: torch.device, seed: int, batch_size: int = 512
) -> Dict[str, float]:
    """Top-1 accuracy and mean log-likelihood of the played move on held-out positions.

    In IEEE float32 on any device (no TF32 on a GPU), so the cross-level table's re-evaluation on
    the CPU gives a network's metrics.json figures.
    """
    with devices.arithmetic(tf32=False):
        return _evaluate(net, sampler, limit, device, seed, batch_size)


def _evaluate(net, sampler, limit, device, seed, batch_size) -> Dict[str, float]:
    net.eval()
    rng = np.random.default_rng([seed, 2])
    rows = np.arange(len(sampler)) if len(sampler) <= limit else np.sort(rng.choice(len(sampler), limit, replace=False))
    correct, loglik, n = 0, 0.0, 0
    for k in range(0, len(rows), batch_size):
        x, t, _ = sampler.batch(rows[k : k + batch_size], None)
        logits = net.policy_logits(x.to(device)).float()
        logp = torch.log_softmax(logits, dim=-1)
        t = t.to(device)
        correct += int((logits.argmax(-1) == t).sum())
        loglik += float(logp.gather(1, t[:, None]).sum())
        n += len(t)
    net.train()
    return {
        "positions": n,
        "top1_accuracy": correct / n,
        "mean_log_likelihood": loglik / n,
        "geometric_mean_likelihood": math.exp(loglik / n),
    }


def training_batches(
    sampler: PositionSampler, rng: np.random.Generator, batch_size: int, symmetries: bool
) -> Iterator[Tuple[Tuple[torch.Tensor, ...], dict]]:
    """Training batches in order, without end: (planes, policy targets, value targets, indices of the
    samples with a known result), each with the state of ``rng`` after it was drawn (what a checkpoint
    written after that batch's step saves, however far ahead batches are made).

    The indices come from the host, so the value loss needs no boolean mask on the device (a host sync).
    """
    while True:
        x, t, z = sampler.batch(rng.integers(0, len(sampler), batch_size), rng if symmetries else None)
        known = torch.from_numpy(np.flatnonzero(z.numpy() != 0))
        yield (x, t, z, known), rng.bit_generator.state


class Prefetch:
    """The items of an iterator, made up to ``depth`` ahead on a thread (numpy releases the GIL while it
    builds planes), so a GPU's step and the next batch's assembly overlap.  ``pin``: each tensor in
    page-locked memory, so the copy to the GPU need not wait.  An exception of the iterator is raised
    where its item would have been returned."""

    def __init__(self, items: Iterator, depth: int = 2, pin: bool = False):
        self._queue: "queue.Queue" = queue.Queue(depth)
        self._stop = threading.Event()
        self._pin = pin
        self._thread = threading.Thread(target=self._run, args=(items,), daemon=True)
        self._thread.start()

    def _run(self, items: Iterator) -> None:
        try:
            for tensors, extra in items:
                if self._pin:
                    tensors = tuple(v.pin_memory() for v in tensors)
                if not self._put(("item", (tensors, extra))):
                    return
        except BaseException as err:  # noqa: BLE001 - raised in the consumer by __next__
            self._put(("error", err))

    def _put(self, entry) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        kind, item = self._queue.get()
        if kind == "error":
            raise item
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
