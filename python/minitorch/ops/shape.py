"""Ops that rearrange a tensor: ``movedim`` (a ``permute``), ``unflatten`` (a ``view``) and
``ravel`` (a ``reshape``) are views where they can be; ``flip``, ``repeat``, ``roll``,
``tril``, ``triu`` and ``constant_pad_nd`` are C++ ops (``cpp/src/ops/shape.cpp``, one remap
kernel each) whose arguments are parsed here. ``tile``, ``rot90``, ``broadcast_to``,
``atleast_1d/2d/3d``, ``diag``, ``diag_embed`` and ``diagonal`` are compositions of those and
of ``where`` / ``index_select``, so their gradients are those ops'; ``fill_diagonal_`` is a
``masked_fill`` written in place.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _C
from .._C import Tensor
from .._tensor import _wrap, dim_tuple
from ._args import int_arg, ints_arg, varargs, numpy_names


def movedim(self, source, destination) -> Tensor:
    """Moves dim(s) ``source`` to position(s) ``destination``; the other dims keep their
    order. A view (a ``permute``).

    >>> minitorch.zeros(2, 3, 4).movedim(0, -1).shape
    minitorch.Size([3, 4, 2])
    """
    src = dim_tuple(source, self.ndim, "movedim", "source")
    dst = dim_tuple(destination, self.ndim, "movedim", "destination")
    if len(src) != len(dst):
        raise _C.InputError(f"movedim: source {source} and destination {destination} must name the same number "
                            f"of dims ({len(src)} != {len(dst)})")
    if self.ndim == 0:
        return self.view(())
    order = [None] * self.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(self.ndim) if d not in src)
    return self.permute(*(next(rest) if o is None else o for o in order))


@numpy_names
def unflatten(self, dim: int, sizes) -> Tensor:
    """Splits dim ``dim`` into ``sizes`` (one of them may be -1); a view.

    >>> minitorch.zeros(2, 12).unflatten(1, (3, -1)).shape
    minitorch.Size([2, 3, 4])
    """
    if self.ndim == 0:
        raise IndexError("unflatten: a 0-dim tensor has no dimension to unflatten")
    d = _wrap(dim, self.ndim, "unflatten")
    sizes = tuple(sizes) if isinstance(sizes, (tuple, list)) else (sizes,)
    if not sizes:
        raise _C.InputError("unflatten: sizes must be non-empty")
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) for s in sizes):
        raise TypeError(f"unflatten: sizes must be a tuple of ints, got {sizes}")
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise _C.InputError(f"unflatten: sizes {sizes} may hold one -1 and otherwise sizes >= 0")
    n, known = self.shape[d], 1
    for s in sizes:
        known *= s if s != -1 else 1
    if -1 in sizes:
        if known == 0 or n % known:
            raise _C.InputError(f"unflatten: sizes {sizes} cannot split dim {d} of size {n}")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise _C.InputError(f"unflatten: sizes {sizes} don't multiply up to the size of dim {d} ({n})")
    shape = tuple(self.shape)
    return self.view(shape[:d] + sizes + shape[d + 1:])


def flip(self, *dims_args, dims=None) -> Tensor:
    """Reverses the order of elements along ``dims`` (a copy, as in PyTorch); ``x.flip(0, 1)``,
    ``x.flip([0, 1])`` or ``x.flip(dims=[0, 1])``.

    >>> minitorch.tensor([[1, 2], [3, 4]]).flip(1)
    tensor([[2, 1],
            [4, 3]])
    """
    if dims is not None:
        if dims_args:
            raise TypeError("flip() got multiple values for argument 'dims'")
        dims_args = (dims,)
    return _C._flip(self, ints_arg("flip", "dims", varargs(dims_args)))


def repeat(self, *sizes) -> Tensor:
    """Tiles ``self``: ``sizes[i]`` copies along dim i (extra leading sizes add dims).

    >>> minitorch.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    return _C._repeat(self, ints_arg("repeat", "repeats", varargs(sizes)))


def unfold(self, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements, ``step`` apart, along ``dimension``: that dim
    becomes the number of windows, ``(n - size) // step + 1``, and a new last dim of
    ``size`` holds each window. A view (no copy): with ``step < size`` the windows overlap
    and share memory. Its gradient adds each window back where it lies.

    >>> minitorch.arange(6).unfold(0, 3, 2)
    tensor([[0, 1, 2],
            [2, 3, 4]])
    """
    return _C._unfold(self, int_arg("unfold", "dimension", dimension), int_arg("unfold", "size", size),
                      int_arg("unfold", "step", step))


def roll(self, shifts, dims=None) -> Tensor:
    """Shifts elements along ``dims`` by ``shifts``, wrapping around (the flattened tensor
    when ``dims`` is None).

    >>> minitorch.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3])
    """
    return _C._roll(self, ints_arg("roll", "shifts", shifts), [] if dims is None else ints_arg("roll", "dims", dims))


def constant_pad_nd(input, pad, value=0) -> Tensor:
    """``input`` padded with ``value``: ``pad = (left, right)`` for the last dim, then for the
    one before, and so on; negative amounts crop. One pass (``F.pad``'s constant mode).

    >>> minitorch.constant_pad_nd(minitorch.tensor([[1, 2]]), (1, 0, 0, 1), 7)
    tensor([[7, 1, 2],
            [7, 7, 7]])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"constant_pad_nd: input must be a Tensor, got {type(input).__name__}")
    return _C._constant_pad_nd(input, ints_arg("constant_pad_nd", "pad", pad), value)


def ravel(self) -> Tensor:
    """``self`` as a 1-D tensor, row-major: a view where the strides allow, else a copy
    (``reshape(-1)``; a 0-dim tensor gives one element).

    >>> minitorch.tensor([[1, 2], [3, 4]]).ravel()
    tensor([1, 2, 3, 4])
    """
    return self.reshape(-1)


def tril(self, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``); zeros above."""
    return _C._tril(self, int_arg("tril", "diagonal", diagonal))


def triu(self, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``); zeros below."""
    return _C._triu(self, int_arg("triu", "diagonal", diagonal))


# ---- compositions: tile, rot90, broadcast_to, atleast_*, diag, diag_embed, diagonal ----

def tile(self, *dims) -> Tensor:
    """``repeat`` after padding ``dims`` with leading 1s to ``self.ndim`` entries (fewer dims
    than the tensor repeat its last dims only).

    >>> minitorch.tensor([[1, 2], [3, 4]]).tile((2,)).shape
    minitorch.Size([2, 4])
    """
    reps = ints_arg("tile", "dims", varargs(dims))
    reps = [1] * (self.ndim - len(reps)) + reps
    return repeat(self, reps) if reps else self.clone()


def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotates by 90 degrees ``k`` times in the plane of ``dims``, from the first towards
    the second (as ``numpy.rot90``). A copy.

    >>> minitorch.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    k = int_arg("rot90", "k", k)
    dims = ints_arg("rot90", "dims", dims)
    if len(dims) != 2:
        raise _C.InputError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.ndim < 2:
        raise _C.InputError(f"rot90: expected total dims >= 2, but got total dims = {self.ndim}")
    d0, d1 = (_wrap(d, self.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise _C.InputError(f"rot90: expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(self, d1).transpose(d0, d1)
    if k == 2:
        return flip(self, d0, d1)
    if k == 3:
        return flip(self, d0).transpose(d0, d1)
    return self.clone()


def broadcast_to(self, size) -> Tensor:
    """``self`` broadcast to ``size`` (a view with stride 0 along the new and size-1 dims,
    an ``expand``; -1 keeps a size).

    >>> minitorch.tensor([1, 2, 3]).broadcast_to((2, 3)).shape
    minitorch.Size([2, 3])
    """
    size = ints_arg("broadcast_to", "size", size)
    try:
        return self.expand(*size)
    except _C.InputError as e:
        raise _C.InputError(f"broadcast_to: cannot broadcast a tensor of shape {tuple(self.shape)} to {tuple(size)} "
                            f"({e})") from None


def _atleast(op: str, ndim: int, tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)) else tensors
    for k, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {k} in argument 'tensors', but got {type(t).__name__}")
    out = []
    for t in ts:
        if t.ndim >= ndim:
            out.append(t)
        elif ndim == 3 and t.ndim == 2:
            out.append(t.unsqueeze(-1))
        elif ndim == 3 and t.ndim == 1:
            out.append(t.view(1, -1, 1))
        else:  # 0-dim to (1,)..., or 1-dim (n,) to (1, n)
            out.append(t.reshape((1,) * (ndim - max(t.ndim, 1)) + (tuple(t.shape) or (1,))))
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def atleast_1d(*tensors):
    """Each tensor as at least 1-D (a 0-dim one becomes shape (1,)); one tensor in, one out,
    otherwise a tuple. Views."""
    return _atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """Each tensor as at least 2-D: () -> (1, 1), (n,) -> (1, n). Views."""
    return _atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """Each tensor as at least 3-D: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1),
    as NumPy's ``atleast_3d``. Views."""
    return _atleast("atleast_3d", 3, tensors)


def _diagonal_length(n1: int, n2: int, offset: int) -> int:
    return max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))


def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` (above the main one when > 0, below when < 0) of the planes of
    dims ``dim1`` and ``dim2``, as the last dim of the result (the others keep their order).

    Unlike PyTorch, which returns a view, this is a copy (an ``index_select`` of the
    flattened planes: minitorch has no ``as_strided``); writing into it leaves ``self``
    unchanged. Its gradient is right.

    >>> minitorch.tensor([[1, 2], [3, 4]]).diagonal()
    tensor([1, 4])
    """
    offset = int_arg("diagonal", "offset", offset)
    d1 = _wrap(int_arg("diagonal", "dim1", dim1), self.ndim, "diagonal")
    d2 = _wrap(int_arg("diagonal", "dim2", dim2), self.ndim, "diagonal")
    if self.ndim < 2:
        raise IndexError(f"diagonal: dimension out of range (expected to be in range of [-1, 0], but got {dim2})")
    if d1 == d2:
        raise _C.InputError(f"diagonal: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _take_diagonal(self, offset, d1, d2)


def _take_diagonal(self, offset: int, d1: int, d2: int) -> Tensor:
    n1, n2 = self.shape[d1], self.shape[d2]
    n = _diagonal_length(n1, n2, offset)
    planes = movedim(self, (d1, d2), (-2, -1)).flatten(-2)  # (..., n1 * n2)
    start = offset if offset >= 0 else -offset * n2
    idx = _C._arange(start, start + n * (n2 + 1), n2 + 1, _C.dtype.int64, self.device)
    return planes.index_select(-1, idx)


def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonal ``offset`` of the planes of dims ``dim1``, ``dim2`` holds the
    last dim of ``self``, zeros elsewhere: (..., n) -> (..., n + |offset|, n + |offset|) for
    the default dims.

    >>> minitorch.tensor([1, 2]).diag_embed()
    tensor([[1, 0],
            [0, 2]])
    """
    offset = int_arg("diag_embed", "offset", offset)
    nd = self.ndim + 1
    d1 = _wrap(int_arg("diag_embed", "dim1", dim1), nd, "diag_embed")
    d2 = _wrap(int_arg("diag_embed", "dim2", dim2), nd, "diag_embed")
    if d1 == d2:
        raise _C.InputError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    v = self
    n = v.shape[-1]
    m = n + abs(offset)
    rows = _C._arange(0, m, 1, _C.dtype.int64, self.device).unsqueeze(1)
    cols = _C._arange(0, m, 1, _C.dtype.int64, self.device)
    on_diag = (cols - rows) == offset                          # (m, m)
    # the value at (i, j) on the diagonal is v[min(i, j)]: pad v with one zero to length m
    pad = _C._full(tuple(v.shape[:-1]) + (m - n,), 0.0, v.dtype, v.device)
    vals = _C._cat([v, pad], -1) if m > n else v              # (..., m)
    which = rows.expand(m, m) if offset >= 0 else cols.expand(m, m)
    spread = vals.index_select(-1, which.reshape(-1)).unflatten(-1, (m, m))
    zero = _C._full((), 0.0, v.dtype, v.device)
    out = _C.where(on_diag, spread, zero)                      # (..., m, m)
    return movedim(out, (-2, -1), (d1, d2))


def diag(self, diagonal: int = 0) -> Tensor:
    """A 1-D tensor to the square matrix with it on diagonal ``diagonal`` (zeros elsewhere);
    a 2-D tensor to its diagonal ``diagonal`` (a copy, see ``diagonal``).

    >>> minitorch.tensor([1, 2]).diag(1)
    tensor([[0, 1, 0],
            [0, 0, 2],
            [0, 0, 0]])
    """
    offset = int_arg("diag", "diagonal", diagonal)
    if self.ndim == 1:
        return diag_embed(self, offset)
    if self.ndim == 2:
        return _take_diagonal(self, offset, 0, 1)
    raise _C.InputError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")


def diagflat(self, offset: int = 0) -> Tensor:
    """The square matrix with the flattened ``self`` on its diagonal ``offset`` (above the main
    one when > 0), zeros elsewhere: ``diag`` of ``self.reshape(-1)``.

    >>> minitorch.tensor([[1, 2]]).diagflat()
    tensor([[1, 0],
            [0, 2]])
    """
    return diag_embed(self.reshape(-1), int_arg("diagflat", "offset", offset))


def fliplr(self) -> Tensor:
    """``self`` with the order of its columns (dim 1) reversed; at least 2-D. A copy."""
    if self.ndim < 2:
        raise _C.InputError(f"fliplr: Input must be >= 2-d, got shape {tuple(self.shape)}")
    return flip(self, 1)


def flipud(self) -> Tensor:
    """``self`` with the order of its rows (dim 0) reversed; at least 1-D. A copy."""
    if self.ndim < 1:
        raise _C.InputError("flipud: Input must be >= 1-d, got a 0-dim tensor")
    return flip(self, 0)


def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
    """Writes ``fill_value`` on the main diagonal of ``self`` (every index equal: ``self[i, i]``,
    or ``self[i, i, i]`` when all its dims have the same length); returns ``self``. With
    ``wrap``, a matrix taller than wide gets the diagonal again below each square block, every
    ``ncols + 1`` elements in row-major order, as NumPy's ``fill_diagonal`` (PyTorch's rule).

    >>> minitorch.zeros(5, 2).fill_diagonal_(1.0, wrap=True)
    tensor([[1., 0.],
            [0., 1.],
            [0., 0.],
            [1., 0.],
            [0., 1.]])
    """
    from .inplace import write_into
    if isinstance(fill_value, Tensor):
        if fill_value.numel() != 1:
            raise _C.InputError(f"fill_diagonal_: fill_value must be a number or a one-element tensor, got shape "
                                f"{tuple(fill_value.shape)}")
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number) or isinstance(fill_value, complex):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' must be a Number, not {type(fill_value).__name__}")
    if self.ndim < 2:
        raise _C.InputError(f"fill_diagonal_: dimensions must larger than 1, got a {self.ndim}-D tensor")
    height, width = self.shape[0], self.shape[1]
    if self.ndim > 2 and any(n != height for n in self.shape):
        raise _C.InputError(f"fill_diagonal_: all dimensions of input must be of equal length, got shape "
                            f"{tuple(self.shape)}")
    mask = np.zeros(tuple(self.shape), dtype=bool)
    if wrap and self.ndim == 2 and height > width + 1:
        mask.reshape(-1)[::width + 1] = True
    else:
        mask[(np.arange(min(height, width)),) * self.ndim] = True
    where = _C.from_numpy(mask).to(self.device)
    return write_into(self, "fill_diagonal_", lambda x: x.masked_fill(where, fill_value))
