"""MNIST MLP training speed beside PyTorch and a hand-written NumPy MLP, in one run:
``python benchmarks/bench_mnist.py`` (needs MINITORCH_DATA or --data for real MNIST;
falls back to random data of MNIST's shape).

784-128-10 ReLU MLP, SGD lr 0.1, batch 64, cross-entropy. Reports time per training
step (median and p90) and per epoch (938 steps). Target (issue 4): faster than
PyTorch per step on this 2-core CPU at batch 64.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import minitorch
from minitorch import nn


def load(data_dir):
    try:
        ds = minitorch.data.MNIST(data_dir, train=True)
        x = ds.data.numpy().reshape(-1, 784)
        y = ds.targets.numpy()
        src = "real MNIST"
    except FileNotFoundError:
        rng = np.random.default_rng(0)
        x = rng.random((60000, 784), dtype=np.float32)
        y = rng.integers(0, 10, 60000)
        src = "random data (MNIST not found)"
    return ((x - 0.1307) / 0.3081).astype(np.float32), y.astype(np.int64), src


def batches(n, batch, seed=0):
    order = np.random.default_rng(seed).permutation(n)
    return [order[i:i + batch] for i in range(0, n - batch + 1, batch)]


def time_steps(step, idx_list):
    times = []
    for idx in idx_list:
        t0 = time.perf_counter()
        step(idx)
        times.append(time.perf_counter() - t0)
    return np.array(times)


def minitorch_runner(x, y, threads):
    minitorch.set_num_threads(threads)
    minitorch.manual_seed(0)
    X, Y = minitorch.from_numpy(x), minitorch.from_numpy(y)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def step(idx):
        i = minitorch.from_numpy(idx)
        xb, yb = minitorch.index_select(X, 0, i), minitorch.index_select(Y, 0, i)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def torch_runner(x, y, threads):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    X, Y = torch.from_numpy(x), torch.from_numpy(y)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(idx):
        i = torch.from_numpy(idx)
        loss = loss_fn(model(X[i]), Y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def numpy_runner(x, y, threads):
    """The same MLP by hand: forward, softmax cross-entropy, backward, SGD."""
    rng = np.random.default_rng(0)
    b1 = 1 / np.sqrt(784)
    b2 = 1 / np.sqrt(128)
    W1 = rng.uniform(-b1, b1, (784, 128)).astype(np.float32)
    c1 = rng.uniform(-b1, b1, 128).astype(np.float32)
    W2 = rng.uniform(-b2, b2, (128, 10)).astype(np.float32)
    c2 = rng.uniform(-b2, b2, 10).astype(np.float32)

    def step(idx):
        nonlocal W1, c1, W2, c2
        xb, yb = x[idx], y[idx]
        h = xb @ W1 + c1
        a = np.maximum(h, 0)
        z = a @ W2 + c2
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        p[np.arange(len(yb)), yb] -= 1
        dz = p / len(yb)
        dW2, dc2 = a.T @ dz, dz.sum(0)
        da = dz @ W2.T
        dh = da * (h > 0)
        dW1, dc1 = xb.T @ dh, dh.sum(0)
        W1 -= 0.1 * dW1
        c1 -= 0.1 * dc1
        W2 -= 0.1 * dW2
        c2 -= 0.1 * dc2

    return step


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default=None)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=938, help="steps timed (938 = one epoch at batch 64)")
    args = p.parse_args()
    x, y, src = load(args.data)
    idx = batches(len(x), args.batch_size)[: args.steps]
    runners = [("minitorch", minitorch_runner, t) for t in (1, 2)] + [("numpy", numpy_runner, 0)]
    try:
        import torch  # noqa: F401

        runners += [("pytorch", torch_runner, t) for t in (1, 2)]
    except ImportError:
        print("(PyTorch not installed: its rows are skipped)")
    print(f"MNIST MLP 784-128-10, batch {args.batch_size}, {len(idx)} steps, data: {src}")
    print(f"{'library':>10} {'threads':>7} {'median us':>10} {'p90 us':>8} {'epoch s':>8}")
    results = {}
    for name, make, threads in runners:
        step = make(x, y, max(threads, 1))
        time_steps(step, idx[:50])  # warm-up
        t = time_steps(step, idx)
        results[(name, threads)] = np.median(t)
        label = "-" if name == "numpy" else str(threads)
        print(f"{name:>10} {label:>7} {np.median(t) * 1e6:>10.0f} {np.percentile(t, 90) * 1e6:>8.0f} "
              f"{t.sum() * 938 / len(idx):>8.2f}")
    best_mt = min(v for (n, _), v in results.items() if n == "minitorch")
    pts = [v for (n, _), v in results.items() if n == "pytorch"]
    if pts:
        print(f"\nmedian step: best PyTorch / best minitorch = {min(pts) / best_mt:.2f}x (> 1 means minitorch is faster)")


if __name__ == "__main__":
    main()
