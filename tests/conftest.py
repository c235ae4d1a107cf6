"""Shared helpers: records written by the tests themselves, and paths to ../shared."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MIRROR = SHARED / "data" / "mirror"

# A real professional opening (the first 20 moves of a Fox game), no captures.
OPENING = ["dp", "pp", "cd", "pc", "qe", "ec", "hd", "ef", "dc", "fd",
           "cg", "od", "kc", "qh", "gc", "db", "cb", "dd", "cc", "eh"]


def filler_moves(count: int, start: Sequence[str] = ()) -> list:
    """Legal, capture-free moves: the opening, then points far from each other on rows r..s."""
    moves = list(start) or list(OPENING)
    used = set(moves)
    cols = "abcdefghijklmnopqrs"
    # Stones on alternate points of the bottom-right area never capture anything.
    candidates = [c + r for r in "klmno" for c in cols[::2]] + [c + r for r in "klmno" for c in cols[1::2]]
    for pt in candidates:
        if len(moves) >= count:
            break
        if pt not in used:
            moves.append(pt)
            used.add(pt)
    assert len(moves) >= count
    return moves[:count]


def make_sgf(moves: Sequence[str], size: int = 19, root: str = "", colours: str | None = None) -> str:
    """An SGF game record: ``root`` properties are added to the root node as written."""
    colours = colours or "BW" * (len(moves) // 2 + 1)
    body = "".join(f";{colours[i]}[{m}]" for i, m in enumerate(moves))
    return f"(;GM[1]FF[4]SZ[{size}]KM[6.5]{root}{body})"


@pytest.fixture
def sgf_dir(tmp_path):
    """A folder to write records into."""
    d = tmp_path / "sgf"
    d.mkdir()
    return d


@pytest.fixture(scope="session")
def pro2_pool(tmp_path_factory):
    """Qualified records of the Fox Pro2 archive from the offline mirror (real games)."""
    from moveorder.archives import extract_all
    from moveorder.records import write_scan

    tmp = tmp_path_factory.mktemp("pro2")
    extract_all([MIRROR / "github.com/featurecat/go-dataset/raw/master/Pro/Pro2.7z"], tmp / "x")
    counts = write_scan(tmp / "x", tmp / "pool.jsonl", tmp / "r.csv", tmp / "rej.csv")
    assert counts["qualified"] > 100
    return tmp / "pool.jsonl"


@pytest.fixture(scope="session")
def trained(pro2_pool, tmp_path_factory):
    """A small network trained here (2 blocks x 16 filters, 300 steps) on real games."""
    from moveorder.settings import TrainConfig
    from moveorder.train import train

    out = tmp_path_factory.mktemp("net")
    cfg = TrainConfig(blocks=2, filters=16, steps=300, batch_size=64, lr=3e-3, checkpoint_every=100, seed=1,
                      heldout_positions=3000)
    metrics = train(pro2_pool, out, cfg, device="cpu", progress=False)
    return out, metrics, cfg
