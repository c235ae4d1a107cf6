"""int8 against bfloat16 and float32 for the one-position tool's network on this CPU: speed and fidelity.

    OMP_NUM_THREADS=2 python bench/int8.py --network tygem-6x128 --calibrate data/pool/tygem.jsonl \
        --arrangements data/arrangements/pro/20m.jsonl [--batch 16] [--seconds 5]

int8 is torch's own x86 post-training quantization (``torch.ao.quantization``, FX graph mode, the
``x86`` qconfig: per-channel weights, activations calibrated on positions before move 60 of the
first games of a Tygem pool, so no evaluation game).  Fidelity is measured on every position of the
arrangements' actual orders, against float32: how often the network's top move is the same, and how
far the log-probability of the move played moves (mean and largest absolute difference, and of each
order's whole log-likelihood).  Speed: positions a second through the policy at ``--batch``, every
precision in one run, so that the machine's load moves them alike.  Prints a markdown table.
"""

import argparse
import json
import statistics
import time
import warnings

import torch
from torch import nn

from moveorder.go import coords
from moveorder.nets.features import planes_from_codes, position_codes
from moveorder.nets.networks import FusedPolicy, load_policy


class Policy(nn.Module):
    """The network's policy logits as a module of its own (what FX traces and quantizes)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, planes):
        return self.net.policy_logits(planes)


def planes_of(sequences):
    """Every position of each sequence (Black first, no captures) as network planes, with the move played."""
    seqs = torch.tensor(sequences, dtype=torch.long)
    B, n = seqs.shape
    rows = torch.arange(B).repeat_interleave(n)
    positions = torch.arange(n).repeat(B)
    planes = planes_from_codes(position_codes(seqs, rows, positions)).contiguous(memory_format=torch.channels_last)
    return planes, seqs.reshape(-1)


def pool_openings(path, games, moves):
    """The first ``moves`` moves of the first ``games`` games of a pool with no capture before them."""
    from moveorder.go import board as goboard

    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = json.loads(line)["moves"]
            points = [m[k : k + 2] for k in range(0, 2 * moves, 2)]
            if len(points) < moves or len(m) < 2 * moves:
                continue
            played = coords.from_sgf_string("".join(points))
            if None in played or sum(goboard.replay(played)[1]) > 0:
                continue
            out.append([coords.to_lz(p) for p in played])
            if len(out) == games:
                break
    return out


def logits_in_batches(fn, planes, batch):
    with torch.no_grad():
        return torch.cat([fn(planes[k : k + batch]).float() for k in range(0, len(planes), batch)])


def rate(fn, planes, batch, seconds):
    x = planes[:batch]
    with torch.no_grad():
        fn(x)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            fn(x)
            n += batch
    return n / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--network", default="tygem-6x128")
    p.add_argument("--calibrate", required=True, help="a pool (JSONL of games) to calibrate int8's activations on")
    p.add_argument("--calibration-games", type=int, default=64)
    p.add_argument("--arrangements", required=True, help="arrangements whose actual orders measure fidelity")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    warnings.filterwarnings("ignore")
    net = load_policy(a.network).eval().to(memory_format=torch.channels_last)
    calibration, _ = planes_of(pool_openings(a.calibrate, a.calibration_games, 60))
    with open(a.arrangements, encoding="utf-8") as f:
        actual = [coords.sgf_to_lz(json.loads(line)["actual"]) for line in f if line.strip()]
    planes, moves = planes_of(actual)
    n = len(actual[0])

    fused = FusedPolicy(net)
    prepared = prepare_fx(Policy(net).eval(), get_default_qconfig_mapping("x86"), example_inputs=(calibration[:1],))
    with torch.no_grad():
        for k in range(0, len(calibration), 256):
            prepared(calibration[k : k + 256])
    int8 = convert_fx(prepared)

    def bf16(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return net.policy_logits(x)

    ways = {"float32 (folded batch norm)": fused.policy_logits, "bfloat16": bf16, "int8 (x86 static)": int8}
    logp = {name: torch.log_softmax(logits_in_batches(fn, planes, 256), -1) for name, fn in ways.items()}
    ref = logp["float32 (folded batch norm)"]
    ref_played = ref.gather(1, moves[:, None]).squeeze(1)
    rates = {name: rate(fn, planes, a.batch, a.seconds) for name, fn in ways.items()}
    print(
        f"{a.network}: {len(actual)} actual orders of {n} moves ({len(moves)} positions); int8 calibrated on "
        f"{len(calibration)} positions of {a.calibration_games} games of {a.calibrate}; batch {a.batch}, "
        f"{torch.get_num_threads()} threads"
    )
    print("| arithmetic | positions / s | x float32 | top move as float32 | mean abs. diff. log p(played) "
          "| largest | mean abs. diff. of an order's log-likelihood | mean log p(played) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    base = rates["float32 (folded batch norm)"]
    for name, lp in logp.items():
        played = lp.gather(1, moves[:, None]).squeeze(1)
        diff = (played.double() - ref_played.double()).abs()
        per_order = (played.double() - ref_played.double()).view(len(actual), n).sum(1).abs()
        same = (lp.argmax(1) == ref.argmax(1)).double().mean()
        print(
            f"| {name} | {rates[name]:,.0f} | {rates[name] / base:.2f} | {same:.1%} | {diff.mean():.4f} | "
            f"{diff.max():.3f} | {statistics.mean(per_order.tolist()):.3f} | {played.mean():.4f} |"
        )


if __name__ == "__main__":
    main()
