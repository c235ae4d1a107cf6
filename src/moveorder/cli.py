"""The ``moveorder`` command line: one sub-command per pipeline stage.

Every Snakemake rule calls one of these, so each stage also runs (and is
tested) without Snakemake.  Run ``moveorder VERB --help`` for a verb's options.
"""

from __future__ import annotations

import argparse
import csv
import logging
import sys
from pathlib import Path

log = logging.getLogger("moveorder")


# --- data stage --------------------------------------------------------------

def cmd_download(a: argparse.Namespace) -> int:
    from .download import fetch

    fetch(a.url, Path(a.dest), sha256=a.sha256 or None, mirror=Path(a.mirror) if a.mirror else None,
          retries=a.retries, quiet=a.quiet)
    return 0


def cmd_extract(a: argparse.Namespace) -> int:
    from .archives import extract_all
    from .download import copy_tree_or_file

    dest = Path(a.dest)
    files = [Path(f) for f in a.files]
    if len(files) == 1 and files[0].is_dir():
        copy_tree_or_file(files[0], dest)
    else:
        extract_all(files, dest, a.format)
    return 0


def cmd_filter(a: argparse.Namespace) -> int:
    from .records import write_scan

    counts = write_scan(Path(a.input), Path(a.qualified), Path(a.report), Path(a.rejected),
                        capture_free=a.capture_free, min_moves=a.min_moves, workers=a.workers,
                        include=a.include)
    log.info("%s: %d files, %d qualified; rejected: %s", a.input, counts["files"], counts["qualified"],
             ", ".join(f"{k}={v}" for k, v in counts.items() if k not in ("files", "qualified") and v))
    return 0


def cmd_select(a: argparse.Namespace) -> int:
    from .arrangements import clip, select_games, write_jsonl
    from .records import load_records

    records = load_records(Path(a.records))
    lengths = sorted(set(a.lengths))
    # Only games long enough for every length (and without early passes, which qualify ensures).
    records = [r for r in records if len(r.moves) // 2 >= max(lengths)]
    chosen = select_games(records, a.count, a.seed, a.set, leak_prefix=max(lengths))
    out = Path(a.out_dir)
    for n in lengths:
        write_jsonl(out / f"{n}m.jsonl", [clip(r, n, a.set) for r in chosen["selected"]])
    write_jsonl(Path(a.pool), chosen["pool"])
    with open(a.selection, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["set", "id", "source", "black", "white", "black_rank", "white_rank", "date", "komi"])
        for r in chosen["selected"]:
            w.writerow([a.set, r.id, r.source, r.black, r.white, r.black_rank, r.white_rank, r.date, r.komi])
    log.info("%s: %d qualified, %d duplicates dropped, %d selected, pool %d (%d excluded as repeats of "
             "selected openings)", a.set, len(records), chosen["duplicates"], len(chosen["selected"]),
             len(chosen["pool"]), chosen["leaked"])
    return 0


# --- networks -------------------------------------------------------------------

def cmd_train_policy(a: argparse.Namespace) -> int:
    from .train import TrainConfig, train

    cfg = TrainConfig(blocks=a.blocks, filters=a.filters, steps=a.steps, batch_size=a.batch_size, lr=a.lr,
                      checkpoint_every=a.checkpoint_every, seed=a.seed, threads=a.threads,
                      heldout_fraction=a.heldout_fraction)
    train(Path(a.pool), Path(a.out_dir), cfg, device=a.device, progress=not a.quiet)
    return 0


def cmd_policy(a: argparse.Namespace) -> int:
    """Print the network's policy after some moves, as Leela Zero's `heatmap` does (permille)."""
    import torch

    from . import coords
    from .features import sequence_planes
    from .likelihood import PolicyLikelihood

    model = PolicyLikelihood.from_file(Path(a.network), device="cpu", average_symmetries=a.average)
    moves = [coords.from_gtp(m) for m in a.moves]
    seq = torch.tensor([[coords.to_lz(m) for m in moves] + [0]])
    planes = sequence_planes(seq, torch.tensor([[len(moves)]]))
    probs = model.probs_of_planes(planes.view(1, 18, 19, 19))[0]
    occupied = {coords.to_lz(m) for m in moves}
    for lz_row in range(18, -1, -1):
        print(" ".join(f"{0 if lz_row * 19 + c in occupied else int(probs[lz_row * 19 + c] * 1000):3d}"
                       for c in range(19)))
    print(f"pass: {int(probs[361] * 1000)}")
    return 0


# --- parser ------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="moveorder", description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="verb", required=True)

    s = sub.add_parser("download", help="fetch one file by URL (or from a mirror), checking its sha256")
    s.add_argument("--url", required=True)
    s.add_argument("--dest", required=True)
    s.add_argument("--sha256", default="")
    s.add_argument("--mirror", default="", help="folder laid out as MIRROR/HOST/PATH")
    s.add_argument("--retries", type=int, default=5)
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=cmd_download)

    s = sub.add_parser("extract", help="unpack archives (7z, multi-volume 7z, tar.*, zip) into a folder")
    s.add_argument("files", nargs="+", help="archives, volumes, or one local folder to copy")
    s.add_argument("--dest", required=True)
    s.add_argument("--format", choices=["7z", "tar", "zip"], default=None)
    s.set_defaults(func=cmd_extract)

    s = sub.add_parser("filter", help="parse every SGF below a folder and keep the games that qualify")
    s.add_argument("--input", required=True)
    s.add_argument("--qualified", required=True, help="JSONL of qualified records")
    s.add_argument("--report", required=True, help="CSV: count of files by rejection reason")
    s.add_argument("--rejected", required=True, help="CSV: every rejected file with its reason")
    s.add_argument("--capture-free", type=int, default=50)
    s.add_argument("--min-moves", type=int, default=50)
    s.add_argument("--workers", type=int, default=1)
    s.add_argument("--include", nargs="*", default=[], help="glob patterns of paths to keep (default: all)")
    s.set_defaults(func=cmd_filter)

    s = sub.add_parser("select", help="pick evaluation games, clip them, and write the training pool")
    s.add_argument("--records", required=True)
    s.add_argument("--set", required=True)
    s.add_argument("--count", type=int, default=100)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--lengths", type=int, nargs="+", default=[20, 40])
    s.add_argument("--out-dir", required=True, help="writes {n}m.jsonl per length")
    s.add_argument("--pool", required=True)
    s.add_argument("--selection", required=True)
    s.set_defaults(func=cmd_select)

    s = sub.add_parser("train-policy", help="train a Leela-Zero-architecture policy network on a pool")
    s.add_argument("--pool", required=True, help="JSONL records (the data stage's training pool)")
    s.add_argument("--out-dir", required=True, help="writes model.pt, policy.txt.gz, metrics.json")
    s.add_argument("--blocks", type=int, default=4)
    s.add_argument("--filters", type=int, default=32)
    s.add_argument("--steps", type=int, default=3000)
    s.add_argument("--batch-size", type=int, default=128)
    s.add_argument("--lr", type=float, default=2e-3)
    s.add_argument("--heldout-fraction", type=float, default=0.05)
    s.add_argument("--checkpoint-every", type=int, default=500)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--threads", type=int, default=0)
    s.add_argument("--device", default=None, help="cpu, cuda, ... (default: a GPU if there is one)")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=cmd_train_policy)

    s = sub.add_parser("policy", help="print a network's policy (permille) after GTP moves, like leelaz heatmap")
    s.add_argument("network")
    s.add_argument("moves", nargs="*", help="GTP vertices, Black first")
    s.add_argument("--average", action="store_true", help="average the 8 symmetries")
    s.set_defaults(func=cmd_policy)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        log.error("%s", err)
        return 2


if __name__ == "__main__":
    sys.exit(main())
