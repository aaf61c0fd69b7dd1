"""Quantized tensors (PyTorch's ``torch.quint8`` / ``qint8`` / ``qint32`` tensors).

A quantized tensor stores integers ``q`` and the affine map back to real numbers::

    x ≈ (q - zero_point) * scale                     (dequantize)
    q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax)   (quantize)

per tensor (one ``scale``/``zero_point``) or per channel (one pair per index of ``axis``).
Here it is a small Python class around an ordinary integer tensor (its ``int_repr``:
uint8, int8 or int32), not a ``minitorch.Tensor``: the C++ ops never see it, so none
of them can silently compute on the raw integers. Ops that do not support quantized
tensors raise PyTorch's NotImplementedError ("Could not run 'aten::add' with arguments
from the 'QuantizedCPU' backend"). The integer kernels are ``minitorch.ops.quantized``.
See docs/quantization.md.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import _C
from ._C import Tensor

__all__ = ["QDType", "QScheme", "QTensor", "quint8", "qint8", "qint32", "per_tensor_affine",
           "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
           "per_channel_affine_float_qparams", "quantize_per_tensor", "quantize_per_channel",
           "quantize_per_tensor_dynamic", "dequantize", "is_qtensor"]


class QDType:
    """A quantized dtype: the storage dtype of its integers and their range."""

    is_quantized = True
    is_floating_point = False
    is_complex = False

    def __init__(self, name: str, storage, qmin: int, qmax: int):
        self.name, self.storage, self.qmin, self.qmax = name, storage, qmin, qmax
        self.is_signed = qmin < 0
        self.itemsize = storage.itemsize

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):  # pickles as the module-level singleton
        return (_qdtype_named, (self.name,))


quint8 = QDType("quint8", _C.dtype.uint8, 0, 255)
qint8 = QDType("qint8", _C.dtype.int8, -128, 127)
qint32 = QDType("qint32", _C.dtype.int32, -(2**31), 2**31 - 1)
_QDTYPES = {d.name: d for d in (quint8, qint8, qint32)}


def _qdtype_named(name: str) -> QDType:
    return _QDTYPES[name]


class QScheme:
    """How a quantized tensor maps integers to reals (``minitorch.per_tensor_affine``...)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):
        return (_qscheme_named, (self.name,))


per_tensor_affine = QScheme("per_tensor_affine")
per_channel_affine = QScheme("per_channel_affine")
per_tensor_symmetric = QScheme("per_tensor_symmetric")
per_channel_symmetric = QScheme("per_channel_symmetric")
per_channel_affine_float_qparams = QScheme("per_channel_affine_float_qparams")
_QSCHEMES = {s.name: s for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                                 per_channel_symmetric, per_channel_affine_float_qparams)}


def _qscheme_named(name: str) -> QScheme:
    return _QSCHEMES[name]


def is_qtensor(x) -> bool:
    return isinstance(x, QTensor)


def _qdtype_arg(dtype, op: str) -> QDType:
    if not isinstance(dtype, QDType):
        raise RuntimeError(f"{op}: expected a quantized dtype (minitorch.quint8, qint8 or qint32), got {dtype}")
    return dtype


def _float32(v: float) -> float:
    """v rounded to float32 (PyTorch keeps scales as double but quantizes with float)."""
    return float(np.float32(v))


def _check_scale_zp(scale: float, zero_point: int, dtype: QDType, op: str) -> None:
    if not (scale > 0 and math.isfinite(scale)):
        raise RuntimeError(f"{op}: scale must be a positive finite number, got {scale}")
    if not dtype.qmin <= zero_point <= dtype.qmax:
        raise RuntimeError(f"{op}: zero_point must be between the minimum and maximum of {dtype} "
                           f"([{dtype.qmin}, {dtype.qmax}]), got {zero_point}")


def _quantize_values(x: Tensor, inv_scale, zero_point, dtype: QDType) -> Tensor:
    """clamp(nearbyint(x * inv_scale) + zero_point) in dtype's storage: the product in float32
    (PyTorch's fbgemm quantizes as float32 x * (1.0f / scale), rounding half to even), the sum
    in float32 too (so a qint32 value past 2**24 rounds as PyTorch's does), the clamp in float64. inv_scale / zero_point: numbers, or
    tensors shaped to broadcast along the channel axis."""
    xf = x if x.dtype == _C.dtype.float32 else x.to(_C.dtype.float32)
    r = _C.round(xf * inv_scale) + zero_point  # float32 like PyTorch's zero_point + nearbyint(...)
    return r.to(_C.dtype.float64).clamp(dtype.qmin, dtype.qmax).to(dtype.storage)


class QTensor:
    """A quantized tensor: integers (``int_repr()``) plus the affine map to reals."""

    is_quantized = True
    requires_grad = False
    grad = None
    grad_fn = None
    is_leaf = True
    __minitorch_quantized__ = True  # lets the C++ bindings name the op they refuse (convert.cpp)

    def __init__(self, data: Tensor, dtype: QDType, qscheme: QScheme, scale=None, zero_point=None,
                 scales: Tensor | None = None, zero_points: Tensor | None = None, axis: int | None = None):
        self._data, self._dtype, self._qscheme = data, dtype, qscheme
        self._scale, self._zero_point = scale, zero_point
        self._scales, self._zero_points, self._axis = scales, zero_points, axis

    # ---- quantization parameters ----
    @property
    def _per_channel(self) -> bool:
        return self._axis is not None

    def qscheme(self) -> QScheme:
        return self._qscheme

    def q_scale(self) -> float:
        if self._per_channel:
            raise RuntimeError("q_scale: expected a per-tensor quantized tensor (quantizer->qscheme() == "
                               f"kPerTensorAffine), got {self._qscheme}")
        return self._scale

    def q_zero_point(self) -> int:
        if self._per_channel:
            raise RuntimeError("q_zero_point: expected a per-tensor quantized tensor (quantizer->qscheme() == "
                               f"kPerTensorAffine), got {self._qscheme}")
        return self._zero_point

    def _need_per_channel(self, op):
        if not self._per_channel:
            raise RuntimeError(f"{op}: expected a per-channel quantized tensor (quantizer->qscheme() == "
                               f"kPerChannelAffine), got {self._qscheme}")

    def q_per_channel_scales(self) -> Tensor:
        self._need_per_channel("q_per_channel_scales")
        return self._scales.clone()

    def q_per_channel_zero_points(self) -> Tensor:
        self._need_per_channel("q_per_channel_zero_points")
        return self._zero_points.clone()

    def q_per_channel_axis(self) -> int:
        self._need_per_channel("q_per_channel_axis")
        return self._axis

    def int_repr(self) -> Tensor:
        """The stored integers as a uint8 / int8 / int32 tensor (a copy, as in PyTorch)."""
        return self._data.clone()

    def _channel_view(self, t: Tensor) -> Tensor:
        """A per-channel (C,) parameter reshaped to broadcast along self's axis."""
        shape = [1] * self._data.dim()
        shape[self._axis] = -1
        return t.to(self._data.device).reshape(shape)

    def dequantize(self) -> Tensor:
        """(q - zero_point) * scale as float32: per tensor in float32 (PyTorch's vectorized
        loop), per channel in float64 (its double scales) rounded once to float32."""
        if self._per_channel:
            zp = self._channel_view(self._zero_points.to(_C.dtype.int64))
            s = self._channel_view(self._scales.to(_C.dtype.float64))
            return ((self._data.to(_C.dtype.int64) - zp).to(_C.dtype.float64) * s).to(_C.dtype.float32)
        d = self._data.to(_C.dtype.int64) - self._zero_point
        return d.to(_C.dtype.float32) * _float32(self._scale)

    # ---- Tensor-like properties ----
    @property
    def dtype(self) -> QDType:
        return self._dtype

    @property
    def shape(self):
        return self._data.shape

    def size(self, dim=None):
        return self._data.size() if dim is None else self._data.size(dim)

    def dim(self) -> int:
        return self._data.dim()

    @property
    def ndim(self) -> int:
        return self._data.dim()

    def numel(self) -> int:
        return self._data.numel()

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    def __len__(self) -> int:
        return len(self._data)

    @property
    def device(self):
        return self._data.device

    @property
    def is_cuda(self) -> bool:
        return self._data.is_cuda

    def is_contiguous(self) -> bool:
        return self._data.is_contiguous()

    def stride(self, dim=None):
        return self._data.stride() if dim is None else self._data.stride(dim)

    def _with_data(self, data: Tensor, axis=None) -> "QTensor":
        return QTensor(data, self._dtype, self._qscheme, self._scale, self._zero_point, self._scales,
                       self._zero_points, self._axis if axis is None else axis)

    def _shape_op(self, op: str, fn) -> "QTensor":
        """A view / reshape of the integers; per channel only when the channel dim keeps its
        place and size (PyTorch's rule for views of per-channel tensors is as narrow)."""
        data = fn(self._data)
        if not self._per_channel:
            return self._with_data(data)
        if data.dim() == self._data.dim() and data.shape[self._axis] == self._data.shape[self._axis] and \
                data.shape == self._data.shape:
            return self._with_data(data)
        raise RuntimeError(f"{op}: not supported for per-channel quantized tensors that move or "
                           f"reshape the channel axis {self._axis}")

    def reshape(self, *shape) -> "QTensor":
        return self._shape_op("reshape", lambda d: d.reshape(*shape))

    def view(self, *shape) -> "QTensor":
        return self._shape_op("view", lambda d: d.view(*shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "QTensor":
        return self._shape_op("flatten", lambda d: d.flatten(start_dim, end_dim))

    def squeeze(self, *dim) -> "QTensor":
        return self._shape_op("squeeze", lambda d: d.squeeze(*dim))

    def unsqueeze(self, dim) -> "QTensor":
        return self._shape_op("unsqueeze", lambda d: d.unsqueeze(dim))

    def permute(self, *dims) -> "QTensor":
        return self._shape_op("permute", lambda d: d.permute(*dims))

    def transpose(self, d0, d1) -> "QTensor":
        return self._shape_op("transpose", lambda d: d.transpose(d0, d1))

    def __getitem__(self, idx) -> "QTensor":
        if self._per_channel:
            raise RuntimeError("__getitem__: indexing is supported for per-tensor quantized tensors only")
        return self._with_data(self._data[idx])

    def contiguous(self) -> "QTensor":
        return self if self._data.is_contiguous() else self._with_data(self._data.contiguous())

    def clone(self) -> "QTensor":
        return self._with_data(self._data.clone())

    def detach(self) -> "QTensor":
        return self

    def to(self, *args, **kwargs) -> "QTensor":
        """Moves to a device; a dtype other than self's is refused (dequantize() first)."""
        dtype = kwargs.pop("dtype", None)
        rest = []
        for a in args:
            if isinstance(a, (QDType, _C.dtype)):
                dtype = a
            else:
                rest.append(a)
        if dtype is not None and dtype is not self._dtype:
            raise RuntimeError(f"to: cannot convert a quantized tensor ({self._dtype}) to {dtype}; "
                               "use .dequantize() for a float tensor")
        moved = self._data.to(*rest, **kwargs) if rest or kwargs else self._data
        return self if moved is self._data else self._with_data(moved)

    def cpu(self) -> "QTensor":
        return self.to("cpu")

    def cuda(self, device=None) -> "QTensor":
        return self.to("cuda" if device is None else device)

    def equal(self, other) -> bool:
        """Same dtype, qparams and integers (PyTorch's torch.equal on quantized tensors)."""
        if not isinstance(other, QTensor) or other._dtype is not self._dtype or other._qscheme is not self._qscheme:
            return False
        if self.shape != other.shape:
            return False
        if self._per_channel:
            same_q = (self._axis == other._axis and bool((self._scales == other._scales).all())
                      and bool((self._zero_points == other._zero_points).all()))
        else:
            same_q = self._scale == other._scale and self._zero_point == other._zero_point
        return same_q and bool((self._data == other._data).all())

    # ---- the ops PyTorch supports on quantized (per-tensor) tensors ----
    def relu(self) -> "QTensor":
        """max(x, 0) is max(q, zero_point): exact on the integers."""
        if self._per_channel:
            zp = self._channel_view(self._zero_points).to(self._data.dtype)
            return self._with_data(_C.maximum(self._data, zp))
        return self._with_data(self._data.clamp(min=self._zero_point))

    def relu_(self) -> "QTensor":
        self._data = self.relu()._data
        return self

    def _requantize_like(self, y: Tensor) -> "QTensor":
        """A float result of a per-tensor op back into self's qparams (pooling, resizing)."""
        return quantize_per_tensor(y, self._scale, self._zero_point, self._dtype)

    def _pools_integers(self) -> bool:
        """Can max pooling run on the integers (_max_pool2d)? quint8 per tensor, on the CPU."""
        return (not self._per_channel and self._dtype is quint8 and not self.is_cuda and self._data.dim() in (3, 4)
                and hasattr(_C, "_qmax_pool2d"))

    def _max_pool2d(self, k, stride, padding, dilation, ceil_mode) -> "QTensor":
        """Max pooling of the uint8 values themselves: the same integers as dequantize, pool and
        quantize again (max commutes with the increasing map to reals, and requantizing a
        dequantized value gives it back), in one pass instead of six."""
        x = self._data if self._data.dim() == 4 else self._data.unsqueeze(0)
        y = _C._qmax_pool2d(x, k, stride, padding, dilation, bool(ceil_mode))
        return self._with_data(y if self._data.dim() == 4 else y.squeeze(0))

    def _float_op(self, op: str, fn) -> "QTensor":
        if self._per_channel:
            raise NotImplementedError(_unsupported(op, self) + " (supported for per-tensor quantized tensors only)")
        return self._requantize_like(fn(self.dequantize()))

    # ---- everything else: PyTorch's "Could not run" error naming the op ----
    def __getattr__(self, name: str):
        if not name.startswith("_") and hasattr(Tensor, name):
            def refuse(*args, **kwargs):
                raise NotImplementedError(_unsupported(name, self))
            return refuse
        raise AttributeError(f"'QTensor' object has no attribute '{name}'")

    def numpy(self):
        raise TypeError("numpy: a quantized tensor has no NumPy form; use .int_repr().numpy() or "
                        ".dequantize().numpy()")

    def __array__(self, *args, **kwargs):
        return self.numpy()

    def tolist(self):
        return self.dequantize().tolist()

    def __bool__(self):
        raise NotImplementedError(_unsupported("is_nonzero", self))

    def __repr__(self) -> str:
        body = repr(self.dequantize())
        body = body[:-1] if body.endswith(")") else body
        pad = " " * len("tensor(")
        if ", device=" in body:  # keep the device PyTorch prints last among the tensor args
            body = body.split(", device=")[0]
        extra = f", size={tuple(self.shape)}, dtype={self._dtype},\n{pad}quantization_scheme={self._qscheme}"
        if self._per_channel:
            extra += (f",\n{pad}scale={self._scales!r},\n{pad}zero_point={self._zero_points!r}, "
                      f"axis={self._axis}")
        else:
            extra += f", scale={self._scale}, zero_point={self._zero_point}"
        if self.is_cuda:
            extra += f", device='{self.device}'"
        return body + extra + ")"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __reduce__(self):
        return (_rebuild_qtensor, _qtensor_state(self))


def _backend(x) -> str:
    return "QuantizedCUDA" if getattr(x, "is_cuda", False) else "QuantizedCPU"


def _unsupported(op: str, x) -> str:
    return (f"Could not run 'aten::{op}' with arguments from the '{_backend(x)}' backend: minitorch's "
            f"quantized tensors support dequantize, int_repr, relu, pooling, reshape/view and the "
            f"minitorch.ops.quantized kernels; call .dequantize() first to compute on floats.")


def _refuse_operator(name: str, op: str):
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(_unsupported(op, self))
    refuse.__name__ = name
    return refuse


for _dunder, _op in {"__add__": "add.Tensor", "__radd__": "add.Tensor", "__iadd__": "add_.Tensor",
                     "__sub__": "sub.Tensor", "__rsub__": "rsub.Tensor", "__isub__": "sub_.Tensor",
                     "__mul__": "mul.Tensor", "__rmul__": "mul.Tensor", "__imul__": "mul_.Tensor",
                     "__truediv__": "div.Tensor", "__rtruediv__": "div.Tensor", "__itruediv__": "div_.Tensor",
                     "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide", "__mod__": "remainder.Tensor",
                     "__pow__": "pow.Tensor_Scalar", "__rpow__": "pow.Scalar", "__matmul__": "matmul",
                     "__rmatmul__": "matmul", "__neg__": "neg", "__abs__": "abs", "__lt__": "lt.Tensor",
                     "__le__": "le.Tensor", "__gt__": "gt.Tensor", "__ge__": "ge.Tensor",
                     "__eq__": "eq.Tensor", "__ne__": "ne.Tensor", "__and__": "bitwise_and.Tensor",
                     "__or__": "bitwise_or.Tensor", "__xor__": "bitwise_xor.Tensor", "__invert__": "bitwise_not",
                     "__float__": "_local_scalar_dense", "__int__": "_local_scalar_dense",
                     "__index__": "_local_scalar_dense", "__iter__": "unbind.int"}.items():
    setattr(QTensor, _dunder, _refuse_operator(_dunder, _op))


def _qtensor_state(q: QTensor) -> tuple:
    return (q._data, q._dtype.name, q._qscheme.name, q._scale, q._zero_point, q._scales, q._zero_points, q._axis)


def _rebuild_qtensor(data, dtype, qscheme, scale, zero_point, scales, zero_points, axis) -> QTensor:
    return QTensor(data, _QDTYPES[dtype], _QSCHEMES[qscheme], scale, zero_point, scales, zero_points, axis)


# ---- making quantized tensors ----

def _float_input(x, op: str) -> Tensor:
    if isinstance(x, QTensor):
        raise RuntimeError(f"{op}: the input is already quantized ({x.dtype})")
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {x.dtype}")
    return x


def quantize_per_tensor(input, scale, zero_point, dtype) -> QTensor:
    """``clamp(round_half_even(input / scale) + zero_point, qmin, qmax)`` stored as ``dtype``'s
    integers (quint8: uint8, qint8: int8, qint32: int32), PyTorch's per-tensor affine map.
    ``scale``/``zero_point`` may be 1-element tensors; a list of tensors quantizes each."""
    op = "quantize_per_tensor"
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(x, s, z, dtype) for x, s, z in zip(input, scale, zero_point)]
    dtype = _qdtype_arg(dtype, op)
    x = _float_input(input, op)
    scale = float(scale.item() if isinstance(scale, Tensor) else scale)
    zero_point = int(zero_point.item() if isinstance(zero_point, Tensor) else zero_point)
    _check_scale_zp(scale, zero_point, dtype, op)
    inv = _float32(np.float32(1.0) / np.float32(scale))
    if dtype is not qint32 and not x.is_cuda and hasattr(_C, "_quantize_per_tensor_8bit"):
        # one pass in C++ (cpu/quantize.cpp), the same float32 steps; a NaN input takes the composed path
        xf = x if x.dtype == _C.dtype.float32 else x.to(_C.dtype.float32)
        data, no_nan = _C._quantize_per_tensor_8bit(xf, inv, zero_point, dtype.storage)
        if no_nan:
            return QTensor(data, dtype, per_tensor_affine, scale, zero_point)
    return QTensor(_quantize_values(x, inv, zero_point, dtype), dtype, per_tensor_affine, scale, zero_point)


def quantize_per_channel(input, scales, zero_points, axis: int, dtype) -> QTensor:
    """One (scale, zero_point) per index of ``axis``: ``scales`` a float tensor, ``zero_points``
    an int tensor, both of size ``input.shape[axis]`` (kept as float64 / int64, as in PyTorch)."""
    op = "quantize_per_channel"
    dtype = _qdtype_arg(dtype, op)
    x = _float_input(input, op)
    if not isinstance(scales, Tensor) or not isinstance(zero_points, Tensor):
        raise TypeError(f"{op}(): scales and zero_points must be Tensors")
    if not -x.dim() <= axis < max(x.dim(), 1) or x.dim() == 0:
        raise IndexError(f"{op}: axis {axis} is out of range for a tensor of {x.dim()} dims")
    axis %= x.dim()
    n = x.shape[axis]
    if scales.dim() != 1 or scales.numel() != n or zero_points.dim() != 1 or zero_points.numel() != n:
        raise RuntimeError(f"{op}: expected scales and zero_points of size ({n},) (input.size({axis})), got "
                           f"{tuple(scales.shape)} and {tuple(zero_points.shape)}")
    scales = scales.to(_C.dtype.float64).cpu()
    zero_points = zero_points.to(_C.dtype.int64).cpu()
    s_np, z_np = scales.numpy(), zero_points.numpy()
    if not np.all((s_np > 0) & np.isfinite(s_np)):
        raise RuntimeError(f"{op}: every scale must be a positive finite number, got {s_np.tolist()}")
    if np.any((z_np < dtype.qmin) | (z_np > dtype.qmax)):
        raise RuntimeError(f"{op}: zero_points must be between the minimum and maximum of {dtype} "
                           f"([{dtype.qmin}, {dtype.qmax}]), got {z_np.tolist()}")
    q = QTensor(None, dtype, per_channel_affine, scales=scales, zero_points=zero_points, axis=axis)
    q._data = x  # for _channel_view's shape
    inv = np.float32(1.0) / s_np.astype(np.float32)
    inv_t = q._channel_view(_C.from_numpy(inv.astype(np.float32)))
    zp_t = q._channel_view(_C.from_numpy(z_np.astype(np.float64)))
    q._data = _quantize_values(x, inv_t, zp_t, dtype)
    return q


def choose_qparams(x_min: float, x_max: float, qmin: int, qmax: int) -> tuple[float, int]:
    """PyTorch's (fbgemm's) ChooseQuantizationParams: a range holding 0, scale = range / levels,
    and the zero point (nudged to an integer) from whichever end loses less."""
    x_min, x_max = min(float(x_min), 0.0), max(float(x_max), 0.0)
    scale = (x_max - x_min) / (qmax - qmin)
    scale = float(np.float32(scale))
    if scale == 0.0 or math.isinf(1.0 / np.float32(scale)):
        scale = 0.1
    zp_from_min = qmin - x_min / scale
    zp_from_max = qmax - x_max / scale
    err_min = abs(qmin) - abs(x_min / scale)
    err_max = abs(qmax) - abs(x_max / scale)
    initial = zp_from_min if err_min < err_max else zp_from_max
    if initial < qmin:
        zp = qmin
    elif initial > qmax:
        zp = qmax
    else:
        zp = int(np.rint(initial))
    return scale, int(zp)


def _dynamic_range(dtype: QDType, reduce_range: bool) -> tuple[int, int]:
    if dtype is quint8:
        return (0, 127) if reduce_range else (0, 255)
    if dtype is qint8:
        return (-64, 63) if reduce_range else (-128, 127)
    raise RuntimeError(f"quantize_per_tensor_dynamic: expected dtype quint8 or qint8, got {dtype}")


def quantize_per_tensor_dynamic(input, dtype, reduce_range: bool) -> QTensor:
    """Quantizes with qparams chosen from input's min and max (PyTorch's dynamic quantization of
    activations: the range always holds 0; ``reduce_range`` uses 7 bits)."""
    op = "quantize_per_tensor_dynamic"
    dtype = _qdtype_arg(dtype, op)
    x = _float_input(input, op)
    qmin, qmax = _dynamic_range(dtype, reduce_range)
    lo, hi = (float(x.min()), float(x.max())) if x.numel() else (0.0, 0.0)
    scale, zp = choose_qparams(lo, hi, qmin, qmax)
    return quantize_per_tensor(x, scale, zp, dtype)


def dequantize(tensor):
    """``tensor.dequantize()``; a list of tensors gives a list; a float tensor is returned as is."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    if isinstance(tensor, QTensor):
        return tensor.dequantize()
    if isinstance(tensor, Tensor):
        return tensor
    raise TypeError(f"dequantize(): argument 'tensor' must be a Tensor, not {type(tensor).__name__}")


def _make_per_tensor_quantized_tensor(input: Tensor, scale: float, zero_point: int) -> QTensor:
    """A quantized tensor of the integers in ``input`` (uint8 -> quint8, int8 -> qint8,
    int32 -> qint32) with the given qparams; the integers are kept as they are."""
    dtype = {_C.dtype.uint8: quint8, _C.dtype.int8: qint8, _C.dtype.int32: qint32}.get(input.dtype)
    if dtype is None:
        raise RuntimeError(f"_make_per_tensor_quantized_tensor: expected a uint8, int8 or int32 tensor, got {input.dtype}")
    return QTensor(input, dtype, per_tensor_affine, float(scale), int(zero_point))


def _make_per_channel_quantized_tensor(input: Tensor, scales: Tensor, zero_points: Tensor, axis: int) -> QTensor:
    dtype = {_C.dtype.uint8: quint8, _C.dtype.int8: qint8, _C.dtype.int32: qint32}.get(input.dtype)
    if dtype is None:
        raise RuntimeError(f"_make_per_channel_quantized_tensor: expected a uint8, int8 or int32 tensor, got {input.dtype}")
    return QTensor(input, dtype, per_channel_affine, scales=scales.to(_C.dtype.float64).cpu(),
                   zero_points=zero_points.to(_C.dtype.int64).cpu(), axis=axis % max(input.dim(), 1))
