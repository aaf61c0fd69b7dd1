"""Everyday elementwise math: interpolation and fused updates (``lerp``, ``addcmul``,
``addcdiv`` and their in-place forms: argument checks here, one C++ kernel each,
ops/ternary.cpp), and, written from other elementwise ops, stable forms (``logaddexp``, ``logaddexp2``,
``hypot``, ``xlogy``, ``logit``), NaN handling (``nan_to_num``, ``fmax``, ``fmin``), unit
changes (``deg2rad``, ``rad2deg``), ``heaviside``, and the binary exponent (``frexp``,
``ldexp``). Their gradients and devices are those of the ops they call (where, maximum,
log1p...).

Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py, which also makes the in-place forms:
the generic ones, or this module's ``<name>_`` for an op declared ``inplace=NATIVE``).
"""
from __future__ import annotations

import collections
import math
import numbers

from .. import _C
from .._C import Tensor
from ..autograd import no_grad

_LN2 = math.log(2.0)


def _floating(op: str, *tensors) -> None:
    """PyTorch's error for an op with no integer or bool kernel."""
    for t in tensors:
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise _C.DTypeError(f"{op}: not implemented for {t.dtype.name} tensors (expected a floating point dtype)")


def _no_bool(op: str, *tensors) -> None:
    for t in tensors:
        if isinstance(t, Tensor) and t.dtype == _C.dtype.bool:
            raise _C.DTypeError(f"{op}: not implemented for bool tensors")


def _tensor_arg(op: str, what: str, v) -> Tensor:
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}(): argument '{what}' must be a Tensor, not {type(v).__name__}")
    return v


def _number_operand(op: str, self: Tensor, other) -> Tensor:
    """``other`` as a tensor: a Python number becomes a 0-dim tensor of ``self``'s floating
    dtype (the default dtype beside an integer ``self``) on its device; TypeError for
    anything else that is not a Tensor."""
    if isinstance(other, Tensor):
        return other
    if isinstance(other, bool) or not isinstance(other, numbers.Real):
        raise TypeError(f"{op}(): argument 'other' must be a number or a Tensor, not {type(other).__name__}")
    from .creation import full, get_default_dtype
    dtype = self.dtype if self.dtype.is_floating_point else get_default_dtype()
    return full((), float(other), dtype=dtype, device=self.device)


def _safe_denominator(x: Tensor) -> Tensor:
    """``x`` with its zeros replaced by ones, so that a ``where`` that discards ``a / x`` there
    sends no NaN gradient back (0 * inf)."""
    return _C.where(x == 0, 1.0, x)


def _lerp_args(end, weight) -> None:
    _tensor_arg("lerp", "end", end)
    if not isinstance(weight, Tensor) and (isinstance(weight, bool) or not isinstance(weight, numbers.Real)):
        raise TypeError(f"lerp(): argument 'weight' must be a number or a Tensor, not {type(weight).__name__}")


def lerp(self, end: Tensor, weight) -> Tensor:
    """Linear interpolation ``self + weight * (end - self)``; ``weight`` is a number or a
    tensor (all three broadcast; tensors of one floating dtype). Computed from the nearer
    end, as PyTorch does, so ``weight=1`` gives ``end`` exactly. One kernel (C++ ``ternary``).

    >>> minitorch.lerp(minitorch.zeros(2), minitorch.ones(2), 0.25).tolist()
    [0.25, 0.25]
    """
    _lerp_args(end, weight)
    return _C._ternary("lerp", self, end, weight, 1)


def lerp_(self, end: Tensor, weight) -> Tensor:
    """In-place :meth:`lerp`: writes ``self + weight * (end - self)`` into ``self`` in one
    pass (the EMA update ``avg.lerp_(p, 1 - decay)``) and returns ``self``."""
    _lerp_args(end, weight)
    return _C._ternary_("lerp", self, end, weight, 1)


def _addc_args(op: str, tensor1, tensor2) -> None:
    _tensor_arg(op, "tensor1", tensor1)
    _tensor_arg(op, "tensor2", tensor2)


def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self + value * tensor1 * tensor2`` (all three broadcast, dtypes promoted). One kernel."""
    _addc_args("addcmul", tensor1, tensor2)
    return _C._ternary("addcmul", self, tensor1, tensor2, value)


def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In-place :meth:`addcmul`, one pass over ``self`` (Adam's ``exp_avg_sq.addcmul_(g, g,
    value=1 - beta2)``); returns ``self``."""
    _addc_args("addcmul_", tensor1, tensor2)
    return _C._ternary_("addcmul", self, tensor1, tensor2, value)


def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self + value * tensor1 / tensor2`` (all three broadcast, dtypes promoted); refused
    when tensor1 and tensor2 are both integer, as in PyTorch (integer division is ambiguous).
    One kernel."""
    _addc_args("addcdiv", tensor1, tensor2)
    return _C._ternary("addcdiv", self, tensor1, tensor2, value)


def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In-place :meth:`addcdiv`, one pass over ``self``; returns ``self``."""
    _addc_args("addcdiv_", tensor1, tensor2)
    return _C._ternary_("addcdiv", self, tensor1, tensor2, value)


def _log_add(self, other, op: str) -> tuple:
    """(max, -|a - b|) of the operands, the difference 0 where they are equal (inf and inf)."""
    _tensor_arg(op, "other", other)
    _floating(op, self, other)
    diff = _C.where(self == other, 0.0, self - other)
    return _C.maximum(self, other), -diff.abs()


def logaddexp(self, other: Tensor) -> Tensor:
    """``log(exp(self) + exp(other))`` without overflow: ``max + log1p(exp(-|a - b|))``.

    >>> minitorch.logaddexp(minitorch.tensor([1000.0]), minitorch.tensor([1000.0])).tolist()
    [1000.6931762695312]
    """
    m, neg_gap = _log_add(self, other, "logaddexp")
    return m + neg_gap.exp().log1p()


def logaddexp2(self, other: Tensor) -> Tensor:
    """``log2(2**self + 2**other)`` without overflow: ``max + log2(1 + 2**-|a - b|)``."""
    m, neg_gap = _log_add(self, other, "logaddexp2")
    return m + (neg_gap * _LN2).exp().log1p() * (1 / _LN2)


def hypot(self, other: Tensor) -> Tensor:
    """``sqrt(self**2 + other**2)``, scaled by the larger magnitude so that squares of large
    values do not overflow (``hypot(1e30, 1e30)`` in float32 is 1.41e30); inf if either is
    inf, even with a NaN."""
    _tensor_arg("hypot", "other", other)
    _floating("hypot", self, other)
    a, b = self.abs(), other.abs()
    big, small = _C.maximum(a, b), _C.minimum(a, b)
    ratio = small / _safe_denominator(big)
    out = big * (ratio * ratio + 1).sqrt()
    return _C.where(a.isinf().logical_or(b.isinf()), math.inf, out)


def xlogy(self, other) -> Tensor:
    """``self * log(other)``, 0 where ``self`` is 0 (unless ``other`` is NaN); integers and
    bools give floats."""
    other = _number_operand("xlogy", self, other)
    keep = (self == 0).logical_and(other.isnan().logical_not())
    # Where self is 0, log(other) is replaced by log(1) = 0 only when it is not finite (other
    # <= 0 or inf): the gradient with respect to self stays log(other) there, as PyTorch's.
    bad_log = (other <= 0).logical_or(other.isinf())
    return self * _C.where(keep.logical_and(bad_log), 1.0, other).log()


def _float_of(x: Tensor) -> Tensor:
    """``x`` as a floating point tensor (integers and bools in the default dtype)."""
    if x.dtype.is_floating_point:
        return x
    from .creation import get_default_dtype
    return x.to(get_default_dtype())


def deg2rad(self) -> Tensor:
    """Degrees to radians: ``self * pi / 180`` (integers and bools give floats)."""
    return _float_of(self) * (math.pi / 180.0)


def rad2deg(self) -> Tensor:
    """Radians to degrees: ``self * 180 / pi`` (integers and bools give floats)."""
    return _float_of(self) * (180.0 / math.pi)


def logit(self, eps=None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given
    (the gradient is then 0 outside it); without eps, 0 and 1 give -inf and inf."""
    _floating("logit", self)
    p = self if eps is None else self.clamp(float(eps), 1.0 - float(eps))
    return (p / (1 - p)).log()


def nan_to_num(self, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """NaN to ``nan``, +inf to ``posinf`` and -inf to ``neginf`` (by default the largest and
    smallest finite values of the dtype, ``minitorch.finfo``). Integers and bools are copied.

    >>> minitorch.nan_to_num(minitorch.tensor([float("nan"), float("inf"), 1.0])).tolist()
    [0.0, 3.4028234663852886e+38, 1.0]
    """
    if not self.dtype.is_floating_point:
        return self.clone()
    from .._finfo import finfo
    info = finfo(self.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = _C.where(self.isnan(), float(nan), self)
    out = _C.where(self == math.inf, float(posinf), out)
    return _C.where(self == -math.inf, float(neginf), out)


def _nan_ignoring(self, other, op: str, pick) -> Tensor:
    _tensor_arg(op, "other", other)
    _no_bool(op, self, other)
    both = pick(self, other)
    return _C.where(other.isnan(), self, _C.where(self.isnan(), other, both))


def fmax(self, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN: where one of the pair is NaN, the other (NaN only
    where both are)."""
    return _nan_ignoring(self, other, "fmax", _C.maximum)


def fmin(self, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN: where one of the pair is NaN, the other."""
    return _nan_ignoring(self, other, "fmin", _C.minimum)


def heaviside(self, values: Tensor) -> Tensor:
    """The step function: 0 where ``self < 0``, ``values`` where ``self == 0``, 1 where
    ``self > 0`` (``values`` broadcasts; both of one dtype, as PyTorch requires). Not
    differentiable, as in PyTorch."""
    _tensor_arg("heaviside", "values", values)
    if values.dtype != self.dtype:
        raise _C.DTypeError(f"heaviside: is not yet implemented for tensors with different dtypes "
                            f"({self.dtype.name} and {values.dtype.name})")
    with no_grad():
        return _C.where(self == 0, values, (self > 0).to(self.dtype))


def copysign(self, other) -> Tensor:
    """``|self|`` with the sign of ``other`` (its sign bit: -0.0 counts as negative);
    integers give floats. Differentiable in ``self`` (``sign(self) * sign(result)``; 0 at
    0), not in ``other``."""
    from .creation import get_default_dtype
    other = _number_operand("copysign", self, other)
    dtype = _C.result_type(self, other)  # a 0-dim float64 other makes an int self float64
    if not dtype.is_floating_point:
        dtype = get_default_dtype()
    x = self if self.dtype == dtype else self.to(dtype)
    other = other if other.dtype == dtype else other.to(dtype)
    magnitude = x.abs()
    return _C.where(other.detach().signbit(), -magnitude, magnitude)


def sinc(self) -> Tensor:
    """The normalized sinc, ``sin(pi x) / (pi x)``, 1 at 0 (its gradient 0 there); integers
    give floats."""
    from .creation import get_default_dtype
    x = self if self.dtype.is_floating_point else self.to(get_default_dtype())
    zero = x == 0
    safe = _C.where(zero, 1.0, x)  # no 0/0 in the branch where() drops, nor in its gradient
    px = safe * math.pi
    return _C.where(zero, 1.0, px.sin() / px)


def float_power_(self, exponent) -> Tensor:
    """In place: only a float64 tensor can hold float_power's float64 result (PyTorch's rule)."""
    if self.dtype != _C.dtype.float64:
        raise RuntimeError(f"float_power_: the base given to float_power_ has dtype {self.dtype} but the "
                           "operation's result requires dtype float64")
    from .inplace import _check_writable, _in_graph, _write
    out = float_power(self, exponent)
    in_graph = _in_graph(self, (exponent,))
    _check_writable(self, "float_power_", in_graph)
    return self.copy_(out) if in_graph else _write(self, out, "float_power_")


def float_power(self, exponent) -> Tensor:
    """``self ** exponent`` computed in float64, whatever the inputs' dtypes (PyTorch's)."""
    base = self.to(_C.dtype.float64) if isinstance(self, Tensor) else self
    exp = exponent.to(_C.dtype.float64) if isinstance(exponent, Tensor) else float(exponent)
    if not isinstance(base, Tensor):
        return float(base) ** exp
    return base.pow(exp)


# ---- the binary exponent: frexp / ldexp ----

def _times_power_of_two(x: Tensor, e: Tensor) -> Tensor:
    """``x * 2**e`` for a float64 ``x`` and whole-numbered float64 ``e``, as two factors
    ``2**(e // 2)`` and ``2**(e - e // 2)``, so that neither overflows nor underflows when
    ``2**e`` alone would (``e`` from -1074, a subnormal's, to 1024)."""
    half = (e / 2).floor()
    return x * half.exp2() * (e - half).exp2()


_FrexpResult = collections.namedtuple("frexp", ["mantissa", "exponent"])


def frexp(self) -> tuple:
    """``(mantissa, exponent)`` with ``self = mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1``
    (NumPy's and C's ``frexp``); 0, inf and NaN give themselves and exponent 0. The mantissa
    has ``self``'s dtype, the exponent is int32. Computed in float64 (which holds every
    float16/bfloat16/float32 value and its exponent exactly): the exponent from ``log2``,
    corrected by one where rounding put the mantissa out of [0.5, 1). Differentiable in the
    mantissa: its gradient is ``2**-exponent``.

    >>> m, e = minitorch.frexp(minitorch.tensor([8.0, 0.75]))
    >>> m.tolist(), e.tolist()
    ([0.5, 0.75], [4, 0])
    """
    if not self.dtype.is_floating_point:
        raise _C.DTypeError(f"frexp: only supports floating-point dtypes, got {self.dtype.name}")
    x = self.to(_C.dtype.float64)
    with no_grad():
        size = x.abs()
        regular = size.isfinite().logical_and(size != 0)
        size = _C.where(regular, size, 1.0)
        e = size.log2().floor() + 1
        m = _times_power_of_two(size, -e)
        e = _C.where(m >= 1, e + 1, _C.where(m < 0.5, e - 1, e))
        e = _C.where(regular, e, 0.0)
    mantissa = _times_power_of_two(x, -e).to(self.dtype)
    return _FrexpResult(mantissa, e.to(_C.dtype.int32))


def ldexp(self, other: Tensor) -> Tensor:
    """``self * 2**other``, elementwise (broadcast): the inverse of ``frexp``. ``2**other`` is
    taken in floating point (the default dtype for integer exponents), so integer inputs
    give floats. Differentiable in both.

    >>> minitorch.ldexp(minitorch.tensor([1.0, 0.75]), minitorch.tensor([3, 1])).tolist()
    [8.0, 1.5]
    """
    _tensor_arg("ldexp", "other", other)
    return self * _C.pow(2.0, other)
