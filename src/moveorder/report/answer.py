"""The one-position tool's answer to a player: the inferred order printed, its alternatives, the comparison
with the game when the record was given, the board diagram (``--diagram``) and, without an output SGF, a
numbered board in the terminal. The order itself comes from :func:`moveorder.search.inference.infer_position`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional, Sequence

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
    from moveorder.search.results import orders_text

    if diagram_path:
        diagram.check_path(diagram_path)
    row = infer_position(
        position, output, moves, cfg, evaluator, network, precision, progress, prisoners, alternatives=alternatives
    )
    print(" ".join(coords.sgf_to_gtp(row["inferred"])))
    print(f"LGM {row['lgm']:.4f}  ->  {output}" if output else f"LGM {row['lgm']:.4f}")
    print(orders_text(row, alternatives), end="\n" if alternatives > 1 else "")
    actual = game_order(position, moves)
    fig = diagram.figure_data(row["inferred"], actual)
    if diagram_path:
        diagram.save(fig, diagram_path, title=f"{position.name}: inferred order, LGM {row['lgm']:.4f}")
    if actual is not None:
        print(diagram.comparison_line(row["inferred"], actual))
    if not output:
        print(diagram.text_board(fig))
    return row
