"""Joining and cutting tensors: ``cat`` / ``stack`` (one C++ op each, ``cpp/src/ops/join.cpp``),
``hstack`` / ``vstack`` (a ``cat``), and ``split`` / ``split_with_sizes`` / ``chunk`` / ``unbind``
(views from the C++ ``split_with_sizes``, one backward node for all the pieces), ``narrow``
(a slice), ``diff`` (differences of neighbouring slices, with ``prepend`` / ``append``
joined by a ``cat``), ``tensor_split`` / ``hsplit`` / ``vsplit`` / ``dsplit`` (slices);
``broadcast_tensors``, ``meshgrid`` (``expand`` views), ``cartesian_prod`` and ``block_diag``
(a ``stack`` / ``cat``). These functions parse PyTorch's argument forms.
``cat``, ``stack``, ``hstack`` and ``vstack`` are ``minitorch.<name>`` only; the others take the
tensor first and are both ``Tensor.<name>`` and ``minitorch.<name>`` (attached by
ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

import warnings

from .. import _C
from .._C import Tensor
from .._tensor import _wrap
from ._args import int_arg, tensors_arg, numpy_names


@numpy_names
def cat(tensors, dim: int = 0) -> Tensor:
    """Joins tensors along an existing dim; all other sizes must match.

    >>> minitorch.cat([minitorch.zeros(2, 3), minitorch.ones(1, 3)]).shape
    minitorch.Size([3, 3])
    """
    return _C._cat(tensors_arg("cat", tensors), int_arg("cat", "dim", dim))


@numpy_names
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


def _non_empty(op: str, tensors) -> list:
    ts = tensors_arg(op, tensors)
    if not ts:
        raise _C.InputError(f"{op} expects a non-empty TensorList")
    return ts


def dstack(tensors) -> Tensor:
    """``cat`` along dim 2 (depth) of the tensors seen as at least 3-D (``atleast_3d``: (n,) is
    (1, n, 1), (m, n) is (m, n, 1)).

    >>> minitorch.dstack([minitorch.tensor([1, 2]), minitorch.tensor([3, 4])]).tolist()
    [[[1, 3], [2, 4]]]
    """
    from .shape import atleast_3d
    return cat(list(atleast_3d(_non_empty("dstack", tensors))), 2)


def column_stack(tensors) -> Tensor:
    """The tensors side by side as columns: 0-dim and 1-D ones as one column (n, 1), the
    others as they are, joined along dim 1.

    >>> minitorch.column_stack([minitorch.tensor([1, 2]), minitorch.tensor([[3, 4], [5, 6]])]).tolist()
    [[1, 3, 4], [2, 5, 6]]
    """
    ts = _non_empty("column_stack", tensors)
    return cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in ts], 1)


@numpy_names
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


@numpy_names
def split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
    """Cuts ``self`` into pieces of ``split_sizes`` along ``dim`` (they must add up)."""
    return split(self, list(split_sizes), dim)


@numpy_names
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


@numpy_names
def unbind(self, dim: int = 0) -> tuple:
    """The slices of ``self`` along ``dim``, each without that dim (views)."""
    if self.ndim == 0:
        raise _C.InputError("unbind: dimension specified as 0 but tensor has no dimensions")
    d = _wrap(int_arg("unbind", "dim", dim), self.ndim, "unbind")
    return tuple(p.squeeze(d) for p in _C._split_with_sizes(self, [1] * self.shape[d], d))


@numpy_names
def narrow(self, dim: int, start: int, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``."""
    d = _wrap(int_arg("narrow", "dim", dim), self.ndim, "narrow")
    n = self.shape[d]
    start = int_arg("narrow", "start", start)
    start = start + n if start < 0 else start
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n}) of dim {d}")
    return self[(slice(None),) * d + (slice(start, start + length),)]


@numpy_names
def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new contiguous tensor rather than a view: writing into it leaves
    ``self`` unchanged."""
    return narrow(self, dim, start, length).clone()


def select(self, dim: int, index: int) -> Tensor:
    """The view at ``index`` along ``dim``, that dim removed: ``x.select(1, 2)`` is ``x[:, 2]``."""
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap(int_arg("select", "dim", dim), self.ndim, "select")
    i = int_arg("select", "index", index)
    n = self.shape[d]
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(self.shape)} at dimension {d}")
    return self[(slice(None),) * d + (i,)]


@numpy_names
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


# ---- tensor_split and NumPy's hsplit / vsplit / dsplit: slices along one dim ----

def _slices(self, d: int, bounds) -> tuple:
    """The pieces of ``self`` between consecutive ``bounds`` along ``d`` (views); a bound
    past the end is the end, and a piece whose start is past its stop is empty."""
    n = self.shape[d]
    pre = (slice(None),) * d
    cuts = [min(max(b, 0), n) for b in bounds]
    return tuple(self[pre + (slice(a, max(a, b)),)] for a, b in zip([0] + cuts, cuts + [n]))


@numpy_names
def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple:
    """Cuts ``self`` along ``dim`` into ``sections`` pieces as equal as can be (the first
    ``n % sections`` one longer), or at the ``indices`` of a list. Views.

    >>> [p.tolist() for p in minitorch.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    """
    if self.ndim == 0:
        raise _C.InputError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap(int_arg("tensor_split", "dim", dim), self.ndim, "tensor_split")
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype != _C.dtype.int64 or arg.ndim > 1:
            raise _C.InputError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                                f"one-dimensional tensor of int64, but got a {arg.ndim}-dim {arg.dtype} tensor")
        arg = arg.item() if arg.ndim == 0 else arg.tolist()
    if isinstance(arg, (tuple, list)):
        return _slices(self, d, [int_arg("tensor_split", "indices", i) for i in arg])
    sections = int_arg("tensor_split", "sections", arg)
    if sections <= 0:
        raise _C.InputError(f"tensor_split: number of sections must be larger than 0, got {sections}")
    n = self.shape[d]
    size, extra = divmod(n, sections)
    bounds, at = [], 0
    for k in range(sections - 1):
        at += size + (1 if k < extra else 0)
        bounds.append(at)
    return _slices(self, d, bounds)


def _numpy_split(op: str, self, indices_or_sections, dim: int, min_dims: int) -> tuple:
    if self.ndim < min_dims:
        raise _C.InputError(f"torch.{op} requires a tensor with at least {min_dims} dimension"
                            f"{'s' if min_dims > 1 else ''}, but got a tensor with {self.ndim} dimensions!")
    if not isinstance(indices_or_sections, (tuple, list)):
        sections = int_arg(op, "sections", indices_or_sections)
        n = self.shape[dim]
        if sections == 0 or n % sections:
            raise _C.InputError(f"torch.{op} attempted to split along dimension {dim}, but the size of the "
                                f"dimension {n} is not divisible by the split_size {sections}!")
    return tensor_split(self, indices_or_sections, dim)


def hsplit(self, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor); sections must divide the size."""
    return _numpy_split("hsplit", self, indices_or_sections, 0 if self.ndim == 1 else 1, 1)


def vsplit(self, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims; sections must divide the size."""
    return _numpy_split("vsplit", self, indices_or_sections, 0, 2)


def dsplit(self, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims; sections must divide the size."""
    return _numpy_split("dsplit", self, indices_or_sections, 2, 3)


# ---- broadcasting and grids ----

def _tensors_of(op: str, tensors) -> list:
    """``f(a, b)`` and ``f([a, b])`` alike, each a Tensor."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tensors[0]
    return tensors_arg(op, list(tensors))


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (views).

    >>> a, b = minitorch.broadcast_tensors(minitorch.zeros(3, 1), minitorch.zeros(4))
    >>> a.shape, b.shape
    (minitorch.Size([3, 4]), minitorch.Size([3, 4]))
    """
    ts = _tensors_of("broadcast_tensors", tensors)
    try:
        shape = _C.broadcast_shapes(*(tuple(t.shape) for t in ts))
    except _C.InputError as e:
        raise _C.InputError(f"broadcast_tensors: {e}") from None
    return tuple(t.expand(*shape) for t in ts)


def _check_grid_inputs(op: str, ts: list) -> None:
    if not ts:
        raise _C.InputError(f"{op} expects a non-empty TensorList")
    for t in ts:
        if t.ndim > 1:
            raise _C.InputError(f"{op}: Expected 0D or 1D tensor in the tensor list but got a tensor of shape "
                                f"{tuple(t.shape)}")
        if t.dtype != ts[0].dtype:
            raise TypeError(f"{op}: Expected all tensors in the tensor list to have the same dtype, "
                            f"but got {ts[0].dtype} and {t.dtype}")
        if t.device != ts[0].device:
            raise _C.InputError(f"{op}: Expected all tensors in the tensor list to have the same device, "
                                f"but got {ts[0].device} and {t.device}")


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 1-D (or 0-dim) tensors: with ``indexing="ij"`` output ``k`` has
    shape ``(n_0, n_1, ...)`` and varies along dim ``k``; ``"xy"`` swaps the first two dims
    (NumPy's default). Views (``expand``). As in PyTorch, leaving ``indexing`` out means
    ``"ij"`` and warns that it will be required.

    >>> ys, xs = minitorch.meshgrid(minitorch.arange(2), minitorch.arange(3), indexing="ij")
    >>> ys.tolist()
    [[0, 0, 0], [1, 1, 1]]
    """
    ts = _tensors_of("meshgrid", tensors)
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise _C.InputError(f'meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    _check_grid_inputs("meshgrid", ts)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts = [ts[1], ts[0], *ts[2:]]
    shape = tuple(t.numel() for t in ts)
    out = []
    for k, t in enumerate(ts):
        view = [1] * len(ts)
        view[k] = -1
        out.append(t.reshape(view).expand(*shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element of each 1-D tensor, one per row, the last tensor's
    varying fastest (``itertools.product``); a single tensor is returned as it is.

    >>> minitorch.cartesian_prod(minitorch.tensor([1, 2]), minitorch.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    ts = tensors_arg("cartesian_prod", list(tensors))
    _check_grid_inputs("cartesian_prod", ts)
    for t in ts:
        if t.ndim != 1:
            raise _C.InputError(f"cartesian_prod: expect a 1D vector, but got shape {tuple(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    return stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], 1)


def combinations(self, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The ``r``-element combinations of the 1-D ``self``, one per row, in the order of
    ``itertools.combinations`` (``combinations_with_replacement`` when ``with_replacement``):
    (C, r). ``r=0`` gives an empty 1-D tensor; no combination an empty (0, r) one. The
    positions are made on the host from the length alone; one ``index_select`` reads them,
    so the gradient adds back to each element.

    >>> minitorch.combinations(minitorch.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    import itertools

    import numpy as np

    r = int_arg("combinations", "r", r)
    if self.ndim != 1:
        raise _C.InputError(f"combinations: Expect a 1D vector, but got shape {tuple(self.shape)}")
    if r < 0:
        raise _C.InputError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return self.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(self.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    index = _C._from_numpy_copy(rows.reshape(-1), _C.dtype.int64, self.device)
    return self.index_select(0, index).reshape(rows.shape)


def _result_type(ts: list):
    """PyTorch's promotion of several tensors: the dimensioned ones first, then the 0-dim
    ones count only where their category is higher (``result_type`` of two, folded)."""
    def fold(group, shape):
        if not group:
            return None
        d = group[0].dtype
        for t in group[1:]:
            d = _C.result_type(_C._full(shape, 0.0, d, None), _C._full(shape, 0.0, t.dtype, None))
        return _C._full(shape, 0.0, d, None)

    dimmed = fold([t for t in ts if t.ndim], (1,))
    zero = fold([t for t in ts if not t.ndim], ())
    if dimmed is None or zero is None:
        return (dimmed if zero is None else zero).dtype
    return _C.result_type(dimmed, zero)


def block_diag(*tensors) -> Tensor:
    """The tensors (0-, 1- or 2-D, seen as matrices) down the diagonal of one matrix, zeros
    elsewhere; the result has their promoted dtype.

    >>> minitorch.block_diag(minitorch.tensor([[1, 2]]), minitorch.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    ts = tensors_arg("block_diag", list(tensors))
    for k, t in enumerate(ts):
        if t.ndim > 2:
            raise _C.InputError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has "
                                f"{t.ndim} dimensions")
    if not ts:
        return _C._full((1, 0), 0.0, None, None)
    dtype = _result_type(ts)
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    mats = [m if m.dtype == dtype else m.to(dtype) for m in mats]
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = [m]
        if left:
            parts.insert(0, _C._full((r, left), 0.0, dtype, m.device))
        if width - left - c:
            parts.append(_C._full((r, width - left - c), 0.0, dtype, m.device))
        rows.append(cat(parts, 1) if len(parts) > 1 else m)
        left += c
    return cat(rows, 0)
