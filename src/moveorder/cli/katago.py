"""KataGo's verbs: install-katago, score, analyse-actual."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from moveorder import settings as S
from moveorder.cli.common import config_from, quiet_option, show_progress, verb, whole

log = logging.getLogger("moveorder")


def _install_katago_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dest", required=True, help="folder; writes DEST/bin/katago, models/, opencl-tune.txt")
    parser.add_argument("--binary", default="", help="use this KataGo binary; default: the katrain wheel's")
    parser.add_argument(
        "--wheel", default="", help="a katrain-1.20.0 wheel already downloaded; default: pip downloads it"
    )


@verb("install-katago", "install KataGo (from the katrain wheel, or a binary you have)", _install_katago_options)
def cmd_install_katago(args: argparse.Namespace) -> int:
    from moveorder.katago.install import install_from_katrain, link_user_binary

    if args.binary:
        link_user_binary(Path(args.binary), Path(args.dest))
    else:
        install_from_katrain(Path(args.dest), Path(args.wheel) if args.wheel else None)
    return 0


def _katago_options(parser: argparse.ArgumentParser) -> None:
    """KataGo, its model and how it analyses: the options of every verb that runs it."""
    d = S.ScoreConfig()
    parser.add_argument("--katago", required=True, help="KataGo binary (or the installed wrapper)")
    parser.add_argument("--model", required=True, help="KataGo model file (.bin.gz)")
    parser.add_argument(
        "--tuner",
        default="",
        help="the CPU's OpenCL tuning file (skips KataGo's autotuning), used as --tuning says; default: none",
    )
    parser.add_argument(
        "--tuning",
        default=d.tuning,
        help="the OpenCL tuning KataGo is given: auto (--tuner's without a GPU, KataGo's own on one), cpu "
        "(--tuner's), katago (its own: it tunes on first use), or the path of your own tuning file "
        "(default: %(default)s)",
    )
    whole(parser, "--visits", 1, d.visits, "KataGo visits per position")
    parser.add_argument("--rules", default=d.rules, help="KataGo rules")
    parser.add_argument("--komi", type=float, default=d.komi, help="komi when a record gives none")
    whole(
        parser,
        "--threads",
        1,
        d.threads,
        "KataGo processes, each analysing one position at a time from an empty network cache "
        "(with --shared-cache: analysis threads of one process)",
    )
    parser.add_argument(
        "--shared-cache",
        action="store_true",
        help="one KataGo process whose analysis threads share its network cache and batches: faster "
        "on a GPU with --max-batch > 1, but a position's leads then depend on what was analysed "
        "before it, so losses change from run to run",
    )
    whole(parser, "--max-batch", 1, d.max_batch, "KataGo's nnMaxBatchSize; more than 1 needs --shared-cache")
    parser.add_argument(
        "--timeout",
        type=float,
        default=d.timeout,
        help="give up (an error) after this many seconds without a reply from KataGo",
    )


def _score_options(parser: argparse.ArgumentParser) -> None:
    d = S.ScoreConfig()
    parser.add_argument("--results", required=True, help="JSONL from infer-set")
    _katago_options(parser)
    parser.add_argument(
        "--delta-max",
        choices=S.DELTA_MAX,
        default=d.delta_max,
        help="the best score lead at a position: its best move's, or the root's",
    )
    parser.add_argument("--clamp", action="store_true", help="clamp each move's loss at zero")
    parser.add_argument(
        "--cache", default="", help="JSONL cache of finished analyses (a rerun resumes from it); default: none"
    )
    parser.add_argument(
        "--seed-cache",
        action="append",
        default=[],
        metavar="FILE",
        help="analyses made before (analyse-actual's --out), read only: their positions are not analysed "
        "again (repeat for several); default: none",
    )
    parser.add_argument("--work-dir", required=True, help="for the engine's config and stderr log")
    parser.add_argument("--table", required=True, help="CSV: losses per arrangement")
    parser.add_argument("--moves-table", required=True, help="CSV: losses per move")
    parser.add_argument("--stats", default="", help="JSON: positions, distinct, analysed, seconds; default: none")
    quiet_option(parser)


@verb("score", "KataGo losses of the actual and inferred sequences of an inference result", _score_options)
def cmd_score(args: argparse.Namespace) -> int:
    from moveorder.katago.scoring import score_file, write_scores

    out, settings = score_file(
        Path(args.results),
        Path(args.katago),
        args.model,
        Path(args.work_dir),
        config_from(S.ScoreConfig, args),
        tuner=Path(args.tuner) if args.tuner else None,
        cache=Path(args.cache) if args.cache else None,
        progress=show_progress(args),
        seeds=[Path(p) for p in args.seed_cache],
    )
    write_scores(out, Path(args.table), Path(args.moves_table), Path(args.stats) if args.stats else None, settings)
    log.info(
        "%d positions, %d distinct, %d analysed in %.1f s",
        out["positions"],
        out["unique"],
        out["analysed"],
        out["seconds"],
    )
    return 0


def _analyse_actual_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arrangements",
        action="append",
        required=True,
        metavar="FILE",
        help="arrangements JSONL (from select); repeat for each length of a set",
    )
    _katago_options(parser)
    parser.add_argument("--out", required=True, help="JSONL: the analyses of every position of the actual sequences")
    parser.add_argument(
        "--cache", default="", help="JSONL of analyses as they arrive (a rerun resumes from it); default: none"
    )
    parser.add_argument("--work-dir", required=True, help="for the engine's config and stderr log")
    parser.add_argument("--stats", default="", help="JSON: positions, distinct, analysed, seconds; default: none")
    quiet_option(parser)


@verb(
    "analyse-actual",
    "KataGo's analyses of the actual sequences of a set, once for all its lengths (score --seed-cache)",
    _analyse_actual_options,
)
def cmd_analyse_actual(args: argparse.Namespace) -> int:
    from moveorder.katago.scoring import analyse_actual_file

    out = analyse_actual_file(
        [Path(p) for p in args.arrangements],
        Path(args.katago),
        args.model,
        Path(args.work_dir),
        Path(args.out),
        config_from(S.ScoreConfig, args),
        tuner=Path(args.tuner) if args.tuner else None,
        cache=Path(args.cache) if args.cache else None,
        progress=show_progress(args),
        stats=Path(args.stats) if args.stats else None,
    )
    log.info(
        "%d sequences: %d positions, %d distinct, %d analysed in %.1f s",
        out["sequences"],
        out["positions"],
        out["unique"],
        out["analysed"],
        out["seconds"],
    )
    return 0
