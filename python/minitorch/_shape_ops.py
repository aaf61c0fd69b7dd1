"""Everyday ops of sequence models, with PyTorch's signatures: joining and cutting
(``cat stack split chunk unbind``), rearranging (``flip repeat roll narrow``), masks
(``masked_fill tril triu``), statistics (``var std logsumexp norm amax amin``), batched
products (``bmm baddbmm outer einsum``), running sums (``cumsum cumprod``) and sorting
(``sort argsort topk``).

``cat``, ``split``, ``cumsum``/``cumprod``, ``sort``/``topk`` (``ops/join.cpp``,
``ops/scan.cpp``, ``ops/sort.cpp``), ``flip repeat roll tril triu`` (``ops/shape.cpp``, one
remap kernel each) and ``var std var_mean std_mean logsumexp norm`` (``ops/reduce.cpp``,
one reduce_stats kernel each) are C++ ops with their backward in C++; these wrappers only
parse PyTorch's argument forms. The rest are compositions of existing ops, so autograd
and every device come for free.
"""
from __future__ import annotations

import collections
import numbers

from . import _C
from ._C import Tensor
from .ops.creation import eye, full
from ._functions import function_from_method
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

def _ints(op: str, what: str, values) -> list:
    """An int or a sequence of ints (varargs unpacked by the caller) as a list of ints."""
    if isinstance(values, (tuple, list)):
        return [_int(op, what, v) for v in values]
    return [_int(op, what, values)]


def _varargs(args: tuple) -> tuple:
    """``f(1, 2)`` and ``f((1, 2))`` alike."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def _flip(self, *dims) -> Tensor:
    """Reverses the order of elements along ``dims`` (a copy, as in PyTorch).

    >>> minitorch.tensor([[1, 2], [3, 4]]).flip(1)
    tensor([[2, 1],
            [4, 3]])
    """
    return _C._flip(self, _ints("flip", "dims", _varargs(dims)))


def _repeat(self, *sizes) -> Tensor:
    """Tiles ``self``: ``sizes[i]`` copies along dim i (extra leading sizes add dims).

    >>> minitorch.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    return _C._repeat(self, _ints("repeat", "repeats", _varargs(sizes)))


def _roll(self, shifts, dims=None) -> Tensor:
    """Shifts elements along ``dims`` by ``shifts``, wrapping around (the flattened tensor
    when ``dims`` is None).

    >>> minitorch.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3])
    """
    return _C._roll(self, _ints("roll", "shifts", shifts), [] if dims is None else _ints("roll", "dims", dims))


# ------------------------------------------------------------------ masks ----

def _tril(self, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``); zeros above."""
    return _C._tril(self, _int("tril", "diagonal", diagonal))


def _triu(self, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``); zeros below."""
    return _C._triu(self, _int("triu", "diagonal", diagonal))


# ------------------------------------------------------------- statistics ----

def _dims_or_all(dim, ndim: int, op: str) -> tuple:
    """``dim`` as a tuple of dims; None or an empty tuple/list means every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return dim_tuple(dim, ndim, op)


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
    dims = list(_dims_or_all(dim, x.ndim, op))
    n = 1
    for d in dims:
        n *= x.shape[d] if x.ndim else 1
    if n - corr <= 0 and x.numel() > 0:
        import warnings
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      f"factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, float(corr), bool(keepdim)


def _var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance over ``dim`` (all dims when None): ``sum((x - mean)^2) / (N - correction)``;
    ``correction=1`` (the default, Bessel's) or ``unbiased=False`` for ``correction=0``."""
    return _C._var(self, *_var_args("var", self, dim, unbiased, keepdim, correction))


def _std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))`` with the same arguments."""
    return _C._std(self, *_var_args("std", self, dim, unbiased, keepdim, correction))


def _var_mean(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(var, mean)`` over the same dims, in one pass."""
    return _C._var_mean(self, *_var_args("var_mean", self, dim, unbiased, keepdim, correction))


def _std_mean(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(std, mean)`` over the same dims, in one pass."""
    return _C._std_mean(self, *_var_args("std_mean", self, dim, unbiased, keepdim, correction))


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
    """``log(sum(exp(x)))`` over ``dim``, computed stably in one pass: a running max m and
    the sum of ``exp(x - m)``, so large values do not overflow. Integers give floats."""
    # dim is required (None is refused, as in PyTorch); () means every dim.
    dims = dim_tuple(dim, self.ndim, "logsumexp") if dim is None else _dims_or_all(dim, self.ndim, "logsumexp")
    return _C._logsumexp(self, list(dims), bool(keepdim))


def _norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
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
    return _C._norm(x, float(p), list(_dims_or_all(dim, x.ndim, "norm")), bool(keepdim))


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
    return SortResult(values, indices)


def _argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``self`` along ``dim``."""
    return _C._sort(self, _int("argsort", "dim", dim), bool(descending))[1]


def _topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopkResult:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices, largest
    (smallest) first; always sorted."""
    values, indices = _C._topk(self, _int("topk", "k", k), _int("topk", "dim", dim), bool(largest))
    return TopkResult(values, indices)


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
