"""Reductions and scans along dims: ``sum mean max min argmax argmin`` (C++ ops and methods,
``cpp/src/ops/reduce.cpp``: here are their ``minitorch.<name>`` forms), statistics (``var std
var_mean std_mean logsumexp norm``, C++ ops over one ``reduce_stats`` kernel each), ``amax`` /
``amin`` (compositions of ``max`` / ``min``), the running ``cumsum`` / ``cumprod`` /
``logcumsumexp`` (``cpp/src/ops/scan.cpp``; ``cumsum_`` / ``cumprod_`` write the first two in
place), and ``count_nonzero``, ``nansum``, ``nanmean``, ``trace`` and ``sum_to_size``
(compositions of ``sum``); ``prod`` (the reduce kernel's product) and ``cummax`` / ``cummin``
(the ``scan_extreme`` kernel), C++ ops. These functions parse PyTorch's argument forms.
ops/registry.py attaches them as ops/declarations.py declares: the functions of ops whose
method is C++ (``cpp_method``) are ``minitorch.<name>``; ``var_mean`` and ``std_mean`` too; the
others take the tensor first and are both ``Tensor.<name>`` and ``minitorch.<name>``.
"""
from __future__ import annotations

import collections
import numbers

from .. import _C
from .._C import Tensor
from .._tensor import dim_tuple
from ._args import check_input, dims_or_all, int_arg, numpy_names


@numpy_names
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """Sum over ``dim`` (an int, a tuple of ints, or None for all dims)."""
    check_input(input, "sum")
    return input.sum(dim, keepdim, dtype=dtype)


@numpy_names
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; the input must be floating point (or pass ``dtype=``)."""
    check_input(input, "mean")
    return input.mean(dim, keepdim, dtype=dtype)


@numpy_names
def max(input, dim=None, keepdim=False):  # noqa: A001
    """``max(x)`` -> a 0-dim tensor; ``max(x, dim)`` -> ``(values, indices)``;
    ``max(x, other_tensor)`` -> elementwise maximum."""
    check_input(input, "max")
    return input.max(dim, keepdim)


@numpy_names
def min(input, dim=None, keepdim=False):  # noqa: A001
    """Like :func:`max`, for the minimum."""
    check_input(input, "min")
    return input.min(dim, keepdim)


@numpy_names
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (of the flattened tensor when ``dim`` is None)."""
    check_input(input, "argmax")
    return input.argmax(dim, keepdim)


@numpy_names
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    check_input(input, "argmin")
    return input.argmin(dim, keepdim)


def _var_args(op: str, x: Tensor, dim, unbiased, keepdim, correction) -> tuple:
    """PyTorch's argument forms of var/std/var_mean/std_mean as (dims, correction, keepdim):
    ``var(x, True)`` is the old ``(input, unbiased)`` form; ``unbiased=False`` means
    ``correction=0``. Warns, as PyTorch does, when a line has no more values than the
    correction (the result is then inf or NaN)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise _C.InputError(f"{op}: pass either unbiased or correction, not both")
    corr = correction if correction is not None else (1 if unbiased is None or unbiased else 0)
    if isinstance(corr, bool) or not isinstance(corr, numbers.Real):
        raise TypeError(f"{op}(): argument 'correction' must be a number, not {type(corr).__name__}")
    dims = list(dims_or_all(dim, x.ndim, op))
    n = 1
    for d in dims:
        n *= x.shape[d] if x.ndim else 1
    if n - corr <= 0 and x.numel() > 0:
        import warnings
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      f"factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, float(corr), bool(keepdim)


@numpy_names
def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance over ``dim`` (all dims when None): ``sum((x - mean)^2) / (N - correction)``;
    ``correction=1`` (the default, Bessel's) or ``unbiased=False`` for ``correction=0``."""
    return _C._var(self, *_var_args("var", self, dim, unbiased, keepdim, correction))


@numpy_names
def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))`` with the same arguments."""
    return _C._std(self, *_var_args("std", self, dim, unbiased, keepdim, correction))


@numpy_names
def var_mean(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(var, mean)`` over the same dims, in one pass."""
    return _C._var_mean(self, *_var_args("var_mean", self, dim, unbiased, keepdim, correction))


@numpy_names
def std_mean(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(std, mean)`` over the same dims, in one pass."""
    return _C._std_mean(self, *_var_args("std_mean", self, dim, unbiased, keepdim, correction))


def _extreme(self, dim, keepdim: bool, op: str, largest: bool) -> Tensor:
    if self.ndim == 0:
        return self.clone()
    dims = dims_or_all(dim, self.ndim, op)
    for d in dims:
        if self.shape[d] == 0:
            raise IndexError(f"{op}: Expected reduction dim {d} to have non-zero size")
    rest = [d for d in range(self.ndim) if d not in dims]
    moved = self.permute(*rest, *dims)
    reduced = 1
    for d in dims:
        reduced *= self.shape[d]
    # the reduced size spelled out (not -1): the kept dims may hold no elements (3, 0).amax(0)
    folded = moved.reshape(tuple(self.shape[d] for d in rest) + (reduced,))
    vals = (folded.max(-1) if largest else folded.min(-1))[0]
    if keepdim:
        vals = vals.reshape(tuple(1 if d in dims else self.shape[d] for d in range(self.ndim)))
    return vals


@numpy_names
def amax(self, dim=(), keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (an int or tuple; all dims when empty)."""
    return _extreme(self, dim, keepdim, "amax", True)


@numpy_names
def amin(self, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (an int or tuple; all dims when empty)."""
    return _extreme(self, dim, keepdim, "amin", False)


@numpy_names
def logsumexp(self, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed stably in one pass: a running max m and
    the sum of ``exp(x - m)``, so large values do not overflow. Integers give floats."""
    # dim is required (None is refused, as in PyTorch); () means every dim.
    dims = dim_tuple(dim, self.ndim, "logsumexp") if dim is None else dims_or_all(dim, self.ndim, "logsumexp")
    return _C._logsumexp(self, list(dims), bool(keepdim))


@numpy_names
def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The vector p-norm over ``dim`` (all elements when None): ``p=2`` / ``'fro'`` is
    ``sqrt(sum(x^2))``, ``p=1`` ``sum(|x|)``, ``p=inf`` ``max(|x|)``, ``p=0`` the count of
    non-zeros, other p ``sum(|x|^p)^(1/p)``. The gradient at an all-zero input is zero."""
    x = self if dtype is None else self.to(dtype)
    if p == "fro" or p is None:
        p = 2.0
    if isinstance(p, str):
        raise _C.InputError(f"norm: p must be a number or 'fro', got {p!r} ('nuc' is not supported)")
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro', not {type(p).__name__}")
    return _C._norm(x, float(p), list(dims_or_all(dim, x.ndim, "norm")), bool(keepdim))


@numpy_names
def cumsum(self, dim: int, *, dtype=None) -> Tensor:
    """Running sum along ``dim``: ``out[i] = x[0] + ... + x[i]`` (ints and bools give int64)."""
    return _C._cumsum(self, int_arg("cumsum", "dim", dim), dtype)


@numpy_names
def cumprod(self, dim: int, *, dtype=None) -> Tensor:
    """Running product along ``dim``: ``out[i] = x[0] * ... * x[i]``."""
    return _C._cumprod(self, int_arg("cumprod", "dim", dim), dtype)


def _scan_(op: str, self: Tensor, dim, dtype) -> Tensor:
    """``self.<op>(dim)`` written into ``self`` (ops/inplace.py's rules); a ``dtype`` other
    than ``self``'s is refused, as PyTorch's in-place call."""
    from .inplace import write_into
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(f"{op}_: Bad in-place call: input tensor dtype {self.dtype.name} and output tensor dtype "
                           f"{dtype.name} should match")
    d = int_arg(op + "_", "dim", dim)
    return write_into(self, op + "_", lambda x: getattr(x, op)(d))


@numpy_names
def cumsum_(self, dim: int, *, dtype=None) -> Tensor:
    """In-place :meth:`cumsum`; returns ``self``."""
    return _scan_("cumsum", self, dim, dtype)


@numpy_names
def cumprod_(self, dim: int, *, dtype=None) -> Tensor:
    """In-place :meth:`cumprod`; returns ``self``."""
    return _scan_("cumprod", self, dim, dtype)


@numpy_names
def logcumsumexp(self, dim: int) -> Tensor:
    """Running log-sum-exp along ``dim``: ``out[i] = log(exp(x[0]) + ... + exp(x[i]))``,
    each step combined stably (no overflow for large values, and an early value far below a
    later one keeps its own log instead of underflowing). Floating tensors only."""
    return _C._logcumsumexp(self, int_arg("logcumsumexp", "dim", dim))


@numpy_names
def count_nonzero(self, dim=None) -> Tensor:
    """How many elements are not zero, over ``dim`` (an int or a tuple; all dims when None),
    as int64.

    >>> minitorch.count_nonzero(minitorch.tensor([[0, 1, 2], [0, 0, 3]]), dim=1).tolist()
    [2, 1]
    """
    dims = dims_or_all(dim, self.ndim, "count_nonzero") if dim is not None else None
    return (self != 0).sum(dims)


def _no_nans(self: Tensor) -> Tensor:
    return _C.where(self.isnan(), 0.0, self) if self.dtype.is_floating_point else self


@numpy_names
def nansum(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum over ``dim`` treating NaN as zero (all NaN gives 0)."""
    if self.dtype == _C.dtype.bool:
        raise _C.DTypeError("nansum: not implemented for bool tensors")
    return _no_nans(self).sum(dim, keepdim, dtype=dtype)


@numpy_names
def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean over ``dim`` of the elements that are not NaN (all NaN gives NaN, as 0 / 0)."""
    x = self if dtype is None else self.to(dtype)
    if not x.dtype.is_floating_point:
        raise _C.DTypeError(f"nanmean: expected a floating point input (or dtype=), got {x.dtype.name}")
    count = x.isnan().logical_not().sum(dim, keepdim)
    return _no_nans(x).sum(dim, keepdim) / count


def trace(self) -> Tensor:
    """Sum of the main diagonal of a matrix (int64 for integer input).

    >>> minitorch.trace(minitorch.arange(9.0).reshape(3, 3)).item()
    12.0
    """
    if self.ndim != 2:
        raise _C.InputError(f"trace: expected a matrix (2-D tensor), got shape {tuple(self.shape)}")
    if self.dtype == _C.dtype.bool:
        raise _C.DTypeError("trace: not implemented for bool tensors")
    rows, cols = self.shape
    n = rows if rows < cols else cols
    return self.reshape(-1)[0:n * (cols + 1):cols + 1].sum()  # the diagonal: every (cols + 1)-th element


# ---- products and running extremes (C++ ops: prod over the reduce kernel, cummax / cummin
# over the scan_extreme kernel) ----

CummaxResult = collections.namedtuple("cummax", ["values", "indices"])
CumminResult = collections.namedtuple("cummin", ["values", "indices"])


@numpy_names
def prod(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or over ``dim`` (an int). Integers and bools give int64.
    The gradient is exact with zeros: a line's only zero gets the product of the others.

    >>> minitorch.tensor([[1, 2], [3, 4]]).prod(1).tolist()
    [2, 12]
    """
    dims = [] if dim is None else [int_arg("prod", "dim", dim)]
    return _C._prod(self, dims, bool(keepdim), dtype)


@numpy_names
def cummax(self, dim: int) -> CummaxResult:
    """``(values, indices)``: the running max along ``dim`` and where each was found (the
    later place for ties; a NaN wins and stays). The gradient goes to those places."""
    values, indices = _C._cummax(self, int_arg("cummax", "dim", dim))
    return CummaxResult(values, indices)


@numpy_names
def cummin(self, dim: int) -> CumminResult:
    """``(values, indices)``: the running min along ``dim``, as :func:`cummax`."""
    values, indices = _C._cummin(self, int_arg("cummin", "dim", dim))
    return CumminResult(values, indices)


AminmaxResult = collections.namedtuple("aminmax", ["min", "max"])


def aminmax(self: Tensor, *, dim=None, keepdim: bool = False):
    """``(min, max)`` of ``self`` (over ``dim``, or every element), as ``amin`` and ``amax``
    give them: a NaN wins both. What quantization observers record.

    >>> minitorch.aminmax(minitorch.tensor([3, -1, 7]))
    aminmax(min=tensor(-1), max=tensor(7))
    """
    check_input(self, "aminmax")
    if dim is None:
        if self.numel() == 0:
            raise _C.InputError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                                "has no identity")
        lo, hi = self.amin(), self.amax()
        if keepdim:
            ones = (1,) * self.ndim
            lo, hi = lo.reshape(ones), hi.reshape(ones)
        return AminmaxResult(lo, hi)
    d = int_arg("aminmax", "dim", dim)
    return AminmaxResult(self.amin(d, keepdim=keepdim), self.amax(d, keepdim=keepdim))


def cov(self: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``self`` (observations in the
    columns; a 1-D tensor is one variable), NumPy's and PyTorch's formula: integer
    frequency weights ``fweights`` and observation weights ``aweights`` per column, the
    divisor ``sum(w) - correction`` (``- correction * sum(w * a) / sum(w)`` with aweights)."""
    check_input(self, "cov")
    if self.ndim > 2:
        raise _C.InputError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                            f"{self.ndim} dimensions")
    if self.dtype == _C.dtype.bool:
        raise TypeError("cov(): bool dtype is not supported for input")
    x = self.reshape(1, -1) if self.ndim < 2 else self
    if not x.dtype.is_floating_point:
        from .. import get_default_dtype
        x = x.to(get_default_dtype())
    if isinstance(aweights, Tensor) and aweights.dtype.is_floating_point:
        x = x.to(_C.result_type(x, aweights))  # float64 weights make a float64 result (PyTorch's)
    n = x.shape[1]
    w = None
    if fweights is not None:
        if not isinstance(fweights, Tensor) or fweights.ndim > 1 or fweights.numel() != n:
            raise _C.InputError(f"cov(): expected fweights to be a 1-D tensor of {n} integers")
        if fweights.dtype.is_floating_point or fweights.dtype == _C.dtype.bool:
            raise TypeError(f"cov(): expected fweights to have integral dtype, got {fweights.dtype}")
        if (fweights < 0).any().item():
            raise _C.InputError("cov(): fweights cannot be negative")
        w = fweights.to(x.dtype)
    if aweights is not None:
        if not isinstance(aweights, Tensor) or aweights.ndim > 1 or aweights.numel() != n:
            raise _C.InputError(f"cov(): expected aweights to be a 1-D tensor of {n} values")
        if not aweights.dtype.is_floating_point:
            raise TypeError(f"cov(): expected aweights to have floating point dtype, got {aweights.dtype}")
        if (aweights < 0).any().item():
            raise _C.InputError("cov(): aweights cannot be negative")
        a = aweights.to(x.dtype)
        w = a if w is None else w * a
    if w is None:
        avg = x.mean(1, keepdim=True) if n else x.sum(1, keepdim=True)
        norm = n - correction
    else:
        wsum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights.to(x.dtype)).sum() / wsum
    xc = x - avg
    c = (xc * w if w is not None else xc) @ xc.transpose(0, 1)
    if isinstance(norm, Tensor):
        c = c / norm.clamp(min=0)
    else:
        c = c / (norm if norm > 0 else 0)
    return c.squeeze()  # one variable: a 0-dim result, as PyTorch's


def corrcoef(self: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the rows of ``self``: ``cov`` divided by the
    outer product of the standard deviations, clipped to [-1, 1]."""
    c = cov(self)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = d.sqrt()
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    return c.clamp(-1, 1)


def sum_to_size(self, *size) -> Tensor:
    """``self`` summed down to ``size`` (``x.sum_to_size(2, 1)`` or ``x.sum_to_size((2, 1))``):
    the reverse of ``expand``, adding over the leading dims ``size`` lacks and the dims where
    it has 1 (the gradient of a broadcast). ``size`` must be expandable to ``self.shape``.

    >>> minitorch.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    want = tuple(int_arg("sum_to_size", "size", n) for n in (size[0] if len(size) == 1 and isinstance(
        size[0], (tuple, list)) else size))
    have = tuple(self.shape)
    lead = len(have) - len(want)
    if lead < 0 or any(w != 1 and w != h for w, h in zip(want, have[lead:])):
        raise _C.InputError(f"sum_to_size: size {{{list(want)}}} is not expandable to size {{{list(have)}}}.")
    dims = tuple(range(lead)) + tuple(lead + k for k, (w, h) in enumerate(zip(want, have[lead:])) if w == 1 and h != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(want) if lead else out
