"""A short tour of the tensor core: ``python -m minitorch.examples.demo``.

Shows storage and strides, views, broadcasting, reductions and a matmul checked
against NumPy, then times a GEMM beside NumPy. (The MNIST training command replaces
this as the main job once nn/optim/data exist.)
"""
from __future__ import annotations

import time

import numpy as np

import minitorch


def _best_time(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    print(f"minitorch {minitorch.__version__}  threads={minitorch.get_num_threads()}  "
          f"CUDA compiled={minitorch.cuda.is_compiled()} available={minitorch.cuda.is_available()}\n")

    x = minitorch.arange(12, dtype=minitorch.float32).view(3, 4)
    print("x =", x)
    print("shape", x.shape, "strides", x.stride(), "contiguous", x.is_contiguous())
    xt = x.T
    print("x.T shares storage: strides", xt.stride(), "contiguous", xt.is_contiguous())
    print("x[1:, ::2] =", x[1:, ::2], "offset", x[1:, ::2].storage_offset())

    row = minitorch.tensor([10.0, 20.0, 30.0, 40.0])
    print("\nbroadcast x + row ->", (x + row).shape, "row expanded strides", row.expand(3, 4).stride())
    print("sum over dim 0:", x.sum(0), " max over dim 1:", x.max(1).values)

    minitorch.manual_seed(0)
    a, b = minitorch.randn(256, 512), minitorch.randn(512, 128)
    c = a @ b
    err = np.abs(c.numpy() - a.numpy() @ b.numpy()).max()
    print(f"\n(256x512) @ (512x128): max |minitorch - numpy| = {err:.2e}")

    n = 1024
    a, b = minitorch.randn(n, n), minitorch.randn(n, n)
    an, bn = a.numpy(), b.numpy()
    t_mt, t_np = _best_time(lambda: a @ b), _best_time(lambda: an @ bn)
    flops = 2 * n**3
    print(f"GEMM {n}x{n}: minitorch {flops / t_mt / 1e9:.1f} GFLOP/s, numpy {flops / t_np / 1e9:.1f} GFLOP/s "
          f"(ratio {t_np / t_mt:.2f}x)")


if __name__ == "__main__":
    main()
