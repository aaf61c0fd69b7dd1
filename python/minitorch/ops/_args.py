"""PyTorch's argument forms, checked once for the op modules: an int, an int or a sequence of
ints, ``f(1, 2)`` or ``f((1, 2))``, a list of tensors, a dim or every dim; and the check that
a function form's first argument is a tensor. Each raises PyTorch's TypeError naming the op.
"""
from __future__ import annotations

import functools
import numbers

from .._C import Tensor
from .._tensor import dim_tuple


def check_input(x, op: str) -> None:
    """TypeError unless ``x`` (``minitorch.<op>``'s first argument) is a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")


def tensors_arg(op: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not {type(tensors).__name__}")
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {k} in argument 'tensors', but got {type(t).__name__}")
    return list(tensors)


def int_arg(op: str, what: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{op}(): argument '{what}' must be an int, not {type(v).__name__}")
    return int(v)


def ints_arg(op: str, what: str, values) -> list:
    """An int or a sequence of ints (varargs unpacked by the caller) as a list of ints."""
    if isinstance(values, (tuple, list)):
        return [int_arg(op, what, v) for v in values]
    return [int_arg(op, what, values)]


def varargs(args: tuple) -> tuple:
    """``f(1, 2)`` and ``f((1, 2))`` alike."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def dims_or_all(dim, ndim: int, op: str) -> tuple:
    """``dim`` as a tuple of dims; None or an empty tuple/list means every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return dim_tuple(dim, ndim, op)


def numpy_names(fn):
    """Lets ``fn`` also take NumPy's keyword names, as PyTorch's argument parser does:
    ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` (``x.std(axis=0, keepdims=True)``).
    The C++ methods do the same in cpp/python/tensor_bindings.cpp (``numpy_names``)."""
    name = fn.__name__

    @functools.wraps(fn)
    def taking_numpy_names(*args, **kwargs):
        if "axis" in kwargs:
            if "dim" in kwargs:
                raise TypeError(f"{name}(): got multiple values for argument 'dim' (axis is its alias)")
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            if "keepdim" in kwargs:
                raise TypeError(f"{name}(): got multiple values for argument 'keepdim' (keepdims is its alias)")
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)

    return taking_numpy_names
