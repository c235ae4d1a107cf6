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


# --- networks -------------------------------------------------------------------

def cmd_train_policy(a: argparse.Namespace) -> int:
    from .train import TrainConfig, train

    cfg = TrainConfig(blocks=a.blocks, filters=a.filters, steps=a.steps, batch_size=a.batch_size, lr=a.lr,
                      checkpoint_every=a.checkpoint_every, seed=a.seed, threads=a.threads,
                      heldout_fraction=a.heldout_fraction)
    train(Path(a.pool), Path(a.out_dir), cfg, device=a.device, progress=not a.quiet)
    return 0


def cmd_policy(a: argparse.Namespace) -> int:
    """Print the network's policy after some moves, as Leela Zero's `heatmap` does (permille)."""
    import torch

    from . import coords
    from .features import sequence_planes
    from .likelihood import PolicyLikelihood

    model = PolicyLikelihood.from_file(Path(a.network), device="cpu", average_symmetries=a.average)
    moves = [coords.from_gtp(m) for m in a.moves]
    seq = torch.tensor([[coords.to_lz(m) for m in moves] + [0]])
    planes = sequence_planes(seq, torch.tensor([[len(moves)]]))
    probs = model.probs_of_planes(planes.view(1, 18, 19, 19))[0]
    occupied = {coords.to_lz(m) for m in moves}
    for lz_row in range(18, -1, -1):
        print(" ".join(f"{0 if lz_row * 19 + c in occupied else int(probs[lz_row * 19 + c] * 1000):3d}"
                       for c in range(19)))
    print(f"pass: {int(probs[361] * 1000)}")
    return 0


# --- inference ------------------------------------------------------------------

def _anneal_config(a: argparse.Namespace, n: int):
    from .settings import AnnealConfig, iterations_for

    return AnnealConfig(iterations=a.iterations or iterations_for(n), trials=a.trials, init=a.init,
                        neighbour=a.neighbour, t_start=a.t_start, t_end=a.t_end, schedule=a.schedule, seed=a.seed,
                        method=a.method, beam_width=a.beam_width)


def _evaluator(a: argparse.Namespace):
    from .likelihood import PolicyLikelihood, PositionEvaluator, default_cache_size

    model = PolicyLikelihood.from_file(Path(a.network), device=a.device, average_symmetries=a.average_symmetries,
                                       legal_only=a.legal_only, max_batch=a.max_batch, precision=a.precision)
    return PositionEvaluator(model, cache_size=default_cache_size(model.device) if a.cache_size is None
                             else a.cache_size)


def _settings(a: argparse.Namespace, cfg) -> str:
    if cfg.method == "beam":
        return f"network {a.network}; beam search, width {cfg.beam_width}; precision {a.precision}"
    beam = f"beam width {cfg.beam_width}, " if cfg.init == "beam" else ""
    return (f"network {a.network}; {cfg.method}: init {cfg.init}, {beam}neighbour {cfg.neighbour}, "
            f"{cfg.iterations} iterations, {cfg.trials} trials, T {cfg.t_start}->{cfg.t_end} ({cfg.schedule}), seed {cfg.seed}, "
            f"precision {a.precision}")


def cmd_infer_set(a: argparse.Namespace) -> int:
    import json

    from .arrangements import load_arrangements
    from .inference import infer_set, load_results, write_table

    arrs = load_arrangements(Path(a.arrangements))
    if not arrs:
        raise ValueError(f"{a.arrangements}: no arrangements")
    cfg = _anneal_config(a, arrs[0].n)
    evaluator = _evaluator(a)
    stats = infer_set(Path(a.arrangements), Path(a.out), evaluator, cfg, chunk=a.chunk, progress=not a.quiet)
    settings = _settings(a, cfg)
    write_table(load_results(Path(a.out)), Path(a.table), Path(a.sgf_dir) if a.sgf_dir else None,
                network=a.network, settings=settings)
    if a.stats:
        Path(a.stats).write_text(json.dumps(stats.__dict__ | {"settings": settings, "precision": a.precision,
                                                              "device": str(evaluator.device)}, indent=2) + "\n")
    return 0


def cmd_infer(a: argparse.Namespace) -> int:
    from . import coords
    from .arrangements import Arrangement
    from .inference import check_position, position_from_sgf, write_sgf

    black, white = position_from_sgf(Path(a.position), a.moves)
    check_position(black, white, a.position)
    n = len(black) + len(white)
    cfg = _anneal_config(a, n)
    arr = Arrangement(id="position", set="cli", n=n, black=sorted(coords.to_sgf(p) for p in black),
                      white=sorted(coords.to_sgf(p) for p in white), actual=[])
    row = _infer_one(arr, cfg, a)
    write_sgf(Path(a.output), row["inferred"],
              f"moveorder: inferred order of play for {a.position}. LGM {row['lgm']:.4f}; "
              f"trials {', '.join(f'{x:.4f}' for x in row['trial_lgms'])}. {_settings(a, cfg)}")
    print(" ".join(coords.to_gtp(coords.from_sgf(m)) for m in row["inferred"]))
    print(f"LGM {row['lgm']:.4f}  ->  {a.output}")
    return 0


def _infer_one(arr, cfg, a):
    from .annealing import anneal
    from .inference import best_of_trials, lz_indices, progress_bar

    with progress_bar(cfg.iterations, "infer", enabled=not a.quiet) as bar:
        trials = anneal(_evaluator(a), [(lz_indices(arr.black), lz_indices(arr.white))], cfg, progress=bar)[0]
    return best_of_trials(trials, arr.n)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: expected a whole number of at least 1")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: expected a whole number of at least 0")
    return value


def _add_anneal_options(s: argparse.ArgumentParser) -> None:
    from .settings import CACHE_SLOTS, INITS, METHODS, NEIGHBOURS, PAPER_ITERATIONS, PRECISIONS, SCHEDULES, AnnealConfig

    d = AnnealConfig()
    paper = ", ".join(f"{v:,} for {k} moves" for k, v in PAPER_ITERATIONS.items())
    s.add_argument("--network", required=True, help="Leela Zero weights (.txt/.gz/.zip) or a moveorder .pt")
    s.add_argument("--iterations", type=_positive_int, default=None,
                   help=f"iterations per trial (default: the paper's, {paper}; other lengths the nearest's)")
    s.add_argument("--trials", type=_positive_int, default=d.trials,
                   help="independent chains per arrangement; the most likely result is kept (default: %(default)s)")
    s.add_argument("--method", choices=METHODS, default=d.method,
                   help="anneal: the paper's; beam: beam search alone; beam+anneal: annealing started from the "
                   "beam's best orders, one a trial (default: %(default)s)")
    s.add_argument("--beam-width", type=_positive_int, default=d.beam_width,
                   help="prefixes the beam keeps per move number (method beam, init beam) (default: %(default)s)")
    s.add_argument("--init", choices=INITS, default=d.init, help="initial order (default: %(default)s)")
    s.add_argument("--neighbour", choices=NEIGHBOURS, default=d.neighbour,
                   help="neighbour operator; mix = swp2, mov2, rot3 in turn (default: %(default)s)")
    s.add_argument("--t-start", type=float, default=d.t_start, help="temperature at the first iteration "
                   "(default: %(default)s)")
    s.add_argument("--t-end", type=float, default=d.t_end, help="temperature at the last iteration "
                   "(default: %(default)s)")
    s.add_argument("--schedule", choices=SCHEDULES, default=d.schedule,
                   help="how the temperature falls (default: %(default)s)")
    s.add_argument("--seed", type=int, default=d.seed, help="every random draw follows from it "
                   "(default: %(default)s)")
    s.add_argument("--cache-size", type=_non_negative_int, default=None,
                   help=f"slots of the position cache, 1.4 kB each; 0: no cache (default: {CACHE_SLOTS} on a CPU, "
                   "where it pays; 0 on a GPU, where it is not measured yet)")
    s.add_argument("--average-symmetries", action="store_true", help="mean of the 8 symmetries' softmax")
    s.add_argument("--legal-only", action="store_true", help="renormalise over empty points and pass")
    s.add_argument("--precision", choices=PRECISIONS, default=PRECISIONS[0],
                   help="network arithmetic; tf32 needs a CUDA device (default: %(default)s)")
    s.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ... (default: a GPU if there is one)")
    s.add_argument("--max-batch", type=_positive_int, default=None,
                   help="positions per network call (default: 64 on a CPU, 1024 on a GPU)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")


# --- KataGo -------------------------------------------------------------------------

def cmd_install_katago(a: argparse.Namespace) -> int:
    from .katago_install import install_from_katrain, link_user_binary

    if a.binary:
        link_user_binary(Path(a.binary), Path(a.dest))
    else:
        install_from_katrain(Path(a.dest), Path(a.wheel) if a.wheel else None)
    return 0


def cmd_score(a: argparse.Namespace) -> int:
    from .inference import load_results
    from .katago import AnalysisCache, KataGoEngine, analysis_config, default_env
    from .scoring import score_results, write_scores

    results = load_results(Path(a.results))
    cfg = analysis_config(Path(a.work_dir) / "analysis.cfg", Path(a.tuner) if a.tuner else None,
                          threads=a.threads, max_batch=a.max_batch)
    settings = {"katago_model": Path(a.model).name, "visits": a.visits, "rules": a.rules,
                "delta_max": a.delta_max, "clamp": a.clamp, "max_batch": a.max_batch}
    with KataGoEngine.for_model(Path(a.katago), Path(a.model), cfg, stderr_log=Path(a.work_dir) / "stderr.log",
                                timeout=a.timeout, env=default_env()) as engine:
        out = score_results(results, engine, AnalysisCache(Path(a.cache) if a.cache else None), a.visits,
                            a.model, rules=a.rules, default_komi=a.komi, delta_max=a.delta_max, clamp=a.clamp)
    write_scores(out, Path(a.table), Path(a.moves_table), Path(a.stats) if a.stats else None, settings)
    log.info("%d positions, %d distinct, %d analysed in %.1f s", out["positions"], out["unique"],
             out["analysed"], out["seconds"])
    return 0


# --- figures and tables ---------------------------------------------------------------

def cmd_report(a: argparse.Namespace) -> int:
    from .report import make_report

    entries = [(s, int(n), Path(i), Path(c)) for s, n, i, c in a.entry]
    datasets = dict(kv.split("=", 1) for kv in a.dataset)
    make_report(entries, Path(a.paper), Path(a.out_dir), Path(a.figures), a.network, datasets, a.note,
                a.examples)
    return 0


def cmd_sweep_summary(a: argparse.Namespace) -> int:
    import pandas as pd
    import yaml

    from .metrics import summarize
    from .plots import ablation_bars

    rows, values = [], {}
    for label, path in a.run:
        row = {"run": label, "path": path, **summarize(pd.read_csv(path))}
        rows.append(row)
        values[label.split("=", 1)[-1] if label.count("=") == 1 else label] = row[a.metric]
    pd.DataFrame(rows).to_csv(a.table, index=False)
    paper = None
    if a.paper_key:
        paper = yaml.safe_load(Path(a.paper).read_text())["ablations"].get(a.paper_key)
    ablation_bars(values, Path(a.figure).with_suffix(""), a.metric.replace("_", " "), f"sweep {a.name}", paper)
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

    s = sub.add_parser("train-policy", help="train a Leela-Zero-architecture policy network on a pool")
    s.add_argument("--pool", required=True, help="JSONL records (the data stage's training pool)")
    s.add_argument("--out-dir", required=True, help="writes model.pt, policy.txt.gz, metrics.json")
    s.add_argument("--blocks", type=int, default=4)
    s.add_argument("--filters", type=int, default=32)
    s.add_argument("--steps", type=int, default=3000)
    s.add_argument("--batch-size", type=int, default=128)
    s.add_argument("--lr", type=float, default=2e-3)
    s.add_argument("--heldout-fraction", type=float, default=0.05)
    s.add_argument("--checkpoint-every", type=int, default=500)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--threads", type=int, default=0)
    s.add_argument("--device", default=None, help="cpu, cuda, ... (default: a GPU if there is one)")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=cmd_train_policy)

    s = sub.add_parser("policy", help="print a network's policy (permille) after GTP moves, like leelaz heatmap")
    s.add_argument("network")
    s.add_argument("moves", nargs="*", help="GTP vertices, Black first")
    s.add_argument("--average", action="store_true", help="average the 8 symmetries")
    s.set_defaults(func=cmd_policy)
    s = sub.add_parser("infer-set", help="infer the order of play for every arrangement of a file")
    s.add_argument("--arrangements", required=True)
    s.add_argument("--out", required=True, help="JSONL, one result per arrangement (resumed if present)")
    s.add_argument("--table", required=True, help="CSV table")
    s.add_argument("--sgf-dir", default="", help="write each inferred sequence as an SGF file here")
    s.add_argument("--stats", default="", help="JSON: evaluations, cache hits, time")
    s.add_argument("--chunk", type=_positive_int, default=20,
                   help="arrangements per batch (and per resume unit) (default: %(default)s)")
    _add_anneal_options(s)
    s.set_defaults(func=cmd_infer_set)

    s = sub.add_parser("infer", help="infer how one position was played: SGF in, ordered SGF out")
    s.add_argument("position", help="SGF: setup stones (AB/AW), or a game record with --moves")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--moves", type=int, default=None, help="take the record's position after this many moves")
    _add_anneal_options(s)
    s.set_defaults(func=cmd_infer)
    s = sub.add_parser("install-katago", help="install KataGo (from the katrain wheel, or a binary you have)")
    s.add_argument("--dest", required=True, help="folder; writes DEST/bin/katago, models/, opencl-tune.txt")
    s.add_argument("--binary", default="", help="use this KataGo binary instead of the katrain wheel's")
    s.add_argument("--wheel", default="", help="a katrain-1.20.0 wheel already downloaded")
    s.set_defaults(func=cmd_install_katago)
    s = sub.add_parser("score", help="KataGo losses of the actual and inferred sequences of an inference result")
    s.add_argument("--results", required=True, help="JSONL from infer-set")
    s.add_argument("--katago", required=True, help="KataGo binary (or the installed wrapper)")
    s.add_argument("--model", required=True)
    s.add_argument("--tuner", default="", help="OpenCL tuning file (skips KataGo's autotuning)")
    s.add_argument("--visits", type=int, default=16)
    s.add_argument("--rules", default="chinese")
    s.add_argument("--komi", type=float, default=7.5, help="komi when a record gives none")
    s.add_argument("--delta-max", choices=["best_move", "root"], default="best_move")
    s.add_argument("--clamp", action="store_true", help="clamp each move's loss at zero")
    s.add_argument("--threads", type=int, default=2, help="KataGo analysis threads")
    s.add_argument("--max-batch", type=int, default=1,
                   help="KataGo's nnMaxBatchSize; 1 (default) gives the same results on every run")
    s.add_argument("--timeout", type=float, default=600)
    s.add_argument("--cache", default="", help="JSONL cache of finished analyses (a rerun resumes from it)")
    s.add_argument("--work-dir", required=True, help="for the engine's config and stderr log")
    s.add_argument("--table", required=True)
    s.add_argument("--moves-table", required=True)
    s.add_argument("--stats", default="")
    s.set_defaults(func=cmd_score)
    s = sub.add_parser("report", help="summary tables, the paper comparison and every figure of a run")
    s.add_argument("--entry", nargs=4, action="append", required=True,
                   metavar=("SET", "N", "INFERRED_CSV", "SCORED_CSV"))
    s.add_argument("--paper", required=True, help="the paper's published numbers (config/paper_results.yaml)")
    s.add_argument("--out-dir", required=True, help="summary.csv/.md, paper_comparison.csv/.md")
    s.add_argument("--figures", required=True)
    s.add_argument("--network", default="")
    s.add_argument("--dataset", nargs="*", default=[], help="SET=description pairs for the tables")
    s.add_argument("--note", default="", help="a line naming the configuration, printed under figures")
    s.add_argument("--examples", type=int, default=3)
    s.set_defaults(func=cmd_report)
    s = sub.add_parser("sweep-summary", help="aggregate the runs of a sweep into a table and an ablation figure")
    s.add_argument("--name", required=True)
    s.add_argument("--run", nargs=2, action="append", required=True, metavar=("LABEL", "INFERRED_CSV"))
    s.add_argument("--metric", default="lgm_slope")
    s.add_argument("--paper", default="")
    s.add_argument("--paper-key", default="")
    s.add_argument("--table", required=True)
    s.add_argument("--figure", required=True, help="PNG path (a PDF is written beside it)")
    s.set_defaults(func=cmd_sweep_summary)
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
