"""Writes tests/conv/golden_conv_transpose3d.npz: PyTorch's conv_transpose3d outputs and
gradients for the cases of test_conv_transpose3d.py. Run with a Python that has torch."""
from __future__ import annotations

import os

import numpy as np

CASES = [dict(stride=1), dict(stride=2, padding=1), dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1)),
         dict(stride=2, dilation=2, groups=2, output_padding=1), dict(dilation=(2, 1, 1), padding=(2, 0, 0))]


def run(lib, i: int) -> list:
    kw = CASES[i]
    rng = np.random.default_rng(i)
    groups = kw.get("groups", 1)
    x = lib.tensor(rng.standard_normal((2, 4, 3, 4, 5)), requires_grad=True)
    w = lib.tensor(rng.standard_normal((4, 6 // groups, 3, 2, 3)), requires_grad=True)
    b = lib.tensor(rng.standard_normal(6), requires_grad=True)
    y = lib.nn.functional.conv_transpose3d(x, w, b, **kw)
    (y ** 2).sum().backward()
    return [np.array(t, dtype=np.float64) for t in (y.detach().numpy(), x.grad.numpy(), w.grad.numpy(),
                                                   b.grad.numpy())]


if __name__ == "__main__":
    import torch

    out = {f"{i}/{k}": v for i in range(len(CASES)) for k, v in zip("yxwb", run(torch, i))}
    np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_conv_transpose3d.npz"),
                        **out)
    print(f"wrote golden_conv_transpose3d.npz ({len(CASES)} cases, torch {torch.__version__})")
