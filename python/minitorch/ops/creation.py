"""Creating tensors: ``tensor`` from Python data, the factory functions (``zeros``, ``arange``,
``logspace``, ``rand``, the deprecated ``range``...), their ``*_like`` forms, and
``Tensor.new_*`` (a new tensor with ``self``'s dtype and device), ``tril_indices`` /
``triu_indices`` and ``vander`` (a ``cumprod`` of its input, so it has a gradient),
``scalar_tensor``, ``asarray`` (sharing memory where it can) and ``empty_strided`` (views of a
larger buffer). ops/registry.py makes ``minitorch.<name>`` and ``Tensor.new_*`` of them, as
ops/declarations.py declares them.
"""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from .. import _C
from .._C import Tensor

_VisibleDeprecationWarning = getattr(np, "exceptions", np).VisibleDeprecationWarning  # moved in NumPy 1.25

# NumPy dtypes we take as they are, and those we widen to the nearest supported one.
_NUMPY_KEEP = {"float32", "float64", "float16", "bfloat16",  # bfloat16: ml_dtypes' type
               "uint8", "int8", "int16", "int32", "int64", "bool"}
# (PyTorch's uint16/uint32 are barely supported shells; minitorch widens them to int64.)
_NUMPY_WIDEN = {
    "uint16": "int64",
    "uint32": "int64",
}


def _ragged_message(data) -> str:
    """Says where a nested list stops being rectangular, like PyTorch does."""

    def shape_of(x, dim, expected):
        if not isinstance(x, (list, tuple)):
            return
        if dim < len(expected):
            if len(x) != expected[dim]:
                raise ValueError(f"expected sequence of length {expected[dim]} at dim {dim} (got {len(x)})")
        else:
            expected.append(len(x))
        for item in x:
            shape_of(item, dim + 1, expected)

    try:
        shape_of(data, 0, [])
    except ValueError as e:
        return str(e)
    return "the nested sequence is ragged or mixes numbers and sequences"


def _as_numpy(data, op: str) -> np.ndarray:
    if isinstance(data, Tensor):
        return data.detach().cpu().numpy()
    try:
        with warnings.catch_warnings():  # NumPy < 1.24 warns about a ragged list (an object array follows)
            warnings.simplefilter("ignore", _VisibleDeprecationWarning)
            arr = np.asarray(data)
    except ValueError:  # NumPy >= 1.24 refuses ragged nested lists: only our message, as PyTorch's
        raise _C.InputError(f"{op}: {_ragged_message(data)}") from None
    if arr.dtype == object:
        if isinstance(data, (list, tuple)):
            raise _C.InputError(f"{op}: {_ragged_message(data)}")
        raise TypeError(f"{op}: could not infer dtype of {type(data).__name__}")
    return arr


def get_default_dtype():
    """The dtype of tensors made from Python floats and of float factories without a
    dtype: ``minitorch.float32`` unless :func:`set_default_dtype` changed it."""
    return _C._get_default_dtype()


def set_default_dtype(d) -> None:
    """Makes ``d`` (``minitorch.float32`` or ``minitorch.float64``) the default floating
    dtype: of ``minitorch.tensor([1.0])``, ``zeros(3)``, ``x_int * 0.5``, new layers'
    weights... As in PyTorch, integer and bool dtypes are refused.

    >>> minitorch.set_default_dtype(minitorch.float64)
    >>> minitorch.tensor([1.0]).dtype
    minitorch.float64
    """
    if not isinstance(d, _C.dtype):
        raise TypeError(f"set_default_dtype: expected a dtype such as minitorch.float64, got {type(d).__name__}")
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {d}")
    _C._set_default_dtype(d)


def _infer_dtype(data, arr: np.ndarray):
    """PyTorch's inference: Python floats -> the default dtype (float32); NumPy arrays keep theirs."""
    name = arr.dtype.name
    if isinstance(data, (np.ndarray, np.generic, Tensor)):
        if name in _NUMPY_KEEP:
            return _C.dtype.__members__[name]
        if name in _NUMPY_WIDEN:
            return _C.dtype.__members__[_NUMPY_WIDEN[name]]
        raise TypeError(
            f"tensor: can't convert np.ndarray of type {name}; the supported types are "
            "float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64 and bool"
        )
    kind = arr.dtype.kind
    if kind == "b":
        return _C.dtype.bool
    if kind in "iu":
        return _C.dtype.int64
    if kind == "f":
        return _C._get_default_dtype()
    raise TypeError(f"tensor: could not infer a dtype from data of NumPy kind {arr.dtype} (numbers and bools only)")


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, or an array).

    >>> minitorch.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    """
    arr = _as_numpy(data, "tensor")
    if dtype is None:
        dtype = _infer_dtype(data, arr)
    elif arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
        raise TypeError(f"tensor: can't convert data of NumPy dtype {arr.dtype} to a tensor")
    t = _C._from_numpy_copy(arr, dtype, device)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size, op: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean size (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if isinstance(s, builtins.bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{op}(): size must be a tuple of ints, but got an element of type {type(s).__name__}")
    return tuple(int(s) for s in size)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad = True
    return t


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (its values are whatever memory held)."""
    return _finish(_C._empty(_size(size, "empty"), dtype, device), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return _finish(_C._full(_size(size, "zeros"), 0.0, dtype, device), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _finish(_C._full(_size(size, "ones"), 1.0, dtype, device), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value when not given."""
    return _finish(_C._full(_size((size,), "full"), fill_value, dtype, device), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``arange(5)`` -> 0..4; ``arange(1, 2, 0.25)`` -> 1.0, 1.25, 1.5, 1.75."""
    if end is None:
        start, end = 0, start
    return _finish(_C._arange(start, end, step, dtype, device), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _finish(_C._linspace(start, end, steps, dtype, device), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end`` whose exponents are evenly
    spaced (``base ** linspace(start, end, steps)``, computed in float64, then cast: an
    integer dtype truncates). The default dtype unless ``dtype`` says otherwise.

    >>> minitorch.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    start, end, base = (v.item() if isinstance(v, Tensor) else v for v in (start, end, base))
    if isinstance(steps, builtins.bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"logspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise _C.InputError(f"logspace: number of steps must be non-negative, got {steps}")
    exponents = _C._linspace(start, end, int(steps), _C.dtype.float64, device)
    out = (base ** exponents).to(get_default_dtype() if dtype is None else dtype)
    return _finish(out, requires_grad)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A001
    """Deprecated (a UserWarning, as in PyTorch): ``start, start + step, ...`` up to ``end``
    *included*, ``floor((end - start) / step) + 1`` values, in the default floating dtype
    unless ``dtype`` says otherwise. Use :func:`arange`, which stops before ``end``.

    >>> minitorch.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    for what, v in (("start", start), ("end", end), ("step", step)):
        if not isinstance(v, numbers.Real):
            raise TypeError(f"range(): argument '{what}' must be Number, not {type(v).__name__}")
    if step == 0:
        raise _C.InputError("range: step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise _C.InputError(f"range: upper bound and lower bound inconsistent with step sign (start={start}, "
                            f"end={end}, step={step})")
    dtype = get_default_dtype() if dtype is None else dtype
    n = int(np.floor((end - start) / step)) + 1
    if not dtype.is_floating_point and all(isinstance(v, numbers.Integral) for v in (start, step)):
        out = _C._arange(start, start + n * step, step, dtype, device)
    else:
        out = (_C._arange(0, n, 1, _C.dtype.float64, device) * step + start).to(dtype)
    return _finish(out, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An ``n x m`` identity matrix (``m`` defaults to ``n``)."""
    return _finish(_C._eye(n, m, dtype, device), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples from [0, 1); reproducible after ``manual_seed``."""
    return _finish(_C._rand(_size(size, "rand"), dtype, device), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples; reproducible after ``manual_seed``."""
    return _finish(_C._randn(_size(size, "randn"), dtype, device), requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None) -> Tensor:
    """Integers from ``[low, high)``: ``randint(10, (3,))`` or ``randint(2, 10, (3,))``."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint(): missing the 'size' argument, e.g. randint(0, 10, (3,))")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    return _C._randint(low, high, _size((size,), "randint"), dtype, device)


def _like(t: Tensor, dtype, device):
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    return tuple(t.shape), (t.dtype if dtype is None else dtype), (t.device if device is None else device)


def empty_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    size, dtype, device = _like(input, dtype, device)
    return empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    size, dtype, device = _like(input, dtype, device)
    return zeros(size, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    size, dtype, device = _like(input, dtype, device)
    return ones(size, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    size, dtype, device = _like(input, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from ``[low, high)`` in a tensor of ``input``'s shape (and dtype
    and device unless given): ``randint_like(x, high)`` or ``randint_like(x, low, high)``;
    reproducible after ``manual_seed``.

    >>> minitorch.randint_like(minitorch.zeros(3), 10).shape
    minitorch.Size([3])
    """
    from .sampling import _check_random_range, _integers
    if high is None:  # randint_like(x, high)
        if isinstance(low, (int, np.integer)) and low == 0:  # randint_like(x): no high (nor one that could be)
            raise TypeError('randint_like() missing 1 required positional arguments: "high"')
        low, high = 0, low
    for what, v in (("low", low), ("high", high)):
        if isinstance(v, builtins.bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"randint_like(): argument '{what}' must be int, not {type(v).__name__}")
    size, dtype, device = _like(input, dtype, device)
    if low >= high:
        raise _C.InputError(f"randint_like: random_ expects 'from' to be less than 'to', but got from={low} >= "
                            f"to={high}")
    _check_random_range("randint_like", int(low), int(high) - 1, dtype)
    return _finish(_integers(size, int(low), int(high) - 1, device).to(dtype), requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    size, dtype, device = _like(input, dtype, device)
    return rand(size, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    size, dtype, device = _like(input, dtype, device)
    return randn(size, dtype=dtype, device=device, requires_grad=requires_grad)


# ---- x.new_*(...): a new tensor with x's dtype and device unless told otherwise ----

def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A copy of ``data`` as a tensor with ``self``'s dtype and device (unless given)."""
    _, dtype, device = _like(self, dtype, device)
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _new_factory(factory, op: str):
    """``x.new_zeros(*size, dtype=, device=, requires_grad=)`` and friends from ``zeros`` etc."""

    def new(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        _, dtype, device = _like(self, dtype, device)
        return factory(_size(size, op), dtype=dtype, device=device, requires_grad=requires_grad)

    new.__name__ = new.__qualname__ = op
    new.__doc__ = f"A new tensor like ``{factory.__name__}(*size)``, with ``self``'s dtype and device unless given."
    return new


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``full(size, fill_value)`` with ``self``'s dtype and device unless given."""
    _, dtype, device = _like(self, dtype, device)
    return full(_size((size,), "new_full"), fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``empty_strided(size, stride)`` with ``self``'s dtype and device unless given."""
    _, dtype, device = _like(self, dtype, device)
    return empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


new_empty = _new_factory(empty, "new_empty")
new_zeros = _new_factory(zeros, "new_zeros")
new_ones = _new_factory(ones, "new_ones")


def _tri_indices(op: str, keep, row, col, offset, dtype, device) -> Tensor:
    for what, v in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(v, builtins.bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{op}(): argument '{what}' must be an int, not {type(v).__name__}")
    if row < 0:
        raise _C.InputError(f"{op}: row must be non-negative, got {row}")
    if col < 0:
        raise _C.InputError(f"{op}: col must be non-negative, got {col}")
    r, c = np.indices((row, col)).reshape(2, -1)
    keep_mask = keep(c - r, offset)
    coords = np.stack([r[keep_mask], c[keep_mask]]).astype(np.int64)
    return tensor(coords, dtype=_C.dtype.int64 if dtype is None else dtype, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the lower triangle of a ``row x col`` matrix
    (``col - row <= offset``), row by row; int64 unless ``dtype`` says otherwise.

    >>> minitorch.tril_indices(2, 2).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    return _tri_indices("tril_indices", lambda k, o: k <= o, row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) row and column indices of the upper triangle (``col - row >= offset``)."""
    return _tri_indices("triu_indices", lambda k, o: k >= o, row, col, offset, dtype, device)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803  (PyTorch's name)
    """The Vandermonde matrix of 1-D ``x``: column ``j`` is ``x ** (N - 1 - j)`` (``x ** j``
    when ``increasing``); ``N`` defaults to ``len(x)``. Integer and bool inputs give int64.
    A ``cumprod``, so it has a gradient.

    >>> minitorch.vander(minitorch.tensor([1, 2, 3]), N=3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"vander(): argument 'x' must be a Tensor, not {type(x).__name__}")
    if x.ndim != 1:
        raise _C.InputError(f"vander: x must be a one-dimensional tensor, but got shape {tuple(x.shape)}")
    n = x.shape[0]
    if N is None:
        N = n
    if isinstance(N, builtins.bool) or not isinstance(N, (int, np.integer)):
        raise TypeError(f"vander(): argument 'N' must be an int, not {type(N).__name__}")
    if N < 0:
        raise _C.InputError(f"vander: N must be non-negative, got {N}")
    if x.dtype == _C.dtype.bool:
        x = x.to(_C.dtype.int64)
    if N == 0:
        return _C._full((n, 0), 0.0, x.dtype, x.device)
    ones = _C._full((n, 1), 1.0, x.dtype, x.device)
    powers = _C._cat([ones, x.unsqueeze(1).expand(n, N - 1)], 1).cumprod(1) if N > 1 else ones
    return powers if increasing else powers.flip(1)


# ---- scalar_tensor, asarray, empty_strided ----

def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-dim tensor holding the number ``s``, in the default floating dtype unless ``dtype``
    says otherwise (even for an int or a bool, as in PyTorch).

    >>> minitorch.scalar_tensor(3)
    tensor(3.)
    """
    if isinstance(s, Tensor) and s.numel() == 1:
        s = s.item()
    if not isinstance(s, numbers.Number) or isinstance(s, complex):
        raise TypeError(f"scalar_tensor(): argument 's' must be Number, not {type(s).__name__}")
    return full((), s, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                requires_grad=requires_grad)


def _alias(obj):
    """``obj`` as a tensor sharing its memory (itself, for a tensor), or None where it must
    be copied (lists, numbers, arrays of a dtype minitorch does not hold...)."""
    if isinstance(obj, Tensor):
        return obj
    if not (isinstance(obj, np.ndarray) or any(hasattr(obj, a) for a in (
            "__dlpack__", "__cuda_array_interface__", "__array_interface__"))):
        return None
    from .._dlpack import as_tensor
    t = as_tensor(obj)
    if isinstance(obj, np.ndarray) and not (t.device.type == "cpu" and np.may_share_memory(t.numpy(), obj)):
        return None
    return t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    """``obj`` (a tensor, a NumPy array or scalar, nested lists, a number, or an object with
    ``__dlpack__`` / the array interfaces) as a tensor. ``copy=None`` shares ``obj``'s memory
    when it can (a tensor of the wanted dtype and device is returned as it is) and copies
    otherwise; ``copy=True`` always copies; ``copy=False`` never does, and raises ValueError
    where a copy would be needed. A copy is not part of ``obj``'s autograd graph;
    ``requires_grad=True`` makes the result a leaf that requires grad (floating dtypes only).

    >>> a = numpy.zeros(2)
    >>> t = minitorch.asarray(a)   # shares a's memory
    >>> a[0] = 1.0; t.tolist()
    [1.0, 0.0]
    """
    want_device = _C.device(device) if isinstance(device, str) else device
    alias = None if copy else _alias(obj)
    if alias is not None and (dtype is None or alias.dtype == dtype) \
            and (want_device is None or alias.device == want_device):
        out = alias
    elif copy is False:
        if alias is not None:
            raise ValueError(f"asarray: can't alias a {alias.dtype.name} tensor on {alias.device} as one of dtype "
                             f"{(dtype or alias.dtype).name} on {want_device or alias.device} (copy=False)")
        what = f"an ndarray of dtype {obj.dtype}" if isinstance(obj, np.ndarray) else f"a {type(obj).__name__}"
        raise ValueError(f"asarray: can't alias {what} as a tensor without copying it (copy=False)")
    elif alias is not None or isinstance(obj, Tensor):
        src = (obj if alias is None else alias).detach()
        out = src.to(device=src.device if want_device is None else want_device,
                     dtype=src.dtype if dtype is None else dtype)
        if out.device == src.device and out.data_ptr() == src.data_ptr():
            out = out.clone()
    else:
        out = tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose elements lie ``stride`` elements apart along
    each dim. minitorch has no ``as_strided``, so the layout is made from views of a larger
    buffer: the dims of stride 0 are an ``expand``, the others must nest (sorted by stride,
    each stride a multiple of the next and at least the span of the dims inside it: any
    permutation of a contiguous layout, with gaps allowed); overlapping layouts raise. The
    strides of size-1 dims are whatever the views give them.

    >>> minitorch.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    size, stride = _size((size,), "empty_strided"), _size((stride,), "empty_strided")
    if len(size) != len(stride):
        raise _C.InputError(f"empty_strided: dimensionality of sizes ({len(size)}) must match dimensionality of "
                            f"strides ({len(stride)})")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise _C.InputError(f"empty_strided: sizes {size} and strides {stride} must be non-negative")
    if 0 in size:
        return empty(size, dtype=dtype, device=device, requires_grad=requires_grad)
    live = sorted((k for k in builtins.range(len(size)) if size[k] > 1 and stride[k]), key=lambda k: -stride[k])
    for outer, inner in zip(live, live[1:]):
        if stride[outer] % stride[inner] or stride[outer] < stride[inner] * size[inner]:
            raise _C.InputError(f"empty_strided: strides {stride} for sizes {size} overlap or do not nest; "
                                "minitorch makes only layouts without overlap (and stride-0 dims)")
    # base: (size of the outermost dim, the ratios of consecutive strides, the innermost stride);
    # its contiguous strides are then the wanted ones, and slicing keeps them.
    inner_shape = [stride[a] // stride[b] for a, b in zip(live, live[1:])]
    base_shape = ([size[live[0]]] + inner_shape + [stride[live[-1]]]) if live else []
    t = empty(base_shape, dtype=dtype, device=device)
    if live:
        t = t[(slice(None),) + tuple(slice(0, size[k]) for k in live[1:]) + (0,)]
    rest = [k for k in builtins.range(len(size)) if k not in live]
    for _ in rest:
        t = t.unsqueeze(-1)
    order = live + rest
    t = t.expand(*[size[k] for k in order]).permute(*[order.index(k) for k in builtins.range(len(size))])
    return _finish(t, requires_grad)
