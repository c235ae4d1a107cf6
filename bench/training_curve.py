"""Held-out top-1 against training wall time: one training run's checkpoints on every set's held-out games.

    python bench/training_curve.py --snapshots SNAPSHOT_DIR --start EPOCH_SECONDS \
        --heldout tygem data/pool/tygem.jsonl --heldout pro data/pool/pro.jsonl \
        --heldout kgs data/pool/kgs.jsonl --out curve.csv

A snapshot is a copy of the run's ``checkpoint.pt`` (train-policy writes one every
``checkpoint_every`` steps; copy them as they appear, e.g. ``cp checkpoint.pt SNAPSHOT_DIR/``).
Each is evaluated as the cross-level table evaluates a network (moveorder.report.cross_level.heldout_table:
the held-out games of each pool by training's split and seed, 20,000 positions), so the last row of
a finished run equals its metrics.json.  Wall time of a snapshot: its file time minus the run's start
(``--start``, seconds since the epoch), so the curve is of this run on its machine, with whatever else ran beside it.
Under a cosine schedule an early snapshot has not decayed its learning rate: it is a point on this
run, not the end of a shorter one.  Prints a markdown table; writes CSV.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import torch

from moveorder.nets.networks import LeelaNet, save_checkpoint
from moveorder.report.cross_level import heldout_table


def snapshot_model(path: Path, dest: Path) -> tuple:
    """A checkpoint.pt copy -> (step, a model.pt in ``dest`` holding its weights)."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    cfg = state["config"]
    net = LeelaNet(cfg["blocks"], cfg["filters"])
    net.load_state_dict(state["model"])
    out = dest / f"step{state['step']}.pt"
    save_checkpoint(net.eval(), out)
    return state["step"], out, cfg


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--snapshots", required=True, help="folder of checkpoint.pt copies")
    p.add_argument("--start", type=float, required=True, help="the run's start, seconds since the epoch")
    p.add_argument("--heldout", nargs=2, action="append", required=True, metavar=("SET", "POOL"))
    p.add_argument("--out", required=True, help="CSV")
    p.add_argument("--positions", type=int, default=20000)
    a = p.parse_args(argv)
    snaps = sorted(Path(a.snapshots).glob("*.pt"), key=lambda q: q.stat().st_mtime)
    with tempfile.TemporaryDirectory() as tmp:
        models, meta, cfg = {}, {}, None
        for snap in snaps:
            step, model, cfg = snapshot_model(snap, Path(tmp))
            models[f"step {step}"] = model
            meta[f"step {step}"] = (step, (snap.stat().st_mtime - a.start) / 60)
        table = heldout_table(
            models, {s: Path(q) for s, q in a.heldout}, cfg["heldout_fraction"], cfg["seed"], a.positions
        )
    table["step"] = [meta[n][0] for n in table["network"]]
    table["minutes"] = [round(meta[n][1], 1) for n in table["network"]]
    table["samples"] = table["step"] * cfg["batch_size"]
    table.to_csv(a.out, index=False)
    wide = table.pivot_table(index=["step", "minutes", "samples"], columns="set", values="top1_accuracy")
    print(f"{cfg['blocks']}x{cfg['filters']}, batch {cfg['batch_size']}, lr {cfg['lr']}, {cfg['steps']} steps")
    print(wide.to_markdown(floatfmt=".4f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
