"""The one-position tool's answer to a player: the inferred order printed, its alternatives, the comparison
with the game when the record was given, the board diagram (``--diagram``) and, without an output SGF, a
numbered board in the terminal. The order itself comes from :func:`moveorder.search.inference.infer_position`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from moveorder.go import coords
from moveorder.report import diagram
from moveorder.settings import SearchConfig


def game_order(position: Path, moves: Optional[int]) -> Optional[List[str]]:
    """A game record's own first ``moves`` moves (SGF points; all without ``moves``); None for setup stones."""
    from moveorder.data.records import read_sgf

    rec = read_sgf(position.read_bytes(), str(position))
    order = [rec.moves[i : i + 2] for i in range(0, len(rec.moves), 2)]
    return (order[:moves] if moves else order) or None


def answer_position(
    position: Path,
    output: Optional[Path],
    moves: Optional[int],
    cfg: SearchConfig,
    evaluator: Callable,
    network: str,
    precision: str,
    progress: bool = True,
    prisoners: Optional[Sequence[int]] = None,
    alternatives: int = 1,
    diagram_path: Optional[Path] = None,
) -> dict:
    """Order ``position`` and tell the player: every check (the diagram's path too) runs before any work.

    Prints the order (GTP vertices), its LGM, the alternatives, and with a game record how many moves
    match the game's; draws the diagram before the board is printed, so that a reader who stops reading
    early does not lose it. Returns :func:`infer_position`'s row.
    """
    from moveorder.search.inference import infer_position

    if diagram_path:
        diagram.check_path(diagram_path)
    row = infer_position(
        position, output, moves, cfg, evaluator, network, precision, progress, prisoners, alternatives=alternatives
    )
    actual = game_order(position, moves)
    head, tail = answer_lines(row, output, alternatives, actual)
    print("\n".join(head))
    if diagram_path:
        fig = diagram.figure_data(row["inferred"], actual, doubt=diagram.doubtful_moves(row.get("move_chances")))
        diagram.save(fig, diagram_path, title=diagram_title(position.name, row))
    if tail:
        print("\n".join(tail))
    return row


def diagram_title(name: str, row: dict) -> str:
    """The diagram's title: the position's file name, the order's LGM and its chance of being exact."""
    chance = row.get("chance")
    sure = f", {chance:.0%} chance it is exact" if chance is not None else ""
    return f"{name}: inferred order, LGM {row['lgm']:.4f}{sure}"


def answer_lines(
    row: dict, output: Optional[Path], alternatives: int, actual: Optional[Sequence[str]]
) -> Tuple[List[str], List[str]]:
    """What ``moveorder infer`` prints of :func:`infer_position`'s row, in two parts: the order, its LGM, how
    sure it is (:func:`moveorder.search.confidence.chance_line`) and the alternatives; then (after the diagram is drawn) the comparison with the game's own order and,
    without an output SGF, the numbered board.  The page shows the same lines."""
    from moveorder.search.confidence import chance_line
    from moveorder.search.results import orders_text

    head = [" ".join(coords.sgf_to_gtp(row["inferred"]))]
    head.append(f"LGM {row['lgm']:.4f}  ->  {output}" if output else f"LGM {row['lgm']:.4f}")
    if "chance" in row:
        head.append(chance_line(row))
    alts = orders_text(row, alternatives)
    head += alts.splitlines() if alts else []
    tail = []
    if actual is not None:
        tail.append(diagram.comparison_line(row["inferred"], actual))
    if not output:
        doubt = diagram.doubtful_moves(row.get("move_chances"))
        tail.append(diagram.text_board(diagram.figure_data(row["inferred"], actual, doubt=doubt)))
    return head, tail
