"""Human likelihood per level: every trained network on every set, one network per set's pool.

McIlroy-Young et al. found in chess that each skill level is best predicted by a network trained on
that level; the paper names such networks as future work. Two tables answer it here:

* :func:`heldout_table`: each network's top-1 accuracy and mean log-likelihood of the move played on
  each set's held-out games, the same games and positions training reports for its own set
  (:func:`moveorder.nets.sampling.split_games`, then :func:`moveorder.nets.sampling.evaluate` with the same seed and
  position limit), so a network's row on its own set equals its ``metrics.json`` (bit for bit for a
  network trained on a CPU; for one trained on a GPU, whose evaluation is IEEE float32 too but sums
  in cuDNN's order, within the tolerance tests/test_gpu.py states).
* :func:`inference_table`: the paper's LGM slope and share of arrangements on or above y = x for
  each set inferred with each network (its own level's and the others').

Columns: ``network``, ``set``, ``own_level`` (the network was trained on that set's pool), then the
measures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

import pandas as pd
import torch

from moveorder.data.records import load_records
from moveorder.nets import devices
from moveorder.nets.networks import load_policy
from moveorder.nets.sampling import PositionSampler, evaluate, split_games
from moveorder.report.metrics import summarize
from moveorder.report.summary import to_markdown


def trained_on(network: str) -> str:
    """The set a network of ours was trained on (``trained-SET`` -> ``SET``), else ""."""
    return network[len("trained-") :] if network.startswith("trained-") else ""


def heldout_table(
    networks: Dict[str, Path],
    pools: Dict[str, Path],
    fraction: float,
    seed: int,
    positions: int = 20000,
    device: Optional[str] = "cpu",
    max_move: int = 0,
) -> pd.DataFrame:
    """One row per (network, set): accuracy on the set's held-out games (training's split and sample).

    ``max_move``: only the positions before that move of each held-out game (the openings, as
    ``training.max_move`` trains on them); 0: every position.
    A network is any file :func:`moveorder.nets.networks.load_policy` reads (a shipped network's name too).
    ``device``: where the networks run (:func:`moveorder.nets.devices.resolve`; None: a GPU if torch sees
    one); IEEE float32 on any device (:func:`moveorder.nets.sampling.evaluate`).
    """
    device = devices.resolve(device)
    samplers = {}
    for s, pool in pools.items():
        _, held = split_games(load_records(pool), fraction, seed)
        samplers[s] = (len(held), PositionSampler.from_records(held, max_move))
    rows = []
    for name, path in networks.items():
        # Channels-last, as training evaluates: the same convolution kernels, the same numbers.
        net = load_policy(path).to(device=device, memory_format=torch.channels_last)
        for s, (games, sampler) in samplers.items():
            m = evaluate(net, sampler, positions, device, seed)
            rows.append(
                {
                    "network": name,
                    "set": s,
                    "own_level": trained_on(name) == s,
                    "heldout_games": games,
                    "positions": m["positions"],
                    "top1_accuracy": m["top1_accuracy"],
                    "mean_log_likelihood": m["mean_log_likelihood"],
                }
            )
    return pd.DataFrame(
        rows,
        columns=["network", "set", "own_level", "heldout_games", "positions", "top1_accuracy", "mean_log_likelihood"],
    )


def inference_table(entries: Sequence[Tuple[str, int, str, Path]]) -> pd.DataFrame:
    """One row per (set, length, network) inference run: LGM slope and share on/above y = x."""
    rows = []
    for s, n, network, path in entries:
        m = summarize(pd.read_csv(path))
        rows.append(
            {
                "network": network,
                "set": s,
                "n": int(n),
                "own_level": trained_on(network) == s,
                "arrangements": m["arrangements"],
                "lgm_slope": m["lgm_slope"],
                "share_on_or_above": m["share_on_or_above"],
                "mean_lgm_actual": m["mean_lgm_actual"],
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "network",
            "set",
            "n",
            "own_level",
            "arrangements",
            "lgm_slope",
            "share_on_or_above",
            "mean_lgm_actual",
        ],
    )


def markdown(heldout: pd.DataFrame, inference: pd.DataFrame) -> str:
    """Both tables as markdown, the held-out one also as a network x set grid of top-1 accuracy."""
    out = [
        "## Networks across levels",
        "",
        "Each network (trained-SET: trained on SET's pool; a shipped name: the package's) on each set's "
        "held-out games (never evaluation games): top-1 accuracy and mean log-likelihood of the move played.",
        "",
    ]
    if len(heldout):
        grid = heldout.pivot(index="network", columns="set", values="top1_accuracy").reset_index()
        grid.columns = ["network \\ held-out games of"] + [f"{c} (top-1)" for c in grid.columns[1:]]
        out += [to_markdown(grid), to_markdown(heldout)]
    if len(inference):
        out += [
            "Each set inferred with each network: LGM slope and share of arrangements on or above y = x.",
            "",
            to_markdown(inference),
        ]
    return "\n".join(out)


def write_tables(
    networks: Dict[str, Path],
    pools: Dict[str, Path],
    inferred: Sequence[Tuple[str, int, str, Path]],
    fraction: float,
    seed: int,
    table: Path,
    inference_path: Path,
    markdown_path: Path,
    positions: int = 20000,
    threads: int = 0,
    device: Optional[str] = "cpu",
) -> Tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables (CSV) and their markdown; ``threads``: torch CPU threads (0: torch's default)."""
    if threads:
        torch.set_num_threads(threads)
    held = heldout_table(networks, pools, fraction, seed, positions, device)
    inf = inference_table(inferred)
    for path in (table, inference_path, markdown_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    held.to_csv(table, index=False)
    inf.to_csv(inference_path, index=False)
    Path(markdown_path).write_text(markdown(held, inf))
    return held, inf
