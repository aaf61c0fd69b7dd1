"""The MNIST CNN's layers, forward + backward, beside PyTorch (when installed), in one
run: ``python benchmarks/bench_conv.py``.

CNN: conv(1->8, 3x3, pad 1) -> ReLU -> maxpool 2 -> conv(8->16, 3x3, pad 1) -> ReLU
-> maxpool 2 -> flatten -> linear(784->10), batch 64. Target (issue 5): no slower than
1.5x PyTorch on this CPU (1.0x as the aim). Then the 3-D layers (Conv3d, MaxPool3d,
AvgPool3d), batch 2.
"""
from __future__ import annotations


import numpy as np

import minitorch
from timing import best_of


def layers(lib):
    nn = lib.nn
    return [
        ("conv1 1->8 3x3", nn.Conv2d(1, 8, 3, padding=1), (64, 1, 28, 28)),
        ("maxpool 28->14", nn.MaxPool2d(2), (64, 8, 28, 28)),
        ("conv2 8->16 3x3", nn.Conv2d(8, 16, 3, padding=1), (64, 8, 14, 14)),
        ("maxpool 14->7", nn.MaxPool2d(2), (64, 16, 14, 14)),
        ("linear 784->10", nn.Linear(784, 10), (64, 784)),
    ]


def layers3d(lib):
    """The 3-D layers (made of 2-D kernels: conv3d as one grouped conv2d over the depth windows,
    the pools as 2-D pools per depth slice, then the depth windows), batch 2."""
    nn = lib.nn
    return [
        ("conv3d 8->16 3x3x3", nn.Conv3d(8, 16, 3, padding=1), (2, 8, 16, 32, 32)),
        ("maxpool3d 2", nn.MaxPool3d(2), (2, 16, 16, 32, 32)),
        ("avgpool3d 2", nn.AvgPool3d(2), (2, 16, 16, 32, 32)),
    ]


def model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(784, 10))


def fwd_bwd(lib, layer, shape):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

    def run():
        x.grad = None
        layer(x).sum().backward()

    return run


def train_step(lib):
    m = model(lib)
    opt = lib.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 64))
    loss_fn = lib.nn.CrossEntropyLoss()

    def run():
        loss = loss_fn(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return run


def main() -> None:
    libs = [("minitorch", minitorch)]
    try:
        import torch

        torch.set_num_threads(minitorch.get_num_threads())
        libs.append(("pytorch", torch))
    except ImportError:
        print("(PyTorch not installed: only minitorch is timed)")
    rows = {}
    for name, lib in libs:
        for label, layer, shape in layers(lib) + layers3d(lib):
            rows.setdefault(label, {})[name] = best_of(fwd_bwd(lib, layer, shape))
        rows.setdefault("full training step", {})[name] = best_of(train_step(lib))
    print(f"forward+backward (the 2-D layers batch 64, the 3-D ones batch 2), ms (threads={minitorch.get_num_threads()}); ratio = minitorch / PyTorch")
    print(f"{'layer':>20} {'minitorch':>10} {'pytorch':>9} {'ratio':>6}")
    for label, r in rows.items():
        pt = r.get("pytorch")
        extra = f"{pt * 1e3:>9.2f} {r['minitorch'] / pt:>6.2f}" if pt else f"{'-':>9} {'-':>6}"
        print(f"{label:>20} {r['minitorch'] * 1e3:>10.2f} {extra}")


if __name__ == "__main__":
    main()
