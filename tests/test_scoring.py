"""moveorder.scoring with the real KataGo: shared prefixes analysed once, a cache that resumes."""

import math

from helpers import KATAGO_SMALL_MODEL as SMALL
from moveorder.katago import AnalysisCache
from moveorder.scoring import score_results


def test_scoring_dedupes_shared_prefixes_and_uses_cache(engine, tmp_path):
    actual = ["pd", "dp", "qp", "dd", "oc", "qj"]
    inferred = ["pd", "dp", "qp", "dd", "qj", "oc"]  # same first four moves
    rows = [
        {
            "id": "g1",
            "set": "t",
            "n": 6,
            "actual": actual,
            "inferred": inferred,
            "lgm": 0.2,
            "actual_lgm": 0.1,
            "exact_match": False,
            "komi": 7.5,
        }
    ]
    cache = AnalysisCache(tmp_path / "cache.jsonl")
    out = score_results(rows, engine, cache, visits=8, model=str(SMALL))
    assert out["positions"] == 14 and out["unique"] == 14 - 5 and out["analysed"] == 9
    row = out["rows"][0]
    assert math.isfinite(row["loss_actual"]) and math.isfinite(row["loss_inferred"])
    assert len(out["moves"]) == 12
    again = score_results(rows, engine, AnalysisCache(tmp_path / "cache.jsonl"), visits=8, model=str(SMALL))
    assert again["analysed"] == 0 and again["rows"] == out["rows"]
