"""Inferring the order of play for arrangements: a whole set, or one position from an SGF file.

:func:`infer_set` orders a set's arrangements in chunks through the one search entry point
(:func:`moveorder.search.dispatch.run`) and appends one JSON line per arrangement as each chunk
finishes, so a killed job redoes only the arrangements it had not written
(:func:`moveorder.search.results.completed_ids`).  Each line holds the inferred sequence, its
log-likelihood and LGM, every trial's LGM and their standard deviation (population, ddof=0), the
actual sequence's LGM, exact match, matching prefix length and matching moves
(:func:`infer_arrangements`).  :func:`infer_position` is the one-position tool: the position is
read and checked (:mod:`moveorder.data.position`) before the network is loaded, and the answer
written as SGF (:mod:`moveorder.search.results`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.data.arrangements import Arrangement, load_arrangements
from moveorder.data.position import Position, check_length, check_output, read_position
from moveorder.go import coords
from moveorder.nets.likelihood import PositionEvaluator
from moveorder.search import confidence
from moveorder.search.boards import sequence_log_probs
from moveorder.search.dispatch import refuse, run, steps, turns
from moveorder.search.plans import captured_placed
from moveorder.search.problem import (
    Order,
    Problem,
    SearchStats,
    check_position,
    lgm,
    problem_of_arrangement,
    problem_of_stones,
)
from moveorder.search.results import (
    completed_ids,
    describe,
    load_results,
    matching_prefix,
    orders_note,
    ranked_orders,
    sgf_comment,
    variation_note,
    write_sgf,
    write_table,
)
from moveorder.settings import CONFIDENCE_ORDERS, SearchConfig

log = logging.getLogger(__name__)


def summarize(trials: Sequence[Order], n: int) -> Dict:
    """The likeliest of ``trials`` (the first on ties), and every trial's LGM with their spread (ddof=0).

    No trials (a position with captures no order was found for): likelihood 0, below every actual one.
    """
    if not trials:
        return {"inferred": [], "log_likelihood": None, "lgm": 0.0, "trial_lgms": [0.0], "trial_std": 0.0}
    best = max(trials, key=lambda r: r.log_likelihood)
    trial_lgms = [lgm(r.log_likelihood, n) for r in trials]
    return {
        "inferred": coords.lz_to_sgf(best.moves),
        "log_likelihood": best.log_likelihood,
        "lgm": lgm(best.log_likelihood, n),
        "trial_lgms": trial_lgms,
        "trial_std": float(np.std(trial_lgms)),
    }


def infer_arrangements(
    evaluator: PositionEvaluator,
    arrs: Sequence[Arrangement],
    cfg: SearchConfig,
    indices: Sequence[int],
    stats: Optional[SearchStats] = None,
    progress=None,
    calibration: Optional[confidence.Calibration] = None,
    network: str = "",
) -> List[Dict]:
    """Order a batch of arrangements of one length (:func:`moveorder.search.dispatch.run`); one result dict each.

    Each row also says how sure its answer is (:func:`moveorder.search.confidence.judge`, with
    ``calibration``, the one of ``network``): ``chance``, ``chance_note``, ``move_chances``,
    ``uncertain`` and the ``evidence`` they come from.  A row with captures also says which share of
    the captured stones' points the inference played where the game did (``captured_placed``).
    """
    problems = [problem_of_arrangement(a) for a in arrs]
    names = [f"{a.source} ({a.id})" for a in arrs]
    found = run(evaluator, problems, cfg, indices, stats, progress, keep=CONFIDENCE_ORDERS, names=names)
    actual_ll = _actual_log_likelihoods(evaluator, arrs, turns(cfg))
    precision = evaluator.likelihood.precision
    out = []
    for a, problem, f, all_ll in zip(arrs, problems, found, actual_ll):
        best = summarize(f.trials, a.n)
        inferred = best["inferred"]
        row = {"id": a.id, "set": a.set, "n": a.n}
        row |= {
            "inferred": inferred,
            "actual": a.actual,
            "log_likelihood": best["log_likelihood"],
            "lgm": best["lgm"],
            "actual_log_likelihood": all_ll,
            "actual_lgm": lgm(all_ll, a.n),
            "trial_lgms": best["trial_lgms"],
            "trial_std": best["trial_std"],
            "exact_match": inferred == a.actual,
            "matching_prefix": matching_prefix(inferred, a.actual),
            "matching_moves": int(sum(x == y for x, y in zip(inferred, a.actual))),
            "komi": a.komi,
            "source": a.source,
            "precision": precision,
        }
        if f.orders:
            row |= _judged(f.orders, problem, cfg, calibration, network)
        if any(a.prisoners):
            placed = captured_placed(coords.sgf_to_lz(a.actual), coords.sgf_to_lz(inferred)) if inferred else 0.0
            row |= {"prisoners": list(a.prisoners), "found": bool(inferred), "captured_placed": placed}
        out.append(row)
    return out


def _judged(orders, problem: Problem, cfg: SearchConfig, calibration, network: str) -> Dict:
    """:func:`moveorder.search.confidence.judge` of a problem's orders found."""
    possible = confidence.possible_orders(len(problem.black), len(problem.white)) if problem.capture_free else None
    return confidence.judge(
        orders,
        problem.moves,
        possible,
        calibration,
        confidence.search_key(cfg),
        network,
        captures=not problem.capture_free,
    )


def _actual_log_likelihoods(
    evaluator: PositionEvaluator, arrs: Sequence[Arrangement], orientations: Sequence[int] = (0,)
) -> List[float]:
    """Each arrangement's actual sequence's log-likelihood: capture-free ones batched on the
    evaluator, those with captures replayed on the board; where the search looks at several
    ``orientations`` of the board, the likeliest of them, as the search scores its orders."""
    import torch

    from moveorder.nets.networks import turn_points

    actual = [coords.sgf_to_lz(a.actual) for a in arrs]
    out = [-math.inf] * len(arrs)
    plain = [k for k, a in enumerate(arrs) if not any(a.prisoners)]
    for s in orientations:
        if plain:
            turned = torch.tensor([turn_points(actual[k], s) for k in plain], dtype=torch.long)
            for k, ll in zip(plain, evaluator.sequence_log_probs(turned).sum(1).cpu().tolist()):
                out[k] = max(out[k], float(ll))
        for k, a in enumerate(arrs):
            if any(a.prisoners):
                ll = sequence_log_probs(evaluator.likelihood, turn_points(actual[k], s)).sum()
                out[k] = max(out[k], float(ll))
    return out


def infer_set(
    arrangements_path: Path,
    out_jsonl: Path,
    evaluator: PositionEvaluator,
    cfg: SearchConfig,
    chunk: int = 20,
    progress: bool = False,
    arrangements: Optional[Sequence[Arrangement]] = None,
    calibration: Optional[confidence.Calibration] = None,
    network: str = "",
) -> SearchStats:
    """Infer every arrangement of a file, ``chunk`` at a time, resuming after the ones already written.

    ``progress``: a bar over all steps of all chunks on stderr (tqdm, with an ETA).  Arrangements of
    several lengths are ordered each length in its own batches, with its own settings (``cfg.for_length``).
    ``arrangements``: the file's, when the caller has read it already.  ``calibration``: that of
    ``network`` (each row's chance, :func:`infer_arrangements`).
    """
    arrs = load_arrangements(arrangements_path) if arrangements is None else arrangements
    out_jsonl = Path(out_jsonl)
    out_jsonl.parent.mkdir(parents=True, exist_ok=True)
    done = completed_ids(out_jsonl)
    todo = [(i, a) for i, a in enumerate(arrs) if a.id not in done]
    log.info("%s: %d arrangements, %d already inferred", arrangements_path, len(arrs), len(arrs) - len(todo))
    stats = SearchStats()
    # A batch holds one length (a search orders problems of one length at a time): each length's
    # arrangements in chunks, the lengths in the order they first come.
    batches = []
    for n in dict.fromkeys(a.n for _, a in todo):
        same = [(i, a) for i, a in todo if a.n == n]
        batches += [(cfg.for_length(n), same[k : k + chunk]) for k in range(0, len(same), chunk)]
    total = sum(steps(c, [problem_of_arrangement(a) for _, a in part]) for c, part in batches)
    with progress_bar(total, f"infer {Path(arrangements_path).name}", enabled=progress) as bar:
        for length_cfg, part in batches:
            rows = infer_arrangements(
                evaluator,
                [a for _, a in part],
                length_cfg,
                [i for i, _ in part],
                stats,
                bar,
                calibration=calibration,
                network=network,
            )
            with open(out_jsonl, "a", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
            done.update(a.id for _, a in part)
            log.info("inferred %d / %d", len(done), len(arrs))
    return stats


def infer_set_file(
    arrangements_path: Path,
    out_jsonl: Path,
    table: Path,
    cfg: SearchConfig,
    evaluator: Callable[[], PositionEvaluator],
    network: str,
    precision: str,
    chunk: int = 20,
    sgf_dir: Optional[Path] = None,
    stats_path: Optional[Path] = None,
    progress: bool = False,
    calibration: Optional[confidence.Calibration] = None,
) -> SearchStats:
    """``moveorder infer-set``: :func:`infer_set`, then the table, the SGF files and the stats (JSON) of the run.

    ``evaluator`` makes the network's evaluator once the arrangements are read and checked.
    ``calibration``: the network's (each answer's chance), if it has one.
    """
    arrs = load_arrangements(arrangements_path)
    if not arrs:
        raise ValueError(f"{arrangements_path}: no arrangements")
    ev = evaluator()
    stats = infer_set(
        arrangements_path,
        out_jsonl,
        ev,
        cfg,
        chunk=chunk,
        progress=progress,
        arrangements=arrs,
        calibration=calibration,
        network=network,
    )
    settings = settings_text(network, cfg, precision, sorted({a.n for a in arrs}))
    write_table(load_results(out_jsonl), table, sgf_dir, network=network, settings=settings)
    if stats_path is not None:
        info = stats.__dict__ | {"settings": settings, "precision": precision, "device": str(ev.device)}
        Path(stats_path).write_text(json.dumps(info, indent=2) + "\n")
    return stats


def settings_text(network: str, cfg: SearchConfig, precision: str, lengths: Sequence[int]) -> str:
    """:func:`describe` of a run's search; where its settings differ by length (the annealing's
    iterations), each length's, named."""
    texts = {n: describe(network, cfg.for_length(n), precision) for n in lengths}
    if len(set(texts.values())) <= 1:
        return next(iter(texts.values()), describe(network, cfg, precision))
    return " | ".join(f"{n} moves: {text}" for n, text in texts.items())


def progress_bar(total: int, desc: str, enabled: bool = True):
    """A tqdm bar on stderr; where stderr is no terminal (a log file), one line a minute at most."""
    import sys

    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(
        total=total,
        desc=desc,
        unit="it",
        disable=not enabled,
        file=sys.stderr,
        mininterval=0.5 if tty else 60,
        dynamic_ncols=tty,
        ascii=not tty,
    )


def checked_position(
    position: Path, moves: Optional[int], prisoners: Optional[Sequence[int]] = None
) -> Tuple[Position, Problem]:
    """The position of an SGF file read and checked as the one-position tool checks it (its length, a
    group without liberties), refusals naming ``position``, and the given ``--prisoners`` where they took
    part; the position and its problem."""
    pos = read_position(Path(position), moves, prisoners)
    where = str(position)
    check_length(pos, where, given=prisoners is not None)
    with _naming_prisoners(prisoners, pos):
        check_position(pos.black, pos.white, where, pos.prisoners)
        problem = problem_of_stones(
            [coords.to_lz(p) for p in pos.black], [coords.to_lz(p) for p in pos.white], pos.prisoners
        )
    return pos, problem


@contextlib.contextmanager
def _naming_prisoners(prisoners: Optional[Sequence[int]], pos: Position):
    """A refusal of a position given ``--prisoners`` says so."""
    try:
        yield
    except ValueError as err:
        if prisoners is None:
            raise
        raise ValueError(f"{err} (with --prisoners {pos.prisoners[0]} {pos.prisoners[1]})") from None


def check_request(
    position: Path,
    output: Optional[Path],
    moves: Optional[int],
    cfg: SearchConfig,
    prisoners: Optional[Sequence[int]] = None,
    alternatives: int = 1,
) -> Tuple[Position, Problem, SearchConfig]:
    """Every check :func:`infer_position` makes before the network is loaded: the position
    (:func:`checked_position`), the method able to order it, the answer's path.
    Returns the position, its problem and ``cfg`` for its length."""
    pos, problem = checked_position(position, moves, prisoners)
    where = str(position)
    with _naming_prisoners(prisoners, pos):
        refuse(problem, cfg.method, where, cause=pos.first_capture)
    if alternatives < 1:
        raise ValueError(f"{where}: --alternatives {alternatives}: must be at least 1")
    if output is not None:
        check_output(Path(output), Path(position))
    return pos, problem, cfg.for_length(problem.moves)


def infer_position(
    position: Path,
    output: Optional[Path],
    moves: Optional[int],
    cfg: SearchConfig,
    evaluator: Callable[[], PositionEvaluator],
    network: str,
    precision: str,
    progress=True,
    prisoners: Optional[Sequence[int]] = None,
    alternatives: int = 1,
) -> Dict:
    """The one-position tool: the order of play of ``position`` (an SGF file), written to ``output`` as SGF (if given).

    ``alternatives``: the likeliest distinct orders the search found, up to
    this many (the best first), go to the row's ``orders``
    (:func:`moveorder.search.results.ranked_orders`) and to the SGF file, the
    others as variations (:func:`moveorder.search.results.write_sgf`).  The
    beam gives its likeliest complete orders, annealing its trials' distinct
    best orders, the capture search those of its passes' last moves.  The
    best order is the same whatever ``alternatives`` is.

    A position with captures (a record's, or setup stones with ``prisoners``:
    Black's, White's) is ordered by the capture search, with ``cfg.method``
    beam only (:func:`moveorder.search.dispatch.refuse`); its answer replays to
    exactly the position and the prisoners.  A position no legal sequence
    reaches, or one the search finds no sequence for, is refused with the
    reason.  Every check on the input and the output (:func:`check_request`) runs before the network
    is loaded (``evaluator`` makes it).  ``progress``: a bar on stderr (True), none (False), or
    an object with tqdm's ``reset(total)`` and ``update(k)`` (the page's worker).  Returns
    :func:`summarize`'s dict with the ``orders`` and how sure the answer is (``chance``,
    ``move_chances``, ``uncertain``: :func:`moveorder.search.confidence.judge`, with the calibration
    beside ``network``, read before the network is loaded).
    """
    pos, problem, cfg = check_request(position, output, moves, cfg, prisoners, alternatives)
    where = str(position)
    n = problem.moves
    calibration = network_calibration(network)
    ev = evaluator()  # the network is loaded (and refused, if it is none) before any progress is shown
    stats = SearchStats()
    unit = "infer" if problem.capture_free else "infer (network evaluations, at most)"
    keep = max(alternatives, CONFIDENCE_ORDERS)  # the best order is the same whatever is kept
    with _progress(progress, steps(cfg, [problem]), unit) as bar:
        (found,) = run(ev, [problem], cfg, stats=stats, progress=bar, keep=keep, names=[where])
    if not found.trials:
        _refuse_not_found(where, pos.prisoners, cfg, proven=bool(stats.unreachable))
    row = summarize(found.trials, n)
    row["orders"] = ranked_orders(found.orders[:alternatives], n)
    row |= _judged(found.orders, problem, cfg, calibration, network)
    if output is not None:
        _write_answer(Path(output), row, pos, cfg, network, precision, str(position), alternatives)
    return row


def network_calibration(network: str) -> Optional[confidence.Calibration]:
    """The calibration beside ``network`` (a shipped name or a weights file), None if it has none;
    a broken one refused (ValueError naming its file)."""
    from moveorder.nets.shipped import resolve

    return confidence.calibration_for(resolve(network))


def _progress(progress, total: int, desc: str):
    """A context giving what the search reports to: a tqdm bar (``progress`` True or False), or
    ``progress`` itself, told the total (tqdm's ``reset``)."""
    if isinstance(progress, bool):
        return progress_bar(total, desc, enabled=progress)
    progress.reset(total=total)
    return contextlib.nullcontext(progress)


def _refuse_not_found(where: str, prisoners, cfg: SearchConfig, proven: bool) -> None:
    """A position with captures the search found no order for: proven unreachable, or not found."""
    if proven:
        raise ValueError(
            f"{where}: no legal sequence from the empty board reaches this position with prisoners "
            f"{prisoners[0]} {prisoners[1]} (every candidate sequence was tried)"
        )
    raise ValueError(
        f"{where}: the search found no legal sequence reaching this position with prisoners "
        f"{prisoners[0]} {prisoners[1]} (beam width {cfg.beam_width}, {cfg.beam_passes} pass(es)"
        f"{f' widened {cfg.beam_widen}x' if cfg.beam_widen > 1 else ''}, patience "
        f"{cfg.patience}); a wider --beam-width, more --beam-passes (with --beam-widen) or a larger "
        "--patience searches further"
    )


def _write_answer(output: Path, row: Dict, pos, cfg, network: str, precision: str, source: str, asked: int) -> None:
    """The one-position answer as SGF: the best order, the others as variations, the root's account."""
    prisoners_note = f" Prisoners: Black {pos.prisoners[0]}, White {pos.prisoners[1]}." if any(pos.prisoners) else ""
    write_sgf(
        output,
        row["inferred"],
        sgf_comment(row["lgm"], row["trial_lgms"], describe(network, cfg, precision), source=source)
        + "."
        + prisoners_note
        + (f" How sure: {confidence.chance_line(row)}." if "chance" in row else "")
        + " "
        + orders_note(row["orders"], asked),
        komi=pos.komi,
        black=pos.black_player,
        white=pos.white_player,
        variations=[(o["moves"], variation_note(o, k, row["orders"])) for k, o in enumerate(row["orders"]) if k],
        move_notes=confidence.move_notes(row.get("move_chances")),
    )
