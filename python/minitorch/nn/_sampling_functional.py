"""Resampling in ``nn.functional``: ``interpolate`` (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear, area), ``grid_sample`` and ``affine_grid``.

``interpolate`` is separable: each spatial dim is resampled on its own. For one dim, every
output position ``j`` reads a few input positions ``i_k[j]`` with weights ``w_k[j]``
(1 tap for nearest, 2 for linear, 4 for cubic); those index and weight vectors depend only
on the sizes, so they are computed once with NumPy, following PyTorch's source-index rules
exactly (including its float32 arithmetic), and the data is gathered with ``index_select``.
The gradient is that of ``index_select`` and the weighted sum.

``grid_sample`` reads the input at data-dependent points: it flattens each (H, W) plane and
``gather``s the four (or one) neighbours of every grid point; the weights are functions of
the grid, so the gradient reaches both the input and the grid.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _C

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
# The mode that each input rank takes (PyTorch's rule: linear is 3-D only, bilinear and
# bicubic 4-D, trilinear 5-D).
_MODE_RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _long(arr, device):
    return _C._from_numpy_copy(np.ascontiguousarray(arr, dtype=np.int64), _C.dtype.int64, device)


def _opmath(dtype):
    """NumPy type of PyTorch's index/weight arithmetic: double for float64, else float."""
    return np.float64 if dtype == _C.dtype.float64 else np.float32


def _scale_value(in_size: int, out_size: int, scale, t):
    """PyTorch's compute_scales_value: ``1 / scale_factor`` when one was given, else in/out."""
    if scale is not None and scale > 0:
        return t(1.0 / scale)
    return t(in_size) / t(out_size)


def _area_scale(in_size: int, out_size: int, align_corners: bool, scale, t):
    """PyTorch's area_pixel_compute_scale: the input step per output step."""
    if align_corners:
        return t(in_size - 1) / t(out_size - 1) if out_size > 1 else t(0)
    return _scale_value(in_size, out_size, scale, t)


def _source_index(scale, out_size: int, align_corners: bool, cubic: bool, t):
    """PyTorch's area_pixel_compute_source_index for every output position: where output
    ``j`` samples the input (pixel centres line up unless ``align_corners``)."""
    dst = np.arange(out_size)
    if align_corners:
        return (t(scale) * dst.astype(t)).astype(t)
    src = (np.float64(scale) * (dst + 0.5) - 0.5).astype(t)  # (dst + 0.5) is a double in PyTorch
    return src if cubic else np.maximum(src, t(0))


def _taps(mode: str, in_size: int, out_size: int, align_corners: bool, scale, t):
    """(indices, weights): lists of per-output-position arrays, one pair per tap."""
    j = np.arange(out_size)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and out_size == in_size:
            return [j], None
        if mode == "nearest" and out_size == 2 * in_size:
            return [j >> 1], None
        s = _scale_value(in_size, out_size, scale, np.float32)  # float32 even for double inputs
        if mode == "nearest":
            src = np.floor(j.astype(np.float32) * s)
        else:  # nearest-exact: pixel centres, (j + 0.5) * scale in double, rounded to float
            src = np.floor(((j + 0.5) * np.float64(s)).astype(np.float32))
        return [np.minimum(src.astype(np.int64), in_size - 1)], None
    if mode == "linear":
        if out_size == in_size:
            return [j], None
        s = _area_scale(in_size, out_size, align_corners, scale, t)
        src = _source_index(s, out_size, align_corners, False, t)
        i0 = src.astype(np.int64)  # src >= 0: truncation is floor
        i1 = i0 + (i0 < in_size - 1)
        l1 = np.clip(src - i0.astype(t), 0, 1).astype(t)
        return [i0, i1], [(t(1) - l1), l1]
    # cubic convolution (Keys, A = -0.75), taps at floor(src) - 1 .. floor(src) + 2 clamped
    s = _area_scale(in_size, out_size, align_corners, scale, t)
    src = _source_index(s, out_size, align_corners, True, t)
    i = np.floor(src).astype(np.int64)
    x = (src - i.astype(t)).astype(t)
    a = t(-0.75)

    def near(v):  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    weights = [far(x + 1), near(x), near(1 - x), far(2 - x)]
    return [np.clip(i - 1 + k, 0, in_size - 1) for k in range(4)], [w.astype(t) for w in weights]


def _resample_dim(x, dim: int, idx, weights):
    """Output ``j`` along ``dim`` = sum over taps of ``w[j] * x[..., idx[j], ...]``."""
    device = x.device
    if weights is None:
        return x.index_select(dim, _long(idx[0], device))
    trailing = (1,) * (x.dim() - dim - 1)
    out = None
    for i, w in zip(idx, weights):
        wt = _C._from_numpy_copy(np.ascontiguousarray(w, dtype=np.float64), x.dtype, device)
        term = x.index_select(dim, _long(i, device)) * wt.reshape((len(w),) + trailing)
        out = term if out is None else out + term
    return out


def _check_size_list(v, dim: int, input, what: str):
    if isinstance(v, (list, tuple)):
        if len(v) != dim:
            if what == "size":
                raise ValueError(
                    "interpolate: Input and output must have the same number of spatial dimensions, but got input "
                    f"with spatial dimensions of {list(input.shape[2:])} and output size of {v}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            raise ValueError(
                "interpolate: Input and scale_factor must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {v}. Please provide "
                "input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        return list(v)
    return [v] * dim


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False):
    """Resizes the spatial dims of (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to ``size``
    or by ``scale_factor`` (output size ``floor(in * scale_factor)``).

    ``mode``: ``"nearest"`` (PyTorch's legacy rule ``floor(j * in / out)``), ``"nearest-exact"``
    (pixel centres), ``"linear"`` (3-D), ``"bilinear"``/``"bicubic"`` (4-D), ``"trilinear"``
    (5-D) or ``"area"`` (adaptive average pooling). ``align_corners=True`` maps the corner
    pixels onto each other; otherwise pixel centres line up. A given ``scale_factor`` is
    used as the step (``1 / scale_factor``) unless ``recompute_scale_factor=True``.

    >>> F.interpolate(minitorch.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="linear")
    tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    """
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: mode must be one of {' | '.join(_MODES)}, got {mode!r}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("interpolate: align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if not input.dtype.is_floating_point:
        raise TypeError(f"interpolate: expected a floating-point input, got {input.dtype}")
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is not None:
        out_size = [int(s) for s in _check_size_list(size, dim, input, "size")]
        scales = [None] * dim
    elif scale_factor is not None:
        scales = [float(s) for s in _check_size_list(scale_factor, dim, input, "scale_factor")]
        out_size = None
    else:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if out_size is None:
        out_size = [int(math.floor(float(input.shape[i + 2]) * scales[i])) for i in range(dim)]
        if recompute_scale_factor:
            scales = [None] * dim
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.dim() == 4):
            raise ValueError("interpolate: Anti-alias option is only supported for bilinear and bicubic modes")
        raise NotImplementedError("interpolate: antialias=True is not supported in minitorch")
    if input.dim() not in (3, 4, 5):
        raise NotImplementedError(
            f"interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode in _MODE_RANK and input.dim() != _MODE_RANK[mode]:
        raise NotImplementedError(f"interpolate: Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_MODE_RANK[mode]}D input")
    for i, o in enumerate(out_size):
        if o <= 0 or input.shape[i + 2] <= 0:
            raise ValueError(f"interpolate: input and output sizes should be greater than 0, but got input "
                             f"(spatial) size {tuple(input.shape[2:])} and output size {tuple(out_size)}")
    if mode == "area":
        from ._pooling_functional import _adaptive_avg_pool
        return _adaptive_avg_pool(input, tuple(out_size), "interpolate")
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    # Half precision computes in float32 (PyTorch's opmath) and rounds once at the end.
    x = input.float() if input.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else input
    t = _opmath(x.dtype)
    for i in range(dim):
        idx, w = _taps(kind, input.shape[i + 2], out_size[i], bool(align_corners), scales[i], t)
        x = _resample_dim(x, i + 2, idx, w)
    return x.to(input.dtype) if x.dtype != input.dtype else x


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None):
    """Deprecated in PyTorch in favour of ``interpolate`` (which it calls)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode="nearest")``."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)``."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
