"""``minitorch.special``: PyTorch's ``torch.special`` names for the special functions.

Most are the elementwise ops under SciPy's names (``expit`` is ``sigmoid``, ``gammaln`` is
``lgamma``, ``psi`` is ``digamma``...); the rest are short compositions of them:

- ``ndtr(x)`` = Phi(x), the standard normal CDF, ``erfc(-x / sqrt 2) / 2`` (erfc keeps
  the far left tail that ``(1 + erf(x / sqrt 2)) / 2`` rounds to 0);
- ``ndtri(p)`` = Phi^-1(p), ``sqrt 2 * erfinv(2p - 1)``;
- ``log_ndtr(x)`` = log Phi(x), with an asymptotic series in the far left tail;
- ``entr(x)`` = -x log x (0 at 0, -inf below 0);
- ``multigammaln(a, p)`` = log of the multivariate gamma function;
- ``polygamma(n, x)``: the n-th derivative of digamma, for n = 0 and 1.
"""
from __future__ import annotations

import math

from . import _C
from ._C import Tensor
from .autograd.function import Function

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "xlogy", "xlog1py", "gammaln", "digamma", "psi",
           "polygamma", "multigammaln", "exp2", "expm1", "log1p", "log_softmax", "softmax", "logsumexp",
           "round", "sinc", "ndtr", "ndtri", "log_ndtr", "entr"]


def _m():
    import minitorch
    return minitorch


def _tensor(op: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"special.{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    return x


def erf(input: Tensor) -> Tensor:
    return _m().erf(input)


def erfc(input: Tensor) -> Tensor:
    return _m().erfc(input)


def erfinv(input: Tensor) -> Tensor:
    return _m().erfinv(input)


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid, ``1 / (1 + e^-x)``."""
    return _m().sigmoid(input)


def logit(input: Tensor, eps=None) -> Tensor:
    return _m().logit(input, eps)


def xlogy(input, other) -> Tensor:
    return _m().xlogy(input, other)


def xlog1py(input, other) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN); either
    may be a number. log1p keeps the digits that ``log(1 + other)`` would round away."""
    m = _m()
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special.xlog1py(): expected a Tensor for input or other")
    from .ops.sampling import _float_dtype
    ref = input if isinstance(input, Tensor) else other
    dtype = _float_dtype(input, other)  # the floating tensors' promoted dtype, else the default

    def as_tensor(v):
        if isinstance(v, Tensor):
            return v.to(dtype) if v.dtype != dtype else v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"special.xlog1py(): expected a Tensor or a number, got {type(v).__name__}")
        return m.full((), float(v), dtype=dtype, device=ref.device)

    x, y = as_tensor(input), as_tensor(other)
    zero = (x == 0).logical_and(y.isnan().logical_not())
    safe = m.where(zero, 0.0, y)  # no -inf * 0 in the branch where() drops (other = -1)
    return m.where(zero, 0.0, x * safe.log1p())


def gammaln(input: Tensor) -> Tensor:
    return _m().lgamma(input)


def digamma(input: Tensor) -> Tensor:
    return _m().digamma(input)


psi = digamma


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma: n = 0 is digamma, n = 1 trigamma (digamma's gradient
    kernel). Higher orders are not implemented."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise _C.InputError(f"polygamma(n, x) does not support negative or non-integer n, got {n!r}")
    x = _tensor("polygamma", input)
    if n == 0:
        return _m().digamma(x)
    if n == 1:
        if not x.dtype.is_floating_point:
            x = x.to(_m().get_default_dtype())
        return _C._trigamma(x)
    raise NotImplementedError(f"special.polygamma: n = {n} is not implemented (n = 0 and 1 are)")


def multigammaln(input: Tensor, p: int) -> Tensor:
    """log Gamma_p(a) = p (p - 1) / 4 log(pi) + sum_j lgamma(a - j / 2), j = 0 .. p-1;
    every element must exceed (p - 1) / 2."""
    a = _tensor("multigammaln", input)
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise _C.InputError(f"multigammaln: p must be a positive integer, got {p!r}")
    m = _m()
    if a.numel() and not bool((a > (p - 1) / 2).all().item()):
        raise _C.InputError(f"multigammaln: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    out = (a - 0.0).lgamma() if p == 1 else m.stack([(a - j / 2).lgamma() for j in range(p)]).sum(0)
    return out + p * (p - 1) / 4 * math.log(math.pi)


def exp2(input: Tensor) -> Tensor:
    return _m().exp2(input)


def expm1(input: Tensor) -> Tensor:
    return _m().expm1(input)


def log1p(input: Tensor) -> Tensor:
    return _m().log1p(input)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return _m().log_softmax(input, dim, dtype=dtype)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return _m().softmax(input, dim, dtype=dtype)


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    return _m().logsumexp(input, dim, keepdim)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 (torch.special.round)
    """Round half to even, at ``decimals`` places: ``round(x * 10^d) / 10^d`` (PyTorch's)."""
    x = _tensor("round", input)
    if decimals == 0:
        return _m().round(x)
    scale = 10.0 ** decimals
    return (x * scale).round() / scale


def sinc(input: Tensor) -> Tensor:
    return _m().sinc(input)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, ``erfc(-x / sqrt 2) / 2``."""
    return _m().erfc(_tensor("ndtr", input) * (-1 / math.sqrt(2))) * 0.5


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ``ndtr``, ``-sqrt 2 * erfcinv(2p)`` (one kernel, ``_ndtri``): 2p is
    exact, so the far left tail keeps every digit of p; -inf at 0, inf at 1, NaN outside."""
    x = _tensor("ndtri", input)
    if not x.dtype.is_floating_point:
        x = x.to(_m().get_default_dtype())
    return _C._ndtri(x)


def log_ndtr(input: Tensor) -> Tensor:
    """``log ndtr(x)``, computed in float64 (rounded to the input's dtype once): for x below
    -20, where ndtr's erfc nears underflow, the asymptotic series ``-x^2/2 - log(-x sqrt(2
    pi)) + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8)`` (relative error < 1e-10 there)."""
    x = _tensor("log_ndtr", input)
    m = _m()
    dtype = x.dtype if x.dtype.is_floating_point else m.get_default_dtype()
    x = x.to(m.float64)
    far = x < -20
    safe = m.where(far, x, -21.0)  # the tail formula only where it is used (no log of a positive)
    r = 1 / (safe * safe)
    series = 1 - r * (1 - r * (3 - r * (15 - r * 105)))
    tail = -safe * safe / 2 - (-safe * math.sqrt(2 * math.pi)).log() + series.log()
    # x >= 0: log(1 - ndtr(-x)) through log1p, which keeps the tiny ndtr(-x) that
    # log(ndtr(x)) would round to log(1) = 0
    near = m.where(far, 0.0, x)
    right = (-ndtr(-near.abs())).log1p()
    return m.where(far, tail, m.where(near >= 0, right, ndtr(near).log())).to(dtype)


class _Entr(Function):
    """entr's values, with PyTorch's derivative ``-(1 + log x)`` everywhere: +inf at 0 (the
    slope of -x log x there), NaN for negative x. The values are piecewise (0 at 0, -inf below),
    so their own graph would give 0 at those places instead."""

    @staticmethod
    def forward(ctx, x):
        m = _m()
        ctx.save_for_backward(x)
        positive = x > 0
        safe = m.where(positive, x, 1.0)
        out = m.where(positive, -safe * safe.log(), m.where(x == 0, 0.0, -math.inf))
        return m.where(x.isnan(), x, out)

    # derivative of special.entr, input x: -g (1 + log x)
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(x.log() + 1)


def entr(input: Tensor) -> Tensor:
    """``-x log x``: 0 at 0, -inf for negative x, NaN for NaN; its derivative is
    ``-(1 + log x)`` (+inf at 0, as PyTorch's)."""
    x = _tensor("entr", input)
    if not x.dtype.is_floating_point:
        x = x.to(_m().get_default_dtype())
    return _Entr.apply(x)
