"""The fused batch norm op (ops/batch_norm.cpp, kernels batch_norm / batch_norm_backward) against
NumPy formulas: training and eval values, running statistics (unbiased var, momentum),
gradients of input, weight and bias, non-contiguous and channels-last inputs, data far from
zero, 16-bit inputs, float64 gradcheck and gradgradcheck, one node per call, and the error
for one value per channel. Every device (the CUDA kernels run in the emulator)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.profiler import profile
from minitorch.testing import gradcheck
from conftest import CUDA_SKIP_REASON


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().float().numpy() if t.dtype in (minitorch.float16, minitorch.bfloat16)
                    else t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def np_batch_norm(x, w, b, eps, rm=None, rv=None, momentum=0.1, training=True):
    """Reference in float64: output, new running mean and var."""
    axes = (0,) + tuple(range(2, x.ndim))
    cshape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        m = x.size // x.shape[1]
        if rm is not None:
            rm = (1 - momentum) * rm + momentum * mean
            rv = (1 - momentum) * rv + momentum * var * m / (m - 1)
    else:
        mean, var = rm, rv
    y = (x - mean.reshape(cshape)) / np.sqrt(var.reshape(cshape) + eps)
    if w is not None:
        y = y * w.reshape(cshape) + b.reshape(cshape)
    return y, rm, rv


def np_batch_norm_grads(x, g, w, eps, training=True, mean=None, var=None):
    """Input, weight and bias gradients in float64; the statistics are the batch's unless given
    (per channel: eval's running statistics)."""
    axes = (0,) + tuple(range(2, x.ndim))
    cshape = (1, -1) + (1,) * (x.ndim - 2)
    if mean is None:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    mean, var = mean.reshape(cshape), var.reshape(cshape)
    rstd = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * rstd
    gw = g * w.reshape(cshape)
    if training:
        gx = rstd * (gw - gw.mean(axis=axes, keepdims=True) - xhat * (gw * xhat).mean(axis=axes, keepdims=True))
    else:
        gx = gw * rstd
    return gx, (g * xhat).sum(axis=axes), g.sum(axis=axes)


SHAPES = [(4, 3), (5, 3, 7), (3, 2, 5, 6), (2, 3, 2, 3, 4), (2, 4, 1, 1), (1, 2, 3, 3), (7, 1, 9),
          # few channels, many values: on a GPU each channel's values are cut into slices
          # (cuda/batch_norm.cu channel_grid), whose last block to finish adds them up
          (16, 3, 32, 32), (8, 1, 64, 64), (20000, 2), (3, 2, 9000)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_training_values_running_stats_and_grads(device, shape, dtype):
    x, g = rand(shape, 1), rand(shape, 2)
    c = shape[1]
    w, b = rand((c,), 3), rand((c,), 4)
    rm, rv = rand((c,), 5), rand((c,), 6, 0.5, 2.0)
    mdt = getattr(minitorch, dtype)
    xt = minitorch.tensor(x, dtype=mdt, device=device, requires_grad=True)
    wt = minitorch.tensor(w, dtype=mdt, device=device, requires_grad=True)
    bt = minitorch.tensor(b, dtype=mdt, device=device, requires_grad=True)
    rmt, rvt = minitorch.tensor(rm, dtype=mdt, device=device), minitorch.tensor(rv, dtype=mdt, device=device)
    y = F.batch_norm(xt, rmt, rvt, wt, bt, training=True, momentum=0.3, eps=1e-3)
    y.backward(minitorch.tensor(g, dtype=mdt, device=device))
    want, want_rm, want_rv = np_batch_norm(x, w, b, 1e-3, rm, rv, 0.3)
    gx, gw, gb = np_batch_norm_grads(x, g, w, 1e-3)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    for got, ref in ((y, want), (rmt, want_rm), (rvt, want_rv), (xt.grad, gx), (wt.grad, gw), (bt.grad, gb)):
        np.testing.assert_allclose(to_np(got), ref, **tol)


@pytest.mark.parametrize("affine", [True, False])
def test_eval_values_and_grads(device, affine):
    x, g = rand((4, 3, 5), 7), rand((4, 3, 5), 8)
    w, b = rand((3,), 9), rand((3,), 10)
    rm, rv = rand((3,), 11), rand((3,), 12, 0.5, 2.0)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    wt = minitorch.tensor(w, device=device, requires_grad=True) if affine else None
    bt = minitorch.tensor(b, device=device, requires_grad=True) if affine else None
    rmt, rvt = minitorch.tensor(rm, device=device), minitorch.tensor(rv, device=device)
    y = F.batch_norm(xt, rmt, rvt, wt, bt, training=False, eps=1e-5)
    y.backward(minitorch.tensor(g, device=device))
    want, _, _ = np_batch_norm(x, w if affine else None, b, 1e-5, rm, rv, training=False)
    np.testing.assert_allclose(to_np(y), want, rtol=1e-12, atol=1e-12)
    cs = (1, 3, 1)
    gx = g * (w if affine else np.ones(3)).reshape(cs) / np.sqrt(rv.reshape(cs) + 1e-5)
    np.testing.assert_allclose(to_np(xt.grad), gx, rtol=1e-12, atol=1e-12)
    if affine:
        xhat = (x - rm.reshape(cs)) / np.sqrt(rv.reshape(cs) + 1e-5)
        np.testing.assert_allclose(to_np(wt.grad), (g * xhat).sum(axis=(0, 2)), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(to_np(bt.grad), g.sum(axis=(0, 2)), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(to_np(rmt), rm)  # eval leaves the running statistics alone


def test_channels_last_and_strided_inputs(device):
    x = rand((3, 5, 4, 6), 13)
    base = minitorch.tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), device=device)  # NHWC memory
    xt = base.permute(0, 3, 1, 2)
    assert not xt.is_contiguous()
    bn = nn.BatchNorm2d(5).to(device, minitorch.float64)
    np.testing.assert_allclose(to_np(bn(xt)), np_batch_norm(x, np.ones(5), np.zeros(5), 1e-5)[0], rtol=1e-10,
                               atol=1e-10)
    wide = minitorch.tensor(rand((3, 10, 4), 14), device=device)[:, ::2]  # every other channel
    rm, rv = minitorch.zeros(10, dtype=minitorch.float64, device=device), minitorch.ones(10, dtype=minitorch.float64,
                                                                                          device=device)
    y = F.batch_norm(wide, rm[::2], rv[::2], training=True, momentum=0.5)  # strided running statistics
    want, want_rm, want_rv = np_batch_norm(to_np(wide), None, None, 1e-5, np.zeros(5), np.ones(5), 0.5)
    np.testing.assert_allclose(to_np(y), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_np(rm)[::2], want_rm, rtol=1e-12)
    np.testing.assert_allclose(to_np(rv)[::2], want_rv, rtol=1e-12)
    np.testing.assert_array_equal(to_np(rm)[1::2], 0.0)


def test_far_from_zero_float32_keeps_its_variance(device):
    x = (1000.0 + rand((16, 2, 8, 8), 15, -1e-2, 1e-2)).astype(np.float32)
    y = F.batch_norm(minitorch.tensor(x, device=device), None, None, training=True, eps=0.0)
    want = np_batch_norm(x.astype(np.float64), None, None, 0.0)[0]
    np.testing.assert_allclose(to_np(y), want, rtol=0, atol=2e-3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_inputs_compute_in_float32(device, dtype):
    x = rand((4, 3, 5), 16)
    mdt = getattr(minitorch, dtype)
    bn = nn.BatchNorm1d(3).to(device, mdt)
    xt = minitorch.tensor(x, device=device).to(mdt).requires_grad_()
    y = bn(xt)
    y.sum().backward()
    assert y.dtype == mdt and xt.grad.dtype == mdt and bn.running_mean.dtype == mdt
    xr = to_np(xt).astype(np.float64)
    want, want_rm, _ = np_batch_norm(xr, None, None, 1e-5, np.zeros(3), np.ones(3))
    tol = 1e-2 if dtype == "float16" else 5e-2
    np.testing.assert_allclose(to_np(y), want, atol=tol, rtol=tol)
    np.testing.assert_allclose(to_np(bn.running_mean), want_rm, atol=tol, rtol=tol)


def test_float32_running_stats_of_a_float64_input(device):
    x = rand((6, 2, 3), 17)
    rm, rv = minitorch.zeros(2, device=device), minitorch.ones(2, device=device)  # float32
    F.batch_norm(minitorch.tensor(x, device=device), rm, rv, training=True, momentum=0.1)
    _, want_rm, want_rv = np_batch_norm(x, None, None, 1e-5, np.zeros(2), np.ones(2), 0.1)
    assert rm.dtype == minitorch.float32
    np.testing.assert_allclose(to_np(rm), want_rm, rtol=1e-6)
    np.testing.assert_allclose(to_np(rv), want_rv, rtol=1e-6)


@pytest.mark.parametrize("training", [True, False])
def test_gradcheck_and_double_backward(device, training):
    x = minitorch.tensor(rand((3, 2, 4), 18), device=device, requires_grad=True)
    w = minitorch.tensor(rand((2,), 19), device=device, requires_grad=True)
    b = minitorch.tensor(rand((2,), 20), device=device, requires_grad=True)
    rm, rv = minitorch.tensor(rand((2,), 21), device=device), minitorch.tensor(rand((2,), 22, 0.5, 2), device=device)

    def f(x, w, b):
        return F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=training, eps=1e-3)

    assert gradcheck(f, (x, w, b))
    # Double backward (the composed path under create_graph): Hessian-vector products of a
    # loss against central differences of its first derivatives.
    c = minitorch.tensor(rand((3, 2, 4), 24), device=device)

    def first(x, w, b, create_graph=False):
        return minitorch.autograd.grad(((f(x, w, b) * c) ** 2).sum(), (x, w, b), create_graph=create_graph)

    vs = [rand(tuple(t.shape), 25 + i) for i, t in enumerate((x, w, b))]
    gs = first(x, w, b, create_graph=True)
    dot = sum((g * minitorch.tensor(v, device=device)).sum() for g, v in zip(gs, vs))
    hv = minitorch.autograd.grad(dot, (x, w, b), allow_unused=True)

    def shifted(sign, eps=1e-6):
        ts = [minitorch.tensor(to_np(t) + sign * eps * v, device=device, requires_grad=True) for t, v in zip((x, w, b), vs)]
        return [to_np(g) for g in first(*ts)]

    for h, p, m in zip(hv, shifted(1), shifted(-1)):
        np.testing.assert_allclose(to_np(h) if h is not None else 0.0, (p - m) / 2e-6, rtol=1e-4, atol=1e-6)


def test_one_node_per_call_and_errors(device):
    x = minitorch.tensor(rand((2, 3, 4), 23), device=device, requires_grad=True)
    with profile() as prof:
        F.batch_norm(x, None, None, training=True).sum().backward()
    names = [e.name for e in prof.events()]
    assert names.count("batch_norm") == 1
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm2d(3).to(device)(minitorch.zeros(1, 3, 1, 1, device=device))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3).to(device)(minitorch.zeros(1, 3, device=device))
    with pytest.raises(ValueError, match="running_mean should contain 3"):
        F.batch_norm(x, minitorch.zeros(4, device=device), None, training=True)
    with pytest.raises(TypeError):
        F.batch_norm(x, None, None, minitorch.ones(3, dtype=minitorch.float32, device=device), training=True)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_training_step_counts_the_batch_inside_the_statistics_kernel():
    """BatchNorm's num_batches_tracked += 1 rides in the statistics kernel: a training forward
    is two launches (statistics, normalize), not three; a counter the kernel cannot write (a
    float tensor) and momentum=None (whose factor needs the count first) still count."""
    from minitorch.profiler import ProfilerActivity

    x = minitorch.randn(8, 4, 5, 5, device="cuda")
    bn = nn.BatchNorm2d(4).to("cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        bn(x)
    kernels = [k.name.split("<")[0] for e in prof.events() for k in e.kernels]
    assert kernels == ["batch_norm_stats_kernel", "batch_norm_apply_kernel"], kernels
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    bn(x)
    assert bn.num_batches_tracked.item() == 1  # eval counts nothing
    odd = nn.BatchNorm2d(4).to("cuda")
    odd.num_batches_tracked = minitorch.tensor(0.0, device="cuda")
    odd(x), odd(x)
    cumulative = nn.BatchNorm2d(4, momentum=None).to("cuda")
    cumulative(x), cumulative(x)
    assert odd.num_batches_tracked.item() == 2.0 and cumulative.num_batches_tracked.item() == 2


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_eval_forward_is_one_affine_kernel(dtype):
    """Eval mode reads the running statistics: one elementwise launch, whose threads also
    save each channel's mean and rstd, so the backward (dx = w * rstd * g) still works;
    a 16-bit input with float32 parameters (autocast's mixed batch norm) too."""
    from minitorch.profiler import ProfilerActivity

    dt = getattr(minitorch, dtype)
    x0, g0 = rand((6, 5, 4, 3), 20), rand((6, 5, 4, 3), 21)
    bn = nn.BatchNorm2d(5).to("cuda").eval()
    with minitorch.no_grad():
        bn.running_mean.copy_(minitorch.tensor(rand((5,), 22), device="cuda"))
        bn.running_var.copy_(minitorch.tensor(rand((5,), 23, 0.5, 2.0), device="cuda"))
        bn.weight.copy_(minitorch.tensor(rand((5,), 24), device="cuda"))
    x = minitorch.tensor(x0, dtype=minitorch.float32, device="cuda").to(dt).requires_grad_()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = bn(x)
    kernels = [k.name.split("<")[0] for e in prof.events() for k in e.kernels]
    assert kernels == ["batch_norm_eval_kernel"], kernels
    y.backward(minitorch.tensor(g0, dtype=minitorch.float32, device="cuda").to(dt))
    xs = to_np(x.float()).astype(np.float64)
    rm, rv, w = (to_np(t).astype(np.float64).reshape(1, 5, 1, 1) for t in (bn.running_mean, bn.running_var, bn.weight))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=2**-7, atol=2**-6)
    np.testing.assert_allclose(to_np(y.float()), (xs - rm) / np.sqrt(rv + 1e-5) * w, **tol)
    gs = to_np(minitorch.tensor(g0, dtype=minitorch.float32).to(dt).float()).astype(np.float64)
    np.testing.assert_allclose(to_np(x.grad.float()), gs * w / np.sqrt(rv + 1e-5), **tol)
    empty = bn(minitorch.zeros(0, 5, 4, 3, device="cuda"))
    assert tuple(empty.shape) == (0, 5, 4, 3)


def test_the_counter_argument_of_the_functional_form(device):
    x = minitorch.randn(8, 3, device=device)
    counter = minitorch.zeros((), dtype=minitorch.int64, device=device)
    for _ in range(3):
        F.batch_norm(x, None, None, training=True, _num_batches_tracked=counter)
    F.batch_norm(x, minitorch.zeros(3, device=device), minitorch.ones(3, device=device), training=False,
                 _num_batches_tracked=counter)
    assert counter.item() == 3  # training calls only


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("shape, slices", [((16, 3, 32, 32), 4), ((8, 1, 64, 64), 8), ((64, 256, 4, 4), 1)])
def test_few_channels_are_cut_into_slices(shape, slices):
    """Few channels would leave most of a GPU idle with a block per channel: each channel's
    values are cut into slices (gridDim.y), and the statistics and the gradient sums are
    still one launch each (the last block of a channel adds the slices up)."""
    from minitorch.profiler import ProfilerActivity

    x = minitorch.randn(*shape, device="cuda", requires_grad=True)
    bn = nn.BatchNorm2d(shape[1]).to("cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = bn(x)
        y.backward(minitorch.ones_like(y))
    kernels = [k for e in prof.events() for k in e.kernels if "batch_norm" in k.name]
    names = [k.name.split("<")[0] for k in kernels]
    assert names == ["batch_norm_stats_kernel", "batch_norm_apply_kernel", "batch_norm_grad_sums_kernel",
                     "batch_norm_grad_input_kernel"], names
    for k in (kernels[0], kernels[2]):
        assert k.grid[0] == shape[1] and k.grid[1] == slices, k.grid
