"""Ops that rearrange a tensor: ``movedim`` (a ``permute``) and ``unflatten`` (a ``view``) are
views; ``flip``, ``repeat``, ``roll``, ``tril`` and ``triu`` are C++ ops (``cpp/src/ops/shape.cpp``,
one remap kernel each) whose arguments are parsed here.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

import numbers

from .. import _C
from .._C import Tensor
from .._tensor import _wrap, dim_tuple
from ._args import int_arg, ints_arg, varargs


def movedim(self, source, destination) -> Tensor:
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


def unflatten(self, dim: int, sizes) -> Tensor:
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


def flip(self, *dims) -> Tensor:
    """Reverses the order of elements along ``dims`` (a copy, as in PyTorch).

    >>> minitorch.tensor([[1, 2], [3, 4]]).flip(1)
    tensor([[2, 1],
            [4, 3]])
    """
    return _C._flip(self, ints_arg("flip", "dims", varargs(dims)))


def repeat(self, *sizes) -> Tensor:
    """Tiles ``self``: ``sizes[i]`` copies along dim i (extra leading sizes add dims).

    >>> minitorch.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    return _C._repeat(self, ints_arg("repeat", "repeats", varargs(sizes)))


def roll(self, shifts, dims=None) -> Tensor:
    """Shifts elements along ``dims`` by ``shifts``, wrapping around (the flattened tensor
    when ``dims`` is None).

    >>> minitorch.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3])
    """
    return _C._roll(self, ints_arg("roll", "shifts", shifts), [] if dims is None else ints_arg("roll", "dims", dims))


def tril(self, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``); zeros above."""
    return _C._tril(self, int_arg("tril", "diagonal", diagonal))


def triu(self, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``); zeros below."""
    return _C._triu(self, int_arg("triu", "diagonal", diagonal))
