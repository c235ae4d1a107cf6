"""Training a human-move policy network (Leela Zero architecture) on a training pool.

The pool is a JSONL file of records (:mod:`moveorder.records`), written by
the data stage with every evaluation game left out.  Games are split into
train and held-out by the seed; every position of a training game is a
sample (planes from :func:`moveorder.features.board_history_planes`, one of
the 8 symmetries drawn per sample), the policy target is the move played
and the value target the game's result from the side to move (games with no
result train the policy only).  Loss = cross-entropy + ``value_weight`` x MSE.

Checkpoints (model, optimiser, step, RNG states) are written every
``checkpoint_every`` steps and at the end; a rerun resumes from the last
one.  On a GPU the forward pass runs under bfloat16 autocast.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from . import board as goboard
from .features import board_history_planes
from .networks import SYMMETRY_MAPS, LeelaNet, export_leela, parameter_count, symmetry_planes
from .records import Record, load_records

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    blocks: int = 4
    filters: int = 32
    steps: int = 3000
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-4
    value_weight: float = 0.25
    heldout_fraction: float = 0.05
    heldout_positions: int = 20000
    checkpoint_every: int = 500
    seed: int = 0
    threads: int = 0  # 0: torch's default


@dataclass
class GameData:
    boards: np.ndarray   # (moves + 1, 361) int8, boards[0] empty
    targets: np.ndarray  # (moves,) Leela Zero index of each move, 361 = pass
    winner: int          # +1 black won, -1 white won, 0 unknown/draw


def _winner(result: str) -> int:
    r = result.strip().upper()
    return 1 if r.startswith("B+") else -1 if r.startswith("W+") else 0


def game_data(rec: Record) -> GameData:
    """Replay a record (captures included) and keep every board state."""
    from . import coords

    moves = rec.move_list()
    b = goboard.Board(rec.size)
    boards = np.zeros((len(moves) + 1, rec.size * rec.size), dtype=np.int8)
    colour = goboard.BLACK
    for i, m in enumerate(moves):
        b.play(colour, m)
        boards[i + 1] = b.points
        colour = goboard.opponent(colour)
    targets = np.array([coords.to_lz(m) for m in moves], dtype=np.int64)
    return GameData(boards, targets, _winner(rec.result))


class PositionSampler:
    """Every (game, move) pair of a list of games, with batch assembly."""

    def __init__(self, games: List[GameData]):
        self.games = games
        self.index = np.array([(g, i) for g, gd in enumerate(games) for i in range(len(gd.targets))],
                              dtype=np.int64)

    def __len__(self):
        return len(self.index)

    def batch(self, rows: np.ndarray, rng: Optional[np.random.Generator]) -> Tuple[torch.Tensor, ...]:
        planes = np.empty((len(rows), 18, 19, 19), dtype=np.float32)
        targets = np.empty(len(rows), dtype=np.int64)
        values = np.empty(len(rows), dtype=np.float32)
        for j, r in enumerate(rows):
            g, i = self.index[r]
            gd = self.games[g]
            black = i % 2 == 0
            planes[j] = board_history_planes(gd.boards, int(i), black)
            targets[j] = gd.targets[i]
            values[j] = gd.winner if black else -gd.winner
        x, t = torch.from_numpy(planes), torch.from_numpy(targets)
        if rng is not None:  # one of the 8 symmetries per sample
            sym = rng.integers(0, 8, len(rows))
            for s in range(1, 8):
                sel = torch.from_numpy(np.nonzero(sym == s)[0])
                if len(sel):
                    x[sel] = symmetry_planes(x[sel], s)
                    t[sel] = SYMMETRY_MAPS[s][t[sel]]
        return x, t, torch.from_numpy(values)


def split_games(records: List[Record], fraction: float, seed: int) -> Tuple[List[Record], List[Record]]:
    rng = np.random.default_rng([seed, 1])
    order = rng.permutation(len(records))
    k = max(1, int(round(len(records) * fraction)))
    held = set(order[:k].tolist())
    return ([r for i, r in enumerate(records) if i not in held], [r for i, r in enumerate(records) if i in held])


@torch.no_grad()
def evaluate(net: LeelaNet, sampler: PositionSampler, limit: int, device: torch.device, seed: int,
             batch_size: int = 512) -> Dict[str, float]:
    """Top-1 accuracy and mean log-likelihood of the played move on held-out positions."""
    net.eval()
    rng = np.random.default_rng([seed, 2])
    rows = np.arange(len(sampler)) if len(sampler) <= limit else np.sort(rng.choice(len(sampler), limit, replace=False))
    correct, loglik, n = 0, 0.0, 0
    for k in range(0, len(rows), batch_size):
        x, t, _ = sampler.batch(rows[k:k + batch_size], None)
        logits = net.policy_logits(x.to(device)).float()
        logp = torch.log_softmax(logits, dim=-1)
        t = t.to(device)
        correct += int((logits.argmax(-1) == t).sum())
        loglik += float(logp.gather(1, t[:, None]).sum())
        n += len(t)
    net.train()
    return {"positions": n, "top1_accuracy": correct / n, "mean_log_likelihood": loglik / n,
            "geometric_mean_likelihood": math.exp(loglik / n)}


def train(pool: Path, out_dir: Path, cfg: TrainConfig, device: Optional[str] = None,
          progress: bool = True) -> Dict[str, object]:
    """Train on ``pool``; write ``model.pt``, ``policy.txt.gz`` (Leela Zero format) and ``metrics.json``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(cfg.seed)
    records = load_records(pool)
    if len(records) < 2:
        raise ValueError(f"{pool}: {len(records)} games in the training pool, need at least 2")
    train_recs, held_recs = split_games(records, cfg.heldout_fraction, cfg.seed)
    t0 = time.time()
    train_s = PositionSampler([game_data(r) for r in train_recs])
    held_s = PositionSampler([game_data(r) for r in held_recs])
    log.info("%s: %d train games (%d positions), %d held-out games (%d positions), replayed in %.1f s",
             pool, len(train_recs), len(train_s), len(held_recs), len(held_s), time.time() - t0)

    # Channels-last: 1.13x more training steps per second for 4x32 on a CPU (bench/networks.py).
    net = LeelaNet(cfg.blocks, cfg.filters).to(dev, memory_format=torch.channels_last)
    params = [p for p in net.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 100) * 0.5 * (1 + math.cos(math.pi * min(s, cfg.steps) / cfg.steps)))
    rng = np.random.default_rng([cfg.seed, 3])
    step = 0
    ckpt = out_dir / "checkpoint.pt"
    if ckpt.exists():
        state = torch.load(ckpt, map_location=dev, weights_only=False)
        if _model_settings(state["config"]) != _model_settings(asdict(cfg)):
            raise ValueError(f"{ckpt}: checkpoint was made with another configuration; remove it to start over")
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        step = state["step"]
        log.info("resuming from %s at step %d", ckpt, step)

    def save():
        tmp = ckpt.with_suffix(".tmp")
        torch.save({"config": asdict(cfg), "model": net.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "rng": rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(), "step": step}, tmp)
        tmp.replace(ckpt)

    ce = nn.CrossEntropyLoss()
    amp = dev.type == "cuda"
    net.train()
    bar = tqdm(total=cfg.steps, initial=step, disable=not progress, desc="train", mininterval=5)
    t0, start_step = time.time(), step
    while step < cfg.steps:
        x, t, z = train_s.batch(rng.integers(0, len(train_s), cfg.batch_size), rng)
        x, t, z = x.to(dev, memory_format=torch.channels_last), t.to(dev), z.to(dev)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
            logits, v = net(x)
            p_loss = ce(logits.float(), t)
            known = z != 0
            v_loss = ((v.float() - z) ** 2)[known].mean() if known.any() else torch.zeros((), device=dev)
            loss = p_loss + cfg.value_weight * v_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        step += 1
        acc = float((logits.argmax(-1) == t).float().mean())
        bar.set_postfix(loss=f"{p_loss.item():.3f}", acc=f"{acc:.3f}", refresh=False)
        bar.update(1)
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            save()
    bar.close()
    elapsed = time.time() - t0
    metrics = evaluate(net, held_s, cfg.heldout_positions, dev, cfg.seed)
    metrics.update({"pool": str(pool), "train_games": len(train_recs), "heldout_games": len(held_recs),
                    "train_positions": len(train_s), "steps": cfg.steps, "parameters": parameter_count(net),
                    "device": dev.type, "steps_per_second": (step - start_step) / elapsed if elapsed else None,
                    "config": asdict(cfg)})
    net.eval().cpu()
    torch.save({"kind": "leelanet", "blocks": cfg.blocks, "filters": cfg.filters,
                "model": net.state_dict(), "metrics": metrics}, out_dir / "model.pt")
    export_leela(net, out_dir / "policy.txt.gz")
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    log.info("held-out: top-1 %.3f, mean log-likelihood %.3f over %d positions",
             metrics["top1_accuracy"], metrics["mean_log_likelihood"], metrics["positions"])
    return metrics


def _model_settings(cfg: dict) -> dict:
    """The settings a checkpoint must agree on to be resumed (threads and checkpoint cadence may change)."""
    return {k: v for k, v in cfg.items() if k not in ("threads", "checkpoint_every")}


def load_checkpoint(path: Path) -> LeelaNet:
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("kind") != "leelanet":
        raise ValueError(f"{path}: not a moveorder policy checkpoint")
    net = LeelaNet(state["blocks"], state["filters"])
    net.load_state_dict(state["model"])
    return net.eval()
