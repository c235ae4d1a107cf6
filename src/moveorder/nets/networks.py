"""Leela Zero's network architecture in torch, its weights format, symmetries, and the policy path
with batch norm folded in (:class:`FusedPolicy`, what the likelihood runs in float32 on a CPU).

:class:`LeelaNet` is Leela Zero's residual tower: a 3x3 input convolution,
``blocks`` residual blocks of two 3x3 convolutions, a policy head (1x1 conv
to 2 planes, fully connected to 362 = 361 points + pass, in Leela Zero's
bottom-row-first index order) and a value head (1x1 conv to 1 plane, 256
hidden units, tanh).  Every convolution is followed by batch normalisation
with no learned scale (Leela Zero's BN has none) and epsilon 1e-5.

Weights file, version 1 (``.txt``, ``.txt.gz`` or a ``.zip`` holding one):
line 1 is ``1``; then one line of space-separated floats per tensor:
input conv (weights, biases, BN means, BN variances), 8 lines per residual
block (two such convs), policy conv (4 lines), policy FC (weights, biases),
value conv (4 lines), value FC1 (2 lines), value FC2 (2 lines).  The block
and filter counts follow from the number of lines and the input conv's size.
Leela Zero folds the conv biases into the BN means (``mean -= bias``); so do
we, and on export we write a zero bias and a mean that carries our BN shift.
"""

from __future__ import annotations

import functools
import gzip
import io
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch.fx.experimental.optimization import fuse

from moveorder.go import coords
from moveorder.go.coords import MOVES, POINTS
from moveorder.nets import shipped
from moveorder.nets.features import PLANES

BN_EPS = 1e-5


class ConvBN(nn.Module):
    """Convolution without bias, then batch norm with a learned shift and a fixed unit scale."""

    def __init__(self, cin: int, cout: int, k: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=BN_EPS, affine=True)
        self.bn.weight.requires_grad_(False)  # Leela Zero's BN has no scale

    def forward(self, x):
        return self.bn(self.conv(x))


class ResBlock(nn.Module):
    def __init__(self, filters: int):
        super().__init__()
        self.a = ConvBN(filters, filters, 3)
        self.b = ConvBN(filters, filters, 3)

    def forward(self, x):
        return torch.relu(x + self.b(torch.relu(self.a(x))))


class LeelaNet(nn.Module):
    """Leela Zero's architecture; ``forward`` returns policy logits (B, 362) and value (B,)."""

    def __init__(self, blocks: int, filters: int):
        super().__init__()
        self.blocks_n, self.filters = blocks, filters
        self.input = ConvBN(PLANES, filters, 3)
        self.tower = nn.Sequential(*[ResBlock(filters) for _ in range(blocks)])
        self.policy_conv = ConvBN(filters, 2, 1)
        self.policy_fc = nn.Linear(2 * POINTS, MOVES)
        self.value_conv = ConvBN(filters, 1, 1)
        self.value_fc1 = nn.Linear(POINTS, 256)
        self.value_fc2 = nn.Linear(256, 1)

    def trunk(self, x):
        return self.tower(torch.relu(self.input(x)))

    def policy_logits(self, x):
        t = self.trunk(x)
        return self.policy_fc(torch.relu(self.policy_conv(t)).flatten(1))

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        t = self.trunk(x)
        logits = self.policy_fc(torch.relu(self.policy_conv(t)).flatten(1))
        v = torch.relu(self.value_fc1(torch.relu(self.value_conv(t)).flatten(1)))
        return logits, torch.tanh(self.value_fc2(v)).squeeze(1)

    def conv_layers(self) -> List[ConvBN]:
        layers = [self.input]
        for blk in self.tower:
            layers += [blk.a, blk.b]
        return layers


# --- weights files -------------------------------------------------------------


def _read_text(path: Path) -> str:
    path = Path(path)
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    elif data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
            if len(names) != 1:
                raise ValueError(f"{path}: a weights zip must hold one file, it holds {names}")
            data = z.read(names[0])
    return data.decode("ascii")


def _set_convbn(layer: ConvBN, weight, bias, mean, var):
    out, cin, k, _ = layer.conv.weight.shape
    layer.conv.weight.data = torch.tensor(weight, dtype=torch.float32).view(out, cin, k, k)
    # Leela Zero: the conv bias is folded into the BN mean.
    layer.bn.running_mean.data = torch.tensor(mean, dtype=torch.float32) - torch.tensor(bias, dtype=torch.float32)
    layer.bn.running_var.data = torch.tensor(var, dtype=torch.float32)
    layer.bn.weight.data.fill_(1.0)
    layer.bn.bias.data.zero_()


def _names_the_file(what: str):
    """Decorate a loader ``f(path)``: an error that does not name the file becomes a ValueError that does.

    A file of the wrong kind otherwise fails deep in a decoder or in torch with a message such as
    ``'ascii' codec can't decode byte 0xcc`` and no file name.
    """

    def wrap(load):
        @functools.wraps(load)
        def named(path):
            try:
                return load(path)
            except Exception as err:
                if str(path) in str(err):
                    raise
                detail = " ".join(str(err).split())
                detail = detail if len(detail) <= 200 else detail[:197] + "..."
                raise ValueError(f"{path}: not {what} ({type(err).__name__}: {detail})") from err

        return named

    return wrap


@_names_the_file("a Leela Zero weights file (version 1 text, or that text gzipped or zipped)")
def load_leela(path: Path) -> LeelaNet:
    """Read a Leela Zero version-1 weights file into an eval-mode :class:`LeelaNet`."""
    lines = _read_text(path).strip().split("\n")
    if lines[0].strip() != "1":
        raise ValueError(f"{path}: weights format version {lines[0].strip()!r}, only version 1 is supported")
    body = lines[1:]
    if (len(body) - 4 - 14) % 8 or len(body) < 18:
        raise ValueError(f"{path}: {len(body)} tensor lines do not fit Leela Zero's layout")
    blocks = (len(body) - 4 - 14) // 8
    tensors = [[float(x) for x in line.split()] for line in body]
    filters = len(tensors[1])
    if len(tensors[0]) != filters * PLANES * 9:
        raise ValueError(
            f"{path}: input conv has {len(tensors[0])} weights, expected {filters * PLANES * 9} "
            f"for {filters} filters and {PLANES} planes"
        )
    net = LeelaNet(blocks, filters)
    it = iter(tensors)
    for layer in net.conv_layers():
        _set_convbn(layer, next(it), next(it), next(it), next(it))
    _set_convbn(net.policy_conv, next(it), next(it), next(it), next(it))
    net.policy_fc.weight.data = torch.tensor(next(it)).view(MOVES, 2 * POINTS)
    net.policy_fc.bias.data = torch.tensor(next(it))
    _set_convbn(net.value_conv, next(it), next(it), next(it), next(it))
    net.value_fc1.weight.data = torch.tensor(next(it)).view(256, POINTS)
    net.value_fc1.bias.data = torch.tensor(next(it))
    net.value_fc2.weight.data = torch.tensor(next(it)).view(1, 256)
    net.value_fc2.bias.data = torch.tensor(next(it))
    return net.eval()


def save_checkpoint(net: LeelaNet, path: Path, metrics: Optional[dict] = None) -> None:
    """A trained network as moveorder's ``model.pt``: its size, weights and training metrics."""
    torch.save(
        {
            "kind": "leelanet",
            "blocks": net.blocks_n,
            "filters": net.filters,
            "model": net.state_dict(),
            "metrics": metrics or {},
        },
        path,
    )


@_names_the_file("a moveorder checkpoint (the model.pt that train-policy writes)")
def load_checkpoint(path: Path) -> LeelaNet:
    """A ``model.pt`` written by :func:`save_checkpoint`, in eval mode on the CPU."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("kind") != "leelanet":
        raise ValueError(f"{path}: not a moveorder policy checkpoint")
    net = LeelaNet(state["blocks"], state["filters"])
    net.load_state_dict(state["model"])
    return net.eval()


def load_policy(path: Path) -> LeelaNet:
    """A policy network from a Leela Zero weights file (.txt, .gz, .zip), a moveorder ``model.pt``,
    or the name of a network shipped with the package (:mod:`moveorder.nets.shipped`, e.g. ``tygem``)."""
    path = shipped.require(path)
    if path.suffix == ".pt":
        return load_checkpoint(path)
    return load_leela(path)


def _fmt(tensor: torch.Tensor) -> str:
    return " ".join(f"{x:.7g}" for x in tensor.detach().double().flatten().tolist())


def export_leela(net: LeelaNet, path: Path) -> None:
    """Write ``net`` as a Leela Zero version-1 text file (gzip if ``path`` ends in .gz)."""
    out = ["1"]

    def convbn(layer: ConvBN):
        bn = layer.bn
        # y = (x - m)/s + beta  ==  (x - (m - beta*s))/s with a zero bias.
        std = torch.sqrt(bn.running_var + BN_EPS)
        mean = bn.running_mean - bn.bias * std
        out.extend([_fmt(layer.conv.weight), _fmt(torch.zeros_like(mean)), _fmt(mean), _fmt(bn.running_var)])

    for layer in net.conv_layers():
        convbn(layer)
    convbn(net.policy_conv)
    out += [_fmt(net.policy_fc.weight), _fmt(net.policy_fc.bias)]
    convbn(net.value_conv)
    out += [_fmt(net.value_fc1.weight), _fmt(net.value_fc1.bias), _fmt(net.value_fc2.weight), _fmt(net.value_fc2.bias)]
    text = "\n".join(out) + "\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":  # no timestamp in the header: the same weights give the same bytes
        path.write_bytes(gzip.compress(text.encode("ascii"), mtime=0))
    else:
        path.write_text(text)


# --- symmetries ------------------------------------------------------------------


def symmetry_planes(x: torch.Tensor, s: int) -> torch.Tensor:
    """Apply symmetry ``s`` (0..7; 0 = identity) to the last two (19x19) axes."""
    if s & 4:
        x = x.transpose(-1, -2)
    if s & 1:
        x = x.flip(-1)
    if s & 2:
        x = x.flip(-2)
    return x


def _index_map(s: int) -> torch.Tensor:
    """``m[k]``: where point ``k`` goes under symmetry ``s`` (pass stays at 361)."""
    grid = torch.arange(POINTS).view(coords.SIZE, coords.SIZE)
    moved = symmetry_planes(grid, s).flatten()  # moved[j] = source point at target j
    m = torch.empty(MOVES, dtype=torch.long)
    m[moved] = torch.arange(POINTS)
    m[coords.PASS_INDEX] = coords.PASS_INDEX
    return m


SYMMETRY_MAPS = [_index_map(s) for s in range(8)]
#: ``INVERSE_MAPS[s][k]``: the point symmetry ``s`` moves to ``k`` (each map's inverse).
INVERSE_MAPS = [torch.argsort(m) for m in SYMMETRY_MAPS]


def turn_points(points: Sequence[int], s: int, back: bool = False) -> List[int]:
    """Leela Zero indices moved by symmetry ``s`` of the board (``back``: by its inverse); a pass stays."""
    return (INVERSE_MAPS if back else SYMMETRY_MAPS)[s][list(points)].tolist()


_MAPS_ON: Dict[torch.device, List[torch.Tensor]] = {torch.device("cpu"): SYMMETRY_MAPS}


def _symmetry_maps(device: torch.device) -> List[torch.Tensor]:
    """:data:`SYMMETRY_MAPS` on ``device``, copied there once (not at every batch)."""
    if device not in _MAPS_ON:
        _MAPS_ON[device] = [m.to(device) for m in SYMMETRY_MAPS]
    return _MAPS_ON[device]


def policy_probs(net: LeelaNet, planes: torch.Tensor, average_symmetries: bool = False) -> torch.Tensor:
    """float32 softmax over all 362 outputs for ``(B, 18, 19, 19)`` planes; optionally the mean over 8 symmetries.

    The softmax and the mean are float32 whatever the network's arithmetic: under bfloat16
    autocast the logits are widened first, on a CPU as CUDA's autocast does it, so a bfloat16
    result means the same arithmetic on both devices.
    """
    if not average_symmetries:
        return torch.softmax(net.policy_logits(planes).float(), dim=-1)
    maps = _symmetry_maps(planes.device)
    total = 0
    for s in range(8):
        p = torch.softmax(net.policy_logits(symmetry_planes(planes, s)).float(), dim=-1)
        total = total + p[:, maps[s]]  # back to the original orientation
    return total / 8


class _PolicyLogits(nn.Module):
    def __init__(self, net: LeelaNet):
        super().__init__()
        self.net = net

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        return self.net.policy_logits(planes)


class FusedPolicy:
    """A snapshot of a network's ``policy_logits`` with each batch norm folded into the convolution
    before it (``torch.fx``'s conv-bn fusion: one pass over memory a layer instead of two) and the
    value head left out: on a 2-core AMD EPYC, 1.27-1.34x the evaluations a second of the module for
    a 4x32 at batch 64, 1.19-1.23x for a 6x64 (bench/networks.py --tables fused; docs/benchmarks.md).
    Outputs agree with the module's to 1e-6.  The weights are copied: changing the network
    afterwards does not reach it.
    """

    def __init__(self, net: LeelaNet):
        self.policy_logits = fuse(_PolicyLogits(net).eval(), inplace=False).to(memory_format=torch.channels_last)


def parameter_count(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())


__all__ = [
    "LeelaNet",
    "load_leela",
    "load_policy",
    "load_checkpoint",
    "save_checkpoint",
    "export_leela",
    "policy_probs",
    "FusedPolicy",
    "symmetry_planes",
    "SYMMETRY_MAPS",
    "INVERSE_MAPS",
    "turn_points",
    "parameter_count",
]
