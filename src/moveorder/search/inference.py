"""Inferring the order of play for arrangements: a whole set, or one position from an SGF file.

:func:`infer_set` runs :func:`moveorder.search.anneal.anneal` over a set's
arrangements in chunks and appends one JSON line per arrangement as each
chunk finishes, so a killed job redoes only the arrangements it had not
written.  Each line holds the inferred sequence, its log-likelihood and LGM,
every trial's LGM and their standard deviation (population, ddof=0), the
actual sequence's LGM, exact match, matching prefix length and matching
moves.  :func:`write_table` turns those lines into a CSV table and SGF files.

:func:`read_position` reads the position to infer for the one-position
tool: setup stones (AB/AW), or a game record's stones after move ``n``, and
refuses (naming the file, the move and the reason) any record that breaks
the paper's assumptions; :func:`check_output` checks the answer's path
before any search runs.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from sgfmill import sgf

from moveorder.data.arrangements import Arrangement, load_arrangements
from moveorder.data.records import RecordError, read_sgf, setup_points
from moveorder.go import board as goboard
from moveorder.go import coords
from moveorder.nets.likelihood import PositionEvaluator
from moveorder.search.anneal import AnnealConfig, AnnealStats, ChainResult, anneal, distinct_orders, lgm

log = logging.getLogger(__name__)


def matching_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


#: How a position reached with captures is given, for a refusal of one given without them.
GIVE_PRISONERS = (
    "if stones were captured before this position, give their counts with --prisoners B W (the white stones "
    "Black captured, the black stones White captured): --method beam orders positions with captures"
)


def check_position(
    black: Sequence[coords.Point], white: Sequence[coords.Point], where: str, prisoners: Sequence[int] = (0, 0)
) -> None:
    """Raise ValueError naming ``where`` and the problem if a position breaks the paper's assumptions.

    With prisoners, the position may have arisen with captures: the counts
    and the board are checked by :func:`moveorder.search.captures.check_problem`
    instead.  Points are named in GTP terms (``Q16``).
    """
    seen: Dict[coords.Point, str] = {}
    for colour, pts in (("black", black), ("white", white)):
        for p in pts:
            try:
                coords.to_flat(p)
            except (ValueError, TypeError):
                raise ValueError(f"{where}: a {colour} stone at {p!r} is not on the 19x19 board") from None
            if p in seen:
                raise ValueError(f"{where}: {coords.to_gtp(p)} holds two stones ({seen[p]} and {colour})")
            seen[p] = colour
    if any(prisoners):
        from moveorder.search.captures import check_problem

        check_problem(black, white, (int(prisoners[0]), int(prisoners[1])), where)
        return
    if len(black) + len(white) < 1:
        raise ValueError(f"{where}: the position has no stones")
    if len(black) - len(white) not in (0, 1):
        raise ValueError(
            f"{where}: {len(black)} black and {len(white)} white stones: with Black first and "
            f"alternating moves and no captures, Black has as many stones as White or one more; {GIVE_PRISONERS}"
        )
    b = goboard.from_stones(black, white)
    dead = goboard.groups_without_liberties(b)
    if dead:
        names = "; ".join(" ".join(coords.to_gtp(p) for p in g) for g in dead)
        raise ValueError(
            f"{where}: group(s) without liberties ({names}): no legal move leaves a group so (the move that "
            "takes its last liberty captures it, or is suicide), with captures or without; no prisoners "
            "make this position reachable"
        )


def best_of_trials(trials, n: int) -> Dict:
    """The trial with the highest likelihood (the first on ties), and every trial's LGM with their spread (ddof=0)."""
    best = max(trials, key=lambda r: r.best_log_likelihood)
    trial_lgms = [lgm(r.best_log_likelihood, n) for r in trials]
    return {
        "inferred": coords.lz_to_sgf(best.best),
        "log_likelihood": best.best_log_likelihood,
        "lgm": lgm(best.best_log_likelihood, n),
        "trial_lgms": trial_lgms,
        "trial_std": float(np.std(trial_lgms)),
    }


def infer_arrangements(
    evaluator: PositionEvaluator,
    arrs: Sequence[Arrangement],
    cfg: AnnealConfig,
    indices: Sequence[int],
    stats: Optional[AnnealStats] = None,
    progress=None,
) -> List[Dict]:
    """Order a batch of arrangements of one length; return one result dict per arrangement.

    Capture-free arrangements go to :func:`moveorder.search.anneal.anneal` (the
    configured method); arrangements with prisoners to
    :func:`moveorder.search.captures.search`, which needs ``cfg.method`` beam
    (:func:`moveorder.search.captures.require_beam` refuses the others).  A row
    with captures also says which share of the captured stones' points the
    inference played where the game did (``captured_placed``).
    """
    import torch

    from moveorder.search import captures

    plain = [k for k, a in enumerate(arrs) if not any(a.prisoners)]
    with_captures = [k for k, a in enumerate(arrs) if any(a.prisoners)]
    n = arrs[0].n
    trials_of: Dict[int, list] = {}
    if plain:
        pairs = [(coords.sgf_to_lz(arrs[k].black), coords.sgf_to_lz(arrs[k].white)) for k in plain]
        results = anneal(evaluator, pairs, cfg, [indices[k] for k in plain], stats, progress)
        trials_of.update(zip(plain, results))
        actual = torch.tensor([coords.sgf_to_lz(arrs[k].actual) for k in plain], dtype=torch.long)
        actual_ll = dict(zip(plain, evaluator.sequence_log_probs(actual).sum(1).cpu().tolist()))
    else:
        actual_ll = {}
    if with_captures:
        for k in with_captures:
            captures.require_beam(cfg.method, tuple(arrs[k].prisoners), f"{arrs[k].source} ({arrs[k].id})")
        problems = [captures.problem_of_arrangement(arrs[k]) for k in with_captures]
        search_stats = captures.SearchStats()
        found = captures.search(
            evaluator.likelihood,
            problems,
            cfg.beam_width,
            cfg.beam_future,
            cfg.patience,
            stats=search_stats,
            passes=cfg.beam_passes,
            widen=cfg.beam_widen,
        )
        if stats is not None:
            stats.evaluations += search_stats.evaluations
            stats.requests += search_stats.evaluations
            stats.seconds += search_stats.seconds
            stats.network_seconds += search_stats.network_seconds
            stats.not_found += search_stats.not_found
            stats.unreachable += search_stats.unreachable
        if progress is not None and not plain:
            progress.update(cfg.iterations)
        for k, r in zip(with_captures, found):
            actual_lz = coords.sgf_to_lz(arrs[k].actual)
            actual_ll[k] = float(captures.sequence_log_probs(evaluator.likelihood, actual_lz).sum())
            trials_of[k] = [] if r is None else [ChainResult(r[0], r[1])]
    precision = evaluator.likelihood.precision
    out = []
    for k, a in enumerate(arrs):
        all_ll = float(actual_ll[k])
        row = {"id": a.id, "set": a.set, "n": n}
        if trials_of[k]:
            best = best_of_trials(trials_of[k], n)
            inferred = best["inferred"]
        else:  # no sequence found (positions with captures only): likelihood 0, below every actual one
            best = {"log_likelihood": None, "lgm": 0.0, "trial_lgms": [0.0], "trial_std": 0.0}
            inferred = []
        row |= {
            "inferred": inferred,
            "actual": a.actual,
            "log_likelihood": best["log_likelihood"],
            "lgm": best["lgm"],
            "actual_log_likelihood": all_ll,
            "actual_lgm": lgm(all_ll, n),
            "trial_lgms": best["trial_lgms"],
            "trial_std": best["trial_std"],
            "exact_match": inferred == a.actual,
            "matching_prefix": matching_prefix(inferred, a.actual),
            "matching_moves": int(sum(x == y for x, y in zip(inferred, a.actual))),
            "komi": a.komi,
            "source": a.source,
            "precision": precision,
        }
        if any(a.prisoners):
            row |= {
                "prisoners": list(a.prisoners),
                "found": bool(inferred),
                "captured_placed": captures.captured_placed(coords.sgf_to_lz(a.actual), coords.sgf_to_lz(inferred))
                if inferred
                else 0.0,
            }
        out.append(row)
    return out


def infer_set(
    arrangements_path: Path,
    out_jsonl: Path,
    evaluator: PositionEvaluator,
    cfg: AnnealConfig,
    chunk: int = 20,
    progress: bool = False,
    arrangements: Optional[Sequence[Arrangement]] = None,
) -> AnnealStats:
    """Infer every arrangement of a file, ``chunk`` at a time, resuming after the ones already written.

    ``progress``: a bar over all iterations of all chunks on stderr (tqdm, with an ETA).
    ``arrangements``: the file's, when the caller has read it already.
    """
    arrs = load_arrangements(arrangements_path) if arrangements is None else arrangements
    out_jsonl = Path(out_jsonl)
    out_jsonl.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out_jsonl.exists():
        with open(out_jsonl, encoding="utf-8") as f:
            for line in f:
                try:
                    done.add(json.loads(line)["id"])
                except (json.JSONDecodeError, KeyError):
                    break  # a line cut off by a kill: it and what follows are redone
        _truncate_to_complete_lines(out_jsonl)
    todo = [(i, a) for i, a in enumerate(arrs) if a.id not in done]
    if arrs:
        cfg = cfg.for_length(arrs[0].n)
    log.info("%s: %d arrangements, %d already inferred", arrangements_path, len(arrs), len(arrs) - len(todo))
    stats = AnnealStats()
    batches = [todo[k : k + chunk] for k in range(0, len(todo), chunk)]
    with progress_bar(len(batches) * cfg.iterations, f"infer {Path(arrangements_path).name}", enabled=progress) as bar:
        for part in batches:
            rows = infer_arrangements(evaluator, [a for _, a in part], cfg, [i for i, _ in part], stats, bar)
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
    cfg: AnnealConfig,
    evaluator: Callable[[], PositionEvaluator],
    network: str,
    precision: str,
    chunk: int = 20,
    sgf_dir: Optional[Path] = None,
    stats_path: Optional[Path] = None,
    progress: bool = False,
) -> AnnealStats:
    """``moveorder infer-set``: :func:`infer_set`, then the table, the SGF files and the stats (JSON) of the run.

    ``evaluator`` makes the network's evaluator once the arrangements are read and checked.
    """
    arrs = load_arrangements(arrangements_path)
    if not arrs:
        raise ValueError(f"{arrangements_path}: no arrangements")
    cfg = cfg.for_length(arrs[0].n)
    ev = evaluator()
    stats = infer_set(arrangements_path, out_jsonl, ev, cfg, chunk=chunk, progress=progress, arrangements=arrs)
    settings = describe(network, cfg, precision)
    write_table(load_results(out_jsonl), table, sgf_dir, network=network, settings=settings)
    if stats_path is not None:
        info = stats.__dict__ | {"settings": settings, "precision": precision, "device": str(ev.device)}
        Path(stats_path).write_text(json.dumps(info, indent=2) + "\n")
    return stats


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


def _truncate_to_complete_lines(path: Path) -> None:
    data = path.read_bytes()
    keep = []
    for line in data.split(b"\n"):
        try:
            json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            break
        keep.append(line)
    path.write_bytes(b"".join(x + b"\n" for x in keep))


def load_results(path: Path) -> List[Dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_table(
    results: List[Dict], csv_path: Path, sgf_dir: Optional[Path] = None, network: str = "", settings: str = ""
) -> pd.DataFrame:
    """One CSV row per arrangement; with ``sgf_dir``, the inferred sequences as SGF files.

    A table with positions with captures also has ``prisoners``, ``found`` and ``captured_placed``
    (blank for its capture-free rows); a capture-free table keeps the paper's columns only.
    """
    rows = []
    captures_table = any("prisoners" in r for r in results)
    for r in results:
        rows.append(
            {
                k: r[k]
                for k in (
                    "set",
                    "n",
                    "id",
                    "lgm",
                    "actual_lgm",
                    "log_likelihood",
                    "actual_log_likelihood",
                    "trial_std",
                    "exact_match",
                    "matching_prefix",
                    "matching_moves",
                    "source",
                )
            }
            | {
                "inferred": "".join(r["inferred"]),
                "actual": "".join(r["actual"]),
                "trial_lgms": " ".join(f"{x:.6f}" for x in r["trial_lgms"]),
                "network": network,
            }
        )
        if captures_table:
            with_captures = "prisoners" in r
            rows[-1] |= {
                "prisoners": " ".join(str(x) for x in r["prisoners"]) if with_captures else "0 0",
                "found": r["found"] if with_captures else None,
                "captured_placed": r["captured_placed"] if with_captures else None,
            }
        if sgf_dir is not None:
            write_sgf(
                Path(sgf_dir) / f"{r['id']}.sgf",
                r["inferred"],
                sgf_comment(r["lgm"], r["trial_lgms"], settings, actual_lgm=r["actual_lgm"])
                if r.get("found", True)
                else f"moveorder: no legal sequence found for this position. {settings}",
                komi=r.get("komi"),
            )
    df = pd.DataFrame(rows)
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    return df


def describe(network: str, cfg: AnnealConfig, precision: str) -> str:
    """One line naming a run's network and every setting of its search (SGF comments, stats files)."""
    if cfg.method == "beam":
        passes = ""
        if cfg.beam_passes > 1:
            wider = f", {cfg.beam_widen}x wider where none found yet" if cfg.beam_widen > 1 else ""
            passes = f", {cfg.beam_passes} passes{wider} (positions with captures)"
        return (
            f"network {network}; beam search, width {cfg.beam_width}, future weight {cfg.beam_future:g}{passes}; "
            f"precision {precision}"
        )
    beam = f"beam width {cfg.beam_width}, future weight {cfg.beam_future:g}, " if cfg.init == "beam" else ""
    return (
        f"network {network}; {cfg.method}: init {cfg.init}, {beam}neighbour {cfg.neighbour}, "
        f"{cfg.iterations} iterations, {cfg.trials} trials, T {cfg.t_start}->{cfg.t_end} ({cfg.schedule}), "
        f"seed {cfg.seed}, precision {precision}"
    )


def sgf_comment(
    lgm_value: float, trial_lgms: Sequence[float], settings: str, source: str = "", actual_lgm: Optional[float] = None
) -> str:
    """The root comment of an inferred order's SGF: its LGM (and the actual sequence's), every trial's, the run."""
    actual = f" (actual {actual_lgm:.4f})" if actual_lgm is not None else ""
    where = f" for {source}" if source else ""
    return (
        f"moveorder: inferred order of play{where}. LGM {lgm_value:.4f}{actual}; "
        f"trials {', '.join(f'{x:.4f}' for x in trial_lgms)}. {settings}"
    )


def write_sgf(
    path: Path,
    moves: Sequence[str],
    comment: str,
    komi: Optional[float] = None,
    black: str = "",
    white: str = "",
    variations: Sequence[Tuple[Sequence[str], str]] = (),
) -> None:
    """A game record of ``moves`` (SGF points, Black first) with ``comment`` on the root.

    ``komi`` and the players' names ``black``/``white`` (PB/PW) are kept
    when given (the one-position tool passes the input record's).
    ``variations``: other orders, each with a comment, as variations: an order
    shares the moves it has in common with the main line (and with the
    orders before it) and branches off at its first move of its own, which
    carries its comment.  SGF editors mark that move as a variation of the
    move played there, so a reader stepping through the main line sees
    where each alternative leaves it, and no move is written twice.
    """
    game = sgf.Sgf_game(size=coords.SIZE)
    root = game.get_root()
    root.set("C", comment)
    root.set("AP", ("moveorder", "0.2.0"))
    if komi is not None:
        root.set("KM", float(komi))
    if black:
        root.set("PB", black)
    if white:
        root.set("PW", white)
    node = root
    for i, m in enumerate(moves):
        node = node.new_child()
        node.set_move("bw"[i % 2], coords.to_sgfmill(coords.from_sgf(m)))
    for order, note in variations:
        node, commented = root, False
        for i, m in enumerate(order):
            move = ("bw"[i % 2], coords.to_sgfmill(coords.from_sgf(m)))
            child = next((c for c in node if c.get_move() == move), None)
            if child is None:
                child = node.new_child()
                child.set_move(*move)
                if not commented:
                    child.set("C", note)
                    commented = True
            node = child
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(game.serialise())


@dataclass
class Position:
    """A position to infer an order of play for, and what of its record the answer keeps."""

    black: List[coords.Point]
    white: List[coords.Point]
    komi: Optional[float] = None
    black_player: str = ""
    white_player: str = ""
    #: Stones captured by Black and by White before the position (a record's, or --prisoners).
    prisoners: Tuple[int, int] = (0, 0)
    #: For a record with captures: its first capture, named for a refusal by a method other than beam.
    first_capture: str = ""


_GIVE_INSTEAD = (
    "give either a position as setup stones only (AB/AW, no moves; without --moves), "
    "or a game record without setup stones (with --moves N for its position after move N)"
)


def read_position(path: Path, moves: Optional[int] = None, prisoners: Optional[Sequence[int]] = None) -> Position:
    """The position to infer an order for, from an SGF file; ValueError naming the file and the reason.

    The file holds one 19x19 game without handicap.  Either it holds setup
    stones (AB/AW) and no moves: the position is those stones (``moves``
    must be None); or it holds moves and no setup stones: the position is
    the stones after move ``moves`` (default: every move).  The moves up to
    there must follow the paper's assumptions: Black first, colours
    alternating, every move legal and no pass.  A record that breaks them is
    refused with the move number and the reason, never reinterpreted.  A
    record's captures are counted (``Position.prisoners``; whether the
    method can order such a position is :func:`infer_position`'s check).
    ``prisoners`` (Black's, White's) go with setup stones only: a record's
    come from its moves.
    """
    path = Path(path)
    if moves is not None and moves < 1:
        raise ValueError(f"{path}: --moves {moves}: must be at least 1")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except OSError as err:
        raise ValueError(f"{path}: cannot be read: {err.strerror or err}") from None
    try:
        rec = read_sgf(data, str(path))
    except RecordError as err:
        raise ValueError(err.detail) from None
    if rec.handicap > 0:
        raise ValueError(
            f"{path}: HA[{rec.handicap}]: a handicap game; the inference assumes an even game "
            "(no handicap stones, Black moves first)"
        )
    if rec.setup_empty:
        raise ValueError(
            f"{path}: AE[{']['.join(rec.setup_empty)}] removes stones; the position must be "
            "setup stones (AB/AW) only, or a game record's moves"
        )
    all_moves = rec.move_list()
    if prisoners is not None and all_moves and not (rec.setup_black or rec.setup_white):
        raise ValueError(
            f"{path}: --prisoners {' '.join(str(x) for x in prisoners)} with a game record: a record's prisoners "
            "come from its own moves; give --prisoners with a position of setup stones (AB/AW)"
        )
    if rec.setup_black or rec.setup_white:
        if all_moves:
            raise ValueError(f"{path}: holds both setup stones (AB/AW) and {len(all_moves)} moves; {_GIVE_INSTEAD}")
        if moves is not None:
            raise ValueError(
                f"{path}: --moves {moves}, but the file holds setup stones (AB/AW) and no moves; "
                "leave out --moves to use the setup stones as the position"
            )
        try:
            black = setup_points(rec.setup_black, "AB")
            white = setup_points(rec.setup_white, "AW")
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None
        seen: Dict[coords.Point, str] = {}
        for prop, pts in (("AB", black), ("AW", white)):
            for p in pts:
                if p in seen:
                    raise ValueError(
                        f"{path}: {coords.to_gtp(p)} ({coords.to_sgf(p)}) is given twice ({seen[p]} and {prop})"
                    )
                seen[p] = prop
        given = (0, 0) if prisoners is None else (int(prisoners[0]), int(prisoners[1]))
        return Position(sorted(black), sorted(white), rec.komi, rec.black, rec.white, given)
    if not all_moves:
        raise ValueError(f"{path}: no stones: neither setup stones (AB/AW) nor moves")
    n = len(all_moves) if moves is None else moves
    if n > len(all_moves):
        raise ValueError(f"{path}: --moves {n}, but the record has {len(all_moves)} moves")
    board, taken, first_capture = goboard.Board(), [0, 0], ""
    for i, (colour, move) in enumerate(zip(rec.colours[:n], all_moves[:n]), start=1):
        expected = "BW"[(i - 1) % 2]
        name = {"B": "Black", "W": "White"}
        if colour != expected:
            why = (
                "Black moves first" if i == 1 else f"colours alternate (move {i - 1} is {name[rec.colours[i - 2]]} too)"
            )
            raise ValueError(
                f"{path}: move {i} is {name[colour]}, expected {name[expected]}: the inference assumes {why}"
            )
        if move is None:
            raise ValueError(f"{path}: move {i} ({name[colour]}) is a pass; the inference assumes no passes")
        try:
            captured = board.play(goboard.BLACK if colour == "B" else goboard.WHITE, move)
        except goboard.IllegalMove as err:
            raise ValueError(
                f"{path}: move {i} ({name[colour]} {coords.to_gtp(move)}, "
                f"{colour}[{coords.to_sgf(move)}]) is illegal: {err}"
            ) from None
        taken[(i - 1) % 2] += captured
        if captured and not first_capture:
            first_capture = f"move {i} ({name[colour]} {coords.to_gtp(move)}) captures {captured} stone(s)"
    return Position(
        board.stones(goboard.BLACK),
        board.stones(goboard.WHITE),
        rec.komi,
        rec.black,
        rec.white,
        (taken[0], taken[1]),
        first_capture,
    )


def infer_position(
    position: Path,
    output: Optional[Path],
    moves: Optional[int],
    cfg: AnnealConfig,
    evaluator: Callable[[], PositionEvaluator],
    network: str,
    precision: str,
    progress: bool = True,
    prisoners: Optional[Sequence[int]] = None,
    alternatives: int = 1,
) -> Dict:
    """The one-position tool: the order of play of ``position`` (an SGF file), written to ``output`` as SGF (if given).

    ``alternatives``: the likeliest distinct orders the search found, up to
    this many (the best first), go to the row's ``orders`` (:func:`ranked_orders`)
    and to the SGF file, the others as variations (:func:`write_sgf`).  The
    beam gives its likeliest complete orders, annealing its trials' distinct
    best orders, the capture search those of its passes' last moves.  The
    best order is the same whatever ``alternatives`` is.

    A position with captures (a record's, or setup stones with ``prisoners``:
    Black's, White's) is ordered by :func:`moveorder.search.captures.search`, with
    ``cfg.method`` beam only; its answer replays to exactly the position and
    the prisoners.  A position no legal sequence reaches, or one the search
    finds no sequence for, is refused with the reason.  Every check on the
    input and the output runs before the network is loaded (``evaluator``
    makes it).  Returns :func:`best_of_trials`'s dict.
    """
    pos = read_position(Path(position), moves, prisoners)
    where = str(position)
    check_length(pos, where, given=prisoners is not None)
    try:
        check_position(pos.black, pos.white, where, pos.prisoners)
        if any(pos.prisoners) and cfg.method != "beam":
            if pos.first_capture:
                raise ValueError(
                    f"{where}: {pos.first_capture}; the inference assumes no captures with method "
                    f"{cfg.method!r}: --method beam orders positions with captures"
                )
            from moveorder.search.captures import require_beam

            require_beam(cfg.method, pos.prisoners, where)
    except ValueError as err:
        if prisoners is None:
            raise
        raise ValueError(f"{err} (with --prisoners {pos.prisoners[0]} {pos.prisoners[1]})") from None
    if alternatives < 1:
        raise ValueError(f"{where}: --alternatives {alternatives}: must be at least 1")
    if output is not None:
        check_output(Path(output), Path(position))
    n = len(pos.black) + len(pos.white) + sum(pos.prisoners)
    cfg = cfg.for_length(n)
    black = [coords.to_lz(p) for p in pos.black]  # any order: the search sorts the stones
    white = [coords.to_lz(p) for p in pos.white]
    ev = evaluator()  # the network is loaded (and refused, if it is none) before any progress is shown
    if any(pos.prisoners):
        row = _infer_with_captures(ev, black, white, pos.prisoners, cfg, where, progress, alternatives)
    else:
        with progress_bar(cfg.iterations, "infer", enabled=progress) as bar:
            found = anneal(ev, [(black, white)], cfg, progress=bar, keep=alternatives)[0]
        trials = found[:1] if cfg.method == "beam" else found  # the beam's one trial; the rest are alternatives
        row = best_of_trials(trials, n)
        row["orders"] = ranked_orders(distinct_orders(found, alternatives), n)
    prisoners_note = f" Prisoners: Black {pos.prisoners[0]}, White {pos.prisoners[1]}." if any(pos.prisoners) else ""
    if output is None:
        return row
    write_sgf(
        Path(output),
        row["inferred"],
        sgf_comment(row["lgm"], row["trial_lgms"], describe(network, cfg, precision), source=str(position))
        + "."
        + prisoners_note
        + " "
        + orders_note(row["orders"], alternatives),
        komi=pos.komi,
        black=pos.black_player,
        white=pos.white_player,
        variations=[(o["moves"], variation_note(o, k, row["orders"])) for k, o in enumerate(row["orders"]) if k],
    )
    return row


def check_length(pos: Position, where: str, given: bool) -> None:
    """Refuse a position whose sequence (stones plus prisoners) is longer than :data:`MAX_MOVES`.

    Every captured stone was once a move, so the answer has that many moves; the search is refused
    before it starts rather than left to run for hours (or to overflow its counters).
    """
    from moveorder.settings import MAX_MOVES

    stones, (pb, pw) = len(pos.black) + len(pos.white), pos.prisoners
    n = stones + pb + pw
    if n <= MAX_MOVES:
        return
    limit = (
        f"the one-position tool orders at most {MAX_MOVES} moves (longer than 99% of recorded professional games; "
        "the search costs about beam width x moves network evaluations)"
    )
    if given:
        raise ValueError(
            f"{where}: --prisoners {pb} {pw} with {stones} stones on the board make a sequence of {n} moves "
            f"(every captured stone was once a move): {limit}; with these {stones} stones the two counts "
            f"add up to at most {MAX_MOVES - stones}"
        )
    raise ValueError(f"{where}: the position after {n} moves: {limit}; give --moves {MAX_MOVES} or fewer")


LGM_MEANING = (
    "LGM: the geometric mean of the network's probability of each move of the order; higher is likelier. "
    "It compares orders under one network only: an LGM from another network is not comparable."
)


def ranked_orders(orders: Sequence[Tuple[Sequence[int], float]], n: int) -> List[Dict]:
    """Orders (Leela Zero indices, best first, with log-likelihoods) as dicts: ``moves`` (SGF points),
    ``log_likelihood``, ``lgm`` and ``relative``, how likely each is beside the first: exp(ll - best ll)."""
    best = orders[0][1]
    return [
        {"moves": coords.lz_to_sgf(seq), "log_likelihood": ll, "lgm": lgm(ll, n), "relative": math.exp(ll - best)}
        for seq, ll in orders
    ]


def orders_note(orders: Sequence[Dict], asked: int) -> str:
    """The root comment's account of the orders written: what LGM means, each alternative, and how many were found."""
    parts = [LGM_MEANING]
    if len(orders) > 1:
        parts.append(
            "The main line is the likeliest order found; the variations are the next likeliest: "
            + "; ".join(f"{k + 1}. x{o['relative']:.4g}, LGM {o['lgm']:.4f}" for k, o in enumerate(orders) if k)
            + "."
        )
    if asked > len(orders):
        parts.append(
            f"Asked for {asked} orders; the search found {len(orders)} distinct "
            f"order{'s' if len(orders) > 1 else ''} (a wider beam or more trials find more)."
        )
    return " ".join(parts)


def variation_note(order: Dict, k: int, orders: Sequence[Dict]) -> str:
    """The comment at the first move of alternative ``k`` (0: the main line) of ``orders``."""
    first = matching_prefix(order["moves"], orders[0]["moves"]) + 1
    return (
        f"Alternative {k + 1} of {len(orders)}: x{order['relative']:.4g} as likely as the main line "
        f"(LGM {order['lgm']:.4f}, main line {orders[0]['lgm']:.4f}); it leaves the main line at move {first}."
    )


def orders_text(row: Dict, asked: int) -> str:
    """The alternatives, for the terminal: one line each (GTP vertices), and how many were found."""
    lines = [
        f"alternative {k + 1}: x{o['relative']:.4g} as likely, LGM {o['lgm']:.4f}: "
        + " ".join(coords.sgf_to_gtp(o["moves"]))
        for k, o in enumerate(row["orders"])
        if k
    ]
    if asked > len(row["orders"]):
        lines.append(f"asked for {asked} orders; the search found {len(row['orders'])} distinct")
    return "\n".join(lines)


def _infer_with_captures(
    evaluator, black, white, prisoners, cfg: AnnealConfig, where: str, progress: bool, keep: int = 1
) -> Dict:
    """:func:`moveorder.search.captures.search` for one position; ValueError naming ``where`` when it has no answer.

    ``keep``: the row's ``orders`` holds up to that many distinct sequences found, best first."""
    from moveorder.search import captures

    problem = captures.Problem(tuple(sorted(black)), tuple(sorted(white)), int(prisoners[0]), int(prisoners[1]))
    stats = captures.SearchStats()
    orders: list = []
    # The bar counts network evaluations against the most the search may spend: each pass's beam
    # (a later one up to beam_widen times as wide) and the backtracking's patience.
    width, n = cfg.beam_width, problem.moves
    budget = width * n * (1 + (cfg.beam_passes - 1) * cfg.beam_widen + cfg.patience)
    with progress_bar(budget, "infer (network evaluations, at most)", enabled=progress) as bar:
        likelihood = evaluator.likelihood
        evaluate, start = likelihood.probs_of_planes, likelihood.evaluations

        def counted(*args, **kwargs):
            out = evaluate(*args, **kwargs)
            bar.update(min(budget, likelihood.evaluations - start) - bar.n)
            return out

        likelihood.probs_of_planes = counted
        try:
            (found,) = captures.search(
                likelihood,
                [problem],
                cfg.beam_width,
                cfg.beam_future,
                cfg.patience,
                stats=stats,
                passes=cfg.beam_passes,
                widen=cfg.beam_widen,
                keep=keep,
                orders=orders,
            )
        finally:
            del likelihood.probs_of_planes
    if found is None:
        if stats.unreachable:
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
    row = best_of_trials([ChainResult(found[0], found[1])], problem.moves)
    row["orders"] = ranked_orders(orders[0], problem.moves)
    return row


def check_output(output: Path, position: Optional[Path] = None) -> None:
    """Raise ValueError unless an SGF file can be written at ``output`` (checked before any search runs)."""
    text = str(output)
    output = Path(output)
    if text.endswith(("/", os.sep)) or output.is_dir():
        raise ValueError(f"{output}: -o names a folder; give a file name, e.g. {output / 'ordered.sgf'}")
    if position is not None and output.exists() and output.resolve() == Path(position).resolve():
        raise ValueError(f"{output}: -o names the position file itself; give another file name")
    parent = output.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{output}: cannot be written: {parent} is not a folder")
    if output.exists() and not os.access(output, os.W_OK):
        raise ValueError(f"{output}: cannot be written (no permission)")
    if not output.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{output}: cannot be written: no permission to write in {parent}")
