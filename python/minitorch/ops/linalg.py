"""Linear algebra from ``matmul``: ``mm``, ``mv``, ``dot``, ``bmm``, ``baddbmm`` and ``addmm``, with PyTorch's
checks of the operands' dimensions (``matmul`` itself broadcasts; these do not); ``outer``
(a broadcast product); and ``einsum``, which contracts its operands left to right, each pair
with one batched matmul.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py), but ``einsum`` and ``ger`` (``outer``'s
older name), which are ``minitorch.<name>`` only.
"""
from __future__ import annotations

import collections

from .. import _C
from .._C import Tensor
from ._args import check_input
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
