"""Module-level functions that are Tensor methods too: ``minitorch.sum(x, dim)`` is
``x.sum(dim)``, ``minitorch.transpose(x, 0, 1)`` is ``x.transpose(0, 1)``."""
from __future__ import annotations

import inspect

from . import _C
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


def function_from_method(name: str):
    """``minitorch.<name>(input, *args, **kwargs)``, calling ``input.<name>(*args, **kwargs)``
    once ``input`` is checked to be a Tensor; it carries the method's docstring."""
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):
        _check(input, name)
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__
    try:  # methods written in Python have a signature to show in help(); C++ ones do not
        params = list(inspect.signature(method).parameters.values())
        function.__signature__ = inspect.Signature([params[0].replace(name="input"), *params[1:]])
    except (TypeError, ValueError):
        pass
    return function


# Views and copies.
clone = function_from_method("clone")
flatten = function_from_method("flatten")
permute = function_from_method("permute")
reshape = function_from_method("reshape")
squeeze = function_from_method("squeeze")
t = function_from_method("t")
transpose = function_from_method("transpose")
unsqueeze = function_from_method("unsqueeze")
numel = function_from_method("numel")
is_floating_point = function_from_method("is_floating_point")


def is_tensor(obj) -> bool:
    """True when ``obj`` is a minitorch Tensor (an ``nn.Parameter`` included)."""
    return isinstance(obj, Tensor)


def get_default_dtype():
    """The dtype of tensors made from Python floats and of float factories without a
    dtype: ``minitorch.float32`` unless :func:`set_default_dtype` changed it."""
    return _C._get_default_dtype()


def set_default_dtype(d) -> None:
    """Makes ``d`` (``minitorch.float32`` or ``minitorch.float64``) the default floating
    dtype: of ``minitorch.tensor([1.0])``, ``zeros(3)``, ``x_int * 0.5``, new layers'
    weights... As in PyTorch, integer and bool dtypes are refused.

    >>> minitorch.set_default_dtype(minitorch.float64)
    >>> minitorch.tensor([1.0]).dtype
    minitorch.float64
    """
    if not isinstance(d, _C.dtype):
        raise TypeError(f"set_default_dtype: expected a dtype such as minitorch.float64, got {type(d).__name__}")
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {d}")
    _C._set_default_dtype(d)
