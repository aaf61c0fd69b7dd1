"""The activation functions of ``nn.functional`` beyond relu/sigmoid/tanh/gelu/silu/elu/
leaky_relu/softplus: clamps and shrinks (``hardtanh``, ``relu6``, ``threshold``,
``softshrink``, ``hardshrink``), the smooth ones (``hardswish``, ``hardsigmoid``, ``mish``,
``logsigmoid``, ``softsign``, ``tanhshrink``, ``selu``, ``celu``), those with a
weight or a dim (``prelu``, ``glu``, ``softmin``), and the randomized leaky ReLU (``rrelu``).

Most are compositions of tensor ops (clamp, where, expm1, softplus, softmax...), so their
gradients are theirs; ``hardswish``, ``hardsigmoid`` and ``mish`` are fused kernels of
op_list.h (one kernel forward, one backward). As for ``F.relu``, ``inplace=True`` writes the result into the input
(``F._inplace_capable``).
"""
from __future__ import annotations

import warnings

from .. import _C
from .._tensor import _wrap
from . import functional as F

# SELU's constants (Klambauer et al., 2017), as PyTorch gives them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``x`` clamped to ``[min_val, max_val]``; its gradient is 1 strictly inside the bounds
    and 0 at and beyond them, as PyTorch's (``clamp``'s is 1 at the bounds too).

    One kernel forward and one backward (``_C._hardtanh``); ``inplace=True`` writes into
    ``input`` with one kernel, inside a graph too (the backward reads only the result).

    >>> F.hardtanh(minitorch.tensor([-3.0, 0.5, 2.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val cannot be greater than max_val, got min_val={min_val}, "
                         f"max_val={max_val}")
    if not (isinstance(input, _C.Tensor) and input.is_floating_point()):  # integers: a plain clamp
        lo, hi = (int(v) if float(v).is_integer() else v for v in (min_val, max_val))  # relu6's 0.0, 6.0
        return F._write_into(input, "hardtanh_", lambda x: x.clamp(lo, hi)) if inplace else input.clamp(lo, hi)
    return (_C._hardtanh_ if inplace else _C._hardtanh)(input, float(min_val), float(max_val))


def relu6(input, inplace: bool = False):
    """``min(max(x, 0), 6)``: a hardtanh on ``[0, 6]`` (its gradient too: 0 at 0 and at 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


@F._inplace_capable(kernel="_hardsigmoid")
def hardsigmoid(input, inplace: bool = False):
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between (one fused kernel)."""
    return _C._hardsigmoid(input)


@F._inplace_capable(kernel="_hardswish")
def hardswish(input, inplace: bool = False):
    """``x * relu6(x + 3) / 6``: 0 below -3, ``x`` above 3 (one fused kernel)."""
    return _C._hardswish(input)


@F._inplace_capable(kernel="_mish")
def mish(input, inplace: bool = False):
    """``x * tanh(softplus(x))`` (one fused kernel)."""
    return _C._mish(input)


def logsigmoid(input):
    """``log(sigmoid(x))``, computed as ``-softplus(-x)``: no ``log(0)`` for very negative x."""
    return -F.softplus(-input)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1.0)


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - input.tanh()


@F._inplace_capable
def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``x`` where ``x > threshold``, else ``value``."""
    return _C.where(input > threshold, input, value)


def softshrink(input, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between: ``x`` minus
    its clamp to ``[-lambd, lambd]``."""
    if lambd < 0:
        raise _C.InputError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}.")
    return input - input.clamp(-lambd, lambd)


def hardshrink(input, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return _C.where(input.abs() > lambd, input, 0.0)


@F._inplace_capable
def selu(input, inplace: bool = False):
    """``scale * elu(x, alpha)`` with SELU's fixed alpha and scale (self-normalizing)."""
    return F.elu(input, _SELU_ALPHA) * _SELU_SCALE


@F._inplace_capable
def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise _C.InputError("celu: alpha cannot be 0 (it divides x)")
    if alpha == 1:  # elu's formula exactly (one fused kernel)
        return _C._elu(input, 1.0)
    # exp of min(x, 0) / alpha: the branch not taken never overflows.
    return _C.where(input > 0, input, (input.clamp(max=0.0) * (1.0 / alpha)).expm1() * alpha)


def prelu(input, weight):
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` holds one slope, or one per
    channel (dim 1 of ``input``)."""
    if not isinstance(weight, _C.Tensor):
        raise TypeError(f"prelu: weight must be a Tensor, got {type(weight).__name__}")
    if weight.dim() > 1:
        raise _C.InputError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if weight.numel() == 1:
        slope = weight.reshape(())
    else:
        if input.dim() == 0:
            raise _C.InputError(f"prelu: Not allow zero-dim input tensor with a weight of shape {tuple(weight.shape)}")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise _C.InputError(f"prelu: Mismatch of parameter numbers and input channel size. Found parameter "
                                f"numbers = {weight.numel()} and channel size = {channels} (input shape "
                                f"{tuple(input.shape)})")
        slope = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    return _C._leaky_relu(input, slope)  # one kernel; backward also gives the slope's gradient


def glu(input, dim: int = -1):
    """The gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the two halves of ``input``
    along ``dim``."""
    if input.dim() == 0:
        raise _C.InputError("glu: glu does not support scalars because halving size must be even")
    d = _wrap(dim, input.dim(), "glu")
    n = input.shape[d]
    if n % 2:
        raise _C.InputError(f"glu: Halving dimension must be even, but dimension {d} is size {n} "
                            f"(input shape {tuple(input.shape)})")
    a, b = input.split(n // 2, d)
    return a * b.sigmoid()


def _implicit_softmax_dim(op: str, ndim: int) -> int:
    """PyTorch's (deprecated) dim when none is given: 0 for 0-, 1- and 3-dim input, else 1."""
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim: int | None = None, dtype=None):
    """``softmax(-x)`` along ``dim``; ``dtype``: the input is cast to it first."""
    if dim is None:
        dim = _implicit_softmax_dim("softmin", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return F.softmax(-input, dim)


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False):
    """The randomized leaky ReLU (Xu et al., 2015): ``x`` where ``x > 0``, else ``slope * x``.
    While ``training`` each element draws its own slope from U(``lower``, ``upper``) (and its
    gradient is that slope); otherwise (the default) the slope is their mean, as a leaky_relu.

    One ``_leaky_relu`` kernel with a tensor of slopes (prelu's), after one uniform draw.

    >>> F.rrelu(minitorch.tensor([-2.0, 3.0]), 0.1, 0.3)
    tensor([-0.4000,  3.0000])
    """
    if lower > upper:
        raise _C.InputError(f"rrelu: lower bound should be less than or equal to the upper bound, got lower={lower} "
                            f"and upper={upper}")
    if not training:
        return F.leaky_relu(input, (lower + upper) / 2, inplace)
    if not (isinstance(input, _C.Tensor) and input.is_floating_point()):
        got = input.dtype if isinstance(input, _C.Tensor) else type(input).__name__
        raise TypeError(f"rrelu: expected a floating point Tensor, got {got}")

    def compute(x):
        slope = _C._rand(tuple(x.shape), x.dtype, x.device) * (upper - lower) + lower
        return _C._leaky_relu(x, slope)

    return F._write_into(input, "rrelu_", compute) if inplace else compute(input)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """``rrelu`` written into ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)
