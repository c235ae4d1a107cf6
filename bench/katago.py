"""KataGo analysis speed at 1 visit and at the default visits, and what deduplication saves on a real set.

    python bench/katago.py --results results/inferred/.../pro/20m.jsonl [--visits 1 8] [--games 5]

Runs the real engine with KataGo's small network (tools/katago, installed by scripts/setup.sh).
"""

import argparse
import tempfile
import time
from pathlib import Path

from moveorder.katago.engine import AnalysisCache, KataGoEngine, analysis_config, default_env
from moveorder.katago.scoring import score_results
from moveorder.search.results import load_results

ROOT = Path(__file__).resolve().parents[1] / "tools/katago"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--results", required=True, help="an infer-set JSONL (actual and inferred sequences)")
    p.add_argument("--model", default=str(ROOT / "models/g170-b6c96-s175395328-d26788732.bin.gz"))
    p.add_argument("--visits", type=int, nargs="+", default=[1, 8])
    p.add_argument("--games", type=int, default=5)
    a = p.parse_args()
    rows = load_results(Path(a.results))[: a.games]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = analysis_config(Path(tmp) / "a.cfg", ROOT / "opencl-tune.txt", threads=2)
        with KataGoEngine.for_model(
            ROOT / "bin/katago", Path(a.model), cfg, stderr_log=Path(tmp) / "err.log", env=default_env()
        ) as eng:
            eng.analyze(
                [
                    {
                        "id": "warm",
                        "moves": [],
                        "rules": "chinese",
                        "komi": 7.5,
                        "boardXSize": 19,
                        "boardYSize": 19,
                        "analyzeTurns": [0],
                        "maxVisits": 1,
                    }
                ]
            )
            print(f"{len(rows)} arrangements of {rows[0]['n']} moves, model {Path(a.model).name}")
            print("| visits | positions needed | distinct (deduplicated) | saved | analysed | positions / s |")
            print("|---|---|---|---|---|---|")
            for v in a.visits:
                t0 = time.perf_counter()
                out = score_results(rows, eng, AnalysisCache(None), visits=v, model=a.model)
                dt = time.perf_counter() - t0
                print(
                    f"| {v} | {out['positions']} | {out['unique']} | {1 - out['unique'] / out['positions']:.1%} | "
                    f"{out['analysed']} | {out['analysed'] / dt:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
