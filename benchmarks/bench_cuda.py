"""GPU benchmarks: ``python benchmarks/bench_cuda.py``.

On a real GPU: GFLOP/s of the naive, tiled and cuBLAS matmul kernels for N = 256 ... 4096
(float32), and one MNIST MLP epoch (938 steps of batch 64) on the GPU against the CPU.
Without a GPU it says so and exits cleanly (the emulated build runs kernels on the CPU,
so its timings mean nothing).
"""
from __future__ import annotations

import argparse
import sys
import time


import minitorch
from minitorch import nn


def best_seconds(fn, sync, repeat: int = 3) -> float:
    """The fastest of `repeat` timed calls after one warm-up; `sync` waits for the GPU."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def gflops(impl: str, n: int) -> float:
    a, b = minitorch.randn(n, n, device="cuda"), minitorch.randn(n, n, device="cuda")
    with minitorch.backends.cuda.use_matmul(impl):
        return 2.0 * n**3 / best_seconds(lambda: a @ b, minitorch.cuda.synchronize) / 1e9


def torch_gflops(n: int) -> float:
    """PyTorch's CUDA matmul on the same sizes, when a CUDA build of torch is installed."""
    try:
        import torch
    except ImportError:
        return float("nan")
    if not torch.cuda.is_available():
        return float("nan")
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    return 2.0 * n**3 / best_seconds(lambda: a @ b, torch.cuda.synchronize) / 1e9


def mlp_epoch(device: str, steps: int = 938) -> float:
    minitorch.manual_seed(0)
    x = minitorch.randn(steps * 64, 784, device=device)
    y = minitorch.randint(0, 10, (steps * 64,), device=device)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
    t0 = time.perf_counter()
    for s in range(steps):
        xb, yb = x[s * 64:(s + 1) * 64], y[s * 64:(s + 1) * 64]
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if device == "cuda":
        minitorch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", type=int, nargs="*", default=[256, 512, 1024, 2048, 4096])
    args = p.parse_args()
    if not minitorch.cuda.is_available() or minitorch.cuda.is_emulated():
        why = "the CUDA backend is emulated on the CPU" if minitorch.cuda.is_emulated() else "no CUDA GPU is available"
        print(f"bench_cuda: skipped — {why} (minitorch.cuda.is_available()={minitorch.cuda.is_available()}).")
        sys.exit(0)
    print(f"{'N':>6} {'naive GF/s':>11} {'tiled GF/s':>11} {'cuBLAS GF/s':>12} {'torch GF/s':>11} {'cuBLAS/torch':>13}")
    for n in args.sizes:
        row = [gflops(impl, n) if (impl != "naive" or n <= 2048) else float("nan") for impl in ("naive", "tiled", "cublas")]
        ref = torch_gflops(n)
        print(f"{n:>6} {row[0]:>11.1f} {row[1]:>11.1f} {row[2]:>12.1f} {ref:>11.1f} {row[2] / ref:>12.2f}x")
    t_cpu, t_gpu = mlp_epoch("cpu"), mlp_epoch("cuda")
    print(f"\nMNIST-shaped MLP epoch (938 steps, batch 64): CPU {t_cpu:.2f} s, GPU {t_gpu:.2f} s "
          f"(GPU is {t_cpu / t_gpu:.2f}x the CPU's speed)")


if __name__ == "__main__":
    main()
