"""How sure an answer is: the chance that the order found is the players' own, each move's chance
that its number is right, and the moves whose order the answer cannot tell apart.

The evidence is what the search found anyway: the likeliest distinct complete orders
(:data:`moveorder.settings.CONFIDENCE_ORDERS` of them, best first, with log-likelihoods).
:func:`evidence` reduces them to a few numbers (pure, no network call):

* ``log_share``: log of the best order's share of the likelihood of the orders found, ``ll_1 -
  logsumexp(ll_i)``; 0 when it stands alone, ``-log K`` when ``K`` orders are as likely;
* ``lgm_log``: the best order's mean log-probability a move (the log of its LGM): a position whose
  moves the network finds easy to predict is more often ordered right;
* ``agree``: for each move number, the share of that likelihood held by the orders that put the
  best order's stone there (their count, ``n``, is the position's size).

A :class:`Calibration` turns them into chances: a logistic model of "the order is exact" over
(``log_share``, ``lgm_log``, ``log n``: longer orders are exact less often at the same share), and one of "this stone's number is right" over (``log(1 - agree)``,
``lgm_log``, ``log_share``, and where the move stands: later moves are more often displaced), fitted (:func:`fit`, maximum likelihood by Newton's method with a
small ridge) on answers to positions in no evaluation set.  A calibration belongs to one network
and one search (:func:`search_key`): it is a JSON file beside the network's weights
(:func:`calibration_path`; the shipped networks' in :mod:`moveorder.nets.shipped`), one fit per
search, with the data, the command and the figures of each fit.  Where the search found fewer than
:data:`moveorder.settings.MIN_ORDERS` orders (and fewer than the position has), or no fit matches the
network and search, no chance is stated and the answer's ``chance_note`` says why.

:func:`uncertain_groups` reads the doubtful stretches off the orders: where an alternative nearly as
likely (at least :data:`moveorder.settings.NEARLY` times the best's likelihood) reorders the best order's moves (each shortest stretch holding the same stones, :func:`blocks`) over a move in
doubt (chance below :data:`moveorder.settings.DOUBT`), that stretch is uncertain; overlapping
stretches merge.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from moveorder.settings import DOUBT, MIN_ORDERS, NEARLY, SearchConfig

#: The answer's features, in the order of :attr:`Fit.order_weights` (after the intercept).
ORDER_FEATURES = ("log_share", "lgm_log", "log_moves")
#: A move's features, in the order of :attr:`Fit.move_weights` (after the intercept): ``log(1 - agree)``,
#: the answer's two, and where the move stands: ``log(1 + k)`` and ``k / n`` for move ``k + 1`` of ``n``.
MOVE_FEATURES = ("log_doubt", "lgm_log", "log_share", "log_number", "fraction")
#: ``log(1 - agree)`` is clipped here: a move (nearly) every order found agrees on.
LOG_DOUBT_FLOOR = math.log(1e-3)
#: The ridge of :func:`logistic` (the intercept is not penalised).
RIDGE = 1e-3
#: Suffixes stripped off a network's file name to name its calibration (the longest first).
NETWORK_SUFFIXES = (".txt.gz", ".txt", ".gz", ".zip", ".pt")
CALIBRATION_SUFFIX = ".calibration.json"


def search_key(cfg: SearchConfig) -> Optional[str]:
    """The search a calibration is fitted for: ``beam32f1-seats``; None for a search whose answers
    carry too few orders to calibrate (the annealing keeps its trials' bests only)."""
    if cfg.method != "beam":
        return None
    return f"beam{cfg.beam_width}f{cfg.beam_future:g}-{cfg.orientations}"


def possible_orders(black: int, white: int) -> int:
    """How many orders a capture-free arrangement of ``black`` and ``white`` stones has: b! w!."""
    return math.factorial(black) * math.factorial(white)


def evidence(orders: Sequence[Tuple[Sequence, float]], n: int, possible: Optional[int] = None) -> Dict:
    """What the orders found (best first, each (moves, log-likelihood)) say of the best one.

    ``possible``: how many orders the position has (None: more than any search keeps).  Returns
    ``orders`` (how many), ``all_orders`` (whether they are every order the position has),
    ``log_share``, ``lgm_log`` and ``agree`` (module docstring)."""
    if not orders:
        raise ValueError("no orders: nothing to say how sure an answer is")
    lls = np.array([ll for _, ll in orders], dtype=float)
    best = list(orders[0][0])
    w = np.exp(lls - lls.max())
    total = w.sum()
    agree = [float(sum(wi for (moves, _), wi in zip(orders, w) if moves[k] == best[k]) / total) for k in range(n)]
    return {
        "orders": len(orders),
        "all_orders": possible is not None and len(orders) >= possible,
        "log_share": float(lls[0] - lls.max() - math.log(total)),
        "lgm_log": float(lls[0] / n),
        "agree": [round(a, 6) for a in agree],
    }


def order_features(ev: Dict) -> List[float]:
    return [ev["log_share"], ev["lgm_log"], math.log(len(ev["agree"]))]


def move_features(ev: Dict) -> List[List[float]]:
    n = len(ev["agree"])
    return [
        [math.log(max(1.0 - a, math.exp(LOG_DOUBT_FLOOR))), ev["lgm_log"], ev["log_share"], math.log(1 + k), k / n]
        for k, a in enumerate(ev["agree"])
    ]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=float)))


def logistic(X, y, ridge: float = RIDGE, iterations: int = 100) -> List[float]:
    """Maximum-likelihood logistic regression of ``y`` (0/1) on the columns of ``X``, by Newton's
    method, with ``ridge`` on the weights but not the intercept; [intercept, weights...]."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or len(X) != len(y) or not len(y):
        raise ValueError(f"logistic: {X.shape} features against {y.shape} outcomes")
    A = np.c_[np.ones(len(X)), X]
    penalty = ridge * np.diag(np.r_[0.0, np.ones(X.shape[1])])
    w = np.zeros(A.shape[1])
    for _ in range(iterations):
        p = sigmoid(A @ w)
        grad = A.T @ (p - y) + penalty @ w
        hess = (A * (p * (1 - p))[:, None]).T @ A + penalty + 1e-12 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return [float(v) for v in w]


@dataclass
class Fit:
    """One network's calibration for one search (:func:`search_key`)."""

    order_weights: List[float]  # intercept, then ORDER_FEATURES
    move_weights: List[float]  # intercept, then MOVE_FEATURES
    data: Dict = field(default_factory=dict)  # what it was fitted on: files, answers, exact, the command

    def chance(self, ev: Dict) -> float:
        return float(sigmoid(np.dot(self.order_weights, [1.0, *order_features(ev)])))

    def move_chances(self, ev: Dict) -> List[float]:
        X = np.c_[np.ones(len(ev["agree"])), np.array(move_features(ev))]
        return [float(p) for p in sigmoid(X @ np.asarray(self.move_weights))]


@dataclass
class Calibration:
    """A network's calibrations, one :class:`Fit` per search; a JSON file beside the network."""

    network: str
    fits: Dict[str, Fit] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "Calibration":
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            fits = {
                key: Fit(list(map(float, f["order_weights"])), list(map(float, f["move_weights"])), f.get("data", {}))
                for key, f in raw["fits"].items()
            }
            for key, f in fits.items():
                if len(f.order_weights) != len(ORDER_FEATURES) + 1 or len(f.move_weights) != len(MOVE_FEATURES) + 1:
                    raise ValueError(
                        f"fit {key!r}: expected {len(ORDER_FEATURES) + 1} and {len(MOVE_FEATURES) + 1} weights"
                    )
            return cls(str(raw["network"]), fits)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path}: not a moveorder calibration ({err})") from None

    def save(self, path: Path) -> None:
        raw = {
            "network": self.network,
            "order_features": list(ORDER_FEATURES),
            "move_features": list(MOVE_FEATURES),
            "fits": {
                key: {"order_weights": f.order_weights, "move_weights": f.move_weights, "data": f.data}
                for key, f in sorted(self.fits.items())
            },
        }
        Path(path).write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")


def calibration_path(network: Path) -> Path:
    """Where a network's calibration lives: beside its weights, ``NAME.calibration.json``."""
    network = Path(network)
    name = network.name
    for suffix in NETWORK_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return network.with_name(name + CALIBRATION_SUFFIX)


def calibration_for(network: Path) -> Optional[Calibration]:
    """The calibration beside ``network`` (a weights file), None if there is none."""
    path = calibration_path(network)
    return Calibration.load(path) if path.is_file() else None


def fit(rows: Sequence[Dict], data: Optional[Dict] = None) -> Fit:
    """A :class:`Fit` from answers whose truth is known (infer-set's rows): each row's ``evidence``,
    ``exact_match`` (the order is the game's), and its ``inferred`` and ``actual`` orders (each
    move's number right or not)."""
    rows = [r for r in rows if r.get("evidence")]
    if not rows:
        raise ValueError("no answers with evidence to fit a calibration on")
    y = [bool(r["exact_match"]) for r in rows]
    if all(y) or not any(y):
        raise ValueError(f"{len(rows)} answers, {sum(y)} exact: a calibration needs both exact and other answers")
    order_w = logistic([order_features(r["evidence"]) for r in rows], y)
    X = [x for r in rows for x in move_features(r["evidence"])]
    my = [a == b for r in rows for a, b in zip(r["inferred"], r["actual"])]
    move_w = logistic(X, my)
    return Fit(
        order_w, move_w, dict(data or {}, answers=len(rows), exact=int(sum(y)), moves=len(my), right=int(sum(my)))
    )


def judge(
    orders: Sequence[Tuple[Sequence, float]],
    n: int,
    possible: Optional[int],
    calibration: Optional[Calibration],
    key: Optional[str],
    network: str,
    captures: bool = False,
) -> Dict:
    """What an answer says of how sure it is, from the orders the search found (best first):
    ``evidence`` (:func:`evidence`), ``chance`` (None when none can be stated, ``chance_note``
    saying why), ``move_chances`` (each move's; None with the chance) and ``uncertain`` (the
    doubtful spans, 1-based ``[first, last]``: :func:`uncertain_groups`)."""
    ev = evidence(orders, n, possible) | {"search": key}
    note = None
    f = calibration.fits.get(key) if calibration is not None and key is not None else None
    if captures:
        note = "no chance stated for a position with captures: the calibrations are fitted on capture-free openings"
    elif key is None:
        note = "no chance stated: only the ranked beam (--method beam) keeps enough orders to say how sure it is"
    elif f is None:
        have = ", ".join(sorted(calibration.fits)) if calibration is not None else "none"
        note = (
            f"no chance stated: network {network} has no calibration for this search ({key}; calibrated: {have}); "
            "moveorder calibrate fits one"
        )
    elif ev["orders"] < MIN_ORDERS and not ev["all_orders"]:
        note = (
            f"no chance stated: the search found only {ev['orders']} distinct order"
            f"{'s' if ev['orders'] != 1 else ''}, too few to say how sure the answer is"
        )
    if note is not None:
        return {"evidence": ev, "chance": None, "chance_note": note, "move_chances": None, "uncertain": []}
    moves = f.move_chances(ev)
    return {
        "evidence": ev,
        "chance": f.chance(ev),
        "chance_note": None,
        "move_chances": moves,
        "uncertain": uncertain_groups(orders, moves),
    }


def blocks(order: Sequence, best: Sequence) -> List[Tuple[int, int]]:
    """Where ``order`` reorders ``best``: the shortest stretches (0-based, inclusive) each of which holds
    the same stones in both, in another order; two swaps far apart are two blocks."""
    out, start, a, b = [], None, set(), set()
    for k, (x, y) in enumerate(zip(order, best)):
        if start is None and x == y:
            continue
        if start is None:
            start, a, b = k, set(), set()
        a.add(x)
        b.add(y)
        if a == b:
            out.append((start, k))
            start = None
    if start is not None:  # not the same stones: one block to the end
        out.append((start, len(best) - 1))
    return out


def in_doubt(move_chances: Sequence[float], doubt: float = DOUBT) -> List[int]:
    """The moves (0-based) whose chance of standing at their number is below ``doubt``."""
    return [k for k, p in enumerate(move_chances) if p < doubt]


def uncertain_groups(
    orders: Sequence[Tuple[Sequence, float]], move_chances: Optional[Sequence[float]], doubt: float = DOUBT
) -> List[List[int]]:
    """The stretches of move numbers whose order the answer cannot tell apart: each stretch where an
    alternative nearly as likely as the best (:data:`moveorder.settings.NEARLY`) reorders it
    (:func:`blocks`) over a move in doubt (chance below ``doubt``); overlapping stretches merged;
    1-based ``[first, last]``, in order.  ``orders``: best first."""
    if not move_chances or not orders:
        return []
    doubtful = set(in_doubt(move_chances, doubt))
    if not doubtful:
        return []
    best, top = list(orders[0][0]), orders[0][1]
    spans = []
    for moves, ll in orders[1:]:
        if ll < top + math.log(NEARLY):
            break  # best first: the rest are further still
        for a, b in blocks(moves, best):
            inside = {k for k in doubtful if a <= k <= b}
            if inside:
                spans.append((a, b))
                doubtful -= inside
        if not doubtful:
            break
    merged: List[List[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [[a + 1, b + 1] for a, b in merged]


def groups_text(groups: Sequence[Sequence[int]]) -> str:
    """``moves 8-13 and 17-20``; ``move 5`` for a one-move span (never made by swaps, kept for safety)."""
    parts = [f"{a}-{b}" if b > a else f"{a}" for a, b in groups]
    if not parts:
        return ""
    word = "moves" if len(parts) > 1 or groups[0][1] > groups[0][0] else "move"
    return f"{word} " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])


def chance_line(judged: Dict) -> str:
    """The answer's one line: ``a 46% chance that this is the exact order; moves 8-13 uncertain``; where
    moves are in doubt but no alternative nearly as likely names a stretch, how many:
    ``a 33% chance that this is the exact order; 12 of 40 moves in doubt``."""
    if judged["chance"] is None:
        return judged["chance_note"]
    pct = round(judged["chance"] * 100)
    if pct < 1:
        text = "under a 1% chance that this is the exact order"
    else:
        article = "an" if str(pct).startswith("8") or pct in (11, 18) else "a"
        text = f"{article} {pct}% chance that this is the exact order"
    if judged["uncertain"]:
        text += f"; {groups_text(judged['uncertain'])} uncertain"
    elif judged.get("move_chances"):
        doubtful = len(in_doubt(judged["move_chances"]))
        if doubtful:
            text += f"; {doubtful} of {len(judged['move_chances'])} moves in doubt"
    return text


def move_notes(move_chances: Optional[Sequence[float]], doubt: float = DOUBT) -> Dict[int, str]:
    """The SGF comments of the moves in doubt (0-based index -> text)."""
    return {
        k: f"Move {k + 1} is in doubt: its number is right with a chance of {move_chances[k]:.0%}."
        for k in in_doubt(move_chances or (), doubt)
    }
