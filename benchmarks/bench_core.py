"""Tensor-core benchmarks beside NumPy, in one run: ``python benchmarks/bench_core.py``.

Prints GEMM GFLOP/s for N = 64 ... 2048 (float32) and the time of tiny ops
(``a + b`` on 1 and 100 elements), with the ratio to NumPy. Best of several repeats.
Targets (issue 2): GEMM >= 0.9x NumPy at N >= 256; a tiny op <= 2 us.
"""
from __future__ import annotations

import argparse

import numpy as np

import minitorch
from timing import best_of


def gemm_table(sizes, threads: int) -> None:
    print(f"\nGEMM float32, C = A @ B (N x N), threads={threads}")
    print(f"{'N':>6} {'minitorch GF/s':>15} {'numpy GF/s':>11} {'ratio':>6}")
    for n in sizes:
        a, b = minitorch.randn(n, n), minitorch.randn(n, n)
        an, bn = a.numpy(), b.numpy()
        number = max(1, int(2e8 / n**3))
        t_mt = best_of(lambda: a @ b, 5, number)
        t_np = best_of(lambda: an @ bn, 5, number)
        flops = 2.0 * n**3
        print(f"{n:>6} {flops / t_mt / 1e9:>15.1f} {flops / t_np / 1e9:>11.1f} {t_np / t_mt:>6.2f}")


def tiny_table() -> None:
    print("\nTiny ops (us per call; lower is better)")
    print(f"{'op':>22} {'minitorch':>10} {'numpy':>8} {'ratio':>6}")
    for n in (1, 100):
        a, b = minitorch.randn(n), minitorch.randn(n)
        an, bn = a.numpy(), b.numpy()
        for name, f_mt, f_np in (
            (f"a + b  (n={n})", lambda: a + b, lambda: an + bn),
            (f"a * 2.0 (n={n})", lambda: a * 2.0, lambda: an * 2.0),
            (f"a.sum() (n={n})", lambda: a.sum(), lambda: an.sum()),
        ):
            t_mt = best_of(f_mt, 7, 20000) * 1e6
            t_np = best_of(f_np, 7, 20000) * 1e6
            print(f"{name:>22} {t_mt:>10.2f} {t_np:>8.2f} {t_np / t_mt:>6.2f}")


def threads_table() -> None:
    """Elementwise and reduction time with 1 thread and with all cores: small tensors
    must not get slower with more threads (they should stay serial)."""
    cores = minitorch.get_num_threads()
    print(f"\nThreads: us per call with 1 and {cores} threads (ratio > 1 = more threads faster)")
    print(f"{'op':>22} {'1 thread':>10} {f'{cores} threads':>10} {'ratio':>6}")
    for n in (1_000, 100_000, 1_000_000, 10_000_000):
        a, b = minitorch.randn(n), minitorch.randn(n)
        number = max(3, int(2e7 / n))
        for name, fn in ((f"a + b (n={n:.0e})", lambda: a + b), (f"a.exp() (n={n:.0e})", lambda: a.exp()),
                         (f"a.sum() (n={n:.0e})", lambda: a.sum())):
            minitorch.set_num_threads(1)
            t1 = best_of(fn, 5, number) * 1e6
            minitorch.set_num_threads(cores)
            tn = best_of(fn, 5, number) * 1e6
            print(f"{name:>22} {t1:>10.1f} {tn:>10.1f} {t1 / tn:>6.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", type=int, nargs="*", default=[64, 128, 256, 512, 1024, 2048])
    p.add_argument("--threads", type=int, default=None, help="minitorch threads (default: all cores)")
    args = p.parse_args()
    if args.threads:
        minitorch.set_num_threads(args.threads)
    print(f"minitorch {minitorch.__version__}, numpy {np.__version__}")
    gemm_table(args.sizes, minitorch.get_num_threads())
    tiny_table()
    threads_table()


if __name__ == "__main__":
    main()
