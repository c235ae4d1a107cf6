"""How sure the answers are, measured: the calibration of a network for one search, fitted on games in no
evaluation set, and checked on the evaluation sets (docs/results.md, "How sure an answer is").

    # the calibration games: Fox pro and KGS records outside Pro20/40, KGS20/40 and the other 100 pro openings
    python bench/player.py others --records data/records/pro/qualified.jsonl \
        --exclude data/arrangements/pro/20m.jsonl --exclude data/arrangements/pro-other/20m.jsonl \
        --set pro-calibration --count 200 --seed 61 --lengths 20 --out-dir data/calibration/pro
    (the same with --count 100 --lengths 40; and for kgs with --exclude data/arrangements/kgs/20m.jsonl)
    python bench/confidence.py infer --work runs/confidence --sets calibration --calibration none
    python bench/confidence.py fit --work runs/confidence \
        --out src/moveorder/nets/shipped/tygem-6x128.calibration.json
    python bench/confidence.py infer --work runs/confidence --sets evaluation
    python bench/confidence.py check --work runs/confidence --figures docs/figures
    # the same of a workflow run's answers (config/cpu.yaml's):
    python bench/confidence.py check --work runs/confidence \
        --run results/inferred/tygem-6x128/beam32f1-turnseats --figures docs/figures/cpu-6x128

``infer`` runs ``moveorder infer-set`` (the code path every answer takes) on each set with the search of
``--search`` (default: the player's, ``moveorder infer``'s default), one set after another, each
resumable; ``fit`` runs ``moveorder calibrate`` on the calibration sets' answers; ``check`` reads the
chances the evaluation sets' answers stated and prints, per set and pooled, the answers, exact ones,
mean stated chance, expected calibration error (10 bins), Brier score, AUROC, and the answers stated
at 70% or more with how many were exact; the same for each move's chance; and draws the reliability
diagrams (``reliability_orders``, ``reliability_moves``).  ``--rejudge network`` works the chances out
again from each answer's evidence with the network's calibration as it is now (the functions infer-set
calls), for answers written before the calibration was fitted.
"""

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

from moveorder.report import metrics, plots
from moveorder.report.calibration import how_sure
from moveorder.report.summary import to_markdown
from moveorder.search.results import load_results

MOVEORDER = [sys.executable, "-m", "moveorder"]
#: The player's default search (moveorder infer --quality fast), as infer-set options.
PLAYER = "--method beam --beam-width 32 --beam-future 1 --orientations seats"
CALIBRATION = {f"cal-{lv}-{n}": f"data/calibration/{lv}/{n}m.jsonl" for lv in ("pro", "kgs") for n in (20, 40)}
EVALUATION = {f"{s}-{n}": f"data/arrangements/{s}/{n}m.jsonl" for n in (20, 40) for s in ("pro", "kgs", "pro-other")}
NAMES = {"pro": "Pro", "kgs": "KGS", "pro-other": "other pro"}


def folder(a) -> Path:
    return Path(a.work) / a.label


def infer(a):
    sets = CALIBRATION if a.sets == "calibration" else EVALUATION
    out = folder(a)
    out.mkdir(parents=True, exist_ok=True)
    for name, path in sets.items():
        if (out / f"{name}.csv").exists():
            print(f"{name}: done")
            continue
        cmd = MOVEORDER + ["infer-set", "--arrangements", path, "--out", str(out / f"{name}.jsonl")]
        cmd += ["--table", str(out / f"{name}.csv"), "--network", a.network, "--precision", a.precision, "--quiet"]
        cmd += a.search.split() + (["--calibration", a.calibration] if a.calibration else [])
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


def fit(a):
    files = [str(folder(a) / f"{name}.jsonl") for name in CALIBRATION]
    subprocess.run(MOVEORDER + ["calibrate", "--results", *files, "--network", a.network, "--out", a.out], check=True)


def _label(name: str) -> str:
    s, n = name.rsplit("-", 1)
    return f"{NAMES[s]}{n}"


def judged(rows, fit):
    """Each row's chances as infer-set states them with ``fit`` (the same functions, from the evidence the
    row keeps): a calibration fitted after the answers were written is checked without searching again."""
    return [
        r | {"chance": fit.chance(r["evidence"]), "move_chances": fit.move_chances(r["evidence"])}
        if r.get("evidence")
        else r
        for r in rows
    ]


def check(a):
    from moveorder.nets.shipped import resolve
    from moveorder.search.confidence import Calibration, calibration_for

    out = folder(a)
    if a.run:  # a workflow run's folder: SET/Nm.jsonl, config/cpu.yaml's sets and lengths
        files = {f"{s}-{n}": Path(a.run) / s / f"{n}m.jsonl" for n in (20, 40) for s in ("pro", "kgs")}
    else:
        files = {name: out / f"{name}.jsonl" for name in EVALUATION}
    rows = {name: load_results(f) for name, f in files.items() if f.exists()}
    if not rows:
        raise SystemExit(f"check: none of {', '.join(map(str, files.values()))} exists")
    if a.rejudge:
        cal = Calibration.load(Path(a.rejudge)) if a.rejudge != "network" else calibration_for(resolve(a.network))
        keys = {r["evidence"]["search"] for rs in rows.values() for r in rs}
        (key,) = keys
        rows = {name: judged(rs, cal.fits[key]) for name, rs in rows.items()}
        print(f"chances from the evidence with {a.rejudge}'s fit {key}")
    checked = how_sure({_label(name): (int(name.rsplit("-", 1)[1]), rs) for name, rs in rows.items()})
    if checked["unstated"]:
        print("answers without a chance (left out):", {k: v[0] for k, v in checked["unstated"].items()})
    panels, move_panels = checked["order_panels"], checked["move_panels"]
    print("Chance that the order is exact\n")
    print(to_markdown(checked["orders"]))
    print("Chance that a move's number is right\n")
    print(to_markdown(checked["moves"]))
    bins = []
    for label, d in panels.items():
        t = metrics.reliability(d["chance"], d["truth"])
        bins.append(t.assign(set=label))
    out.mkdir(parents=True, exist_ok=True)
    pd.concat(bins).to_csv(out / f"{'run-' if a.run else ''}reliability_bins.csv", index=False)
    if a.figures:
        note = (
            f"{a.run}: the chances the run stated"
            if a.run
            else f"{a.network}, {a.label}; chances from the calibration beside the network"
        )
        plots.reliability_diagram(panels, Path(a.figures) / "reliability_orders", note)
        plots.reliability_diagram(
            move_panels, Path(a.figures) / "reliability_moves", note, what="the move's number right"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("infer", "fit", "check"):
        s = sub.add_parser(name)
        s.add_argument("--work", required=True)
        s.add_argument("--label", default="beam32f1-seats", help="the search's folder under --work")
        s.add_argument("--network", default="tygem-6x128")
    i = sub.choices["infer"]
    i.add_argument("--sets", choices=("calibration", "evaluation"), required=True)
    i.add_argument("--search", default=PLAYER, help="infer-set's search options")
    i.add_argument("--precision", default="bfloat16")
    i.add_argument("--calibration", default="", help="infer-set's --calibration (default: the network's)")
    sub.choices["fit"].add_argument("--out", required=True)
    c = sub.choices["check"]
    c.add_argument("--figures", default="")
    c.add_argument(
        "--run",
        default="",
        help="a workflow run's folder (results/inferred/NETWORK/LABEL): its answers of pro and kgs at 20 and 40 "
        "moves (config/cpu.yaml's sets) instead of --work's",
    )
    c.add_argument(
        "--rejudge",
        default="",
        help="'network' (its calibration now) or a calibration file: the chances worked out again from each "
        "answer's evidence (default: as infer-set wrote them)",
    )
    a = p.parse_args()
    {"infer": infer, "fit": fit, "check": check}[a.cmd](a)


if __name__ == "__main__":
    main()
