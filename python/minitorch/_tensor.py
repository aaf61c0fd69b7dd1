"""The Python half of ``minitorch.Tensor``: conveniences on top of the C++ class.

Everything that does arithmetic lives in C++; here are the pieces that are about
Python itself (repr, iteration, conversion to numbers and lists, pickling, ``.to``,
``.type()``, the array-exchange protocols ``__array__``, ``__dlpack__`` and
``__cuda_array_interface__`` (_dlpack.py)). The Python methods that compute (``x.split``,
``x.var``...) come from the op declarations (ops/declarations.py, attached by ops/registry.py).
"""
from __future__ import annotations

import numbers

from . import _C
from ._C import Tensor
from ._dlpack import cuda_array_interface, dlpack, dlpack_device
from ._tensor_str import tensor_repr


class Size(tuple):
    """A tensor's shape: a tuple of ints, printed like PyTorch's ``torch.Size``."""

    def __repr__(self) -> str:
        return f"minitorch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def is_tensor(obj) -> bool:
    """True when ``obj`` is a minitorch Tensor (an ``nn.Parameter`` included)."""
    return isinstance(obj, Tensor)


def _shape(self) -> Size:
    return Size(self._shape)


def _size(self, dim=None):
    if dim is None:
        return Size(self._shape)
    return self._shape[_wrap(dim, self.ndim, "size")]


def _wrap(dim, ndim, op):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def dim_tuple(dim, ndim: int, op: str, what: str = "dim") -> tuple:
    """``dim`` (an int or a tuple/list of ints) as a tuple of dims in ``[0, ndim)``.

    Raises TypeError for a non-int, IndexError for a dim out of range and ValueError
    for a dim named twice, each naming ``op``.
    """
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise _C.DTypeError(f"{op}: {what} must be an int or a tuple of ints, but got {type(d).__name__}")
        w = _wrap(int(d), ndim, op)
        if w in out:
            raise _C.InputError(f"{op}: dim {w} appears more than once in {what}={dims}")
        out.append(w)
    return tuple(out)


def _len(self) -> int:
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._shape[0]


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._shape[0]))


def _one_value(self, kind: str):
    if self.numel() != 1:
        raise RuntimeError(f"only one element tensors can be converted to Python scalars ({kind}), got {self.numel()}")
    return self.item()


def _bool(self) -> bool:
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
    return bool(self.item())


def _index(self) -> int:
    if self.dtype.is_floating_point or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self.item())


def _tolist(self):
    """Nested Python lists of Python numbers (a number for a 0-dim tensor)."""
    t = self.detach().cpu()
    if t.dtype in (_C.dtype.float16, _C.dtype.bfloat16):  # Python floats, through float32 (exact)
        t = t.float()
    return t.numpy().tolist()


def _array(self, dtype=None, copy=None):
    arr = self.detach().cpu().numpy()
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; ``copy=True`` forces a copy."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, _C.dtype) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, (str, _C.device)):
            device = a
        else:
            raise TypeError(f"to() received an invalid argument {a!r}: expected a dtype, a device or a Tensor")
    if non_blocking and device is not None and dtype in (None, self.dtype) and not copy:
        moved = _copy_async(self, device)
        if moved is not None:
            return moved
    return self._to(dtype, device, copy)


def _copy_async(t, device):
    """A copy queued on the GPU from pinned memory (cuda_streams), or None to copy the usual way."""
    from .cuda_streams import copy_to_cuda_async

    device = _C.device(device) if isinstance(device, str) else device
    return copy_to_cuda_async(t, device) if device != t.device else None


def _cuda(self, device=None, non_blocking: bool = False):
    """A copy on the GPU (this tensor itself when it is there already)."""
    return _to(self, "cuda" if device is None else device, non_blocking=non_blocking)


def _requires_grad_(self, requires_grad: bool = True):
    self.requires_grad = requires_grad
    return self


# Tensor.type() names, as PyTorch spells them (torch.FloatTensor -> minitorch.FloatTensor).
_TYPE_NAMES = {
    _C.dtype.float32: "FloatTensor",
    _C.dtype.float64: "DoubleTensor",
    _C.dtype.float16: "HalfTensor",
    _C.dtype.bfloat16: "BFloat16Tensor",
    _C.dtype.int64: "LongTensor",
    _C.dtype.int32: "IntTensor",
    _C.dtype.int16: "ShortTensor",
    _C.dtype.int8: "CharTensor",
    _C.dtype.uint8: "ByteTensor",
    _C.dtype.bool: "BoolTensor",
}


def _type(self, dtype=None, non_blocking: bool = False):
    """``x.type()`` -> ``'minitorch.FloatTensor'`` (``'minitorch.cuda.FloatTensor'`` on a GPU);
    ``x.type(minitorch.float64)`` or ``x.type('minitorch.DoubleTensor')`` -> ``x`` converted
    (``x`` itself when it already has that type)."""
    if dtype is None:
        prefix = "minitorch." if self.device.type == "cpu" else "minitorch.cuda."
        return prefix + _TYPE_NAMES[self.dtype]
    if isinstance(dtype, _C.dtype):
        return self._to(dtype, None, False)
    if isinstance(dtype, str):
        for dt, name in _TYPE_NAMES.items():
            if dtype == f"minitorch.{name}":
                return self._to(dt, "cpu", False)
            if dtype == f"minitorch.cuda.{name}":
                return self._to(dt, "cuda" if self.device.type == "cpu" else self.device, False)
        raise _C.InputError(f"type: invalid type {dtype!r}; expected one of "
                            f"{', '.join(repr('minitorch.' + n) for n in _TYPE_NAMES.values())} (or 'minitorch.cuda.*')")
    raise TypeError(f"type: expected a dtype or a type name such as 'minitorch.FloatTensor', got {type(dtype).__name__}")


def _get_device(self) -> int:
    """The GPU index of a cuda tensor; -1 for a CPU tensor (PyTorch's convention)."""
    return -1 if self.device.type == "cpu" else self.device.index


def _deepcopy(self, memo):
    """``copy.deepcopy(t)``: a new leaf with copied values, ``requires_grad`` and ``.grad``
    (what ``copy.deepcopy(model)`` needs). Like PyTorch, only graph leaves can be copied."""
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment")
    if id(self) in memo:
        return memo[id(self)]
    from .autograd import no_grad

    with no_grad():
        new = self.detach().clone()
    new.requires_grad_(self.requires_grad)
    grad = self.grad
    if grad is not None:
        # A fresh memo: ``.grad`` hands out a temporary Python object whose id() can be reused
        # by another tensor's ``.grad`` later in the same deepcopy, which would then get this copy.
        new.grad = _deepcopy(grad, {})
    memo[id(self)] = new
    memo.setdefault(id(memo), []).append(self)  # keep the key alive while the memo lives, as copy does
    return new


def _rebuild_tensor(array, device: str, requires_grad: bool, cls=None, bits_of=None):
    """The inverse of ``Tensor.__reduce__`` (pickle, multiprocessing). ``bits_of``: the
    16-bit dtype whose bits ``array`` holds (bfloat16, which NumPy lacks)."""
    t = _C._from_numpy_bits(array, bits_of) if bits_of else _C.from_numpy(array)
    if device != "cpu":
        t = t.to(device)
    if cls is not None:  # a subclass such as nn.Parameter
        return cls(t, requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _reduce(self):
    """``pickle.dumps(t)``: the values (a NumPy copy), dtype, device, ``requires_grad``, and
    the subclass (nn.Parameter). Like PyTorch, a non-leaf that requires grad is refused."""
    if self.requires_grad and not self.is_leaf:
        raise RuntimeError("Can't pickle a tensor that requires grad and is not a leaf (it belongs to a graph); "
                           "pickle tensor.detach()")
    import numpy as np

    host = self.detach().cpu()
    bits_of = "bfloat16" if host.dtype == _C.dtype.bfloat16 else None
    array = np.array(_C._numpy_bits(host) if bits_of else host.numpy(), copy=True)  # 0-dim stays 0-dim
    cls = None if type(self) is Tensor else type(self)
    return _rebuild_tensor, (array, str(self.device), bool(self.requires_grad), cls, bits_of)


def _format(self, spec):
    if self.ndim == 0:
        return format(self.item(), spec)
    return format(repr(self), spec)


_methods = {
    "shape": property(_shape),
    "size": _size,
    "__len__": _len,
    "__iter__": _iter,
    "__bool__": _bool,
    "__float__": lambda self: float(_one_value(self, "float")),
    "__int__": lambda self: int(_one_value(self, "int")),
    "__index__": _index,
    "__repr__": tensor_repr,
    "__str__": tensor_repr,
    "__format__": _format,
    "__deepcopy__": _deepcopy,
    "__reduce__": _reduce,
    "__array__": _array,
    "__dlpack__": dlpack,
    "__dlpack_device__": dlpack_device,
    "__cuda_array_interface__": property(cuda_array_interface),
    "__array_priority__": 1000,  # so ndarray <op> Tensor asks the Tensor first
    "tolist": _tolist,
    "to": _to,
    "cpu": lambda self: self._to(None, "cpu", False),
    "cuda": _cuda,
    "float": lambda self: self._to(_C.dtype.float32, None, False),
    "double": lambda self: self._to(_C.dtype.float64, None, False),
    "half": lambda self: self._to(_C.dtype.float16, None, False),
    "bfloat16": lambda self: self._to(_C.dtype.bfloat16, None, False),
    "long": lambda self: self._to(_C.dtype.int64, None, False),
    "int": lambda self: self._to(_C.dtype.int32, None, False),
    "short": lambda self: self._to(_C.dtype.int16, None, False),
    "char": lambda self: self._to(_C.dtype.int8, None, False),
    "byte": lambda self: self._to(_C.dtype.uint8, None, False),
    "bool": lambda self: self._to(_C.dtype.bool, None, False),
    "type_as": lambda self, other: self._to(other.dtype, None, False),
    "view_as": lambda self, other: self.view(other._shape),
    "reshape_as": lambda self, other: self.reshape(other._shape),
    "expand_as": lambda self, other: self.expand(other._shape),
    "requires_grad_": _requires_grad_,
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "type": _type,
    "get_device": _get_device,
    "is_cpu": property(lambda self: self.device.type == "cpu"),
    "itemsize": property(lambda self: self.element_size()),
    "nbytes": property(lambda self: self.numel() * self.element_size()),
    # A quantized tensor is a minitorch.QTensor (minitorch/_quantized.py); a Tensor never is.
    "is_quantized": property(lambda self: False),
}


for _name, _value in _methods.items():
    setattr(Tensor, _name, _value)
