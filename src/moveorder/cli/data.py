"""The data stage's verbs: download, extract, filter, select."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from moveorder import settings as S
from moveorder.cli.common import quiet_option, show_progress, verb, whole

log = logging.getLogger("moveorder")


def _download_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", required=True, help="http(s) URL, file:// URL or local path")
    parser.add_argument("--dest", required=True, help="the file to write (renamed into place only when whole)")
    parser.add_argument(
        "--sha256",
        default="",
        help="expected sha256 (64 hexadecimal digits, checked before downloading); default: none, "
        "the actual one is written to DEST.sha256",
    )
    parser.add_argument(
        "--mirror",
        default="",
        help="folder laid out as MIRROR/HOST/PATH to read http(s) URLs from; default: the network",
    )
    whole(parser, "--retries", 0, 5, "retries after a failed HTTP request")
    quiet_option(parser)


@verb("download", "fetch one file by URL (or from a mirror), checking its sha256", _download_options)
def cmd_download(args: argparse.Namespace) -> int:
    from moveorder.data.download import fetch

    fetch(
        args.url,
        Path(args.dest),
        sha256=args.sha256 or None,
        mirror=Path(args.mirror) if args.mirror else None,
        retries=args.retries,
        quiet=args.quiet,
    )
    return 0


def _extract_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", help="archives, volumes (NAME.7z.001 ...), .sgf files (copied), or one local folder to copy"
    )
    parser.add_argument(
        "--dest", required=True, help="folder; each archive goes to DEST/ARCHIVE_NAME/ (nothing is left on an error)"
    )
    parser.add_argument(
        "--format",
        choices=["7z", "tar", "zip"],
        default=None,
        help="format of every file; default: from each file's name",
    )


@verb("extract", "unpack archives (7z, multi-volume 7z, tar.*, zip) into a folder", _extract_options)
def cmd_extract(args: argparse.Namespace) -> int:
    from moveorder.data.archives import unpack_inputs

    for f in unpack_inputs([Path(f) for f in args.files], Path(args.dest), args.format):
        log.info("unpacked %s", f)
    return 0


def _filter_options(parser: argparse.ArgumentParser) -> None:
    d = S.FilterConfig()
    parser.add_argument(
        "--input",
        required=True,
        help="folder holding the records (searched recursively): SGF files, or Tygem month files",
    )
    parser.add_argument(
        "--record-format",
        choices=S.RECORD_FORMATS,
        default=S.RECORD_FORMATS[0],
        help="sgf: one game a file (*.sgf); tygem: the Tygem dataset's month files (YYYY-MM, one game a "
        "line) with its yearly index files (*.index) beside them",
    )
    parser.add_argument("--qualified", required=True, help="JSONL of qualified records")
    parser.add_argument(
        "--usable", default="", help="JSONL of every record usable for training (qualified included); default: none"
    )
    parser.add_argument("--report", required=True, help="CSV: count of files by rejection reason")
    parser.add_argument("--rejected", required=True, help="CSV: every rejected file with its reason")
    whole(parser, "--capture-free", 0, d.capture_free, "no pass and no capture allowed in this many first moves")
    whole(parser, "--min-moves", 0, d.min_moves, "fewer moves than this: too_short")
    whole(parser, "--workers", 1, 1, "processes parsing files")
    parser.add_argument(
        "--include",
        nargs="*",
        default=[],
        help="glob patterns on paths relative to --input, e.g. '*/9p/*'; default: every file",
    )
    quiet_option(parser)


@verb("filter", "read every game record below a folder and keep the games that qualify", _filter_options)
def cmd_filter(args: argparse.Namespace) -> int:
    from moveorder.data.qualify import write_scan

    counts = write_scan(
        Path(args.input),
        Path(args.qualified),
        Path(args.report),
        Path(args.rejected),
        capture_free=args.capture_free,
        min_moves=args.min_moves,
        workers=args.workers,
        include=args.include,
        usable_path=Path(args.usable) if args.usable else None,
        progress=show_progress(args),
        record_format=args.record_format,
    )
    log.info(
        "%s: %d records, %d qualified, %d usable for training; rejected: %s",
        args.input,
        counts["files"],
        counts["qualified"],
        counts["usable"],
        ", ".join(f"{k}={v}" for k, v in counts.items() if k not in ("files", "qualified", "usable") and v),
    )
    return 0


def _select_options(parser: argparse.ArgumentParser) -> None:
    d = S.SelectConfig()
    parser.add_argument("--records", required=True, help="JSONL of qualified records (from filter)")
    parser.add_argument("--set", required=True, help="name of the set, e.g. pro")
    whole(parser, "--count", 1, d.games, "evaluation games to draw")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw")
    whole(
        parser, "--lengths", 1, list(d.lengths), "clip every selected game to each of these numbers of moves", nargs="+"
    )
    parser.add_argument("--out-dir", required=True, help="writes {n}m.jsonl per length")
    parser.add_argument("--pool", required=True, help="JSONL: the training pool")
    parser.add_argument(
        "--usable",
        default="",
        help="JSONL of the records usable for training: the pool is drawn from these (default: the qualified records)",
    )
    parser.add_argument("--pool-report", default="", help="CSV: where the pool's candidates went; default: none")
    whole(
        parser,
        "--calibration-count",
        0,
        0,
        "games more, outside the evaluation games and their openings and left out of the pool, clipped the same "
        "way into --calibration-dir: where a search's stated chances are fitted",
    )
    parser.add_argument(
        "--calibration-dir",
        default="",
        help="writes the calibration games' {n}m.jsonl per length; default: none (with --calibration-count 0)",
    )
    parser.add_argument("--selection", required=True, help="CSV: the selected games and their metadata")
    parser.add_argument(
        "--captures",
        choices=S.CAPTURES,
        default=d.captures,
        help="forbidden: draw from --records as qualified (the paper's rules); allowed: from --records (give the "
        "usable ones), every game that qualifies up to the longest length but for captures; required: those with "
        "a capture before the shortest length (default: %(default)s)",
    )


@verb("select", "pick evaluation games, clip them, and write the training pool", _select_options)
def cmd_select(args: argparse.Namespace) -> int:
    from moveorder.data.arrangements import select_set

    counts = select_set(
        Path(args.records),
        args.set,
        args.count,
        args.seed,
        args.lengths,
        Path(args.out_dir),
        Path(args.pool),
        Path(args.selection),
        Path(args.usable) if args.usable else None,
        Path(args.pool_report) if args.pool_report else None,
        args.captures,
        args.calibration_count,
        Path(args.calibration_dir) if args.calibration_dir else None,
    )
    pool = {k: v for k, v in counts.items() if k not in ("qualified", "selected", "calibration")}
    log.info(
        "%s: %d qualified, %d selected%s; pool %s",
        args.set,
        counts["qualified"],
        counts["selected"],
        f", {counts['calibration']} for calibration" if "calibration" in counts else "",
        ", ".join(f"{k}={v}" for k, v in pool.items()),
    )
    return 0
