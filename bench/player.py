"""The one-position tool as a player meets it: exact orders, matching prefix and seconds a position for
each network x precision x beam width, and ``moveorder infer``'s own wall time end to end.

    python bench/player.py others --records data/records/pro/qualified.jsonl \
        --exclude data/arrangements/pro/20m.jsonl --set pro-other --out-dir data/arrangements/pro-other
    python bench/player.py table --arrangements data/arrangements/pro/20m.jsonl --games 100 \
        --network tygem --network tygem-6x128 --precision float32 --precision bfloat16 \
        --width 16 --width 32 --threads 2 --work /tmp/player --csv table.csv
    python bench/player.py infer --arrangements data/arrangements/pro/40m.jsonl --games 5 --work /tmp/infer
        [--option=--X ...] [--against=--Y ...]

``others`` draws evaluation games outside a configuration's own set: the qualified records whose
move sequence is none of the excluded arrangements' games (nor starts with one's moves), ``--count``
of them drawn with ``--seed``, clipped to each length (``moveorder.data.arrangements.clip``).

``table`` runs ``moveorder infer-set`` (the command a pipeline run uses, so the figures are those of the
code path users run) once per cell, each in a process of its own with ``--threads`` torch threads, and
reads exact matches and matching prefixes from its results and the search's seconds from its
``--stats``.  A cell already in ``--work`` is read back, not run again.

``infer`` writes each arrangement as an SGF of setup stones and times ``moveorder infer POSITION -o
OUT`` with the given options (none: the default) and the arrangement's prisoners (``--prisoners``, where
it has any), process start, network load and output included; where the tool finds no order it
refuses the position (exit 2, the reason on stderr), which is timed and counted all the same, the reason
written to the output file.  ``--against``: each position also with
those options added, the two runs in turn (which goes first alternates, so a machine's drift falls on
both), their answers compared byte for byte, and the ratio of their times printed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from moveorder.data.arrangements import clip, dedupe, load_arrangements, write_jsonl
from moveorder.data.records import load_records
from moveorder.settings import ORIENTATIONS

MOVEORDER = [sys.executable, "-m", "moveorder"]
REFUSED = 2  # moveorder's exit status for an input it refuses with the reason
NOT_FOUND = "no legal sequence"  # in its reason where it found no order (or proved there is none)


def others(a):
    excluded = [x for path in a.exclude for x in load_arrangements(path)]
    starts = {"".join(x.actual) for x in excluded}
    records, _ = dedupe(sorted(load_records(a.records), key=lambda r: r.source))
    free = [r for r in records if not any(r.moves.startswith(s) or s.startswith(r.moves) for s in starts)]
    if len(free) < a.count:
        raise SystemExit(f"{a.records}: only {len(free)} records outside the excluded games, {a.count} asked")
    idx = sorted(int(i) for i in np.random.default_rng(a.seed).choice(len(free), size=a.count, replace=False))
    chosen = [free[i] for i in idx]
    for n in a.lengths:
        write_jsonl(Path(a.out_dir) / f"{n}m.jsonl", (clip(r, n, a.set) for r in chosen))
    print(f"{len(records)} records, {len(free)} outside the {len(excluded)} excluded; {a.count} drawn -> {a.out_dir}")


def cell(a, network, precision, width, batch, turns="given"):
    name = (
        f"{Path(network).name}-{precision}-w{width}"
        + (f"-b{batch}" if batch else "")
        + ("" if turns == "given" else f"-{turns}")
    )
    out, stats = Path(a.work) / f"{name}.jsonl", Path(a.work) / f"{name}.stats.json"
    if not stats.exists():
        arrs = Path(a.work) / "arrangements.jsonl"
        cmd = MOVEORDER + [
            "infer-set", "--arrangements", str(arrs), "--out", str(out), "--table", str(out.with_suffix(".csv")),
            "--stats", str(stats), "--network", network, "--method", "beam", "--beam-width", str(width),
            "--precision", precision, "--orientations", turns, "--quiet",
        ] + (["--max-batch", str(batch)] if batch else [])  # fmt: skip
        env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "MKL_NUM_THREADS": str(a.threads)}
        subprocess.run(cmd, check=True, env=env)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    st = json.loads(stats.read_text())
    return {
        "network": network,
        "precision": precision,
        "width": width,
        "orientations": turns,
        "max_batch": batch or "default",
        "positions": len(rows),
        "exact": sum(r["exact_match"] for r in rows) / len(rows),
        "prefix": statistics.mean(r["matching_prefix"] for r in rows),
        "moves": statistics.mean(r["matching_moves"] for r in rows),
        "evaluations": st["evaluations"] / len(rows),
        "seconds": st["seconds"] / len(rows),
    }


def table(a):
    Path(a.work).mkdir(parents=True, exist_ok=True)
    lines = [x for x in Path(a.arrangements).read_text(encoding="utf-8").split("\n") if x][: a.games]
    arrs = Path(a.work) / "arrangements.jsonl"
    if arrs.exists() and arrs.read_text(encoding="utf-8").split("\n")[: len(lines)] != lines:
        raise SystemExit(f"{arrs}: another set of arrangements; give another --work")
    arrs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{a.arrangements}: {len(lines)} arrangements; {a.threads} torch threads a process")
    print(
        "| network | precision | width | orientations | batch | exact | prefix | moves at their number "
        "| evaluations | s / position |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for network in a.network:
        for precision in a.precision:
            for width in a.width:
                for batch in a.max_batch:
                    for turns in a.orientations:
                        r = cell(a, network, precision, width, batch, turns)
                        rows.append(r)
                        print(
                            f"| {network} | {precision} | {width} | {turns} | {r['max_batch']} | {r['exact']:.0%} | "
                            f"{r['prefix']:.2f} | {r['moves']:.2f} | {r['evaluations']:,.0f} | {r['seconds']:.2f} |",
                            flush=True,
                        )
    if a.csv:
        import pandas as pd

        pd.DataFrame(rows).to_csv(a.csv, index=False)


def position_sgf(x) -> str:
    stones = "".join(f"A{c}" + "".join(f"[{p}]" for p in pts) for c, pts in (("B", x.black), ("W", x.white)) if pts)
    return f"(;GM[1]FF[4]SZ[19]KM[{x.komi}]{stones})\n"


def infer(a):
    """``moveorder infer``'s wall time on each position; with ``--against``, a second run of each position
    with those options too, the two run in turn (which goes first alternates), their answers compared."""
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    runs = {"": a.option} | ({"against": a.option + a.against} if a.against else {})
    walls: dict = {name: [] for name in runs}
    refusals: dict = {name: [] for name in runs}
    same = 0
    for k, x in enumerate(load_arrangements(a.arrangements)[: a.games]):
        pos = work / f"{k}.sgf"
        pos.write_text(position_sgf(x))
        taken = ["--prisoners", *map(str, x.prisoners)] if any(x.prisoners) else []  # after captures
        order = list(runs) if k % 2 == 0 else list(runs)[::-1]
        for name in order:
            out = work / f"{k}-out{'-' + name if name else ''}.sgf"
            out.unlink(missing_ok=True)
            t0 = time.perf_counter()
            done = subprocess.run(
                MOVEORDER + ["infer", str(pos), "-o", str(out)] + taken + runs[name], capture_output=True, text=True
            )
            walls[name].append(time.perf_counter() - t0)
            if done.returncode == REFUSED and NOT_FOUND in done.stderr:  # the tool's answer then: timed all the same
                refusals[name].append(x.id)
                reason = done.stderr.strip().splitlines()[-1].split(" ERROR ", 1)[-1]  # the log line's time left out
                out.write_text(f"refused: {reason}\n")
            elif done.returncode:
                sys.exit(
                    f"{x.id}: moveorder infer {' '.join(runs[name]) or '(defaults)'} failed (exit {done.returncode}):\n{done.stderr}"
                )
        if a.against:
            same += (work / f"{k}-out.sgf").read_bytes() == (work / f"{k}-out-against.sgf").read_bytes()
        print(
            f"{x.id}: "
            + ", ".join(f"{walls[name][-1]:.1f} s{' (refused)' if x.id in refusals[name] else ''}" for name in runs),
            flush=True,
        )
    for name, options in runs.items():
        w = walls[name]
        print(
            f"moveorder infer {' '.join(options) or '(defaults)'}: {len(w)} positions of {x.n} stones; "
            f"median {statistics.median(w):.1f} s, max {max(w):.1f} s, total {sum(w):.1f} s; "
            f"refused (no order found) {len(refusals[name])}"
        )
    if a.against:
        print(
            f"against / without: {sum(walls['against']) / sum(walls['']):.3f} of the time; "
            f"the same answer (SGF byte for byte) on {same} of {len(walls[''])}"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="verb", required=True)
    o = sub.add_parser("others", help="evaluation games outside a configuration's set")
    o.add_argument("--records", required=True)
    o.add_argument("--exclude", action="append", default=[], help="arrangements whose games to leave out")
    o.add_argument("--set", default="pro-other")
    o.add_argument("--count", type=int, default=100)
    o.add_argument("--seed", type=int, default=20231128)
    o.add_argument("--lengths", type=int, nargs="+", default=[20, 40])
    o.add_argument("--out-dir", required=True)
    t = sub.add_parser("table", help="network x precision x width")
    t.add_argument("--arrangements", required=True)
    t.add_argument("--games", type=int, default=100)
    t.add_argument("--network", action="append", required=True)
    t.add_argument("--precision", action="append", default=None)
    t.add_argument("--width", action="append", type=int, required=True)
    t.add_argument("--max-batch", action="append", type=int, default=None, help="0: infer-set's default")
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--orientations", action="append", choices=tuple(ORIENTATIONS), default=None)
    t.add_argument("--work", required=True, help="folder of each cell's results (reused)")
    t.add_argument("--csv")
    i = sub.add_parser("infer", help="moveorder infer's wall time, end to end")
    i.add_argument("--arrangements", required=True)
    i.add_argument("--games", type=int, default=5)
    i.add_argument("--work", required=True)
    i.add_argument("--option", action="append", default=[], help="an option of moveorder infer (repeat)")
    i.add_argument(
        "--against",
        action="append",
        default=[],
        help="an option of a second run of each position, in turn with the first (repeat); the answers compared",
    )
    a = p.parse_args()
    if a.verb == "table":
        a.precision = a.precision or ["float32"]
        a.max_batch = a.max_batch or [0]
        a.orientations = a.orientations or ["given"]
    {"others": others, "table": table, "infer": infer}[a.verb](a)


if __name__ == "__main__":
    main()
