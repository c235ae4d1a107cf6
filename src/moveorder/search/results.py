"""The results of a search on disk: one JSON line per arrangement (and resuming after a kill), the CSV
table, SGF files of the orders found with their comments, and the account of alternative orders.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import pandas as pd
from sgfmill import sgf

from moveorder import __version__
from moveorder.go import coords
from moveorder.search.confidence import chance_line
from moveorder.search.problem import lgm
from moveorder.settings import SearchConfig


def matching_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


#: How a position reached with captures is given, for a refusal of one given without them.


def load_results(path: Path) -> List[Dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def completed_ids(path: Path) -> Set[str]:
    """The ids of the rows a JSON-lines file holds whole; a line cut off by a kill, and what follows it,
    is removed, so that appending redoes exactly those arrangements."""
    done: Set[str] = set()
    if not path.exists():
        return done
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                done.add(json.loads(line)["id"])
            except (json.JSONDecodeError, KeyError):
                break  # a line cut off by a kill: it and what follows are redone
    _truncate_to_complete_lines(path)
    return done


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


def write_table(
    results: List[Dict], csv_path: Path, sgf_dir: Optional[Path] = None, network: str = "", settings: str = ""
) -> pd.DataFrame:
    """One CSV row per arrangement; with ``sgf_dir``, the inferred sequences as SGF files.

    Rows that say how sure they are add ``chance`` (blank where none is stated), ``uncertain``
    (the doubtful spans, ``8-13 17-20``) and ``chance_note`` (why none is stated).

    A table with positions with captures also has ``prisoners``, ``found`` and ``captured_placed``
    (blank for its capture-free rows); a capture-free table keeps the paper's columns only.
    """
    rows = []
    captures_table = any("prisoners" in r for r in results)
    for r in results:
        rows.append(
            {
                k: r[k]
                for k in (
                    "set",
                    "n",
                    "id",
                    "lgm",
                    "actual_lgm",
                    "log_likelihood",
                    "actual_log_likelihood",
                    "trial_std",
                    "exact_match",
                    "matching_prefix",
                    "matching_moves",
                    "source",
                )
            }
            | {
                "inferred": "".join(r["inferred"]),
                "actual": "".join(r["actual"]),
                "trial_lgms": " ".join(f"{x:.6f}" for x in r["trial_lgms"]),
                "network": network,
            }
        )
        if "chance" in r:  # how sure the answer is (moveorder.search.confidence)
            rows[-1] |= {
                "chance": r["chance"],
                "uncertain": " ".join(f"{a}-{b}" for a, b in r["uncertain"]),
                "chance_note": r["chance_note"] or "",
            }
        if captures_table:
            with_captures = "prisoners" in r
            rows[-1] |= {
                "prisoners": " ".join(str(x) for x in r["prisoners"]) if with_captures else "0 0",
                "found": r["found"] if with_captures else None,
                "captured_placed": r["captured_placed"] if with_captures else None,
            }
        if sgf_dir is not None:
            write_sgf(
                Path(sgf_dir) / f"{r['id']}.sgf",
                r["inferred"],
                sgf_comment(r["lgm"], r["trial_lgms"], settings, actual_lgm=r["actual_lgm"])
                + (f" How sure: {chance_line(r)}." if "chance" in r else "")
                if r.get("found", True)
                else f"moveorder: no legal sequence found for this position. {settings}",
                komi=r.get("komi"),
            )
    df = pd.DataFrame(rows)
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    return df


def describe(network: str, cfg: SearchConfig, precision: str) -> str:
    """One line naming a run's network and every setting of its search (SGF comments, stats files)."""
    if cfg.method == "beam":
        passes = ""
        if cfg.beam_passes > 1:
            wider = f", {cfg.beam_widen}x wider where none found yet" if cfg.beam_widen > 1 else ""
            if cfg.beam_widen_found > 1:
                wider += f", {cfg.beam_widen_found}x wider within the plan of the order found"
            passes = f", {cfg.beam_passes} passes{wider} (positions with captures)"
        if cfg.capture_merge == "board":
            passes += ", prefixes with the same board merged (positions with captures)"
        if cfg.capture_proposer != "none" and cfg.beam_passes > 1:
            passes += f", {cfg.capture_proposer} proposing capture plans (positions with captures)"
        turns = {"given": "", "seats": ", the board as given and half a turn", "all": ", the board's 8 orientations"}
        return (
            f"network {network}; beam search, width {cfg.beam_width}, future weight {cfg.beam_future:g}{passes}"
            f"{turns[cfg.orientations]}; precision {precision}"
        )
    beam = f"beam width {cfg.beam_width}, future weight {cfg.beam_future:g}, " if cfg.init == "beam" else ""
    return (
        f"network {network}; {cfg.method}: init {cfg.init}, {beam}neighbour {cfg.neighbour}, "
        f"{cfg.iterations} iterations, {cfg.trials} trials, T {cfg.t_start}->{cfg.t_end} ({cfg.schedule}), "
        f"seed {cfg.seed}, precision {precision}"
    )


def sgf_comment(
    lgm_value: float, trial_lgms: Sequence[float], settings: str, source: str = "", actual_lgm: Optional[float] = None
) -> str:
    """The root comment of an inferred order's SGF: its LGM (and the actual sequence's), every trial's, the run."""
    actual = f" (actual {actual_lgm:.4f})" if actual_lgm is not None else ""
    where = f" for {source}" if source else ""
    return (
        f"moveorder: inferred order of play{where}. LGM {lgm_value:.4f}{actual}; "
        f"trials {', '.join(f'{x:.4f}' for x in trial_lgms)}. {settings}"
    )


def write_sgf(
    path: Path,
    moves: Sequence[str],
    comment: str,
    komi: Optional[float] = None,
    black: str = "",
    white: str = "",
    variations: Sequence[Tuple[Sequence[str], str]] = (),
    move_notes: Optional[Dict[int, str]] = None,
) -> None:
    """A game record of ``moves`` (SGF points, Black first) with ``comment`` on the root.

    ``move_notes``: comments of moves of the main line (0-based index -> text); such a move is
    also marked unclear (``UC[1]``, SGF's own mark), as a move in doubt is.

    ``komi`` and the players' names ``black``/``white`` (PB/PW) are kept
    when given (the one-position tool passes the input record's).
    ``variations``: other orders, each with a comment, as variations: an order
    shares the moves it has in common with the main line (and with the
    orders before it) and branches off at its first move of its own, which
    carries its comment.  SGF editors mark that move as a variation of the
    move played there, so a reader stepping through the main line sees
    where each alternative leaves it, and no move is written twice.
    """
    game = sgf.Sgf_game(size=coords.SIZE)
    root = game.get_root()
    root.set("C", comment)
    root.set("AP", ("moveorder", __version__))
    if komi is not None:
        root.set("KM", float(komi))
    if black:
        root.set("PB", black)
    if white:
        root.set("PW", white)
    node = root
    for i, m in enumerate(moves):
        node = node.new_child()
        node.set_move("bw"[i % 2], coords.to_sgfmill(coords.from_sgf(m)))
        if move_notes and i in move_notes:
            node.set("C", move_notes[i])
            node.set_raw("UC", b"1")
    for order, note in variations:
        node, commented = root, False
        for i, m in enumerate(order):
            move = ("bw"[i % 2], coords.to_sgfmill(coords.from_sgf(m)))
            child = next((c for c in node if c.get_move() == move), None)
            if child is None:
                child = node.new_child()
                child.set_move(*move)
                if not commented:
                    child.set("C", note)
                    commented = True
            node = child
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(game.serialise())


LGM_MEANING = (
    "LGM: the geometric mean of the network's probability of each move of the order; higher is likelier. "
    "It compares orders under one network only: an LGM from another network is not comparable."
)


def ranked_orders(orders: Sequence[Tuple[Sequence[int], float]], n: int) -> List[Dict]:
    """Orders (Leela Zero indices, best first, with log-likelihoods) as dicts: ``moves`` (SGF points),
    ``log_likelihood``, ``lgm`` and ``relative``, how likely each is beside the first: exp(ll - best ll)."""
    best = orders[0][1]
    return [
        {"moves": coords.lz_to_sgf(seq), "log_likelihood": ll, "lgm": lgm(ll, n), "relative": math.exp(ll - best)}
        for seq, ll in orders
    ]


def orders_note(orders: Sequence[Dict], asked: int) -> str:
    """The root comment's account of the orders written: what LGM means, each alternative, and how many were found."""
    parts = [LGM_MEANING]
    if len(orders) > 1:
        parts.append(
            "The main line is the likeliest order found; the variations are the next likeliest: "
            + "; ".join(f"{k + 1}. x{o['relative']:.4g}, LGM {o['lgm']:.4f}" for k, o in enumerate(orders) if k)
            + "."
        )
    if asked > len(orders):
        parts.append(
            f"Asked for {asked} orders; the search found {len(orders)} distinct "
            f"order{'s' if len(orders) > 1 else ''} (a wider beam or more trials find more)."
        )
    return " ".join(parts)


def variation_note(order: Dict, index: int, orders: Sequence[Dict]) -> str:
    """The comment at the first move of alternative ``index`` (0: the main line) of ``orders``."""
    first = matching_prefix(order["moves"], orders[0]["moves"]) + 1
    return (
        f"Alternative {index + 1} of {len(orders)}: x{order['relative']:.4g} as likely as the main line "
        f"(LGM {order['lgm']:.4f}, main line {orders[0]['lgm']:.4f}); it leaves the main line at move {first}."
    )


def orders_text(row: Dict, asked: int) -> str:
    """The alternatives, for the terminal: one line each (GTP vertices), and how many were found."""
    lines = [
        f"alternative {k + 1}: x{o['relative']:.4g} as likely, LGM {o['lgm']:.4f}: "
        + " ".join(coords.sgf_to_gtp(o["moves"]))
        for k, o in enumerate(row["orders"])
        if k
    ]
    if asked > len(row["orders"]):
        lines.append(f"asked for {asked} orders; the search found {len(row['orders'])} distinct")
    return "\n".join(lines)
