"""Indexing by tensors of positions: PyTorch's signatures over C++ ops, each one kernel
per device with its own backward (``cpp/src/ops/indexing.cpp``, ``index_select.cpp``).

- ``gather`` / ``scatter`` / ``scatter_add`` / ``scatter_reduce`` (along one dim),
  ``index_add`` / ``index_copy`` / ``index_fill`` / ``index_reduce`` (whole slices: a
  scatter with an expanded index),
  ``index_put`` (index tensors on the first dims), ``masked_fill``, ``masked_select`` and
  ``nonzero`` are ``_C`` calls; this module checks the Python-level arguments and turns
  numbers into 0-dim tensors.
- ``x[mask]``, ``x[idx0, idx1]``, ``x[:, idx]`` (NumPy's advanced indexing; the C++
  ``__getitem__`` sends only these here) apply the slices and ``None`` as views, move the
  indexed dims to the front (a view) and call ``_C._index`` / ``_C._index_put_``: one
  kernel that reads the index tensors where they lie and checks them itself (on a GPU
  the error comes at the next synchronization, as in PyTorch), so nothing waits for the
  GPU but a mask's ``nonzero``.
- ``take_along_dim`` is a ``gather`` of its operands broadcast against each other;
  ``repeat_interleave`` an ``index_select`` of repeated positions.
- ``nonzero`` / ``masked_select`` size their result by the number of True values, so
  the host reads that count (PyTorch waits for the GPU there too).

Each op function takes the tensor first and is both ``Tensor.<name>`` and
``minitorch.<name>`` (attached by ops/registry.py from ops/declarations.py); their in-place
forms (``scatter_``, ``index_add_``...) are ops/inplace.py's ``inplace_form``.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _C
from .._C import Tensor
from .._tensor import _wrap
from .creation import full, tensor
from ._args import numpy_names


def _check_index_tensor(op: str, index) -> None:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be a Tensor, not {type(index).__name__}")


def _dim(op: str, dim) -> int:
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    return int(dim)


@numpy_names
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j][k] = input[i][index[i][j][k]][k]`` for ``dim=1`` (likewise for any dim);
    ``out`` has the shape of ``index``. One kernel (``ops/indexing.cpp``).

    >>> x = minitorch.tensor([[1, 2], [3, 4]])
    >>> minitorch.gather(x, 1, minitorch.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    _check_index_tensor("gather", index)
    return _C._gather(input, _dim("gather", dim), index)


def _scatter(op: str, input: Tensor, dim: int, index: Tensor, src, value, add: bool) -> Tensor:
    _check_index_tensor(op, index)
    if src is None:
        src = value
    if isinstance(src, numbers.Number):
        src = full((), src, dtype=input.dtype, device=input.device)
    elif not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be a Tensor or a number, not {type(src).__name__}")
    return _C._scatter(input, _dim(op, dim), index, src, add)


@numpy_names
def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written at the
    positions ``index`` names along ``dim``: ``out[i][index[i][j]] = src[i][j]`` for ``dim=1``.
    Where two elements name one position, one of them is kept (the last on the CPU)."""
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise _C.InputError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
        if reduce == "multiply":
            # scatter_reduce's product (of src expanded from a value), including self
            _check_index_tensor("scatter", index)
            src = value if src is None else src
            if isinstance(src, numbers.Number):
                src = full((), src, dtype=input.dtype, device=input.device).expand(index.shape)
            elif not isinstance(src, Tensor):
                raise TypeError(f"scatter(): argument 'src' must be a Tensor or a number, not {type(src).__name__}")
            elif src.ndim != index.ndim and src.numel() == 1:
                src = src.reshape(()).expand(index.shape)
            return _C._scatter_reduce(input, _dim("scatter", dim), index, src, "prod", True)
        return _scatter("scatter", input, dim, index, src, value, add=True)
    return _scatter("scatter", input, dim, index, src, value, add=False)


@numpy_names
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at the positions ``index`` names along
    ``dim``; positions named twice get both values."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be a Tensor, not {type(src).__name__}")
    return _scatter("scatter_add", input, dim, index, src, None, add=True)


@numpy_names
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of ``input`` with each element of ``src`` reduced into the position ``index``
    names along ``dim`` (``out[i][index[i][j]] op= src[i][j]`` for ``dim=1``), ``reduce``
    being ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``. With
    ``include_self=False`` the positions ``index`` names start from ``src``'s values alone
    (``input``'s value there is left out); the others keep ``input``'s value. ``"mean"``
    rounds integers down. One kernel per device (two with ``include_self=False``; mean adds
    its count); on a GPU, values meeting at one place combine atomically, so a sum's or a
    product's last bits may vary from run to run, as in PyTorch.

    >>> x = minitorch.tensor([1., 2., 3.])
    >>> x.scatter_reduce(0, minitorch.tensor([0, 0, 2]), minitorch.tensor([5., 6., 7.]), "amax")
    tensor([6., 2., 7.])
    """
    _check_index_tensor("scatter_reduce", index)
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be a Tensor, not {type(src).__name__}")
    if not isinstance(reduce, str):
        raise TypeError(f"scatter_reduce(): argument 'reduce' must be a str, not {type(reduce).__name__}")
    return _C._scatter_reduce(input, _dim("scatter_reduce", dim), index, src, reduce, bool(include_self))


@numpy_names
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` with slice ``i`` of ``source`` along ``dim`` reduced into slice
    ``index[i]`` (``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``; ``include_self`` as in
    ``scatter_reduce``): one ``scatter_reduce`` whose index is ``index`` expanded over
    ``source`` (no copy of it)."""
    d = _index_write("index_reduce", input, dim, index, source)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise _C.InputError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce!r}")
    nd = max(input.ndim, 1)
    if not -nd <= d < nd:
        raise IndexError(f"index_reduce(): dim {d} is out of range for a tensor of {input.ndim} dimensions")
    d %= nd
    if index.ndim > 1:
        raise _C.InputError(f"index_reduce(): index must be 0-D or 1-D, got shape {tuple(index.shape)}")
    want = list(input.shape) if input.ndim else [1]
    want[d] = index.numel()
    have = list(source.shape) if source.ndim else [1]
    if have != want:
        raise _C.InputError(
            f"index_reduce(): source of shape {tuple(source.shape)} does not fit {index.numel()} indices along "
            f"dim {d} of self with shape {tuple(input.shape)} (expected source shape {tuple(want)})")
    if source.dtype != input.dtype:
        raise TypeError(f"index_reduce(): self ({input.dtype}) and source ({source.dtype}) must have the same dtype")
    if input.ndim == 0:
        return _C._scatter_reduce(input, 0, index.reshape(-1), source.reshape(-1), reduce, bool(include_self))
    ones = [1] * input.ndim
    ones[d] = index.numel()
    idx = index.reshape(ones).expand(source.shape)
    return _C._scatter_reduce(input, d, idx, source, reduce, bool(include_self))


def _index_write(op: str, input: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    _check_index_tensor(op, index)
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be a Tensor, not {type(source).__name__}")
    return _dim(op, dim)


@numpy_names
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source[i]`` added to slice ``index[i]`` along ``dim``."""
    return _C._index_add(input, _index_write("index_add", input, dim, index, source), index, source, float(alpha))


@numpy_names
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with slice ``index[i]`` along ``dim`` replaced by ``source[i]``."""
    return _C._index_copy(input, _index_write("index_copy", input, dim, index, source), index, source)


@numpy_names
def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of ``input`` with the slices ``index`` along ``dim`` set to ``value``."""
    d = _index_write("index_fill", input, dim, index, input)
    if not isinstance(value, Tensor):
        value = full((), value, dtype=input.dtype, device=input.device)
    return _C._index_fill(input, d, index, value)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Positions of the non-zero elements: an int64 ``(n, ndim)`` tensor, or with
    ``as_tuple=True`` one 1-D tensor per dim (as ``numpy.nonzero``). The result's size
    depends on the values, so the host reads their count (PyTorch waits there too)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not as_tuple:
        return _C._nonzero(input)
    pos = _C._nonzero(input.reshape(1) if input.ndim == 0 else input)
    return tuple(p.contiguous() for p in pos.unbind(1))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: an int64 ``(n, ndim)`` tensor of positions."""
    return nonzero(input)


def _as_index(arr: np.ndarray, device) -> Tensor:
    return tensor(np.ascontiguousarray(arr, dtype=np.int64), device=device)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where ``mask`` (bool, broadcastable with it) is True,
    as a 1-D tensor."""
    if not isinstance(mask, Tensor) or mask.dtype != _C.dtype.bool:
        raise _C.DTypeError(f"masked_select: expected a bool mask tensor, got "
                            f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}")
    return _C._masked_select(input, mask)



def _masked_fill_args(op: str, self: Tensor, mask, value) -> Tensor:
    """masked_fill's and masked_fill_'s arguments checked; a number value becomes a 0-dim
    tensor of self's dtype (on the CPU: a GPU kernel takes it as an argument)."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}(): argument 'mask' must be a Tensor, not {type(mask).__name__}")
    if isinstance(value, numbers.Number):
        return full((), value, dtype=self.dtype)
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument 'value' must be a number or a 0-dim Tensor, not {type(value).__name__}")
    return value


def masked_fill(self, mask: Tensor, value) -> Tensor:
    """A copy of ``self`` with ``value`` where ``mask`` (bool, broadcastable to self) is True.

    >>> scores.masked_fill(~causal, float("-inf"))   # hide the future in attention
    """
    return _C._masked_fill(self, mask, _masked_fill_args("masked_fill", self, mask, value))


def masked_fill_(self, mask: Tensor, value) -> Tensor:
    """In-place :meth:`masked_fill`: ``value`` written into ``self`` where ``mask`` is True, in
    one pass over ``self`` (``att.masked_fill_(~causal, float("-inf"))``); returns ``self``."""
    _C._masked_fill_(self, mask, _masked_fill_args("masked_fill_", self, mask, value))
    return self

# ------------------------------------------------------------- advanced indexing ----

def _to_index_tensor(item, device):
    """A tensor index from a Tensor, list or array (bool or int64)."""
    if isinstance(item, Tensor):
        t = item
    else:
        t = tensor(item)
    if t.dtype == _C.dtype.uint8:  # a mask, as in PyTorch (which warns that this use is deprecated)
        t = t.bool()
    elif t.dtype in (_C.dtype.int32, _C.dtype.int16, _C.dtype.int8):
        t = t.long()
    elif t.dtype not in (_C.dtype.int64, _C.dtype.bool):
        if t.numel() == 0:
            t = t.long()
        else:
            raise IndexError(f"index: tensors used as indices must be long, int, byte or bool, got {t.dtype}")
    return t.to(device) if t.device != device else t


def _expand_items(x: Tensor, idx) -> list:
    """The index as a list of items, one per dim of x (Ellipsis expanded, trailing ':' added),
    with None kept; bool tensors become one int64 tensor per dim they cover."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    conv = []
    for it in items:
        if isinstance(it, bool):
            raise TypeError("index: indexing with a Python bool is not supported")
        if isinstance(it, (list, np.ndarray)) or (isinstance(it, Tensor) and (it.ndim > 0 or it.dtype == _C.dtype.bool)):
            conv.append(_to_index_tensor(it, x.device))
        else:
            conv.append(it)
    used = sum(it.ndim if isinstance(it, Tensor) and it.dtype == _C.dtype.bool else
               (0 if it is None or it is Ellipsis else 1) for it in conv)
    if sum(it is Ellipsis for it in conv) > 1:
        raise IndexError("index: an index can only have a single ellipsis ('...')")
    if used > x.ndim:
        raise IndexError(f"index: too many indices for tensor of dimension {x.ndim} (got {used})")
    out = []
    for it in conv:
        if it is Ellipsis:
            out.extend([slice(None)] * (x.ndim - used))
            used = x.ndim
        else:
            out.append(it)
    out.extend([slice(None)] * (x.ndim - used))
    return out


def _split_mask(mask: Tensor, dims_shape) -> list:
    """A bool mask over len(dims_shape) dims as one int64 index per dim: the columns of
    nonzero(mask), as views (the kernel reads every k-th value)."""
    if tuple(mask.shape) != tuple(dims_shape):
        raise IndexError(f"index: the shape of the mask {tuple(mask.shape)} does not match the shape of the "
                         f"indexed tensor {tuple(dims_shape)}")
    pos = _C._nonzero(mask)
    return [pos[:, k] for k in range(mask.ndim)]


def _plan(x: Tensor, idx):
    """Applies the basic items (slices, None) as views and collects the advanced ones.

    Returns (view, adv) where adv maps a dim of `view` to its int64 index tensor."""
    items = _expand_items(x, idx)
    view, d, adv = x, 0, {}
    for it in items:
        if it is None:
            view = view.unsqueeze(d)
            d += 1
        elif isinstance(it, slice):
            if it != slice(None):  # ':' keeps the dim as it is: no view needed
                view = view[(slice(None),) * d + (it,)]
            d += 1
        elif isinstance(it, Tensor) and it.dtype == _C.dtype.bool:
            if it.ndim == 0:  # x[True] adds a dim of size 1 (x[False] of size 0)
                view = view.unsqueeze(d)
                adv[d] = _as_index(np.zeros(1 if bool(it) else 0, np.int64), x.device)
                d += 1
                continue
            parts = _split_mask(it, tuple(view.shape[d:d + it.ndim]))
            for p in parts:
                adv[d] = p
                d += 1
        else:  # an int, or an int64 tensor
            t = it if isinstance(it, Tensor) else _as_index(np.asarray(int(it)), x.device)
            adv[d] = t
            d += 1
    return view, adv


def _to_front(view: Tensor, adv: dict):
    """``view`` with its advanced dims moved to the front (a view), their index tensors in
    that order, the order of the dims, and where NumPy puts the broadcast index dims in the
    result: advanced dims next to each other keep their place; apart, they go first."""
    dims = sorted(adv)
    order = dims + [d for d in range(view.ndim) if d not in adv]
    moved = view if order == list(range(view.ndim)) else view.permute(*order)
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    return moved, [adv[d] for d in dims], order, dims[0] if adjacent else 0


def getitem(x: Tensor, idx) -> Tensor:
    """``x[idx]`` for advanced indices (called by Tensor.__getitem__): the indexed dims are
    moved to the front (a view) and read by one kernel (``_C._index``), which checks the
    indices where they are (on a GPU, reported at the next synchronization)."""
    view, adv = _plan(x, idx)
    moved, indices, _, front = _to_front(view, adv)
    out = _C._index(moved, indices)
    if front:
        nb = out.ndim - (moved.ndim - len(indices))
        perm = list(range(nb, nb + front)) + list(range(nb)) + list(range(nb + front, out.ndim))
        out = out.permute(*perm)
    return out


def setitem(x: Tensor, idx, value) -> None:
    """``x[idx] = value`` for advanced indices (called by Tensor.__setitem__): the indexed
    dims are moved to the front (a view of x) and ``value`` is written there in place by
    one kernel (``_C._index_put_``); inside a graph the write is recorded (rebased)."""
    if isinstance(idx, Tensor) and idx.dtype not in (_C.dtype.bool, _C.dtype.uint8) or isinstance(idx, list) and idx and \
            not isinstance(idx[0], bool):
        idx = (idx,)
    view, adv = _plan(x, idx)
    moved, indices, _, front = _to_front(view, adv)
    del view  # moved may be a view of x: a write inside a graph wants no other views alive
    if not isinstance(value, Tensor):
        value = tensor(value, dtype=x.dtype, device=x.device)
    elif value.ndim == 0 and value.device != x.device:  # a 0-dim value is a number, as in PyTorch
        value = value.to(x.device)
    value = value.to(x.dtype)
    if front:  # value is laid out as the result of x[idx] is: bring the index dims to the front
        bshape = tuple(np.broadcast_shapes(*[tuple(i.shape) for i in indices]))
        rest_shape = tuple(moved.shape[len(indices):])
        nb = len(bshape)
        shown = tuple(rest_shape[:front]) + bshape + tuple(rest_shape[front:])
        value = _broadcast_value(value, shown)
        perm = list(range(front, front + nb)) + list(range(front)) + list(range(front + nb, len(shown)))
        value = value.permute(*perm)
    _C._index_put_(moved, indices, value, False)


def _broadcast_value(value: Tensor, shape: tuple) -> Tensor:
    while value.ndim > len(shape) and value.shape[0] == 1:
        value = value[0]
    try:
        return value.expand(shape)
    except (ValueError, RuntimeError):
        raise _C.InputError(f"index_put_: shape mismatch: value tensor of shape {tuple(value.shape)} cannot be "
                            f"broadcast to indexing result of shape {shape}") from None


def _put_args(op: str, input: Tensor, indices, values):
    """index_put's arguments checked: the indexed view of ``input`` (the indexed dims moved to
    the front when ``None`` stands for a whole dim), its index tensors, the values in
    ``input``'s dtype, and the dim order of the view (None: ``input`` itself)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' must be a tuple of Tensors")
    indices = tuple(indices)
    for i in indices:
        if i is not None and not isinstance(i, Tensor):
            raise TypeError(f"{op}(): indices must be Tensors or None, got {type(i).__name__}")
    if not isinstance(values, Tensor):  # a number: copied to the device, no fill kernel
        values = tensor(values, dtype=input.dtype, device=input.device)
    elif values.ndim == 0 and values.device != input.device:  # a 0-dim value is a number, as in PyTorch
        values = values.to(input.device)
    values = values.to(input.dtype)
    if indices and all(isinstance(i, Tensor) for i in indices):
        return input, [_to_index_tensor(i, input.device) for i in indices], values, None
    view, adv = _plan(input, tuple(slice(None) if i is None else i for i in indices))
    if not adv:
        raise _C.InputError(f"{op}: expected at least one index tensor")
    moved, idx, order, _ = _to_front(view, adv)
    return moved, idx, values, order


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (``indices`` a
    tuple of index tensors, int64 or bool masks; ``None`` stands for a whole dim, as ``:``);
    with ``accumulate=True`` they are added instead. One kernel (``ops/indexing.cpp``);
    with ``None`` among the indices the indexed dims are moved to the front first (a view)."""
    target, idx, values, order = _put_args("index_put", input, indices, values)
    out = _C._index_put(target, idx, values, bool(accumulate))
    if order is None:
        return out
    inverse = [0] * len(order)
    for k, d in enumerate(order):
        inverse[d] = k
    return out.permute(*inverse).contiguous()


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``index_put`` written into ``self`` where it lies: one kernel (``_C._index_put_``),
    no copy of ``self``. Inside a graph the write is recorded, as other in-place ops are."""
    target, idx, values, _ = _put_args("index_put_", self, indices, values)
    _C._index_put_(target, idx, values, bool(accumulate))
    return self


@numpy_names
def take_along_dim(self, indices: Tensor, dim=None) -> Tensor:
    """The values of ``self`` at ``indices`` along ``dim`` (NumPy's ``take_along_axis``):
    a ``gather`` after broadcasting ``self`` and ``indices`` against each other on every
    dim but ``dim``. With ``dim=None`` both are flattened first.

    >>> x = minitorch.tensor([[10, 30, 20], [60, 40, 50]])
    >>> x.take_along_dim(x.argmax(1, keepdim=True), 1)
    tensor([[30],
            [60]])
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"take_along_dim(): argument 'indices' must be a Tensor, not {type(indices).__name__}")
    if indices.dtype != _C.dtype.int64:
        raise _C.DTypeError(f"take_along_dim(): dtype of indices should be int64 but got {indices.dtype}")
    if dim is None:
        return _C._gather(self.reshape(-1), 0, indices.reshape(-1))
    d = _dim("take_along_dim", dim)
    if self.ndim != indices.ndim:
        raise _C.InputError(f"take_along_dim(): input and indices should have the same number of dimensions, but got "
                            f"{self.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = _wrap(d, self.ndim, "take_along_dim")
    if self.ndim == 0:
        return _C._gather(self, 0, indices)
    sizes = list(self.shape)
    sizes[d] = indices.shape[d]
    try:
        shape = list(_C.broadcast_shapes(tuple(sizes), tuple(indices.shape)))
    except _C.InputError as e:
        raise _C.InputError(f"take_along_dim: input of shape {tuple(self.shape)} and indices of shape "
                            f"{tuple(indices.shape)} do not broadcast on the dims but {d} ({e})") from None
    idx = indices.expand(*shape)
    shape[d] = self.shape[d]
    return _C._gather(self.expand(*shape), d, idx)


def _repeat_counts(op: str, repeats, n: int, device) -> np.ndarray:
    """``repeats`` (an int, or a 0-dim / 1-dim int64 tensor of 1 or ``n`` counts) as ``n`` counts."""
    if isinstance(repeats, Tensor):
        if repeats.dtype != _C.dtype.int64:
            raise _C.DTypeError(f"{op}: repeats has to be an int64 tensor, but got {repeats.dtype}")
        if repeats.ndim > 1:
            raise _C.InputError(f"{op}: repeats must be 0-dim or 1-dim tensor, but got {repeats.ndim} dims")
        counts = repeats.detach().cpu().numpy().reshape(-1).astype(np.int64)
        if counts.size == 1:
            counts = np.full(n, counts[0], np.int64)
        elif counts.size != n:
            raise _C.InputError(f"{op}: repeats must have the same size as input along dim, but got "
                                f"repeats.size(0) = {counts.size} and input.size({0}) = {n}")
    else:
        if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral):
            raise TypeError(f"{op}(): argument 'repeats' must be an int or a Tensor, not {type(repeats).__name__}")
        counts = np.full(n, int(repeats), np.int64)
    if (counts < 0).any():
        raise _C.InputError(f"{op}: repeats can not be negative")
    return counts


@numpy_names
def repeat_interleave(self, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Repeats each element (each slice along ``dim``) ``repeats`` times in place, as
    ``numpy.repeat``: ``repeats`` is an int or a tensor of one count per slice. With
    ``dim=None`` the flattened tensor is repeated. ``repeat_interleave(counts)`` alone gives
    ``arange(len(counts))`` repeated by ``counts``.

    >>> minitorch.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
    if repeats is None:  # torch.repeat_interleave(repeats): self holds the counts
        counts = _repeat_counts("repeat_interleave", self, self.numel(), self.device)
        return _as_index(np.repeat(np.arange(counts.size, dtype=np.int64), counts), self.device)
    x = self.reshape(-1) if dim is None else self
    if dim is None:
        d = 0
    else:
        d = _wrap(_dim("repeat_interleave", dim), x.ndim, "repeat_interleave")
        if x.ndim == 0:
            x = x.reshape(1)
    counts = _repeat_counts("repeat_interleave", repeats, x.shape[d], x.device)
    total = int(counts.sum())
    if output_size is not None and output_size != total:
        raise _C.InputError(f"repeat_interleave: allocated size does not match required size "
                            f"(output_size={output_size}, sum of repeats={total})")
    idx = _as_index(np.repeat(np.arange(counts.size, dtype=np.int64), counts), x.device)
    return x.index_select(d, idx)


# ------------------------------------------- flat positions: take, put, masked_scatter ----
# The tensor seen as one row of ``numel()`` elements (row-major), as PyTorch's take / put_ do.

def _flat_positions(op: str, index, n: int) -> Tensor:
    """``index`` (int64, any shape) as a 1-D tensor of positions among ``n`` flattened
    elements: a negative one counts from the end. IndexError when one is out of range (the
    host reads the smallest and largest index to say which)."""
    _check_index_tensor(op, index)
    if index.dtype != _C.dtype.int64:
        raise _C.DTypeError(f"{op}(): Expected a long tensor for index, but got {index.dtype.name}")
    if index.numel():
        lo, hi = (int(v) for v in index.aminmax())
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(f"{op}(): out of range: tried to access index {bad} on a tensor of {n} elements")
    flat = index.reshape(-1)
    return _C.where(flat < 0, flat + n, flat)


def take(self, index: Tensor) -> Tensor:
    """The elements of ``self`` at ``index``, ``self`` read as if it were 1-D (row-major);
    the result has the shape of ``index``. Negative indices count from the end. An
    ``index_select`` of the flattened tensor, so its gradient adds back where it read.

    >>> minitorch.tensor([[4, 3, 5], [6, 7, 8]]).take(minitorch.tensor([0, 2, -1]))
    tensor([4, 5, 8])
    """
    pos = _flat_positions("take", index, self.numel())
    return self.reshape(-1).index_select(0, pos).reshape(tuple(index.shape))


def put(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``self`` with ``source``'s elements written at the flat positions ``index``
    (``self`` read as 1-D; negative positions count from the end); ``accumulate=True`` adds
    them instead, positions named twice getting both. ``index`` and ``source`` hold the same
    number of elements; ``source`` has ``self``'s dtype. One scatter of the flattened tensor.

    >>> minitorch.zeros(2, 2).put(minitorch.tensor([0, -1]), minitorch.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    if not isinstance(source, Tensor):
        raise TypeError(f"put(): argument 'source' must be a Tensor, not {type(source).__name__}")
    pos = _flat_positions("put", index, self.numel())
    if source.numel() != pos.numel():
        raise IndexError(f"put(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {pos.numel()}")
    if source.dtype != self.dtype:
        raise _C.DTypeError(f"put(): self and source expected to have the same dtype, but got "
                            f"self.dtype = {self.dtype.name} and source.dtype = {source.dtype.name}")
    out = _C._scatter(self.reshape(-1), 0, pos, source.reshape(-1), bool(accumulate))
    return out.reshape(tuple(self.shape))


def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``self`` (broadcast with ``mask``) whose elements where ``mask`` is True take,
    in row-major order, the first elements of ``source`` (which needs at least as many as
    there are True values). The count of True values sizes the write, so the host reads it.

    >>> x = minitorch.zeros(2, 2)
    >>> x.masked_scatter(minitorch.tensor([True, False]), minitorch.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 0.],
            [2., 0.]])
    """
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_scatter(): argument 'mask' must be a Tensor, not {type(mask).__name__}")
    if not isinstance(source, Tensor):
        raise TypeError(f"masked_scatter(): argument 'source' must be a Tensor, not {type(source).__name__}")
    if mask.dtype != _C.dtype.bool:
        raise _C.DTypeError(f"masked_scatter: only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    if source.dtype != self.dtype:
        raise _C.DTypeError(f"masked_scatter: expected self and source to have same dtypes but got "
                            f"{self.dtype.name} and {source.dtype.name}")
    try:
        shape = _C.broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    except _C.InputError:
        raise _C.InputError(f"masked_scatter: mask of shape {tuple(mask.shape)} does not broadcast with self of "
                            f"shape {tuple(self.shape)}") from None
    pos = _C._nonzero(mask.expand(*shape).reshape(-1)).reshape(-1)
    k = pos.numel()
    if source.numel() < k:
        raise _C.InputError(f"masked_scatter: the mask holds {k} True values but source has only "
                            f"{source.numel()} elements")
    values = source.reshape(-1)[:k]
    return _C._scatter(self.expand(*shape).reshape(-1), 0, pos, values, False).reshape(tuple(shape))


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of the flat (row-major) positions ``indices``:
    one int64 tensor per dim, each of ``indices``' shape. As in PyTorch, positions are not
    checked: one outside ``[0, prod(shape))`` wraps around (a negative one counts from the end).

    >>> minitorch.unravel_index(minitorch.tensor([4, 1]), (3, 2))
    (tensor([2, 0]), tensor([0, 1]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype == _C.dtype.bool:
        raise TypeError(f"unravel_index(): expected 'indices' to be an integer tensor, but got {indices.dtype.name}")
    dims = [shape] if isinstance(shape, numbers.Integral) and not isinstance(shape, bool) else shape
    if not isinstance(dims, (tuple, list)) or any(isinstance(s, bool) or not isinstance(s, numbers.Integral)
                                                  for s in dims):
        raise TypeError(f"unravel_index(): expected 'shape' to be an int or a sequence of ints, but got {shape!r}")
    dims = [int(s) for s in dims]
    if any(s < 0 for s in dims):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, but got {tuple(dims)}")
    if 0 in dims and indices.numel():
        raise ValueError(f"unravel_index(): a tensor of shape {tuple(dims)} has no elements to index")
    flat = indices.long()
    out, stride = [], 1
    for size in reversed(dims):
        out.append((flat // stride) % size if size else flat * 0)
        stride *= max(size, 1)
    return tuple(reversed(out))
