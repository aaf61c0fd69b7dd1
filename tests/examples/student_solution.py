"""Exercise 3 — custom autograd Functions (a student's submission).

The exercise:

* ``Sigmoid`` — a ``minitorch.autograd.Function``: ``forward(ctx, x)`` returns
  ``1 / (1 + exp(-x))``; ``backward(ctx, grad)`` returns ``dL/dx``.
* ``Linear`` — a ``minitorch.autograd.Function``: ``forward(ctx, x, weight, bias)``
  returns ``x @ weight.T + bias`` for ``x`` of shape ``(..., in_features)``, ``weight``
  of shape ``(out_features, in_features)`` and ``bias`` of shape ``(out_features,)``
  or ``None``. If ``x.shape[-1] != in_features`` it raises ``ValueError`` with a
  message that starts with ``"Linear:"`` and names both feature counts.
  ``backward`` returns one gradient per forward argument.
* ``softmax(x, dim)`` — a plain function built from tensor ops (autograd derives
  its backward), numerically stable for large inputs.

Do not call the built-in ``sigmoid``, ``linear`` or ``softmax``.
"""
from __future__ import annotations

import minitorch
from minitorch.autograd import Function


class Sigmoid(Function):
    """s = 1 / (1 + exp(-x)), and ds/dx = s * (1 - s)."""

    @staticmethod
    def forward(ctx, x):
        # For very negative x, exp(-x) overflows to inf and 1 / inf is 0: the right
        # limit, so no special case is needed.
        s = 1 / (1 + (-x).exp())
        # Save the *output*: the derivative is cheapest written in terms of s.
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 - s)


class Linear(Function):
    """y = x @ W.T + b, for x of shape (..., in_features)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        out_features, in_features = weight.shape
        if x.shape[-1] != in_features:
            raise ValueError(
                f"Linear: input has {x.shape[-1]} features but weight expects {in_features} "
                f"(input shape {tuple(x.shape)}, weight shape {tuple(weight.shape)})"
            )
        ctx.save_for_backward(x, weight)
        y = x @ weight.T
        if bias is not None:
            y = y + bias  # bias (out,) broadcasts over all the leading dims
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        out_features, in_features = weight.shape
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            # (..., out) @ (out, in) -> (..., in): matmul broadcasts the leading dims.
            gx = grad @ weight
        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
            # Fold every leading dim into one "batch" dim, so 1-D, 2-D and N-D inputs
            # are all handled the same way (reshape copies non-contiguous inputs).
            g2 = grad.reshape(-1, out_features)
            if ctx.needs_input_grad[1]:
                gw = g2.T @ x.reshape(-1, in_features)  # (out, in)
            if ctx.needs_input_grad[2]:
                # The bias was broadcast over the batch, so its gradient sums over it.
                gb = g2.sum(dim=0)
        return gx, gw, gb


def softmax(x: minitorch.Tensor, dim: int) -> minitorch.Tensor:
    """exp(x) / sum(exp(x)) along ``dim``.

    Subtracting the max first keeps exp() from overflowing; it does not change the
    result (softmax(x) == softmax(x - c)). The max is detached because the gradient
    through it is zero anyway (the shift cancels), so there is no point recording it.
    """
    m = x.detach().max(dim=dim, keepdim=True).values
    e = (x - m).exp()
    return e / e.sum(dim=dim, keepdim=True)
