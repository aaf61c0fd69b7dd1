"""Exercise 3 — a submission with the mistakes students really make.

The grader must give this one partial credit: the forward passes are right, the
gradients are not. ``test_grade_student.py`` checks that it does.

Mistakes (each marked BUG below):
1. ``Sigmoid.backward`` uses the input x where the derivative needs the output s.
2. ``Linear`` only works for 2-D inputs (``grad.T @ x`` and ``grad.sum(0)``), and
   lets matmul's own error through instead of raising the required "Linear: ..." one.
3. ``softmax`` does not subtract the max, so ``exp`` overflows for large inputs.
"""
from __future__ import annotations

import minitorch
from minitorch.autograd import Function


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + (-x).exp())

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # BUG 1: sigma'(x) = s * (1 - s) with s = sigmoid(x), not x * (1 - x).
        return grad * x * (1 - x)


class Linear(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        # BUG 2a: no check of x.shape[-1] against weight.shape[1].
        ctx.save_for_backward(x, weight)
        y = x @ weight.T
        return y if bias is None else y + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        gx = grad @ weight
        gw = grad.T @ x      # BUG 2b: right only when x is 2-D
        gb = grad.sum(0)     # BUG 2c: right only when x is 2-D
        return gx, gw, gb


def softmax(x: minitorch.Tensor, dim: int) -> minitorch.Tensor:
    e = x.exp()  # BUG 3: exp(1000.0) is inf, and inf / inf is nan
    return e / e.sum(dim=dim, keepdim=True)
