"""Held-out accuracy of the policy network before and after issue 15, on the same held-out games, in one run.

    python bench/training.py --pool data/pool/pro.jsonl --qualified data/records/pro/qualified.jsonl \
        --config config/quick.yaml --out bench-training [--variant NAME POOL KEY=VALUE ...]

Two networks by default, both trained here from the same seed:

* ``before``: main's training before issue 15: the pool's qualified games only (no handicap, no capture
  before move 50), 2,000 steps (quick.yaml's then, about the same wall time as now's), value head on,
  one of 8 symmetries per sample, AdamW 2e-3, 100 warm-up steps, cosine, float32;
* ``now``: the configuration's ``training`` settings on the whole pool (every usable record).

A game is held out by a hash of its id and the seed (moveorder.nets.train.split_games), so the held-out games
of the qualified pool are exactly the qualified games among the held-out games of the whole pool, and
no network trains on any of them. Every network is evaluated on both: all held-out games of the pool,
and their qualified part. ``--variant`` adds networks (POOL: ``usable`` or ``qualified``; KEY=VALUE:
TrainConfig fields over the configuration's), e.g. ``--variant now-qualified qualified``.
Prints a markdown table and writes OUT/results.json. ``--batch-timing`` first times batch assembly:
main's per-sample loop over ``board_history_planes`` against the bit-packed PositionSampler, on the
same rows of the same pool.
"""

import argparse
import json
import sys
import time
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np
import torch
import yaml

from moveorder.data.records import load_records
from moveorder.nets.train import PositionSampler, evaluate, split_games, train
from moveorder.settings import TrainConfig

# main's training at commit 9f32ba9 (what quick.yaml ran before issue 15: 2,000 steps, about 7 minutes here)
BEFORE = dict(
    steps=2000, lr=2e-3, warmup_steps=100, lr_schedule="cosine", value_head=True, symmetries=True, precision="float32"
)


def config_training(path: Path, seed: int) -> dict:
    """The training settings of a workflow configuration (merged over config/config.yaml)."""
    repo = Path(__file__).resolve().parents[1]
    merged = yaml.safe_load((repo / "config/config.yaml").read_text())["training"]
    if path.resolve() != (repo / "config/config.yaml").resolve():
        merged.update(yaml.safe_load(path.read_text()).get("training", {}))
    keys = {f.name for f in fields(TrainConfig)}
    return {k: v for k, v in merged.items() if k in keys} | {"seed": seed}


def per_sample_batch(games, index, rows, rng):
    """main's batch assembly before issue 15: a Python loop over samples, symmetries in torch."""
    from moveorder.nets.features import board_history_planes
    from moveorder.nets.networks import SYMMETRY_MAPS, symmetry_planes

    planes = np.empty((len(rows), 18, 19, 19), dtype=np.float32)
    targets = np.empty(len(rows), dtype=np.int64)
    for j, r in enumerate(rows):
        g, i = index[r]
        gd = games[g]
        planes[j] = board_history_planes(gd.boards, int(i), bool(gd.black_to_move()[i]))
        targets[j] = gd.targets[i]
    x, t = torch.from_numpy(planes), torch.from_numpy(targets)
    sym = rng.integers(0, 8, len(rows))
    for s in range(1, 8):
        sel = torch.from_numpy(np.nonzero(sym == s)[0])
        if len(sel):
            x[sel] = symmetry_planes(x[sel], s)
            t[sel] = SYMMETRY_MAPS[s][t[sel]]
    return x, t


def batch_timing(records, batch_size: int, batches: int = 100) -> dict:
    """Milliseconds per batch: main's per-sample loop and the bit-packed sampler, on the same rows.

    Both draw the same symmetries from the same generator; the batches are checked to be equal.
    """
    from moveorder.nets.train import game_data

    games = [game_data(r) for r in records]
    index = np.array([(g, i) for g, gd in enumerate(games) for i in range(len(gd.targets))], dtype=np.int64)
    sampler = PositionSampler(games)
    rows = np.random.default_rng(0).integers(0, len(index), (batches, batch_size))
    out, made = {}, {}
    for name, fn in (
        ("per-sample loop (main)", lambda r, g: per_sample_batch(games, index, r, g)),
        ("bit-packed sampler", lambda r, g: sampler.batch(r, g)[:2]),
    ):
        rng, t0 = np.random.default_rng(1), time.perf_counter()
        made[name] = [fn(r, rng) for r in rows]
        out[name] = (time.perf_counter() - t0) / batches * 1e3
    for (xa, ta), (xb, tb) in zip(*made.values()):
        assert torch.equal(xa, xb) and torch.equal(ta, tb), "the two batch builders disagree"
    return out


def parse_value(text: str):
    return yaml.safe_load(text)


def write_pool(records, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.to_json() + "\n" for r in records))
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pool", required=True, help="the data stage's training pool (every usable record)")
    p.add_argument("--qualified", required=True, help="the set's qualified records (data/records/SET/qualified.jsonl)")
    p.add_argument("--config", default="config/quick.yaml")
    p.add_argument("--seed", type=int, default=None, help="default: the configuration's seed")
    p.add_argument("--out", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=None, help="default: the configuration's")
    p.add_argument("--batch-timing", action="store_true", help="first time batch assembly, main's and now")
    p.add_argument("--no-defaults", action="store_true", help="only the --variant networks")
    p.add_argument("--variant", nargs="+", action="append", default=[], metavar=("NAME", "POOL"))
    a = p.parse_args(argv)

    cfg_path = Path(a.config)
    seed = a.seed
    if seed is None:
        repo = Path(__file__).resolve().parents[1]
        seed = yaml.safe_load((repo / "config/config.yaml").read_text())["seed"]
        seed = yaml.safe_load(cfg_path.read_text()).get("seed", seed)
    now = config_training(cfg_path, seed) | {"threads": a.threads}
    if a.steps:
        now["steps"] = a.steps
    out = Path(a.out)

    pool = load_records(Path(a.pool))
    qualified_ids = {r.id for r in load_records(Path(a.qualified))}
    pools = {
        "usable": Path(a.pool),
        "qualified": write_pool([r for r in pool if r.id in qualified_ids], out / "qualified-pool.jsonl"),
    }
    _, held = split_games(pool, now["heldout_fraction"], seed)
    held_sets = {"all": held, "qualified": [r for r in held if r.id in qualified_ids]}
    samplers = {k: PositionSampler.from_records(v) for k, v in held_sets.items()}

    if a.batch_timing:
        torch.set_num_threads(a.threads)
        ms = batch_timing(pool[:500], now["batch_size"])
        print(
            "Batch assembly, batches of %d (500 games of the pool, 100 batches, the same rows): %s\n"
            % (now["batch_size"], ", ".join(f"{k} {v:.1f} ms" for k, v in ms.items()))
        )

    variants = [] if a.no_defaults else [("before", "qualified", now | BEFORE), ("now", "usable", now)]
    for name, pool_name, *pairs in a.variant:
        if pool_name not in pools:
            p.error(f"--variant {name}: pool {pool_name!r} is not one of {sorted(pools)}")
        variants.append((name, pool_name, now | {k: parse_value(v) for k, v in (x.split("=", 1) for x in pairs)}))

    rows = []
    for name, pool_name, settings in variants:
        cfg = TrainConfig(**settings)
        t0 = time.perf_counter()
        m = train(pools[pool_name], out / name, cfg, device="cpu", progress=False)
        wall = time.perf_counter() - t0
        state = torch.load(out / name / "model.pt", map_location="cpu", weights_only=False)
        from moveorder.nets.networks import LeelaNet

        net = LeelaNet(cfg.blocks, cfg.filters)
        net.load_state_dict(state["model"])
        row = {
            "network": name,
            "pool": pool_name,
            "train_games": m["train_games"],
            "train_positions": m["train_positions"],
            "wall_seconds": round(wall, 1),
            "seconds": m["seconds"],
            "data_share": m["data_share"],
            "config": asdict(cfg),
        }
        for held_name, sampler in samplers.items():
            e = evaluate(net, sampler, cfg.heldout_positions, torch.device("cpu"), seed)
            row[f"top1_{held_name}"] = e["top1_accuracy"]
            row[f"loglik_{held_name}"] = e["mean_log_likelihood"]
            row[f"positions_{held_name}"] = e["positions"]
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    (out / "results.json").write_text(
        json.dumps({"held_out_games": {k: len(v) for k, v in held_sets.items()}, "rows": rows}, indent=2) + "\n"
    )
    print(
        f"Held-out games: {len(held_sets['all'])} of the pool ({samplers['all'].__len__()} positions), "
        f"{len(held_sets['qualified'])} of them qualified ({len(samplers['qualified'])} positions); "
        f"up to {now.get('heldout_positions', 20000)} positions each.\n"
    )
    print(
        "| network | pool | training games | training positions | wall (s) | share of step time outside "
        "forward/backward | top-1, all held-out | top-1, qualified held-out | mean log-likelihood, all | "
        "mean log-likelihood, qualified |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['network']} | {r['pool']} | {r['train_games']:,} | {r['train_positions']:,} | "
            f"{r['wall_seconds']:.0f} | {100 * (r['data_share'] or 0):.1f}% | {100 * r['top1_all']:.1f}% | "
            f"{100 * r['top1_qualified']:.1f}% | {r['loglik_all']:.3f} | {r['loglik_qualified']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
