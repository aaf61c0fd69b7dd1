"""Joining and cutting tensors: ``cat`` / ``stack`` (one C++ op each, ``cpp/src/ops/join.cpp``),
``hstack`` / ``vstack`` (a ``cat``), and ``split`` / ``split_with_sizes`` / ``chunk`` / ``unbind``
(views from the C++ ``split_with_sizes``, one backward node for all the pieces), ``narrow``
(a slice), and ``diff`` (differences of neighbouring slices, with ``prepend`` / ``append``
joined by a ``cat``). These functions parse PyTorch's argument forms.
``cat``, ``stack``, ``hstack`` and ``vstack`` are ``minitorch.<name>`` only; the others take the
tensor first and are both ``Tensor.<name>`` and ``minitorch.<name>`` (attached by
ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor
from .._tensor import _wrap
from ._args import int_arg, tensors_arg


def cat(tensors, dim: int = 0) -> Tensor:
    """Joins tensors along an existing dim; all other sizes must match.

    >>> minitorch.cat([minitorch.zeros(2, 3), minitorch.ones(1, 3)]).shape
    minitorch.Size([3, 3])
    """
    return _C._cat(tensors_arg("cat", tensors), int_arg("cat", "dim", dim))


def stack(tensors, dim: int = 0) -> Tensor:
    """Joins tensors of one shape along a new dim ``dim``.

    >>> minitorch.stack([minitorch.zeros(2, 3), minitorch.ones(2, 3)], dim=1).shape
    minitorch.Size([2, 2, 3])
    """
    return _C._stack(tensors_arg("stack", tensors), int_arg("stack", "dim", dim))


def hstack(tensors) -> Tensor:
    """``cat`` along dim 1 (dim 0 for 1-D tensors)."""
    ts = tensors_arg("hstack", tensors)
    return cat(ts, 0 if ts and ts[0].ndim <= 1 else 1)


def vstack(tensors) -> Tensor:
    """``cat`` along dim 0 of the tensors seen as at least 2-D."""
    ts = tensors_arg("vstack", tensors)
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in ts], 0)


def split(self, split_size_or_sections, dim: int = 0) -> tuple:
    """Cuts ``self`` into pieces along ``dim``: of ``split_size`` each (the last may be
    smaller), or of the sizes in a list. The pieces are views.

    >>> [p.shape[0] for p in minitorch.arange(5).split(2)]
    [2, 2, 1]
    """
    if self.ndim == 0:
        raise _C.InputError("split: cannot split a 0-dim tensor")
    d = _wrap(int_arg("split", "dim", dim), self.ndim, "split")
    n = self.shape[d]
    if isinstance(split_size_or_sections, (tuple, list)):
        sizes = [int_arg("split", "split_size_or_sections", s) for s in split_size_or_sections]
    else:
        size = int_arg("split", "split_size", split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise _C.InputError(f"split: split_size can only be 0 if dimension size is 0, and must be non-negative; "
                                f"got split_size={size} for dim {d} of size {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size and n else [0]
    return tuple(_C._split_with_sizes(self, sizes, d))


def split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
    """Cuts ``self`` into pieces of ``split_sizes`` along ``dim`` (they must add up)."""
    return split(self, list(split_sizes), dim)


def chunk(self, chunks: int, dim: int = 0) -> tuple:
    """Cuts ``self`` into ``chunks`` pieces of equal size ``ceil(n / chunks)`` along
    ``dim`` (fewer, or a smaller last one, when it does not divide), as PyTorch."""
    chunks = int_arg("chunk", "chunks", chunks)
    if chunks <= 0:
        raise _C.InputError(f"chunk: number of chunks must be greater than 0, got {chunks}")
    if self.ndim == 0:
        raise _C.InputError("chunk: expects at least a 1-dimensional tensor")
    d = _wrap(int_arg("chunk", "dim", dim), self.ndim, "chunk")
    n = self.shape[d]
    return split(self, -(-n // chunks), d) if n else split(self, [0] * chunks, d)


def unbind(self, dim: int = 0) -> tuple:
    """The slices of ``self`` along ``dim``, each without that dim (views)."""
    if self.ndim == 0:
        raise _C.InputError("unbind: dimension specified as 0 but tensor has no dimensions")
    d = _wrap(int_arg("unbind", "dim", dim), self.ndim, "unbind")
    return tuple(p.squeeze(d) for p in _C._split_with_sizes(self, [1] * self.shape[d], d))


def narrow(self, dim: int, start: int, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``."""
    d = _wrap(int_arg("narrow", "dim", dim), self.ndim, "narrow")
    n = self.shape[d]
    start = int_arg("narrow", "start", start)
    start = start + n if start < 0 else start
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n}) of dim {d}")
    return self[(slice(None),) * d + (slice(start, start + length),)]


def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The n-th forward difference along ``dim``: ``out[i] = x[i + 1] - x[i]``, applied ``n``
    times, after joining ``prepend`` and ``append`` (tensors with the same sizes but along
    ``dim``) to the ends. Bool tensors give ``x[i + 1] != x[i]``.

    >>> minitorch.diff(minitorch.tensor([1, 4, 9, 16])).tolist()
    [3, 5, 7]
    """
    n = int_arg("diff", "n", n)
    if n < 0:
        raise _C.InputError(f"diff: order must be non-negative but got {n}")
    if self.ndim == 0:
        raise _C.InputError("diff: expects input to be at least one-dimensional")
    d = _wrap(int_arg("diff", "dim", dim), self.ndim, "diff")
    parts = []
    for what, t in (("prepend", prepend), (None, self), ("append", append)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{what}' must be a Tensor, not {type(t).__name__}")
        if t.ndim != self.ndim:
            raise _C.InputError(f"diff: expected {what} to have the same number of dimensions as input "
                                f"({self.ndim}), got shape {tuple(t.shape)}")
        parts.append(t)
    x = cat(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        hi, lo = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = hi != lo if x.dtype == _C.dtype.bool else hi - lo
    return x
