"""Fake quantization: quantize and dequantize in one step, staying in floating point.

``fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)`` is

    q   = round_half_even(x * (1 / scale) + zero_point)
    out = (clamp(q, quant_min, quant_max) - zero_point) * scale

which is what ``quantize_per_tensor(x, ...).dequantize()`` gives, without an integer tensor: quantization-
aware training puts it in the forward pass so that the network learns with the rounding error.
Rounding has a zero derivative almost everywhere, so the backward is PyTorch's
*straight-through estimator*: the gradient passes unchanged where ``q`` fell inside
``[quant_min, quant_max]`` and is zero where the value was clamped.

Both compute in the input's dtype (float32 for float16/bfloat16) with ``1 / scale`` rounded to
float32, as PyTorch's kernels do (``x * inv_scale``, not ``x / scale``), so results match
PyTorch's bit for bit on float32.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _C
from .._C import Tensor
from ..autograd.function import Function


def _check(op: str, x, quant_min: int, quant_max: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise _C.DTypeError(f"{op}: expected a floating point input, got {x.dtype.name}")
    if quant_min > quant_max:
        raise ValueError(f"{op}: `quant_min` ({quant_min}) should be less than or equal to `quant_max` ({quant_max})")


class _FakeQuantize(Function):
    """Forward: quantize-dequantize with broadcastable ``inv_scale``/``scale``/``zero_point``
    (numbers or tensors); backward: the straight-through estimator."""

    @staticmethod
    def forward(ctx, x, scale, inv_scale, zero_point, quant_min, quant_max):
        # float16/bfloat16 compute in float32 (their rounding would move values across steps)
        xc = x.float() if x.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else x
        q = (xc * inv_scale + zero_point).round()
        inside = (q >= quant_min) & (q <= quant_max)
        ctx.save_for_backward(inside)
        return ((q.clamp(quant_min, quant_max) - zero_point) * scale).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (inside,) = ctx.saved_tensors
        return grad * inside.to(grad.dtype), None, None, None, None, None


def fake_quantize_per_tensor_affine(input: Tensor, scale, zero_point, quant_min: int, quant_max: int) -> Tensor:
    """Quantize-dequantize ``input`` with one ``scale`` (float or 1-element tensor) and
    ``zero_point`` (int or 1-element tensor), clamping to ``[quant_min, quant_max]``.

    >>> x = minitorch.tensor([-1.0, 0.26, 0.3, 9.0])
    >>> minitorch.fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127).tolist()
    [-1.0, 0.30000001192092896, 0.30000001192092896, 9.0]
    """
    op = "fake_quantize_per_tensor_affine"
    _check(op, input, quant_min, quant_max)
    if isinstance(scale, Tensor):
        if scale.numel() != 1:
            raise ValueError(f"{op}: scale must be a number or a 1-element tensor, got shape {tuple(scale.shape)}")
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        if zero_point.numel() != 1:
            raise ValueError(f"{op}: zero_point must be a number or a 1-element tensor, got shape "
                             f"{tuple(zero_point.shape)}")
        zero_point = zero_point.item()
    if not isinstance(scale, numbers.Real) or not scale > 0:
        raise ValueError(f"{op}: scale must be a positive number, got {scale}")
    zero_point = int(round(zero_point))
    if not quant_min <= zero_point <= quant_max:
        raise ValueError(f"{op}: `zero_point` ({zero_point}) must be between `quant_min` ({quant_min}) and "
                         f"`quant_max` ({quant_max})")
    scale32 = float(np.float32(scale))
    inv_scale = float(np.float32(1.0) / np.float32(scale))
    return _FakeQuantize.apply(input, scale32, inv_scale, zero_point, int(quant_min), int(quant_max))


def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int,
                                     quant_max: int) -> Tensor:
    """Quantize-dequantize ``input`` with one ``scale[c]`` and ``zero_point[c]`` per index
    ``c`` of dimension ``axis`` (1-D tensors of ``input.shape[axis]`` values).

    >>> w = minitorch.tensor([[0.5, -0.26], [3.0, 1.0]])
    >>> s, z = minitorch.tensor([0.1, 1.0]), minitorch.tensor([0, 0], dtype=minitorch.int32)
    >>> minitorch.fake_quantize_per_channel_affine(w, s, z, 0, -128, 127).tolist()
    [[0.5, -0.30000001192092896], [3.0, 1.0]]
    """
    op = "fake_quantize_per_channel_affine"
    _check(op, input, quant_min, quant_max)
    for what, t in (("scale", scale), ("zero_point", zero_point)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{what}' must be a Tensor, not {type(t).__name__}")
    if input.dim() == 0:
        raise ValueError(f"{op}: expected an input with at least one dimension, got a 0-dim tensor")
    if not -input.dim() <= axis < input.dim():
        raise IndexError(f"{op}: axis {axis} is out of range for an input of {input.dim()} dimensions")
    axis %= input.dim()
    n = input.shape[axis]
    if scale.dim() != 1 or scale.shape[0] != n:
        raise ValueError(f"{op}: expected scale to be 1-D with {n} elements (input.size({axis})), got shape "
                         f"{tuple(scale.shape)}")
    if tuple(zero_point.shape) != tuple(scale.shape):
        raise ValueError(f"{op}: expected zero_point of shape {tuple(scale.shape)} (as scale), got "
                         f"{tuple(zero_point.shape)}")
    zp = zero_point.detach().to(_C.dtype.float32).to(input.device).round()
    if zp.numel() and (bool((zp < quant_min).any().item()) or bool((zp > quant_max).any().item())):
        raise ValueError(f"{op}: `zero_point` must be between `quant_min` ({quant_min}) and `quant_max` "
                         f"({quant_max})")
    # scale and zero_point as (1, ..., n, ..., 1): broadcast along every other dimension
    view = [1] * input.dim()
    view[axis] = n
    s32 = scale.detach().to(_C.dtype.float32).to(input.device)
    wide = _C.dtype.float64 if input.dtype == _C.dtype.float64 else _C.dtype.float32
    inv = (1.0 / s32).to(wide).reshape(view)
    return _FakeQuantize.apply(input, s32.to(wide).reshape(view), inv, zp.to(wide).reshape(view),
                               int(quant_min), int(quant_max))
