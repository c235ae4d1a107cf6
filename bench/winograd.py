"""Would Winograd's F(4x4, 3x3) convolution make a tower layer of the 6x128 faster on a CPU?

    python bench/winograd.py [--batches 16 64] [--rounds 30] [--threads 2] [--compile]

A 3x3 layer of 128 filters on 19x19 boards as the likelihood runs it (float32, channels-last, bias
and ReLU after it) by torch's convolution (oneDNN's direct algorithm), against the same layer by
Winograd's minimal filtering (Lavin and Gray, 2016): the board padded to 22x22 and cut into 5x5
overlapping tiles of 6x6, each tile and each filter turned into the 36-point transform domain, where
the convolution is 36 matrix products of (tiles, 128) by (128, 128) with 3.6 times fewer
multiplications than the direct one, and each product's 6x6 turned back into a 4x4 of output.  The
transforms here are torch operations (a copy of the tiles, a product by the 36x36 transform, a copy
back), as a pure-torch implementation would run them; ``--compile`` hands the whole layer to
``torch.compile`` (its C++ backend needs a compiler at run time).

Prints the largest difference from torch's convolution and milliseconds a layer (median of
``--rounds``), the matrix products alone beside them: what the transforms would have to fit in to pay.
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

CL = torch.channels_last
# The F(4x4, 3x3) matrices: input transform B^T (6x6), filter transform G (6x3), output transform A^T (4x6).
B_T = [
    [4, 0, -5, 0, 1, 0],
    [0, -4, -4, 1, 1, 0],
    [0, 4, -4, -1, 1, 0],
    [0, -2, -1, 2, 1, 0],
    [0, 2, -1, -2, 1, 0],
    [0, 4, 0, -5, 0, 1],
]
G = [
    [1 / 4, 0, 0],
    [-1 / 6, -1 / 6, -1 / 6],
    [-1 / 6, 1 / 6, -1 / 6],
    [1 / 24, 1 / 12, 1 / 6],
    [1 / 24, -1 / 12, 1 / 6],
    [0, 0, 1],
]
A_T = [
    [1, 1, 1, 1, 1, 0],
    [0, 1, -1, 2, -2, 0],
    [0, 1, 1, 4, 4, 0],
    [0, 1, -1, 8, -8, 1],
]
TILES = 5  # 5x5 tiles of 4x4 outputs cover 19x19 (20x20, the last row and column dropped)


def transforms():
    """The 2-D input (36x36) and output (16x36) transforms, as Kronecker products of the 1-D ones."""
    b, a = torch.tensor(B_T, dtype=torch.float64), torch.tensor(A_T, dtype=torch.float64)
    return torch.kron(b, b).float(), torch.kron(a, a).float()


def filters(w: torch.Tensor) -> torch.Tensor:
    """(K, C, 3, 3) filters in the transform domain: (36, C, K), computed in float64."""
    g = torch.tensor(G, dtype=torch.float64)
    u = torch.einsum("ai,kcij,bj->abck", g, w.double(), g)
    return u.reshape(36, w.shape[1], w.shape[0]).float().contiguous()


def winograd_layer(x, u, bias, t_in, t_out):
    """relu(conv3x3(x) + bias) for channels-last ``x`` (N, C, 19, 19); returns channels-last (N, K, 19, 19)."""
    n, c = x.shape[:2]
    k = u.shape[2]
    padded = F.pad(x.permute(0, 2, 3, 1), (0, 0, 1, 2, 1, 2))  # (N, 22, 22, C)
    tiles = padded.unfold(1, 6, 4).unfold(2, 6, 4)  # (N, 5, 5, C, 6, 6), a view
    d = tiles.permute(4, 5, 0, 1, 2, 3).reshape(36, n * TILES * TILES * c)  # the copy, runs of C
    v = (t_in @ d).view(36, n * TILES * TILES, c)
    m = torch.bmm(v, u)  # (36, tiles, K): the 36 products
    y = (t_out @ m.view(36, -1)).view(4, 4, n, TILES, TILES, k)
    out = torch.empty(n, 4 * TILES, 4 * TILES, k)
    out.view(n, TILES, 4, TILES, 4, k).copy_(y.permute(2, 3, 0, 4, 1, 5))
    return torch.relu(out[:, :19, :19, :] + bias).permute(0, 3, 1, 2)


def median_ms(fn, rounds: int) -> float:
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--filters", type=int, default=128)
    ap.add_argument("--compile", action="store_true", help="also the Winograd layer through torch.compile")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    c = args.filters
    w = (torch.randn(c, c, 3, 3) / (3 * c**0.5)).contiguous(memory_format=CL)
    bias = torch.randn(c)
    u = filters(w)
    t_in, t_out = transforms()
    compiled = torch.compile(winograd_layer, dynamic=False) if args.compile else None
    print(
        f"| batch | largest difference (of the largest output) | direct (oneDNN), ms | Winograd, ms | its 36 products alone, ms |{' compiled, ms |' if compiled else ''}"
    )
    print(f"|---|---|---|---|---|{'---|' if compiled else ''}")
    with torch.no_grad():
        for n in args.batches:
            x = torch.randn(n, c, 19, 19).contiguous(memory_format=CL)
            ref = torch.relu(F.conv2d(x, w, bias, padding=1))
            diff = ((winograd_layer(x, u, bias, t_in, t_out) - ref).abs().max() / ref.abs().max()).item()
            direct = median_ms(lambda: torch.relu(F.conv2d(x, w, bias, padding=1)), args.rounds)
            wino = median_ms(lambda: winograd_layer(x, u, bias, t_in, t_out), args.rounds)
            v = torch.randn(36, n * TILES * TILES, c)
            products = median_ms(lambda: torch.bmm(v, u), args.rounds)
            row = f"| {n} | {diff:.1e} | {direct:.2f} | {wino:.2f} | {products:.2f} |"
            if compiled:  # median_ms's first call compiles it, untimed
                row += f" {median_ms(lambda: compiled(x, u, bias, t_in, t_out), args.rounds):.2f} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
