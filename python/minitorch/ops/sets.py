"""Sets, counts and bins: ``unique`` and ``unique_consecutive`` (runs of equal values after a
stable sort, or as they come), ``isin`` (a sort and a ``searchsorted``), ``bincount``,
``histc`` and ``histogram`` (one ``index_add`` of ones or weights: atomics on a GPU),
``searchsorted`` and ``bucketize`` (a C++ op, ``cpp/src/ops/search.cpp``: one binary search per
value). None is differentiable, as in PyTorch. Each function takes the tensor first;
ops/registry.py attaches them as ops/declarations.py declares.
"""
from __future__ import annotations

import builtins
import collections
import math
import numbers

import minitorch as _mt  # the package (partly made while it imports this): its factories, at call time

from .. import _C
from .._C import Tensor
from ._args import int_arg


def _wrap_dim(op: str, dim, ndim: int) -> int:
    d = int_arg(op, "dim", dim)
    nd = builtins.max(ndim, 1)
    if not -nd <= d < nd:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    return d % nd


def _lexsort_rows(rows: Tensor) -> Tensor:
    """The permutation that sorts the rows of ``rows`` (n, m) lexicographically: stable
    sorts by each column, from the last to the first (the first column decides last)."""
    perm = _mt.arange(rows.shape[0], device=rows.device)
    for c in reversed(range(rows.shape[1])):
        key = rows[:, c].index_select(0, perm)
        perm = perm.index_select(0, key.sort(0, stable=True).indices)
    return perm


def _runs(rows: Tensor, order, return_inverse: bool, return_counts: bool):
    """The first row of each run of equal rows of ``rows`` (n, ...) taken in ``order`` (None:
    as they are), each row's run number (at its place in ``rows``) and each run's length."""
    n = rows.shape[0]
    ordered = rows if order is None else rows.index_select(0, order)
    if n == 0:
        starts = _mt.zeros(0, dtype=_mt.bool, device=rows.device)
    else:
        differs = ordered.narrow(0, 1, n - 1) != ordered.narrow(0, 0, n - 1)
        if differs.ndim > 1:
            differs = differs.reshape(n - 1, math.prod(differs.shape[1:])).any(1)  # rows of nothing: equal
        starts = _mt.cat([_mt.ones(1, dtype=_mt.bool, device=rows.device), differs])
    first = starts.nonzero().reshape(-1)
    out = ordered.index_select(0, first)
    run = starts.long().cumsum(0) - 1  # the run of each row of `ordered`
    inverse = counts = None
    if return_inverse:
        inverse = run if order is None else _mt.zeros(n, dtype=_mt.int64, device=rows.device).scatter(0, order, run)
    if return_counts:
        counts = _mt.zeros(first.shape[0], dtype=_mt.int64, device=rows.device).index_add(0, run, _mt.ones_like(run))
    return out, inverse, counts


def _unique(op: str, self: Tensor, order_rows: bool, return_inverse: bool, return_counts: bool, dim):
    self = self.detach()  # not differentiable (PyTorch has no gradient for it)
    if dim is None:
        flat = self.reshape(-1)
        order = flat.sort(0, stable=True).indices if order_rows else None
        out, inverse, counts = _runs(flat, order, return_inverse, return_counts)
        if inverse is not None:
            inverse = inverse.reshape(self.shape)
    else:
        d = _wrap_dim(op, dim, self.ndim)
        if self.ndim == 0:
            raise IndexError(f"{op}(): dim= needs a tensor with at least one dim, got a 0-dim tensor")
        moved = self.movedim(d, 0)
        rows = moved.reshape(moved.shape[0], -1) if moved.numel() else moved.reshape(moved.shape[0], 0)
        order = _lexsort_rows(rows) if order_rows and rows.shape[0] else None
        if order_rows and rows.shape[0] and rows.shape[1] == 0:
            order = None  # rows of nothing are all equal
        out, inverse, counts = _runs(moved, order, return_inverse, return_counts)
        out = out.movedim(0, d)
    result = (out,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return result[0] if len(result) == 1 else result


def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim=None):
    """The distinct elements of ``self`` (or, with ``dim``, its distinct slices along
    ``dim``), in ascending order; with ``return_inverse`` each element's place in them
    (input's shape; along ``dim``: one per slice), with ``return_counts`` how often each occurs.
    Always sorted (PyTorch may sort when ``sorted=False`` too). NaNs are each distinct.

    >>> minitorch.tensor([2, 1, 2, 3]).unique(return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 2, 1]))
    """
    return _unique("unique", self, True, bool(return_inverse), bool(return_counts), dim)


def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None):
    """:func:`unique` of each run of equal consecutive elements (or slices), in their order:
    ``[1, 1, 2, 1]`` gives ``[1, 2, 1]``."""
    return _unique("unique_consecutive", self, False, bool(return_inverse), bool(return_counts), dim)


def bincount(self, weights=None, minlength: int = 0) -> Tensor:
    """How often each of 0, 1, ..., max(self) occurs in the 1-D non-negative int64 ``self``
    (at least ``minlength`` bins); with ``weights``, their sums instead (float32 weights give
    float32, others float64).

    >>> minitorch.tensor([0, 2, 2, 5]).bincount().tolist()
    [1, 0, 2, 0, 0, 1]
    """
    if self.dtype.is_floating_point or self.dtype == _mt.bool:
        raise _mt.DTypeError(f"bincount: expected an integer input, got {self.dtype}")
    self = self.long()  # the narrow integer types count as their values
    if self.ndim != 1:
        raise _mt.InputError(f"bincount: only supports 1-d non-negative integral inputs, got shape {tuple(self.shape)}")
    minlength = int_arg("bincount", "minlength", minlength)
    if minlength < 0:
        raise _mt.InputError(f"bincount: minlength should be >= 0, got {minlength}")
    if weights is not None:
        if not isinstance(weights, Tensor):
            raise TypeError(f"bincount(): argument 'weights' must be Tensor, not {type(weights).__name__}")
        if weights.ndim != 1 or weights.shape[0] != self.shape[0]:
            raise _mt.InputError(f"bincount: weights should be 1-d and have the same length as input, got weights "
                                f"{tuple(weights.shape)} and input {tuple(self.shape)}")
    length = minlength
    if self.numel():
        lo, hi = int(self.min()), int(self.max())  # the host needs the length (PyTorch syncs too)
        if lo < 0:
            raise _mt.InputError(f"bincount: only supports 1-d non-negative integral inputs, got a value of {lo}")
        length = builtins.max(hi + 1, minlength)
    if weights is None:
        return _mt.zeros(length, dtype=_mt.int64, device=self.device).index_add(0, self, _mt.ones_like(self))
    dtype = _mt.float32 if weights.dtype == _mt.float32 else _mt.float64
    return _mt.zeros(length, dtype=dtype, device=self.device).index_add(0, self, weights.detach().to(dtype))


def histc(self, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002
    """A histogram of ``self`` in ``bins`` equal bins over [min, max] (the data's own range
    when both are 0; a value equal to max counts in the last bin; values outside and NaNs
    are left out), in ``self``'s dtype.

    >>> minitorch.tensor([1.0, 2.0, 1.0]).histc(bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    if not self.dtype.is_floating_point:
        raise _mt.DTypeError(f"histc: expected a floating point input, got {self.dtype}")
    bins = int_arg("histc", "bins", bins)
    if bins <= 0:
        raise _mt.InputError(f"histc: bins must be > 0, but got {bins}")
    lo, hi = float(min), float(max)
    if lo == hi and self.numel():
        lo, hi = float(self.min()), float(self.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _mt.InputError(f"histc: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise _mt.InputError(f"histc: max must be larger than min, got min {lo} and max {hi}")
    x = self.detach().reshape(-1).double()
    x = x.masked_select((x >= lo).logical_and(x <= hi))
    at = ((x - lo) * (bins / (hi - lo))).floor().long().clamp_max(bins - 1)
    return _mt.zeros(bins, dtype=self.dtype, device=self.device).index_add(0, at, _mt.ones_like(at, dtype=self.dtype))


_HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _histogram_edges(self, bins, range_) -> Tensor:  # noqa: A002
    """The bin edges of ``histogram``: a 1-D tensor given as ``bins``, or ``bins + 1`` evenly
    spaced over ``range_`` (the data's own range when None, [0, 1] for no data; widened by 0.5
    each way when it is one point, as NumPy)."""
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1:
            raise _mt.InputError(f"histogram: bins tensor should be 1-D with at least one edge, got shape "
                                 f"{tuple(bins.shape)}")
        if bins.dtype != self.dtype:
            raise _mt.DTypeError(f"histogram: input tensor and bins tensor should have the same dtype, but got "
                                 f"input with dtype {self.dtype.name} and bins with dtype {bins.dtype.name}")
        if bins.numel() > 1 and not bool((bins[1:] >= bins[:-1]).all()):
            raise _mt.InputError("histogram: bin edges must increase monotonically")
        return bins
    bins = int_arg("histogram", "bins", bins)
    if bins <= 0:
        raise _mt.InputError(f"histogram: bins must be > 0, but got {bins}")
    if range_ is not None:
        lo, hi = (float(v) for v in range_)
    elif self.numel():
        lo, hi = (float(v) for v in self.aminmax())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _mt.InputError(f"histogram: range [{lo}, {hi}] is not finite")
    if lo > hi:
        raise _mt.InputError(f"histogram: min should not exceed max, but got min {lo} max {hi}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _mt.linspace(lo, hi, bins + 1, dtype=self.dtype, device=self.device)


def histogram(self, bins, *, range=None, weight=None, density: bool = False) -> tuple:  # noqa: A002
    """``(hist, bin_edges)``, NumPy's ``histogram``: ``bins`` is a number of equal bins over
    ``range`` (the data's range by default) or a 1-D tensor of increasing edges. Bin ``i``
    holds the values in ``[edges[i], edges[i + 1])``, the last one its right edge too; values
    outside and NaNs are left out. With ``weight`` (``self``'s shape) each value counts its
    weight; ``density=True`` divides by the total and the bin widths, so that the histogram
    integrates to 1. Float32 and float64 tensors; each value's bin is a ``bucketize`` on the
    edges, the counts one ``index_add``.

    >>> h, edges = minitorch.histogram(minitorch.tensor([1.0, 2.0, 1.0]), bins=2)
    >>> h.tolist(), edges.tolist()
    ([2.0, 1.0], [1.0, 1.5, 2.0])
    """
    if self.dtype not in (_mt.float32, _mt.float64):
        raise _mt.DTypeError(f"histogram: only float32 and float64 tensors are supported, got {self.dtype.name}")
    if weight is not None:
        if not isinstance(weight, Tensor):
            raise TypeError(f"histogram(): argument 'weight' must be a Tensor, not {type(weight).__name__}")
        if tuple(weight.shape) != tuple(self.shape) or weight.dtype != self.dtype:
            raise _mt.InputError(f"histogram: weight must have the input's shape {tuple(self.shape)} and dtype "
                                 f"{self.dtype.name}, got {tuple(weight.shape)} and {weight.dtype.name}")
    with _mt.no_grad():
        edges = _histogram_edges(self, bins, range)
        n = edges.numel() - 1
        hist = _mt.zeros(max(n, 0), dtype=self.dtype, device=self.device)
        x = self.reshape(-1)
        inside = (x >= edges[0]).logical_and(x <= edges[-1])
        if n > 0 and bool(inside.any()):
            at = bucketize(x.masked_select(inside), edges, right=True).sub(1).clamp_max(n - 1)
            w = _mt.ones_like(at, dtype=self.dtype) if weight is None else weight.reshape(-1).masked_select(inside)
            hist = hist.index_add(0, at, w)
        if density:
            hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return _HistogramResult(hist, edges)


def _as_values(op: str, values, like: Tensor) -> Tensor:
    if isinstance(values, Tensor):
        return values
    if isinstance(values, numbers.Number) and not isinstance(values, complex):
        dtype = _mt.int64 if isinstance(values, numbers.Integral) and not isinstance(values, bool) else _mt.float64
        return _mt.tensor(values, dtype=dtype, device=like.device)
    raise TypeError(f"{op}(): argument 'input' must be Tensor or Number, not {type(values).__name__}")


def searchsorted(sorted_sequence, values, *, out_int32: bool = False, right: bool = False, side=None,
                 sorter=None) -> Tensor:
    """For each value, the place in the last dim of ``sorted_sequence`` (ascending; 1-D, or
    with the values' leading dims) where inserting it keeps the order: the first place
    whose element is >= it (``right=True`` / ``side='right'``: > it). ``sorter`` holds
    the indices that sort an unsorted ``sorted_sequence``. int64 (``out_int32=True``: int32).

    >>> minitorch.searchsorted(minitorch.tensor([1, 3, 5, 7]), minitorch.tensor([3, 6])).tolist()
    [1, 3]
    """
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be Tensor, not "
                        f"{type(sorted_sequence).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise _mt.InputError(f"searchsorted: side can only be 'left' or 'right' but got {side!r}")
        if side == "left" and right:
            raise _mt.InputError("searchsorted: side and right can't be set to opposites, got side of left while "
                                "right was True")
        right = side == "right"
    is_scalar = not isinstance(values, Tensor)
    values = _as_values("searchsorted", values, sorted_sequence)
    if is_scalar and sorted_sequence.ndim != 1:
        raise _mt.InputError(f"searchsorted: input value can be a scalar only when boundaries tensor dimension is 1, "
                            f"but we got boundaries tensor dim({sorted_sequence.ndim})")
    if sorter is not None:
        if not isinstance(sorter, Tensor) or sorter.dtype != _mt.int64:
            raise _mt.DTypeError("searchsorted: sorter must be an int64 tensor")
        if tuple(sorter.shape) != tuple(sorted_sequence.shape):
            raise _mt.InputError(f"searchsorted: boundary and sorter must have the same size, but got boundary tensor "
                                f"{tuple(sorted_sequence.shape)} and got sorter tensor {tuple(sorter.shape)}")
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    out = _C._searchsorted(sorted_sequence.detach(), values.detach(), bool(right))
    return out.to(_mt.int32) if out_int32 else out


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """The bucket of each element of ``input`` between the ascending 1-D ``boundaries``:
    i with ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``<= x <``), i.e.
    ``searchsorted(boundaries, input, right=right)``. int64 (``out_int32`` as searchsorted).

    >>> minitorch.bucketize(minitorch.tensor([0.5, 3.0, 9.0]), minitorch.tensor([1.0, 3.0, 5.0])).tolist()
    [0, 1, 3]
    """
    if not isinstance(boundaries, Tensor):
        raise TypeError(f"bucketize(): argument 'boundaries' must be Tensor, not {type(boundaries).__name__}")
    if boundaries.ndim != 1:
        raise _mt.InputError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, _as_values("bucketize", input, boundaries), out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is one of ``test_elements`` (``invert``: where it
    is none of them); a bool tensor of the shape of ``elements``. Either may be a number
    instead of a tensor; the two are compared in their common dtype. ``test_elements`` is
    sorted once and each element looked up by ``searchsorted``; ``assume_unique`` (both
    without repeats) changes nothing here. NaN is in nothing. Bool tensors are refused, as
    in PyTorch.

    >>> minitorch.isin(minitorch.tensor([[1, 2], [3, 4]]), minitorch.tensor([2, 3]))
    tensor([[False,  True],
            [ True, False]])
    """
    tensors = [t for t in (elements, test_elements) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError(f"isin(): expected 'elements' or 'test_elements' to be a Tensor, got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    for name, v in (("elements", elements), ("test_elements", test_elements)):
        if not isinstance(v, Tensor) and (not isinstance(v, numbers.Number) or isinstance(v, complex)):
            raise TypeError(f"isin(): argument '{name}' must be Tensor or Number, not {type(v).__name__}")
        if isinstance(v, bool) or (isinstance(v, Tensor) and v.dtype == _mt.bool):
            raise _mt.DTypeError("isin: Unsupported input type encountered for isin(): Bool")
    if len(tensors) == 2 and elements.device != test_elements.device:
        raise RuntimeError(f"isin: expected all tensors to be on the same device, but found {elements.device} and "
                           f"{test_elements.device}")
    dtype = _mt.result_type(elements, test_elements)
    device = tensors[0].device
    x, t = (v.detach().to(dtype) if isinstance(v, Tensor) else _mt.tensor(v, dtype=dtype, device=device)
            for v in (elements, test_elements))
    t = t.reshape(-1)
    if dtype.is_floating_point:
        t = t.masked_select(t == t)  # NaN matches nothing, and would upset the binary search
    if t.numel() == 0:
        found = _mt.zeros(tuple(x.shape), dtype=_mt.bool, device=device)
    else:
        table = t.sort().values
        flat = x.reshape(-1)
        at = _C._searchsorted(table, flat, False).clamp_max(table.shape[0] - 1)
        found = (table.index_select(0, at) == flat).reshape(tuple(x.shape))
    return found.logical_not() if invert else found
