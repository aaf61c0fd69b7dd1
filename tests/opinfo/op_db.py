"""The OpInfo database: one entry per public op, made from its declaration
(``minitorch/ops/declarations.py``: forms, aliases, operators, in-place form, dtypes,
differentiable) plus what a declaration cannot say: sample inputs, a NumPy reference and
tolerances. PyTorch's ``torch.testing._internal.common_methods_invocations`` is the model.

A sample's arguments are NumPy arrays wrapped in ``D`` (data: made in the dtype and layout
under test), plain NumPy arrays (indices and masks: used as they are), lists of either,
and Python values. ``test_opinfo.py`` turns them into tensors and the reference's inputs.
"""
from __future__ import annotations

import functools
import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import minitorch
import numpy as np

from minitorch.ops.declarations import CPP, COMPOSITE, ELEMENTWISE, FUNCTIONAL, LINALG, MINITORCH, Op, by_name


class D:
    """A data argument: values that are made in the dtype and layout under test."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


@dataclass
class SampleInput:
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __repr__(self):
        def show(a):
            if isinstance(a, D):
                return f"D{a.arr.shape}"
            if isinstance(a, np.ndarray):
                return f"{a.dtype}{a.shape}"
            if isinstance(a, (list, tuple)):
                return type(a)(show(x) for x in a)
            return repr(a)
        return f"SampleInput({', '.join(map(str, map(show, self.args)))}, {self.kwargs})"


class Maker:
    """Makes the data of a sample in the kind of the dtype under test ('f', 'i' or 'b'):
    floats uniform in the op's domain, whole numbers in it (clipped to [-9, 9]), bools."""

    def __init__(self, kind: str, domain: tuple, seed: int = 0):
        self.kind, self.domain = kind, domain
        self.rng = np.random.default_rng(seed)

    def __call__(self, shape, low=None, high=None, *, nonzero=False, zeros=False) -> D:
        lo = self.domain[0] if low is None else low
        hi = self.domain[1] if high is None else high
        r = self.rng
        if self.kind == "b":
            arr = r.integers(0, 2, size=shape).astype(bool)
            return D(np.ones(shape, bool) if nonzero else arr)
        if self.kind in "iu":  # "u": uint8, whose values start at 0
            ilo, ihi = max(math.ceil(lo), -9 if self.kind == "i" else 0), min(math.floor(hi), 9)
            arr = r.integers(ilo, max(ihi, ilo) + 1, size=shape).astype(np.int64)
            if nonzero:
                arr = np.where(arr == 0, 1, arr)
        else:
            arr = r.uniform(lo, hi, size=shape)
            if nonzero:
                arr = np.where(np.abs(arr) < 0.5, 0.5, arr)
        if zeros:
            arr = np.where(r.random(size=shape) < 0.4, 0, arr).astype(arr.dtype)
        return D(arr)

    def scalar(self, nonzero=True):
        """A Python number of the dtype's kind (so the result keeps the tensor's dtype)."""
        if nonzero:
            return {"b": True, "i": 3, "u": 3, "f": 1.5}[self.kind]
        return {"b": False, "i": 0, "u": 0, "f": 0.0}[self.kind]


@dataclass
class OpInfo:
    name: str
    ref: Callable                      # NumPy reference: float64 / int64 / bool arrays in, arrays out
    samples: Callable                  # samples(make) -> iterable of SampleInput
    namespace: str = MINITORCH
    domain: tuple = (-10.0, 10.0)
    tol: dict = field(default_factory=dict)   # dtype name -> dict(rtol=, atol=), over DEFAULT_TOL
    check: Callable | None = None      # check(got, expected, sample_np): for outputs with indices
    grad_samples: int = 3              # how many non-empty samples gradcheck takes
    xfail: dict = field(default_factory=dict)  # (test, dtype or layout, device) -> reason; "*" matches any
    inplace_dtypes: tuple | None = None  # the only dtypes <op>_ writes into (float_power_: float64), else a RuntimeError
    decl: Op = None

    def __post_init__(self):
        self.decl = by_name(self.namespace)[self.name]

    @property
    def id(self):
        return self.name if self.namespace == MINITORCH else f"{'linalg' if self.namespace == LINALG else 'F'}.{self.name}"

    @property
    def dtypes(self):
        return self.decl.dtypes

    def xfail_reason(self, test, what, device):
        for (t, w, d), reason in self.xfail.items():
            if t == test and w in (what, "*") and d in (device, "*"):
                return reason
        return None


DEFAULT_TOL = {
    "float64": dict(rtol=1e-9, atol=1e-12),
    "float32": dict(rtol=1e-5, atol=1e-6),
    "float16": dict(rtol=1e-3, atol=1e-3),
    "bfloat16": dict(rtol=1.6e-2, atol=1e-2),
}


def _f64(fn):
    """A reference computed in float64 (ints and bools too: their results are float32)."""
    return lambda *a, **k: fn(*(np.asarray(x).astype(np.float64) if not isinstance(x, (int, float)) else float(x)
                                for x in a), **k)


def _same_if_integral(fn):
    """floor, ceil, round, trunc: the identity on integers."""
    return lambda x: x.copy() if x.dtype.kind in "ib" else fn(x)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


# ---------------------------------------------------------------- samples ----

UNARY_SHAPES = [(), (0,), (1,), (5,), (3, 4), (2, 1, 3), (1, 0, 2)]
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (4,)), ((4,), (3, 4)), ((2, 1, 3), (4, 1)), ((), (3,)), ((3,), ()),
                 ((0, 3), (3,)), ((1,), (1, 0))]


def unary_samples(make):
    return [SampleInput((make(s),)) for s in UNARY_SHAPES]


def binary_samples(nonzero_other=False, scalar=True):
    def gen(make):
        out = [SampleInput((make(a), make(b, nonzero=nonzero_other))) for a, b in BINARY_SHAPES]
        if scalar:
            out.append(SampleInput((make((3, 4)), make.scalar())))
        return out
    return gen


def pow_samples(make):
    if make.kind == "f":
        return [SampleInput((make(a, 0.5, 3.0), make(b, -3.0, 3.0))) for a, b in BINARY_SHAPES] + [
            SampleInput((make((3, 4), 0.5, 3.0), 2)), SampleInput((make((3, 4), 0.5, 3.0), 0.5))]
    return [SampleInput((make(a, -4, 4), make(b, 0, 4))) for a, b in BINARY_SHAPES] + [
        SampleInput((make((3, 4), -4, 4), make.scalar()))]


REDUCE_SHAPES = [(3, 4), (2, 3, 4), (5,), ()]


def reduce_samples(full=True, dims=True, empty=False, tuple_dims=False):
    def gen(make):
        out = []
        for s in REDUCE_SHAPES:
            if full:
                out.append(SampleInput((make(s),)))
            if dims and s:
                out.append(SampleInput((make(s), len(s) - 1)))
                out.append(SampleInput((make(s), 0), dict(keepdim=True)))
        if tuple_dims:
            out.append(SampleInput((make((2, 3, 4)), (0, 2))))
        if empty:
            out += [SampleInput((make((0, 3)),)), SampleInput((make((0, 3)), 0))]
        return out
    return gen


def dim_samples(make):
    """(x, dim) for scans, softmax and the like."""
    return [SampleInput((make((3, 4)), 1)), SampleInput((make((3, 4)), 0)), SampleInput((make((2, 3, 4)), -1)),
            SampleInput((make((5,)), 0)), SampleInput((make(()), 0)), SampleInput((make((0, 3)), 1))]


def _gather_check(x, idx, axis, keepdim=True):
    """The values at ``idx`` along ``axis`` (indices may differ from NumPy's where values tie)."""
    if axis is None:
        return x.reshape(-1)[idx]
    if not keepdim:
        idx = np.expand_dims(idx, axis)
    out = np.take_along_axis(x, idx, axis)
    return out if keepdim else np.squeeze(out, axis)


def _dim_of(sample_np, pos=1, key="dim", default=None):
    args, kwargs = sample_np
    return kwargs.get(key, args[pos] if len(args) > pos else default)


def check_values_and_indices(got, expected, sample_np, assert_same, dim_pos=1):
    """(values, indices) outputs: the values as usual; the indices must point at them."""
    x = sample_np[0][0]
    if not isinstance(expected, tuple):
        return assert_same(got, expected)
    values, indices = got
    assert_same(values, expected[0])
    dim = _dim_of(sample_np, dim_pos, default=-1)
    keepdim = sample_np[1].get("keepdim", True if expected[0].ndim == x.ndim else False)
    gathered = _gather_check(x, np.asarray(indices), dim if x.ndim else None, keepdim)
    np.testing.assert_array_equal(gathered, expected[0], err_msg="the indices do not point at the values")


def check_indices(got, expected, sample_np, assert_same):
    """An index output (argmax, argsort): the values it points at are the reference's."""
    x = sample_np[0][0]
    got = np.asarray(got)
    assert got.dtype == np.int64, got.dtype
    dim = _dim_of(sample_np, default=-1 if expected[1] == "argsort" else None)
    want_values = expected[0]
    keepdim = sample_np[1].get("keepdim", False)
    if dim is None or x.ndim == 0:
        gathered = x.reshape(-1)[got] if x.ndim else x
    else:
        gathered = _gather_check(x, got, dim, keepdim or got.ndim == x.ndim)
    np.testing.assert_array_equal(gathered, want_values)


# ---- references of ops with arguments ----

def _clamp(x, min=None, max=None):
    out = x
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return np.asarray(out).astype(x.dtype)


def _axis(dim):
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def _sum(x, dim=None, keepdim=False):
    out = np.sum(x, axis=_axis(dim), keepdims=keepdim)
    return np.asarray(out, np.int64 if x.dtype.kind in "ib" else x.dtype)


def _reducer(fn):
    return lambda x, dim=None, keepdim=False: np.asarray(fn(x, axis=_axis(dim), keepdims=keepdim))


def _max_like(fn, argfn):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            return np.asarray(fn(x))
        return np.asarray(fn(x, axis=dim, keepdims=keepdim)), argfn
    return ref


def _arg(fn):
    def ref(x, dim=None, keepdim=False):
        values = np.asarray(fn(x) if dim is None else fn(x, axis=dim, keepdims=keepdim))
        return values, "arg"
    return ref


def _var(fn):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        ddof = 1 if correction is None else correction
        return np.asarray(fn(x, axis=_axis(dim), ddof=ddof, keepdims=keepdim))
    return ref


def _logsumexp(x, dim, keepdim=False):
    x = x.astype(np.float64)
    return np.log(np.sum(np.exp(x), axis=_axis(dim), keepdims=keepdim))


def _norm(x, p="fro", dim=None, keepdim=False):
    p = 2 if p == "fro" else p
    a = np.abs(x)
    if p == math.inf:
        return np.asarray(np.max(a, axis=_axis(dim), keepdims=keepdim))
    return np.asarray(np.sum(a**p, axis=_axis(dim), keepdims=keepdim) ** (1 / p))


def _cum(fn):
    def ref(x, dim):
        out = fn(x.reshape(1) if x.ndim == 0 else x, axis=dim).reshape(x.shape)
        return out.astype(np.int64) if x.dtype.kind in "ib" else out
    return ref


def _softmax(x, dim):
    if x.size == 0:
        return x.copy()
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x, dim):
    if x.size == 0:
        return x.copy()
    s = x - np.max(x, axis=dim, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))


def _sort(x, dim=-1, descending=False):
    if x.ndim == 0:
        return x.copy(), "sort"
    out = np.sort(x, axis=dim, kind="stable")
    return (np.flip(out, axis=dim) if descending else out), "sort"


def _topk(x, k, dim=-1, largest=True, sorted=True):
    s = np.sort(x, axis=dim)
    s = np.flip(s, axis=dim) if largest else s
    return np.take(s, np.arange(k), axis=dim), "topk"


def _ints_out(fn):
    """matmul-like references: bools are not taken; ints stay int64."""
    def ref(*a, **k):
        out = np.asarray(fn(*a, **k))
        return out.astype(np.int64) if out.dtype.kind in "iu" else out
    return ref


def _scatter(x, dim, index, src=None, *, value=None):
    out = x.copy()
    src = np.full(index.shape, value, dtype=x.dtype) if src is None else src[tuple(slice(0, s) for s in index.shape)]
    idx = list(np.indices(index.shape))
    idx[dim] = index
    out[tuple(idx)] = src
    return out


def _scatter_add(x, dim, index, src):
    out = x.copy()
    src = src[tuple(slice(0, s) for s in index.shape)]
    idx = list(np.indices(index.shape))
    idx[dim] = index
    np.add.at(out, tuple(idx), src)
    return out


_REDUCE_UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


def _reduce_identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low = reduce == "amax"
    if dtype == bool:
        return not low
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    info = np.iinfo(dtype)
    return info.min if low else info.max


def _scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    """np.<ufunc>.at at the places index names (NaN wins np.maximum / np.minimum too)."""
    out = x.copy()
    src = src[tuple(slice(0, s) for s in index.shape)]
    idx = list(np.indices(index.shape)) if index.ndim else []
    if index.ndim:
        idx[dim] = index
    idx = tuple(idx) if index.ndim else (index.reshape(1),)
    flat = out.reshape(-1) if not index.ndim else out
    if not include_self:
        flat[idx] = _reduce_identity(reduce, x.dtype)
    _REDUCE_UFUNC[reduce].at(flat, idx, src.reshape(-1) if not index.ndim else src)
    if reduce == "mean":
        count = np.full(flat.shape, 1 if include_self else 0, np.int64)
        np.add.at(count, idx, 1)
        count = np.maximum(count, 1)
        flat = flat / count if x.dtype.kind == "f" else flat // count
    return flat.reshape(x.shape).astype(x.dtype)


def _index_reduce(x, dim, index, source, reduce, *, include_self=True):
    shape = [1] * x.ndim
    shape[dim] = index.size
    return _scatter_reduce(x, dim, np.broadcast_to(index.reshape(shape), source.shape), source, reduce,
                           include_self=include_self)


def _index_add(x, dim, index, source, *, alpha=1):
    out = np.moveaxis(x.copy(), dim, 0)
    np.add.at(out, index, np.moveaxis(source, dim, 0) * alpha)
    return np.moveaxis(out, 0, dim).astype(x.dtype)


def _index_copy(x, dim, index, source):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = np.moveaxis(source, dim, 0)
    return np.moveaxis(out, 0, dim)


def _index_fill(x, dim, index, value):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = value
    return np.moveaxis(out, 0, dim)


def _index_put(x, indices, values, accumulate=False):
    out = x.copy()
    if accumulate:
        np.add.at(out, tuple(indices), values)
    else:
        out[tuple(indices)] = values
    return out


def _masked_fill(x, mask, value):
    return np.where(mask, np.asarray(value).astype(x.dtype), x)


def _tri(fn):
    return lambda x, diagonal=0: fn(x, diagonal)


def _split(x, split_size_or_sections, dim=0):
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        cuts = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        cuts = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(np.split(x, cuts, axis=dim))


def _chunk(x, chunks, dim=0):
    n = x.shape[dim]
    size = -(-n // chunks)
    return _split(x, size, dim)


def _roll(x, shifts, dims=None):
    if dims is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, axis=dims)


def _isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    if a.dtype.kind in "ib" and b.dtype.kind in "ib":
        return np.equal(a, b)
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _close_pair(make):
    """a and b with about half their elements equal and the rest apart."""
    a = make((3, 4))
    b = make((3, 4))
    mask = make.rng.random(size=(3, 4)) < 0.5
    return a, D(np.where(mask, a.arr, b.arr))


# ---- samples of ops with arguments ----

def clamp_samples(make):
    lo = make((4,), -3, 0)
    # (uint8: a negative bound would wrap around to a large one, as in PyTorch)
    return [SampleInput((make((3, 4)), -2 if make.kind != "u" else 1, 3)), SampleInput((make((3, 4)),), dict(max=1)),
            SampleInput((make((2, 3)),), dict(min=0)), SampleInput((make((5,)), 4, 1)),
            SampleInput((make(()), -1 if make.kind != "u" else 0, 1)), SampleInput((make((0, 2)), -1, 1)),
            SampleInput((make((3, 4)), lo, D(lo.arr + 2)))]


def where_samples(make):
    r = make.rng
    return [SampleInput((r.random((3, 4)) < 0.5, make((3, 4)), make((3, 4)))),
            SampleInput((r.random((3, 1)) < 0.5, make((4,)), make((2, 1, 1)))),
            SampleInput((r.random((0, 2)) < 0.5, make((1, 2)), make((2,)))),
            SampleInput((np.asarray(r.random(()) < 0.5), make(()), make((3,)))),
            SampleInput((r.random((3, 4)) < 0.5, make((3, 4)), make.scalar(nonzero=False)))]


def matmul_samples(make):
    pairs = [((3, 4), (4, 2)), ((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)), ((2, 3, 4), (4, 2)),
             ((2, 1, 3, 4), (3, 4, 2)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]
    return [SampleInput((make(a), make(b))) for a, b in pairs]


def _pairs(pairs):
    return lambda make: [SampleInput((make(a), make(b))) for a, b in pairs]


def baddbmm_samples(make):
    return [SampleInput((make((2, 3, 2)), make((2, 3, 4)), make((2, 4, 2)))),
            SampleInput((make((3, 2)), make((2, 3, 4)), make((2, 4, 2))), dict(beta=2, alpha=3)),
            SampleInput((make((2, 0, 2)), make((2, 0, 4)), make((2, 4, 2))))]


def addmm_samples(make):
    return [SampleInput((make((2, 3)), make((2, 4)), make((4, 3)))),
            SampleInput((make((3,)), make((2, 4)), make((4, 3))), dict(beta=2, alpha=3)),
            SampleInput((make((2, 1)), make((2, 0)), make((0, 3))), dict(beta=0))]


def index_samples(make):
    r = make.rng
    return [SampleInput((make((3, 4)), 0, np.array([2, 0, 2]))), SampleInput((make((3, 4)), 1, np.array([3, 1]))),
            SampleInput((make((2, 3, 4)), -1, np.array([], dtype=np.int64))),
            SampleInput((make((5,)), 0, r.integers(0, 5, size=(7,))))]


def _unique_index(r, shape, n, dim):
    """An index of ``shape`` with values < n, distinct along ``dim`` (scatter then has one
    writer per element)."""
    idx = np.moveaxis(np.zeros(shape, np.int64), dim, -1)
    flat = idx.reshape(-1, idx.shape[-1])
    for row in flat:
        row[:] = r.permutation(n)[: len(row)]
    return np.moveaxis(flat.reshape(idx.shape), -1, dim)


def gather_samples(make):
    r = make.rng
    return [SampleInput((make((3, 4)), 0, r.integers(0, 3, size=(2, 4)))),
            SampleInput((make((3, 4)), 1, r.integers(0, 4, size=(3, 6)))),
            SampleInput((make((2, 3, 4)), -1, r.integers(0, 4, size=(2, 3, 1)))),
            SampleInput((make((3,)), 0, np.zeros((0,), np.int64)))]


def scatter_samples(make):
    r = make.rng
    return [SampleInput((make((3, 4)), 0, _unique_index(r, (2, 4), 3, 0), make((2, 4)))),
            SampleInput((make((3, 4)), 1, _unique_index(r, (3, 2), 4, 1), make((3, 3)))),
            SampleInput((make((3, 4)), 1, _unique_index(r, (2, 3), 4, 1)), dict(value=make.scalar()))]


def scatter_add_samples(make):
    r = make.rng
    return [SampleInput((make((3, 4)), 0, r.integers(0, 3, size=(5, 4)), make((5, 4)))),
            SampleInput((make((3, 4)), 1, r.integers(0, 4, size=(2, 6)), make((3, 6)))),
            SampleInput((make((4,)), 0, r.integers(0, 4, size=(0,)), make((0,))))]


def scatter_reduce_samples(make):
    """Every reduction, with and without self; repeated indices (values meeting at one
    place), an index smaller than src, and an empty index. No mean on bool (not taken)."""
    r = make.rng
    reductions = ["sum", "prod", "amax", "amin"] + ([] if make.kind == "b" else ["mean"])
    out = []
    for k, reduce in enumerate(reductions):
        include_self = k % 2 == 0
        out.append(SampleInput((make((3, 4)), 0, r.integers(0, 3, size=(4, 4)), make((4, 4)), reduce),
                               dict(include_self=include_self)))
        out.append(SampleInput((make((3, 5)), 1, r.integers(0, 5, size=(2, 3)), make((3, 4)), reduce),
                               dict(include_self=not include_self)))
    out.append(SampleInput((make((4,)), 0, np.zeros((0,), np.int64), make((0,)), "amax")))
    return out


def index_reduce_samples(make):
    reductions = ["prod", "amax", "amin"] + ([] if make.kind == "b" else ["mean"])
    return [s for k, reduce in enumerate(reductions) for s in (
        SampleInput((make((3, 4)), 0, np.array([2, 0, 2, 1]), make((4, 4)), reduce), dict(include_self=k % 2 == 0)),
        SampleInput((make((3, 4)), 1, np.array([3, 0, 3]), make((3, 3)), reduce), dict(include_self=k % 2 == 1)))]


def index_add_samples(make):
    return [SampleInput((make((3, 4)), 0, np.array([2, 0, 2, 1]), make((4, 4)))),
            SampleInput((make((3, 4)), 1, np.array([3, 0]), make((3, 2))))]


def index_copy_samples(make):
    return [SampleInput((make((3, 4)), 0, np.array([2, 0]), make((2, 4)))),
            SampleInput((make((3, 4)), 1, np.array([3, 0, 1]), make((3, 3))))]


def index_fill_samples(make):
    return [SampleInput((make((3, 4)), 0, np.array([2, 0]), make.scalar())),
            SampleInput((make((3, 4)), 1, np.array([3]), make.scalar(nonzero=False)))]


def index_put_samples(make):
    return [SampleInput((make((3, 4)), (np.array([0, 2]), np.array([1, 3])), make((2,)))),
            SampleInput((make((3, 4)), (np.array([2, 0]),), make((2, 4)))),
            SampleInput((make((3, 4)), (np.array([0, 0, 1]), np.array([1, 1, 2])), make((3,))),
                        dict(accumulate=True))]


def mask_samples(with_value):
    def gen(make):
        r = make.rng
        extra = (make.scalar(),) if with_value else ()
        return [SampleInput((make((3, 4)), r.random((3, 4)) < 0.5, *extra)),
                SampleInput((make((3, 4)), r.random((4,)) < 0.5, *extra)),
                SampleInput((make((0, 2)), r.random((0, 2)) < 0.5, *extra)),
                SampleInput((make(()), np.array(True), *extra))]
    return gen


def _unfold(x, dim, size, step):
    if x.ndim == 0:
        return x.reshape(1)[:size]
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    return np.take(windows, np.arange(0, windows.shape[dim], step), axis=dim)


def _x(*variants):
    """Samples (x, *args) with x of the given shapes: variants are (shape, args, kwargs)."""
    def gen(make):
        return [SampleInput((make(shape), *args), kw) for shape, args, kw in variants]
    return gen


def cat_samples(make):
    return [SampleInput(([make((2, 3)), make((1, 3)), make((0, 3))], 0)),
            SampleInput(([make((2, 3)), make((2, 2))], 1)), SampleInput(([make((4,))],))]


def stack_samples(make):
    return [SampleInput(([make((2, 3)), make((2, 3))], 0)), SampleInput(([make((2, 3)), make((2, 3))], -1)),
            SampleInput(([make(()), make(())],))]


def xstack_samples(make):
    return [SampleInput(([make((2, 3)), make((2, 3))],)), SampleInput(([make((3,)), make((3,))],))]


def _squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    return np.squeeze(x, dim) if x.shape[dim] == 1 else x.copy()


def _flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:]) if x.size else x.reshape(
        x.shape[:s] + (int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:])


def _view_samples():
    return {
        "permute": (lambda x, dims: np.transpose(x, dims), _x(((2, 3, 4), ((1, 0, 2),), {}), ((3, 4), ((1, 0),), {}),
                                                              ((), ((),), {}))),
        "reshape": (lambda x, shape: x.reshape(shape), _x(((3, 4), ((4, 3),), {}), ((2, 3, 4), ((-1,),), {}),
                                                          ((1,), ((),), {}), ((0, 3), ((3, 0, 1),), {}))),
        "flatten": (_flatten, _x(((2, 3, 4), (), {}), ((2, 3, 4), (1,), {}), ((2, 3, 4), (0, 1), {}),
                                 ((), (), {}))),
        "squeeze": (_squeeze, _x(((1, 3, 1), (), {}), ((1, 3, 1), (0,), {}), ((2, 3), (1,), {}), ((), (), {}))),
        "unsqueeze": (lambda x, dim: np.expand_dims(x, dim), _x(((3, 4), (0,), {}), ((3, 4), (-1,), {}),
                                                                ((), (0,), {}))),
        "transpose": (lambda x, a, b: np.swapaxes(x, a, b), _x(((3, 4), (0, 1), {}), ((2, 3, 4), (-1, 0), {}),
                                                               ((5,), (0, 0), {}))),
        "t": (lambda x: x.T.copy(), _x(((3, 4), (), {}), ((5,), (), {}), ((), (), {}))),
        "movedim": (lambda x, s, d: np.moveaxis(x, s, d), _x(((2, 3, 4), (0, -1), {}),
                                                             ((2, 3, 4), ((0, 1), (2, 0)), {}))),
        "unflatten": (lambda x, dim, sizes: x.reshape(x.shape[:dim] + tuple(sizes) + x.shape[dim + 1:]),
                      _x(((3, 4), (1, (2, 2)), {}), ((6,), (0, (3, -1)), {}))),
        "narrow": (lambda x, dim, start, length: np.take(x, np.arange(start, start + length), axis=dim),
                   _x(((3, 4), (1, 1, 2), {}), ((3, 4), (0, 0, 0), {}), ((5,), (0, 2, 3), {}))),
        "flip": (lambda x, dims: np.flip(x, dims), _x(((3, 4), ((0,),), {}), ((2, 3, 4), ((0, 2),), {}))),
        "roll": (_roll, _x(((3, 4), (1, 0), {}), ((3, 4), ((1, -2), (0, 1)), {}), ((3, 4), (5,), {}))),
        "tril": (_tri(np.tril), _x(((3, 4), (), {}), ((4, 3), (-1,), {}), ((2, 3, 3), (1,), {}))),
        "triu": (_tri(np.triu), _x(((3, 4), (), {}), ((4, 3), (1,), {}), ((2, 3, 3), (-2,), {}))),
        "repeat": (lambda x, *reps: np.tile(x, reps), _x(((3, 4), (2, 1), {}), ((3,), (1, 2, 2), {}),
                                                         ((2, 0), (2, 2), {}))),
        "unfold": (_unfold, _x(((3, 7), (1, 3, 2), {}), ((4, 5), (0, 2, 2), {}), ((2, 3, 4), (-1, 4, 1), {}),
                               ((5,), (0, 2, 3), {}), ((), (0, 1, 1), {}))),
        "split": (_split, _x(((3, 4), (2, 1), {}), ((5, 2), ([1, 4],), {}), ((4,), (4,), {}))),
        "split_with_sizes": (_split, _x(((3, 4), ([1, 3], 1), {}), ((5,), ([2, 0, 3],), {}))),
        "chunk": (_chunk, _x(((3, 4), (2, 1), {}), ((5,), (3,), {}))),
        "unbind": (lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)), _x(((3, 4), (1,), {}), ((2, 3), (), {}))),
    }


# ---- nn.functional activations (nn/_activation_functional.py) ----

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _softshrink(x, lambd=0.5):
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0.0))


def _prelu(x, w):
    if w.size == 1 or x.ndim < 2:
        return np.where(x > 0, x, w.reshape(()) * x)
    return np.where(x > 0, x, w.reshape((-1,) + (1,) * (x.ndim - 2)) * x)


def _glu(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _activation_unary_samples(*extra):
    """x of a few small shapes (a 0-dim one included), then ``extra`` (shape, args, kwargs) variants."""
    return _x(((3, 4), (), {}), ((), (), {}), ((2, 1, 3), (), {}), *extra)


def prelu_samples(make):
    return [SampleInput((make((2, 3, 2)), make((3,), 0.05, 0.5))), SampleInput((make((3, 4)), make((1,), 0.05, 0.5))),
            SampleInput((make((5,)), make((1,), -0.5, 0.5)))]


def _activation_ops() -> list[OpInfo]:
    unary = _activation_unary_samples
    return [
        OpInfo("hardtanh", lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val),
               unary(((3, 4), (-2.0, 2.5), {}), ((5,), (), dict(min_val=0.0, max_val=0.5))),
               namespace=FUNCTIONAL, domain=(-3.0, 3.0)),
        OpInfo("relu6", lambda x: np.clip(x, 0.0, 6.0), unary(), namespace=FUNCTIONAL, domain=(-3.0, 9.0)),
        OpInfo("hardsigmoid", lambda x: np.clip(x + 3, 0.0, 6.0) / 6, unary(), namespace=FUNCTIONAL,
               domain=(-5.0, 5.0)),
        OpInfo("hardswish", lambda x: x * np.clip(x + 3, 0.0, 6.0) / 6, unary(), namespace=FUNCTIONAL,
               domain=(-5.0, 5.0)),
        OpInfo("mish", lambda x: x * np.tanh(np.logaddexp(0.0, x)), unary(), namespace=FUNCTIONAL,
               domain=(-5.0, 5.0)),
        OpInfo("logsigmoid", lambda x: -np.logaddexp(0.0, -x), unary(((4,), (), {})), namespace=FUNCTIONAL),
        OpInfo("softsign", lambda x: x / (1 + np.abs(x)), unary(), namespace=FUNCTIONAL, domain=(-5.0, 5.0)),
        OpInfo("tanhshrink", lambda x: x - np.tanh(x), unary(), namespace=FUNCTIONAL, domain=(-3.0, 3.0)),
        OpInfo("threshold", lambda x, threshold, value: np.where(x > threshold, x, value),
               _x(((3, 4), (0.5, -2.0), {}), ((), (0.0, 1.0), {}), ((5,), (-1.0,), dict(value=0.0))),
               namespace=FUNCTIONAL, domain=(-3.0, 3.0)),
        OpInfo("softshrink", _softshrink, unary(((5,), (1.0,), {})), namespace=FUNCTIONAL, domain=(-3.0, 3.0)),
        OpInfo("hardshrink", lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0.0),
               unary(((5,), (), dict(lambd=1.0))), namespace=FUNCTIONAL, domain=(-3.0, 3.0)),
        OpInfo("selu", lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))), unary(),
               namespace=FUNCTIONAL, domain=(-5.0, 5.0)),
        OpInfo("celu", lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha)),
               unary(((5,), (0.5,), {})), namespace=FUNCTIONAL, domain=(-5.0, 5.0)),
        OpInfo("glu", _glu, _x(((3, 4), (), {}), ((4, 3), (0,), {}), ((2, 2, 3), (1,), {})),
               namespace=FUNCTIONAL, domain=(-5.0, 5.0)),
        OpInfo("prelu", _prelu, prelu_samples, namespace=FUNCTIONAL, domain=(-3.0, 3.0)),
        OpInfo("softmin", lambda x, dim, dtype=None: _softmax(-x, dim),
               _x(((3, 4), (1,), {}), ((2, 3, 4), (0,), {}), ((5,), (-1,), {})), namespace=FUNCTIONAL,
               domain=(-5.0, 5.0)),
    ]


# ---- everyday math and linear algebra composites (ops/pointwise_math.py, reduction.py, linalg.py) ----
# Samples that put NaN or inf in come after the plain ones, and grad_samples stops before
# them: gradcheck's finite differences mean nothing there (tests/test_math_composites.py
# checks those values and gradients).

def _with_nans(make, shape, **kw):
    """Data of ``shape`` with about a third NaN (for floats; ints and bools have none)."""
    d = make(shape, **kw)
    if make.kind != "f":
        return d
    return D(np.where(make.rng.random(size=shape) < 0.35, np.nan, d.arr))


def _xlogy(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


def _lerp_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4)), 0.3)), SampleInput((make((3, 4)), make((4,)), 0.8)),
            SampleInput((make((2, 3)), make((2, 3)), make((2, 3), 0.0, 1.0))),
            SampleInput((make((3, 1)), make((3,)), make((1, 3), 0.0, 1.0)))]


def _addc_samples(divide):
    def gen(make):
        other = functools.partial(make, nonzero=divide)
        return [SampleInput((make((3, 4)), make((3, 4)), other((3, 4)))),
                SampleInput((make((3, 4)), make((4,)), other((3, 1))), dict(value=2)),
                SampleInput((make((4,)), make((2, 4)), other((4,))), dict(value=-1))]
    return gen


def _binary_few(make):
    return [SampleInput((make(a), make(b))) for a, b in (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)))]


def _float64_result(got, want, sample_np, same):
    """float_power computes in float64 whatever its inputs: compare there."""
    assert got.dtype == minitorch.float64, f"dtype {got.dtype}, expected float64"
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12, atol=1e-12)


def _float_power_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4)))), SampleInput((make((3, 1)), 2.5)), SampleInput((make((2,)), 3))]


def _aminmax(x, dim=None, keepdim=False):
    axis = None if dim is None else dim
    lo, hi = np.amin(x, axis=axis, keepdims=keepdim), np.amax(x, axis=axis, keepdims=keepdim)
    return np.asarray(lo), np.asarray(hi)


def _cov(x, correction=1, fweights=None, aweights=None):
    return np.asarray(np.cov(np.asarray(x, np.float64), ddof=correction, fweights=fweights, aweights=aweights))


def _cov_samples(make):
    r = make.rng
    return [SampleInput((make((3, 5)),)), SampleInput((make((6,)),), dict(correction=0)),
            SampleInput((make((2, 4)),), dict(fweights=r.integers(1, 4, 4)))]
    # (float aweights promote the result, as PyTorch's: tests/test_math_composites_more.py)


def _xlogy_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4), 0.1, 3.0))), SampleInput((make((3, 1)), make((4,), 0.1, 3.0))),
            SampleInput((make((2, 3), zeros=True), make((2, 3), 0.0, 3.0, zeros=True))),
            SampleInput((make((3,), zeros=True), 2.5))]


def _nan_to_num_samples(make):
    plain = [SampleInput((make((3, 4)),)), SampleInput((make((5,)),), dict(nan=1.5))]
    if make.kind != "f":
        return plain
    x = make((3, 4)).arr
    x.flat[[0, 5]], x.flat[[2, 7]], x.flat[[3, 11]] = np.nan, np.inf, -np.inf
    return plain + [SampleInput((D(x),), dict(nan=-2.0, posinf=100.0, neginf=-100.0)),
                    SampleInput((D(x),), dict(posinf=3.0, neginf=-3.0))]


def _fmax_samples(make):
    return _binary_few(make) + [SampleInput((_with_nans(make, (3, 4)), _with_nans(make, (3, 4))))]


def _heaviside_samples(make):
    return [SampleInput((make((3, 4), zeros=True), make((3, 4)))), SampleInput((make((3, 4), zeros=True), make((4,)))),
            SampleInput((make((5,), zeros=True), make(())))]


def _nan_reduce_samples(make):
    return [SampleInput((make((3, 4)),)), SampleInput((make((3, 4)), 1)),
            SampleInput((_with_nans(make, (3, 4)),)), SampleInput((_with_nans(make, (2, 3, 4)), (0, 2), True)),
            SampleInput((_with_nans(make, (3, 4)), 0))]


def _nanmean(x, dim=None, keepdim=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN lines: NaN, as in PyTorch
        return np.asarray(np.nanmean(x, axis=_axis(dim), keepdims=keepdim))


def _diff(x, n=1, dim=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, axis=dim, **kw)


def _math_ops() -> list[OpInfo]:
    nan_safe = dict(grad_samples=2)
    return [
        OpInfo("lerp", lambda s, e, w: s + w * (e - s), _lerp_samples, domain=(-2.0, 2.0)),
        OpInfo("addcmul", lambda s, a, b, value=1: s + value * a * b, _addc_samples(False), domain=(-2.0, 2.0)),
        OpInfo("addcdiv", lambda s, a, b, value=1: s + value * a / b, _addc_samples(True), domain=(-2.0, 2.0)),
        OpInfo("logaddexp", np.logaddexp, _binary_few, domain=(-5.0, 5.0)),
        OpInfo("logaddexp2", np.logaddexp2, _binary_few, domain=(-5.0, 5.0)),
        OpInfo("hypot", np.hypot, _binary_few, domain=(-3.0, 3.0)),
        OpInfo("copysign", _f64(np.copysign), _binary_few, domain=(-3.0, 3.0)),
        OpInfo("sinc", _f64(np.sinc), _x(((3, 4), (), {}), ((), (), {}), ((0, 2), (), {})), domain=(-3.0, 3.0)),
        OpInfo("float_power", lambda a, b: np.float_power(np.asarray(a, np.float64), b), _float_power_samples,
               domain=(0.5, 3.0), check=_float64_result, inplace_dtypes=("float64",)),
        OpInfo("aminmax", _aminmax, _x(((3, 4), (), {}), ((3, 4), (), dict(dim=1)), ((2, 3, 4), (), dict(dim=-1, keepdim=True)),
                                        ((5,), (), dict(keepdim=True)), ((3, 0), (), dict(dim=0)))),
        OpInfo("cov", _cov, _cov_samples, domain=(-3.0, 3.0)),
        OpInfo("corrcoef", lambda x: np.asarray(np.clip(np.corrcoef(np.asarray(x, np.float64)), -1, 1)),
               _x(((3, 5), (), {}), ((2, 7), (), {})), domain=(-3.0, 3.0)),
        OpInfo("xlogy", _xlogy, _xlogy_samples, domain=(-2.0, 2.0), **nan_safe),
        OpInfo("nan_to_num", lambda x, nan=0.0, posinf=None, neginf=None: np.nan_to_num(
            x, nan=nan, posinf=posinf, neginf=neginf), _nan_to_num_samples, grad_samples=1),
        OpInfo("deg2rad", _f64(np.deg2rad), _x(((3, 4), (), {}), ((), (), {}), ((0, 2), (), {}))),
        OpInfo("rad2deg", _f64(np.rad2deg), _x(((3, 4), (), {}), ((), (), {})), domain=(-3.0, 3.0)),
        OpInfo("logit", lambda x, eps=None: np.log((p := x if eps is None else np.clip(x, eps, 1 - eps)) / (1 - p)),
               _x(((3, 4), (), {}), ((5,), (), dict(eps=0.2)), ((), (0.1,), {})), domain=(0.05, 0.95)),
        OpInfo("fmax", np.fmax, _fmax_samples, **nan_safe),
        OpInfo("fmin", np.fmin, _fmax_samples, **nan_safe),
        OpInfo("heaviside", lambda x, v: np.heaviside(x, v).astype(x.dtype), _heaviside_samples, domain=(-2.0, 2.0)),
        OpInfo("count_nonzero", lambda x, dim=None: np.asarray(np.count_nonzero(x, axis=_axis(dim)), np.int64),
               _x(((3, 4), (), {}), ((3, 4), (1,), {}), ((2, 3, 4), ((0, 2),), {}), ((0, 3), (0,), {})),
               domain=(-1.0, 1.0)),
        OpInfo("nansum", lambda x, dim=None, keepdim=False: _sum(np.where(np.isnan(x), 0, x) if x.dtype.kind == "f"
                                                                  else x, dim, keepdim), _nan_reduce_samples,
               **nan_safe),
        OpInfo("nanmean", _nanmean, _nan_reduce_samples, **nan_safe),
        OpInfo("trace", lambda x: np.asarray(np.trace(x)), _x(((3, 4), (), {}), ((4, 3), (), {}), ((2, 2), (), {}),
                                                             ((0, 3), (), {}))),
        OpInfo("diff", _diff, lambda make: [
            SampleInput((make((3, 4)),)), SampleInput((make((3, 4)), 2, 0)),
            SampleInput((make((5,)), 1, -1, make((2,)), make((1,)))),
            SampleInput((make((2, 3)),), dict(n=3, append=make((2, 1))))],
               domain=(-2.0, 2.0), tol={"bfloat16": dict(rtol=1.6e-2, atol=4e-2)}),
        OpInfo("addmv", lambda i, m, v, beta=1, alpha=1: _ints_out(lambda: beta * i + alpha * (m @ v))(),
               lambda make: [SampleInput((make((2,)), make((2, 3)), make((3,)))),
                             SampleInput((make(()), make((2, 3)), make((3,))), dict(beta=2, alpha=3)),
                             SampleInput((make((2,)), make((2, 0)), make((0,))), dict(beta=0))], domain=(-2.0, 2.0)),
        OpInfo("addr", lambda i, a, b, beta=1, alpha=1: _ints_out(lambda: beta * i + alpha * np.outer(a, b))(),
               lambda make: [SampleInput((make((2, 3)), make((2,)), make((3,)))),
                             SampleInput((make((3,)), make((2,)), make((3,))), dict(beta=2, alpha=-1))],
               domain=(-2.0, 2.0)),
        OpInfo("addbmm", lambda i, b1, b2, beta=1, alpha=1: _ints_out(
            lambda: beta * i + alpha * np.matmul(b1, b2).sum(0))(),
               lambda make: [SampleInput((make((3, 2)), make((2, 3, 4)), make((2, 4, 2)))),
                             SampleInput((make((2,)), make((3, 3, 2)), make((3, 2, 2))), dict(beta=2, alpha=3))],
               domain=(-2.0, 2.0), tol={"float16": dict(rtol=1e-3, atol=1e-2), "bfloat16": dict(rtol=1.6e-2, atol=1e-1)}),
        OpInfo("kron", np.kron, _pairs([((2, 3), (2, 2)), ((3,), (2, 2)), ((2, 1, 2), (3,))]), domain=(-2.0, 2.0)),
        OpInfo("tensordot", lambda a, b, dims=2: _ints_out(np.tensordot)(a, b, dims), lambda make: [
            SampleInput((make((2, 3, 4)), make((3, 4, 2)))), SampleInput((make((3, 4)), make((4, 2))), dict(dims=1)),
            SampleInput((make((2, 3)), make((3, 2))), dict(dims=([1, 0], [0, 1]))),
            SampleInput((make((2,)), make((3,))), dict(dims=0))], domain=(-2.0, 2.0)),
        OpInfo("cdist", lambda a, b, p=2.0: np.linalg.norm(a[..., :, None, :] - b[..., None, :, :], ord=p, axis=-1),
               lambda make: [SampleInput((make((3, 2)), make((4, 2)))),
                             SampleInput((make((2, 3, 2)), make((2, 2, 2))), dict(p=1.0)),
                             SampleInput((make((2, 3)), make((1, 2, 3))), dict(p=math.inf)),
                             SampleInput((make((3, 2)), make((2, 2))), dict(p=3.0))],
               domain=(-2.0, 2.0), tol={"float16": dict(rtol=2e-3, atol=2e-3)}),
        OpInfo("cross", lambda a, b, dim: np.cross(a, b, axis=dim), lambda make: [
            SampleInput((make((4, 3)), make((4, 3)), 1)), SampleInput((make((3, 2)), make((3, 1)), 0)),
            SampleInput((make((2, 3)), make((1, 3))), dict(dim=-1))], domain=(-2.0, 2.0)),
    ]


# ---- nn.functional losses, distances and bilinear: references and samples ----
# Targets that are signs (margin, hinge, cosine-embedding losses) are plain int64 arrays of
# +-1: the same tensor on every dtype, and no gradient taken w.r.t. them (the losses compare
# them with 1 and -1). Probabilities, counts and variances are data (D), differentiated.

def _np_reduce(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def _signs(make, shape):
    return make.rng.choice(np.array([-1, 1], np.int64), size=shape)


def _kl_div(x, t, reduction="mean", log_target=False):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0) - t * x
    return np.sum(loss) / x.shape[0] if reduction == "batchmean" else _np_reduce(loss, reduction)


def _smooth_l1(x, t, reduction="mean", beta=1.0):
    d = np.abs(x - t)
    return _np_reduce(d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _huber(x, t, reduction="mean", delta=1.0):
    d = np.abs(x - t)
    return _np_reduce(np.where(d <= delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _margin_ranking(x1, x2, t, margin=0, reduction="mean"):
    return _np_reduce(np.maximum(0.0, -t * (x1 - x2) + margin), reduction)


def _soft_margin(x, t, reduction="mean"):
    return _np_reduce(np.log1p(np.exp(-t * x)), reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = np.abs(x1 - x2 + eps)
    out = d.max(-1, keepdims=keepdim) if p == math.inf else (d ** p).sum(-1, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(out, np.float64)


def _triplet_margin(a, pos, neg, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    d_neg = _pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, _pairwise_distance(pos, neg, p, eps))
    return _np_reduce(np.maximum(0.0, _pairwise_distance(a, pos, p, eps) - d_neg + margin), reduction)


def _cosine_embedding(x1, x2, t, margin=0, reduction="mean"):
    d = t.ndim
    cos = (x1 * x2).sum(d) / np.sqrt(((x1 * x1).sum(d) + 1e-12) * ((x2 * x2).sum(d) + 1e-12))
    return _np_reduce(np.where(t == 1, 1 - cos, 0.0) + np.where(t == -1, np.maximum(0.0, cos - margin), 0.0),
                      reduction)


def _poisson_nll(x, t, log_input=True, full=False, eps=1e-8, reduction="mean"):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        s = np.where(t > 1, t, 2.0)
        loss = loss + np.where(t > 1, s * np.log(s) - s + 0.5 * np.log(2 * math.pi * s), 0.0)
    return _np_reduce(loss, reduction)


def _gaussian_nll(x, t, var, full=False, eps=1e-6, reduction="mean"):
    if var.shape != x.shape and var.shape == x.shape[:-1]:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - t) ** 2 / var) + (0.5 * math.log(2 * math.pi) if full else 0.0)
    return _np_reduce(loss, reduction)


def _multilabel_soft_margin(x, t, weight=None, reduction="mean"):
    loss = t * np.log1p(np.exp(-x)) + (1 - t) * np.log1p(np.exp(x))
    if weight is not None:
        loss = loss * weight
    return _np_reduce(loss.mean(-1), reduction)


def _hinge_embedding(x, t, margin=1.0, reduction="mean"):
    return _np_reduce(np.where(t != 1, np.maximum(0.0, margin - x), 0.0) + np.where(t != -1, x, 0.0), reduction)


def _bilinear(x1, x2, w, b=None):
    out = np.einsum("...i,oij,...j->...o", x1, w, x2)
    return out if b is None else out + b


def kl_div_samples(make):
    return [SampleInput((make((3, 4), -3.0, -0.1), make((3, 4), 0.05, 1.0)), dict(reduction="batchmean")),
            SampleInput((make((2, 3)), make((2, 3), -3.0, 0.0)), dict(reduction="sum", log_target=True)),
            SampleInput((make((4,), -3.0, -0.1), make((4,), 0.05, 1.0)), dict(reduction="none")),
            # a zero target adds 0 (values only: target * log(target) has no derivative at 0)
            SampleInput((make((2, 3), -3.0, -0.1), make((2, 3), 0.05, 1.0, zeros=True)), dict(reduction="sum"))]


def _regression_samples(name):
    def gen(make):
        return [SampleInput((make((3, 4)), make((3, 4))), {}),
                SampleInput((make((5,)), make((5,))), {"reduction": "none", name: 0.5}),
                SampleInput((make((2, 3)), make((2, 3))), {"reduction": "sum", name: 2.0}),
                SampleInput((make(()), make(())), {name: 1.5})]
    return gen


def margin_ranking_samples(make):
    return [SampleInput((make((4,)), make((4,)), _signs(make, (4,))), {}),
            SampleInput((make((2, 3)), make((2, 3)), _signs(make, (2, 3))), dict(margin=0.5, reduction="sum")),
            SampleInput((make((5,)), make((5,)), _signs(make, (5,))), dict(margin=0.2, reduction="none"))]


def soft_margin_samples(make):
    return [SampleInput((make((3, 4)), _signs(make, (3, 4))), {}),
            SampleInput((make((5,)), _signs(make, (5,))), dict(reduction="none")),
            SampleInput((make((2, 3)), _signs(make, (2, 3))), dict(reduction="sum"))]


def triplet_margin_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4)), make((3, 4))), {}),
            SampleInput((make((4,)), make((4,)), make((4,))), dict(margin=2.0, p=1, reduction="none")),
            SampleInput((make((2, 3)), make((2, 3)), make((2, 3))), dict(margin=3.0, swap=True, reduction="sum")),
            SampleInput((make((3, 2)), make((3, 2)), make((3, 2))), dict(p=3, eps=0.0, reduction="none"))]


def cosine_embedding_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4)), _signs(make, (3,))), {}),
            SampleInput((make((4,)), make((4,)), np.array(-1, np.int64)), dict(margin=-0.9)),
            SampleInput((make((4, 3)), make((4, 3)), _signs(make, (4,))), dict(margin=-0.5, reduction="none"))]


def poisson_nll_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4), 0.0, 5.0)), {}),
            SampleInput((make((5,), 0.2, 3.0), make((5,), 0.0, 5.0)), dict(log_input=False, reduction="none")),
            SampleInput((make((2, 3)), make((2, 3), 0.2, 5.0)), dict(full=True, reduction="sum"))]


def gaussian_nll_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4)), make((3, 4), 0.5, 2.0)), {}),
            SampleInput((make((3, 4)), make((3, 4)), make((3,), 0.5, 2.0)), dict(full=True, reduction="sum")),
            SampleInput((make((2, 3)), make((2, 3)), make((2, 1), 0.5, 2.0)), dict(reduction="none"))]


def multilabel_soft_margin_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4), 0.0, 1.0)), {}),
            SampleInput((make((2, 5)), make((2, 5), 0.0, 1.0), make((5,), 0.5, 2.0)), dict(reduction="none")),
            SampleInput((make((4,)), make((4,), 0.0, 1.0)), dict(reduction="sum"))]


def hinge_embedding_samples(make):
    return [SampleInput((make((3, 4), 0.0, 2.0), _signs(make, (3, 4))), {}),
            SampleInput((make((5,), 0.0, 2.0), _signs(make, (5,))), dict(margin=0.5, reduction="none")),
            SampleInput((make((2, 3), 0.0, 2.0), _signs(make, (2, 3))), dict(reduction="sum"))]


def pairwise_distance_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4))), {}),
            SampleInput((make((5,)), make((5,))), dict(p=1.0, keepdim=True)),
            SampleInput((make((2, 3)), make((3,))), dict(p=3.0)),
            SampleInput((make((2, 3)), make((2, 3))), dict(p=math.inf, eps=0.0))]


def bilinear_samples(make):
    return [SampleInput((make((3, 2)), make((3, 4)), make((5, 2, 4)), make((5,)))),
            SampleInput((make((2, 3, 2)), make((2, 3, 4)), make((1, 2, 4)))),
            SampleInput((make((2,)), make((3,)), make((2, 2, 3)), make((2,))))]



# ---- more shape, join, indexing and creation compositions (ops/shape.py, join.py, indexing.py, creation.py) ----

def _diag_embed(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1]
    m = n + abs(offset)
    out = np.zeros(x.shape[:-1] + (m, m), dtype=x.dtype)
    for i in range(n):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        out[..., r, c] = x[..., i]
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _take_along_dim(x, idx, dim=None):
    if dim is None:
        return x.reshape(-1)[idx.reshape(-1)]
    sizes = list(x.shape)
    sizes[dim] = idx.shape[dim]
    shape = list(np.broadcast_shapes(tuple(sizes), idx.shape))
    idx = np.broadcast_to(idx, shape)
    shape[dim] = x.shape[dim]
    return np.take_along_axis(np.broadcast_to(x, shape), idx, dim)


def _block_diag(*ts):
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype=mats[0].dtype)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def _atleast(fn):
    def ref(*ts):
        out = fn(*ts)
        return tuple(out) if isinstance(out, list) else out
    return ref


def _tensors(*shapes, **kwargs):
    """One sample: data tensors of ``shapes`` as separate arguments (f(a, b, c))."""
    return lambda make: SampleInput(tuple(make(s) for s in shapes), kwargs)


def _samples(*makers):
    return lambda make: [m(make) for m in makers]


def take_along_dim_samples(make):
    r = make.rng
    return [SampleInput((make((3, 4)), r.integers(0, 4, (3, 2)), 1)),
            SampleInput((make((4, 1)), r.integers(0, 4, (3, 5)), 0)),
            SampleInput((make((2, 3)), r.integers(0, 6, (4,))))]


def _shape_ops_more() -> list[OpInfo]:
    one = _x(((), (), {}), ((3,), (), {}), ((2, 3), (), {}), ((2, 1, 3), (), {}))
    atleast_many = _tensors((), (3,), (2, 3))
    return [
        OpInfo("tile", lambda x, dims: np.tile(x, dims), _x(((3,), ((2,),), {}), ((2, 3), ((2, 1, 2),), {}),
                                                            ((2, 3), ((2,),), {}))),
        OpInfo("rot90", lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims).copy(),
               _x(((3, 4), (), {}), ((3, 4), (2,), {}), ((2, 3, 4), (3, (1, 2)), {}), ((3, 4), (-1, (1, 0)), {}))),
        OpInfo("broadcast_to", lambda x, size: np.broadcast_to(x, size).copy(),
               _x(((3, 1), ((2, 3, 4),), {}), ((3,), ((2, 3),), {}), ((), ((2,),), {}))),
        *[OpInfo(name, _atleast(fn), lambda make, one=one, many=atleast_many: [*one(make), many(make)])
          for name, fn in (("atleast_1d", np.atleast_1d), ("atleast_2d", np.atleast_2d),
                           ("atleast_3d", np.atleast_3d))],
        OpInfo("diag", lambda x, diagonal=0: np.diag(x, diagonal).copy(),
               _x(((3,), (), {}), ((3,), (1,), {}), ((3, 4), (), {}), ((3, 4), (-1,), {}))),
        OpInfo("diag_embed", _diag_embed, _x(((3,), (), {}), ((2, 3), (1,), {}), ((2, 3), (-1, 0, 2), {}))),
        OpInfo("diagonal", lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2).copy(),
               _x(((3, 4), (), {}), ((3, 4), (1,), {}), ((2, 3, 4), (-1, 2, 0), {}), ((3, 4), (5,), {}))),
        OpInfo("tensor_split", lambda x, ios, dim=0: tuple(np.array_split(x, ios, axis=dim)),
               _x(((7,), (3,), {}), ((3, 4), ([1, 3], 1), {}), ((4, 3), ([3, 1],), {}))),
        OpInfo("hsplit", lambda x, ios: tuple(np.hsplit(x, ios)), _x(((3, 4), (2,), {}), ((6,), ([2, 4],), {}))),
        OpInfo("vsplit", lambda x, ios: tuple(np.vsplit(x, ios)), _x(((4, 3), (2,), {}), ((3, 2), ([1],), {}))),
        OpInfo("dsplit", lambda x, ios: tuple(np.dsplit(x, ios)), _x(((2, 2, 4), (2,), {}), ((1, 2, 3), ([1],), {}))),
        OpInfo("broadcast_tensors", lambda *ts: tuple(np.broadcast_arrays(*ts)),
               _samples(_tensors((3, 1), (4,)), _tensors((2, 1, 3), (), (4, 1)))),
        OpInfo("meshgrid", lambda *ts, indexing: tuple(np.meshgrid(*ts, indexing=indexing)),
               _samples(_tensors((2,), (3,), indexing="ij"), _tensors((2,), (3,), indexing="xy"),
                        _tensors((2,), (), (3,), indexing="xy"))),
        OpInfo("cartesian_prod", lambda *ts: np.stack([g.ravel() for g in np.meshgrid(*ts, indexing="ij")], 1),
               _samples(_tensors((2,), (3,)), _tensors((2,), (1,), (2,)))),
        OpInfo("block_diag", _block_diag, _samples(_tensors((2, 3), (1,), ()), _tensors((2, 2), (0, 2), (3,)))),
        OpInfo("take_along_dim", _take_along_dim, take_along_dim_samples),
        OpInfo("repeat_interleave", lambda x, r, dim=None, output_size=None: np.repeat(x, r, axis=dim),
               lambda make: [SampleInput((make((3, 4)), 2)), SampleInput((make((3, 4)), np.array([1, 0, 2]), 0)),
                             SampleInput((make((3, 4)), np.array([2]), 1), dict(output_size=8)),
                             SampleInput((make(()), 3))]),
        OpInfo("vander", lambda x, N=None, increasing=False: np.vander(x.astype(np.int64) if x.dtype == bool else x,
                                                                       N, increasing),
               _x(((3,), (), {}), ((4,), (3,), {}), ((3,), (), dict(N=4, increasing=True))), domain=(-2.0, 2.0)),
    ]

# ---- resampling, pooling, pixel shuffle, instance/local response norm, grid_sample, embedding_bag
# (nn/_sampling_functional.py, _pooling_functional.py, _shuffle_functional.py, _instancenorm_functional.py,
# _embedding_bag_functional.py): references written from PyTorch's documented rules ----

def _interp_matrix(mode, n, m, align_corners, scale):
    """(m, n) matrix of one dim's resampling, element by element (PyTorch's source-index rules;
    nearest's index arithmetic is float32 in PyTorch for every dtype)."""
    mat = np.zeros((m, n))
    f32 = np.float32
    for j in range(m):
        if mode in ("nearest", "nearest-exact"):
            s = f32(1.0 / scale) if scale else f32(n) / f32(m)
            if mode == "nearest":
                src = j if m == n else (j // 2 if m == 2 * n else int(np.floor(f32(j) * s)))
            else:
                src = int(np.floor(f32((j + 0.5) * float(s))))
            mat[j, min(src, n - 1)] = 1.0
            continue
        if align_corners:
            step = (n - 1) / (m - 1) if m > 1 else 0.0
            x = step * j
        else:
            step = 1.0 / scale if scale else n / m
            x = step * (j + 0.5) - 0.5
        if mode == "linear":
            if m == n:
                mat[j, j] = 1.0
                continue
            x = max(x, 0.0)
            i0 = int(x)
            lam = x - i0
            mat[j, i0] += 1 - lam
            mat[j, min(i0 + 1, n - 1)] += lam
        else:  # cubic, A = -0.75
            i0 = math.floor(x)
            t = x - i0
            a = -0.75
            for k, d in enumerate((t + 1, t, 1 - t, 2 - t)):
                d = abs(d)
                w = ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
                mat[j, min(max(i0 - 1 + k, 0), n - 1)] += w
    return mat


def _area_matrix(n, m):
    mat = np.zeros((m, n))
    for i in range(m):
        lo, hi = (i * n) // m, -((-(i + 1) * n) // m)
        mat[i, lo:hi] = 1.0 / (hi - lo)
    return mat


def _apply_dims(x, mats):
    """Applies one (m, n) matrix to each of the last len(mats) dims of x."""
    k = len(mats)
    for i, mat in enumerate(mats):
        d = x.ndim - k + i
        x = np.moveaxis(np.tensordot(mat, np.moveaxis(x, d, 0), axes=1), 0, d)
    return x


def _interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
    k = x.ndim - 2
    ins = x.shape[2:]
    scales = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * k
    if size is not None:
        outs = list(size) if isinstance(size, (tuple, list)) else [size] * k
        scales = [None] * k
    else:
        outs = [math.floor(n * s) for n, s in zip(ins, scales)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * k
    if mode == "area":
        return _apply_dims(x, [_area_matrix(n, m) for n, m in zip(ins, outs)])
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    return _apply_dims(x, [_interp_matrix(kind, n, m, bool(align_corners), s) for n, m, s in zip(ins, outs, scales)])


def interpolate_samples(make):
    return [SampleInput((make((1, 2, 4)),), dict(scale_factor=1.5, mode="linear")),
            SampleInput((make((2, 2, 3, 4)),), dict(size=(5, 3), mode="bilinear")),
            SampleInput((make((1, 1, 4, 3)),), dict(scale_factor=1.5, mode="bicubic", align_corners=True)),
            SampleInput((make((1, 2, 5, 6)),), dict(size=(3, 4), mode="area")),
            SampleInput((make((1, 1, 2, 3, 2)),), dict(size=(3, 2, 3), mode="trilinear")),
            SampleInput((make((1, 2, 4)),), dict(size=6, mode="linear", align_corners=True)),
            SampleInput((make((1, 1, 5, 4)),), dict(scale_factor=(0.6, 1.3), mode="bicubic")),
            SampleInput((make((2, 3, 5)),), dict(size=7)),
            SampleInput((make((1, 2, 5, 4)),), dict(scale_factor=(0.6, 1.25), mode="nearest-exact")),
            SampleInput((make((1, 2, 3, 3)),), dict(scale_factor=2)),
            SampleInput((make((1, 2, 7)),), dict(scale_factor=0.7, mode="linear", recompute_scale_factor=True))]


def _adaptive_avg(k):
    def ref(x, output_size):
        outs = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * k
        outs = [n if o is None else o for n, o in zip(x.shape[x.ndim - k:], outs)]
        return _apply_dims(x, [_area_matrix(n, m) for n, m in zip(x.shape[x.ndim - k:], outs)])
    return ref


def _adaptive_max(k):
    def ref(x, output_size, return_indices=False):
        outs = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * k
        spatial = x.shape[x.ndim - k:]
        outs = [n if o is None else o for n, o in zip(spatial, outs)]
        lead = x.shape[:x.ndim - k]
        vals, idxs = np.zeros(lead + tuple(outs)), np.zeros(lead + tuple(outs), np.int64)
        for pos in np.ndindex(*outs):
            sl = tuple(slice((i * n) // m, -((-(i + 1) * n) // m)) for i, n, m in zip(pos, spatial, outs))
            win = x[(...,) + sl]
            flat = win.reshape(lead + (-1,))
            arg = flat.argmax(-1)
            vals[(...,) + pos] = flat.max(-1)
            local = np.unravel_index(arg, win.shape[len(lead):])
            idxs[(...,) + pos] = np.ravel_multi_index(tuple(l + s.start for l, s in zip(local, sl)), spatial)
        return (vals, idxs) if return_indices else vals
    return ref


def _check_pool_indices(k):
    """(values, flat indices): the values as usual; the indices must point at the values."""
    def check(got, expected, sample_np, assert_same):
        if not isinstance(expected, tuple):
            return assert_same(got, expected)
        assert_same(got[0], expected[0])
        x = sample_np[0][0]
        idx = np.asarray(got[1].cpu().numpy())
        assert idx.dtype == np.int64 and idx.shape == expected[1].shape
        lead = x.shape[:x.ndim - k]
        flat = x.reshape(lead + (-1,))
        picked = np.take_along_axis(flat, idx.reshape(lead + (-1,)), -1).reshape(idx.shape)
        np.testing.assert_array_equal(picked, expected[0], err_msg="the indices do not point at the maxima")
    return check


def _pool1d_windows(n, kernel, stride, padding, dilation, ceil_mode):
    out = (n + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= n + padding:
        out -= 1
    return [[o * stride - padding + d * dilation for d in range(kernel)] for o in range(out)]


def _max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    n = x.shape[-1]
    wins = _pool1d_windows(n, kernel_size, stride or kernel_size, padding, dilation, ceil_mode)
    vals, idxs = [], []
    for w in wins:
        w = [i for i in w if 0 <= i < n]
        sub = x[..., w]
        vals.append(sub.max(-1))
        idxs.append(np.asarray(w)[sub.argmax(-1)])
    vals, idxs = np.stack(vals, -1), np.stack(idxs, -1).astype(np.int64)
    return (vals, idxs) if return_indices else vals


def _avg_pool1d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    n = x.shape[-1]
    wins = _pool1d_windows(n, kernel_size, stride or kernel_size, padding, 1, ceil_mode)
    out = []
    for w in wins:
        inside = [i for i in w if 0 <= i < n]
        count = min(w[-1], n + padding - 1) - w[0] + 1 if count_include_pad else len(inside)
        out.append(x[..., inside].sum(-1) / count)
    return np.stack(out, -1)


def _max_unpool(k):
    def ref(x, indices, kernel_size, stride=None, padding=0, output_size=None):
        ks = kernel_size if isinstance(kernel_size, tuple) else (kernel_size,) * k
        st = ks if stride is None else (stride if isinstance(stride, tuple) else (stride,) * k)
        pd = padding if isinstance(padding, tuple) else (padding,) * k
        ins = x.shape[x.ndim - k:]
        outs = tuple(output_size[-k:]) if output_size is not None else tuple(
            (n - 1) * s - 2 * p + kk for n, s, p, kk in zip(ins, st, pd, ks))
        lead = x.shape[:x.ndim - k]
        out = np.zeros(lead + (math.prod(outs),))
        np.put_along_axis(out, indices.reshape(lead + (-1,)), x.reshape(lead + (-1,)), -1)
        return out.reshape(lead + outs)
    return ref


def _unpool_indices(rng, lead, ins, kernel, stride):
    """Indices as max pooling returns them: one position inside each (non-overlapping) window."""
    outs = [(n - 1) * s + kk for n, s, kk in zip(ins, stride, kernel)]
    idx = np.zeros(lead + tuple(ins), np.int64)
    for pos in np.ndindex(*lead, *ins):
        sp = pos[len(lead):]
        coords = [p * s + rng.integers(0, kk) for p, s, kk in zip(sp, stride, kernel)]
        idx[pos] = np.ravel_multi_index(coords, outs)
    return idx


def max_unpool1d_samples(make):
    rng = np.random.default_rng(1)
    return [SampleInput((make((2, 3, 4)), _unpool_indices(rng, (2, 3), (4,), (2,), (2,)), 2)),
            SampleInput((make((1, 2, 3)), _unpool_indices(rng, (1, 2), (3,), (3,), (3,)), 3), dict(output_size=[10])),
            SampleInput((make((2, 5)), _unpool_indices(rng, (2,), (5,), (2,), (3,)), 2), dict(stride=3))]


def max_unpool2d_samples(make):
    rng = np.random.default_rng(2)
    return [SampleInput((make((2, 2, 2, 3)), _unpool_indices(rng, (2, 2), (2, 3), (2, 2), (2, 2)), 2)),
            SampleInput((make((1, 1, 3, 2)), _unpool_indices(rng, (1, 1), (3, 2), (2, 3), (2, 3)), (2, 3)),
                        dict(output_size=(1, 1, 7, 6))),
            SampleInput((make((2, 2, 2)), _unpool_indices(rng, (2,), (2, 2), (3, 3), (3, 3)), 3))]


def _pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    k = len(lead)
    return y.transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2).reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    k = len(lead)
    return y.transpose(*range(k), k, k + 2, k + 4, k + 1, k + 3).reshape(tuple(lead) + (c * r * r, h // r, w // r))


def _sampling_ops() -> list[OpInfo]:
    loose = {"float32": dict(rtol=1e-5, atol=1e-5), "float16": dict(rtol=2e-3, atol=2e-3),
             "bfloat16": dict(rtol=2e-2, atol=2e-2)}
    return [
        OpInfo("interpolate", _interpolate, interpolate_samples, namespace=FUNCTIONAL, domain=(-2.0, 2.0),
               tol=loose, grad_samples=7),
        OpInfo("adaptive_avg_pool1d", _adaptive_avg(1),
               _x(((2, 3, 7), (3,), {}), ((1, 2, 5), (5,), {}), ((3, 6), (4,), {}), ((2, 2, 4), (1,), {})),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), tol=loose),
        OpInfo("adaptive_avg_pool2d", _adaptive_avg(2),
               _x(((2, 3, 5, 7), ((3, 4),), {}), ((1, 2, 4, 6), (2,), {}), ((2, 5, 4), ((None, 3),), {}),
                  ((1, 1, 3, 3), (1,), {})), namespace=FUNCTIONAL, domain=(-2.0, 2.0), tol=loose),
        OpInfo("adaptive_max_pool1d", _adaptive_max(1),
               _x(((2, 3, 7), (3,), {}), ((1, 2, 5), (4,), dict(return_indices=True)), ((3, 6), (4, True), {})),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), check=_check_pool_indices(1)),
        OpInfo("adaptive_max_pool2d", _adaptive_max(2),
               _x(((2, 3, 5, 7), ((3, 4),), {}), ((1, 2, 4, 6), (3, True), {}),
                  ((2, 5, 4), ((None, 3),), dict(return_indices=True))),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), check=_check_pool_indices(2)),
        OpInfo("adaptive_avg_pool3d", _adaptive_avg(3),
               _x(((1, 2, 3, 5, 4), ((2, 3, 2),), {}), ((2, 3, 4, 2), (1,), {})),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), tol=loose),
        OpInfo("adaptive_max_pool3d", _adaptive_max(3),
               _x(((1, 2, 3, 5, 4), ((2, 3, None),), dict(return_indices=True)), ((2, 3, 4, 2), (2,), {})),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), check=_check_pool_indices(3)),
        OpInfo("max_pool1d", _max_pool1d,
               _x(((2, 3, 7), (3,), {}), ((1, 2, 8), (3, 2, 1), dict(return_indices=True)),
                  ((3, 9), (2,), dict(dilation=2, ceil_mode=True))),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), check=_check_pool_indices(1)),
        OpInfo("avg_pool1d", _avg_pool1d,
               _x(((2, 3, 7), (3,), {}), ((1, 2, 8), (3, 2, 1), {}), ((3, 9), (2,), dict(ceil_mode=True))),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), tol=loose),
        OpInfo("max_unpool1d", _max_unpool(1), max_unpool1d_samples, namespace=FUNCTIONAL, domain=(-2.0, 2.0)),
        OpInfo("max_unpool2d", _max_unpool(2), max_unpool2d_samples, namespace=FUNCTIONAL, domain=(-2.0, 2.0)),
        OpInfo("pixel_shuffle", _pixel_shuffle, _x(((2, 8, 2, 3), (2,), {}), ((9, 1, 2), (3,), {}),
                                                    ((1, 2, 4, 2, 2), (2,), {})), namespace=FUNCTIONAL),
        OpInfo("pixel_unshuffle", _pixel_unshuffle, _x(((2, 2, 4, 6), (2,), {}), ((1, 3, 3), (3,), {}),
                                                        ((1, 2, 1, 4, 2), (2,), {})), namespace=FUNCTIONAL),
    ]


def _instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                   momentum=0.1, eps=1e-5):
    cshape = (1, -1) + (1,) * (x.ndim - 2)
    if use_input_stats:
        dims = tuple(range(2, x.ndim))
        mean, var = x.mean(dims, keepdims=True), x.var(dims, keepdims=True)
    else:
        mean, var = running_mean.reshape(cshape), running_var.reshape(cshape)
    out = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(cshape)
    return out + bias.reshape(cshape) if bias is not None else out


def instance_norm_samples(make):
    return [SampleInput((make((2, 3, 5)),)),
            SampleInput((make((1, 2, 3, 4)), None, None, make((2,)), make((2,))), dict(eps=1e-3)),
            SampleInput((make((2, 2, 2, 3)), make((2,)), make((2,), 0.5, 2.0), make((2,)), None),
                        dict(use_input_stats=False))]


def _local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    sq = x * x
    div = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(ch - size // 2, 0), min(ch + (size - 1) // 2, c - 1)
        div[:, ch] = sq[:, lo:hi + 1].sum(1)
    return x / (k + alpha * div / size) ** beta


def _norm_ops() -> list[OpInfo]:
    loose = {"float16": dict(rtol=5e-3, atol=5e-3), "bfloat16": dict(rtol=4e-2, atol=4e-2)}
    return [
        OpInfo("instance_norm", _instance_norm, instance_norm_samples, namespace=FUNCTIONAL, domain=(-2.0, 2.0),
               tol={"float32": dict(rtol=1e-4, atol=1e-5), **loose}),
        OpInfo("local_response_norm", _local_response_norm,
               _x(((2, 5, 3), (3,), {}), ((1, 4, 2, 3), (2,), dict(alpha=0.5, beta=0.6, k=2.0)),
                  ((1, 3, 2, 1, 2), (4,), dict(alpha=0.3))), namespace=FUNCTIONAL, domain=(-2.0, 2.0), tol=loose),
    ]


def _grid_coord(v, size, padding_mode, align_corners):
    x = (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2
    if padding_mode == "reflection":
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            x = 0.0
        else:
            d = abs(x - lo)
            flips, extra = divmod(d, span)
            x = lo + extra if int(flips) % 2 == 0 else hi - extra
    if padding_mode != "zeros":
        x = min(max(x, 0.0), size - 1.0)
    return x


def _grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])

    def at(b, yy, xx):
        return x[b, :, yy, xx] if 0 <= xx < w and 0 <= yy < h else np.zeros(c)

    for b, i, j in np.ndindex(n, *grid.shape[1:3]):
        px = _grid_coord(grid[b, i, j, 0], w, padding_mode, align_corners)
        py = _grid_coord(grid[b, i, j, 1], h, padding_mode, align_corners)
        if mode == "nearest":
            out[b, :, i, j] = at(b, int(np.round(py)), int(np.round(px)))
            continue
        x0, y0 = math.floor(px), math.floor(py)
        fx, fy = px - x0, py - y0
        out[b, :, i, j] = ((1 - fx) * (1 - fy) * at(b, y0, x0) + fx * (1 - fy) * at(b, y0, x0 + 1)
                           + (1 - fx) * fy * at(b, y0 + 1, x0) + fx * fy * at(b, y0 + 1, x0 + 1))
    return out


def grid_sample_samples(make):
    def g(shape):
        return make(shape, -1.2, 1.2)
    return [SampleInput((make((2, 2, 3, 4)), g((2, 2, 3, 2))), dict(align_corners=False)),
            SampleInput((make((1, 1, 4, 3)), g((1, 3, 2, 2))), dict(padding_mode="border", align_corners=True)),
            SampleInput((make((1, 2, 3, 3)), g((1, 2, 2, 2))), dict(padding_mode="reflection", align_corners=False)),
            SampleInput((make((1, 1, 3, 4)), g((1, 2, 3, 2))), dict(padding_mode="reflection", align_corners=True)),
            SampleInput((make((1, 1, 3, 4)), g((1, 2, 3, 2))), dict(mode="nearest", align_corners=True)),
            SampleInput((make((1, 2, 3, 3)), g((1, 2, 2, 2))),
                        dict(mode="nearest", padding_mode="reflection", align_corners=False))]


def _affine_grid(theta, size, align_corners=False):
    spatial = size[2:]

    def lin(s):
        if s <= 1:
            return np.zeros(s)
        r = np.linspace(-1, 1, s)
        return r if align_corners else r * (s - 1) / s
    coords = list(np.meshgrid(*[lin(s) for s in spatial], indexing="ij"))  # z, y, x order of spatial
    base = np.stack(coords[::-1] + [np.ones(tuple(spatial))], -1)  # (..., x, y[, z], 1)
    return np.einsum("...k,nik->n...i", base, theta)


def _grid_ops() -> list[OpInfo]:
    loose = {"float16": dict(rtol=5e-3, atol=5e-3), "bfloat16": dict(rtol=4e-2, atol=5e-2)}
    return [
        OpInfo("grid_sample", _grid_sample, grid_sample_samples, namespace=FUNCTIONAL, domain=(-2.0, 2.0),
               tol=loose, grad_samples=6),
        OpInfo("affine_grid", _affine_grid,
               _x(((2, 2, 3), ([2, 3, 4, 5],), dict(align_corners=False)),
                  ((1, 2, 3), ((1, 1, 3, 2),), dict(align_corners=True)),
                  ((1, 3, 4), ((1, 2, 2, 3, 2),), dict(align_corners=False))),
               namespace=FUNCTIONAL, domain=(-2.0, 2.0), tol=loose),
    ]


def _embedding_bag(idx, w, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                   sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if idx.ndim == 2:
        bags = [list(range(i * idx.shape[1], (i + 1) * idx.shape[1])) for i in range(idx.shape[0])]
    else:
        ends = list(offsets[1:]) + ([] if include_last_offset else [len(idx)])
        bags = [list(range(a, b)) for a, b in zip(offsets, ends)]
    flat = idx.reshape(-1)
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    out = np.zeros((len(bags), w.shape[1]))
    for b, positions in enumerate(bags):
        positions = [p for p in positions if padding_idx is None or flat[p] != padding_idx % w.shape[0]]
        if not positions:
            continue
        rows = w[flat[positions]] * (psw[positions][:, None] if psw is not None else 1.0)
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0) if len(rows) else 0}[mode]
    return out


def embedding_bag_samples(make):
    idx = np.array([0, 1, 2, 5, 4, 4, 1])
    off = np.array([0, 2, 2, 5])
    return [SampleInput((idx, make((6, 3)), off)),
            SampleInput((idx, make((6, 3)), off), dict(mode="sum")),
            SampleInput((idx, make((6, 3)), off), dict(mode="max")),
            SampleInput((np.array([[0, 1, 2], [5, 4, 4]]), make((6, 2))), dict(mode="sum",
                                                                             per_sample_weights=make((2, 3)))),
            SampleInput((idx, make((6, 3)), np.array([0, 3, 7])), dict(include_last_offset=True, padding_idx=4)),
            SampleInput((np.array([[3]]), make((4, 3))), dict(mode="max", padding_idx=-1)),
            SampleInput((idx, make((6, 2)), np.array([0, 3])), dict(mode="sum", per_sample_weights=make((7,)),
                                                                     padding_idx=1))]


def _embedding_bag_ops() -> list[OpInfo]:
    return [OpInfo("embedding_bag", _embedding_bag, embedding_bag_samples, namespace=FUNCTIONAL, domain=(-2.0, 2.0),
                   tol={"float16": dict(rtol=3e-3, atol=3e-3), "bfloat16": dict(rtol=3e-2, atol=3e-2)},
                   grad_samples=7)]


# ------------------------------------------------------------ the database ----

@functools.partial(np.vectorize, otypes=[np.float64])
def _erfinv(y):
    """Bisection on math.erf: a reference that shares nothing with the kernel's Newton steps."""
    if not -1 < y < 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


@functools.partial(np.vectorize, otypes=[np.float64])
def _lgamma(x):
    return math.inf if x <= 0 and x == int(x) else math.lgamma(x)


@functools.partial(np.vectorize, otypes=[np.float64])
def _digamma(x):
    """The derivative of math.lgamma by central differences, Richardson-extrapolated."""
    if x <= 0 and x == int(x):  # the poles: -inf at 0 (as the kernel's +0), NaN below
        return -math.inf if x == 0 else math.nan
    def d(h):
        return (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)
    h = min(1e-3, x / 8)
    return (4 * d(h / 2) - d(h)) / 3


def _e_unary(name, ref, domain=(-10.0, 10.0), **kw):
    return OpInfo(name, ref, unary_samples, domain=domain, **kw)


F32_LOOSE = {"float32": dict(rtol=2e-5, atol=2e-6)}


# ---- reductions, order statistics, sets and bins (prod, cummax, median, quantile, unique,
# bincount, histc, searchsorted...) ----

def _prod(x, dim=None, keepdim=False, dtype=None):
    out = np.asarray(np.prod(x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64),
                             axis=None if dim is None or x.ndim == 0 else dim, keepdims=keepdim and x.ndim > 0))
    if keepdim and dim is None and x.ndim:
        out = out.reshape((1,) * x.ndim)
    return out


# one line with a single zero, one with two, one without (gradients at zeros, as PyTorch's)
_ZEROS = np.array([[1.5, 0.0, -0.75, 1.25], [0.0, 0.5, 0.0, 2.0], [0.5, 1.25, -1.5, 0.75]])


def prod_samples(make):
    return [SampleInput((D(_ZEROS), 1)), SampleInput((D(_ZEROS),)), SampleInput((D(_ZEROS), 0), dict(keepdim=True)),
            SampleInput((make((2, 3, 4)), -1)), SampleInput((make((5,)),)), SampleInput((make(()),)),
            SampleInput((make(()), 0)), SampleInput((make((0, 3)),)), SampleInput((make((0, 3)), 1)),
            SampleInput((make((0, 3)), 0))]


def _cum_extreme(is_max):
    def ref(x, dim):
        line = np.moveaxis(x.reshape(1) if x.ndim == 0 else x, dim, -1)
        values, indices = np.empty_like(line), np.zeros(line.shape, np.int64)
        for pos in np.ndindex(line.shape[:-1]):
            best, at = None, 0
            for r, v in enumerate(line[pos]):
                if r == 0 or (v >= best if is_max else v <= best):  # ties move to the later place
                    best, at = v, r
                values[pos + (r,)], indices[pos + (r,)] = best, at
        return (np.moveaxis(values, -1, dim).reshape(x.shape), np.moveaxis(indices, -1, dim).reshape(x.shape))
    return ref


def _lower_median(x, dim=None, keepdim=False):
    if dim is None:
        return np.asarray(np.sort(x.reshape(-1))[(x.size - 1) // 2])
    s = np.sort(x.reshape(1) if x.ndim == 0 else x, axis=dim)
    v = np.take(s, [(s.shape[dim] - 1) // 2], axis=dim)
    return (v.reshape(x.shape) if x.ndim == 0 else v if keepdim else np.squeeze(v, dim)), "median"


def _kthvalue(x, k, dim=-1, keepdim=False):
    s = np.sort(x.reshape(1) if x.ndim == 0 else x, axis=dim)
    v = np.take(s, [k - 1], axis=dim)
    return (v.reshape(x.shape) if x.ndim == 0 else v if keepdim else np.squeeze(v, dim)), "kthvalue"


def _mode(x, dim=-1, keepdim=False):
    def line_mode(line):
        vals, counts = np.unique(line, return_counts=True)
        return vals[np.argmax(counts)]  # the smallest of the most frequent
    x1 = x.reshape(1) if x.ndim == 0 else x
    v = np.expand_dims(np.apply_along_axis(line_mode, dim, x1), dim)
    return (v.reshape(x.shape) if x.ndim == 0 else v if keepdim else np.squeeze(v, dim)), "mode"


def order_samples(make):
    return [SampleInput((make((3, 4)), 1)), SampleInput((make((2, 3, 4)), 0), dict(keepdim=True)),
            SampleInput((make((5,)), -1)), SampleInput((make(()), 0)), SampleInput((make((4, 1)), 1))]


def median_samples(make):
    return [SampleInput((make((3, 4)),)), SampleInput((make((2, 3)),))] + order_samples(make) + [
        SampleInput((make((5,)),)), SampleInput((make(()),))]


def nanmedian_samples(make):
    x = np.array([[1.5, np.nan, -0.5, 2.0], [0.25, 3.0, np.nan, np.nan]])
    nans = [SampleInput((D(x), 1)), SampleInput((D(x),))] if make.kind == "f" else []
    return median_samples(make) + nans


def _nanmedian(x, dim=None, keepdim=False):
    if dim is None:
        flat = x.reshape(-1)
        flat = flat[~np.isnan(flat)] if flat.dtype.kind == "f" else flat
        return np.asarray(np.sort(flat)[(flat.size - 1) // 2] if flat.size else np.nan)
    x1 = x.reshape(1) if x.ndim == 0 else x

    def line(v):
        v = np.sort(v[~np.isnan(v)] if v.dtype.kind == "f" else v)
        return v[(v.size - 1) // 2]
    v = np.expand_dims(np.apply_along_axis(line, dim, x1), dim)
    return (v.reshape(x.shape) if x.ndim == 0 else v if keepdim else np.squeeze(v, dim)), "nanmedian"


def kthvalue_samples(make):
    return [SampleInput((make((3, 4)), 2)), SampleInput((make((3, 4)), 1, 0), dict(keepdim=True)),
            SampleInput((make((2, 3, 4)), 4, -1)), SampleInput((make((5,)), 5)), SampleInput((make(()), 1))]


def _quantile_ref(nan):
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        fn = np.nanquantile if nan else np.quantile
        return np.asarray(fn(x, q, axis=dim, keepdims=keepdim, method=interpolation))
    return ref


def quantile_samples(make):
    q = make((3,), 0.0, 1.0)
    return [SampleInput((make((3, 4)), 0.25, 1)), SampleInput((make((5,)), 0.5)),
            SampleInput((make((2, 3, 4)), 0.7, 0), dict(keepdim=True)),
            SampleInput((make((3, 4)), q, -1), dict(keepdim=True)), SampleInput((make((3, 4)), q)),
            SampleInput((make((3, 4)), q), dict(keepdim=True)), SampleInput((make(()), 0.3)),
            *[SampleInput((make((3, 5)), 0.4, 1), dict(interpolation=m))
              for m in ("lower", "higher", "midpoint", "nearest")],
            SampleInput((make((4,)), 0.5), dict(interpolation="nearest")),  # rank 1.5: half to even
            SampleInput((D(np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 0.5, -1.0, 2.5]])), 0.3, 1))]


def _unique_rows(x, dim):
    """np.unique's (values, inverse, counts) along dim, the inverse 1-D."""
    vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    return vals, inv.reshape(-1).astype(np.int64), counts.astype(np.int64)


def _unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    if dim is None:
        vals, inv, counts = _unique_rows(x.reshape(-1), None)
        inv = inv.reshape(x.shape)
    else:
        vals, inv, counts = _unique_rows(x, dim)
    out = (vals,) + ((inv,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def _unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    rows = np.moveaxis(x.reshape(-1) if dim is None else x, 0 if dim is None else dim, 0)
    n = rows.shape[0]
    flat = rows.reshape(n, int(np.prod(rows.shape[1:])))
    starts = np.ones(n, bool)
    starts[1:] = np.any(flat[1:] != flat[:-1], axis=1) if n else starts[1:]
    run = np.cumsum(starts) - 1
    vals = np.moveaxis(rows[starts], 0, 0 if dim is None else dim)
    inv = run.astype(np.int64).reshape(x.shape if dim is None else (n,))
    counts = np.bincount(run, minlength=int(starts.sum())).astype(np.int64) if n else np.zeros(0, np.int64)
    out = (vals,) + ((inv,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def unique_samples(consecutive):
    def gen(make):
        out = [SampleInput((make((3, 4)),)), SampleInput((make((7,)),), dict(return_inverse=True)),
               SampleInput((make((2, 5)),), dict(return_counts=True, return_inverse=True)),
               SampleInput((make((4, 3)),), dict(dim=0, return_inverse=True, return_counts=True)),
               SampleInput((make((2, 3)),), dict(dim=1, return_counts=True)),
               SampleInput((make((0,)),), dict(return_counts=True)), SampleInput((make(()),))]
        if consecutive:
            rep = D(np.array([1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 3.0, 3.0]))
            out.append(SampleInput((rep,), dict(return_inverse=True, return_counts=True)))
        return out
    return gen


def _bincount(x, weights=None, minlength=0):
    return np.bincount(x, weights=weights, minlength=minlength).astype(np.int64 if weights is None else np.float64)


def _check_bincount(got, expected, sample_np, assert_same):
    """Weighted counts are float64 for weights other than float32 (PyTorch's rule), which
    the battery's dtype rule (float32 for integer inputs) cannot say."""
    if expected.dtype.kind != "f":
        return assert_same(got, expected)
    assert got.dtype == minitorch.float64, got.dtype
    np.testing.assert_allclose(got.cpu().numpy(), expected)


def bincount_samples(make):
    return [SampleInput((make((10,), 0, 6),)), SampleInput((make((6,), 0, 4),), dict(minlength=8)),
            SampleInput((make((5,), 0, 3), make((5,), 0, 5))), SampleInput((make((0,), 0, 3),)),
            SampleInput((make((0,), 0, 3),), dict(minlength=3))]


def _histc(x, bins=100, min=0, max=0):  # noqa: A002
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(x, bins=bins, range=(lo, hi))[0].astype(np.float64)


def histc_samples(make):
    return [SampleInput((make((20,)),), dict(bins=5)), SampleInput((make((4, 5)), 4, -5, 5)),
            SampleInput((make((30,)),), dict(bins=7, min=-20, max=3)), SampleInput((make((0,)),), dict(bins=3)),
            SampleInput((D(np.array([1.0, 2.0, 1.0, 3.0])),), dict(bins=4, min=0, max=3)),
            SampleInput((D(np.array([2.0, 2.0])),), dict(bins=2))]


def _searchsorted(seq, values, *, right=False, side=None, sorter=None, out_int32=False):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    if seq.ndim == 1:
        return np.asarray(np.searchsorted(seq, values, side=side)).astype(np.int32 if out_int32 else np.int64)
    out = np.empty(np.shape(values), np.int32 if out_int32 else np.int64)
    for b in np.ndindex(seq.shape[:-1]):
        out[b] = np.searchsorted(seq[b], values[b], side=side)
    return out


def _sorted(make, shape):
    return D(np.sort(make(shape).arr, axis=-1))


def searchsorted_samples(make):
    # rows sorted by one permutation `sorter` (so every layout of seq, expanded too, keeps it)
    perm = np.array([3, 0, 5, 1, 4, 2])
    seq = D(np.sort(make((2, 6)).arr, axis=-1)[:, perm])
    sorter = np.tile(np.argsort(perm), (2, 1))
    return [SampleInput((_sorted(make, (7,)), make((3, 4)))), SampleInput((_sorted(make, (7,)), make((5,))),
                                                                         dict(right=True)),
            SampleInput((_sorted(make, (2, 6)), make((2, 3))), dict(side="right")),
            SampleInput((_sorted(make, (2, 3, 5)), make((2, 3, 4)))), SampleInput((_sorted(make, (4,)), 3)),
            SampleInput((seq, make((2, 4))), dict(sorter=sorter)),
            SampleInput((_sorted(make, (0,)), make((3,)))), SampleInput((_sorted(make, (5,)), make((0, 2))))]


def bucketize_samples(make):
    return [SampleInput((make((3, 4)), _sorted(make, (6,)))), SampleInput((make((5,)), _sorted(make, (4,))),
                                                                          dict(right=True)),
            SampleInput((make(()), _sorted(make, (3,)))), SampleInput((2, _sorted(make, (3,))))]


def _reduction_set_ops() -> list[OpInfo]:
    return [
        OpInfo("prod", _prod, prod_samples, domain=(-2.0, 2.0)),
        OpInfo("cummax", _cum_extreme(True), dim_samples),
        OpInfo("cummin", _cum_extreme(False), dim_samples),
        OpInfo("median", _lower_median, median_samples, check=check_values_and_indices),
        OpInfo("nanmedian", _nanmedian, nanmedian_samples, check=check_values_and_indices),
        OpInfo("kthvalue", _kthvalue, kthvalue_samples, check=functools.partial(check_values_and_indices, dim_pos=2)),
        OpInfo("mode", _mode, order_samples, check=check_values_and_indices),
        OpInfo("msort", lambda x: np.sort(x, axis=0) if x.ndim else x.copy(),
               _x(((3, 4), (), {}), ((5,), (), {}), ((2, 3, 4), (), {}), ((), (), {}), ((0, 2), (), {}))),
        OpInfo("quantile", _quantile_ref(False), quantile_samples),
        OpInfo("nanquantile", _quantile_ref(True), quantile_samples),
        OpInfo("unique", _unique, unique_samples(False)),
        OpInfo("unique_consecutive", _unique_consecutive, unique_samples(True)),
        OpInfo("bincount", _bincount, bincount_samples, domain=(0.0, 9.0), check=_check_bincount),
        OpInfo("histc", _histc, histc_samples),
        OpInfo("searchsorted", _searchsorted, searchsorted_samples),
        OpInfo("bucketize", lambda x, b, right=False: _searchsorted(b, x, right=right), bucketize_samples),
    ]
# ---- convolution features: groups, dilation, same padding, transposed convolutions, fold/unfold ----
# Direct-loop NumPy references (one einsum per kernel tap and group), float64.

def _pair2(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _np_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    (sh, sw), (dh, dw) = _pair2(stride), _pair2(dilation)
    N, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    if padding == "valid":
        padding = 0
    if padding == "same":  # the extra of an odd total goes at the end, as PyTorch
        th, tw = dh * (KH - 1), dw * (KW - 1)
        pads = ((th // 2, th - th // 2), (tw // 2, tw - tw // 2))
    else:
        ph, pw = _pair2(padding)
        pads = ((ph, ph), (pw, pw))
    xp = np.pad(x, ((0, 0), (0, 0)) + pads)
    OH = (xp.shape[2] - dh * (KH - 1) - 1) // sh + 1
    OW = (xp.shape[3] - dw * (KW - 1) - 1) // sw + 1
    out = np.zeros((N, O, OH, OW))
    Og = O // groups
    for g in range(groups):
        xs = xp[:, g * Cg:(g + 1) * Cg]
        for kh in range(KH):
            for kw in range(KW):
                patch = xs[:, :, kh * dh:kh * dh + sh * (OH - 1) + 1:sh, kw * dw:kw * dw + sw * (OW - 1) + 1:sw]
                out[:, g * Og:(g + 1) * Og] += np.einsum("nchw,oc->nohw", patch, w[g * Og:(g + 1) * Og, :, kh, kw])
    if b is not None:
        out += b[None, :, None, None]
    return out[0] if unbatched else out


def _np_conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    one = lambda v: v[0] if isinstance(v, (tuple, list)) else v  # noqa: E731
    p = padding if isinstance(padding, str) else (0, one(padding))
    return _np_conv2d(x[..., None, :], w[:, :, None, :], b, (1, one(stride)), p, (1, one(dilation)),
                      groups)[..., 0, :]


def _np_conv_transpose2d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = map(_pair2, (stride, padding, output_padding, dilation))
    N, Cin, H, W = x.shape
    _, Cog, KH, KW = w.shape
    OH = (H - 1) * sh - 2 * ph + dh * (KH - 1) + oph + 1
    OW = (W - 1) * sw - 2 * pw + dw * (KW - 1) + opw + 1
    full = np.zeros((N, Cog * groups, OH + 2 * ph, OW + 2 * pw))  # before cropping the padding
    Cig = Cin // groups
    for g in range(groups):
        for kh in range(KH):
            for kw in range(KW):
                contrib = np.einsum("nchw,co->nohw", x[:, g * Cig:(g + 1) * Cig], w[g * Cig:(g + 1) * Cig, :, kh, kw])
                full[:, g * Cog:(g + 1) * Cog, kh * dh:kh * dh + sh * (H - 1) + 1:sh,
                     kw * dw:kw * dw + sw * (W - 1) + 1:sw] += contrib
    out = full[:, :, ph:ph + OH, pw:pw + OW]
    if b is not None:
        out = out + b[None, :, None, None]
    return out[0] if unbatched else out


def _np_conv_transpose1d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    one = lambda v: v[0] if isinstance(v, (tuple, list)) else v  # noqa: E731
    return _np_conv_transpose2d(x[..., None, :], w[:, :, None, :], b, (1, one(stride)), (0, one(padding)),
                                (0, one(output_padding)), groups, (1, one(dilation)))[..., 0, :]


def _np_blocks(H, W, k, dilation, padding, stride):
    (kh_, kw_), (dh, dw), (ph, pw), (sh, sw) = map(_pair2, (k, dilation, padding, stride))
    OH = (H + 2 * ph - dh * (kh_ - 1) - 1) // sh + 1
    OW = (W + 2 * pw - dw * (kw_ - 1) - 1) // sw + 1
    # (tap index, block index, input row, input column) of every tap of every block, in range
    for kh in range(kh_):
        for kw in range(kw_):
            for oh in range(OH):
                for ow in range(OW):
                    ih, iw = oh * sh - ph + kh * dh, ow * sw - pw + kw * dw
                    if 0 <= ih < H and 0 <= iw < W:
                        yield kh * kw_ + kw, oh * OW + ow, ih, iw
    return OH * OW


def _np_unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    N, C, H, W = x.shape
    (kh_, kw_), (dh, dw), (ph, pw), (sh, sw) = map(_pair2, (kernel_size, dilation, padding, stride))
    L = ((H + 2 * ph - dh * (kh_ - 1) - 1) // sh + 1) * ((W + 2 * pw - dw * (kw_ - 1) - 1) // sw + 1)
    out = np.zeros((N, C, kh_ * kw_, L))
    for t, blk, ih, iw in _np_blocks(H, W, kernel_size, dilation, padding, stride):
        out[:, :, t, blk] = x[:, :, ih, iw]
    out = out.reshape(N, C * kh_ * kw_, L)
    return out[0] if unbatched else out


def _np_fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    unbatched = x.ndim == 2
    x = x[None] if unbatched else x
    (H, W), (kh_, kw_) = _pair2(output_size), _pair2(kernel_size)
    N, CK, L = x.shape
    cols = x.reshape(N, CK // (kh_ * kw_), kh_ * kw_, L)
    out = np.zeros((N, CK // (kh_ * kw_), H, W))
    for t, blk, ih, iw in _np_blocks(H, W, kernel_size, dilation, padding, stride):
        out[:, :, ih, iw] += cols[:, :, t, blk]
    return out[0] if unbatched else out


def conv2d_samples(make):
    return [SampleInput((make((2, 3, 5, 5)), make((4, 3, 3, 3)), make((4,))), dict(padding=1)),
            SampleInput((make((2, 4, 6, 5)), make((6, 2, 3, 2))), dict(groups=2, stride=(2, 1))),
            SampleInput((make((1, 3, 5, 6)), make((3, 1, 3, 3)), make((3,))), dict(groups=3, dilation=2, padding=2)),
            SampleInput((make((1, 2, 5, 5)), make((2, 2, 2, 3))), dict(padding="same", dilation=(1, 2))),
            SampleInput((make((2, 5, 4)), make((3, 2, 3, 3))), dict(padding="valid"))]


def conv1d_samples(make):
    return [SampleInput((make((2, 4, 7)), make((6, 2, 3)), make((6,))), dict(groups=2, padding=1)),
            SampleInput((make((1, 3, 8)), make((3, 1, 2))), dict(groups=3, padding="same", dilation=3)),
            SampleInput((make((2, 9)), make((4, 2, 3))), dict(stride=2, dilation=2))]


def conv_transpose2d_samples(make):
    return [SampleInput((make((2, 3, 3, 4)), make((3, 2, 3, 3)), make((2,))), dict(stride=2, padding=1,
                                                                                   output_padding=1)),
            SampleInput((make((1, 4, 3, 3)), make((4, 3, 2, 3))), dict(groups=2, dilation=(2, 1), stride=(1, 2))),
            SampleInput((make((4, 2, 3)), make((4, 1, 4, 4)), make((4,))), dict(stride=2, padding=1, groups=4)),
            SampleInput((make((1, 2, 3, 3)), make((2, 2, 3, 3))), dict(dilation=2, output_padding=1))]


def conv_transpose1d_samples(make):
    return [SampleInput((make((2, 4, 5)), make((4, 3, 3)), make((6,))), dict(stride=2, padding=1, output_padding=1,
                                                                            groups=2)),
            SampleInput((make((3, 4)), make((3, 2, 2))), dict(dilation=2))]


def unfold_samples(make):
    return [SampleInput((make((2, 3, 4, 5)), 2), {}),
            SampleInput((make((1, 2, 5, 5)), (3, 2)), dict(dilation=(1, 2), padding=1, stride=2)),
            SampleInput((make((2, 4, 4)), 3), dict(padding=1))]


def fold_samples(make):
    return [SampleInput((make((2, 12, 12)), (4, 5), 2), {}),
            SampleInput((make((1, 12, 9)), (5, 5), (3, 2)), dict(dilation=(1, 2), padding=1, stride=2)),
            SampleInput((make((18, 16)), 4, 3), dict(padding=1))]


def _conv_ops() -> list[OpInfo]:
    return [OpInfo(n, ref, gen, namespace=FUNCTIONAL, domain=(-2.0, 2.0), grad_samples=2,
                   tol={"float32": dict(rtol=1e-4, atol=1e-5), "float16": dict(rtol=1e-2, atol=2e-2),
                        "bfloat16": dict(rtol=5e-2, atol=1e-1)})
            for n, ref, gen in (("conv2d", _np_conv2d, conv2d_samples), ("conv1d", _np_conv1d, conv1d_samples),
                                ("conv_transpose2d", _np_conv_transpose2d, conv_transpose2d_samples),
                                ("conv_transpose1d", _np_conv_transpose1d, conv_transpose1d_samples),
                                ("unfold", _np_unfold, unfold_samples), ("fold", _np_fold, fold_samples))]


# ---- quantization workflows: fake quantize-dequantize (ops/fake_quantize.py) ----
def _fake_quant_ref(x, scale, zero_point, quant_min, quant_max, axis=None):
    """(clamp(rint(x * (1/scale) + zp), qmin, qmax) - zp) * scale, 1/scale rounded to float32 as
    PyTorch's kernels compute it."""
    scale = np.asarray(scale, np.float32)
    inv = (np.float32(1.0) / scale).astype(np.float64)
    zp = np.asarray(zero_point, np.float64)
    if axis is not None:
        view = [1] * x.ndim
        view[axis] = -1
        inv, zp, scale = inv.reshape(view), zp.reshape(view), scale.reshape(view)
    q = np.clip(np.rint(x * inv + zp), quant_min, quant_max)
    return (q - zp) * scale.astype(np.float64)


def _fake_quantize_ops() -> list:
    """The straight-through gradient is not the finite-difference one of a step function, so
    their gradcheck is an expected failure; tests/quantization checks it against PyTorch's."""
    ste = {("grad", "*", "*"): "straight-through estimator: not the derivative of the rounding"}
    per_tensor = lambda make: [SampleInput((make((3, 4)), 0.1, 3, 0, 255)),  # noqa: E731
                               SampleInput((make((2, 3, 4)), 0.25, 0, -128, 127)),
                               SampleInput((make((5,)), 0.5, -2, -8, 7))]
    per_channel = lambda make: [  # noqa: E731
        SampleInput((make((3, 4)), np.array([0.1, 0.2, 0.05], np.float32), np.array([0, 3, -2], np.int32), 0,
                     -128, 127)),
        SampleInput((make((2, 4, 3)), np.array([0.3, 0.1, 0.7, 0.05], np.float32), np.array([1, 0, 0, 2], np.int32),
                     1, 0, 255))]
    return [OpInfo("fake_quantize_per_tensor_affine", _fake_quant_ref, per_tensor, xfail=ste),
            OpInfo("fake_quantize_per_channel_affine",
                   lambda x, s, z, axis, lo, hi: _fake_quant_ref(x, s, z, lo, hi, axis), per_channel, xfail=ste)]


def _build() -> list[OpInfo]:
    ops = [
        # ---- elementwise, unary ----
        _e_unary("neg", np.negative),
        _e_unary("abs", np.abs),
        _e_unary("sign", lambda x: x.copy() if x.dtype == bool else np.sign(x)),
        _e_unary("relu", lambda x: np.maximum(x, 0).astype(x.dtype)),
        _e_unary("exp", _f64(np.exp)),
        _e_unary("expm1", _f64(np.expm1)),
        _e_unary("log", _f64(np.log), (0.01, 10.0)),
        _e_unary("log1p", _f64(np.log1p), (-0.99, 10.0)),
        _e_unary("log2", _f64(np.log2), (0.01, 10.0)),
        _e_unary("sqrt", _f64(np.sqrt), (0.0, 10.0)),
        _e_unary("rsqrt", _f64(lambda x: 1 / np.sqrt(x)), (0.05, 10.0)),
        _e_unary("sigmoid", _f64(lambda x: 1 / (1 + np.exp(-x)))),
        _e_unary("tanh", _f64(np.tanh), (-5.0, 5.0)),
        _e_unary("sinh", _f64(np.sinh), (-5.0, 5.0)),
        _e_unary("cosh", _f64(np.cosh), (-5.0, 5.0)),
        _e_unary("asin", _f64(np.arcsin), (-0.9, 0.9)),
        _e_unary("acos", _f64(np.arccos), (-0.9, 0.9)),
        _e_unary("atan", _f64(np.arctan), (-5.0, 5.0)),
        _e_unary("asinh", _f64(np.arcsinh), (-5.0, 5.0)),
        _e_unary("acosh", _f64(np.arccosh), (1.1, 5.0)),
        _e_unary("atanh", _f64(np.arctanh), (-0.9, 0.9)),
        _e_unary("sin", _f64(np.sin)),
        _e_unary("cos", _f64(np.cos)),
        _e_unary("tan", _f64(np.tan), (-1.4, 1.4), tol=dict(F32_LOOSE, float16=dict(rtol=2e-3, atol=2e-3))),
        _e_unary("erf", _f64(_erf), (-3.0, 3.0), tol=F32_LOOSE),
        _e_unary("erfc", _f64(np.vectorize(math.erfc, otypes=[np.float64])), (-3.0, 3.0), tol=F32_LOOSE),
        _e_unary("erfinv", _f64(_erfinv), (-0.95, 0.95), tol=F32_LOOSE),
        _e_unary("log10", _f64(np.log10), (0.01, 10.0)),
        _e_unary("exp2", _f64(np.exp2)),
        _e_unary("lgamma", _f64(_lgamma), (0.1, 10.0), tol=F32_LOOSE),
        _e_unary("digamma", _f64(_digamma), (0.5, 10.0), tol=dict(F32_LOOSE, float64=dict(rtol=1e-8, atol=1e-9))),
        _e_unary("floor", _same_if_integral(np.floor)),
        _e_unary("ceil", _same_if_integral(np.ceil)),
        _e_unary("round", _same_if_integral(np.rint)),
        _e_unary("trunc", _same_if_integral(np.trunc)),
        _e_unary("frac", lambda x: x - np.trunc(x)),
        _e_unary("isnan", _f64(np.isnan)),
        _e_unary("isinf", _f64(np.isinf)),
        _e_unary("isfinite", _f64(np.isfinite)),
        _e_unary("isposinf", _f64(np.isposinf)),
        _e_unary("isneginf", _f64(np.isneginf)),
        _e_unary("signbit", _f64(np.signbit)),
        _e_unary("logical_not", np.logical_not),
        _e_unary("bitwise_not", np.invert),
        # ---- elementwise, binary ----
        OpInfo("add", np.add, binary_samples()),
        OpInfo("sub", np.subtract, binary_samples()),
        OpInfo("mul", np.multiply, binary_samples()),
        OpInfo("div", _f64(np.true_divide), binary_samples(nonzero_other=True)),
        OpInfo("pow", lambda a, b: np.power(a, b).astype(bool) if a.dtype == bool else np.power(a, b),
               pow_samples, tol=F32_LOOSE),
        OpInfo("remainder", np.remainder, binary_samples(nonzero_other=True),
               tol={"float32": dict(rtol=1e-5, atol=1e-5)}),
        OpInfo("fmod", np.fmod, binary_samples(nonzero_other=True), tol={"float32": dict(rtol=1e-5, atol=1e-5)}),
        OpInfo("floor_divide", np.floor_divide, binary_samples(nonzero_other=True),
               tol={"float32": dict(rtol=1e-5, atol=1e-5)}),
        OpInfo("atan2", _f64(np.arctan2), binary_samples()),
        OpInfo("maximum", np.maximum, binary_samples(scalar=False)),
        OpInfo("minimum", np.minimum, binary_samples(scalar=False)),
        *[OpInfo(n, f, binary_samples(), domain=(-3, 3)) for n, f in (
            ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
            ("ge", np.greater_equal))],
        *[OpInfo(n, f, binary_samples(), domain=(-1, 1)) for n, f in (
            ("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor))],
        *[OpInfo(n, f, binary_samples()) for n, f in (
            ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor))],
        # ---- C++ ops ----
        OpInfo("clamp", _clamp, clamp_samples),
        OpInfo("where", np.where, where_samples),
        OpInfo("sum", _sum, reduce_samples(empty=True, tuple_dims=True)),
        OpInfo("mean", _reducer(np.mean), reduce_samples(tuple_dims=True)),
        OpInfo("max", _max_like(np.max, "max"), reduce_samples(), check=check_values_and_indices),
        OpInfo("min", _max_like(np.min, "min"), reduce_samples(), check=check_values_and_indices),
        OpInfo("argmax", _arg(np.max), reduce_samples(), check=check_indices),
        OpInfo("argmin", _arg(np.min), reduce_samples(), check=check_indices),
        OpInfo("cumsum", _cum(np.cumsum), dim_samples),
        OpInfo("cumprod", _cum(np.cumprod), dim_samples, domain=(-2.0, 2.0)),
        OpInfo("logcumsumexp", _cum(np.logaddexp.accumulate), dim_samples),
        OpInfo("sort", _sort, _x(((3, 4), (), {}), ((3, 4), (0,), {}), ((2, 3, 4), (-1,), dict(descending=True)),
                                 ((5,), (), {}), ((), (), {}), ((0, 3), (), {})), check=check_values_and_indices),
        OpInfo("softmax", _softmax, dim_samples),
        OpInfo("log_softmax", _log_softmax, dim_samples),
        OpInfo("matmul", _ints_out(np.matmul), matmul_samples, domain=(-2.0, 2.0)),
        OpInfo("index_select", lambda x, dim, index: np.take(x, index, axis=dim), index_samples),
        # ---- composites ----
        _e_unary("square", lambda x: np.square(x).astype(np.int64) if x.dtype == bool else np.square(x)),
        _e_unary("reciprocal", _f64(np.reciprocal), (0.5, 5.0)),
        OpInfo("clamp_min", lambda x, m: np.maximum(x, m).astype(x.dtype), _x(((3, 4), (0,), {}), ((), (1,), {}))),
        OpInfo("clamp_max", lambda x, m: np.minimum(x, m).astype(x.dtype), _x(((3, 4), (0,), {}), ((), (1,), {}))),
        OpInfo("all", _reducer(lambda x, **k: np.all(x != 0, **k)), reduce_samples(empty=True), domain=(0, 3)),
        OpInfo("any", _reducer(lambda x, **k: np.any(x != 0, **k)), reduce_samples(empty=True), domain=(-1, 1)),
        OpInfo("isclose", _isclose, lambda make: [SampleInput(_close_pair(make))]),
        OpInfo("allclose", lambda a, b: bool(np.all(_isclose(a, b))),
               lambda make: [SampleInput(_close_pair(make)), SampleInput((lambda a: (a, a))(make((3, 4))))]),
        OpInfo("equal", lambda a, b: a.shape == b.shape and bool(np.all(a == b)),
               lambda make: [SampleInput(_close_pair(make)), SampleInput((lambda a: (a, a))(make((3, 4)))),
                             SampleInput((make((3,)), make((2,))))]),
        OpInfo("amax", _reducer(np.amax), reduce_samples(full=False, tuple_dims=True)),
        OpInfo("amin", _reducer(np.amin), reduce_samples(full=False, tuple_dims=True)),
        OpInfo("var", _var(np.var), reduce_samples()),
        OpInfo("std", _var(np.std), reduce_samples()),
        OpInfo("var_mean", lambda x, dim=None, **k: (_var(np.var)(x, dim, **k), _reducer(np.mean)(x, dim, k.get(
            "keepdim", False))), reduce_samples()),
        OpInfo("std_mean", lambda x, dim=None, **k: (_var(np.std)(x, dim, **k), _reducer(np.mean)(x, dim, k.get(
            "keepdim", False))), reduce_samples()),
        OpInfo("logsumexp", _logsumexp, _x(((3, 4), (1,), {}), ((3, 4), (0,), dict(keepdim=True)),
                                           ((2, 3, 4), ((0, 2),), {}))),
        OpInfo("norm", _norm, _x(((3, 4), (), {}), ((3, 4), (1,), {}), ((2, 3, 4), (2, 1), {}),
                                 ((3, 4), (math.inf,), {}), ((5,), (), dict(keepdim=True, dim=0)))),
        OpInfo("argsort", lambda x, dim=-1, descending=False: (_sort(x, dim, descending)[0], "argsort"),
               _x(((3, 4), (), {}), ((3, 4), (0,), {}), ((2, 3, 4), (-1, True), {}), ((5,), (), {})),
               check=check_indices),
        OpInfo("topk", _topk, _x(((3, 4), (2,), {}), ((3, 4), (1, 0), {}), ((2, 3, 4), (2, -1, False), {}),
                                 ((5,), (0,), {})), check=functools.partial(check_values_and_indices, dim_pos=2)),
        OpInfo("mm", _ints_out(np.matmul), _pairs([((3, 4), (4, 2)), ((0, 3), (3, 2)), ((3, 0), (0, 2))]),
               domain=(-2.0, 2.0)),
        OpInfo("mv", _ints_out(np.matmul), _pairs([((3, 4), (4,)), ((0, 3), (3,))]), domain=(-2.0, 2.0)),
        OpInfo("dot", _ints_out(np.dot), _pairs([((4,), (4,)), ((0,), (0,))]), domain=(-2.0, 2.0)),
        OpInfo("bmm", _ints_out(np.matmul), _pairs([((2, 3, 4), (2, 4, 2)), ((0, 3, 4), (0, 4, 2))]),
               domain=(-2.0, 2.0)),
        OpInfo("baddbmm", lambda i, b1, b2, beta=1, alpha=1: _ints_out(lambda: beta * i + alpha * np.matmul(b1, b2))(),
               baddbmm_samples, domain=(-2.0, 2.0)),
        OpInfo("addmm", lambda i, m1, m2, beta=1, alpha=1: _ints_out(lambda: beta * i + alpha * (m1 @ m2))(),
               addmm_samples, domain=(-2.0, 2.0)),
        OpInfo("outer", _ints_out(np.outer), _pairs([((3,), (4,)), ((0,), (2,))]), domain=(-2.0, 2.0)),
        OpInfo("ger", _ints_out(np.outer), _pairs([((3,), (4,))]), domain=(-2.0, 2.0)),
        OpInfo("einsum", lambda eq, *ops: _ints_out(np.einsum)(eq, *ops),
               lambda make: [SampleInput(("ij,jk->ik", make((3, 4)), make((4, 2)))),
                             SampleInput(("bij->bji", make((2, 3, 4)))), SampleInput(("i,i->", make((4,)), make((4,))))],
               domain=(-2.0, 2.0)),
        OpInfo("cat", lambda ts, dim=0: np.concatenate(ts, axis=dim), cat_samples),
        OpInfo("stack", lambda ts, dim=0: np.stack(ts, axis=dim), stack_samples),
        OpInfo("hstack", lambda ts: np.hstack(ts), xstack_samples),
        OpInfo("vstack", lambda ts: np.vstack(ts), xstack_samples),
        OpInfo("masked_fill", _masked_fill, mask_samples(True)),
        OpInfo("masked_select", lambda x, m: np.broadcast_to(x, np.broadcast_shapes(x.shape, m.shape))[
            np.broadcast_to(m, np.broadcast_shapes(x.shape, m.shape))], mask_samples(False)),
        OpInfo("gather", lambda x, dim, index: np.take_along_axis(x, index, dim), gather_samples),
        OpInfo("scatter", _scatter, scatter_samples),
        OpInfo("scatter_add", _scatter_add, scatter_add_samples),
        OpInfo("scatter_reduce", _scatter_reduce, scatter_reduce_samples, domain=(-3.0, 3.0)),
        OpInfo("index_reduce", _index_reduce, index_reduce_samples, domain=(-3.0, 3.0)),
        OpInfo("index_add", _index_add, index_add_samples),
        OpInfo("index_copy", _index_copy, index_copy_samples),
        OpInfo("index_fill", _index_fill, index_fill_samples),
        OpInfo("index_put", _index_put, index_put_samples),
        OpInfo("nonzero", lambda x: np.argwhere(x).astype(np.int64),
               lambda make: [SampleInput((make(s, zeros=True),)) for s in [(3, 4), (5,), (0, 2), (2, 1, 3)]]),
        OpInfo("argwhere", lambda x: np.argwhere(x).astype(np.int64),
               lambda make: [SampleInput((make(s, zeros=True),)) for s in [(3, 4), (5,), (0, 2)]]),
        # ---- nn.functional: losses, distances and bilinear ----
        *[OpInfo(n, ref, gen, namespace=FUNCTIONAL, domain=(-2.0, 2.0)) for n, ref, gen in (
            ("kl_div", _kl_div, kl_div_samples),
            ("smooth_l1_loss", _smooth_l1, _regression_samples("beta")),
            ("huber_loss", _huber, _regression_samples("delta")),
            ("margin_ranking_loss", _margin_ranking, margin_ranking_samples),
            ("soft_margin_loss", _soft_margin, soft_margin_samples),
            ("triplet_margin_loss", _triplet_margin, triplet_margin_samples),
            ("cosine_embedding_loss", _cosine_embedding, cosine_embedding_samples),
            ("poisson_nll_loss", _poisson_nll, poisson_nll_samples),
            ("gaussian_nll_loss", _gaussian_nll, gaussian_nll_samples),
            ("multilabel_soft_margin_loss", _multilabel_soft_margin, multilabel_soft_margin_samples),
            ("hinge_embedding_loss", _hinge_embedding, hinge_embedding_samples),
            ("pairwise_distance", _pairwise_distance, pairwise_distance_samples),
            ("bilinear", _bilinear, bilinear_samples))],
    ]
    ops += [OpInfo(n, ref, gen) for n, (ref, gen) in _view_samples().items()]
    ops += _activation_ops()
    ops += _math_ops()
    ops += _shape_ops_more()
    ops += _reduction_set_ops()
    ops += _sampling_ops()
    ops += _norm_ops()
    ops += _grid_ops()
    ops += _embedding_bag_ops()
    ops += _linalg_ops()
    ops += _conv_ops()
    ops += _fake_quantize_ops()
    ops += _flat_index_and_number_ops()
    return ops


# ---------------------------------------------------------------- linalg ----
# minitorch.linalg's single-result ops and the top-level forms (det, inverse...). Square
# matrices are well conditioned (uniform in [-1, 1] plus 3 I: Gershgorin keeps det > 0)
# and batched, so the "expanded" layout repeats whole matrices, never rows. The
# factorizations (cholesky, qr, eigh, svd) read one triangle or are unique only up to
# signs: tests/linalg/ checks them.

def _well_conditioned(make, shape):
    return D(make(shape, -1.0, 1.0).arr + 3 * np.eye(shape[-1]))


def _square_samples(make):
    return [SampleInput((_well_conditioned(make, (2, 3, 3)),)), SampleInput((_well_conditioned(make, (2, 1, 4, 4)),))]


def _solve_samples(make):
    return [SampleInput((_well_conditioned(make, (2, 3, 3)), make((2, 3, 2)))),
            SampleInput((_well_conditioned(make, (2, 3, 3)), make((3,)))),
            SampleInput((_well_conditioned(make, (2, 3, 3)), make((2, 4, 3))), dict(left=False))]


def _solve_ref(a, b, left=True):
    if not left:
        return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    if b.ndim == 1:
        return np.linalg.solve(a, np.broadcast_to(b, a.shape[:-1])[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _solve_triangular_ref(a, b, upper, left=True, unitriangular=False):
    tri = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        tri = tri - np.diagonal(tri, 0, -2, -1)[..., None] * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    return np.linalg.solve(tri, b) if left else b @ np.linalg.inv(tri)


def _solve_triangular_samples(make):
    return [SampleInput((_well_conditioned(make, (2, 3, 3)), make((2, 3, 2))), dict(upper=True)),
            SampleInput((_well_conditioned(make, (2, 3, 3)), make((4, 3))), dict(upper=False, left=False)),
            SampleInput((_well_conditioned(make, (3, 3)), make((3, 1))), dict(upper=False, unitriangular=True))]


def _rect_samples(make):
    return [SampleInput((make((2, 4, 3), -1.0, 1.0),)), SampleInput((make((2, 3, 5), -1.0, 1.0),))]


def _vector_norm_samples(make):
    return [SampleInput((make((3, 4)),)), SampleInput((make((3, 4)), 1, -1)), SampleInput((make((2, 3, 4)), 3, (0, 2))),
            SampleInput((make((3, 4)), float("inf"), 1, True))]


def _vector_norm_ref(x, ord=2, dim=None, keepdim=False):
    if dim is None:
        return np.asarray(np.linalg.norm(x.ravel(), ord))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    a = np.abs(x)
    out = a.max(dims, keepdims=keepdim) if ord == np.inf else (a ** ord).sum(dims, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out)


def _matrix_norm_samples(make):
    # 'nuc' and 2 go through svdvals, which refuses float16: tests/linalg checks them
    return [SampleInput((make((2, 3, 4)),)), SampleInput((make((2, 3, 4)), 1, (0, 2))),
            SampleInput((make((2, 3, 4)), -np.inf, (-2, -1), True)), SampleInput((make((3, 4)), np.inf))]


def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False):
    return np.asarray(np.linalg.norm(a, ord, axis=dim, keepdims=keepdim))


def _norm_samples(make):
    return [SampleInput((make((2, 3, 4)),)), SampleInput((make((3, 4)), "fro")), SampleInput((make((2, 3, 4)), 2, 1)),
            SampleInput((make((2, 3, 4)), None, (1, 2)))]


def _norm_ref(a, ord=None, dim=None, keepdim=False):
    if dim is None and ord is None:
        return np.asarray(np.linalg.norm(a.ravel()))
    return np.asarray(np.linalg.norm(a, ord, axis=dim, keepdims=keepdim))


def _matrix_rank_samples(make):
    low = make((2, 4, 3), -1.0, 1.0).arr.copy()
    low[..., 2] = low[..., 0]  # rank 2
    return [SampleInput((make((2, 4, 3), -1.0, 1.0),)), SampleInput((D(low),))]


def _slogdet_ref(a):
    return tuple(np.linalg.slogdet(a))


def _multi_dot_samples(make):
    return [SampleInput(([make((3,)), make((3, 4)), make((4, 2))],)),
            SampleInput(([make((2, 3)), make((3, 4)), make((4,))],)), SampleInput(([make((2, 3)), make((3, 2))],))]


def _multi_dot_ref(ts):
    return np.asarray(np.linalg.multi_dot(ts))


def _gram(f, upper):
    """A from its Cholesky factor: L L^T, or U^T U."""
    t = np.triu(f) if upper else np.tril(f)
    return np.swapaxes(t, -1, -2) @ t if upper else t @ np.swapaxes(t, -1, -2)


def _cholesky_solve_samples(make):
    return [SampleInput((make((2, 3, 2)), _well_conditioned(make, (2, 3, 3)))),
            SampleInput((make((2, 3, 2)), _well_conditioned(make, (2, 3, 3))), dict(upper=True))]


def _cholesky_inverse_samples(make):
    return [SampleInput((_well_conditioned(make, (2, 3, 3)),)),
            SampleInput((_well_conditioned(make, (2, 3, 3)), True))]


def _linalg_ops() -> list[OpInfo]:
    tol = {"float32": dict(rtol=1e-4, atol=1e-5)}
    la = [
        ("det", np.linalg.det, _square_samples),
        ("slogdet", _slogdet_ref, _square_samples),
        ("inv", np.linalg.inv, _square_samples),
        ("solve", _solve_ref, _solve_samples),
        ("solve_triangular", _solve_triangular_ref, _solve_triangular_samples),
        ("pinv", np.linalg.pinv, _rect_samples),
        ("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), _rect_samples),
        ("matrix_rank", lambda a: np.linalg.matrix_rank(a).astype(np.int64), _matrix_rank_samples),
        ("vector_norm", _vector_norm_ref, _vector_norm_samples),
        ("matrix_norm", _matrix_norm_ref, _matrix_norm_samples),
        ("norm", _norm_ref, _norm_samples),
        ("vecdot", lambda x, y, dim=-1: np.asarray((x * y).sum(dim)),
         lambda make: [SampleInput((make((3, 4)), make((4,)))), SampleInput((make((2, 3)), make((2, 3))), dict(dim=0))]),
        ("multi_dot", _multi_dot_ref, _multi_dot_samples),
        ("matrix_power", lambda a, n: np.linalg.matrix_power(a, n),
         lambda make: [SampleInput((make((2, 3, 3), -2, 2), 3)), SampleInput((make((3, 3), -2, 2), 0)),
                       SampleInput((make((3, 3), -2, 2), 1))]),
        ("cond", lambda a, p=None: np.asarray(np.linalg.cond(a, p)),
         lambda make: [SampleInput((_well_conditioned(make, (2, 3, 3)),)),
                       SampleInput((_well_conditioned(make, (2, 3, 3)), "fro")),
                       SampleInput((make((2, 4, 3), -1.0, 1.0), -2))]),
        ("diagonal", lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2).copy(),
         lambda make: [SampleInput((make((2, 3, 4)),)), SampleInput((make((3, 4)),), dict(offset=1))]),
    ]
    top = [
        ("det", np.linalg.det, _square_samples),
        ("logdet", lambda a: np.log(np.linalg.det(a)), _square_samples),
        ("slogdet", _slogdet_ref, _square_samples),
        ("inverse", np.linalg.inv, _square_samples),
        ("pinverse", np.linalg.pinv, _rect_samples),
        ("cholesky_solve", lambda b, l, upper=False: np.linalg.solve(_gram(l, upper), b), _cholesky_solve_samples),
        ("cholesky_inverse", lambda l, upper=False: np.linalg.inv(_gram(l, upper)), _cholesky_inverse_samples),
    ]
    # one gradcheck sample each: finite differences of a factorization are slow on the emulator
    return ([OpInfo(n, ref, gen, namespace=LINALG, tol=tol, grad_samples=1) for n, ref, gen in la]
            + [OpInfo(n, ref, gen, tol=tol, grad_samples=1) for n, ref, gen in top])


# ---- flat positions, stacking, products, the trapezoidal rule, renorm, frexp / ldexp, gcd /
# lcm and shifts (ops/indexing.py, join.py, shape.py, linalg.py, integrate.py, pointwise_math.py,
# integer_math.py): references written from NumPy's and PyTorch's documented rules ----

def _wrap_flat(index, n):
    return np.where(index < 0, index + n, index).ravel()


def _put(x, index, source, accumulate=False):
    out = x.copy().ravel()
    at = _wrap_flat(index, out.size)
    if accumulate:
        np.add.at(out, at, source.ravel())
    else:
        out[at] = source.ravel()
    return out.reshape(x.shape)


def _put_samples(make):
    return [SampleInput((make((3, 4)), np.array([0, -1, 5]), make((3,)))),
            SampleInput((make((2, 3)), np.array([[1, 1], [0, -6]]), make((2, 2))), dict(accumulate=True))]


def _masked_scatter(x, mask, source):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out, m = np.broadcast_to(x, shape).copy(), np.broadcast_to(mask, shape)
    out[m] = source.ravel()[:m.sum()]
    return out


def _masked_scatter_samples(make):
    r = make.rng
    return [SampleInput((make((3, 4)), r.random((3, 4)) < 0.5, make((12,)))),
            SampleInput((make((2, 3)), r.random((3,)) < 0.5, make((3, 2)))),
            SampleInput((make(()), np.array(True), make((2,))))]


def _combinations(x, r=2, with_replacement=False):
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return x[np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)]


def _trapezoid_parts(y, x, dx, dim):
    y = np.moveaxis(np.asarray(y, np.float64), dim, -1)
    if x is None:
        spacing = 1.0 if dx is None else dx
    else:
        spacing = np.diff(np.asarray(x, np.float64)) if x.ndim == 1 else np.moveaxis(np.diff(x, axis=dim), dim, -1)
    return (y[..., 1:] + y[..., :-1]) * spacing / 2


def _trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid_parts(y, x, dx, dim).sum(-1)


def _cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    return np.moveaxis(np.cumsum(_trapezoid_parts(y, x, dx, dim), -1), -1, dim)


def _trapezoid_samples(make):
    points = D(np.sort(make((3,)).arr))  # increasing: their differences do not wrap around in uint8
    return [SampleInput((make((3, 4)),)), SampleInput((make((3, 4)),), dict(dx=0.5, dim=0)),
            SampleInput((make((2, 3)), points))]


def _renorm(x, p, dim, maxnorm):
    other = tuple(k for k in range(x.ndim) if k != dim % x.ndim)
    norms = (np.abs(x) ** p).sum(other, keepdims=True) ** (1 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def _frexp_check(got, want, sample_np, same):
    mantissa, exponent = got
    same(mantissa, want[0])
    assert exponent.dtype == minitorch.int32, f"exponent dtype {exponent.dtype}, expected int32"
    np.testing.assert_array_equal(exponent.cpu().numpy(), want[1])


def _pdist(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    return np.linalg.norm(x[i] - x[j], ord=p, axis=-1)


def _shift(left):
    """PyTorch's shifts on int64 references: a negative amount gives 0 (left) or the sign (right)."""
    def ref(a, b):
        b = np.asarray(b)
        moved = np.left_shift(a, np.maximum(b, 0)) if left else np.right_shift(a, np.maximum(b, 0))
        return np.where(b < 0, 0 if left else np.where(a < 0, -1, 0), moved).astype(np.int64)
    return ref


def _shift_samples(make):
    return [SampleInput((make((3, 4)), make((3, 4), -2, 6))), SampleInput((make((2, 1)), make((3,), 0, 6))),
            SampleInput((make((3,)), 2))]


def _flat_index_and_number_ops() -> list[OpInfo]:
    return [
        OpInfo("take", lambda x, index: np.take(x, index),
               lambda make: [SampleInput((make((3, 4)), np.array([[0, -1], [5, 11]]))),
                             SampleInput((make(()), np.array([0, -1])))]),
        OpInfo("put", _put, _put_samples),
        OpInfo("masked_scatter", _masked_scatter, _masked_scatter_samples),
        OpInfo("diagflat", lambda x, offset=0: np.diagflat(x, offset), _x(((2, 2), (), {}), ((3,), (-1,), {}))),
        OpInfo("fliplr", lambda x: np.fliplr(x).copy(), _x(((2, 3), (), {}), ((2, 3, 2), (), {}))),
        OpInfo("flipud", lambda x: np.flipud(x).copy(), _x(((3,), (), {}), ((2, 3), (), {}))),
        OpInfo("dstack", np.dstack, lambda make: [SampleInput(([make((2, 3)), make((2, 3))],)),
                                                  SampleInput(([make((3,)), make((3,))],))]),
        OpInfo("column_stack", np.column_stack, lambda make: [SampleInput(([make((3,)), make((3, 2))],))]),
        OpInfo("narrow_copy", lambda x, dim, start, n: np.take(x, range(start % x.shape[dim], start % x.shape[dim] + n),
                                                               axis=dim),
               _x(((3, 4), (1, 1, 2), {}), ((4,), (0, -2, 2), {}))),
        OpInfo("combinations", _combinations, _x(((4,), (), {}), ((3,), (3, True), {}))),
        OpInfo("inner", _ints_out(np.inner), _pairs([((2, 3), (4, 3)), ((3,), (3,)), ((), (2, 3))]),
               domain=(-2.0, 2.0)),
        OpInfo("vdot", _ints_out(np.vdot), _pairs([((4,), (4,))]), domain=(-2.0, 2.0)),
        OpInfo("matrix_power", lambda a, n: np.linalg.matrix_power(a, n),
               lambda make: [SampleInput((make((2, 3, 3), -2, 2), 3)), SampleInput((make((3, 3), -2, 2), 0))],
               tol={"float32": dict(rtol=1e-4, atol=1e-5)}),
        OpInfo("trapezoid", _trapezoid, _trapezoid_samples, domain=(-3.0, 3.0)),
        OpInfo("cumulative_trapezoid", _cumulative_trapezoid, _trapezoid_samples, domain=(-3.0, 3.0)),
        OpInfo("renorm", _renorm, _x(((3, 4), (2, 0, 1.0), {}), ((2, 3, 2), (1, -1, 2.0), {})), domain=(-2.0, 2.0)),
        OpInfo("frexp", np.frexp, _x(((3, 4), (), {}), ((), (), {})), check=_frexp_check),
        OpInfo("ldexp", lambda x, e: x * np.power(2.0, e),
               lambda make: [SampleInput((make((3, 4)), make((3, 4), -4, 4))),
                             SampleInput((make((2, 3)), make((3,), -4, 4)))], domain=(-3.0, 3.0)),
        OpInfo("pdist", _pdist, lambda make: [SampleInput((make((4, 3)),)), SampleInput((make((3, 2)), 1.0)),
                                              SampleInput((make((3, 2)), math.inf))], domain=(-2.0, 2.0)),
        OpInfo("gcd", np.gcd, lambda make: [SampleInput((make((3, 4)), make((3, 4)))),
                                            SampleInput((make((2, 1)), make((3,))))]),
        OpInfo("lcm", np.lcm, lambda make: [SampleInput((make((3, 4)), make((3, 4)))),
                                            SampleInput((make((2, 1)), make((3,))))]),
        OpInfo("bitwise_left_shift", _shift(True), _shift_samples),
        OpInfo("bitwise_right_shift", _shift(False), _shift_samples),
    ]


OP_DB: list[OpInfo] = _build()
TESTED_KINDS = (ELEMENTWISE, CPP, COMPOSITE)
FUNCTIONAL_KIND = FUNCTIONAL
