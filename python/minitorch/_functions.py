"""Module-level reductions and clamp: ``minitorch.sum(x, dim)`` is ``x.sum(dim)``."""
from __future__ import annotations

from ._C import Tensor


def _check(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """Sum over ``dim`` (an int, a tuple of ints, or None for all dims)."""
    _check(input, "sum")
    return input.sum(dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; the input must be floating point (or pass ``dtype=``)."""
    _check(input, "mean")
    return input.mean(dim, keepdim, dtype=dtype)


def max(input, dim=None, keepdim=False):  # noqa: A001
    """``max(x)`` -> a 0-dim tensor; ``max(x, dim)`` -> ``(values, indices)``;
    ``max(x, other_tensor)`` -> elementwise maximum."""
    _check(input, "max")
    return input.max(dim, keepdim)


def min(input, dim=None, keepdim=False):  # noqa: A001
    """Like :func:`max`, for the minimum."""
    _check(input, "min")
    return input.min(dim, keepdim)


def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (of the flattened tensor when ``dim`` is None)."""
    _check(input, "argmax")
    return input.argmax(dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    _check(input, "argmin")
    return input.argmin(dim, keepdim)


def clamp(input, min=None, max=None):  # noqa: A002
    """Limits every element to ``[min, max]`` (either bound may be None)."""
    _check(input, "clamp")
    return input.clamp(min, max)
