"""The paper's numbers, from tables of per-arrangement results (pure functions).

* :func:`slope_through_origin`: least-squares slope of ``y = a x`` (the paper's regression lines,
  intercept fixed at 0): ``a = sum(x y) / sum(x x)``.
* :func:`share_on_or_above`: share of points with ``y >= x``; ties count, as the paper's "on or
  above" says, with a relative tolerance so that an exact match whose two likelihoods were summed
  in different orders still counts as on the line.
* :func:`auroc`, :func:`brier`, :func:`reliability` and :func:`expected_calibration_error`: how well
  stated chances (of an answer being exact, of a move's number being right) match what happened;
  :func:`stated_chances`: all of them in one row of a table.
* :func:`summarize`: one row of the summary table for a set and length (where the answers stated how
  sure they were, the mean stated chance beside the exact-match rate of those answers); for a set with captures also
  the share of positions the search found a sequence for and the mean share of captured stones'
  points placed as in the game (among those found).
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np
import pandas as pd

TIE_RTOL = 1e-9


def slope_through_origin(x, y) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) == 0 or not np.any(x):
        raise ValueError("need at least one non-zero x for a slope")
    return float(np.dot(x, y) / np.dot(x, x))


def share_on_or_above(x, y, rtol: float = TIE_RTOL) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.mean(y >= x - rtol * np.abs(x)))


def auroc(score, truth) -> float:
    """The chance that a true case scores above a false one (ties count half): the Mann-Whitney
    statistic over all pairs; NaN without both kinds."""
    score, truth = np.asarray(score, dtype=float), np.asarray(truth, dtype=bool)
    pos, neg = np.sort(score[truth]), score[~truth]
    if not len(pos) or not len(neg):
        return float("nan")
    below = np.searchsorted(pos, neg, side="right")  # positives at or below each negative
    ties = below - np.searchsorted(pos, neg, side="left")
    return float(1.0 - (below.sum() - 0.5 * ties.sum()) / (len(pos) * len(neg)))


def brier(chance, truth) -> float:
    """The mean squared difference between stated chances and what happened (0 or 1)."""
    chance, truth = np.asarray(chance, dtype=float), np.asarray(truth, dtype=float)
    return float(np.mean((chance - truth) ** 2))


#: Bins of a reliability diagram: stated chances 0-10%, 10-20%, ... 90-100%.
RELIABILITY_BINS = 10


def reliability(chance, truth, bins: int = RELIABILITY_BINS) -> pd.DataFrame:
    """Stated chances in ``bins`` equal bins (the last closed): each bin's ``low``, ``high``, ``count``,
    mean stated chance (``stated``) and the share that happened (``observed``); NaN in empty bins."""
    chance, truth = np.asarray(chance, dtype=float), np.asarray(truth, dtype=float)
    idx = np.minimum((chance * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        m = idx == b
        rows.append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "count": int(m.sum()),
                "stated": float(chance[m].mean()) if m.any() else float("nan"),
                "observed": float(truth[m].mean()) if m.any() else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def expected_calibration_error(chance, truth, bins: int = RELIABILITY_BINS) -> float:
    """The count-weighted mean gap between stated and observed in :func:`reliability`'s bins."""
    table = reliability(chance, truth, bins)
    used = table[table["count"] > 0]
    return float((used["count"] * (used["stated"] - used["observed"]).abs()).sum() / used["count"].sum())


#: An answer stated "sure" at this chance or more (the reliability table's high-confidence column).
HIGH_CHANCE = 0.7


def stated_chances(label: str, chance, truth) -> Dict[str, object]:
    """One row of a table of how sure answers were: ``answers``, ``exact`` (how many happened), the
    mean stated ``chance``, the ``exact rate``, ``ECE``, ``Brier``, ``AUROC``, how many were stated at
    :data:`HIGH_CHANCE` or more and the share of those that happened (NaN where none)."""
    chance, truth = np.asarray(chance, dtype=float), np.asarray(truth, dtype=bool)
    high = chance >= HIGH_CHANCE
    return {
        "set": label,
        "answers": len(chance),
        "exact": int(truth.sum()),
        "mean chance": float(chance.mean()),
        "exact rate": float(truth.mean()),
        "ECE": expected_calibration_error(chance, truth),
        "Brier": brier(chance, truth),
        "AUROC": auroc(chance, truth),
        f"stated >= {HIGH_CHANCE:.0%}": int(high.sum()),
        "exact of those": float(truth[high].mean()) if high.any() else float("nan"),
    }


def summarize(inferred: pd.DataFrame, scored: Optional[pd.DataFrame] = None) -> Dict[str, object]:
    """Per set and length: the paper's figures of merit (loss columns only with ``scored``)."""
    row: Dict[str, object] = {
        "arrangements": len(inferred),
        "share_on_or_above": share_on_or_above(inferred["actual_lgm"], inferred["lgm"]),
        "lgm_slope": slope_through_origin(inferred["actual_lgm"], inferred["lgm"]),
        "exact_match_rate": float(inferred["exact_match"].mean()),
        "mean_matching_prefix": float(inferred["matching_prefix"].mean()),
        "mean_matching_moves": float(inferred["matching_moves"].mean()),
        "mean_trial_std": float(inferred["trial_std"].mean()),
        "mean_lgm_inferred": float(inferred["lgm"].mean()),
        "mean_lgm_actual": float(inferred["actual_lgm"].mean()),
    }
    if "chance" in inferred.columns and inferred["chance"].notna().any():  # how sure the answers said they were
        stated = inferred[inferred["chance"].notna()]
        row["chance_stated_share"] = len(stated) / len(inferred)
        row["mean_chance"] = float(stated["chance"].mean())
        row["exact_match_rate_stated"] = float(stated["exact_match"].mean())
        row["chance_auroc"] = auroc(stated["chance"], stated["exact_match"].astype(bool))
    if "found" in inferred.columns:  # a set with captures (moveorder.search.captures): rows without prisoners are blank
        has = inferred["found"].notna()
        row["found_share"] = float(inferred.loc[has, "found"].astype(bool).mean()) if has.any() else 1.0
        placed = inferred.loc[has & inferred["found"].fillna(False).astype(bool), "captured_placed"]
        row["mean_captured_placed"] = float(placed.mean()) if len(placed) else float("nan")
    if scored is not None and len(scored):
        row.update(
            {
                "loss_slope": slope_through_origin(scored["loss_actual"], scored["loss_inferred"]),
                "mean_loss_actual": float(scored["loss_actual"].mean()),
                "mean_loss_inferred": float(scored["loss_inferred"].mean()),
                "share_loss_lower": float(np.mean(scored["loss_inferred"] < scored["loss_actual"])),
            }
        )
    return row


def better_both_ways(scored: pd.DataFrame) -> pd.DataFrame:
    """Arrangements whose inferred sequence has a higher likelihood *and* a lower loss (the paper's Fig. 5)."""
    mask = (scored["lgm"] > scored["actual_lgm"]) & (scored["loss_inferred"] < scored["loss_actual"])
    return scored[mask].assign(gain=lambda d: d["lgm"] / d["actual_lgm"]).sort_values("gain", ascending=False)
