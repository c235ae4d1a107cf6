"""The ``moveorder`` command line: one verb per pipeline stage.

Every Snakemake rule calls one of these, so each stage also runs (and is
tested) without Snakemake.  The command line only parses and dispatches:
each verb is a function ``cmd_VERB`` with its options beside it
(``_VERB_options``), registered with :func:`verb`; the work itself happens
in the package's modules, and every default comes from
:mod:`moveorder.settings`.  Run ``moveorder VERB --help`` for a verb's options.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Callable, Dict, Tuple

from moveorder import settings as S
from moveorder.report.sweeps import FIGURES

log = logging.getLogger("moveorder")

#: name -> (help, options, command), in the order of ``moveorder --help``.
VERBS: Dict[str, Tuple[str, Callable, Callable]] = {}


def verb(name: str, help: str, options: Callable[[argparse.ArgumentParser], None]):
    """Register ``cmd_VERB`` as the verb ``name``, with the function adding its options."""

    def register(command: Callable[[argparse.Namespace], int]):
        VERBS[name] = (help, options, command)
        return command

    return register


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    parse.__name__ = f"whole number >= {low}"
    return parse


def _progress(a: argparse.Namespace) -> bool:
    """Progress bars on stderr: on at a terminal, off under --quiet and when stderr goes to a log file."""
    return not getattr(a, "quiet", False) and sys.stderr.isatty()


def _quiet_option(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--quiet", action="store_true", help="no progress bar (it is shown only when stderr is a terminal anyway)"
    )


def _config_from(cls, a: argparse.Namespace):
    """A settings dataclass from the options of the same names (the others keep their defaults)."""
    return S.from_mapping(cls, vars(a))


# --- data stage --------------------------------------------------------------


def _download_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--url", required=True, help="http(s) URL, file:// URL or local path")
    s.add_argument("--dest", required=True, help="the file to write (renamed into place only when whole)")
    s.add_argument(
        "--sha256",
        default="",
        help="expected sha256 (64 hexadecimal digits, checked before downloading); default: none, "
        "the actual one is written to DEST.sha256",
    )
    s.add_argument(
        "--mirror",
        default="",
        help="folder laid out as MIRROR/HOST/PATH to read http(s) URLs from; default: the network",
    )
    s.add_argument("--retries", type=_int_at_least(0), default=5, help="retries after a failed HTTP request")
    s.add_argument("--quiet", action="store_true", help="no progress bar")


@verb("download", "fetch one file by URL (or from a mirror), checking its sha256", _download_options)
def cmd_download(a: argparse.Namespace) -> int:
    from moveorder.data.download import fetch

    fetch(
        a.url,
        Path(a.dest),
        sha256=a.sha256 or None,
        mirror=Path(a.mirror) if a.mirror else None,
        retries=a.retries,
        quiet=a.quiet,
    )
    return 0


def _extract_options(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "files", nargs="+", help="archives, volumes (NAME.7z.001 ...), .sgf files (copied), or one local folder to copy"
    )
    s.add_argument(
        "--dest", required=True, help="folder; each archive goes to DEST/ARCHIVE_NAME/ (nothing is left on an error)"
    )
    s.add_argument(
        "--format",
        choices=["7z", "tar", "zip"],
        default=None,
        help="format of every file; default: from each file's name",
    )


@verb("extract", "unpack archives (7z, multi-volume 7z, tar.*, zip) into a folder", _extract_options)
def cmd_extract(a: argparse.Namespace) -> int:
    from moveorder.data.archives import unpack_inputs

    for f in unpack_inputs([Path(f) for f in a.files], Path(a.dest), a.format):
        log.info("unpacked %s", f)
    return 0


def _filter_options(s: argparse.ArgumentParser) -> None:
    d = S.FilterConfig()
    s.add_argument(
        "--input",
        required=True,
        help="folder holding the records (searched recursively): SGF files, or Tygem month files",
    )
    s.add_argument(
        "--record-format",
        choices=S.RECORD_FORMATS,
        default=S.RECORD_FORMATS[0],
        help="sgf: one game a file (*.sgf); tygem: the Tygem dataset's month files (YYYY-MM, one game a "
        "line) with its yearly index files (*.index) beside them",
    )
    s.add_argument("--qualified", required=True, help="JSONL of qualified records")
    s.add_argument(
        "--usable", default="", help="JSONL of every record usable for training (qualified included); default: none"
    )
    s.add_argument("--report", required=True, help="CSV: count of files by rejection reason")
    s.add_argument("--rejected", required=True, help="CSV: every rejected file with its reason")
    s.add_argument(
        "--capture-free",
        type=_int_at_least(0),
        default=d.capture_free,
        help="no pass and no capture allowed in this many first moves",
    )
    s.add_argument("--min-moves", type=_int_at_least(0), default=d.min_moves, help="fewer moves than this: too_short")
    s.add_argument("--workers", type=_int_at_least(1), default=1, help="processes parsing files")
    s.add_argument(
        "--include",
        nargs="*",
        default=[],
        help="glob patterns on paths relative to --input, e.g. '*/9p/*'; default: every file",
    )
    _quiet_option(s)


@verb("filter", "read every game record below a folder and keep the games that qualify", _filter_options)
def cmd_filter(a: argparse.Namespace) -> int:
    from moveorder.data.qualify import write_scan

    counts = write_scan(
        Path(a.input),
        Path(a.qualified),
        Path(a.report),
        Path(a.rejected),
        capture_free=a.capture_free,
        min_moves=a.min_moves,
        workers=a.workers,
        include=a.include,
        usable_path=Path(a.usable) if a.usable else None,
        progress=_progress(a),
        record_format=a.record_format,
    )
    log.info(
        "%s: %d records, %d qualified, %d usable for training; rejected: %s",
        a.input,
        counts["files"],
        counts["qualified"],
        counts["usable"],
        ", ".join(f"{k}={v}" for k, v in counts.items() if k not in ("files", "qualified", "usable") and v),
    )
    return 0


def _select_options(s: argparse.ArgumentParser) -> None:
    d = S.SelectConfig()
    s.add_argument("--records", required=True, help="JSONL of qualified records (from filter)")
    s.add_argument("--set", required=True, help="name of the set, e.g. pro")
    s.add_argument("--count", type=_int_at_least(1), default=d.games, help="evaluation games to draw")
    s.add_argument("--seed", type=int, default=0, help="seed of the draw")
    s.add_argument(
        "--lengths",
        type=_int_at_least(1),
        nargs="+",
        default=list(d.lengths),
        help="clip every selected game to each of these numbers of moves",
    )
    s.add_argument("--out-dir", required=True, help="writes {n}m.jsonl per length")
    s.add_argument("--pool", required=True, help="JSONL: the training pool")
    s.add_argument(
        "--usable",
        default="",
        help="JSONL of the records usable for training: the pool is drawn from these (default: the qualified records)",
    )
    s.add_argument("--pool-report", default="", help="CSV: where the pool's candidates went; default: none")
    s.add_argument("--selection", required=True, help="CSV: the selected games and their metadata")
    s.add_argument(
        "--captures",
        choices=S.CAPTURES,
        default=d.captures,
        help="forbidden: draw from --records as qualified (the paper's rules); allowed: from --records (give the "
        "usable ones), every game that qualifies up to the longest length but for captures; required: those with "
        "a capture before the shortest length (default: %(default)s)",
    )


@verb("select", "pick evaluation games, clip them, and write the training pool", _select_options)
def cmd_select(a: argparse.Namespace) -> int:
    from moveorder.data.arrangements import select_set

    counts = select_set(
        Path(a.records),
        a.set,
        a.count,
        a.seed,
        a.lengths,
        Path(a.out_dir),
        Path(a.pool),
        Path(a.selection),
        Path(a.usable) if a.usable else None,
        Path(a.pool_report) if a.pool_report else None,
        a.captures,
    )
    pool = {k: v for k, v in counts.items() if k not in ("qualified", "selected")}
    log.info(
        "%s: %d qualified, %d selected; pool %s",
        a.set,
        counts["qualified"],
        counts["selected"],
        ", ".join(f"{k}={v}" for k, v in pool.items()),
    )
    return 0


# --- networks -------------------------------------------------------------------


def _train_policy_options(s: argparse.ArgumentParser) -> None:
    d = S.TrainConfig()
    s.add_argument(
        "--pool",
        required=True,
        help="JSONL records (the data stage's training pool), or the same packed by pack-pool (.npz: batches "
        "made on the device, for a GPU)",
    )
    s.add_argument("--out-dir", required=True, help="writes model.pt, policy.txt.gz, metrics.json")
    s.add_argument("--blocks", type=_int_at_least(1), default=d.blocks, help="residual blocks")
    s.add_argument("--filters", type=_int_at_least(1), default=d.filters, help="filters per convolution")
    s.add_argument("--steps", type=_int_at_least(1), default=d.steps, help="training steps")
    s.add_argument("--batch-size", type=_int_at_least(1), default=d.batch_size, help="positions per step")
    s.add_argument("--lr", type=float, default=d.lr, help="peak learning rate (AdamW)")
    s.add_argument(
        "--warmup-steps",
        type=_int_at_least(0),
        default=d.warmup_steps,
        help="linear learning-rate warm-up over these steps",
    )
    s.add_argument(
        "--lr-schedule",
        choices=S.LR_SCHEDULES,
        default=d.lr_schedule,
        help="after warm-up: cosine decay to 0 at the last step, or constant",
    )
    s.add_argument(
        "--value-head",
        action=argparse.BooleanOptionalAction,
        default=d.value_head,
        help="train the value head too (the likelihood needs only the policy)",
    )
    s.add_argument(
        "--symmetries",
        action=argparse.BooleanOptionalAction,
        default=d.symmetries,
        help="turn each sample by one of the board's 8 symmetries, drawn at random",
    )
    s.add_argument(
        "--precision",
        choices=S.TRAIN_PRECISIONS,
        default=d.precision,
        help="forward/backward under bfloat16 autocast, or not; auto: bfloat16 on a GPU and on a "
        "CPU with native bfloat16 (AVX512-BF16, AMX)",
    )
    s.add_argument(
        "--heldout-fraction", type=float, default=d.heldout_fraction, help="fraction of games held out for metrics"
    )
    s.add_argument(
        "--heldout-positions",
        type=_int_at_least(1),
        default=d.heldout_positions,
        help="held-out positions the metrics are measured on",
    )
    s.add_argument(
        "--checkpoint-every",
        type=_int_at_least(1),
        default=d.checkpoint_every,
        help="steps between checkpoints (a rerun resumes from the last one)",
    )
    s.add_argument("--seed", type=int, default=d.seed, help="seed of the split, the batches and the weights")
    s.add_argument("--threads", type=_int_at_least(0), default=d.threads, help="torch CPU threads; 0: torch's default")
    s.add_argument(
        "--init",
        default=d.init,
        help="start from this network's weights instead of random ones (pre-training, then fine-tuning on "
        "the pool): a shipped name (tygem), Leela Zero weights or a model.pt, of the same blocks and filters; "
        "default: none (random weights)",
    )
    s.add_argument(
        "--max-move",
        type=_int_at_least(0),
        default=d.max_move,
        help="train (and measure the held-out games) only on the positions before this move of each game: "
        "the opening, whose orders the inference asks about; 0: every position",
    )
    s.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:1, ...; default: a GPU if torch sees one (a CUDA device torch cannot see is refused)",
    )
    _quiet_option(s)


@verb("train-policy", "train a Leela-Zero-architecture policy network on a pool", _train_policy_options)
def cmd_train_policy(a: argparse.Namespace) -> int:
    from moveorder.nets.train import train

    train(Path(a.pool), Path(a.out_dir), _config_from(S.TrainConfig, a), device=a.device, progress=_progress(a))
    return 0


def _pack_pool_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--pool", required=True, help="JSONL records (the data stage's training pool)")
    s.add_argument("--out", required=True, help="the packed pool (.npz), for train-policy --pool")
    s.add_argument(
        "--processes", type=_int_at_least(1), default=1, help="replay the games in this many processes (default: 1)"
    )
    s.add_argument(
        "--even-only",
        action="store_true",
        help="leave out the games with setup stones or White first (handicap games) instead of refusing the pool",
    )
    _quiet_option(s)


@verb(
    "pack-pool",
    "pack a training pool for a GPU: each game's moves and when each stone was captured",
    _pack_pool_options,
)
def cmd_pack_pool(a: argparse.Namespace) -> int:
    from moveorder.nets.packed import pack_file

    pack_file(Path(a.pool), Path(a.out), a.processes, a.even_only)
    return 0


def _cross_level_options(s: argparse.ArgumentParser) -> None:
    d = S.TrainConfig()
    s.add_argument(
        "--network",
        nargs=2,
        action="append",
        required=True,
        metavar=("NAME", "NETWORK"),
        help="a network (model.pt of train-policy, Leela Zero weights, or a shipped name such as tygem); "
        "NAME trained-SET marks its own level",
    )
    s.add_argument(
        "--heldout",
        nargs=2,
        action="append",
        required=True,
        metavar=("SET", "POOL"),
        help="a set's training pool; its held-out games are split off as train-policy does",
    )
    s.add_argument(
        "--inferred",
        nargs=4,
        action="append",
        default=[],
        metavar=("SET", "N", "NETWORK", "CSV"),
        help="an inference table (infer-set) of SET at N moves with NETWORK; default: none",
    )
    s.add_argument("--heldout-fraction", type=float, default=d.heldout_fraction, help="as given to train-policy")
    s.add_argument("--seed", type=int, default=d.seed, help="as given to train-policy")
    s.add_argument(
        "--positions",
        type=_int_at_least(1),
        default=d.heldout_positions,
        help="held-out positions per set (training's number)",
    )
    s.add_argument("--threads", type=_int_at_least(0), default=0, help="torch CPU threads; 0: torch's default")
    s.add_argument(
        "--device",
        default="cpu",
        help="where the networks run: cpu, cuda, cuda:1, ... (IEEE float32 on any; default: cpu)",
    )
    s.add_argument("--table", required=True, help="CSV: network, set, held-out top-1 and log-likelihood")
    s.add_argument("--inference-table", required=True, help="CSV: LGM slope and share on/above y=x per run")
    s.add_argument("--markdown", required=True, help="both tables as markdown")


@verb("cross-level", "every trained network on every set's held-out games (and inference runs)", _cross_level_options)
def cmd_cross_level(a: argparse.Namespace) -> int:
    from moveorder.report.cross_level import write_tables

    held, _ = write_tables(
        {name: Path(path) for name, path in a.network},
        {s: Path(path) for s, path in a.heldout},
        [(s, int(n), net, Path(path)) for s, n, net, path in a.inferred],
        a.heldout_fraction,
        a.seed,
        Path(a.table),
        Path(a.inference_table),
        Path(a.markdown),
        positions=a.positions,
        threads=a.threads,
        device=a.device,
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


def _policy_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("network", help="Leela Zero weights (.txt/.gz/.zip) or a moveorder .pt")
    s.add_argument("moves", nargs="*", help="GTP vertices, Black first; default: the empty board")
    s.add_argument("--average", action="store_true", help="average the 8 symmetries")


@verb("policy", "print a network's policy (permille) after GTP moves, like leelaz heatmap", _policy_options)
def cmd_policy(a: argparse.Namespace) -> int:
    from moveorder.go import coords
    from moveorder.nets.likelihood import policy_heatmap

    print(policy_heatmap(Path(a.network), [coords.from_gtp(m) for m in a.moves], a.average))
    return 0


# --- inference ------------------------------------------------------------------


def _search_options(s: argparse.ArgumentParser) -> None:
    d, p = S.SearchConfig(), S.PolicyConfig()
    paper = ", ".join(f"{v:,} for {k} moves" for k, v in S.PAPER_ITERATIONS.items())
    s.add_argument(
        "--network",
        default=S.SHIPPED_NETWORK,
        help="Leela Zero weights (.txt/.gz/.zip), a moveorder .pt, or a network shipped with moveorder "
        "(moveorder.nets.shipped: tygem) (default: %(default)s)",
    )
    s.add_argument(
        "--iterations",
        type=_int_at_least(1),
        default=d.iterations,
        help=f"iterations per trial (default: the paper's, {paper}; other lengths the nearest's)",
    )
    s.add_argument(
        "--trials",
        type=_int_at_least(1),
        default=d.trials,
        help="independent chains per arrangement; the most likely result is kept (default: %(default)s)",
    )
    s.add_argument(
        "--method",
        choices=S.METHODS,
        default=d.method,
        help="anneal: the paper's; beam: beam search alone; beam+anneal: annealing started from the "
        "beam's best orders, one a trial (default: %(default)s)",
    )
    s.add_argument(
        "--beam-width",
        type=_int_at_least(1),
        default=d.beam_width,
        help="prefixes the beam keeps per move number (method beam, init beam) (default: %(default)s)",
    )
    s.add_argument(
        "--beam-future",
        type=float,
        default=d.beam_future,
        help="weight of the estimate of the stones still to play when the beam ranks prefixes (each "
        "stone's best log-probability seen so far); 0: by likelihood alone (default: %(default)s)",
    )
    s.add_argument(
        "--patience",
        type=_int_at_least(0),
        default=d.patience,
        help="positions with captures: where the beam finds no sequence, backtracking may spend this many "
        "times the beam's network evaluations; 0: none (default: %(default)s)",
    )
    s.add_argument(
        "--beam-passes",
        type=_int_at_least(1),
        default=d.beam_passes,
        help="positions with captures: runs of the beam; a pass after the first starts from the earlier "
        "passes' stone estimates and keeps doomed stones to the capture plan of the best order found so far "
        "(default: %(default)s)",
    )
    s.add_argument(
        "--beam-widen",
        type=_int_at_least(1),
        default=d.beam_widen,
        help="positions with captures: a pass after the first searches a position no earlier pass found an "
        "order for with this many times the beam width (default: %(default)s)",
    )
    s.add_argument("--init", choices=S.INITS, default=d.init, help="initial order (default: %(default)s)")
    s.add_argument(
        "--neighbour",
        choices=S.NEIGHBOURS,
        default=d.neighbour,
        help="neighbour operator; mix = swp2, mov2, rot3 in turn (default: %(default)s)",
    )
    s.add_argument(
        "--t-start", type=float, default=d.t_start, help="temperature at the first iteration (default: %(default)s)"
    )
    s.add_argument(
        "--t-end", type=float, default=d.t_end, help="temperature at the last iteration (default: %(default)s)"
    )
    s.add_argument(
        "--schedule", choices=S.SCHEDULES, default=d.schedule, help="how the temperature falls (default: %(default)s)"
    )
    s.add_argument("--seed", type=int, default=d.seed, help="every random draw follows from it (default: %(default)s)")
    s.add_argument(
        "--cache-size",
        type=_int_at_least(0),
        default=p.cache_size,
        help=f"slots of the position cache, 1.4 kB each; 0: no cache (default: {S.CACHE_SLOTS} on a "
        "CPU, where it pays; 0 on a GPU, where it is not measured yet)",
    )
    s.add_argument("--average-symmetries", action="store_true", help="mean of the 8 symmetries' softmax")
    s.add_argument("--legal-only", action="store_true", help="renormalise over empty points and pass")
    s.add_argument(
        "--precision",
        choices=S.PRECISIONS,
        default=p.precision,
        help="network arithmetic; tf32 needs a CUDA device (default: %(default)s)",
    )
    s.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:1, ... (default: a GPU if torch sees one; a CUDA device torch cannot see is refused)",
    )
    s.add_argument(
        "--max-batch",
        type=_int_at_least(1),
        default=None,
        help="positions per network call, padded to it (default: 64 on a CPU, 256 on a GPU)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar")


def _check_network(spec: str) -> None:
    """Refuse a ``--network`` that is neither a file nor a shipped network's name, listing the shipped names."""
    from moveorder.nets import shipped

    try:
        shipped.require(spec)
    except FileNotFoundError as err:
        raise ValueError(f"--network {err}") from None


def _check_device(a: argparse.Namespace) -> None:
    """Refuse a ``--device`` torch cannot use, and ``--precision tf32`` without CUDA, before any work."""
    from moveorder.nets.devices import resolve

    try:
        device = resolve(a.device)
    except ValueError as err:
        raise ValueError(f"--device {a.device!r}: {str(err).split(': ', 1)[-1]}") from None
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"--device {a.device!r}: expected cpu, cuda or cuda:N (the devices moveorder runs on)")
    if a.precision == "tf32" and device.type != "cuda":
        raise ValueError(f"--precision tf32 needs a CUDA device (--device cuda), not {device}")


def _infer_config(a: argparse.Namespace) -> S.SearchConfig:
    """``infer``'s search settings: the ``--quality`` preset's, then the options given; every option
    outside what the one-position tool can do refused with the option, the limit and why (the limits:
    :mod:`moveorder.settings`)."""
    values = S.quality_values(a.quality, vars(a))
    _check_infer_options(a, argparse.Namespace(**values))
    return S.from_mapping(S.SearchConfig, values)


def _check_infer_options(a: argparse.Namespace, cfg: argparse.Namespace) -> None:
    """ValueError for an option of ``infer`` out of range; the settings a preset may set are read from ``cfg``."""
    whole = [
        ("--iterations", a.iterations, 1, S.MAX_ITERATIONS, "500 times the paper's 20,000 for 40 moves"),
        ("--trials", a.trials, 1, S.MAX_TRIALS, "every chain's sequence is evaluated each iteration"),
        ("--beam-width", cfg.beam_width, 1, S.MAX_BEAM_WIDTH, "every prefix kept is evaluated each move"),
        ("--beam-passes", a.beam_passes, 1, S.MAX_BEAM_PASSES, "each pass costs one beam's evaluations"),
        (
            "--beam-widen",
            a.beam_widen,
            1,
            max(1, S.MAX_BEAM_WIDTH // max(1, cfg.beam_width)),
            f"--beam-width {cfg.beam_width} times it is at most {S.MAX_BEAM_WIDTH}, the widest beam",
        ),
        ("--patience", a.patience, 0, S.MAX_PATIENCE, "backtracking's budget, in beams' evaluations"),
        ("--cache-size", a.cache_size, 0, S.MAX_CACHE_SLOTS, "1.4 kB a slot, allocated at once: about 5.9 GB"),
        ("--max-batch", a.max_batch, 1, S.MAX_BATCH, "every network call is padded to it"),
    ]
    for option, value, low, high, why in whole:
        if value is not None and not low <= value <= high:
            raise ValueError(f"{option} {value}: must be from {low} to {high:,} ({why})")
    low, high = S.TEMPERATURES
    real = [
        ("--beam-future", cfg.beam_future, 0.0, S.MAX_BEAM_FUTURE, "it weighs log-probabilities of order 1 to 10"),
        ("--t-start", a.t_start, low, high, "the temperature divides differences of costs of order 0.01 to 100"),
        ("--t-end", a.t_end, low, high, "the temperature divides differences of costs of order 0.01 to 100"),
    ]
    for option, value, low, high, why in real:
        if not low <= value <= high:  # NaN fails too
            raise ValueError(f"{option} {value}: must be a number from {low:g} to {high:g} ({why})")
    if a.t_start < a.t_end:
        raise ValueError(
            f"--t-start {a.t_start:g} is below --t-end {a.t_end:g}: the temperature falls from start to end"
        )
    if a.prisoners is not None and max(a.prisoners) > S.MAX_MOVES:
        raise ValueError(
            f"--prisoners {a.prisoners[0]} {a.prisoners[1]}: each count must be at most {S.MAX_MOVES}: every "
            f"captured stone was once a move, and the one-position tool orders at most {S.MAX_MOVES} moves"
        )
    _check_network(a.network)
    _check_device(a)


def _evaluator(a: argparse.Namespace):
    from moveorder.nets.likelihood import evaluator_from_file

    return evaluator_from_file(
        Path(a.network),
        device=a.device,
        average_symmetries=a.average_symmetries,
        legal_only=a.legal_only,
        max_batch=a.max_batch,
        precision=a.precision,
        cache_size=a.cache_size,
    )


def _infer_set_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--arrangements", required=True, help="JSONL of arrangements (from select)")
    s.add_argument("--out", required=True, help="JSONL, one result per arrangement (resumed if present)")
    s.add_argument("--table", required=True, help="CSV table")
    s.add_argument("--sgf-dir", default="", help="write each inferred sequence as an SGF file here; default: none")
    s.add_argument("--stats", default="", help="JSON: evaluations, cache hits, time; default: none")
    s.add_argument(
        "--chunk",
        type=_int_at_least(1),
        default=S.PolicyConfig().chunk,
        help="arrangements per batch (and per resume unit)",
    )
    _search_options(s)


@verb("infer-set", "infer the order of play for every arrangement of a file", _infer_set_options)
def cmd_infer_set(a: argparse.Namespace) -> int:
    from moveorder.search.inference import infer_set_file

    _check_network(a.network)
    infer_set_file(
        Path(a.arrangements),
        Path(a.out),
        Path(a.table),
        _config_from(S.SearchConfig, a),
        lambda: _evaluator(a),
        a.network,
        a.precision,
        chunk=a.chunk,
        sgf_dir=Path(a.sgf_dir) if a.sgf_dir else None,
        stats_path=Path(a.stats) if a.stats else None,
        progress=not a.quiet,
    )
    return 0


def _infer_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--help-all", action=_HelpAll, help="show the research options too, and exit")
    s.add_argument(
        "position",
        help="SGF: setup stones (AB/AW, no moves), or a game record without setup stones (its position after --moves)",
    )
    s.add_argument(
        "-o",
        "--output",
        default=None,
        help="the ordered game record to write (SGF, with the input's komi and players); "
        "default: none, a board is printed",
    )
    s.add_argument(
        "--diagram",
        default=None,
        help="draw the order as a Go book prints a game (.svg or .png): stones numbered, points played again "
        "listed below, moves off the game's move number ringed in red; default: none",
    )
    s.add_argument(
        "--moves",
        type=int,
        default=None,
        help="take the record's position after this many moves (1 .. the record's moves); "
        "default: a file of setup stones is the position, a record is taken after its last move",
    )
    s.add_argument(
        "--prisoners",
        type=_int_at_least(0),
        nargs=2,
        metavar=("B", "W"),
        default=None,
        help="with setup stones: the white stones Black captured and the black stones White captured "
        "before the position; a record's come from its moves",
    )
    _player_options(s)


#: moveorder infer's options a player uses; every other search option is a research option (--help-all).
PLAYER_OPTIONS = ("help", "help_all", "position", "output", "diagram", "moves", "prisoners")
PLAYER_OPTIONS += ("alternatives", "quality", "network")


def _player_options(s: argparse.ArgumentParser) -> None:
    """moveorder infer's --alternatives and --quality, then the search's options as research options:
    left out of --help (:class:`_Help`), shown by --help-all; those a --quality preset sets default to it."""
    s.add_argument(
        "--alternatives",
        type=_int_at_least(1),
        default=1,
        metavar="K",
        help="write the K likeliest distinct orders found: the best as the main line, the others as "
        "SGF variations saying how likely each is beside the best",
    )
    s.add_argument(
        "--quality",
        choices=tuple(S.QUALITIES),
        default=S.DEFAULT_QUALITY,
        help="; ".join(f"{name}: {text}" for name, (text, _) in S.QUALITIES.items()),
    )
    research = s.add_argument_group("research options (--quality sets --method, --beam-width, --beam-future)")
    known = {a.dest for a in s._actions}
    _search_options(s)
    for action in s._actions:
        if action.dest not in known and action.dest not in PLAYER_OPTIONS:
            action.research = True
            s._optionals._group_actions.remove(action)
            research._group_actions.append(action)
        if action.dest in S.QUALITY_SETTINGS:
            unset = not all(action.dest in preset for _, preset in S.QUALITIES.values())
            default = f", else {action.default}" if unset else ""  # SearchConfig's, where a preset sets none
            action.default = None
            action.help = action.help.replace("(default: %(default)s)", f"(default: the --quality preset's{default})")
    s.usage = "%(prog)s POSITION [-o OUT.sgf] [options]"
    s.epilog = "research options (search settings, precision, device, seeds): --help-all"


@verb("infer", "infer how one position was played: SGF in, ordered SGF out", _infer_options)
def cmd_infer(a: argparse.Namespace) -> int:
    from moveorder.report.answer import answer_position

    cfg = _infer_config(a)
    answer_position(
        Path(a.position),
        Path(a.output) if a.output else None,
        a.moves,
        cfg,
        lambda: _evaluator(a),
        a.network,
        a.precision,
        progress=not a.quiet,
        prisoners=a.prisoners,
        alternatives=a.alternatives,
        diagram_path=Path(a.diagram) if a.diagram else None,
    )
    return 0


# --- KataGo -------------------------------------------------------------------------


def _install_katago_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--dest", required=True, help="folder; writes DEST/bin/katago, models/, opencl-tune.txt")
    s.add_argument("--binary", default="", help="use this KataGo binary; default: the katrain wheel's")
    s.add_argument("--wheel", default="", help="a katrain-1.20.0 wheel already downloaded; default: pip downloads it")


@verb("install-katago", "install KataGo (from the katrain wheel, or a binary you have)", _install_katago_options)
def cmd_install_katago(a: argparse.Namespace) -> int:
    from moveorder.katago.install import install_from_katrain, link_user_binary

    if a.binary:
        link_user_binary(Path(a.binary), Path(a.dest))
    else:
        install_from_katrain(Path(a.dest), Path(a.wheel) if a.wheel else None)
    return 0


def _katago_options(s: argparse.ArgumentParser) -> None:
    """KataGo, its model and how it analyses: the options of every verb that runs it."""
    d = S.ScoreConfig()
    s.add_argument("--katago", required=True, help="KataGo binary (or the installed wrapper)")
    s.add_argument("--model", required=True, help="KataGo model file (.bin.gz)")
    s.add_argument(
        "--tuner",
        default="",
        help="the CPU's OpenCL tuning file (skips KataGo's autotuning), used as --tuning says; default: none",
    )
    s.add_argument(
        "--tuning",
        default=d.tuning,
        help="the OpenCL tuning KataGo is given: auto (--tuner's without a GPU, KataGo's own on one), cpu "
        "(--tuner's), katago (its own: it tunes on first use), or the path of your own tuning file "
        "(default: %(default)s)",
    )
    s.add_argument("--visits", type=_int_at_least(1), default=d.visits, help="KataGo visits per position")
    s.add_argument("--rules", default=d.rules, help="KataGo rules")
    s.add_argument("--komi", type=float, default=d.komi, help="komi when a record gives none")
    s.add_argument(
        "--threads",
        type=_int_at_least(1),
        default=d.threads,
        help="KataGo processes, each analysing one position at a time from an empty network cache "
        "(with --shared-cache: analysis threads of one process)",
    )
    s.add_argument(
        "--shared-cache",
        action="store_true",
        help="one KataGo process whose analysis threads share its network cache and batches: faster "
        "on a GPU with --max-batch > 1, but a position's leads then depend on what was analysed "
        "before it, so losses change from run to run",
    )
    s.add_argument(
        "--max-batch",
        type=_int_at_least(1),
        default=d.max_batch,
        help="KataGo's nnMaxBatchSize; more than 1 needs --shared-cache",
    )
    s.add_argument(
        "--timeout",
        type=float,
        default=d.timeout,
        help="give up (an error) after this many seconds without a reply from KataGo",
    )


def _score_options(s: argparse.ArgumentParser) -> None:
    d = S.ScoreConfig()
    s.add_argument("--results", required=True, help="JSONL from infer-set")
    _katago_options(s)
    s.add_argument(
        "--delta-max",
        choices=S.DELTA_MAX,
        default=d.delta_max,
        help="the best score lead at a position: its best move's, or the root's",
    )
    s.add_argument("--clamp", action="store_true", help="clamp each move's loss at zero")
    s.add_argument(
        "--cache", default="", help="JSONL cache of finished analyses (a rerun resumes from it); default: none"
    )
    s.add_argument(
        "--seed-cache",
        action="append",
        default=[],
        metavar="FILE",
        help="analyses made before (analyse-actual's --out), read only: their positions are not analysed "
        "again (repeat for several); default: none",
    )
    s.add_argument("--work-dir", required=True, help="for the engine's config and stderr log")
    s.add_argument("--table", required=True, help="CSV: losses per arrangement")
    s.add_argument("--moves-table", required=True, help="CSV: losses per move")
    s.add_argument("--stats", default="", help="JSON: positions, distinct, analysed, seconds; default: none")
    _quiet_option(s)


@verb("score", "KataGo losses of the actual and inferred sequences of an inference result", _score_options)
def cmd_score(a: argparse.Namespace) -> int:
    from moveorder.katago.scoring import score_file, write_scores

    out, settings = score_file(
        Path(a.results),
        Path(a.katago),
        a.model,
        Path(a.work_dir),
        _config_from(S.ScoreConfig, a),
        tuner=Path(a.tuner) if a.tuner else None,
        cache=Path(a.cache) if a.cache else None,
        progress=_progress(a),
        seeds=[Path(p) for p in a.seed_cache],
    )
    write_scores(out, Path(a.table), Path(a.moves_table), Path(a.stats) if a.stats else None, settings)
    log.info(
        "%d positions, %d distinct, %d analysed in %.1f s",
        out["positions"],
        out["unique"],
        out["analysed"],
        out["seconds"],
    )
    return 0


def _analyse_actual_options(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--arrangements",
        action="append",
        required=True,
        metavar="FILE",
        help="arrangements JSONL (from select); repeat for each length of a set",
    )
    _katago_options(s)
    s.add_argument("--out", required=True, help="JSONL: the analyses of every position of the actual sequences")
    s.add_argument(
        "--cache", default="", help="JSONL of analyses as they arrive (a rerun resumes from it); default: none"
    )
    s.add_argument("--work-dir", required=True, help="for the engine's config and stderr log")
    s.add_argument("--stats", default="", help="JSON: positions, distinct, analysed, seconds; default: none")
    _quiet_option(s)


@verb(
    "analyse-actual",
    "KataGo's analyses of the actual sequences of a set, once for all its lengths (score --seed-cache)",
    _analyse_actual_options,
)
def cmd_analyse_actual(a: argparse.Namespace) -> int:
    from moveorder.katago.scoring import analyse_actual_file

    out = analyse_actual_file(
        [Path(p) for p in a.arrangements],
        Path(a.katago),
        a.model,
        Path(a.work_dir),
        Path(a.out),
        _config_from(S.ScoreConfig, a),
        tuner=Path(a.tuner) if a.tuner else None,
        cache=Path(a.cache) if a.cache else None,
        progress=_progress(a),
        stats=Path(a.stats) if a.stats else None,
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


# --- figures and tables ---------------------------------------------------------------


def _report_options(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--entry",
        nargs=4,
        action="append",
        required=True,
        metavar=("SET", "N", "INFERRED_CSV", "SCORED_CSV"),
        help="one set and length: its inference table and its scored table (repeat for each)",
    )
    s.add_argument("--paper", required=True, help="the paper's published numbers (config/paper_results.yaml)")
    s.add_argument("--out-dir", required=True, help="summary.csv/.md, paper_comparison.csv/.md")
    s.add_argument("--figures", required=True, help="folder for the figures")
    s.add_argument("--network", default="", help="the network every set was inferred with; default: none")
    s.add_argument(
        "--set-network",
        nargs="*",
        default=[],
        help="SET=NETWORK pairs: the network each set was inferred with (instead of --network); default: none",
    )
    s.add_argument("--cross-level", default="", help="markdown of cross-level to append to summary.md; default: none")
    s.add_argument("--dataset", nargs="*", default=[], help="SET=description pairs for the tables; default: none")
    s.add_argument("--note", default="", help="a line naming the configuration, printed under figures; default: none")
    s.add_argument("--examples", type=_int_at_least(0), default=3, help="example sequences drawn per set")


@verb("report", "summary tables, the paper comparison and every figure of a run", _report_options)
def cmd_report(a: argparse.Namespace) -> int:
    from moveorder.report.summary import make_report

    entries = [(s, int(n), Path(i), Path(c)) for s, n, i, c in a.entry]
    datasets = dict(kv.split("=", 1) for kv in a.dataset)
    network = dict(kv.split("=", 1) for kv in a.set_network) if a.set_network else a.network
    make_report(
        entries,
        Path(a.paper),
        Path(a.out_dir),
        Path(a.figures),
        network,
        datasets,
        a.note,
        a.examples,
        Path(a.cross_level) if a.cross_level else None,
    )
    return 0


def _sweep_summary_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--name", required=True, help="the sweep's name")
    s.add_argument(
        "--run",
        nargs=2,
        action="append",
        required=True,
        metavar=("LABEL", "INFERRED_CSV"),
        help="one run of the sweep: its label (AXIS=VALUE) and its inference table (repeat)",
    )
    s.add_argument("--metric", default="lgm_slope", help="the summary column the figure shows")
    s.add_argument("--paper", default="", help="the paper's numbers (config/paper_results.yaml); default: none")
    s.add_argument("--paper-key", default="", help="the ablation's key in --paper; default: none")
    s.add_argument("--table", required=True, help="CSV: one row per run")
    s.add_argument("--figure", required=True, help="PNG path (a PDF is written beside it)")
    s.add_argument(
        "--figure-kind", choices=FIGURES, default="bars", help="bars: the metric; cost: quality per evaluation"
    )


@verb("sweep-summary", "aggregate the runs of a sweep into a table and an ablation figure", _sweep_summary_options)
def cmd_sweep_summary(a: argparse.Namespace) -> int:
    from moveorder.report.sweeps import summarize_sweep

    summarize_sweep(
        a.name,
        [(label, Path(path)) for label, path in a.run],
        Path(a.table),
        Path(a.figure),
        a.metric,
        Path(a.paper) if a.paper else None,
        a.paper_key,
        a.figure_kind,
    )
    return 0


# --- parser ------------------------------------------------------------------


class _Help(argparse.HelpFormatter):
    """States each option's default in --help, unless its help text already says it or it has none."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or action.required
            or not action.option_strings
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or (isinstance(default, (str, list, tuple)) and not default)
        ):
            return text
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})".strip()

    #: Whether the help shows options marked ``research`` (moveorder infer's search settings).
    show_research = False

    def add_usage(self, usage, actions, groups, prefix=None):
        shown = [a for a in actions if self.show_research or not getattr(a, "research", False)]
        super().add_usage(usage, shown, groups, prefix)

    def add_argument(self, action: argparse.Action) -> None:
        if self.show_research or not getattr(action, "research", False):
            super().add_argument(action)


class _HelpAllFormatter(_Help):
    show_research = True


class _HelpAll(argparse.Action):
    """``--help-all``: the help with the research options too."""

    def __init__(self, option_strings, dest, help=None):
        super().__init__(option_strings, dest, nargs=0, default=None, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.formatter_class = _HelpAllFormatter
        parser.print_help()
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="moveorder", description=__doc__.splitlines()[0], formatter_class=_Help)
    p.add_argument("-v", "--verbose", action="store_true", help="log debugging messages too")
    sub = p.add_subparsers(dest="verb", required=True)
    for name, (help, options, command) in VERBS.items():
        s = sub.add_parser(name, help=help, description=help, formatter_class=_Help)
        options(s)
        s.set_defaults(func=command)
    return p


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """argparse drops a value of ``--`` (``--schedule=--``) and leaves the option an empty list, unchecked:
    refuse it as argparse refuses a missing value."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    verb = next(p for p in sub.choices.values() if p.get_default("func") is args.func)
    for action in verb._actions:
        single = isinstance(action, argparse._StoreAction) and action.nargs is None and action.default != []
        if action.option_strings and single and getattr(args, action.dest, None) == []:
            verb.error(f"argument {'/'.join(action.option_strings)}: expected one argument")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _refuse_empty_values(parser, args)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    try:
        return args.func(args)
    except (ValueError, OSError, RuntimeError) as err:  # OSError: FileNotFoundError and any other I/O error
        log.error("%s", err)
        return 2


if __name__ == "__main__":
    sys.exit(main())
