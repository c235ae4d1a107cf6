"""Inferring the order of play for arrangements: a whole set, or one position from an SGF file.

:func:`infer_set` runs :func:`moveorder.annealing.anneal` over a set's
arrangements in chunks and appends one JSON line per arrangement as each
chunk finishes, so a killed job redoes only the arrangements it had not
written.  Each line holds the inferred sequence, its log-likelihood and LGM,
every trial's LGM and their standard deviation (population, ddof=0), the
actual sequence's LGM, exact match, matching prefix length and matching
moves.  :func:`write_table` turns those lines into a CSV table and SGF files.

:func:`position_from_sgf` reads the position to infer for the one-position
tool: setup stones (AB/AW), or a game record's stones after move ``n``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from sgfmill import sgf

from . import board as goboard
from . import coords
from .annealing import AnnealConfig, AnnealStats, anneal, lgm
from .arrangements import Arrangement, load_arrangements
from .likelihood import PositionEvaluator
from .records import read_sgf

log = logging.getLogger(__name__)


def lz_indices(points: Sequence[str]) -> List[int]:
    return [coords.to_lz(coords.from_sgf(p)) for p in points]


def sgf_points(indices: Sequence[int]) -> List[str]:
    return [coords.to_sgf(coords.from_lz(int(k))) for k in indices]


def matching_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def check_position(black: Sequence[coords.Point], white: Sequence[coords.Point], where: str) -> None:
    """Raise ValueError naming the problem if a position breaks the paper's assumptions."""
    if len(black) - len(white) not in (0, 1):
        raise ValueError(f"{where}: {len(black)} black and {len(white)} white stones: with Black first and "
                         "alternating moves, Black has as many stones as White or one more")
    if len(black) + len(white) < 1:
        raise ValueError(f"{where}: the position has no stones")
    b = goboard.from_stones(black, white)
    dead = goboard.groups_without_liberties(b)
    if dead:
        names = "; ".join(" ".join(coords.to_gtp(p) for p in g) for g in dead)
        raise ValueError(f"{where}: group(s) without liberties ({names}): captures must have happened, "
                         "which the inference assumes did not")


def best_of_trials(trials, n: int) -> Dict:
    """The trial with the highest likelihood (the first on ties), and every trial's LGM with their spread (ddof=0)."""
    best = max(trials, key=lambda r: r.best_log_likelihood)
    trial_lgms = [lgm(r.best_log_likelihood, n) for r in trials]
    return {"inferred": sgf_points(best.best), "log_likelihood": best.best_log_likelihood,
            "lgm": lgm(best.best_log_likelihood, n), "trial_lgms": trial_lgms,
            "trial_std": float(np.std(trial_lgms))}


def infer_arrangements(evaluator: PositionEvaluator, arrs: Sequence[Arrangement], cfg: AnnealConfig,
                       indices: Sequence[int], stats: Optional[AnnealStats] = None, progress=None) -> List[Dict]:
    """Anneal a batch of arrangements of one length; return one result dict per arrangement."""
    import torch

    pairs = [(lz_indices(a.black), lz_indices(a.white)) for a in arrs]
    results = anneal(evaluator, pairs, cfg, indices, stats, progress)
    n = arrs[0].n
    actual = torch.tensor([lz_indices(a.actual) for a in arrs], dtype=torch.long)
    actual_ll = evaluator.sequence_log_probs(actual).sum(1).cpu().tolist()
    precision = evaluator.likelihood.precision
    out = []
    for a, trials, all_ll in zip(arrs, results, actual_ll):
        best = best_of_trials(trials, n)
        inferred = best["inferred"]
        out.append({
            "id": a.id, "set": a.set, "n": n, "inferred": inferred, "actual": a.actual,
            "log_likelihood": best["log_likelihood"], "lgm": best["lgm"],
            "actual_log_likelihood": float(all_ll), "actual_lgm": lgm(float(all_ll), n),
            "trial_lgms": best["trial_lgms"], "trial_std": best["trial_std"],
            "exact_match": inferred == a.actual, "matching_prefix": matching_prefix(inferred, a.actual),
            "matching_moves": int(sum(x == y for x, y in zip(inferred, a.actual))),
            "komi": a.komi, "source": a.source, "precision": precision,
        })
    return out


def infer_set(arrangements_path: Path, out_jsonl: Path, evaluator: PositionEvaluator, cfg: AnnealConfig,
              chunk: int = 20, progress: bool = False) -> AnnealStats:
    """Infer every arrangement of a file, ``chunk`` at a time, resuming after the ones already written.

    ``progress``: a bar over all iterations of all chunks on stderr (tqdm, with an ETA).
    """
    arrs = load_arrangements(arrangements_path)
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
    log.info("%s: %d arrangements, %d already inferred", arrangements_path, len(arrs), len(arrs) - len(todo))
    stats = AnnealStats()
    batches = [todo[k:k + chunk] for k in range(0, len(todo), chunk)]
    with progress_bar(len(batches) * cfg.iterations, f"infer {Path(arrangements_path).name}",
                      enabled=progress) as bar:
        for part in batches:
            rows = infer_arrangements(evaluator, [a for _, a in part], cfg, [i for i, _ in part], stats, bar)
            with open(out_jsonl, "a", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
            done.update(a.id for _, a in part)
            log.info("inferred %d / %d", len(done), len(arrs))
    return stats


def progress_bar(total: int, desc: str, enabled: bool = True):
    """A tqdm bar on stderr; where stderr is no terminal (a log file), one line a minute at most."""
    import sys

    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit="it", disable=not enabled, file=sys.stderr,
                mininterval=0.5 if tty else 60, dynamic_ncols=tty, ascii=not tty)


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


def write_table(results: List[Dict], csv_path: Path, sgf_dir: Optional[Path] = None,
                network: str = "", settings: str = "") -> pd.DataFrame:
    """One CSV row per arrangement; with ``sgf_dir``, the inferred sequences as SGF files."""
    rows = []
    for r in results:
        rows.append({k: r[k] for k in ("set", "n", "id", "lgm", "actual_lgm", "log_likelihood",
                                       "actual_log_likelihood", "trial_std", "exact_match",
                                       "matching_prefix", "matching_moves", "source")}
                    | {"inferred": "".join(r["inferred"]), "actual": "".join(r["actual"]),
                       "trial_lgms": " ".join(f"{x:.6f}" for x in r["trial_lgms"]), "network": network})
        if sgf_dir is not None:
            comment = (f"moveorder: inferred order of play. LGM {r['lgm']:.4f} (actual {r['actual_lgm']:.4f}); "
                       f"trials {', '.join(f'{x:.4f}' for x in r['trial_lgms'])}. {settings}")
            write_sgf(Path(sgf_dir) / f"{r['id']}.sgf", r["inferred"], comment, komi=r.get("komi"))
    df = pd.DataFrame(rows)
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    return df


def write_sgf(path: Path, moves: Sequence[str], comment: str, komi: Optional[float] = None) -> None:
    """A game record of ``moves`` (SGF points, Black first) with ``comment`` on the root."""
    game = sgf.Sgf_game(size=19)
    root = game.get_root()
    root.set("C", comment)
    root.set("AP", ("moveorder", "0.1.0"))
    if komi is not None:
        root.set("KM", float(komi))
    node = root
    for i, m in enumerate(moves):
        node = node.new_child()
        row, col = coords.from_sgf(m)
        node.set_move("bw"[i % 2], (18 - row, col))  # sgfmill counts rows from the bottom
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(game.serialise())


def position_from_sgf(path: Path, moves: Optional[int] = None) -> Tuple[List[coords.Point], List[coords.Point]]:
    """The black and white stones to infer an order for.

    With ``moves`` the file is a game record and the position is its stones
    after that many moves (captures applied).  Without it, the position is
    the root's setup stones (AB/AW) if any, else every move of the record.
    """
    path = Path(path)
    data = path.read_bytes()
    if moves is None:
        try:
            game = sgf.Sgf_game.from_bytes(data, override_encoding="iso-8859-1")
        except ValueError as err:
            raise ValueError(f"{path}: not a readable SGF file: {err}") from None
        if game.get_size() != 19:
            raise ValueError(f"{path}: board size {game.get_size()}; only 19x19 is supported")
        root = game.get_root()
        if root.has_property("AB") or root.has_property("AW"):
            pts = {c: [coords.from_sgf(v.decode("latin-1")) for v in root.get_raw_list(c)]
                   if root.has_property(c) else [] for c in ("AB", "AW")}
            return sorted(pts["AB"]), sorted(pts["AW"])
    rec = read_sgf(data, str(path))
    all_moves = rec.move_list()
    n = len(all_moves) if moves is None else moves
    if n > len(all_moves):
        raise ValueError(f"{path}: --moves {n}, but the record has {len(all_moves)} moves")
    if any(m is None for m in all_moves[:n]):
        raise ValueError(f"{path}: a pass within the first {n} moves; the inference assumes none")
    b, captures = goboard.replay(all_moves[:n])
    if any(captures):
        first = next(i for i, c in enumerate(captures) if c) + 1
        raise ValueError(f"{path}: move {first} captures stones; the inference assumes no captures")
    return b.stones(goboard.BLACK), b.stones(goboard.WHITE)

