"""Resampling in ``nn.functional``: ``interpolate`` (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear, area), ``grid_sample`` and ``affine_grid``.

``interpolate`` is separable: each spatial dim is resampled on its own. For one dim, every
output position ``j`` reads a few input positions ``i_k[j]`` with weights ``w_k[j]``
(1 tap for nearest, 2 for linear, 4 for cubic); those index and weight vectors depend only
on the sizes, so they are computed once with NumPy, following PyTorch's source-index rules
exactly (including its float32 arithmetic), and the data is gathered with ``index_select``.
The gradient is that of ``index_select`` and the weighted sum.

On (N, C, H, W) input the modes nearest, nearest-exact and bilinear run instead as one
fused op (``_C._upsample2d``: one kernel forward, one backward) with the same index rule.

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
    if input.dim() == 4 and mode in _FUSED_MODES:
        # One kernel forward and one backward (ops/upsample.cpp), the same index rule as _taps.
        return _C._upsample2d(input, tuple(out_size), mode, bool(align_corners),
                              [0.0 if s is None else s for s in scales])
    return _interpolate_composed(input, out_size, scales, mode, bool(align_corners))


# The 4-D modes that run as the fused upsample2d op; the rest compose index_select and blends.
_FUSED_MODES = ("nearest", "nearest-exact", "bilinear")


def _interpolate_composed(input, out_size, scales, mode: str, align_corners: bool):
    """interpolate's arguments, checked, resampled one dim at a time with index_select and
    weighted sums: the path of every mode and rank, and the reference the fused op is tested
    against (tests/nn/test_upsample_fused.py)."""
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    # Half precision computes in float32 (PyTorch's opmath) and rounds once at the end.
    x = input.float() if input.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else input
    t = _opmath(x.dtype)
    for i in range(input.dim() - 2):
        idx, w = _taps(kind, input.shape[i + 2], out_size[i], align_corners, scales[i], t)
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


# ---- grid_sample and affine_grid ----

_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")


def _unnormalize(coord, size: int, align_corners: bool):
    """Grid coordinates in [-1, 1] -> pixel coordinates: -1 and 1 are the corner pixels'
    centres with ``align_corners``, else the image's outer edges."""
    if align_corners:
        return (coord + 1.0) * ((size - 1) / 2.0)
    return ((coord + 1.0) * size - 1.0) * 0.5


def _reflect(x, twice_low: int, twice_high: int):
    """Reflects coordinates into [twice_low / 2, twice_high / 2] by mirroring at the borders
    as often as needed (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return x * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    x = (x - low).abs()
    flips = (x * (1.0 / span)).floor().detach()
    extra = x - flips * span  # fmod(x, span), gradient 1
    even = (flips - (flips * 0.5).floor() * 2.0) == 0
    return _C.where(even, extra + low, (extra * -1.0) + (span + low))


def _source_coordinates(coord, size: int, padding_mode: str, align_corners: bool):
    x = _unnormalize(coord, size, align_corners)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        x = x.clamp(0.0, float(size - 1))
    return x


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: bool | None = None):
    """Samples (N, C, H, W) ``input`` at the points of (N, Ho, Wo, 2) ``grid`` (x then y, in
    [-1, 1] over the input's width and height): the output is (N, C, Ho, Wo).

    ``mode``: ``"bilinear"`` or ``"nearest"`` (ties to even); ``padding_mode``: ``"zeros"``
    (outside points read 0), ``"border"`` (the nearest edge pixel) or ``"reflection"``
    (mirrored at the edges). Differentiable in ``input`` and (bilinear) ``grid``: spatial
    transformer networks learn the grid.
    """
    op = "grid_sample"
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise TypeError(f"{op}: expected a floating-point {name}, got {t.dtype}")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.dim() == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) input is not supported in minitorch")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not supported in minitorch")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size 2 in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise TypeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                        f"{input.dtype} and grid has {grid.dtype}")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    if input.numel() == 0 or grid.numel() == 0:
        return _C._full((n, c, ho, wo), 0.0, input.dtype, input.device)
    half = input.dtype in (_C.dtype.float16, _C.dtype.bfloat16)
    x_in, g = (input.float(), grid.float()) if half else (input, grid)
    ix = _source_coordinates(g[..., 0], w, padding_mode, align_corners)  # (N, Ho, Wo)
    iy = _source_coordinates(g[..., 1], h, padding_mode, align_corners)
    flat = x_in.reshape(n, c, h * w)

    def read(xc, yc):
        """input[n, :, yc, xc] for integer-valued (N, Ho, Wo) xc, yc, and 0 outside."""
        inside = (xc >= 0) & (xc <= w - 1) & (yc >= 0) & (yc <= h - 1)
        pos = (yc.clamp(0, h - 1) * w + xc.clamp(0, w - 1)).long().reshape(n, 1, ho * wo)
        vals = flat.gather(2, pos.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return vals * inside.unsqueeze(1).to(vals.dtype)

    if mode == "nearest":
        out = read(ix.detach().round(), iy.detach().round())
    else:
        x0, y0 = ix.detach().floor(), iy.detach().floor()
        wx1, wy1 = ix - x0, iy - y0  # the weights carry the gradient to the grid
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1
        out = None
        for xc, yc, wt in ((x0, y0, wx0 * wy0), (x0 + 1, y0, wx1 * wy0), (x0, y0 + 1, wx0 * wy1),
                           (x0 + 1, y0 + 1, wx1 * wy1)):
            term = read(xc, yc) * wt.unsqueeze(1)
            out = term if out is None else out + term
    return out.to(input.dtype) if half else out


def _linspace_from_neg_one(steps: int, align_corners: bool):
    if steps <= 1:
        return np.zeros(max(steps, 0))
    r = np.linspace(-1.0, 1.0, steps)
    return r if align_corners else r * (steps - 1) / steps


def affine_grid(theta, size, align_corners: bool | None = None):
    """The (N, H, W, 2) sampling grid of the affine maps ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W) (or (N, D, H, W, 3) from (N, 3, 4) for a 5-D size): output pixel
    (x, y) in [-1, 1] coordinates samples at ``theta @ (x, y, 1)``. Feed it to ``grid_sample``.
    """
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if not isinstance(theta, _C.Tensor):
        raise TypeError(f"affine_grid: theta must be a Tensor, got {type(theta).__name__}")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"affine_grid: Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"affine_grid: Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {list(theta.shape)}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"affine_grid: Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {list(theta.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"affine_grid: Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ValueError(f"affine_grid: theta has a batch of {theta.shape[0]} matrices, but size {size} asks for "
                         f"{size[0]}")
    # base[..., :] = (x, y[, z], 1) over the output's pixels, x varying fastest
    axes = [_linspace_from_neg_one(s, align_corners) for s in reversed(spatial)]  # x, y[, z]
    mesh = list(np.meshgrid(*axes[::-1], indexing="ij"))[::-1]  # each of shape spatial
    base = np.stack(mesh + [np.ones(tuple(spatial))], -1).reshape(-1, len(spatial) + 1)
    b = _C._from_numpy_copy(base, theta.dtype, theta.device)
    grid = b.unsqueeze(0) @ theta.transpose(1, 2)  # (N, prod(spatial), k)
    return grid.reshape((size[0],) + tuple(spatial) + (len(spatial),))
