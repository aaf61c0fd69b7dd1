"""The pooling functions of ``nn.functional`` beyond ``max_pool2d``/``avg_pool2d``: the 1-D
forms (a 2-D pool of height 1), adaptive pooling to a fixed output size,
``max_unpool1d/2d``, the inverse of max pooling, the power-average ``lp_pool1d/2d``, and
``max_pool3d``/``avg_pool3d`` (2-D pooling and views of the depth windows; see each).

Adaptive pooling follows PyTorch's windows: output ``i`` of a dim of input size ``n`` and
output size ``m`` covers inputs ``floor(i n / m)`` to ``ceil((i + 1) n / m)`` (exclusive),
so windows may differ in size and overlap.

- average: the windows' means along one dim are a matrix product with an (m, n) averaging
  matrix, one dim after the other (a multiple of the output size takes the C++ avg_pool2d);
- max: each dim's windows are gathered (``index_select``) into a padded (m, K) block, the
  padding repeating a window's last index so that it cannot change the max; the maximum of
  the gathered block also gives the flat input index (``h * W + w``), as PyTorch returns it.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _C
from . import functional as F


def _single(v, name: str, op: str) -> int:
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{op}: {name} must be an int or a 1-tuple, got {v!r}")
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}: {name} must be an int or a 1-tuple of ints, got {type(v).__name__}")
    return v


def _sizes(output_size, k: int, input, op: str) -> tuple:
    """``output_size`` as k ints; None entries keep the input's size (PyTorch's rule)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != k:
            raise ValueError(f"{op}: output_size must be an int or a sequence of {k} ints, got {output_size!r}")
        sizes = list(output_size)
    else:
        sizes = [output_size] * k
    spatial = tuple(input.shape[input.dim() - k:])
    sizes = [spatial[i] if s is None else s for i, s in enumerate(sizes)]
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"{op}: output_size must contain ints, got {output_size!r}")
        if s < 0:
            raise ValueError(f"{op}: elements of output_size must be greater than or equal to 0 but received {s}")
    return tuple(sizes)


def _check_input(input, k: int, op: str):
    """(N, C, *k) or (C, *k) input with non-empty spatial dims; returns (x, unbatched)."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dim() not in (k + 1, k + 2):
        raise ValueError(f"{op}: Expected {k + 1}D or {k + 2}D tensor, but got input of shape {tuple(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise ValueError(f"{op}: Expected input to have non-zero size for non-batch dimensions, but input has "
                             f"sizes {tuple(input.shape)} with dimension {d} being empty")
    return (input.unsqueeze(0), True) if input.dim() == k + 1 else (input, False)


def _windows(n: int, m: int):
    """Start and end (exclusive) of the m adaptive windows over n inputs."""
    i = np.arange(m)
    return (i * n) // m, ((i + 1) * n + m - 1) // m


def _adaptive_avg_pool(x, out: tuple, op: str):
    """Adaptive average over the last len(out) dims of x (any leading dims)."""
    k = len(out)
    spatial = tuple(x.shape[x.dim() - k:])
    if all(o > 0 and s % o == 0 for s, o in zip(spatial, out)) and k == 2 and x.dim() == 4 \
            and x.dtype in (_C.dtype.float32, _C.dtype.float64, _C.dtype.float16, _C.dtype.bfloat16):
        steps = (spatial[0] // out[0], spatial[1] // out[1])
        return _C._avg_pool2d(x, steps, steps, (0, 0), False)
    y = x.float() if x.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else x
    for i, (n, m) in enumerate(zip(spatial, out)):
        if n == m:
            continue
        start, end = _windows(n, m)
        avg = np.zeros((n, m))
        for j in range(m):
            avg[start[j]:end[j], j] = 1.0 / (end[j] - start[j])
        a = _C._from_numpy_copy(avg, y.dtype, y.device)
        d = y.dim() - k + i
        y = (y.movedim(d, -1) @ a).movedim(-1, d)
    return y.to(x.dtype) if y.dtype != x.dtype else y


def adaptive_avg_pool1d(input, output_size):
    """Averages (N, C, L) or (C, L) input over ``output_size`` adaptive windows of L.

    >>> F.adaptive_avg_pool1d(minitorch.tensor([[1.0, 2.0, 3.0]]), 2)
    tensor([[1.5000, 2.5000]])
    """
    x, unbatched = _check_input(input, 1, "adaptive_avg_pool1d")
    out = _adaptive_avg_pool(x, _sizes(_single_or_none(output_size, "adaptive_avg_pool1d"), 1, x,
                                       "adaptive_avg_pool1d"), "adaptive_avg_pool1d")
    return out.squeeze(0) if unbatched else out


def _single_or_none(v, op: str):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{op}: output_size must be an int or a 1-tuple, got {v!r}")
        return v[0]
    return v


def adaptive_avg_pool2d(input, output_size):
    """Averages (N, C, H, W) or (C, H, W) input to ``output_size`` (an int, a pair, or a pair
    with None keeping that input size) with PyTorch's adaptive windows.

    >>> F.adaptive_avg_pool2d(minitorch.ones(1, 3, 5, 7), 1).shape
    minitorch.Size([1, 3, 1, 1])
    """
    if getattr(input, "__minitorch_quantized__", False):  # a quantized tensor: pools its values, same qparams
        return input._float_op("adaptive_avg_pool2d", lambda x: adaptive_avg_pool2d(x, output_size))
    x, unbatched = _check_input(input, 2, "adaptive_avg_pool2d")
    out = _adaptive_avg_pool(x, _sizes(output_size, 2, x, "adaptive_avg_pool2d"), "adaptive_avg_pool2d")
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool3d(input, output_size):
    """Averages (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` adaptive windows."""
    x, unbatched = _check_input(input, 3, "adaptive_avg_pool3d")
    out = _adaptive_avg_pool(x, _sizes(output_size, 3, x, "adaptive_avg_pool3d"), "adaptive_avg_pool3d")
    return out.squeeze(0) if unbatched else out


def _adaptive_max_pool(x, out: tuple):
    """(values, flat input indices) of the adaptive max over the last len(out) dims of (N, C, *)."""
    k = len(out)
    spatial = tuple(x.shape[2:])
    if k == 2 and all(o > 0 and s % o == 0 for s, o in zip(spatial, out)) and x.is_floating_point():
        # equal windows side by side: max_pool2d's kernel (one launch; the same flat indices)
        steps = (spatial[0] // out[0], spatial[1] // out[1])
        return _C._max_pool2d(x, steps, steps, (0, 0), (1, 1), False)
    n, c = x.shape[0], x.shape[1]
    flat = 0  # flat input index of each (o_1, K_1, o_2, K_2, ...) gathered element
    widths = []
    y = x
    for i, (size, m) in enumerate(zip(spatial, out)):
        start, end = _windows(size, m)
        width = int((end - start).max()) if m else 1
        # (m, width) window indices; short windows repeat their last index
        idx = np.minimum(start[:, None] + np.arange(width)[None, :], (end - 1)[:, None])
        widths.append(width)
        y = y.index_select(2 + 2 * i, _C._from_numpy_copy(idx.reshape(-1), _C.dtype.int64, x.device))
        y = y.reshape(tuple(y.shape[:2 + 2 * i]) + (m, width) + tuple(y.shape[3 + 2 * i:]))
        stride = math.prod(spatial[i + 1:])
        shape = [1] * (2 * k)
        shape[2 * i], shape[2 * i + 1] = m, width
        flat = flat + (idx * stride).reshape(shape)
    # (N, C, o_1, K_1, o_2, K_2...) -> (N, C, o_1, o_2, ..., K_1 * K_2 * ...)
    perm = (0, 1) + tuple(2 + 2 * i for i in range(k)) + tuple(3 + 2 * i for i in range(k))
    y = y.permute(*perm).reshape((n, c) + out + (math.prod(widths),))
    table = np.broadcast_to(flat, tuple(s for pair in zip(out, widths) for s in pair))
    table = np.ascontiguousarray(table.transpose([2 * i for i in range(k)] + [2 * i + 1 for i in range(k)]))
    table = table.reshape(out + (math.prod(widths),))
    values, arg = y.max(-1)
    tab = _C._from_numpy_copy(table.astype(np.int64), _C.dtype.int64, x.device)
    indices = tab.expand((n, c) + tuple(tab.shape)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return values, indices


def _adaptive_max(input, output_size, return_indices: bool, k: int, op: str):
    x, unbatched = _check_input(input, k, op)
    out = _sizes(_single_or_none(output_size, op) if k == 1 else output_size, k, x, op)
    if 0 in out:
        raise ValueError(f"{op}: output_size must be greater than 0, got {out}")
    values, indices = _adaptive_max_pool(x, out)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max of (N, C, L) or (C, L) input over ``output_size`` adaptive windows of L; with
    ``return_indices`` also the position of each maximum in L."""
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max of (N, C, H, W) or (C, H, W) input over adaptive windows; with ``return_indices``
    also the flat position ``h * W + w`` of each maximum (what ``max_unpool2d`` takes)."""
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max of (N, C, D, H, W) or (C, D, H, W) input over adaptive windows; the indices are
    flat positions ``(d * H + h) * W + w``."""
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of (N, C, L) or (C, L) input: a ``max_pool2d`` of height 1. The indices
    are positions in L."""
    op = "max_pool1d"
    if not isinstance(input, _C.Tensor) or input.dim() not in (2, 3):
        shape = tuple(input.shape) if isinstance(input, _C.Tensor) else type(input).__name__
        raise ValueError(f"{op}: expected a 2-D (unbatched) or 3-D (batched) input, got shape {shape}")
    k = _single(kernel_size, "kernel_size", op)
    s = k if stride is None or stride == [] or stride == () else _single(stride, "stride", op)
    p, d = _single(padding, "padding", op), _single(dilation, "dilation", op)
    res = F.max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    """Mean over windows of (N, C, L) or (C, L) input: an ``avg_pool2d`` of height 1."""
    op = "avg_pool1d"
    if not isinstance(input, _C.Tensor) or input.dim() not in (2, 3):
        shape = tuple(input.shape) if isinstance(input, _C.Tensor) else type(input).__name__
        raise ValueError(f"{op}: expected a 2-D (unbatched) or 3-D (batched) input, got shape {shape}")
    k = _single(kernel_size, "kernel_size", op)
    s = k if stride is None or stride == [] or stride == () else _single(stride, "stride", op)
    p = _single(padding, "padding", op)
    return F.avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


def _tuple(v, k: int, name: str, op: str) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != k:
            raise ValueError(f"{op}: {name} must be an int or a tuple of {k} ints, got {v!r}")
        return tuple(int(e) for e in v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}: {name} must be an int or a tuple of {k} ints, got {type(v).__name__}")
    return (v,) * k


def _unpool_output_size(x, kernel, stride, padding, output_size, op: str) -> tuple:
    """PyTorch's _unpool_output_size: the default ``(in - 1) * stride - 2 * padding + kernel``,
    or ``output_size`` (its last k entries) if within a stride of it."""
    k = len(kernel)
    default = tuple((x.shape[x.dim() - k + d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(k))
    if output_size is None:
        return default
    sizes = [int(s) for s in (output_size.tolist() if isinstance(output_size, _C.Tensor) else output_size)]
    if len(sizes) == k + 2:
        sizes = sizes[2:]
    if len(sizes) != k:
        raise ValueError(f"{op}: output_size should be a sequence containing {k} or {k + 2} elements, but it has a "
                         f"length of '{len(sizes)}'")
    for d in range(k):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < sizes[d] < hi:
            raise ValueError(f'{op}: invalid output_size "{tuple(sizes)}" (dim {d} must be between {lo} and {hi})')
    return tuple(sizes)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, k: int, op: str):
    x, unbatched = _check_input(input, k, op)
    if not isinstance(indices, _C.Tensor) or indices.dtype != _C.dtype.int64:
        got = indices.dtype if isinstance(indices, _C.Tensor) else type(indices).__name__
        raise TypeError(f"{op}: expected indices of dtype int64, got {got}")
    if tuple(indices.shape) != tuple(input.shape):
        raise ValueError(f"{op}: Expected shape of indices to be same as that of the input tensor "
                         f"({tuple(input.shape)}) but got indices tensor with shape: {tuple(indices.shape)}")
    kernel = _tuple(kernel_size, k, "kernel_size", op)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, k, "stride", op)
    padding = _tuple(padding, k, "padding", op)
    out = _unpool_output_size(x, kernel, stride, padding, output_size, op)
    n, c = x.shape[0], x.shape[1]
    plane = math.prod(out)
    idx = (indices.unsqueeze(0) if unbatched else indices).reshape(n, c, -1)
    if idx.numel() and (bool((idx < 0).any()) or bool((idx >= plane).any())):
        bad = int(idx.max().item()) if bool((idx >= plane).any()) else int(idx.min().item())
        raise RuntimeError(f"{op}: Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out))})")
    zeros = _C._full((n, c, plane), 0.0, x.dtype, x.device)
    res = zeros.scatter(2, idx, x.reshape(n, c, -1)).reshape((n, c) + out)
    return res.squeeze(0) if unbatched else res


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each value of (N, C, L) or (C, L) ``input`` at its position ``indices`` (from
    ``max_pool1d(..., return_indices=True)``) in a zero tensor of the pre-pooling length."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value goes to its flat position
    ``h * W + w`` (``indices`` from ``return_indices=True``), the rest is zero.

    >>> out, idx = F.max_pool2d(x, 2, return_indices=True)
    >>> F.max_unpool2d(out, idx, 2).shape == x.shape
    True
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def _lp_pool(input, norm_type: float, kernel: tuple, stride, ceil_mode: bool, op: str):
    """``(sum of x^p over each window) ^ (1/p)``, as PyTorch computes it: the average pool of
    ``x^p`` times the window's size, passed through ``sign(v) * relu(|v|)`` (the value itself,
    whose gradient is 0 where a window sums to 0), then to the power ``1/p``."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if norm_type == 0:
        raise ValueError(f"{op}: norm_type must be nonzero (the result is raised to 1 / norm_type), got {norm_type}")
    powered = input.pow(norm_type)
    if len(kernel) == 1:
        out = avg_pool1d(powered, kernel[0], stride, 0, ceil_mode)
    else:
        out = F.avg_pool2d(powered, kernel, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu() * math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, L) or (C, L) input: ``(sum x^p) ^ (1/p)``, p =
    ``norm_type`` (1: the sum; large p: near the max). ``stride`` defaults to ``kernel_size``.

    >>> F.lp_pool1d(minitorch.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    return _lp_pool(input, norm_type, (_single(kernel_size, "kernel_size", "lp_pool1d"),), stride, ceil_mode,
                    "lp_pool1d")


def lp_pool2d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each (kH, kW) window of (N, C, H, W) or (C, H, W) input; ``stride``
    defaults to ``kernel_size``."""
    return _lp_pool(input, norm_type, _tuple(kernel_size, 2, "kernel_size", "lp_pool2d"), stride, ceil_mode,
                    "lp_pool2d")


# ---- 3-D max and average pooling, from 2-D pooling and views of the depth windows ----

def _pool_output_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size: floor (or ceil) of (L + 2p - d(k - 1) - 1) / s, plus 1;
    with ceil_mode a last window that starts at or past L + p (in the right padding) is dropped."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool3d_args(input, kernel_size, stride, padding, dilation, ceil_mode: bool, op: str):
    """Checks a 3-D pool's input and arguments; returns (x, unbatched, kernel, stride,
    padding, dilation, output size), each of the last five a triple."""
    x, unbatched = _check_input(input, 3, op)
    if not x.is_floating_point():
        raise TypeError(f"{op}: expected a floating point input, got {x.dtype}")
    k = _tuple(kernel_size, 3, "kernel_size", op)
    s = k if stride is None or stride == [] or stride == () else _tuple(stride, 3, "stride", op)
    p, d = _tuple(padding, 3, "padding", op), _tuple(dilation, 3, "dilation", op)
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0 or min(p) < 0:
        raise ValueError(f"{op}: kernel_size, stride and dilation must be positive and padding non-negative, got "
                         f"kernel_size={k}, stride={s}, padding={p}, dilation={d}")
    if any(p[i] > k[i] // 2 for i in range(3)):
        raise _C.InputError(f"{op}: padding should be at most half of the kernel size, got padding {p} for kernel {k}")
    size = tuple(x.shape[2:])
    out = tuple(_pool_output_size(size[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))
    if min(out) < 1:
        raise _C.InputError(f"{op}: given input of shape {tuple(input.shape)}, the output size {out} is too small "
                            f"(kernel_size={k}, stride={s}, padding={p}, dilation={d})")
    return x, unbatched, k, s, p, d, out


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over (kD, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W) input; ``stride``
    defaults to ``kernel_size``. With ``return_indices`` also the flat position
    ``(d * H + h) * W + w`` of each maximum (the first one, as PyTorch's scan finds it).

    Made of 2-D pooling: ``max_pool2d`` of every depth slice of the input padded in depth
    with -inf, then the max over each depth window (a view: ``unfold``). The gradient goes to
    one element per window, the one the indices name.

    >>> F.max_pool3d(minitorch.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    tensor([[[[[7.]]]]])
    """
    op = "max_pool3d"
    x, unbatched, k, s, p, d, out = _pool3d_args(input, kernel_size, stride, padding, dilation, ceil_mode, op)
    n, c, depth, h, w = x.shape
    span = d[0] * (k[0] - 1) + 1
    # -inf rows before, and after for the windows' reach (ceil_mode's last one may overhang)
    after = max(0, (out[0] - 1) * s[0] + span - depth - p[0])
    x = F.pad(x, (0, 0, 0, 0, p[0], after), value=float("-inf"))
    planes, flat2d = F.max_pool2d(x.reshape(n, c * x.shape[2], h, w), k[1:], s[1:], p[1:], d[1:], ceil_mode,
                                  return_indices=True)

    def depth_windows(t):  # (N, C, D', Ho, Wo) -> (N, C, Do, Ho, Wo, kD), a view
        t = t.reshape(n, c, x.shape[2], out[1], out[2])
        return t.unfold(2, span, s[0])[..., ::d[0]].narrow(2, 0, out[0])

    values, tap = depth_windows(planes).max(dim=-1)
    if not return_indices:
        return values.squeeze(0) if unbatched else values
    flat2d = depth_windows(flat2d).gather(-1, tap.unsqueeze(-1)).squeeze(-1)
    start = _C._from_numpy_copy((np.arange(out[0]) * s[0] - p[0]).reshape(-1, 1, 1), _C.dtype.int64, x.device)
    indices = (start + tap * d[0]) * (h * w) + flat2d
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


def _avg_divisor(size: int, k: int, s: int, p: int, out: int, count_include_pad: bool):
    """How many elements each of the ``out`` windows of one dim averages (PyTorch's rule): the
    window clipped to the padded input, or to the input itself without count_include_pad."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None):
    """Mean over (kD, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W) input; ``stride``
    defaults to ``kernel_size``. The padding counts as zeros (``count_include_pad=False``:
    only the input's elements count); ``divisor_override`` divides every window's sum by it.

    Made of 2-D pooling, as max_pool3d: ``avg_pool2d`` of every depth slice (the mean of each
    (kH, kW) window), then the sum over each depth window (a view: ``unfold``) of those means,
    divided by what is left of the divisor. PyTorch's divisor is a product of one count per
    dim (the window's extent, clipped to the padded input or, without count_include_pad, to the
    input itself), and avg_pool2d already divided by the H and W ones of the padded input.

    >>> F.avg_pool3d(minitorch.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    tensor([[[[[3.5000]]]]])
    """
    op = "avg_pool3d"
    x, unbatched, k, s, p, _, out = _pool3d_args(input, kernel_size, stride, padding, 1, ceil_mode, op)
    if divisor_override is not None and divisor_override == 0:
        raise _C.InputError(f"{op}: divisor must be not zero")
    n, c, depth, h, w = x.shape
    size = (depth, h, w)
    planes = F.avg_pool2d(x.reshape(n, c * depth, h, w), k[1:], s[1:], p[1:], ceil_mode)
    # zeros in depth: the padding, and past the end for ceil_mode's overhanging last window
    after = max(0, (out[0] - 1) * s[0] + k[0] - depth - p[0])
    planes = F.pad(planes.reshape(n, c, depth, out[1], out[2]), (0, 0, 0, 0, p[0], after))
    y = planes.unfold(2, k[0], s[0]).sum(-1).narrow(2, 0, out[0])
    padded = [_avg_divisor(size[i], k[i], s[i], p[i], out[i], True) for i in range(3)]
    hw = padded[1][:, None] * padded[2][None, :]  # what avg_pool2d divided by
    if divisor_override is not None:
        divisor = np.broadcast_to(divisor_override / hw, (1,) + hw.shape)
    elif count_include_pad:
        divisor = padded[0][:, None, None].astype(np.float64)
    else:
        inside = [_avg_divisor(size[i], k[i], s[i], p[i], out[i], False) for i in range(3)]
        divisor = inside[0][:, None, None] * (inside[1][:, None] * inside[2][None, :] / hw)[None]
    y = y / _C._from_numpy_copy(np.ascontiguousarray(divisor, dtype=np.float64), y.dtype, y.device)
    return y.squeeze(0) if unbatched else y
