"""``minitorch.finfo`` and ``minitorch.iinfo``: the numeric limits of a dtype (PyTorch's
names and fields); and ``minitorch.can_cast``, PyTorch's rule for which dtypes a result may
be written into.

    >>> minitorch.finfo(minitorch.float32).eps     # the gap between 1.0 and the next float
    1.1920928955078125e-07
    >>> minitorch.iinfo(minitorch.int64).max
    9223372036854775807

For a floating dtype: ``bits``, ``eps``, ``max``, ``min`` (= -max), ``tiny`` and its other
name ``smallest_normal`` (the smallest positive normal number; subnormals go below it with
less precision), ``resolution`` (10 ** -decimal digits) and ``dtype`` (its name). The values
are those of IEEE 754 binary32 / binary64, read from NumPy.
"""
from __future__ import annotations

import numpy as np

from . import _C

_FLOATING = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": None}

# NumPy has no bfloat16: its limits, from the format (8 exponent bits as float32, 7 mantissa bits).
_BFLOAT16 = dict(bits=16, eps=2.0**-7, max=(2 - 2.0**-7) * 2.0**127, tiny=2.0**-126, precision=2)
_INTEGRAL = {"int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8}


def _numpy_type(fn: str, dtype, table: dict, kind: str, other: str):
    """The dtype's name and NumPy type, or a TypeError naming the function to use instead."""
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"minitorch.{fn}(): expected a minitorch.dtype, got {type(dtype).__name__}")
    if dtype.name not in table:
        raise TypeError(f"minitorch.{fn}() requires {kind} input type, got minitorch.{dtype.name}; "
                        f"use minitorch.{other} for it")
    return dtype.name, table[dtype.name]


class _DtypeInfo:
    """Two infos are equal when they describe the same dtype."""

    dtype: str

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dtype))


class finfo(_DtypeInfo):
    """Machine limits of a floating dtype (the default dtype when none is given)."""

    def __init__(self, type=None):  # noqa: A002  (PyTorch's parameter name)
        if type is None:
            type = _C._get_default_dtype()
        name, np_type = _numpy_type("finfo", type, _FLOATING, "a floating point", "iinfo")
        if np_type is None:
            info = _BFLOAT16
        else:
            n = np.finfo(np_type)
            info = dict(bits=n.bits, eps=n.eps, max=n.max, tiny=n.tiny, precision=n.precision)
        self.bits = int(info["bits"])
        self.eps = float(info["eps"])
        self.max = float(info["max"])
        self.min = -self.max
        self.tiny = float(info["tiny"])
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -int(info["precision"])
        self.dtype = name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo(_DtypeInfo):
    """Machine limits of an integer dtype: ``bits``, ``min``, ``max``, ``dtype``."""

    def __init__(self, type):  # noqa: A002
        if type == _C.dtype.bool:
            raise TypeError("minitorch.bool is not supported by minitorch.iinfo")
        name, np_type = _numpy_type("iinfo", type, _INTEGRAL, "an integer", "finfo")
        info = np.iinfo(np_type)
        self.bits = int(info.bits)
        self.min = int(info.min)
        self.max = int(info.max)
        self.dtype = name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _kind(dtype) -> int:
    """bool (0) < integer (1) < floating point (2)."""
    return 2 if dtype.is_floating_point else 0 if dtype == _C.dtype.bool else 1


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rule lets a value of dtype ``from_`` be written into a tensor
    of dtype ``to`` (what in-place ops and ``out=`` allow): any cast within a kind or to a
    higher one (bool < integer < floating point), narrowing included; never floating point
    to an integer or bool, nor an integer to bool.

    >>> minitorch.can_cast(minitorch.int64, minitorch.float16), minitorch.can_cast(minitorch.float32, minitorch.int32)
    (True, False)
    """
    for what, d in (("from", from_), ("to", to)):
        if not isinstance(d, _C.dtype):
            raise TypeError(f"can_cast(): argument '{what}' must be minitorch.dtype, not {type(d).__name__}")
    return _kind(from_) <= _kind(to)
