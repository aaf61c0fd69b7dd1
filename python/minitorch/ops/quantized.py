"""``minitorch.ops.quantized``: the integer kernels behind quantized Linear and Conv2d
(PyTorch's ``torch.ops.quantized.linear`` / ``linear_dynamic`` / ``conv2d`` under the fbgemm
engine, taking the quantized weight itself instead of a packed one).

Convention (fbgemm's): activations are ``quint8`` per tensor (any zero point), weights are
``qint8`` per tensor or per output channel (axis 0), the bias is float. One layer is

    acc[m, n]  = sum_k (xq[m, k] - x_zp) * (wq[n, k] - w_zp[n])            (int32, exact)
    y[m, n]    = acc * x_scale * w_scale[n] + bias[n]                       (the real output)
    yq[m, n]   = clamp(nearbyint(y / out_scale) + out_zp, 0 | out_zp (relu), 255)

``_C._qlinear`` computes acc (uint8 x int8 -> int32: cpu/qgemm.cpp, cuda/qgemm.cu) and the last
line in one kernel (``_C._qlinear_dynamic`` the float line, ``_C._qgemm`` acc itself); the
``*_reference`` functions below are the same in plain minitorch ops. See docs/quantization.md.
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor
from .._quantized import QTensor, per_tensor_affine, qint8, quantize_per_tensor_dynamic, quint8

import numpy as np

__all__ = ["linear", "linear_relu", "linear_dynamic", "linear_relu_dynamic", "conv2d", "conv2d_relu"]

_f32 = _C.dtype.float32


def _check_act(qx, op: str) -> QTensor:
    if not isinstance(qx, QTensor):
        raise TypeError(f"quantized::{op}: expected a quantized input (minitorch.quint8), got {type(qx).__name__}"
                        + (f" of {qx.dtype}" if isinstance(qx, Tensor) else ""))
    if qx.dtype is not quint8 or qx.qscheme() is not per_tensor_affine:
        raise RuntimeError(f"quantized::{op}: expected the input to be quint8 per-tensor affine "
                           f"(fbgemm's activations), got {qx.dtype} {qx.qscheme()}")
    return qx


def _check_weight(qw, op: str, ndim: int) -> QTensor:
    if not isinstance(qw, QTensor) or qw.dtype is not qint8:
        raise RuntimeError(f"quantized::{op}: expected a qint8 quantized weight, got "
                           f"{qw.dtype if isinstance(qw, (QTensor, Tensor)) else type(qw).__name__}")
    if qw.dim() != ndim:
        raise RuntimeError(f"quantized::{op}: expected a {ndim}-D weight, got shape {tuple(qw.shape)}")
    if qw._per_channel and qw._axis != 0:
        raise RuntimeError(f"quantized::{op}: per-channel weights must be quantized along axis 0 (output "
                           f"channels), got axis {qw._axis}")
    return qw


def _weight_qparams(qw: QTensor, n: int):
    """(scales as float32 (n,), zero points as int32 (n,)) of a per-tensor or per-channel weight."""
    if qw._per_channel:
        return qw._scales.to(_f32).to(qw.device), qw._zero_points.to(_C.dtype.int32).to(qw.device)
    dev = str(qw.device)
    return (_C._full((n,), qw._scale, _f32, dev), _C._full((n,), qw._zero_point, _C.dtype.int32, dev))


def _bias_arg(bias, n: int, op: str):
    if bias is None:
        return None
    if isinstance(bias, QTensor) or not isinstance(bias, Tensor) or not bias.dtype.is_floating_point:
        raise RuntimeError(f"quantized::{op}: expected a float bias tensor or None")
    if bias.dim() != 1 or bias.shape[0] != n:
        raise RuntimeError(f"quantized::{op}: expected a bias of shape ({n},), got {tuple(bias.shape)}")
    return bias.to(_f32).contiguous()


def _gemm(xq: Tensor, x_zp: int, wq: Tensor, w_zp: Tensor) -> Tensor:
    """int32 (M, N) = (xq - x_zp) @ (wq - w_zp[:, None]).T for uint8 xq (M, K), int8 wq (N, K)."""
    if hasattr(_C, "_qgemm"):
        return _C._qgemm(xq, int(x_zp), wq, w_zp.to(wq.device))
    return qgemm_reference(xq, x_zp, wq, w_zp)


# Below this many rows the GEMM reads the int8 weight as it is (a GEMV: cpu/qgemm.cpp widens it in
# registers); from here on the CPU multiplies by the weight prepacked once (_prepacked).
_PACKED_MIN_ROWS = 8


def _prepacked(qw: QTensor, w_zp: Tensor):
    """qw's weight packed for ``_C._qgemm_packed`` (int16 column panels, zero points subtracted),
    or None where that path does not apply (CUDA, few rows are decided by the caller). Packed on
    the first call and kept on qw, as PyTorch's quantized modules keep a packed weight: a module
    that gets new weights (``set_weight_bias``, ``load_state_dict``, ``.to()``) holds a new QTensor,
    packed again on its first call; and a QTensor whose integers are replaced (``relu_``) is
    repacked. The integers are not expected to change in place, as in PyTorch."""
    if qw.is_cuda or not hasattr(_C, "_qgemm_packed"):
        return None
    cache = qw.__dict__.get("_packed_weight")
    if cache is None or cache[0] is not qw._data:
        cache = (qw._data, _C._qpack_weight(qw._data, w_zp))
        qw.__dict__["_packed_weight"] = cache
    return cache[1]


def _gemm_requant(xq: Tensor, x_zp: int, wq: Tensor, w_zp: Tensor, bias, act_times_w: Tensor, out_scale: float,
                  out_zp: int, relu: bool, packed=None) -> Tensor:
    """uint8 (M, N): the GEMM with the requantization fused in (one kernel, no int32 tensor)."""
    dev = xq.device
    if packed is not None:
        return _C._qgemm_packed(xq, int(x_zp), packed, wq.shape[0], w_zp, bias, act_times_w, _C.dtype.uint8,
                                float(out_scale), int(out_zp), bool(relu))
    if hasattr(_C, "_qlinear"):
        return _C._qlinear(xq, int(x_zp), wq, w_zp.to(dev), None if bias is None else bias.to(dev),
                           act_times_w.to(dev), float(out_scale), int(out_zp), bool(relu))
    return requantize_reference(qgemm_reference(xq, x_zp, wq, w_zp), bias, act_times_w, out_scale, out_zp, relu)


def _gemm_dequant(xq: Tensor, x_zp: int, wq: Tensor, w_zp: Tensor, bias, act_times_w: Tensor, relu: bool,
                  packed=None) -> Tensor:
    """float32 (M, N): the GEMM scaled back to reals (+ bias), fused."""
    dev = xq.device
    if packed is not None:
        return _C._qgemm_packed(xq, int(x_zp), packed, wq.shape[0], w_zp, bias, act_times_w, _f32, 1.0, 0,
                                bool(relu))
    if hasattr(_C, "_qlinear_dynamic"):
        return _C._qlinear_dynamic(xq, int(x_zp), wq, w_zp.to(dev), None if bias is None else bias.to(dev),
                                   act_times_w.to(dev), bool(relu))
    return dequantize_acc_reference(qgemm_reference(xq, x_zp, wq, w_zp), bias, act_times_w, relu)


# ---- readable references (minitorch ops; the tests hold the C++ kernels to them) ----

def qgemm_reference(xq: Tensor, x_zp: int, wq: Tensor, w_zp: Tensor) -> Tensor:
    """sum_k (xq[m, k] - x_zp) * (wq[n, k] - w_zp[n]) as an int32 matmul."""
    i32 = _C.dtype.int32
    w = wq.to(i32) - w_zp.to(wq.device).to(i32).reshape(-1, 1)
    return (xq.to(i32) - int(x_zp)) @ w.T


def requantize_reference(acc: Tensor, bias, act_times_w: Tensor, out_scale: float, out_zp: int,
                         relu: bool) -> Tensor:
    """fbgemm's float-bias requantization: (acc + bias / (x_scale * w_scale)) * (x_scale * w_scale
    / out_scale), rounded half to even, plus out_zp, clamped to [0 or out_zp, 255]; in float32."""
    atw = act_times_w.to(acc.device).to(_f32)
    raw = acc.to(_f32)
    if bias is not None:
        raw = raw + bias.to(acc.device).to(_f32) / atw
    mult = atw / float(_f32_of(out_scale))
    q = _C.round(raw * mult).to(_C.dtype.float64) + int(out_zp)
    return q.clamp(int(out_zp) if relu else 0, 255).to(_C.dtype.uint8)


def dequantize_acc_reference(acc: Tensor, bias, act_times_w: Tensor, relu: bool) -> Tensor:
    """acc * x_scale * w_scale + bias in float32 (the output of a dynamic quantized linear)."""
    y = acc.to(_f32) * act_times_w.to(acc.device).to(_f32)
    if bias is not None:
        y = y + bias.to(acc.device).to(_f32)
    return y.clamp(min=0) if relu else y


def _out_qparams(out_scale, out_zero_point, op: str) -> tuple[float, int]:
    s, z = float(out_scale), int(out_zero_point)
    if not s > 0:
        raise RuntimeError(f"quantized::{op}: out_scale must be positive, got {s}")
    if not 0 <= z <= 255:
        raise RuntimeError(f"quantized::{op}: out_zero_point must be in [0, 255] for quint8, got {z}")
    return s, z


def _linear(qx, qw, bias, out_scale, out_zero_point, relu: bool, op: str) -> QTensor:
    qx, qw = _check_act(qx, op), _check_weight(qw, op, 2)
    n, k = qw.shape
    if qx.dim() < 1 or qx.shape[-1] != k:
        raise RuntimeError(f"quantized::{op}: input shape {tuple(qx.shape)} does not match the weight's "
                           f"in_features {k} (weight shape {tuple(qw.shape)})")
    s, z = _out_qparams(out_scale, out_zero_point, op)
    w_scale, w_zp = _weight_qparams(qw, n)
    lead = tuple(qx.shape[:-1])
    x2 = qx._data.reshape(-1, k)
    act_times_w = w_scale * float(_f32_of(qx.q_scale()))  # float32, as fbgemm's act_times_w_scale
    packed = _prepacked(qw, w_zp) if x2.shape[0] >= _PACKED_MIN_ROWS else None
    y = _gemm_requant(x2, qx.q_zero_point(), qw._data, w_zp, _bias_arg(bias, n, op), act_times_w, s, z, relu, packed)
    return QTensor(y.reshape(*lead, n), quint8, per_tensor_affine, s, z)


def _f32_of(v: float):
    return np.float32(v)


def linear(qx, qw, bias, out_scale, out_zero_point) -> QTensor:
    """Quantized ``x @ w.T + bias``: quint8 ``qx`` (..., K), qint8 ``qw`` (N, K) per tensor or per
    channel, float ``bias`` (N,) or None -> quint8 (..., N) with ``out_scale``/``out_zero_point``."""
    return _linear(qx, qw, bias, out_scale, out_zero_point, False, "linear")


def linear_relu(qx, qw, bias, out_scale, out_zero_point) -> QTensor:
    """``linear`` with ReLU fused into the requantization (the clamp starts at out_zero_point)."""
    return _linear(qx, qw, bias, out_scale, out_zero_point, True, "linear_relu")


def _linear_dynamic(x, qw, bias, reduce_range: bool, relu: bool, op: str) -> Tensor:
    if isinstance(x, QTensor) or not isinstance(x, Tensor) or not x.dtype.is_floating_point:
        raise RuntimeError(f"quantized::{op}: expected a float input tensor")
    qw = _check_weight(qw, op, 2)
    n, k = qw.shape
    if x.dim() < 1 or x.shape[-1] != k:
        raise RuntimeError(f"quantized::{op}: input shape {tuple(x.shape)} does not match the weight's "
                           f"in_features {k} (weight shape {tuple(qw.shape)})")
    out_dtype = x.dtype
    qx = quantize_per_tensor_dynamic(x.to(_f32), quint8, reduce_range)
    w_scale, w_zp = _weight_qparams(qw, n)
    lead = tuple(x.shape[:-1])
    x2 = qx._data.reshape(-1, k)
    packed = _prepacked(qw, w_zp) if x2.shape[0] >= _PACKED_MIN_ROWS else None
    y = _gemm_dequant(x2, qx.q_zero_point(), qw._data, w_zp, _bias_arg(bias, n, op),
                      w_scale * float(_f32_of(qx.q_scale())), relu, packed)
    return y.reshape(*lead, n).to(out_dtype)


def linear_dynamic(x, qw, bias=None, reduce_range: bool = False) -> Tensor:
    """Dynamic quantization: float ``x`` is quantized to quint8 with qparams from its own min/max
    (7 bits with ``reduce_range``, as quantize_dynamic's fbgemm modules do), multiplied by the
    qint8 weight in integers, and the int32 result scaled back to float (+ bias)."""
    return _linear_dynamic(x, qw, bias, reduce_range, False, "linear_dynamic")


def linear_relu_dynamic(x, qw, bias=None, reduce_range: bool = False) -> Tensor:
    return _linear_dynamic(x, qw, bias, reduce_range, True, "linear_relu_dynamic")


def _pair(v, what: str, op: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) == 1:
        return (int(v[0]), int(v[0]))
    if len(v) != 2:
        raise RuntimeError(f"quantized::{op}: {what} must be an int or a pair, got {v}")
    return (int(v[0]), int(v[1]))


def _conv2d(qx, qw, bias, stride, padding, dilation, groups, out_scale, out_zero_point, relu, op) -> QTensor:
    qx, qw = _check_act(qx, op), _check_weight(qw, op, 4)
    if qx.dim() != 4:
        raise RuntimeError(f"quantized::{op}: expected a 4-D (N, C, H, W) input, got shape {tuple(qx.shape)}")
    stride, padding, dilation = _pair(stride, "stride", op), _pair(padding, "padding", op), _pair(dilation, "dilation", op)
    nb, c, h, w = qx.shape
    o, cg, kh, kw = qw.shape
    if groups < 1 or c % groups or o % groups or cg * groups != c:
        raise RuntimeError(f"quantized::{op}: input channels {c}, weight shape {tuple(qw.shape)} and groups "
                           f"{groups} do not agree")
    s, z = _out_qparams(out_scale, out_zero_point, op)
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"quantized::{op}: the kernel {(kh, kw)} (dilated) is larger than the padded input "
                           f"{(h + 2 * padding[0], w + 2 * padding[1])}")
    x_zp = qx.q_zero_point()
    w_scale, w_zp = _weight_qparams(qw, o)
    act_times_w = w_scale * float(_f32_of(qx.q_scale()))
    b = _bias_arg(bias, o, op)
    if not qx.is_cuda and hasattr(_C, "_qconv2d"):  # the CPU kernel: im2col fused into the GEMM, NCHW out
        y = _C._qconv2d(qx._data, int(x_zp), qw._data, w_zp, b, act_times_w, stride, padding, dilation, groups,
                        s, z, relu)
        return QTensor(y, quint8, per_tensor_affine, s, z)
    return _conv2d_im2col(qx, qw, b, stride, padding, dilation, groups, s, z, relu, oh, ow, w_scale, w_zp,
                          act_times_w)


def _conv2d_im2col(qx, qw, b, stride, padding, dilation, groups, s, z, relu, oh, ow, w_scale, w_zp,
                   act_times_w) -> QTensor:
    """The convolution from ordinary ops (other devices, and the reference the tests hold the CPU
    kernel to): an unfold of the integers, then one GEMM per group, then back to NCHW."""
    from ..nn import functional as F

    nb = qx.shape[0]
    o, cg, kh, kw = qw.shape
    x_zp = qx.q_zero_point()
    # im2col of the integers: (q - zp) is exact in float32 and the unfold pads with zeros, i.e.
    # with the zero point (real 0) once zp is added back.
    centred = (qx._data.to(_C.dtype.int32) - x_zp).to(_f32)
    cols = F.unfold(centred, (kh, kw), dilation=dilation, padding=padding, stride=stride)  # (N, C*kh*kw, L)
    L = cols.shape[-1]
    cols_q = (cols + x_zp).to(_C.dtype.uint8)                                             # back to uint8
    og, kg = o // groups, cg * kh * kw
    w2 = qw._data.reshape(o, kg)
    outs = []
    for g in range(groups):
        xg = cols_q[:, g * kg:(g + 1) * kg, :].permute(0, 2, 1).reshape(nb * L, kg)       # (N*L, kg)
        sl = slice(g * og, (g + 1) * og)
        outs.append(_gemm_requant(xg, x_zp, w2[sl], w_zp[sl], None if b is None else b[sl], act_times_w[sl],
                                  s, z, relu))
    y = outs[0] if groups == 1 else __import__("minitorch").cat(outs, 1)
    y = y.reshape(nb, oh * ow, o).permute(0, 2, 1).reshape(nb, o, oh, ow).contiguous()
    return QTensor(y, quint8, per_tensor_affine, s, z)


def conv2d(qx, qw, bias, stride=1, padding=0, dilation=1, groups: int = 1, out_scale: float = 1.0,
           out_zero_point: int = 0) -> QTensor:
    """Quantized 2-D convolution: im2col of quint8 ``qx`` (N, C, H, W) (padding with its zero
    point) times qint8 ``qw`` (O, C/groups, kh, kw) in int32, requantized to quint8."""
    return _conv2d(qx, qw, bias, stride, padding, dilation, groups, out_scale, out_zero_point, False, "conv2d")


def conv2d_relu(qx, qw, bias, stride=1, padding=0, dilation=1, groups: int = 1, out_scale: float = 1.0,
                out_zero_point: int = 0) -> QTensor:
    return _conv2d(qx, qw, bias, stride, padding, dilation, groups, out_scale, out_zero_point, True, "conv2d_relu")
