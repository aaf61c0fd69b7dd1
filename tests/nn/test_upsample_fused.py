"""F.interpolate / nn.Upsample on (N, C, H, W) input in the modes nearest, nearest-exact and
bilinear run as one fused op (ops/upsample.cpp: one kernel forward, one backward). Checked
against the composed path (index_select and weighted sums, kept as
``_interpolate_composed``) and against NumPy (dense interpolation matrices built from the
index rule), on every device, dtype and layout; float64 gradcheck of the forward and of the
backward (double backward); float16 / bfloat16 on CUDA against the float32 result rounded;
and the launch structure (structural counts, the same on a GPU and in the emulator)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch import nn
from minitorch.nn import _sampling_functional as S
from minitorch.nn import functional as F
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

MODES = ["nearest", "nearest-exact", "bilinear"]
# (input shape, size or None, scale_factor or None)
CASES = [
    ((2, 3, 4, 5), None, 2),
    ((1, 2, 3, 4), None, 3),
    ((2, 2, 6, 7), None, 0.5),
    ((1, 3, 5, 4), None, 1.7),
    ((2, 1, 4, 6), None, (1.7, 0.5)),
    ((1, 2, 5, 3), (7, 2), None),
    ((2, 2, 3, 3), (3, 8), None),   # H unchanged (one tap), W grown
    ((1, 1, 1, 4), (5, 1), None),   # size-1 input and output dims
    ((1, 2, 1, 1), None, 3),
    ((1, 1, 9, 8), (4, 3), None),   # shrink to a size that does not divide
]
CASE_IDS = [f"{s}-{sz}-{sc}" for s, sz, sc in CASES]


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().float().numpy() if t.dtype in (minitorch.float16, minitorch.bfloat16)
                    else t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape)


def out_and_scales(shape, size, scale):
    """interpolate's output size and per-dim scales (None where a size was given)."""
    if size is not None:
        return list(size), [None, None]
    sc = list(scale) if isinstance(scale, tuple) else [scale, scale]
    return [int(math.floor(shape[2 + i] * float(sc[i]))) for i in range(2)], [float(s) for s in sc]


def composed(x, shape, size, scale, mode, align_corners):
    out, scales = out_and_scales(shape, size, scale)
    return S._interpolate_composed(x, out, scales, mode, bool(align_corners))


def matrix(mode, in_size, out_size, align_corners, scale):
    """The dense (out, in) interpolation matrix of one dim, in float64, from the index rule."""
    kind = "linear" if mode == "bilinear" else mode
    idx, w = S._taps(kind, in_size, out_size, bool(align_corners), scale, np.float64)
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    for k, i in enumerate(idx):
        np.add.at(m, (rows, i), 1.0 if w is None else w[k])
    return m


def numpy_forward_and_grad(x, g, mode, size, scale, align_corners):
    out, scales = out_and_scales(x.shape, size, scale)
    mh = matrix(mode, x.shape[2], out[0], align_corners, scales[0])
    mw = matrix(mode, x.shape[3], out[1], align_corners, scales[1])
    return mh @ x @ mw.T, mh.T @ g @ mw


def align_options(mode):
    return [False, True] if mode == "bilinear" else [None]


def call(x, size, scale, mode, align_corners):
    return F.interpolate(x, size=size, scale_factor=scale, mode=mode, align_corners=align_corners)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,size,scale", CASES, ids=CASE_IDS)
def test_matches_composed_path_and_numpy(shape, size, scale, mode, dtype, device):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == minitorch.float32 else dict(rtol=1e-12, atol=1e-12)
    for align_corners in align_options(mode):
        arr = rand(shape, 1)
        x = minitorch.tensor(arr, dtype=dtype, device=device, requires_grad=True)
        xr = minitorch.tensor(arr, dtype=dtype, device=device, requires_grad=True)
        y = call(x, size, scale, mode, align_corners)
        want = composed(xr, shape, size, scale, mode, align_corners)
        assert tuple(y.shape) == tuple(want.shape) and y.dtype == dtype
        np.testing.assert_allclose(to_np(y), to_np(want), **tol)
        garr = rand(tuple(y.shape), 2)
        g = minitorch.tensor(garr, dtype=dtype, device=device)
        y.backward(g)
        want.backward(g)
        np.testing.assert_allclose(to_np(x.grad), to_np(xr.grad), **tol)
        ref_y, ref_gx = numpy_forward_and_grad(np.asarray(to_np(x), np.float64), np.asarray(to_np(g), np.float64),
                                               mode, size, scale, align_corners)
        np.testing.assert_allclose(to_np(y), ref_y, **tol)
        np.testing.assert_allclose(to_np(x.grad), ref_gx, **tol)


@pytest.mark.parametrize("mode", MODES)
def test_random_sizes_and_scales_match_numpy(mode, device):
    """Many random input sizes, output sizes and scales (growing, shrinking, unchanged):
    every input pixel's gradient gathers exactly the outputs that read it."""
    rng = np.random.default_rng(10)
    for _ in range(40):
        shape = (1, 2, int(rng.integers(1, 10)), int(rng.integers(1, 10)))
        if rng.random() < 0.5:
            size, scale = (int(rng.integers(1, 14)), int(rng.integers(1, 14))), None
        else:
            size, scale = None, tuple(float(v) for v in rng.choice([0.3, 0.5, 0.75, 1.0, 1.3, 2.0, 2.5, 3.0], 2))
            if min(math.floor(shape[2 + i] * scale[i]) for i in range(2)) < 1:
                continue
        align_corners = bool(rng.random() < 0.5) if mode == "bilinear" else None
        x = minitorch.tensor(rand(shape, 11), device=device, requires_grad=True)
        y = call(x, size, scale, mode, align_corners)
        g = rand(tuple(y.shape), 12)
        y.backward(minitorch.tensor(g, device=device))
        ref_y, ref_gx = numpy_forward_and_grad(to_np(x), g, mode, size, scale, align_corners)
        np.testing.assert_allclose(to_np(y), ref_y, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(to_np(x.grad), ref_gx, rtol=1e-12, atol=1e-12)


def test_forward_is_bit_exact_with_composed_path_on_cpu():
    """The CPU kernel blends rows then columns in the composed path's order: the same bits."""
    for mode in MODES:
        for align_corners in align_options(mode):
            for shape, size, scale in CASES:
                x = minitorch.tensor(rand(shape, 3), dtype=minitorch.float32)
                np.testing.assert_array_equal(to_np(call(x, size, scale, mode, align_corners)),
                                              to_np(composed(x, shape, size, scale, mode, align_corners)))


@pytest.mark.parametrize("mode", MODES)
def test_noncontiguous_and_empty_batch(mode, device):
    arr = rand((3, 2, 5, 6), 4)
    base = minitorch.tensor(np.ascontiguousarray(arr.transpose(0, 1, 3, 2)), device=device, requires_grad=True)
    x = base.transpose(2, 3)  # (3, 2, 5, 6), not contiguous
    assert not x.is_contiguous()
    for align_corners in align_options(mode):
        y = call(x, None, 1.7, mode, align_corners)
        np.testing.assert_allclose(to_np(y), to_np(composed(minitorch.tensor(arr, device=device), arr.shape, None, 1.7,
                                                            mode, align_corners)), rtol=1e-12, atol=1e-12)
        y.sum().backward()
        assert tuple(base.grad.shape) == (3, 2, 6, 5)
        base.grad = None
        for empty in [(0, 2, 3, 4), (2, 0, 3, 4)]:
            e = minitorch.tensor(np.zeros(empty), device=device, requires_grad=True)
            ye = call(e, (5, 2), None, mode, align_corners)
            assert tuple(ye.shape) == empty[:2] + (5, 2)
            ye.sum().backward()
            assert tuple(e.grad.shape) == empty


def test_errors_unchanged():
    x = minitorch.tensor(rand((1, 1, 2, 2)))
    with pytest.raises(ValueError, match="input and output sizes should be greater than 0"):
        F.interpolate(x, size=(0, 2), mode="bilinear")
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, mode="nearest", align_corners=True)
    with pytest.raises(TypeError, match="floating-point"):
        F.interpolate(minitorch.tensor([[[[1, 2]]]]), scale_factor=2)


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_forward_and_double_backward(mode, device):
    for align_corners in align_options(mode):
        for shape, size, scale in [((1, 2, 3, 4), None, 1.7), ((2, 1, 4, 3), (3, 5), None), ((1, 1, 5, 5), None, 0.5)]:
            x = minitorch.tensor(rand(shape, 5), device=device, requires_grad=True)
            assert gradcheck(lambda t: call(t, size, scale, mode, align_corners), (x,))
            out, _ = out_and_scales(shape, size, scale)
            g = minitorch.tensor(rand((shape[0], shape[1], *out), 6), device=device, requires_grad=True)

            def first_grad(t, gy):
                with minitorch.autograd.enable_grad():  # (gradcheck evaluates under no_grad)
                    y = call(t, size, scale, mode, align_corners)
                    (gx,) = minitorch.autograd.grad(y, (t,), gy, create_graph=True)
                return gx * gx  # not linear in gy: its gradient goes through the backward's own backward

            assert gradcheck(first_grad, (x, g))


def test_backward_node_names():
    x = minitorch.tensor(rand((1, 1, 2, 2)), requires_grad=True)
    assert F.interpolate(x, scale_factor=2).grad_fn.name() == "UpsampleNearest2DBackward0"
    assert F.interpolate(x, scale_factor=2, mode="nearest-exact").grad_fn.name() == "UpsampleNearestExact2DBackward0"
    assert F.interpolate(x, scale_factor=2, mode="bilinear").grad_fn.name() == "UpsampleBilinear2DBackward0"


# ---------------------------------------------------------------- CUDA ----

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def kernels(fn):
    """The kernels launched while fn() runs."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k for e in prof.events() for k in e.kernels]


@needs_cuda
@pytest.mark.parametrize("dt", [minitorch.float16, minitorch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("mode", MODES)
def test_half_equals_float32_rounded(mode, dt):
    """16-bit values are read in place and blended in float32: the float32 op's result on the
    same values, rounded once -- the same bits, forward and backward."""
    for align_corners in align_options(mode):
        for shape, size, scale in CASES:
            x16 = minitorch.tensor(rand(shape, 7), device="cuda").to(dt).requires_grad_()
            x32 = x16.detach().float().requires_grad_()
            y16 = call(x16, size, scale, mode, align_corners)
            y32 = call(x32, size, scale, mode, align_corners)
            assert y16.dtype == dt
            np.testing.assert_array_equal(to_np(y16), to_np(y32.to(dt)))
            g16 = minitorch.tensor(rand(tuple(y16.shape), 8), device="cuda").to(dt)
            y16.backward(g16)
            y32.backward(g16.float())
            assert x16.grad.dtype == dt
            np.testing.assert_array_equal(to_np(x16.grad), to_np(x32.grad.to(dt)))


@needs_cuda
@pytest.mark.parametrize("mode", MODES)
def test_one_launch_forward_one_backward(mode):
    """nn.Upsample is one kernel forward and one backward (the backward writes every input
    pixel, so no zero fill first); the composed path took up to a dozen."""
    layer = nn.Upsample(scale_factor=2, mode=mode)
    x = minitorch.tensor(rand((2, 8, 8, 8), 9), dtype=minitorch.float32, device="cuda", requires_grad=True)
    g = minitorch.ones((2, 8, 16, 16), device="cuda")
    out = []
    fwd = kernels(lambda: out.append(layer(x)))
    bwd = kernels(lambda: out[0].backward(g))
    assert len(fwd) == 1 and "upsample" in fwd[0].name, [k.name for k in fwd]
    assert len(bwd) == 1 and "upsample_backward" in bwd[0].name, [k.name for k in bwd]
