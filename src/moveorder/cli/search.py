"""The inference's verbs, infer-set and infer, and the search options they share."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import List, Tuple

from moveorder import settings as S
from moveorder.cli.common import (
    HelpAll,
    config_from,
    quiet_option,
    verb,
    whole,
)
from moveorder.nets import shipped

log = logging.getLogger("moveorder")


def _search_options(parser: argparse.ArgumentParser) -> None:
    d, p = S.SearchConfig(), S.PolicyConfig()
    paper = ", ".join(f"{v:,} for {k} moves" for k, v in S.PAPER_ITERATIONS.items())
    parser.add_argument(
        "--network",
        default=S.SHIPPED_NETWORK,
        help="Leela Zero weights (.txt/.gz/.zip), a moveorder .pt, or a network shipped with moveorder "
        f"({', '.join(shipped.names())}) (default: %(default)s)",
    )
    whole(
        parser,
        "--iterations",
        1,
        d.iterations,
        f"iterations per trial (default: the paper's, {paper}; other lengths the nearest's)",
    )
    whole(
        parser,
        "--trials",
        1,
        d.trials,
        "independent chains per arrangement; the most likely result is kept (default: %(default)s)",
    )
    parser.add_argument(
        "--method",
        choices=S.METHODS,
        default=d.method,
        help="anneal: the paper's; beam: beam search alone; beam+anneal: annealing started from the "
        "beam's best orders, one a trial (default: %(default)s)",
    )
    _beam_options(parser, d)
    _annealing_options(parser, d)
    _network_options(parser, p)


def _beam_options(parser: argparse.ArgumentParser, d: S.SearchConfig) -> None:
    """The beam's settings, and those of the capture search built on it."""
    whole(
        parser,
        "--beam-width",
        1,
        d.beam_width,
        "prefixes the beam keeps per move number (method beam, init beam) (default: %(default)s)",
    )
    parser.add_argument(
        "--beam-future",
        type=float,
        default=d.beam_future,
        help="weight of the estimate of the stones still to play when the beam ranks prefixes (each "
        "stone's best log-probability seen so far); 0: by likelihood alone (default: %(default)s)",
    )
    parser.add_argument(
        "--orientations",
        choices=tuple(S.ORIENTATIONS),
        default=d.orientations,
        help="method beam: given = the board as it is; seats = also turned half a turn (the board seen "
        "from either player's seat: a network learns where its games' records put the first move); "
        "all = its 8 orientations; one beam over them all, the order turned back (default: %(default)s)",
    )
    whole(
        parser,
        "--patience",
        0,
        d.patience,
        "positions with captures: where the beam finds no sequence, backtracking may evaluate this many "
        "times as many beams as one pass; 0: none (default: %(default)s)",
    )
    whole(
        parser,
        "--beam-passes",
        1,
        d.beam_passes,
        "positions with captures: runs of the beam; a pass after the first starts from the earlier "
        "passes' stone estimates and keeps doomed stones to the capture plan of the best order found so far "
        "(default: %(default)s)",
    )
    whole(
        parser,
        "--beam-widen",
        1,
        d.beam_widen,
        "positions with captures: a pass after the first searches a position no earlier pass found an "
        "order for with this many times the beam width (default: %(default)s)",
    )
    whole(
        parser,
        "--beam-widen-found",
        1,
        d.beam_widen_found,
        "positions with captures: a pass after the first searches a position within the capture plan of "
        "the order found so far with this many times the beam width (default: %(default)s)",
    )
    parser.add_argument(
        "--capture-merge",
        choices=S.CAPTURE_MERGES,
        default=d.capture_merge,
        help="positions with captures: input = prefixes with the same network input (the last 8 boards) "
        "count as one; board = those with the same board, whatever came before: the width goes to other "
        "boards (default: %(default)s)",
    )
    parser.add_argument(
        "--capture-proposer",
        choices=("none", *shipped.names()),
        default=d.capture_proposer,
        help="positions with captures: a shipped network that proposes where the captures go where the first "
        "pass found no order (tygem: the 4x32, about 24 times cheaper a position); the pass after it searches "
        "within that plan; none: no proposer; with --beam-passes 2 or more (default: %(default)s)",
    )


def _annealing_options(parser: argparse.ArgumentParser, d: S.SearchConfig) -> None:
    """Simulated annealing's settings (the paper's search)."""
    parser.add_argument("--init", choices=S.INITS, default=d.init, help="initial order (default: %(default)s)")
    parser.add_argument(
        "--neighbour",
        choices=S.NEIGHBOURS,
        default=d.neighbour,
        help="neighbour operator; mix = swp2, mov2, rot3 in turn (default: %(default)s)",
    )
    parser.add_argument(
        "--t-start", type=float, default=d.t_start, help="temperature at the first iteration (default: %(default)s)"
    )
    parser.add_argument(
        "--t-end", type=float, default=d.t_end, help="temperature at the last iteration (default: %(default)s)"
    )
    parser.add_argument(
        "--schedule", choices=S.SCHEDULES, default=d.schedule, help="how the temperature falls (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=int, default=d.seed, help="every random draw follows from it (default: %(default)s)"
    )


def _network_options(parser: argparse.ArgumentParser, p: S.PolicyConfig) -> None:
    """How the network is evaluated: cache, symmetries, precision, device, batch; and --quiet."""
    whole(
        parser,
        "--cache-size",
        0,
        p.cache_size,
        f"slots of the position cache, 1.4 kB each (the capture search keeps as many of the network's "
        f"distributions); 0: no cache (default: {S.CACHE_SLOTS} on a CPU, where it pays; 0 on a GPU, "
        "where it is not measured yet)",
    )
    parser.add_argument("--average-symmetries", action="store_true", help="mean of the 8 symmetries' softmax")
    parser.add_argument("--legal-only", action="store_true", help="renormalise over empty points and pass")
    parser.add_argument(
        "--precision",
        choices=S.PRECISIONS,
        default=p.precision,
        help="network arithmetic; tf32 needs a CUDA device (default: %(default)s)",
    )
    parser.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:1, ... (default: a GPU if torch sees one; a CUDA device torch cannot see is refused)",
    )
    whole(
        parser, "--max-batch", 1, None, "positions per network call, padded to it (default: 64 on a CPU, 256 on a GPU)"
    )
    quiet_option(parser)


def _check_network(spec: str) -> None:
    """Refuse a ``--network`` that is neither a file nor a shipped network's name, listing the shipped names."""
    try:
        shipped.require(spec)
    except FileNotFoundError as err:
        raise ValueError(f"--network {err}") from None


def _check_device(args: argparse.Namespace) -> None:
    """Refuse a ``--device`` torch cannot use, and ``--precision tf32`` without CUDA, before any work."""
    from moveorder.nets.devices import resolve

    try:
        device = resolve(args.device)
    except ValueError as err:
        raise ValueError(f"--device {args.device!r}: {str(err).split(': ', 1)[-1]}") from None
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"--device {args.device!r}: expected cpu, cuda or cuda:N (the devices moveorder runs on)")
    if args.precision == "tf32" and device.type != "cuda":
        raise ValueError(f"--precision tf32 needs a CUDA device (--device cuda), not {device}")


def _infer_config(args: argparse.Namespace) -> S.SearchConfig:
    """``infer``'s search settings: the ``--quality`` preset's, then the options given; every option
    outside what the one-position tool can do refused with the option, the limit and why (the limits:
    :mod:`moveorder.settings`)."""
    values = S.quality_values(args.quality, vars(args))
    _check_infer_options(args, argparse.Namespace(**values))
    return S.from_mapping(S.SearchConfig, values)


def _check_infer_options(args: argparse.Namespace, cfg: argparse.Namespace) -> None:
    """ValueError for an option of ``infer`` out of range; the settings a preset may set are read from ``cfg``."""
    whole = [
        ("--iterations", args.iterations, 1, S.MAX_ITERATIONS, "500 times the paper's 20,000 for 40 moves"),
        ("--trials", args.trials, 1, S.MAX_TRIALS, "every chain's sequence is evaluated each iteration"),
        ("--beam-width", cfg.beam_width, 1, S.MAX_BEAM_WIDTH, "every prefix kept is evaluated each move"),
        ("--beam-passes", cfg.beam_passes, 1, S.MAX_BEAM_PASSES, "each pass costs one beam's evaluations"),
        (
            "--beam-widen",
            cfg.beam_widen,
            1,
            S.max_beam_widen(cfg.beam_width),
            f"--beam-width {cfg.beam_width} times it is at most {S.MAX_BEAM_WIDTH}, the widest beam",
        ),
        (
            "--beam-widen-found",
            cfg.beam_widen_found,
            1,
            S.max_beam_widen(cfg.beam_width),
            f"--beam-width {cfg.beam_width} times it is at most {S.MAX_BEAM_WIDTH}, the widest beam",
        ),
        ("--patience", args.patience, 0, S.MAX_PATIENCE, "backtracking's budget, in passes' beams"),
        ("--cache-size", args.cache_size, 0, S.MAX_CACHE_SLOTS, "1.4 kB a slot, allocated at once: about 5.9 GB"),
        ("--max-batch", args.max_batch, 1, S.MAX_BATCH, "every network call is padded to it"),
    ]
    for option, value, low, high, why in whole:
        if value is not None and not low <= value <= high:
            raise ValueError(f"{option} {value}: must be from {low} to {high:,} ({why})")
    low, high = S.TEMPERATURES
    real = [
        ("--beam-future", cfg.beam_future, 0.0, S.MAX_BEAM_FUTURE, "it weighs log-probabilities of order 1 to 10"),
        ("--t-start", args.t_start, low, high, "the temperature divides differences of costs of order 0.01 to 100"),
        ("--t-end", args.t_end, low, high, "the temperature divides differences of costs of order 0.01 to 100"),
    ]
    for option, value, low, high, why in real:
        if not low <= value <= high:  # NaN fails too
            raise ValueError(f"{option} {value}: must be a number from {low:g} to {high:g} ({why})")
    if args.t_start < args.t_end:
        raise ValueError(
            f"--t-start {args.t_start:g} is below --t-end {args.t_end:g}: the temperature falls from start to end"
        )
    if args.alternatives > S.MAX_ALTERNATIVES:
        raise ValueError(
            f"--alternatives {args.alternatives}: must be from 1 to {S.MAX_ALTERNATIVES} (each is a variation of "
            "the answer; the beam keeps at most its width of complete orders)"
        )
    if args.prisoners is not None and max(args.prisoners) > S.MAX_MOVES:
        raise ValueError(
            f"--prisoners {args.prisoners[0]} {args.prisoners[1]}: each count must be at most {S.MAX_MOVES}: every "
            f"captured stone was once a move, and the one-position tool orders at most {S.MAX_MOVES} moves"
        )
    _check_network(args.network)
    _check_device(args)


def _evaluator(args: argparse.Namespace):
    from moveorder.nets.likelihood import evaluator_over, likelihood_of_options

    return evaluator_over(likelihood_of_options(args), args.cache_size)


def _infer_set_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--arrangements", required=True, help="JSONL of arrangements (from select)")
    parser.add_argument("--out", required=True, help="JSONL, one result per arrangement (resumed if present)")
    parser.add_argument("--table", required=True, help="CSV table")
    parser.add_argument("--sgf-dir", default="", help="write each inferred sequence as an SGF file here; default: none")
    parser.add_argument("--stats", default="", help="JSON: evaluations, cache hits, time; default: none")
    whole(parser, "--chunk", 1, S.PolicyConfig().chunk, "arrangements per batch (and per resume unit)")
    parser.add_argument(
        "--calibration",
        default="",
        help="the network's calibration (JSON from moveorder calibrate): each answer's chance of being exact; "
        "'none': no chance; default: the one beside the network's weights, if any",
    )
    _search_options(parser)


@verb("infer-set", "infer the order of play for every arrangement of a file", _infer_set_options)
def cmd_infer_set(args: argparse.Namespace) -> int:
    from moveorder.search.inference import infer_set_file

    _check_network(args.network)
    calibration = _calibration(args)
    infer_set_file(
        Path(args.arrangements),
        Path(args.out),
        Path(args.table),
        config_from(S.SearchConfig, args),
        lambda: _evaluator(args),
        args.network,
        args.precision,
        chunk=args.chunk,
        sgf_dir=Path(args.sgf_dir) if args.sgf_dir else None,
        stats_path=Path(args.stats) if args.stats else None,
        progress=not args.quiet,
        calibration=calibration,
    )
    return 0


def _calibration(args: argparse.Namespace):
    """``--calibration``: a file, 'none', or (not given) the one beside the network; read now, so that a
    broken one is refused before any work."""
    from moveorder.search import confidence
    from moveorder.search.inference import network_calibration

    if args.calibration == "none":
        return None
    if args.calibration:
        if not Path(args.calibration).is_file():
            raise ValueError(f"{args.calibration}: --calibration: no such file")
        return confidence.Calibration.load(Path(args.calibration))
    return network_calibration(args.network)


def _infer_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--help-all", action=HelpAll, help="show the research options too, and exit")
    parser.add_argument(
        "position",
        help="SGF: setup stones (AB/AW, no moves), or a game record without setup stones (its position after --moves)",
    )
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        help="the ordered game record to write (SGF, with the input's komi and players); "
        "default: none, a board is printed",
    )
    parser.add_argument(
        "--diagram",
        default=None,
        help="draw the order as a Go book prints a game (.svg or .png): stones numbered, points played again "
        "listed below, moves off the game's move number ringed in red; default: none",
    )
    parser.add_argument(
        "--moves",
        type=int,
        default=None,
        help="take the record's position after this many moves (1 .. the record's moves); "
        "default: a file of setup stones is the position, a record is taken after its last move",
    )
    whole(
        parser,
        "--prisoners",
        0,
        None,
        "with setup stones: the white stones Black captured and the black stones White captured "
        "before the position; a record's come from its moves",
        nargs=2,
        metavar=("B", "W"),
    )
    _player_options(parser)


#: moveorder infer's options a player uses; every other search option is a research option (--help-all).
PLAYER_OPTIONS = ("help", "help_all", "position", "output", "diagram", "moves", "prisoners")
PLAYER_OPTIONS += ("alternatives", "quality", "network")


def _player_options(parser: argparse.ArgumentParser) -> None:
    """moveorder infer's --alternatives and --quality, then the search's options as research options:
    left out of --help (:class:`HelpFormatter`), shown by --help-all; those a --quality preset sets default to it."""
    whole(
        parser,
        "--alternatives",
        1,
        1,
        "write the K likeliest distinct orders found: the best as the main line, the others as "
        "SGF variations saying how likely each is beside the best",
        metavar="K",
    )
    parser.add_argument(
        "--quality",
        choices=tuple(S.QUALITIES),
        default=S.DEFAULT_QUALITY,
        help="; ".join(f"{name}: {text}" for name, (text, _) in S.QUALITIES.items()),
    )
    research = parser.add_argument_group(
        "research options (--quality sets --method, --beam-width, --beam-future, --orientations, --beam-passes, --beam-widen, --beam-widen-found, --capture-merge, --capture-proposer)"
    )
    known = {a.dest for a in parser._actions}
    _search_options(parser)
    for action in parser._actions:
        if action.dest not in known and action.dest not in PLAYER_OPTIONS:
            action.research = True
            parser._optionals._group_actions.remove(action)
            research._group_actions.append(action)
        if action.dest in S.QUALITY_SETTINGS:
            unset = not all(action.dest in preset for _, preset in S.QUALITIES.values())
            default = f", else {action.default}" if unset else ""  # SearchConfig's, where a preset sets none
            action.default = None
            action.help = action.help.replace("(default: %(default)s)", f"(default: the --quality preset's{default})")
        if action.dest == "precision":
            action.choices, action.default = (*S.PRECISIONS, "auto"), S.PLAYER_PRECISION
            action.help = "network arithmetic; auto: bfloat16 where the device computes it natively, else float32 (default: %(default)s)"
        if action.dest == "max_batch":
            action.help = action.help.replace("64 on a CPU", f"{S.PLAYER_CPU_BATCH} on a CPU")
    parser.usage = "%(prog)s POSITION [-o OUT.sgf] [options]"
    parser.epilog = "research options (search settings, precision, device, seeds): --help-all"


def _player_likelihood(args: argparse.Namespace) -> None:
    """``infer``'s network arithmetic and batch where not given: the player's (settings.PLAYER_PRECISION,
    settings.PLAYER_CPU_BATCH), resolved for the device it runs on."""
    from moveorder.nets.devices import native_bfloat16, resolve

    device = resolve(args.device)
    if args.precision == "auto":
        args.precision = "bfloat16" if native_bfloat16(device) else "float32"
    if args.max_batch is None and device.type == "cpu":
        args.max_batch = S.PLAYER_CPU_BATCH


class _Refusing(argparse.ArgumentParser):
    """A parser whose errors are ValueErrors (the page shows them), not an exit."""

    def error(self, message: str):
        raise ValueError(message)


def infer_request(argv: List[str]) -> Tuple[argparse.Namespace, S.SearchConfig]:
    """``moveorder infer ARGV`` parsed and checked as the command line does, up to the search: the
    options, the search settings and the network's arithmetic (the page's requests come through it,
    so that the same input meets the same refusals, word for word).  ValueError for a refusal."""
    parser = _Refusing(prog="moveorder infer", add_help=False)
    _infer_options(parser)
    args = parser.parse_args(argv)
    cfg = _infer_config(args)
    _player_likelihood(args)
    return args, cfg


@verb("infer", "infer how one position was played: SGF in, ordered SGF out", _infer_options)
def cmd_infer(args: argparse.Namespace) -> int:
    from moveorder.report.answer import answer_position

    cfg = _infer_config(args)
    _player_likelihood(args)
    answer_position(
        Path(args.position),
        Path(args.output) if args.output else None,
        args.moves,
        cfg,
        lambda: _evaluator(args),
        args.network,
        args.precision,
        progress=not args.quiet,
        prisoners=args.prisoners,
        alternatives=args.alternatives,
        diagram_path=Path(args.diagram) if args.diagram else None,
    )
    return 0


def _calibrate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results",
        nargs="+",
        required=True,
        help="infer-set results (JSONL) of positions in no evaluation set, all by one network and one search",
    )
    parser.add_argument("--network", required=True, help="the network that inferred them (its name, as given)")
    parser.add_argument(
        "--out",
        required=True,
        help="the calibration (JSON) to write; put it beside the network's weights as NAME.calibration.json; "
        "an existing one of the same network keeps its fits for other searches",
    )


@verb(
    "calibrate", "fit how sure answers are (the chance an order is exact) on results of known games", _calibrate_options
)
def cmd_calibrate(args: argparse.Namespace) -> int:
    import shlex

    from moveorder.report.calibration import calibrate

    command = shlex.join(
        ["moveorder", "calibrate", "--results", *args.results, "--network", args.network, "--out", args.out]
    )
    print(calibrate([Path(p) for p in args.results], args.network, Path(args.out), command))
    return 0
