"""Small ops written in Python on top of the C++ ones: ``square``, ``reciprocal``,
``clamp_min``/``clamp_max``, ``mm``/``mv``/``dot`` and ``movedim``/``unflatten``.

Each is one or two existing ops (plus PyTorch's argument checks), so autograd and
every device come for free: ``mm`` is ``matmul`` of two matrices, ``movedim`` a
``permute``, ``unflatten`` a ``view``.
"""
from __future__ import annotations

import numbers

from . import _C
from ._C import Tensor
from ._functions import function_from_method
from ._tensor import _wrap, add_methods, dim_tuple


def _square(self) -> Tensor:
    """``self ** 2`` (an int64 result for int64 and bool tensors, as in PyTorch)."""
    return self.pow(2)


def _reciprocal(self) -> Tensor:
    """``1 / self``; integer and bool tensors give float32 (1 / 0 is inf)."""
    return 1 / self


def _clamp_min(self, min) -> Tensor:  # noqa: A002
    """``self.clamp(min=min)``: every element at least ``min`` (a number or a tensor)."""
    if min is None:
        raise TypeError("clamp_min(): argument 'min' must be a number or a Tensor, not None")
    return self.clamp(min=min)


def _clamp_max(self, max) -> Tensor:  # noqa: A002
    """``self.clamp(max=max)``: every element at most ``max`` (a number or a tensor)."""
    if max is None:
        raise TypeError("clamp_max(): argument 'max' must be a number or a Tensor, not None")
    return self.clamp(max=max)


def _shapes_of(op: str, a: Tensor, b, dims: tuple) -> tuple:
    """Checks that ``b`` is a tensor and that ``(a.ndim, b.ndim) == dims``; returns both shapes."""
    if not isinstance(b, Tensor):
        raise TypeError(f"{op}(): second argument must be a Tensor, not {type(b).__name__}")
    sa, sb = tuple(a.shape), tuple(b.shape)
    if (a.ndim, b.ndim) != dims:
        raise _C.InputError(f"{op}: expected {dims[0]}-D and {dims[1]}-D tensors, got shapes {sa} and {sb}")
    return sa, sb


def _mm(self, mat2: Tensor) -> Tensor:
    """Matrix product of two matrices: ``(n, k) @ (k, m) -> (n, m)``."""
    sa, sb = _shapes_of("mm", self, mat2, (2, 2))
    if sa[1] != sb[0]:
        raise _C.InputError(f"mm: shapes {sa} and {sb} cannot be multiplied ({sa[1]} != {sb[0]})")
    return self.matmul(mat2)


def _mv(self, vec: Tensor) -> Tensor:
    """Matrix times vector: ``(n, k) @ (k,) -> (n,)``."""
    sa, sb = _shapes_of("mv", self, vec, (2, 1))
    if sa[1] != sb[0]:
        raise _C.InputError(f"mv: shapes {sa} and {sb} cannot be multiplied ({sa[1]} != {sb[0]})")
    return self.matmul(vec)


def _dot(self, other: Tensor) -> Tensor:
    """Dot product of two vectors of the same length, as a 0-dim tensor."""
    sa, sb = _shapes_of("dot", self, other, (1, 1))
    if sa != sb:
        raise _C.InputError(f"dot: the vectors have different lengths ({sa[0]} != {sb[0]})")
    return self.matmul(other)


def _movedim(self, source, destination) -> Tensor:
    """Moves dim(s) ``source`` to position(s) ``destination``; the other dims keep their
    order. A view (a ``permute``).

    >>> minitorch.zeros(2, 3, 4).movedim(0, -1).shape
    minitorch.Size([3, 4, 2])
    """
    src = dim_tuple(source, self.ndim, "movedim", "source")
    dst = dim_tuple(destination, self.ndim, "movedim", "destination")
    if len(src) != len(dst):
        raise _C.InputError(f"movedim: source {source} and destination {destination} must name the same number "
                            f"of dims ({len(src)} != {len(dst)})")
    if self.ndim == 0:
        return self.view(())
    order = [None] * self.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(self.ndim) if d not in src)
    return self.permute(*(next(rest) if o is None else o for o in order))


def _unflatten(self, dim: int, sizes) -> Tensor:
    """Splits dim ``dim`` into ``sizes`` (one of them may be -1); a view.

    >>> minitorch.zeros(2, 12).unflatten(1, (3, -1)).shape
    minitorch.Size([2, 3, 4])
    """
    if self.ndim == 0:
        raise IndexError("unflatten: a 0-dim tensor has no dimension to unflatten")
    d = _wrap(dim, self.ndim, "unflatten")
    sizes = tuple(sizes) if isinstance(sizes, (tuple, list)) else (sizes,)
    if not sizes:
        raise _C.InputError("unflatten: sizes must be non-empty")
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) for s in sizes):
        raise TypeError(f"unflatten: sizes must be a tuple of ints, got {sizes}")
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise _C.InputError(f"unflatten: sizes {sizes} may hold one -1 and otherwise sizes >= 0")
    n, known = self.shape[d], 1
    for s in sizes:
        known *= s if s != -1 else 1
    if -1 in sizes:
        if known == 0 or n % known:
            raise _C.InputError(f"unflatten: sizes {sizes} cannot split dim {d} of size {n}")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise _C.InputError(f"unflatten: sizes {sizes} don't multiply up to the size of dim {d} ({n})")
    shape = tuple(self.shape)
    return self.view(shape[:d] + sizes + shape[d + 1:])


add_methods({
    "square": _square,
    "reciprocal": _reciprocal,
    "clamp_min": _clamp_min,
    "clamp_max": _clamp_max,
    "mm": _mm,
    "mv": _mv,
    "dot": _dot,
    "movedim": _movedim,
    "unflatten": _unflatten,
})

square = function_from_method("square")
reciprocal = function_from_method("reciprocal")
clamp_min = function_from_method("clamp_min")
clamp_max = function_from_method("clamp_max")
mm = function_from_method("mm")
mv = function_from_method("mv")
dot = function_from_method("dot")
movedim = function_from_method("movedim")
unflatten = function_from_method("unflatten")
