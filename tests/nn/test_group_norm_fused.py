"""The fused group norm op (ops/group_norm.cpp, kernels group_norm / group_norm_backward) against
NumPy formulas: values and gradients of input, weight and bias on (N, C), (N, C, L), (N, C, H, W)
and (N, C, D, H, W) shapes with 1, C and other group counts, with and without the affine, in
float32 / float64 and 16-bit dtypes; non-contiguous inputs; data far from zero; float64
gradcheck and the double backward; instance_norm through it; the launch counts; the errors.
Every device (the CUDA kernels run in the emulator)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    if t.dtype in (minitorch.float16, minitorch.bfloat16):
        t = t.float()
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def np_group_norm(x, groups, w, b, eps):
    """Output in float64."""
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + eps)).reshape(x.shape)
    cshape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(cshape)
    if b is not None:
        y = y + b.reshape(cshape)
    return y


def np_group_norm_grads(x, groups, w, gy, eps):
    """Input, weight and bias gradients in float64 (the layer norm's formula per (n, group) row)."""
    n, c = x.shape[:2]
    cshape = (1, c) + (1,) * (x.ndim - 2)
    rows = x.reshape(n, groups, -1)
    mean, var = rows.mean(axis=2, keepdims=True), rows.var(axis=2, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    xhat = ((rows - mean) * rstd).reshape(x.shape)
    gw = (gy * (w.reshape(cshape) if w is not None else 1.0)).reshape(n, groups, -1)
    xh = xhat.reshape(n, groups, -1)
    gx = rstd * (gw - gw.mean(axis=2, keepdims=True) - xh * (gw * xh).mean(axis=2, keepdims=True))
    axes = (0,) + tuple(range(2, x.ndim))
    return gx.reshape(x.shape), (gy * xhat).sum(axis=axes), gy.sum(axis=axes)


def run_group_norm(device, dtype, x, groups, w, b, gy):
    """y = F.group_norm of the NumPy arrays as `dtype` tensors on `device`, after y.backward(gy):
    (y, x, weight, bias) tensors (None for a missing weight or bias)."""
    mdt = getattr(minitorch, dtype)

    def t(a):
        return None if a is None else minitorch.tensor(a, device=device).to(mdt).requires_grad_()

    xt, wt, bt = t(x), t(w), t(b)
    y = F.group_norm(xt, groups, wt, bt, eps=1e-5)
    y.backward(minitorch.tensor(gy, device=device).to(mdt))
    assert y.dtype == mdt and y.grad_fn.name() == "NativeGroupNormBackward0"
    return y, xt, wt, bt


CASES = [((3, 6), 3), ((3, 6), 1), ((2, 4, 5), 2), ((1, 6, 7), 6), ((2, 8, 3, 4), 4), ((2, 8, 3, 4), 1),
         ((2, 6, 2, 3, 2), 3), ((2, 4, 1, 1), 2), ((1, 3, 1, 5), 3), ((4, 32, 2, 2), 8)]


@pytest.mark.parametrize("shape,groups", CASES)
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_grads_match_numpy(device, shape, groups, affine, dtype):
    seed = sum(shape) + groups
    c = shape[1]
    x = rand(shape, seed)
    w = rand((c,), seed + 1) if affine in ("both", "weight") else None
    b = rand((c,), seed + 2) if affine in ("both", "bias") else None
    gy = rand(shape, seed + 3)
    y, xt, wt, bt = run_group_norm(device, dtype, x, groups, w, b, gy)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_np(y), np_group_norm(x, groups, w, b, 1e-5), **tol)
    gx, gw, gb = np_group_norm_grads(x, groups, w, gy, 1e-5)
    # dx is a difference of terms of size rstd * |g * w|: a row of two close values (rstd in the
    # hundreds) leaves float32 a few float32 steps of those terms, not of dx.
    terms = np.abs(gy).max() * (np.abs(w).max() if w is not None else 1.0) / np.sqrt(
        x.reshape(shape[0], groups, -1).var(axis=2).min() + 1e-5)
    np.testing.assert_allclose(to_np(xt.grad), gx, rtol=tol["rtol"], atol=max(tol["atol"], 1e-6 * terms)
                               if dtype == "float32" else tol["atol"])
    if wt is not None:
        np.testing.assert_allclose(to_np(wt.grad), gw, **tol)
    if bt is not None:
        np.testing.assert_allclose(to_np(bt.grad), gb, **tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_inputs_compute_in_float32(device, dtype):
    shape, groups = (2, 6, 4, 3), 3
    mdt = getattr(minitorch, dtype)
    xt = minitorch.tensor(rand(shape, 30), device=device).to(mdt).requires_grad_()
    wt = minitorch.tensor(rand((6,), 31), device=device).to(mdt).requires_grad_()
    bt = minitorch.tensor(rand((6,), 32), device=device).to(mdt).requires_grad_()
    gy = minitorch.tensor(rand(shape, 33), device=device).to(mdt)
    y = F.group_norm(xt, groups, wt, bt)
    y.backward(gy)
    assert y.dtype == mdt and xt.grad.dtype == mdt and wt.grad.dtype == mdt
    # the reference from the 16-bit values themselves
    x, w, b, g = (to_np(a).astype(np.float64) for a in (xt, wt, bt, gy))
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == "float16" else dict(rtol=8e-2, atol=8e-2)
    np.testing.assert_allclose(to_np(y), np_group_norm(x, groups, w, b, 1e-5), **tol)
    gx, gw, gb = np_group_norm_grads(x, groups, w, g, 1e-5)
    np.testing.assert_allclose(to_np(xt.grad), gx, **tol)
    np.testing.assert_allclose(to_np(wt.grad), gw, rtol=tol["rtol"], atol=tol["atol"] * 10)
    np.testing.assert_allclose(to_np(bt.grad), gb, rtol=tol["rtol"], atol=tol["atol"] * 10)


@pytest.mark.parametrize("view", ["transposed", "sliced"])
def test_non_contiguous_inputs(device, view):
    base = rand((4, 6, 5, 3), 40)
    if view == "transposed":  # (N, C, H, W) as a permutation of a (N, W, H, C) tensor
        src = minitorch.tensor(np.ascontiguousarray(base.transpose(0, 3, 2, 1)), device=device)
        xt = src.permute(0, 3, 2, 1)
    else:
        src = minitorch.tensor(rand((4, 12, 5, 3), 41), device=device)
        xt = src[:, ::2]
        base = rand((4, 12, 5, 3), 41)[:, ::2]
    assert not xt.is_contiguous()
    xt.requires_grad_()
    w, b = rand((6,), 42), rand((6,), 43)
    y = F.group_norm(xt, 3, minitorch.tensor(w, device=device), minitorch.tensor(b, device=device))
    np.testing.assert_allclose(to_np(y), np_group_norm(base, 3, w, b, 1e-5), rtol=1e-10, atol=1e-10)
    gy = rand(base.shape, 44)
    y.backward(minitorch.tensor(gy, device=device))
    np.testing.assert_allclose(to_np(xt.grad), np_group_norm_grads(base, 3, w, gy, 1e-5)[0], rtol=1e-9, atol=1e-9)


def test_far_from_zero_float32_keeps_its_variance(device):
    x = (1000.0 + rand((4, 4, 8, 8), 50, -1e-2, 1e-2)).astype(np.float32)
    y = F.group_norm(minitorch.tensor(x, device=device), 2, eps=0.0)
    np.testing.assert_allclose(to_np(y), np_group_norm(x.astype(np.float64), 2, None, None, 0.0), rtol=0, atol=2e-3)


@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((3, 2, 2, 2), 1), ((2, 3), 3)])
def test_gradcheck(device, shape, groups):
    x = minitorch.tensor(rand(shape, 60), device=device, requires_grad=True)
    w = minitorch.tensor(rand((shape[1],), 61), device=device, requires_grad=True)
    b = minitorch.tensor(rand((shape[1],), 62), device=device, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-3), (x, w, b))
    assert gradcheck(lambda x: F.group_norm(x, groups, eps=1e-3), (x,))


def test_double_backward(device):
    """Hessian-vector products of a loss (through the composed backward of create_graph)
    against central differences of its first derivatives."""
    shape = (3, 4, 5)
    x, w, b = (minitorch.tensor(rand(s, 70 + i), device=device, requires_grad=True)
               for i, s in enumerate((shape, (4,), (4,))))
    c = minitorch.tensor(rand(shape, 74), device=device)

    def first(x, w, b, create_graph=False):
        loss = ((F.group_norm(x, 2, w, b, eps=1e-3) * c) ** 2).sum()
        return minitorch.autograd.grad(loss, (x, w, b), create_graph=create_graph)

    vs = [rand(tuple(t.shape), 75 + i) for i, t in enumerate((x, w, b))]
    gs = first(x, w, b, create_graph=True)
    dot = sum((g * minitorch.tensor(v, device=device)).sum() for g, v in zip(gs, vs))
    hv = minitorch.autograd.grad(dot, (x, w, b), allow_unused=True)

    def shifted(sign, eps=1e-6):
        ts = [minitorch.tensor(to_np(t) + sign * eps * v, device=device, requires_grad=True)
              for t, v in zip((x, w, b), vs)]
        return [to_np(g) for g in first(*ts)]

    for h, p, m in zip(hv, shifted(1), shifted(-1)):
        np.testing.assert_allclose(to_np(h) if h is not None else 0.0, (p - m) / 2e-6, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 4), (1, 2, 2, 3, 2)])
def test_instance_norm_is_the_fused_group_norm(device, shape):
    c = shape[1]
    x = minitorch.tensor(rand(shape, 80), device=device, requires_grad=True)
    w = minitorch.tensor(rand((c,), 81), device=device, requires_grad=True)
    b = minitorch.tensor(rand((c,), 82), device=device, requires_grad=True)
    y = F.instance_norm(x, weight=w, bias=b)
    assert y.grad_fn.name() == "NativeGroupNormBackward0"
    np.testing.assert_allclose(to_np(y), np_group_norm(to_np(x), c, to_np(w), to_np(b), 1e-5), rtol=1e-10, atol=1e-10)
    gy = rand(shape, 83)
    y.backward(minitorch.tensor(gy, device=device))
    gx, gw, gb = np_group_norm_grads(to_np(x), c, to_np(w), gy, 1e-5)
    for got, want in ((x.grad, gx), (w.grad, gw), (b.grad, gb)):
        np.testing.assert_allclose(to_np(got), want, rtol=1e-9, atol=1e-9)


def test_instance_norm_of_a_16bit_input_with_float32_parameters(device):
    """InstanceNorm(affine=True) after a float16 layer (autocast): the affine is applied after
    the fused normalization, with type promotion, as before the fusion."""
    x = minitorch.tensor(rand((2, 3, 8), 84), device=device).to(minitorch.float16)
    w = minitorch.tensor(rand((3,), 85), device=device).float()
    b = minitorch.tensor(rand((3,), 86), device=device).float()
    y = F.instance_norm(x, weight=w, bias=b)
    assert y.dtype == minitorch.float32
    want = np_group_norm(to_np(x).astype(np.float64), 3, to_np(w).astype(np.float64), to_np(b).astype(np.float64), 1e-5)
    np.testing.assert_allclose(to_np(y), want, rtol=2e-2, atol=2e-2)


def test_one_node_per_call_and_errors(device):
    x = minitorch.tensor(rand((2, 4, 3), 90), device=device, requires_grad=True)
    with profile() as prof:
        F.group_norm(x, 2, minitorch.ones(4, device=device, dtype=minitorch.float64)).sum().backward()
    names = [e.name for e in prof.events()]
    assert names.count("group_norm") == 1 and names.count("NativeGroupNormBackward0") == 1, names
    with pytest.raises(ValueError, match="group_norm: the 4 channels"):
        F.group_norm(x, 3)
    with pytest.raises(ValueError, match="group_norm: the 4 channels"):
        minitorch._C._group_norm(x, 0, None, None, 1e-5)
    with pytest.raises(ValueError, match="group_norm: .*weight"):
        F.group_norm(x, 2, minitorch.ones(3, device=device, dtype=minitorch.float64))
    with pytest.raises(ValueError, match="group_norm: weight should have shape"):
        minitorch._C._group_norm(x, 2, minitorch.ones(2, 2, device=device, dtype=minitorch.float64), None, 1e-5)
    with pytest.raises(TypeError, match="group_norm: input .* must have the same dtype"):
        F.group_norm(x, 2, minitorch.ones(4, device=device, dtype=minitorch.float32))
    with pytest.raises(TypeError, match="group_norm: expected a floating tensor"):
        minitorch._C._group_norm(minitorch.ones(2, 4, dtype=minitorch.int64, device=device), 2, None, None, 1e-5)


# ---- launch counts (the CUDA backend; exact, the same in the emulator) ----

def _kernels(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("affine", [True, False])
def test_launch_counts(affine):
    """Forward: one launch (statistics, normalization and affine). Backward of the node: the
    planes' sums (group_norm_plane_sums_kernel), dx (group_norm_backward_kernel) and, with an
    affine, dw and db (group_norm_params_kernel): at most 3."""
    gn = nn.GroupNorm(4, 16, affine=affine).to("cuda")
    x = minitorch.randn(4, 16, 6, 6, device="cuda", requires_grad=True)
    g = minitorch.randn(4, 16, 6, 6, device="cuda")
    y = None

    def forward():
        nonlocal y
        y = gn(x)

    fwd = _kernels(forward)
    assert len(fwd) == 1 and "group_norm" in fwd[0], fwd
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward(g)
    node = [e for e in prof.events() if e.name == "NativeGroupNormBackward0"]
    assert len(node) == 1, [e.name for e in prof.events()]
    bwd = [k.name for k in node[0].kernels]
    assert len(bwd) == (3 if affine else 2) and all("group_norm" in k for k in bwd), bwd


# ---- few long rows (small batches): sliced statistics and sums, elementwise writes ----

SLICED = [((2, 4, 64, 64), 2), ((1, 2, 128, 128), 1), ((1, 2, 128, 128), 2), ((1, 6, 64, 64), 3)]


@pytest.mark.parametrize("shape,groups", SLICED)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_few_long_rows_match_numpy(device, shape, groups, affine, dtype):
    """Rows of 8192+ values, few of them: on cuda each row (and each long plane, in the
    backward) is cut into slices whose sums meet in the row's last block; the values are those
    of the NumPy formulas, as for the other shapes (the data sits far from zero, too)."""
    seed = sum(shape) + groups
    c = shape[1]
    x, gy = rand(shape, seed) + 3.0, rand(shape, seed + 3)
    w, b = (rand((c,), seed + 1), rand((c,), seed + 2)) if affine else (None, None)
    y, xt, wt, bt = run_group_norm(device, dtype, x, groups, w, b, gy)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_np(y), np_group_norm(x, groups, w, b, 1e-5), **tol)
    gx, gw, gb = np_group_norm_grads(x, groups, w, gy, 1e-5)
    np.testing.assert_allclose(to_np(xt.grad), gx, **tol)
    if affine:
        wide = dict(rtol=tol["rtol"], atol=tol["atol"] * 100)  # sums of thousands of terms
        np.testing.assert_allclose(to_np(wt.grad), gw, **wide)
        np.testing.assert_allclose(to_np(bt.grad), gb, **wide)


def test_few_long_rows_in_16_bits(device):
    shape, groups = (1, 4, 64, 64), 2
    xt = minitorch.tensor(rand(shape, 40), device=device).to(minitorch.bfloat16).requires_grad_()
    wt = minitorch.tensor(rand((4,), 41), device=device).to(minitorch.bfloat16).requires_grad_()
    gy = minitorch.tensor(rand(shape, 42), device=device).to(minitorch.bfloat16)
    y = F.group_norm(xt, groups, wt)
    y.backward(gy)
    x, w, g = (to_np(a).astype(np.float64) for a in (xt, wt, gy))
    np.testing.assert_allclose(to_np(y), np_group_norm(x, groups, w, None, 1e-5), rtol=8e-2, atol=8e-2)
    np.testing.assert_allclose(to_np(xt.grad), np_group_norm_grads(x, groups, w, g, 1e-5)[0], rtol=8e-2, atol=8e-2)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_few_long_rows_launches():
    """Two rows of 32768 values: the statistics in slices (one launch) and an elementwise write;
    backward: the planes' sums in slices, each row's dx constants, an elementwise dx, dw and db."""
    gn = nn.GroupNorm(2, 4).to("cuda")
    x = minitorch.randn(1, 4, 128, 128, device="cuda", requires_grad=True)
    y = None

    def forward():
        nonlocal y
        y = gn(x)

    assert [k.split("<")[0] for k in _kernels(forward)] == ["group_norm_sliced_stats_kernel", "group_norm_apply_kernel"]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward(minitorch.ones_like(y))
    node = [e for e in prof.events() if e.name == "NativeGroupNormBackward0"]
    assert [k.name.split("<")[0] for k in node[0].kernels] == [
        "group_norm_sliced_plane_sums_kernel", "group_norm_row_coeffs_kernel", "group_norm_sliced_backward_kernel",
        "group_norm_params_kernel"]
