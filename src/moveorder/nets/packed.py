"""A training pool packed for a GPU: each game's moves and the move that captured each stone.

:class:`moveorder.nets.sampling.PositionSampler` keeps every board of every game (92 bytes a
position, bit-packed) and assembles each batch on the host.  For the 33 million positions
of the Tygem pool that is 3 GB and a 20-minute Python replay on every run, and a GPU then
waits on the host.  A packed pool keeps, per game, only what the boards follow from:

| array         | per     | what                                                                      |
|---------------|---------|---------------------------------------------------------------------------|
| ``ids``       | game    | the record's id (the held-out split hashes it, :func:`moveorder.nets.sampling.split_games`) |
| ``offsets``   | game+1  | where each game's moves start in the move arrays                          |
| ``points``    | move    | Leela Zero index of the move (:func:`moveorder.go.coords.to_lz`), 361 = pass  |
| ``captured``  | move    | the number of the move (in its game, 0-based) that captured this stone; ``NEVER`` if none |
| ``winner``    | game    | +1 Black won, -1 White won, 0 unknown or a draw                           |

Move ``i`` of a game is Black's when ``i`` is even (a packed game starts from the empty
board with Black; a record with setup stones or White first is refused, naming it).  The
stone of move ``i`` stands in the position before move ``t`` exactly when
``i < t <= captured[i]``, so any position, and its 8 history boards, is a comparison and a
scatter: :class:`PackedSampler` builds a batch's input planes where the network runs (on
the GPU, from arrays already there), the same planes, bit for bit, as
:class:`moveorder.nets.sampling.PositionSampler` builds from the same games, with the same
symmetries and targets for the same draws.  So a network trained from the packed pool is
the network trained from its JSONL pool with the same settings.

The capture numbers are found once, by replaying each record through :mod:`moveorder.go.board`
(:func:`pack_records`, ``moveorder pack-pool``), and the file is an ``.npz``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from moveorder.data.records import Record, load_records
from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.go.coords import PASS_INDEX, POINTS
from moveorder.nets.features import HISTORY, PLANES
from moveorder.nets.networks import SYMMETRY_MAPS, symmetry_planes

log = logging.getLogger(__name__)

#: ``captured`` of a stone that stands to the end of its game.
NEVER = np.iinfo(np.int16).max
#: The arrays of a packed pool file, in the order of the module's table.
ARRAYS = ("ids", "offsets", "points", "captured", "winner")


def game_moves(rec: Record) -> Tuple[np.ndarray, np.ndarray]:
    """``(points, captured)`` of one record: its moves as Leela Zero indices, and for each the
    number of the move that captured its stone (``NEVER`` if none, and for a pass).

    Refuses (``ValueError`` naming the game) a record with setup stones or White first, and
    a move the rules forbid.
    """
    if not starts_empty(rec):
        raise ValueError(
            f"game {rec.id}: setup stones or White first; a packed game starts from the empty board with "
            "Black (train on the JSONL pool instead)"
        )
    moves = rec.move_list()
    if len(moves) >= NEVER:
        raise ValueError(f"game {rec.id}: {len(moves)} moves, more than a packed game holds ({NEVER - 1})")
    b = goboard.Board(rec.size)
    owner = [-1] * (rec.size * rec.size)  # flat top-row-first point -> number of the move whose stone is there
    captured = np.full(len(moves), NEVER, dtype=np.int16)
    colour = goboard.BLACK
    for i, m in enumerate(moves):
        try:
            n = b.play(colour, m)
        except goboard.IllegalMove as err:
            raise ValueError(f"game {rec.id}, move {i + 1}: {err}") from err
        if m is not None:
            owner[coords.to_flat(m, rec.size)] = i
        if n:
            for p, who in enumerate(owner):
                if who >= 0 and b.points[p] == goboard.EMPTY:
                    captured[who] = i
                    owner[p] = -1
        colour = goboard.opponent(colour)
    points = np.array([coords.to_lz(m) for m in moves], dtype=np.int16)
    return points, captured


@dataclass
class PackedPool:
    """The arrays of the module's table."""

    ids: np.ndarray
    offsets: np.ndarray
    points: np.ndarray
    captured: np.ndarray
    winner: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, **{k: getattr(self, k) for k in ARRAYS})
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> "PackedPool":
        """Read a file of :meth:`save`; a file that is not one is refused, naming it and what it lacks."""
        try:
            with np.load(path, allow_pickle=False) as f:
                missing = [k for k in ARRAYS if k not in f.files]
                if missing:
                    raise ValueError(f"{path}: not a packed pool (no {', '.join(missing)}); make one with pack-pool")
                pool = cls(**{k: f[k] for k in ARRAYS})
        except (OSError, ValueError, EOFError) as err:
            if str(path) in str(err):
                raise
            raise ValueError(f"{path}: not a packed pool ({err}); make one with pack-pool") from err
        n = len(pool.ids)
        if len(pool.offsets) != n + 1 or pool.offsets[-1] != len(pool.points) or len(pool.captured) != len(pool.points):
            raise ValueError(f"{path}: the arrays of a packed pool disagree in length")
        return pool


def pack_records(records: Iterable[Record]) -> PackedPool:
    """Pack records (in their order) into a :class:`PackedPool`."""
    ids: List[str] = []
    points: List[np.ndarray] = []
    captured: List[np.ndarray] = []
    winner: List[int] = []
    for rec in records:
        p, c = game_moves(rec)
        ids.append(rec.id)
        points.append(p)
        captured.append(c)
        winner.append(rec.winner())
    lengths = np.array([len(p) for p in points], dtype=np.int64)
    return PackedPool(
        ids=np.array(ids, dtype=str),
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        points=np.concatenate(points).astype(np.int16) if points else np.zeros(0, np.int16),
        captured=np.concatenate(captured).astype(np.int16) if captured else np.zeros(0, np.int16),
        winner=np.array(winner, dtype=np.int8),
    )


def pack_pool(records: Sequence[Record], processes: int = 1) -> PackedPool:
    """:func:`pack_records`, the replay spread over ``processes`` (the same file for any number)."""
    if processes <= 1 or len(records) < 2 * processes:
        return pack_records(records)
    import multiprocessing

    step = -(-len(records) // processes)
    chunks = [records[k : k + step] for k in range(0, len(records), step)]
    with multiprocessing.get_context("fork").Pool(processes) as workers:
        parts = workers.map(pack_records, chunks)
    return concatenate(parts)


def starts_empty(rec: Record) -> bool:
    """Whether a record starts from the empty board with Black (what a packed game must)."""
    black, white = rec.start_points()
    return not black and not white and rec.first_player == "B"


def pack_file(pool: Path, out: Path, processes: int = 1, even_only: bool = False) -> PackedPool:
    """``moveorder pack-pool``: the JSONL pool ``pool`` packed into ``out`` (.npz).  A record that
    cannot be packed is refused, naming the pool and the game, and nothing is written;
    ``even_only``: the games with setup stones or White first (handicap games, as in the Fox pro
    pool) are left out instead, and counted in the log.  Held-out games depend on a game's id
    alone (:func:`moveorder.nets.sampling.heldout_games`), so the games kept are held out as in the whole pool."""
    if Path(out).suffix != ".npz":
        raise ValueError(f"{out}: a packed pool is an .npz file")
    records = load_records(pool)
    if even_only:
        kept = [r for r in records if starts_empty(r)]
        log.info(
            "%s: %d of %d games left out (setup stones or White first)", pool, len(records) - len(kept), len(records)
        )
        records = kept
    try:
        packed = pack_pool(records, processes)
    except ValueError as err:
        raise ValueError(f"{pool}: {err}; nothing written") from err
    packed.save(out)
    log.info("%s: %d games, %d positions packed into %s", pool, len(packed), len(packed.points), out)
    return packed


def concatenate(parts: Sequence[PackedPool]) -> PackedPool:
    """The games of ``parts``, in order, as one pool."""
    lengths = np.concatenate([np.diff(p.offsets) for p in parts])
    return PackedPool(
        ids=np.concatenate([p.ids for p in parts]),
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        points=np.concatenate([p.points for p in parts]),
        captured=np.concatenate([p.captured for p in parts]),
        winner=np.concatenate([p.winner for p in parts]),
    )


class PackedSampler:
    """Every (game, move) position of some games of a packed pool, and batches of their planes,
    built on ``device``: the interface of :class:`moveorder.nets.sampling.PositionSampler` (``len``,
    ``games``, :meth:`batch`), whose planes, targets and values it reproduces exactly.

    Positions are numbered as there: game by game in the order of ``games``, move by move.
    """

    def __init__(
        self, pool: PackedPool, games: Sequence[int], device: Optional[torch.device] = None, max_move: int = 0
    ):
        self.device = torch.device(device or "cpu")
        games = np.asarray(games, dtype=np.int64)
        starts, ends = pool.offsets[games], pool.offsets[games + 1]
        if max_move:  # each game's first max_move moves; a capture after them is never reached
            ends = np.minimum(ends, starts + max_move)
        lengths = ends - starts
        self.games = len(games)
        # Move arrays of the chosen games only, end to end, so that one game's moves are contiguous.
        idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if len(games) else np.zeros(0, np.int64)
        first = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if len(games) else np.zeros(0, np.int64)
        self._first_of_position = np.repeat(first, lengths)  # where each position's game starts
        self._move_no = np.concatenate([np.arange(n) for n in lengths]) if len(games) else np.zeros(0, np.int64)
        winner = np.repeat(pool.winner[games].astype(np.float32), lengths)
        black = self._move_no % 2 == 0
        self._values = np.where(black, winner, -winner).astype(np.float32)
        self._targets = pool.points[idx].astype(np.int64)
        dev = self.device
        # A sentinel move at the end, so a gather past a game's last move reads a pass never placed.
        self._points = torch.from_numpy(np.append(pool.points[idx], PASS_INDEX).astype(np.int64)).to(dev)
        self._captured = torch.from_numpy(np.append(pool.captured[idx], 0).astype(np.int64)).to(dev)
        self._maps = [m.to(dev) for m in SYMMETRY_MAPS]

    def __len__(self) -> int:
        return len(self._targets)

    def _to_device(self, a: np.ndarray) -> torch.Tensor:
        """A host array on the device without waiting for the device's queue (a copy from pageable memory
        is staged at once), so making the next batch overlaps the step before."""
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device, non_blocking=True)

    def planes(self, rows: np.ndarray) -> torch.Tensor:
        """``(B, 18, 19, 19)`` float32 planes of positions ``rows`` on the sampler's device."""
        dev = self.device
        first = self._to_device(self._first_of_position[rows])
        t = self._to_device(self._move_no[rows])  # moves played before the position
        width = int(self._move_no[rows].max()) if len(rows) else 0
        i = torch.arange(width, device=dev)
        gather = torch.where(i < t[:, None], first[:, None] + i, len(self._points) - 1)  # (B, L)
        pts, cap = self._points[gather], self._captured[gather]
        tau = t[:, None] - torch.arange(HISTORY, device=dev)  # (B, 8): moves before history board h
        # Stone i stands on history board h when i < tau <= captured[i] (tau < 0: no board, no stones).
        stands = (i < tau[..., None]) & (cap[:, None, :] >= tau[..., None])  # (B, 8, L)
        own = (i % 2)[None, :] == (t % 2)[:, None]  # (B, L): played by the side to move
        plane = torch.where(own[:, None, :], 0, HISTORY) + torch.arange(HISTORY, device=dev)[None, :, None]
        index = plane * (POINTS + 1) + pts[:, None, :]  # a pass lands on the spare point 361
        out = torch.zeros(len(rows), 2 * HISTORY * (POINTS + 1), device=dev)
        out.scatter_add_(1, index.reshape(len(rows), -1), stands.reshape(len(rows), -1).float())
        out = out.view(len(rows), 2 * HISTORY, POINTS + 1)[..., :POINTS]
        btm = (t % 2 == 0).float()[:, None, None].expand(-1, 1, POINTS)
        x = torch.cat([out, btm, 1 - btm], dim=1)
        return x.reshape(len(rows), PLANES, coords.SIZE, coords.SIZE)

    def batch(self, rows: np.ndarray, rng: Optional[np.random.Generator]) -> Tuple[torch.Tensor, ...]:
        """Planes and policy targets of ``rows`` on the sampler's device, and value targets on the host
        (training picks the samples with a known result there, without waiting for the device), as
        :meth:`moveorder.nets.sampling.PositionSampler.batch` (the same draws of ``rng`` for the symmetries)."""
        x = self.planes(rows)
        t = self._to_device(self._targets[rows])
        if rng is not None:
            sym = rng.integers(0, 8, len(rows))
            for s in range(1, 8):
                sel = np.nonzero(sym == s)[0]
                if len(sel):
                    sel_t = self._to_device(sel)
                    x[sel_t] = symmetry_planes(x[sel_t], s)
                    t[sel_t] = self._maps[s][t[sel_t]]
        return x, t, torch.from_numpy(self._values[rows])
