"""Network evaluations per second by model size and batch size, on this machine's CPU (and a GPU if any).

    python bench/networks.py [--seconds 3] [--device cpu]

Prints a markdown table; docs/benchmarks.md records a run.
"""

import argparse
import time

import torch

from moveorder.networks import LeelaNet, policy_probs


def rate(net, batch, device, seconds):
    x = (torch.rand(batch, 18, 19, 19, device=device) > 0.7).float()
    with torch.no_grad():
        policy_probs(net, x)
        if device == "cuda":
            torch.cuda.synchronize()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            policy_probs(net, x)
            n += batch
        if device == "cuda":
            torch.cuda.synchronize()
    return n / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()
    sizes = [(1, 8), (2, 16), (4, 32), (6, 64), (6, 128)]
    batches = [1, 64, 512]
    print(f"device: {a.device}, torch threads: {torch.get_num_threads()}")
    print("| blocks x filters | " + " | ".join(f"batch {b}" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for blocks, filters in sizes:
        net = LeelaNet(blocks, filters).eval().to(a.device)
        print(f"| {blocks}x{filters} | " + " | ".join(f"{rate(net, b, a.device, a.seconds):,.0f}" for b in batches)
              + " |", flush=True)


if __name__ == "__main__":
    main()
