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
