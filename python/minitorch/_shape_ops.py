"""Everyday ops of sequence models, with PyTorch's signatures: joining and cutting
(``cat stack split chunk unbind``), rearranging (``flip repeat roll narrow``), masks
(``masked_fill tril triu``), statistics (``var std logsumexp norm amax amin``), batched
products (``bmm baddbmm outer einsum``), running sums (``cumsum cumprod``) and sorting
(``sort argsort topk``).

``cat``, ``split``, ``cumsum``/``cumprod`` and ``sort`` are C++ ops (``ops/join.cpp``,
``ops/scan.cpp``, ``ops/sort.cpp``); the rest are compositions of existing ops, so
autograd and every device come for free.
"""
from __future__ import annotations

import collections
import math
import numbers

from . import _C
from ._C import Tensor
from ._creation import arange, eye, full
from ._functions import function_from_method
from .autograd.function import Function
from ._indexing import gather
from ._tensor import _wrap, add_methods, dim_tuple

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])


def _tensors_arg(op: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not {type(tensors).__name__}")
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {k} in argument 'tensors', but got {type(t).__name__}")
    return list(tensors)


def _int(op: str, what: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{op}(): argument '{what}' must be an int, not {type(v).__name__}")
    return int(v)


# ------------------------------------------------------------ join and cut ----

def cat(tensors, dim: int = 0) -> Tensor:
    """Joins tensors along an existing dim; all other sizes must match.

    >>> minitorch.cat([minitorch.zeros(2, 3), minitorch.ones(1, 3)]).shape
    minitorch.Size([3, 3])
    """
    return _C._cat(_tensors_arg("cat", tensors), _int("cat", "dim", dim))


def stack(tensors, dim: int = 0) -> Tensor:
    """Joins tensors of one shape along a new dim ``dim``.

    >>> minitorch.stack([minitorch.zeros(2, 3), minitorch.ones(2, 3)], dim=1).shape
    minitorch.Size([2, 2, 3])
    """
    return _C._stack(_tensors_arg("stack", tensors), _int("stack", "dim", dim))


def hstack(tensors) -> Tensor:
    """``cat`` along dim 1 (dim 0 for 1-D tensors)."""
    ts = _tensors_arg("hstack", tensors)
    return cat(ts, 0 if ts and ts[0].ndim <= 1 else 1)


def vstack(tensors) -> Tensor:
    """``cat`` along dim 0 of the tensors seen as at least 2-D."""
    ts = _tensors_arg("vstack", tensors)
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in ts], 0)


def _split(self, split_size_or_sections, dim: int = 0) -> tuple:
    """Cuts ``self`` into pieces along ``dim``: of ``split_size`` each (the last may be
    smaller), or of the sizes in a list. The pieces are views.

    >>> [p.shape[0] for p in minitorch.arange(5).split(2)]
    [2, 2, 1]
    """
    if self.ndim == 0:
        raise _C.InputError("split: cannot split a 0-dim tensor")
    d = _wrap(_int("split", "dim", dim), self.ndim, "split")
    n = self.shape[d]
    if isinstance(split_size_or_sections, (tuple, list)):
        sizes = [_int("split", "split_size_or_sections", s) for s in split_size_or_sections]
    else:
        size = _int("split", "split_size", split_size_or_sections)
        if size < 0 or (size == 0 and n != 0):
            raise _C.InputError(f"split: split_size can only be 0 if dimension size is 0, and must be non-negative; "
                                f"got split_size={size} for dim {d} of size {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size and n else [0]
    return tuple(_C._split_with_sizes(self, sizes, d))


def _split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
    """Cuts ``self`` into pieces of ``split_sizes`` along ``dim`` (they must add up)."""
    return _split(self, list(split_sizes), dim)


def _chunk(self, chunks: int, dim: int = 0) -> tuple:
    """Cuts ``self`` into ``chunks`` pieces of equal size ``ceil(n / chunks)`` along
    ``dim`` (fewer, or a smaller last one, when it does not divide), as PyTorch."""
    chunks = _int("chunk", "chunks", chunks)
    if chunks <= 0:
        raise _C.InputError(f"chunk: number of chunks must be greater than 0, got {chunks}")
    if self.ndim == 0:
        raise _C.InputError("chunk: expects at least a 1-dimensional tensor")
    d = _wrap(_int("chunk", "dim", dim), self.ndim, "chunk")
    n = self.shape[d]
    return _split(self, -(-n // chunks), d) if n else _split(self, [0] * chunks, d)


def _unbind(self, dim: int = 0) -> tuple:
    """The slices of ``self`` along ``dim``, each without that dim (views)."""
    if self.ndim == 0:
        raise _C.InputError("unbind: dimension specified as 0 but tensor has no dimensions")
    d = _wrap(_int("unbind", "dim", dim), self.ndim, "unbind")
    return tuple(p.squeeze(d) for p in _C._split_with_sizes(self, [1] * self.shape[d], d))


def _narrow(self, dim: int, start: int, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``."""
    d = _wrap(_int("narrow", "dim", dim), self.ndim, "narrow")
    n = self.shape[d]
    start = _int("narrow", "start", start)
    start = start + n if start < 0 else start
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n}) of dim {d}")
    return self[(slice(None),) * d + (slice(start, start + length),)]


# -------------------------------------------------------------- rearrange ----

def _flip(self, *dims) -> Tensor:
    """Reverses the order of elements along ``dims`` (a copy, as in PyTorch)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    out = self
    for d in dim_tuple(dims, self.ndim, "flip", "dims"):
        n = self.shape[d] if self.ndim else 1
        if n > 1:
            rev = arange(n - 1, -1, -1, dtype=_C.dtype.int64, device=self.device)
            out = out.index_select(d, rev)
    return out.clone() if out is self else out


def _repeat(self, *sizes) -> Tensor:
    """Tiles ``self``: ``sizes[i]`` copies along dim i (extra leading sizes add dims).

    >>> minitorch.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(_int("repeat", "repeats", s) for s in sizes)
    if len(sizes) < self.ndim:
        raise _C.InputError(f"repeat: number of dimensions of repeat dims ({len(sizes)}) can not be smaller than "
                            f"number of dimensions of tensor ({self.ndim})")
    if any(s < 0 for s in sizes):
        raise _C.InputError(f"repeat: repeats must be non-negative, got {sizes}")
    shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
    x = self.reshape(shape)
    # (s0, s1, ...) -> (1, s0, 1, s1, ...) -> expand to (r0, s0, r1, s1, ...) -> (r0*s0, r1*s1, ...)
    interleaved = x.reshape(tuple(v for s in shape for v in (1, s)))
    expanded = interleaved.expand(tuple(v for r, s in zip(sizes, shape) for v in (r, s)))
    return expanded.reshape(tuple(r * s for r, s in zip(sizes, shape)))


def _roll(self, shifts, dims=None) -> Tensor:
    """Shifts elements along ``dims`` by ``shifts``, wrapping around (flattened when
    ``dims`` is None)."""
    if dims is None:
        if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
            raise _C.InputError(f"roll: shifts {shifts} need dims of the same length")
        s = shifts[0] if isinstance(shifts, (tuple, list)) else shifts
        return _roll(self.flatten(), s, 0).view(tuple(self.shape))
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = dim_tuple(dims, self.ndim, "roll", "dims") if not isinstance(dims, (tuple, list)) or len(set(dims)) == len(
        dims) else tuple(_wrap(d, self.ndim, "roll") for d in dims)
    if len(shifts) != len(dims):
        raise _C.InputError(f"roll: shifts and dimensions must align, got shifts={shifts} and dims={dims}")
    out = self
    for s, d in zip(shifts, dims):
        n = out.shape[d]
        if n == 0:
            continue
        s = _int("roll", "shifts", s) % n
        if s:
            out = cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out if out is not self else self.clone()


# ------------------------------------------------------------------ masks ----

def _masked_fill(self, mask: Tensor, value) -> Tensor:
    """A copy of ``self`` with ``value`` where ``mask`` (bool, broadcastable to self) is True.

    >>> scores.masked_fill(~causal, float("-inf"))   # hide the future in attention
    """
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_fill(): argument 'mask' must be a Tensor, not {type(mask).__name__}")
    if isinstance(value, numbers.Number):
        value = full((), value, dtype=self.dtype, device=self.device)
    elif not isinstance(value, Tensor):
        raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-dim Tensor, not {type(value).__name__}")
    return _C._masked_fill(self, mask, value)


def _triangle(self, diagonal: int, lower: bool, op: str) -> Tensor:
    if self.ndim < 2:
        raise _C.InputError(f"{op}: input tensor must have at least 2 dimensions, got shape {tuple(self.shape)}")
    diagonal = _int(op, "diagonal", diagonal)
    rows, cols = self.shape[-2], self.shape[-1]
    r = arange(0, rows, 1, dtype=_C.dtype.int64, device=self.device).view(rows, 1)
    c = arange(0, cols, 1, dtype=_C.dtype.int64, device=self.device).view(1, cols)
    keep = (c - r <= diagonal) if lower else (c - r >= diagonal)
    zero = full((), 0, dtype=self.dtype, device=self.device)
    return _C.where(keep, self, zero)


def _tril(self, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``); zeros above."""
    return _triangle(self, diagonal, True, "tril")


def _triu(self, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``); zeros below."""
    return _triangle(self, diagonal, False, "triu")


# ------------------------------------------------------------- statistics ----

def _dims_or_all(dim, ndim: int, op: str) -> tuple:
    """``dim`` as a tuple of dims; None or an empty tuple/list means every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return dim_tuple(dim, ndim, op)


def _reduced_count(x: Tensor, dims) -> int:
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def _var_args(op: str, x: Tensor, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, True): the old (input, unbiased) form
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise _C.InputError(f"{op}: pass either unbiased or correction, not both")
    corr = correction if correction is not None else (1 if unbiased is None or unbiased else 0)
    if not x.dtype.is_floating_point:
        raise _C.DTypeError(f"{op}: only supports floating-point dtypes, got {x.dtype}")
    return _dims_or_all(dim, x.ndim, op), corr, keepdim


def _var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance over ``dim`` (all dims when None): ``sum((x - mean)^2) / (N - correction)``;
    ``correction=1`` (the default, Bessel's) or ``unbiased=False`` for ``correction=0``."""
    dims, corr, keepdim = _var_args("var", self, dim, unbiased, keepdim, correction)
    if self.ndim == 0:
        dims = ()
    n = _reduced_count(self, dims) if self.ndim else 1
    mu = self.mean(dims, keepdim=True) if self.ndim else self
    sq = (self - mu).square()
    total = sq.sum(dims, keepdim=keepdim) if self.ndim else sq
    return total / max(n - corr, 0)  # N - correction <= 0: a division by zero (inf, or nan for 0 / 0), as PyTorch


def _std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))`` with the same arguments."""
    return _var(self, dim, unbiased, keepdim, correction=correction).sqrt()


def _var_mean(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(var, mean)`` over the same dims."""
    dims, _, _ = _var_args("var_mean", self, dim, unbiased, keepdim, correction)
    return _var(self, dim, unbiased, keepdim, correction=correction), self.mean(dims, keepdim) if self.ndim else self


def _std_mean(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(std, mean)`` over the same dims."""
    v, m = _var_mean(self, dim, unbiased, keepdim, correction=correction)
    return v.sqrt(), m


def _extreme(self, dim, keepdim: bool, op: str, largest: bool) -> Tensor:
    if self.ndim == 0:
        return self.clone()
    dims = _dims_or_all(dim, self.ndim, op)
    for d in dims:
        if self.shape[d] == 0:
            raise IndexError(f"{op}: Expected reduction dim {d} to have non-zero size")
    rest = [d for d in range(self.ndim) if d not in dims]
    moved = self.permute(*rest, *dims)
    folded = moved.reshape(tuple(self.shape[d] for d in rest) + (-1,))
    vals = (folded.max(-1) if largest else folded.min(-1))[0]
    if keepdim:
        vals = vals.reshape(tuple(1 if d in dims else self.shape[d] for d in range(self.ndim)))
    return vals


def _amax(self, dim=(), keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (an int or tuple; all dims when empty)."""
    return _extreme(self, dim, keepdim, "amax", True)


def _amin(self, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (an int or tuple; all dims when empty)."""
    return _extreme(self, dim, keepdim, "amin", False)


def _logsumexp(self, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed stably: the max is taken out first
    (``m + log(sum(exp(x - m)))``), so large values do not overflow."""
    x = self if self.dtype.is_floating_point else self.float()
    if x.ndim == 0:
        return x.clone()
    # dim is required (None is refused, as in PyTorch); () means every dim.
    dims = dim_tuple(dim, x.ndim, "logsumexp") if dim is None else _dims_or_all(dim, x.ndim, "logsumexp")
    if x.numel() == 0:
        return x.exp().sum(dims, keepdim=keepdim).log()
    m = _extreme(x.detach(), dims, True, "logsumexp", True)
    m = _C.where(m.isinf(), full((), 0, dtype=x.dtype, device=x.device), m)  # all -inf (or +inf) rows
    out = (x - m).exp().sum(dims, keepdim=True).log() + m
    return out if keepdim else out.reshape(tuple(s for d, s in enumerate(x.shape) if d not in dims))


def _keep(t: Tensor, dims: tuple, ndim: int) -> Tensor:
    """t reduced over dims without keepdim, reshaped as if keepdim=True (to broadcast)."""
    shape, k = [], 0
    full = list(t.shape)
    for d in range(ndim):
        if d in dims:
            shape.append(1)
        else:
            shape.append(full[k])
            k += 1
    return t.reshape(tuple(shape))


# derivative of norm (y = the p-norm of x over dims), input x: g * sign(x) * abs(x)^(p-1) / y^(p-1), 0 where y == 0 (p=2: g * x / y; p=1: g * sign(x); p=+-inf: g split evenly among the elements whose abs equals y; p=0: 0)
class _PNorm(Function):
    """The p-norm over dims, with PyTorch's gradients:
    ``d/dx ||x||_p = sign(x) |x|^(p-1) / ||x||_p^(p-1)`` (``x / ||x||`` for p = 2), zero
    where the norm is zero; for ``p = +-inf`` the gradient is split evenly between the
    elements that reach the max (min); ``p = 0`` has none."""

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        a = x.abs()
        if p == math.inf or p == -math.inf:
            y = _extreme(a, dims, True, "norm", p > 0)
        elif p == 0:
            y = (a != 0).to(x.dtype).sum(dims, keepdim=True)
        elif p == 1:
            y = a.sum(dims, keepdim=True)
        elif p == 2:
            y = (x * x).sum(dims, keepdim=True).sqrt()
        else:
            y = a.pow(p).sum(dims, keepdim=True).pow(1.0 / p)
        ctx.save_for_backward(x, y)
        ctx.args = (p, dims, keepdim)
        if keepdim or x.ndim == 0:
            return y
        return y.reshape(tuple(s for d, s in enumerate(x.shape) if d not in dims))

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        p, dims, keepdim = ctx.args
        if not keepdim and x.ndim:
            g = _keep(g, dims, x.ndim)
        zero = full((), 0, dtype=x.dtype, device=x.device)
        if p == 0:
            gx = x * 0
        elif p == 1:
            gx = x.sign() * g
        elif p == 2:
            gx = _C.where(y == 0, zero, x / y) * g
        elif p == math.inf or p == -math.inf:
            hit = (x.abs() == y).to(x.dtype)
            gx = x.sign() * hit / hit.sum(dims, keepdim=True) * g
        else:
            gx = _C.where(y == 0, zero, x.sign() * x.abs().pow(p - 1) / y.pow(p - 1)) * g
        return gx, None, None, None


def _norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The vector p-norm over ``dim`` (all elements when None): ``p=2`` / ``'fro'`` is
    ``sqrt(sum(x^2))``, ``p=1`` ``sum(|x|)``, ``p=inf`` ``max(|x|)``, ``p=0`` the count of
    non-zeros, other p ``sum(|x|^p)^(1/p)``. The gradient at an all-zero input is zero."""
    x = self if dtype is None else self.to(dtype)
    if not x.dtype.is_floating_point:
        raise _C.DTypeError(f"norm: expected a floating point input, got {x.dtype}")
    if p == "fro" or p is None:
        p = 2.0
    if isinstance(p, str):
        raise _C.InputError(f"norm: p must be a number or 'fro', got {p!r} ('nuc' is not supported)")
    dims = _dims_or_all(dim, x.ndim, "norm")
    return _PNorm.apply(x, float(p), dims, bool(keepdim))


# ---------------------------------------------------------------- products ----

def _bmm(self, mat2: Tensor) -> Tensor:
    """Batched matrix product: ``(b, n, k) @ (b, k, m) -> (b, n, m)`` (no broadcasting)."""
    if not isinstance(mat2, Tensor):
        raise TypeError(f"bmm(): argument 'mat2' must be a Tensor, not {type(mat2).__name__}")
    if self.ndim != 3 or mat2.ndim != 3:
        raise _C.InputError(f"bmm: expected 3-D tensors, got shapes {tuple(self.shape)} and {tuple(mat2.shape)}")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise _C.InputError(f"bmm: shapes {tuple(self.shape)} and {tuple(mat2.shape)} cannot be multiplied "
                            f"(batch {self.shape[0]} vs {mat2.shape[0]}, inner {self.shape[2]} vs {mat2.shape[1]})")
    return self.matmul(mat2)


def _baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * bmm(batch1, batch2)``; with ``beta=0`` self is ignored
    (NaNs in it do not propagate)."""
    prod = _bmm(batch1, batch2)
    if alpha != 1:
        prod = prod * alpha
    _expand_to(prod, self)
    if beta == 0:
        return prod
    return (self if beta == 1 else self * beta) + prod


def _expand_to(prod: Tensor, like: Tensor) -> Tensor:
    import numpy as np
    shape = tuple(np.broadcast_shapes(tuple(prod.shape), tuple(like.shape)))
    if shape != tuple(prod.shape):
        raise _C.InputError(f"baddbmm: input of shape {tuple(like.shape)} does not broadcast to the product's "
                            f"shape {tuple(prod.shape)}")
    return prod


def _outer(self, vec2: Tensor) -> Tensor:
    """Outer product of two vectors: ``out[i, j] = self[i] * vec2[j]``."""
    if not isinstance(vec2, Tensor):
        raise TypeError(f"outer(): argument 'vec2' must be a Tensor, not {type(vec2).__name__}")
    if self.ndim != 1 or vec2.ndim != 1:
        raise _C.InputError(f"outer: expected 1-D tensors, got shapes {tuple(self.shape)} and {tuple(vec2.shape)}")
    return self.unsqueeze(1) * vec2.unsqueeze(0)


# ---------------------------------------------------------- scans and sort ----

def _cumsum(self, dim: int, *, dtype=None) -> Tensor:
    """Running sum along ``dim``: ``out[i] = x[0] + ... + x[i]`` (ints and bools give int64)."""
    return _C._cumsum(self, _int("cumsum", "dim", dim), dtype)


def _cumprod(self, dim: int, *, dtype=None) -> Tensor:
    """Running product along ``dim``: ``out[i] = x[0] * ... * x[i]``."""
    return _C._cumprod(self, _int("cumprod", "dim", dim), dtype)


def _sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """``(values, indices)`` of ``self`` sorted along ``dim``. Always stable (equal
    values keep their order); NaN sorts above every number."""
    values, indices = _C._sort(self, _int("sort", "dim", dim), bool(descending))
    if self.requires_grad and _C.is_grad_enabled():
        values = gather(self, _wrap(dim, self.ndim, "sort"), indices) if self.ndim else self.clone()
    return SortResult(values, indices)


def _argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``self`` along ``dim``."""
    return _C._sort(self, _int("argsort", "dim", dim), bool(descending))[1]


def _topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopkResult:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices, largest first."""
    k = _int("topk", "k", k)
    d = _wrap(_int("topk", "dim", dim), self.ndim, "topk")
    n = self.shape[d] if self.ndim else 1
    if not 0 <= k <= n:
        raise _C.InputError(f"topk: k ({k}) is out of range for dimension {d} of size {n}")
    values, indices = _sort(self, d, descending=largest)
    if self.ndim == 0:
        return TopkResult(values, indices)
    return TopkResult(values.narrow(d, 0, k), indices.narrow(d, 0, k))


def _softmax(self, dim: int, dtype=None) -> Tensor:
    """``softmax`` along ``dim`` (as ``minitorch.nn.functional.softmax``)."""
    x = self if dtype is None else self.to(dtype)
    return _C._softmax(x, _int("softmax", "dim", dim))


def _log_softmax(self, dim: int, dtype=None) -> Tensor:
    """``log_softmax`` along ``dim``."""
    x = self if dtype is None else self.to(dtype)
    return _C._log_softmax(x, _int("log_softmax", "dim", dim))


add_methods({
    "split": _split,
    "split_with_sizes": _split_with_sizes,
    "chunk": _chunk,
    "unbind": _unbind,
    "narrow": _narrow,
    "flip": _flip,
    "repeat": _repeat,
    "roll": _roll,
    "masked_fill": _masked_fill,
    "tril": _tril,
    "triu": _triu,
    "var": _var,
    "std": _std,
    "amax": _amax,
    "amin": _amin,
    "logsumexp": _logsumexp,
    "norm": _norm,
    "bmm": _bmm,
    "baddbmm": _baddbmm,
    "outer": _outer,
    "cumsum": _cumsum,
    "cumprod": _cumprod,
    "sort": _sort,
    "argsort": _argsort,
    "topk": _topk,
    "softmax": _softmax,
    "log_softmax": _log_softmax,
})

split = function_from_method("split")
chunk = function_from_method("chunk")
unbind = function_from_method("unbind")
narrow = function_from_method("narrow")
flip = function_from_method("flip")
roll = function_from_method("roll")
masked_fill = function_from_method("masked_fill")
tril = function_from_method("tril")
triu = function_from_method("triu")
var = function_from_method("var")
std = function_from_method("std")
var_mean = _var_mean
std_mean = _std_mean
amax = function_from_method("amax")
amin = function_from_method("amin")
logsumexp = function_from_method("logsumexp")
norm = function_from_method("norm")
bmm = function_from_method("bmm")
baddbmm = function_from_method("baddbmm")
outer = function_from_method("outer")
ger = outer
cumsum = function_from_method("cumsum")
cumprod = function_from_method("cumprod")
sort = function_from_method("sort")
argsort = function_from_method("argsort")
topk = function_from_method("topk")
concat = concatenate = cat


# ------------------------------------------------------------------ einsum ----

def _einsum_parse(equation: str, operands) -> tuple:
    """Labels per operand and for the output, with '...' turned into capital letters
    (right-aligned, NumPy's broadcasting) that no user label can be."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise _C.InputError(f"einsum: the equation {equation!r} names {len(terms)} operands, got {len(operands)}")
    ell_dims = 0
    labels = []
    for term, x in zip(terms, operands):
        plain = term.replace("...", "")
        if not all(c.isascii() and c.isalpha() for c in plain):
            raise _C.InputError(f"einsum: invalid subscript in {term!r}: use letters and '...'")
        if "..." in term:
            n = x.ndim - len(plain)
            if n < 0:
                raise _C.InputError(f"einsum: operand {term!r} has {x.ndim} dims, fewer than its subscripts")
            ell_dims = max(ell_dims, n)
            ell = "".join(chr(0x100 + k) for k in range(ell_dims - n, ell_dims))
            term = term.replace("...", ell)
        elif len(term) != x.ndim:
            raise _C.InputError(f"einsum: subscripts {term!r} name {len(term)} dims, but the operand has {x.ndim} "
                                f"(shape {tuple(x.shape)})")
        labels.append(term)
    ell_all = "".join(chr(0x100 + k) for k in range(ell_dims))
    if arrow:
        out = rhs.replace("...", ell_all)
        for c in out:
            if not any(c in t for t in labels):
                raise _C.InputError(f"einsum: output subscript {c!r} does not appear in the inputs of {equation!r}")
        if len(set(out)) != len(out):
            raise _C.InputError(f"einsum: output subscript repeated in {equation!r}")
    else:
        counts = collections.Counter("".join(labels))
        out = ell_all + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell_all))
    return labels, out


def _einsum_diagonal(x: Tensor, labels: str) -> tuple:
    """Takes the diagonal of repeated labels ('ii' -> 'i')."""
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i, j = labels.index(c), labels.index(c, labels.index(c) + 1)
        n = x.shape[i]
        if x.shape[j] != n:
            raise _C.InputError(f"einsum: subscript {c!r} is repeated for dims of different sizes {n} and {x.shape[j]}")
        ident = eye(n, n, dtype=x.dtype, device=x.device)
        view = [1] * x.ndim
        view[i], view[j] = n, n
        x = (x * ident.reshape(tuple(view))).sum(j)
        labels = labels[:j] + labels[j + 1:]
    return x, labels


def _einsum_pair(a: Tensor, la: str, b: Tensor, lb: str, keep: set) -> tuple:
    """Contracts two operands with one batched matmul; labels in `keep` stay."""
    batch = [c for c in la if c in lb and c in keep]
    contract = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    size = {}
    for x, lab in ((a, la), (b, lb)):
        for c, n in zip(lab, x.shape):
            if size.get(c, 1) != 1 and n != 1 and size[c] != n:
                raise _C.InputError(f"einsum: subscript {c!r} has size {size[c]} in one operand and {n} in another")
            if c not in size or size[c] == 1:
                size[c] = n

    def arrange(x, lab, order):
        x = x.permute(*[lab.index(c) for c in order])
        return x.expand(tuple(size[c] if x.shape[k] == 1 else x.shape[k] for k, c in enumerate(order)))

    def prod(cs):
        n = 1
        for c in cs:
            n *= size[c]
        return n

    A = arrange(a, la, batch + left + contract).reshape(prod(batch), prod(left), prod(contract))
    B = arrange(b, lb, batch + contract + right).reshape(prod(batch), prod(contract), prod(right))
    out = A.matmul(B).reshape(tuple(size[c] for c in batch + left + right))
    return out, "".join(batch + left + right)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: ``einsum("bij,bjk->bik", a, b)`` is a batched matmul,
    ``einsum("ii", x)`` the trace, ``einsum("i,j->ij", u, v)`` the outer product.
    Labels in the inputs but not in the output are summed over; '...' stands for
    broadcast dims. Operands are contracted left to right, each pair with one batched
    matmul."""
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    if not operands:
        raise _C.InputError("einsum: must provide at least one operand")
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {k} must be a Tensor, not {type(t).__name__}")
    labels, out = _einsum_parse(equation, operands)
    xs = []
    for x, lab in zip(operands, labels):
        x, lab = _einsum_diagonal(x, lab)
        xs.append((x, lab))

    def needed_later(k):
        return set(out).union(*[set(l) for _, l in xs[k + 1:]])

    # Sum out labels that only one operand has and nobody needs.
    x, lab = xs[0]
    for k in range(len(xs)):
        y, ly = xs[k]
        others = set(out).union(*[set(l) for j, (_, l) in enumerate(xs) if j != k])
        gone = [i for i, c in enumerate(ly) if c not in others]
        if gone:
            y = y.sum(tuple(gone))
            ly = "".join(c for c in ly if c in others)
        xs[k] = (y, ly)
    x, lab = xs[0]
    for k in range(1, len(xs)):
        y, ly = xs[k]
        x, lab = _einsum_pair(x, lab, y, ly, needed_later(k))
    gone = [i for i, c in enumerate(lab) if c not in out]
    if gone:
        x = x.sum(tuple(gone))
        lab = "".join(c for c in lab if c in out)
    return x.permute(*[lab.index(c) for c in out]) if lab else x
