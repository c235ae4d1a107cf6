"""The networks' verbs: train-policy, pack-pool, cross-level, policy."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from moveorder import settings as S
from moveorder.cli.common import config_from, quiet_option, show_progress, verb, whole

log = logging.getLogger("moveorder")


def _train_policy_options(parser: argparse.ArgumentParser) -> None:
    d = S.TrainConfig()
    parser.add_argument(
        "--pool",
        required=True,
        help="JSONL records (the data stage's training pool), or the same packed by pack-pool (.npz: batches "
        "made on the device, for a GPU)",
    )
    parser.add_argument("--out-dir", required=True, help="writes model.pt, policy.txt.gz, metrics.json")
    whole(parser, "--blocks", 1, d.blocks, "residual blocks")
    whole(parser, "--filters", 1, d.filters, "filters per convolution")
    whole(parser, "--steps", 1, d.steps, "training steps")
    whole(parser, "--batch-size", 1, d.batch_size, "positions per step")
    parser.add_argument("--lr", type=float, default=d.lr, help="peak learning rate (AdamW)")
    whole(parser, "--warmup-steps", 0, d.warmup_steps, "linear learning-rate warm-up over these steps")
    parser.add_argument(
        "--lr-schedule",
        choices=S.LR_SCHEDULES,
        default=d.lr_schedule,
        help="after warm-up: cosine decay to 0 at the last step, or constant",
    )
    parser.add_argument(
        "--value-head",
        action=argparse.BooleanOptionalAction,
        default=d.value_head,
        help="train the value head too (the likelihood needs only the policy)",
    )
    parser.add_argument(
        "--symmetries",
        action=argparse.BooleanOptionalAction,
        default=d.symmetries,
        help="turn each sample by one of the board's 8 symmetries, drawn at random",
    )
    parser.add_argument(
        "--precision",
        choices=S.TRAIN_PRECISIONS,
        default=d.precision,
        help="forward/backward under bfloat16 autocast, or not; auto: bfloat16 on a GPU and on a "
        "CPU with native bfloat16 (AVX512-BF16, AMX)",
    )
    parser.add_argument(
        "--heldout-fraction", type=float, default=d.heldout_fraction, help="fraction of games held out for metrics"
    )
    whole(parser, "--heldout-positions", 1, d.heldout_positions, "held-out positions the metrics are measured on")
    whole(
        parser,
        "--checkpoint-every",
        1,
        d.checkpoint_every,
        "steps between checkpoints (a rerun resumes from the last one)",
    )
    parser.add_argument("--seed", type=int, default=d.seed, help="seed of the split, the batches and the weights")
    whole(parser, "--threads", 0, d.threads, "torch CPU threads; 0: torch's default")
    parser.add_argument(
        "--init",
        default=d.init,
        help="start from this network's weights instead of random ones (pre-training, then fine-tuning on "
        "the pool): a shipped name (tygem), Leela Zero weights or a model.pt, of the same blocks and filters; "
        "default: none (random weights)",
    )
    whole(
        parser,
        "--max-move",
        0,
        d.max_move,
        "train (and measure the held-out games) only on the positions before this move of each game: "
        "the opening, whose orders the inference asks about; 0: every position",
    )
    parser.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:1, ...; default: a GPU if torch sees one (a CUDA device torch cannot see is refused)",
    )
    quiet_option(parser)


@verb("train-policy", "train a Leela-Zero-architecture policy network on a pool", _train_policy_options)
def cmd_train_policy(args: argparse.Namespace) -> int:
    from moveorder.nets.train import train

    train(
        Path(args.pool),
        Path(args.out_dir),
        config_from(S.TrainConfig, args),
        device=args.device,
        progress=show_progress(args),
    )
    return 0


def _pack_pool_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", required=True, help="JSONL records (the data stage's training pool)")
    parser.add_argument("--out", required=True, help="the packed pool (.npz), for train-policy --pool")
    whole(parser, "--processes", 1, 1, "replay the games in this many processes (default: 1)")
    parser.add_argument(
        "--even-only",
        action="store_true",
        help="leave out the games with setup stones or White first (handicap games) instead of refusing the pool",
    )
    quiet_option(parser)


@verb(
    "pack-pool",
    "pack a training pool for a GPU: each game's moves and when each stone was captured",
    _pack_pool_options,
)
def cmd_pack_pool(args: argparse.Namespace) -> int:
    from moveorder.nets.packed import pack_file

    pack_file(Path(args.pool), Path(args.out), args.processes, args.even_only)
    return 0


def _cross_level_options(parser: argparse.ArgumentParser) -> None:
    d = S.TrainConfig()
    parser.add_argument(
        "--network",
        nargs=2,
        action="append",
        required=True,
        metavar=("NAME", "NETWORK"),
        help="a network (model.pt of train-policy, Leela Zero weights, or a shipped name such as tygem); "
        "NAME trained-SET marks its own level",
    )
    parser.add_argument(
        "--heldout",
        nargs=2,
        action="append",
        required=True,
        metavar=("SET", "POOL"),
        help="a set's training pool; its held-out games are split off as train-policy does",
    )
    parser.add_argument(
        "--inferred",
        nargs=4,
        action="append",
        default=[],
        metavar=("SET", "N", "NETWORK", "CSV"),
        help="an inference table (infer-set) of SET at N moves with NETWORK; default: none",
    )
    parser.add_argument("--heldout-fraction", type=float, default=d.heldout_fraction, help="as given to train-policy")
    parser.add_argument("--seed", type=int, default=d.seed, help="as given to train-policy")
    whole(parser, "--positions", 1, d.heldout_positions, "held-out positions per set (training's number)")
    whole(parser, "--threads", 0, 0, "torch CPU threads; 0: torch's default")
    parser.add_argument(
        "--device",
        default="cpu",
        help="where the networks run: cpu, cuda, cuda:1, ... (IEEE float32 on any; default: cpu)",
    )
    parser.add_argument("--table", required=True, help="CSV: network, set, held-out top-1 and log-likelihood")
    parser.add_argument("--inference-table", required=True, help="CSV: LGM slope and share on/above y=x per run")
    parser.add_argument("--markdown", required=True, help="both tables as markdown")


@verb("cross-level", "every trained network on every set's held-out games (and inference runs)", _cross_level_options)
def cmd_cross_level(args: argparse.Namespace) -> int:
    from moveorder.report.cross_level import write_tables

    held, _ = write_tables(
        {name: Path(path) for name, path in args.network},
        {s: Path(path) for s, path in args.heldout},
        [(s, int(n), net, Path(path)) for s, n, net, path in args.inferred],
        args.heldout_fraction,
        args.seed,
        Path(args.table),
        Path(args.inference_table),
        Path(args.markdown),
        positions=args.positions,
        threads=args.threads,
        device=args.device,
    )
    for r in held.itertuples():
        log.info(
            "%s on %s held-out games: top-1 %.3f, mean log-likelihood %.3f",
            r.network,
            r.set,
            r.top1_accuracy,
            r.mean_log_likelihood,
        )
    return 0


def _policy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("network", help="Leela Zero weights (.txt/.gz/.zip) or a moveorder .pt")
    parser.add_argument("moves", nargs="*", help="GTP vertices, Black first; default: the empty board")
    parser.add_argument("--average", action="store_true", help="average the 8 symmetries")


@verb("policy", "print a network's policy (permille) after GTP moves, like leelaz heatmap", _policy_options)
def cmd_policy(args: argparse.Namespace) -> int:
    from moveorder.go import coords
    from moveorder.nets.likelihood import policy_heatmap

    print(policy_heatmap(Path(args.network), [coords.from_gtp(m) for m in args.moves], args.average))
    return 0
