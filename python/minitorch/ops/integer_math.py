"""Integer arithmetic written from the elementwise integer ops: ``gcd`` and ``lcm`` (Euclid's
algorithm, run on whole tensors) and the shifts ``bitwise_left_shift`` /
``bitwise_right_shift`` (products and floor divisions by powers of two), with the operators
``<<`` and ``>>``.

Integer dtypes only (bool and floating tensors raise, as in PyTorch); the operands broadcast
and promote (``result_type``). Not differentiable. Each function takes the tensor first and
is both ``Tensor.<name>`` and ``minitorch.<name>``; the in-place forms are the generic ones
and the operators this module's ``__lshift__``... (ops/registry.py, from ops/declarations.py).
"""
from __future__ import annotations

import numbers

from .. import _C
from .._C import Tensor
from ..autograd import no_grad


def _operands(op: str, self: Tensor, other, numbers_ok: bool) -> tuple:
    """(self, other) as tensors of their promoted integer dtype."""
    if not isinstance(other, Tensor):
        if not numbers_ok or isinstance(other, bool) or not isinstance(other, numbers.Integral):
            want = "Tensor or int" if numbers_ok else "Tensor"
            raise TypeError(f"{op}(): argument 'other' must be {want}, not {type(other).__name__}")
        other = _C._full((), int(other), _C.dtype.int64, self.device)
    dtype = _C.result_type(self, other)
    if dtype.is_floating_point or dtype == _C.dtype.bool:
        raise _C.DTypeError(f"{op}: not implemented for {dtype.name} tensors (expected an integer dtype; got "
                            f"{self.dtype.name} and {other.dtype.name})")
    return self.to(dtype), other.to(dtype)


# ---- gcd and lcm ----

def gcd(self, other: Tensor) -> Tensor:
    """The greatest common divisor of ``|self|`` and ``|other|``, elementwise (``gcd(0, 0)``
    is 0). Euclid's algorithm on whole tensors: ``(a, b) <- (b, a % b)`` where ``b != 0``,
    until every ``b`` is 0. The host checks that after each step, and there are at most
    about 90 steps for 64-bit values (consecutive Fibonacci numbers are the slowest).

    >>> minitorch.gcd(minitorch.tensor([12, -18, 0]), minitorch.tensor([18, 12, 5])).tolist()
    [6, 6, 5]
    """
    a, b = _operands("gcd", self, other, numbers_ok=False)
    with no_grad():
        a, b = a.abs(), b.abs()
        a = a + b * 0  # the broadcast shape, so that where() below keeps it
        while bool((b != 0).any()):
            live = b != 0
            rest = a % _C.where(live, b, 1)
            a, b = _C.where(live, b, a), _C.where(live, rest, 0)
    return a


def lcm(self, other: Tensor) -> Tensor:
    """The least common multiple of ``|self|`` and ``|other|``, elementwise: ``|a / gcd * b|``,
    0 where either is 0. Wraps around where it does not fit the dtype, as in PyTorch.

    >>> minitorch.lcm(minitorch.tensor([4, 6, 0]), minitorch.tensor([6, 4, 3])).tolist()
    [12, 12, 0]
    """
    a, b = _operands("lcm", self, other, numbers_ok=False)
    g = gcd(a, b)
    with no_grad():
        return _C.where(g == 0, 0, (a // _C.where(g == 0, 1, g) * b).abs())


# ---- shifts ----

def bitwise_left_shift(self, other) -> Tensor:
    """``self << other``, elementwise: ``self * 2**other`` wrapped to the dtype. A shift by a
    negative amount or by at least the dtype's width gives 0 (PyTorch's rule; C leaves it
    undefined).

    >>> minitorch.tensor([1, 3, -2]) << 2
    tensor([ 4, 12, -8])
    """
    a, b = _operands("bitwise_left_shift", self, other, numbers_ok=True)
    bits = 8 * a.dtype.itemsize
    valid = (b >= 0).logical_and(b < bits)
    with no_grad():
        # 2**(bits-1) wraps to the dtype's minimum, and a times it is a << (bits-1), wrapped.
        return _C.where(valid, a * (2 ** b.clamp(0, bits - 1)), 0)


def bitwise_right_shift(self, other) -> Tensor:
    """``self >> other``, elementwise: ``floor(self / 2**other)`` (an arithmetic shift: the sign
    is kept). A shift by a negative amount or by at least the width gives the sign (-1 or 0)
    for signed dtypes, 0 for uint8 (PyTorch's rule).

    >>> minitorch.tensor([16, 5, -5]) >> 1
    tensor([ 8,  2, -3])
    """
    a, b = _operands("bitwise_right_shift", self, other, numbers_ok=True)
    bits = 8 * a.dtype.itemsize
    signed = a.dtype != _C.dtype.uint8
    valid = (b >= 0).logical_and(b < bits)
    with no_grad():
        b = _C.where(valid, b, bits - 1)
        # two floor divisions by 2**half and 2**(b - half): each power fits the dtype
        half = b // 2
        out = a // (2 ** half) // (2 ** (b - half))
        return out if signed else _C.where(valid, out, 0)


def _reflected(op, other, self: Tensor) -> Tensor:
    """``other <op> self`` where ``other`` is on the left: a Python int (``2 << t``) or a tensor."""
    if isinstance(other, Tensor):
        return op(other, self)
    if isinstance(other, bool) or not isinstance(other, numbers.Integral):
        return NotImplemented
    return op(_C._full((), int(other), _C.dtype.int64, self.device), self)


def __lshift__(self, other):  # noqa: N807  (Tensor's operator, attached by ops/registry.py)
    return bitwise_left_shift(self, other)


def __rlshift__(self, other):  # noqa: N807
    return _reflected(bitwise_left_shift, other, self)


def __ilshift__(self, other):  # noqa: N807
    return self.bitwise_left_shift_(other)


def __rshift__(self, other):  # noqa: N807
    return bitwise_right_shift(self, other)


def __rrshift__(self, other):  # noqa: N807
    return _reflected(bitwise_right_shift, other, self)


def __irshift__(self, other):  # noqa: N807
    return self.bitwise_right_shift_(other)
