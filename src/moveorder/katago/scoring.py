"""Scoring actual and inferred sequences with KataGo: queries, deduplication, losses, tables.

For every arrangement of an inference result file, both sequences (actual
and inferred) need the analyses of positions ``0 .. n`` (position ``t`` =
after ``t`` moves).  Positions are keyed by their moves, komi, rules, visits
and model (:func:`moveorder.katago.engine.position_key`), so a prefix shared by the
two sequences, or anything already in the cache, is analysed once.  The
actual sequences of a set can be analysed once for all its lengths (and for
every network or method scored in the same folder: :func:`analyse_actual_file`)
and handed to each scoring job as a seed.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import pandas as pd
from tqdm import tqdm

from moveorder.go import coords
from moveorder.katago.engine import (
    AnalysisCache,
    EnginePool,
    KataGoEngine,
    analysis_config,
    default_env,
    is_cpu_device,
    opencl_device,
    opencl_tuning,
    position_key,
)
from moveorder.katago.loss import compact_analysis, move_losses, sequence_loss
from moveorder.nets import devices
from moveorder.settings import ScoreConfig

log = logging.getLogger(__name__)


def record_komi(komi: Optional[float], default: float) -> float:
    """The komi a sequence is analysed under: its record's, else ``default`` (part of a position's key, so
    :func:`score_results` and :func:`analyse_actual_file` must agree)."""
    return default if komi is None else float(komi)


def analyse_sequences(
    sequences: List[tuple],
    engine: Union[EnginePool, KataGoEngine],
    cache: AnalysisCache,
    visits: int,
    model: str,
    rules: str = "chinese",
    progress: bool = False,
) -> Dict[str, object]:
    """KataGo's analysis of every position ``0 .. n`` of each sequence that ``cache`` does not hold yet.

    ``sequences``: ``(query id, SGF moves, komi)``, Black first; a position shared by several (a common
    prefix) is analysed once.  Returns ``{"keys": each sequence's position keys, "positions": positions
    needed, "unique": distinct positions, "analysed": positions sent to KataGo, "seconds": time in
    KataGo}``; the analyses are in ``cache``.
    """
    needed: Dict[str, tuple] = {}  # position key -> (query id, turn)
    queries: Dict[str, dict] = {}
    keys_of = []
    for qid, seq, komi in sequences:
        moves = [["BW"[i % 2], v] for i, v in enumerate(coords.sgf_to_gtp(seq))]
        keys = [position_key(moves, t, komi, rules, visits, model) for t in range(len(moves) + 1)]
        keys_of.append(keys)
        turns = []
        for t, k in enumerate(keys):
            if cache.get(k) is None and k not in needed:
                needed[k] = (qid, t)
                turns.append(t)
        if turns:
            if qid in queries:
                raise ValueError(f"query id {qid!r} given twice")
            queries[qid] = {
                "id": qid,
                "moves": moves,
                "rules": rules,
                "komi": komi,
                "boardXSize": 19,
                "boardYSize": 19,
                "analyzeTurns": turns,
                "maxVisits": visits,
            }
    total, unique = sum(map(len, keys_of)), len({k for ks in keys_of for k in ks})
    log.info("%d positions needed, %d distinct, %d to analyse", total, unique, len(needed))
    by_turn = {v: k for k, v in needed.items()}
    bar = tqdm(total=len(needed), desc="score", unit="pos", disable=not progress, mininterval=1)

    def store(qid, turn, reply):
        cache.put(by_turn[(qid, turn)], compact_analysis(reply))
        bar.update(1)

    t0 = time.time()
    with bar:
        engine.analyze(queries.values(), on_result=store)
    return {
        "keys": keys_of,
        "positions": total,
        "unique": unique,
        "analysed": len(needed),
        "seconds": time.time() - t0,
    }


def score_results(
    results: List[Dict],
    engine: Union[EnginePool, KataGoEngine],
    cache: AnalysisCache,
    visits: int,
    model: str,
    rules: str = "chinese",
    default_komi: float = 7.5,
    delta_max: str = "best_move",
    clamp: bool = False,
    progress: bool = False,
) -> Dict[str, object]:
    """Losses of the actual and inferred sequence of every result row.

    Returns ``{"rows": per-arrangement dicts, "moves": per-move dicts,
    "positions": positions needed, "unique": distinct positions,
    "analysed": positions sent to KataGo, "seconds": time in KataGo}``.
    ``progress``: a progress bar (positions analysed) on stderr.  ``engine``: an
    :class:`EnginePool` (each position analysed alone: repeatable losses) or one
    :class:`KataGoEngine` (threads sharing a cache: faster on a GPU, not repeatable).  A row whose
    search found no sequence (``found`` false: a position with captures) is left out.
    """
    unanswered = [r["id"] for r in results if r.get("found") is False]
    if unanswered:  # positions with captures the search found no sequence for: nothing to score
        log.info("%d arrangements without an inferred sequence are not scored: %s", len(unanswered), unanswered)
    plan, sequences = [], []
    for r in results:
        if r.get("found") is False:
            continue
        komi = record_komi(r.get("komi"), default_komi)
        for which in ("actual", "inferred"):
            plan.append((r, which))
            sequences.append((f"{r['id']}-{which}", r[which], komi))
    done = analyse_sequences(sequences, engine, cache, visits, model, rules, progress)
    rows: Dict[str, Dict] = {}
    move_rows = []
    for (r, which), keys in zip(plan, done["keys"]):
        analyses = [cache.get(k) for k in keys]
        per_move = move_losses(analyses[:-1], analyses[1:], delta_max=delta_max, clamp=clamp)
        row = rows.setdefault(
            r["id"],
            {
                "set": r["set"],
                "n": r["n"],
                "id": r["id"],
                "lgm": r["lgm"],
                "actual_lgm": r["actual_lgm"],
                "exact_match": r["exact_match"],
                "lgm_ratio": r["lgm"] / r["actual_lgm"],
            },
        )
        row[f"loss_{which}"] = sequence_loss(per_move)
        for i, (m, pm) in enumerate(zip(r[which], per_move), start=1):
            move_rows.append(
                {"id": r["id"], "sequence": which, "move_number": i, "move": coords.to_gtp(coords.from_sgf(m)), **pm}
            )
    return {"rows": list(rows.values()), "moves": move_rows} | {
        k: done[k] for k in ("positions", "unique", "analysed", "seconds")
    }


def write_scores(
    out: Dict[str, object], table: Path, moves_table: Path, stats: Optional[Path], settings: Dict[str, object]
) -> pd.DataFrame:
    df = pd.DataFrame(out["rows"])
    for k, v in settings.items():
        df[k] = v
    Path(table).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(table, index=False)
    pd.DataFrame(out["moves"]).to_csv(moves_table, index=False)
    if stats:
        Path(stats).write_text(
            json.dumps(
                {k: out[k] for k in ("positions", "unique", "analysed", "seconds")}
                | {"katago_device": out.get("katago_device"), "settings": settings},
                indent=2,
            )
            + "\n"
        )
    return df


def _analyser(katago: Path, model: Path, work: Path, cfg: ScoreConfig, tuner: Optional[Path], gpu: Optional[bool]):
    """The engine of a job (a context manager): ``cfg.threads`` KataGo processes each analysing one position
    at a time from an empty network cache, or with ``cfg.shared_cache`` one process of ``cfg.threads``
    analysis threads.  Returns it and whether the job has a GPU."""
    gpu = devices.gpu_present() if gpu is None else gpu
    tuning = opencl_tuning(cfg.tuning, Path(tuner) if tuner else None, gpu)
    log.info("KataGo on %s; OpenCL tuning: %s", "a GPU" if gpu else "the CPU", tuning or "KataGo's own")

    def engine(index: int, threads: int = 1) -> KataGoEngine:
        conf = analysis_config(
            work / f"analysis-{index}.cfg", tuning, threads=threads, max_batch=cfg.max_batch, gpu=gpu
        )
        return KataGoEngine.for_model(
            Path(katago),
            Path(model),
            conf,
            stderr_log=work / f"stderr-{index}.log",
            timeout=cfg.timeout,
            env=default_env(),
        )

    return (engine(0, cfg.threads) if cfg.shared_cache else EnginePool(engine, cfg.threads)), gpu


def score_file(
    results_path: Path,
    katago: Path,
    model: Path,
    work_dir: Path,
    cfg: ScoreConfig,
    tuner: Optional[Path] = None,
    cache: Optional[Path] = None,
    progress: bool = False,
    gpu: Optional[bool] = None,
    seeds: Sequence[Path] = (),
):
    """Score an inference result file (``infer-set``'s JSONL) with KataGo; returns (``score_results``'s dict, settings).

    ``cfg.threads`` KataGo processes each analyse one position at a time from an
    empty network cache (repeatable losses); with ``cfg.shared_cache``, one
    process with ``cfg.threads`` analysis threads sharing its cache and batches.
    Each engine's config and stderr log go to ``work_dir``.  ``tuner``: the CPU's
    OpenCL tuning file, given to KataGo as ``cfg.tuning`` says
    (:func:`moveorder.katago.engine.opencl_tuning`); ``gpu``: whether this job has a GPU
    (None: :func:`moveorder.nets.devices.gpu_present`).  ``seeds``: analyses made
    before (:func:`analyse_actual_file`'s), read only: their positions are not analysed again.
    """
    from moveorder.search.results import load_results

    results = load_results(Path(results_path))
    work = Path(work_dir)
    settings = {
        "katago_model": Path(model).name,
        "visits": cfg.visits,
        "rules": cfg.rules,
        "delta_max": cfg.delta_max,
        "clamp": cfg.clamp,
        "max_batch": cfg.max_batch,
        "shared_cache": cfg.shared_cache,
    }
    analyser, gpu = _analyser(katago, model, work, cfg, tuner, gpu)
    with analyser:
        out = score_results(
            results,
            analyser,
            AnalysisCache(Path(cache) if cache else None, seeds=seeds),
            cfg.visits,
            str(model),
            rules=cfg.rules,
            default_komi=cfg.komi,
            delta_max=cfg.delta_max,
            clamp=cfg.clamp,
            progress=progress,
        )
    out["katago_device"] = katago_devices(work, gpu)
    return out, settings


def analyse_actual_file(
    arrangements: Sequence[Path],
    katago: Path,
    model: Path,
    work_dir: Path,
    out: Path,
    cfg: ScoreConfig,
    tuner: Optional[Path] = None,
    cache: Optional[Path] = None,
    progress: bool = False,
    gpu: Optional[bool] = None,
    stats: Optional[Path] = None,
) -> Dict[str, object]:
    """Analyse every position of the actual sequences of arrangement files, once, and write them to ``out``.

    The actual sequences of a set's lengths are clips of the same games (the 40-move one is the first
    40 moves of the 100-move one), and a run with another network or method scores them again;
    ``moveorder score --seed-cache out`` then analyses only what is new (the inferred sequences).
    Each position is analysed alone, as :func:`score_file` does, so a loss is the same either way.  Keys as
    :func:`score_results` makes them (the record's komi, else ``cfg.komi``).  ``cache``: where
    finished analyses go as they arrive (a rerun resumes); ``out`` is written at the end, the
    analyses of these positions only.  Returns positions, distinct, analysed, seconds and the device.
    """
    from moveorder.data.arrangements import load_arrangements

    sequences = []
    for path in arrangements:
        for a in load_arrangements(Path(path)):
            sequences.append((f"{a.id}-{a.n}m-actual", list(a.actual), record_komi(a.komi, cfg.komi)))
    work = Path(work_dir)
    store = AnalysisCache(Path(cache) if cache else None)
    analyser, gpu = _analyser(katago, model, work, cfg, tuner, gpu)
    with analyser:
        done = analyse_sequences(sequences, analyser, store, cfg.visits, str(model), cfg.rules, progress)
    store.write(Path(out), dict.fromkeys(k for ks in done["keys"] for k in ks))
    summary = {k: done[k] for k in ("positions", "unique", "analysed", "seconds")} | {
        "sequences": len(sequences),
        "katago_device": katago_devices(work, gpu),
    }
    if stats:
        Path(stats).parent.mkdir(parents=True, exist_ok=True)
        Path(stats).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def katago_devices(work: Path, gpu: bool) -> Optional[str]:
    """The OpenCL devices KataGo's processes used (from their stderr logs in ``work``), comma-separated;
    None where no log names one.  On a machine with a GPU, a CPU device is logged as a warning: KataGo's
    OpenCL loader sees no GPU platform there (see :mod:`moveorder.katago.engine`)."""
    names = set()
    for path in sorted(Path(work).glob("stderr-*.log")):
        name = opencl_device(path.read_text(encoding="utf-8", errors="replace"))
        if name:
            names.add(name)
    if gpu and any(is_cpu_device(n) for n in names):
        log.warning(
            "KataGo ran on the CPU's OpenCL device (%s) on a machine with a GPU: its OpenCL loader lists no GPU "
            "platform. Point OCL_ICD_VENDORS at a folder holding a .icd file that names the GPU's OpenCL "
            "library (NVIDIA's: libnvidia-opencl.so.1), or use a CUDA build of KataGo",
            ", ".join(sorted(names)),
        )
    return ", ".join(sorted(names)) or None
