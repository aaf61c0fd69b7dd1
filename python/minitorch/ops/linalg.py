"""Linear algebra from ``matmul``: ``mm``, ``mv``, ``dot``, ``bmm``, the scaled sums ``baddbmm``,
``addmm``, ``addmv``, ``addr`` and ``addbmm``, with PyTorch's checks of the operands'
dimensions (``matmul`` itself broadcasts; these do not); ``outer`` (a broadcast product),
``kron`` and ``cross``; ``tensordot`` (one matmul of the operands folded to matrices) and
``inner`` (one ``tensordot``); ``vdot`` and the deprecated ``chain_matmul``; ``dist`` (the norm
of a difference), ``cdist`` and ``pdist`` (norms of the differences of rows), ``renorm``
(slices scaled to a largest norm); and ``einsum``, which contracts its operands left to right,
each pair with one batched matmul.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py), but ``einsum``, ``tensordot``,
``cdist``, ``pdist``, ``chain_matmul`` and ``ger`` (``outer``'s older name), which are
``minitorch.<name>`` only.
"""
from __future__ import annotations

import collections
import warnings

from .. import _C
from .._C import Tensor
from .._tensor import _wrap
from ._args import check_input, numpy_names
from .creation import eye


def _shapes_of(op: str, a: Tensor, b, dims: tuple) -> tuple:
    """Checks that ``b`` is a tensor and that ``(a.ndim, b.ndim) == dims``; returns both shapes."""
    if not isinstance(b, Tensor):
        raise TypeError(f"{op}(): second argument must be a Tensor, not {type(b).__name__}")
    sa, sb = tuple(a.shape), tuple(b.shape)
    if (a.ndim, b.ndim) != dims:
        raise _C.InputError(f"{op}: expected {dims[0]}-D and {dims[1]}-D tensors, got shapes {sa} and {sb}")
    return sa, sb


def mm(self, mat2: Tensor) -> Tensor:
    """Matrix product of two matrices: ``(n, k) @ (k, m) -> (n, m)``."""
    sa, sb = _shapes_of("mm", self, mat2, (2, 2))
    if sa[1] != sb[0]:
        raise _C.InputError(f"mm: shapes {sa} and {sb} cannot be multiplied ({sa[1]} != {sb[0]})")
    return self.matmul(mat2)


def mv(self, vec: Tensor) -> Tensor:
    """Matrix times vector: ``(n, k) @ (k,) -> (n,)``."""
    sa, sb = _shapes_of("mv", self, vec, (2, 1))
    if sa[1] != sb[0]:
        raise _C.InputError(f"mv: shapes {sa} and {sb} cannot be multiplied ({sa[1]} != {sb[0]})")
    return self.matmul(vec)


def dot(self, other: Tensor) -> Tensor:
    """Dot product of two vectors of the same length, as a 0-dim tensor."""
    sa, sb = _shapes_of("dot", self, other, (1, 1))
    if sa != sb:
        raise _C.InputError(f"dot: the vectors have different lengths ({sa[0]} != {sb[0]})")
    return self.matmul(other)


def bmm(self, mat2: Tensor) -> Tensor:
    """Batched matrix product: ``(b, n, k) @ (b, k, m) -> (b, n, m)`` (no broadcasting)."""
    if not isinstance(mat2, Tensor):
        raise TypeError(f"bmm(): argument 'mat2' must be a Tensor, not {type(mat2).__name__}")
    if self.ndim != 3 or mat2.ndim != 3:
        raise _C.InputError(f"bmm: expected 3-D tensors, got shapes {tuple(self.shape)} and {tuple(mat2.shape)}")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise _C.InputError(f"bmm: shapes {tuple(self.shape)} and {tuple(mat2.shape)} cannot be multiplied "
                            f"(batch {self.shape[0]} vs {mat2.shape[0]}, inner {self.shape[2]} vs {mat2.shape[1]})")
    return self.matmul(mat2)


def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * bmm(batch1, batch2)``; with ``beta=0`` self is ignored
    (NaNs in it do not propagate)."""
    return _add_product("baddbmm", self, bmm(batch1, batch2), beta, alpha)


def addmm(self, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * mm(mat1, mat2)`` for matrices ``mat1`` (n, k) and ``mat2`` (k, m);
    ``self`` broadcasts to (n, m) (a bias row, say). With ``beta=0`` self is ignored (NaNs in
    it do not propagate).

    >>> minitorch.addmm(minitorch.ones(3), minitorch.ones(2, 4), minitorch.ones(4, 3)).tolist()
    [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]
    """
    if not isinstance(mat1, Tensor):
        raise TypeError(f"addmm(): argument 'mat1' must be a Tensor, not {type(mat1).__name__}")
    return _add_product("addmm", self, mm(mat1, mat2), beta, alpha)


def _add_product(op: str, like: Tensor, prod: Tensor, beta, alpha) -> Tensor:
    """``beta * like + alpha * prod``, where ``like`` must broadcast to the product's shape
    (the product is not broadcast up to ``like``'s, as in PyTorch)."""
    import numpy as np
    try:
        shape = tuple(np.broadcast_shapes(tuple(prod.shape), tuple(like.shape)))
    except ValueError:
        shape = None
    if shape != tuple(prod.shape):
        raise _C.InputError(f"{op}: input of shape {tuple(like.shape)} does not broadcast to the product's "
                            f"shape {tuple(prod.shape)}")
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return (like if beta == 1 else like * beta) + prod


def addmv(self, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * mv(mat, vec)`` for ``mat`` (n, m) and ``vec`` (m,); ``self``
    broadcasts to (n,). With ``beta=0`` self is ignored."""
    if not isinstance(mat, Tensor):
        raise TypeError(f"addmv(): argument 'mat' must be a Tensor, not {type(mat).__name__}")
    return _add_product("addmv", self, mv(mat, vec), beta, alpha)


def addr(self, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * outer(vec1, vec2)``; ``self`` broadcasts to (n, m). With
    ``beta=0`` self is ignored."""
    if not isinstance(vec1, Tensor):
        raise TypeError(f"addr(): argument 'vec1' must be a Tensor, not {type(vec1).__name__}")
    if _C.dtype.bool in (self.dtype, vec1.dtype, getattr(vec2, "dtype", None)):
        raise _C.DTypeError("addr: not implemented for bool tensors")
    return _add_product("addr", self, outer(vec1, vec2), beta, alpha)


def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * sum_b bmm(batch1, batch2)[b]``: the batch's products added up,
    (n, m); ``self`` broadcasts to (n, m). With ``beta=0`` self is ignored."""
    if not isinstance(batch1, Tensor):
        raise TypeError(f"addbmm(): argument 'batch1' must be a Tensor, not {type(batch1).__name__}")
    return _add_product("addbmm", self, bmm(batch1, batch2).sum(0), beta, alpha)


def kron(self, other: Tensor) -> Tensor:
    """Kronecker product: blocks ``self[i, j] * other``; the operands are seen with the same
    number of dims (ones in front), and each dim of the result is the product of theirs.

    >>> minitorch.kron(minitorch.eye(2), minitorch.ones(2, 2)).shape
    minitorch.Size([4, 4])
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"kron(): argument 'other' must be a Tensor, not {type(other).__name__}")
    nd = max(self.ndim, other.ndim)
    sa = (1,) * (nd - self.ndim) + tuple(self.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    # a as (a0, 1, a1, 1, ...) and b as (1, b0, 1, b1, ...): their product's dims interleave.
    a = self.reshape(tuple(v for n in sa for v in (n, 1)))
    b = other.reshape(tuple(v for n in sb for v in (1, n)))
    return (a * b).reshape(tuple(m * n for m, n in zip(sa, sb)))


def _tensordot_dims(a: Tensor, b: Tensor, dims) -> tuple:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, bool):
        raise TypeError("tensordot(): argument 'dims' must be an int or a pair of lists of ints, not bool")
    if isinstance(dims, int):
        if dims < 0:
            raise _C.InputError(f"tensordot: expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise _C.InputError(f"tensordot: dims={dims} is more than the operands' dims "
                                f"(shapes {tuple(a.shape)} and {tuple(b.shape)})")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if not (isinstance(dims, (tuple, list)) and len(dims) == 2):
        raise TypeError(f"tensordot(): argument 'dims' must be an int or a pair of lists of ints, not {dims!r}")
    da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise _C.InputError(f"tensordot: both dimension lists should have the same length, got {da} and {db}")
    return [_wrap(d, a.ndim, "tensordot") for d in da], [_wrap(d, b.ndim, "tensordot") for d in db]


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contracts ``dims`` of ``a`` with ``dims`` of ``b``: an int ``n`` means the last n of
    ``a`` with the first n of ``b``; a pair of lists names them. The result has ``a``'s other
    dims, then ``b``'s. One matmul of the operands folded to matrices.

    >>> minitorch.tensordot(minitorch.ones(2, 3, 4), minitorch.ones(3, 4, 5)).shape
    minitorch.Size([2, 5])
    """
    check_input(a, "tensordot")
    if not isinstance(b, Tensor):
        raise TypeError(f"tensordot(): argument 'b' must be a Tensor, not {type(b).__name__}")
    da, db = _tensordot_dims(a, b, dims)
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise _C.InputError(f"tensordot: contracted dimensions need to match, but first has size {a.shape[i]} "
                                f"in dim {i} and second has size {b.shape[j]} in dim {j}")
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = _numel(a, da)
    out_shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    m = a.permute(*free_a, *da).reshape(_numel(a, free_a), k)
    n = b.permute(*db, *free_b).reshape(k, _numel(b, free_b))
    return m.matmul(n).reshape(out_shape)


def _numel(x: Tensor, dims) -> int:
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def _norm_order(op: str, p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"{op}(): argument 'p' must be a number, not {type(p).__name__}")
    return float(p)


def dist(self, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``self - other`` (broadcast together) over all its elements: ``p`` any
    number, inf and 0 (the count of differing elements) included. Floating tensors; the
    gradient at a zero difference is zero.

    >>> minitorch.dist(minitorch.tensor([0.0, 0.0]), minitorch.tensor([3.0, 4.0]))
    tensor(5.)
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"dist(): argument 'other' must be Tensor, not {type(other).__name__}")
    p = _norm_order("dist", p)
    diff = self - other
    if not diff.dtype.is_floating_point:
        raise _C.DTypeError(f"dist: norm(): input dtype should be either floating point or complex. Got "
                            f"{diff.dtype.name} instead.")
    return diff.norm(p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2``
    (..., R, M): (..., P, R); the batch dims broadcast. ``p`` >= 0, inf included. The norm's
    gradient at a zero difference is zero, so equal rows give finite (zero) gradients.
    ``compute_mode`` is accepted for PyTorch compatibility (the distances are always taken
    from the differences).

    >>> minitorch.cdist(minitorch.zeros(2, 3), minitorch.ones(4, 3)).shape
    minitorch.Size([2, 4])
    """
    check_input(x1, "cdist")
    if not isinstance(x2, Tensor):
        raise TypeError(f"cdist(): argument 'x2' must be a Tensor, not {type(x2).__name__}")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise _C.InputError(f"cdist: {compute_mode!r} is not a valid value for compute_mode")
    p = _norm_order("cdist", p)
    if p < 0:
        raise _C.InputError(f"cdist: only supports non-negative p values, got p={p}")
    for name, x in (("x1", x1), ("x2", x2)):
        if not x.dtype.is_floating_point:
            raise _C.DTypeError(f"cdist: only supports floating point dtypes, {name} is {x.dtype.name}")
        if x.ndim < 2:
            raise _C.InputError(f"cdist: {name} must be at least 2-D (..., rows, features), got shape "
                                f"{tuple(x.shape)}")
    if x1.dtype != x2.dtype:
        raise _C.DTypeError(f"cdist: x1 and x2 must have the same dtype, got {x1.dtype.name} and {x2.dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise _C.InputError(f"cdist: x1 and x2 must have the same number of columns, got shapes "
                            f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    return diff.norm(float(p), dim=-1)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance between every pair of rows ``i < j`` of ``input`` (N, M), in the
    order of the upper triangle, row by row: N (N - 1) / 2 values (``cdist(x, x)`` above its
    diagonal). ``p`` >= 0, inf included; equal rows give zero (and finite) gradients.

    >>> minitorch.pdist(minitorch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.242640495300293]
    """
    check_input(input, "pdist")
    p = _norm_order("pdist", p)
    if input.ndim != 2:
        raise _C.InputError(f"pdist: only supports 2D tensors, got: {input.ndim}D (shape {tuple(input.shape)})")
    if not input.dtype.is_floating_point:
        raise _C.DTypeError(f"pdist: only supports floating-point dtypes, got {input.dtype.name}")
    if p < 0:
        raise _C.InputError(f"pdist: only supports non-negative p values, got p={p}")
    from .creation import triu_indices
    rows, cols = triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    return (input.index_select(0, rows) - input.index_select(0, cols)).norm(p, dim=-1)


def renorm(self, p: float, dim: int, maxnorm: float) -> Tensor:
    """``self`` with each slice along ``dim`` (``self.select(dim, i)``) whose p-norm exceeds
    ``maxnorm`` scaled down to norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as PyTorch);
    the other slices unchanged. The weight clipping of old max-norm regularizers.

    >>> minitorch.tensor([[3.0, 4.0], [0.3, 0.4]]).renorm(2, 0, 1.0).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    p = _norm_order("renorm", p)
    if not isinstance(maxnorm, (int, float)) or isinstance(maxnorm, bool):
        raise TypeError(f"renorm(): argument 'maxnorm' must be a number, not {type(maxnorm).__name__}")
    if not self.dtype.is_floating_point:
        raise _C.DTypeError(f"renorm: expected a floating point tensor, got {self.dtype.name}")
    if p <= 0:
        raise _C.InputError(f"renorm: non-positive-norm not supported (p={p})")
    if maxnorm < 0:
        raise _C.InputError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.ndim < 2:
        raise _C.InputError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    d = _wrap(dim, self.ndim, "renorm")
    norms = self.norm(p, dim=tuple(k for k in range(self.ndim) if k != d), keepdim=True)
    return self * _C.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


@numpy_names
def cross(self, other: Tensor, dim=None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (the operands have the same number of dims;
    the others broadcast). Without ``dim``, the first dim of size 3, with PyTorch's warning
    that this default is deprecated (``torch.linalg.cross`` takes -1).

    >>> minitorch.cross(minitorch.tensor([1.0, 0, 0]), minitorch.tensor([0.0, 1, 0]), dim=0).tolist()
    [0.0, 0.0, 1.0]
    """
    import numpy as np
    if not isinstance(other, Tensor):
        raise TypeError(f"cross(): argument 'other' must be a Tensor, not {type(other).__name__}")
    if self.ndim != other.ndim:
        raise _C.InputError(f"cross: inputs must have the same number of dimensions, got shapes {tuple(self.shape)} "
                            f"and {tuple(other.shape)}")
    try:
        shape = tuple(np.broadcast_shapes(tuple(self.shape), tuple(other.shape)))
    except ValueError:
        raise _C.InputError(f"cross: shapes {tuple(self.shape)} and {tuple(other.shape)} do not broadcast") from None
    if dim is None:
        import warnings
        warnings.warn("Using minitorch.cross without specifying the dim arg is deprecated: it takes the first dim of "
                      "size 3. Pass dim explicitly (torch.linalg.cross's default is -1).", UserWarning, stacklevel=2)
        d = next((i for i, n in enumerate(shape) if n == 3), None)
        if d is None:
            raise _C.InputError(f"cross: no dimension of size 3 in input (shapes {tuple(self.shape)} and "
                                f"{tuple(other.shape)})")
    else:
        d = _wrap(dim, self.ndim, "cross")
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise _C.InputError(f"cross: inputs dimension {d} must have length 3, got {self.shape[d]} and "
                            f"{other.shape[d]}")
    a0, a1, a2 = (self.narrow(d, k, 1) for k in range(3))
    b0, b1, b2 = (other.narrow(d, k, 1) for k in range(3))
    out = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    from .join import cat
    return cat(out, d)  # the products broadcast the other dims


def outer(self, vec2: Tensor) -> Tensor:
    """Outer product of two vectors: ``out[i, j] = self[i] * vec2[j]``."""
    if not isinstance(vec2, Tensor):
        raise TypeError(f"outer(): argument 'vec2' must be a Tensor, not {type(vec2).__name__}")
    if self.ndim != 1 or vec2.ndim != 1:
        raise _C.InputError(f"outer: expected 1-D tensors, got shapes {tuple(self.shape)} and {tuple(vec2.shape)}")
    return self.unsqueeze(1) * vec2.unsqueeze(0)


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors: ``out[i, j] = input[i] * vec2[j]`` (``outer``'s older name)."""
    check_input(input, "ger")
    return outer(input, vec2)


def inner(self, other: Tensor) -> Tensor:
    """Inner product over the last dim: ``out[i..., j...] = sum_k self[i..., k] * other[j..., k]``,
    shape ``self.shape[:-1] + other.shape[:-1]``; with a 0-dim operand, the product. One
    ``tensordot`` (a matmul of the operands folded to matrices).

    >>> minitorch.inner(minitorch.ones(2, 3), minitorch.ones(4, 3)).shape
    minitorch.Size([2, 4])
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"inner(): argument 'other' must be a Tensor, not {type(other).__name__}")
    if _C.dtype.bool in (self.dtype, other.dtype):
        raise _C.DTypeError("inner: not implemented for bool tensors")
    if self.ndim == 0 or other.ndim == 0:
        return self * other
    if self.dtype != other.dtype:
        raise _C.DTypeError(f"inner: expected both inputs to have the same dtype, got {self.dtype.name} and "
                            f"{other.dtype.name}")
    if self.shape[-1] != other.shape[-1]:
        raise _C.InputError(f"inner: the last dimension must match on both input tensors but got shapes "
                            f"{tuple(self.shape)} and {tuple(other.shape)}")
    return tensordot(self, other, dims=([-1], [-1]))


def vdot(self, other: Tensor) -> Tensor:
    """Dot product of two 1-D tensors of one length and dtype (NumPy's ``vdot``; it would
    conjugate ``self`` first, and minitorch has no complex numbers), as a 0-dim tensor."""
    sa, sb = _shapes_of("vdot", self, other, (1, 1))
    if sa != sb:
        raise _C.InputError(f"vdot: the vectors have different lengths ({sa[0]} != {sb[0]})")
    if self.dtype != other.dtype:
        raise _C.DTypeError(f"vdot: expected both vectors to have same dtype, but found {self.dtype.name} and "
                            f"{other.dtype.name}")
    return self.matmul(other)


def chain_matmul(*matrices) -> Tensor:
    """The product of 2-D matrices ``A @ B @ ... @ Z`` (one matrix: a copy of it). Deprecated,
    as in PyTorch: ``minitorch.linalg.multi_dot`` takes a list and vectors at both ends."""
    warnings.warn("minitorch.chain_matmul is deprecated and will be removed in a future release. Use "
                  "minitorch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise _C.InputError("chain_matmul(): Expected one or more matrices")
    for k, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): expected Tensor as element {k} in argument 'matrices', but got "
                            f"{type(m).__name__}")
        if m.ndim != 2:
            raise _C.InputError(f"chain_matmul(): matrix {k} must be 2-D, got shape {tuple(m.shape)}")
    if len(matrices) == 1:
        return matrices[0].clone()
    from .. import linalg
    return linalg.multi_dot(list(matrices))


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
