"""Ship a trained network with the package: src/moveorder/nets/shipped/NAME.txt.gz beside NAME.json.

    python scripts/ship_network.py --name tygem --checkpoint results/networks/trained-tygem/model.pt \
        --config config/tygem.yaml --command "snakemake ..." --commit COMMIT --wall-seconds S \
        --heldout tygem data/pool/tygem.jsonl --heldout pro data/pool/pro.jsonl --heldout kgs data/pool/kgs.jsonl

``--checkpoint``: train-policy's ``model.pt`` (a finished run) or a copy of its ``checkpoint.pt`` (a run
stopped at a step, whose learning rate had not decayed: the JSON says which step of how many).  The
weights are written in Leela Zero's format (gzip, no timestamp); the JSON holds their sha256, the
training configuration, the exact command and commit that made them, and their held-out top-1 and
mean log-likelihood on each set's held-out games (moveorder.report.cross_level.heldout_table: training's
split and seed, 20,000 positions).  Refuses weights over 10 MB.
"""

import argparse
import hashlib
import json
import platform
import sys
from pathlib import Path

import torch

from moveorder.nets import shipped
from moveorder.nets.networks import LeelaNet, export_leela, parameter_count
from moveorder.report.cross_level import heldout_table

LIMIT = 10 * 1024 * 1024


def read_network(path: Path):
    """(net, training config, step, steps planned) from a model.pt or a checkpoint.pt."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("kind") == "leelanet":  # model.pt: a finished run
        cfg = state["metrics"]["config"]
        net = LeelaNet(state["blocks"], state["filters"])
        step = cfg["steps"]
    else:  # checkpoint.pt
        cfg = state["config"]
        net = LeelaNet(cfg["blocks"], cfg["filters"])
        step = state["step"]
    net.load_state_dict(state["model"])
    return net.eval(), cfg, step


def heldout_json(table) -> dict:
    """A held-out table's rows as the JSON's ``{set: {games, positions, top1_accuracy, mean_log_likelihood}}``."""
    return {
        r.set: {
            "games": int(r.heldout_games),
            "positions": int(r.positions),
            "top1_accuracy": float(r.top1_accuracy),
            "mean_log_likelihood": float(r.mean_log_likelihood),
        }
        for r in table.itertuples()
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True)
    p.add_argument("--checkpoint", required=True, help="model.pt or a checkpoint.pt copy")
    p.add_argument("--config", required=True, help="the workflow configuration that trained it")
    p.add_argument("--command", required=True, help="the exact command that trained it")
    p.add_argument("--commit", required=True, help="the commit of the code that trained it")
    p.add_argument("--wall-seconds", type=float, required=True, help="training's wall time to this step")
    p.add_argument("--machine", default=f"{platform.machine()} CPU, {torch.get_num_threads()} threads")
    p.add_argument("--note", default="", help="anything a user should know (e.g. a run stopped early)")
    p.add_argument("--heldout", nargs=2, action="append", required=True, metavar=("SET", "POOL"))
    p.add_argument("--positions", type=int, default=20000, help="held-out positions a set (default: 20000)")
    p.add_argument(
        "--openings",
        type=int,
        default=0,
        help="also measure the held-out games' positions before this move (a network tuned on openings)",
    )
    a = p.parse_args(argv)

    net, cfg, step = read_network(Path(a.checkpoint))
    out = shipped.HERE / f"{a.name}{shipped.SUFFIX}"
    export_leela(net, out)
    size = out.stat().st_size
    if size > LIMIT:
        out.unlink()
        raise SystemExit(f"{out}: {size} bytes, over the 10 MB a shipped network may take")
    pools = {s: Path(q) for s, q in a.heldout}
    table = heldout_table({a.name: out}, pools, cfg["heldout_fraction"], cfg["seed"], a.positions)
    openings = None
    if a.openings:
        openings = heldout_table(
            {a.name: out}, pools, cfg["heldout_fraction"], cfg["seed"], a.positions, max_move=a.openings
        )
    info = {
        "name": a.name,
        "weights": out.name,
        "weights_sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "blocks": cfg["blocks"],
        "filters": cfg["filters"],
        "parameters": parameter_count(net),
        "step": step,
        "steps_planned": cfg["steps"],
        "samples_seen": step * cfg["batch_size"],
        "wall_seconds": a.wall_seconds,
        "machine": a.machine,
        "command": a.command,
        "commit": a.commit,
        "config_file": a.config,
        "config": cfg,
        "note": a.note,
        "heldout": heldout_json(table),
    }
    if openings is not None:
        info["heldout_openings"] = {"before_move": a.openings, **heldout_json(openings)}
    (shipped.HERE / f"{a.name}.json").write_text(json.dumps(info, indent=2) + "\n")
    print(table.to_markdown(index=False, floatfmt=".4f"))
    if openings is not None:
        print(f"positions before move {a.openings}:")
        print(openings.to_markdown(index=False, floatfmt=".4f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
