"""Network evaluations per second by model size, batch size and memory layout, and training steps
per second, on this machine's CPU (and a GPU if any).

    python bench/networks.py [--seconds 3] [--device cpu] [--tables rates layout fused training]

Prints markdown tables; docs/benchmarks.md records a run.  Every ratio in a table comes from the
same run, so machine load moves both sides alike.
"""

import argparse
import statistics
import time

import torch
from torch import nn

from moveorder.nets.devices import arithmetic
from moveorder.nets.devices import synchronize as _sync
from moveorder.nets.networks import FusedPolicy, LeelaNet, policy_probs

CL = torch.channels_last


def rate(net, batch, device, seconds, layout=torch.contiguous_format, fused=False):
    """Positions per second through the policy head, in float32 as the likelihood runs it (no TF32).

    ``fused``: batch norm folded into the convolutions, as the likelihood runs float32 on a CPU.
    """
    net = net.to(memory_format=layout)
    x = (torch.rand(batch, 18, 19, 19, device=device) > 0.7).float().contiguous(memory_format=layout)
    if fused:
        net = FusedPolicy(net)
    with torch.no_grad(), arithmetic(tf32=False):
        policy_probs(net, x)
        _sync(device)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            policy_probs(net, x)
            n += batch
        _sync(device)
    return n / (time.perf_counter() - t0)


def train_rate(blocks, filters, batch, device, seconds, layout):
    """Training steps per second (forward, policy + value loss, backward, AdamW), as moveorder.nets.train runs them."""
    torch.manual_seed(0)
    net = LeelaNet(blocks, filters).to(device, memory_format=layout).train()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    x = (torch.rand(batch, 18, 19, 19, device=device) > 0.7).float().contiguous(memory_format=layout)
    t = torch.randint(0, 362, (batch,), device=device)
    z = torch.rand(batch, device=device) * 2 - 1
    ce = nn.CrossEntropyLoss()

    def step():
        with arithmetic(tf32=False):  # as training runs: IEEE float32, deterministic cuDNN
            logits, v = net(x)
            loss = ce(logits, t) + 0.25 * ((v - z) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    step()
    _sync(device)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
        n += 1
    _sync(device)
    return n / (time.perf_counter() - t0)


TABLES = ("rates", "layout", "fused", "training")


def table_rates(a, sizes):
    # On a GPU, the candidates for the likelihood's fixed batch (docs/benchmarks.md, "The GPU path").
    batches = [1, 64, 512] if torch.device(a.device).type == "cpu" else [1, 64, 128, 256, 512, 1024]
    print("Evaluations per second (default layout):\n")
    print("| blocks x filters | " + " | ".join(f"batch {b}" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for blocks, filters in sizes:
        net = LeelaNet(blocks, filters).eval().to(a.device)
        print(
            f"| {blocks}x{filters} | "
            + " | ".join(f"{rate(net, b, a.device, a.seconds):,.0f}" for b in batches)
            + " |",
            flush=True,
        )


def table_layout(a, sizes, batch):
    print(f"\nMemory layout, evaluations per second at batch {batch}:\n")
    print("| blocks x filters | contiguous | channels-last | ratio |")
    print("|---|---|---|---|")
    for blocks, filters in sizes[2:]:
        net = LeelaNet(blocks, filters).eval().to(a.device)
        c, cl = rate(net, batch, a.device, a.seconds), rate(net, batch, a.device, a.seconds, CL)
        print(f"| {blocks}x{filters} | {c:,.0f} | {cl:,.0f} | {cl / c:.2f} |", flush=True)


def table_fused(a, sizes, batch):
    """The module against its batch-norm-folded copy (the likelihood's float32 path on a CPU), in
    interleaved rounds of one second each, medians: this 2-core machine's load drifts more between
    two cells measured one after the other than the ratio asked for."""
    print(
        f"\nBatch norm folded into the convolutions (channels-last), evaluations per second at batch {batch}, "
        "medians of 10 interleaved rounds:\n"
    )
    print("| blocks x filters | torch threads | module | folded | ratio |")
    print("|---|---|---|---|---|")
    all_threads = torch.get_num_threads()
    for blocks, filters in sizes[2:]:
        net = LeelaNet(blocks, filters).eval()
        for threads in sorted({1, all_threads}):
            torch.set_num_threads(threads)
            m, f = [], []
            for _ in range(10):
                m.append(rate(net, batch, a.device, 1.0, CL))
                f.append(rate(net, batch, a.device, 1.0, CL, fused=True))
            m, f = statistics.median(m), statistics.median(f)
            print(f"| {blocks}x{filters} | {threads} | {m:,.0f} | {f:,.0f} | {f / m:.2f} |", flush=True)
    torch.set_num_threads(all_threads)


def table_training(a):
    tb = 128 if a.device == "cpu" else 256
    print(f"\nTraining steps per second at batch {tb}:\n")
    print("| blocks x filters | contiguous | channels-last | ratio |")
    print("|---|---|---|---|")
    for blocks, filters in [(4, 32), (6, 128)]:
        c = train_rate(blocks, filters, tb, a.device, a.seconds, torch.contiguous_format)
        cl = train_rate(blocks, filters, tb, a.device, a.seconds, CL)
        print(f"| {blocks}x{filters} | {c:.2f} | {cl:.2f} | {cl / c:.2f} |", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tables", nargs="+", choices=TABLES, default=list(TABLES), help="which tables (default: all)")
    a = p.parse_args()
    sizes = [(1, 8), (2, 16), (4, 32), (6, 64), (6, 128)]
    batch = 64 if a.device == "cpu" else 256
    print(f"device: {a.device}, torch threads: {torch.get_num_threads()}\n")
    if "rates" in a.tables:
        table_rates(a, sizes)
    if "layout" in a.tables:
        table_layout(a, sizes, batch)
    if "fused" in a.tables and a.device == "cpu":  # the likelihood folds batch norm on a CPU only
        table_fused(a, sizes, batch)
    if "training" in a.tables:
        table_training(a)


if __name__ == "__main__":
    main()
