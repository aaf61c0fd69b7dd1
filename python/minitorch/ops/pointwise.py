"""Elementwise ops written from other elementwise ops: ``square``, ``reciprocal``,
``clamp_min`` and ``clamp_max`` (their autograd and devices are those of the ops they call);
``div`` with its ``rounding_mode`` (the C++ ``_C.div`` divides); ``minitorch.clamp``, the
function form of the C++ ``Tensor.clamp``; ``Tensor.where``, the method form of the C++
``minitorch.where``; ``positive`` and ``rsub``.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py), but ``clamp``, whose method is C++,
``where``, whose function is, and ``rsub``, a function only (as in PyTorch).
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor
from ._args import check_input


def square(self) -> Tensor:
    """``self ** 2`` (an int64 result for int64 and bool tensors, as in PyTorch)."""
    return self.pow(2)


def reciprocal(self) -> Tensor:
    """``1 / self``; integer and bool tensors give float32 (1 / 0 is inf)."""
    return 1 / self


def clamp_min(self, min) -> Tensor:  # noqa: A002
    """``self.clamp(min=min)``: every element at least ``min`` (a number or a tensor)."""
    if min is None:
        raise TypeError("clamp_min(): argument 'min' must be a number or a Tensor, not None")
    return self.clamp(min=min)


def clamp_max(self, max) -> Tensor:  # noqa: A002
    """``self.clamp(max=max)``: every element at most ``max`` (a number or a tensor)."""
    if max is None:
        raise TypeError("clamp_max(): argument 'max' must be a number or a Tensor, not None")
    return self.clamp(max=max)


def clamp_min_(self, min) -> Tensor:  # noqa: A002
    """In-place :meth:`clamp_min`, one pass writing ``self``; returns ``self``."""
    if min is None:
        raise TypeError("clamp_min_(): argument 'min' must be a number or a Tensor, not None")
    _C._clamp_(self, min, None, "clamp_min_")
    return self


def clamp_max_(self, max) -> Tensor:  # noqa: A002
    """In-place :meth:`clamp_max`, one pass writing ``self``; returns ``self``."""
    if max is None:
        raise TypeError("clamp_max_(): argument 'max' must be a number or a Tensor, not None")
    _C._clamp_(self, None, max, "clamp_max_")
    return self


def clamp(input, min=None, max=None):  # noqa: A002
    """Limits every element to ``[min, max]`` (either bound may be None)."""
    check_input(input, "clamp")
    return input.clamp(min, max)


def clamp_(self, min=None, max=None) -> Tensor:  # noqa: A002
    """In-place :meth:`clamp`: one pass writing ``self`` (``p.data.clamp_(-c, c)``); returns ``self``."""
    _C._clamp_(self, min, max, "clamp_")
    return self


def div(self, other, *, rounding_mode=None) -> Tensor:
    """``self / other``: true division (integers give floats). ``rounding_mode='floor'``
    rounds the quotient down (``self // other``), ``'trunc'`` toward zero; both keep
    integer dtypes, as in C."""
    if rounding_mode is None:
        return _C.div(self, other)
    if rounding_mode == "floor":
        return _C.floor_divide(self, other)
    if rounding_mode != "trunc":
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    floor = _C.floor_divide(self, other)
    if floor.dtype.is_floating_point:
        return _C.div(self, other).trunc()
    # Integers: floor and trunc differ by one where the division is inexact and the signs differ.
    other_negative = other < 0
    signs_differ = (self < 0).logical_xor(other_negative) if isinstance(other_negative, Tensor) else (
        (self >= 0) if other_negative else (self < 0))
    return _C.where(signs_differ.logical_and(self % other != 0), floor + 1, floor)


def where(self, condition: Tensor, y) -> Tensor:
    """``minitorch.where(condition, self, y)``: ``self`` where ``condition`` is True, ``y``
    (a tensor or a number) elsewhere; the three broadcast together.

    >>> minitorch.tensor([1.0, 2.0]).where(minitorch.tensor([True, False]), 0.0)
    tensor([1., 0.])
    """
    return _C.where(condition, self, y)


def positive(self) -> Tensor:
    """``+self``: ``self`` itself (no copy), as PyTorch returns it; a bool tensor is refused."""
    if self.dtype == _C.dtype.bool:
        raise _C.DTypeError("positive: the `+` operator, on a bool tensor is not supported.")
    return self


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input`` (``sub`` with its operands swapped); ``other`` may be a number.

    >>> minitorch.rsub(minitorch.tensor([1, 2]), 5)
    tensor([4, 3])
    """
    check_input(input, "rsub")
    if input.dtype == _C.dtype.bool or (isinstance(other, Tensor) and other.dtype == _C.dtype.bool):
        raise _C.DTypeError("rsub: Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    if isinstance(other, Tensor):
        return other.sub(input, alpha=alpha)
    return _C.sub(other, input, alpha=alpha)
