"""The paper's territory loss, from plain numbers.

Loss of move ``m_i`` = ``delta_max_i - delta_i`` where, from the mover's side:

* ``delta_max_i`` is the best score lead among the moves at the position
  before ``m_i``: the largest ``scoreLead`` of the analysed moves there
  (``"best_move"``, the paper's "maximum among moves", the default), or the
  position's own root value (``"root"``, steadier at very few visits);
* ``delta_i`` is the score lead of ``m_i`` itself: the root score lead of the
  position *after* ``m_i``, which is from the opponent's side, negated.

Loss of a sequence = mean over its moves.  Score leads are in points.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

DELTA_MAX_SOURCES = ("best_move", "root")


def compact_analysis(reply: Dict) -> Dict:
    """The numbers of one KataGo analysis reply that the loss needs (and a little for reading)."""
    infos = reply.get("moveInfos") or []
    root = reply["rootInfo"]
    return {
        "root_lead": float(root["scoreLead"]),
        "best_lead": max((float(m["scoreLead"]) for m in infos), default=float(root["scoreLead"])),
        "best_move": min(infos, key=lambda m: m.get("order", 0))["move"] if infos else "",
        "visits": int(root.get("visits", 0)),
        "winrate": float(root.get("winrate", 0.5)),
    }


def move_losses(
    before: Sequence[Dict], after: Sequence[Dict], delta_max: str = "best_move", clamp: bool = False
) -> List[Dict]:
    """Per-move loss rows for a sequence: ``before[i]`` analyses the position before move i, ``after[i]`` after it."""
    if delta_max not in DELTA_MAX_SOURCES:
        raise ValueError(f"delta_max {delta_max!r}: expected one of {DELTA_MAX_SOURCES}")
    if len(before) != len(after):
        raise ValueError("before and after must have one analysis per move")
    rows = []
    for b, a in zip(before, after):
        dmax = b["best_lead"] if delta_max == "best_move" else b["root_lead"]
        delta = -a["root_lead"]
        loss = dmax - delta
        rows.append({"delta_max": dmax, "delta": delta, "loss": max(0.0, loss) if clamp else loss})
    return rows


def sequence_loss(rows: Sequence[Dict]) -> float:
    """Mean loss over a sequence's moves."""
    if not rows:
        raise ValueError("a sequence with no moves has no loss")
    return sum(r["loss"] for r in rows) / len(rows)
