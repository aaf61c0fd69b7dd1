"""Sorting along a dim: ``sort``, ``argsort`` (its indices) and ``topk`` (its first k), C++ ops
(``cpp/src/ops/sort.cpp``) whose gradient goes back through the indices; and the order
statistics written from sort: ``median nanmedian kthvalue mode msort quantile nanquantile``.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

import builtins
import collections
import numbers

import minitorch as _mt  # the package (partly made while it imports this): its factories, at call time

from .. import _C
from .._C import Tensor
from ..autograd.function import Function
from ._args import int_arg, numpy_names

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])


@numpy_names
def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """``(values, indices)`` of ``self`` sorted along ``dim``. Always stable (equal
    values keep their order); NaN sorts above every number."""
    values, indices = _C._sort(self, int_arg("sort", "dim", dim), bool(descending))
    return SortResult(values, indices)


@numpy_names
def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``self`` along ``dim``."""
    return _C._sort(self, int_arg("argsort", "dim", dim), bool(descending))[1]


@numpy_names
def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopkResult:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices, largest
    (smallest) first; always sorted."""
    values, indices = _C._topk(self, int_arg("topk", "k", k), int_arg("topk", "dim", dim), bool(largest))
    return TopkResult(values, indices)


# ---- order statistics: compositions of sort (stable, NaN last) and gather, so their
# gradient goes back through sort's indices to the element each result picked ----

MedianResult = collections.namedtuple("median", ["values", "indices"])
NanmedianResult = collections.namedtuple("nanmedian", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _no_bool(self: Tensor, op: str) -> None:
    if self.dtype == _mt.bool:
        raise _mt.DTypeError(f"{op}: not implemented for bool tensors")


def _line_dim(self: Tensor, dim, op: str) -> int:
    """``dim`` wrapped (a 0-dim tensor has one line of one value); an empty line is an IndexError."""
    d = int_arg(op, "dim", dim)
    nd = builtins.max(self.ndim, 1)
    if not -nd <= d < nd:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    d %= nd
    if self.ndim and self.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return d


def _pick(self: Tensor, dim: int, keepdim: bool, position, result):
    """``result(values, indices)`` of the sorted line's element at ``position`` (an int, or an
    int64 tensor of the keepdim shape) along ``dim``, with its index in ``self``."""
    x = self.reshape(1) if self.ndim == 0 else self
    values, indices = x.sort(dim)
    shape = list(x.shape)
    shape[dim] = 1
    if not isinstance(position, Tensor):
        position = _mt.full(shape, position, dtype=_mt.int64, device=x.device)
    v, i = values.gather(dim, position), indices.gather(dim, position)
    if self.ndim == 0:
        v, i = v.reshape(()), i.reshape(())
    elif not keepdim:
        v, i = v.squeeze(dim), i.squeeze(dim)
    return result(v, i)


def _half(n: Tensor) -> Tensor:
    """``n // 2`` of a non-negative int64 tensor."""
    return (n.double() / 2).floor().long()


def _median_position(x: Tensor, dim: int, ignore_nan: bool):
    """The lower median's place in each sorted line: (n - 1) // 2, or, with NaNs (sorted last),
    the first NaN (median) or the lower median of the other values (nanmedian)."""
    n = x.shape[dim] if x.ndim else 1
    if not x.dtype.is_floating_point:
        return (n - 1) // 2
    nans = x.isnan().sum(dim, keepdim=True) if x.ndim else x.isnan().long().reshape(1)
    if ignore_nan:
        return _half((n - nans - 1).clamp_min(0))
    return _mt.where(nans > 0, n - nans, _mt.full(nans.shape, (n - 1) // 2, dtype=_mt.int64, device=x.device))


class Median(Function):
    """median() / nanmedian() of all elements: the gradient is shared evenly by the elements
    equal to the result (NaNs, when it is NaN), PyTorch's rule, as for max()."""

    @staticmethod
    def forward(ctx, x, op, ignore_nan):
        flat = x.reshape(-1)
        value = _pick(flat, 0, False, _median_position(flat, 0, ignore_nan), MedianResult).values
        ctx.save_for_backward((x == value).logical_or(x.isnan().logical_and(value.isnan())))
        return value

    @staticmethod
    def backward(ctx, grad):
        (hit,) = ctx.saved_tensors
        return _mt.where(hit, grad / hit.sum(), 0.0).to(grad.dtype), None, None


def _median_all(self: Tensor, op: str, ignore_nan: bool) -> Tensor:
    if self.numel() == 0:
        if not self.dtype.is_floating_point:
            raise IndexError(f"{op}(): Expected reduction dim to have non-zero size.")
        return _mt.full((), float("nan"), dtype=self.dtype, device=self.device)
    return Median.apply(self, op, ignore_nan)  # grad_fn MedianBackward


@numpy_names
def median(self, dim=None, keepdim: bool = False):
    """``median(x)``: the lower median of all elements (NaN if there is one), a 0-dim tensor;
    ``median(x, dim)``: ``(values, indices)`` of each line's lower median along ``dim``.

    >>> minitorch.tensor([3.0, 1.0, 4.0, 2.0]).median().item()
    2.0
    """
    _no_bool(self, "median")
    if dim is None:
        return _median_all(self, "median", False)
    d = _line_dim(self, dim, "median")
    return _pick(self, d, keepdim, _median_position(self, d, False), MedianResult)


@numpy_names
def nanmedian(self, dim=None, keepdim: bool = False):
    """:func:`median` ignoring NaNs (a line of NaNs only gives NaN)."""
    _no_bool(self, "nanmedian")
    if dim is None:
        return _median_all(self, "nanmedian", True)
    d = _line_dim(self, dim, "nanmedian")
    return _pick(self, d, keepdim, _median_position(self, d, True), NanmedianResult)


@numpy_names
def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> KthvalueResult:
    """``(values, indices)``: the k-th smallest value (k counts from 1) of each line along
    ``dim`` and where it is."""
    _no_bool(self, "kthvalue")
    k = int_arg("kthvalue", "k", k)
    d = _line_dim(self, dim, "kthvalue")
    n = self.shape[d] if self.ndim else 1
    if not 1 <= k <= n:
        # a RuntimeError, as PyTorch's (InputError is both ValueError and RuntimeError)
        raise _mt.InputError(f"kthvalue(): selected number k out of range for dimension {d} (k = {k}, size {n})")
    return _pick(self, d, keepdim, k - 1, KthvalueResult)


@numpy_names
def mode(self, dim: int = -1, keepdim: bool = False) -> ModeResult:
    """``(values, indices)``: the most frequent value of each line along ``dim`` (the
    smallest of equally frequent ones) and the last place it is found.

    In a sorted line equal values form runs; at position p of a run that started at s the
    run so far holds p - s + 1 values, so the first position holding the most is the end
    of the first longest run."""
    d = _line_dim(self, dim, "mode")
    x = self.reshape(1) if self.ndim == 0 else self
    n = x.shape[d]
    values, _ = x.sort(d)
    shape = [1] * x.ndim
    shape[d] = n
    pos = _mt.arange(n, device=x.device).reshape(shape).expand(*x.shape)
    first = _mt.ones([1 if k == d else s for k, s in enumerate(x.shape)], dtype=_mt.bool, device=x.device)
    starts = _mt.cat([first, values.narrow(d, 1, n - 1) != values.narrow(d, 0, n - 1)], d)
    run_start = _mt.where(starts, pos, 0).cummax(d).values
    return _pick(self, d, keepdim, (pos - run_start).argmax(d, keepdim=True) if self.ndim else 0, ModeResult)


def msort(self) -> Tensor:
    """``self`` sorted along its first dim (``sort(self, 0).values``)."""
    return self.sort(0).values


def _quantile(self: Tensor, q, dim, keepdim: bool, interpolation: str, op: str, ignore_nan: bool) -> Tensor:
    if self.dtype not in (_mt.float32, _mt.float64):
        raise _mt.DTypeError(f"{op}() input tensor must be either float or double dtype, got {self.dtype}")
    if self.numel() == 0:
        raise _mt.InputError(f"{op}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise _mt.InputError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                            f"Got {interpolation}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise _mt.InputError(f"{op}() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        if q.dtype != self.dtype:
            raise _mt.DTypeError(f"{op}() q tensor must be same dtype as the input tensor ({q.dtype} != {self.dtype})")
        scalar_q, qs = q.ndim == 0, q.reshape(-1).to(self.device)
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        scalar_q, qs = True, _mt.tensor([float(q)], dtype=self.dtype, device=self.device)
    else:
        raise TypeError(f"{op}(): argument 'q' must be a float or Tensor, not {type(q).__name__}")
    if not bool(((qs >= 0) & (qs <= 1)).all()):
        raise _mt.InputError(f"{op}() q values must be in the range [0, 1]")

    # Each line last: (*batch, n), sorted (NaN last).
    if dim is None:
        x, d = self.reshape(-1), None
    else:
        d = _line_dim(self, dim, op)
        x = self.reshape(1) if self.ndim == 0 else self.movedim(d, -1)
    srt = x.sort(-1).values
    n = srt.shape[-1]
    # Each quantile's rank (its fractional place in the sorted line): (*batch, Q).
    if ignore_nan:  # among the values that are not NaN; a line of NaNs picks its first (NaN)
        valid = srt.isnan().logical_not().sum(-1, keepdim=True)
        ranks = (qs * (valid - 1).to(self.dtype)).clamp_min(0)
    else:  # a line with a NaN picks its last element (NaN)
        ranks = _mt.where(srt.isnan().any(-1, keepdim=True), float(n - 1), qs * (n - 1))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()  # half to even, as PyTorch and NumPy
    below = ranks.long()
    out = srt.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        above = srt.gather(-1, ranks.ceil().long())
        weight = _mt.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.to(self.dtype)
        out = _mt.lerp(out, above, weight)
    out = out.movedim(-1, 0)  # (Q, *batch)
    if keepdim and self.ndim:
        out = out.reshape((out.shape[0],) + (1,) * self.ndim) if d is None else out.unsqueeze(d + 1)
    return out.squeeze(0) if scalar_q else out


@numpy_names
def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles (a float, or a 1-D tensor: one row of the result each) of all
    elements or of each line along ``dim``, interpolating between the two sorted values
    around rank ``q * (n - 1)`` as ``interpolation`` says (NaN if a line has one).

    >>> minitorch.tensor([1.0, 2.0, 3.0, 4.0]).quantile(0.5).item()
    2.5
    """
    return _quantile(self, q, dim, keepdim, interpolation, "quantile", False)


@numpy_names
def nanquantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """:func:`quantile` of the values that are not NaN (NaN for a line of NaNs)."""
    return _quantile(self, q, dim, keepdim, interpolation, "nanquantile", True)
