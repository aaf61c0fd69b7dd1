"""Autograd overhead: forward + backward of a 10-op graph on small tensors, beside
PyTorch when it is installed: ``python benchmarks/bench_autograd.py``.

Small tensors make the time per-op bookkeeping (recording nodes, the engine walk),
not arithmetic. Target (issue 3): no slower than PyTorch.
"""
from __future__ import annotations


import numpy as np

import minitorch
from timing import best_of


def graph(lib, x, w, b):
    """Ten recorded ops: matmul, add, sigmoid, mul, sub, exp, div, relu, pow, mean."""
    h = (x @ w + b).sigmoid()
    h = h * h - h.exp() / 3.0
    return (h.relu() ** 2).mean()


def step(lib, x, w, b):
    def run():
        w.grad = None
        b.grad = None
        graph(lib, x, w, b).backward()

    return run


def main() -> None:
    rows = []
    for n in (4, 64):
        rng = np.random.default_rng(0)
        xs, ws, bs = rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal(n)
        x = minitorch.tensor(xs, dtype=minitorch.float32)
        w = minitorch.tensor(ws, dtype=minitorch.float32, requires_grad=True)
        b = minitorch.tensor(bs, dtype=minitorch.float32, requires_grad=True)
        t_mt = best_of(step(minitorch, x, w, b), 7, 300)
        t_fwd = best_of(lambda: graph(minitorch, x, w, b), 7, 300)
        t_pt = t_pt_fwd = None
        try:
            import torch

            torch.set_num_threads(1)
            xt = torch.tensor(xs, dtype=torch.float32)
            wt = torch.tensor(ws, dtype=torch.float32, requires_grad=True)
            bt = torch.tensor(bs, dtype=torch.float32, requires_grad=True)
            t_pt = best_of(step(torch, xt, wt, bt), 7, 300)
            t_pt_fwd = best_of(lambda: graph(torch, xt, wt, bt), 7, 300)
        except ImportError:
            pass
        rows.append((n, t_fwd, t_mt, t_pt_fwd, t_pt))

    print("10-op graph, float32, us per iteration (lower is better); ratio = PyTorch / minitorch")
    print(f"{'size':>8} {'mt fwd':>8} {'mt f+b':>8} {'pt fwd':>8} {'pt f+b':>8} {'ratio f+b':>10}")
    for n, f, fb, pf, pfb in rows:
        pt = f"{pf * 1e6:>8.1f} {pfb * 1e6:>8.1f} {pfb / fb:>10.2f}" if pfb else f"{'-':>8} {'-':>8} {'(no torch)':>10}"
        print(f"{f'{n}x{n}':>8} {f * 1e6:>8.1f} {fb * 1e6:>8.1f} {pt}")


if __name__ == "__main__":
    main()
