"""PyTorch's "Learning PyTorch with Examples" tutorial: fit sin(x) on [-pi, pi] with
a + b P3(c + d x), P3 the Legendre polynomial written as a custom ``autograd.Function``
(forward with ``ctx.save_for_backward``, hand-written backward), the parameters plain
tensors with ``requires_grad=True``, updated by hand under ``torch.no_grad()`` and zeroed
with ``grad.zero_()``; float64 (``torch.float64`` tensors)."""
import math

import numpy as np


def run(torch, device="cpu", steps=3):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float64
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    init = np.random.default_rng(22).uniform(-0.5, 0.5, 4)
    a, b, c, d = (torch.full((), float(v), device=device, dtype=dtype, requires_grad=True) for v in init)
    learning_rate = 5e-6
    losses = []
    for t in range(steps * 4):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad.zero_()
            d.grad.zero_()
    return losses + [a.item(), b.item(), c.item(), d.item()]
