"""F.rms_norm and nn.RMSNorm (PyTorch 2.4+'s, for LLaMA-style models): values against NumPy
on every device, multi-dim normalized_shape, no weight, eps=None (the machine epsilon of the
computing type), float16 / bfloat16 computed in float32 and rounded once, float64 gradcheck
of the input and the weight, the module's parameter, repr and state_dict, and the errors.
The fused op (the layer norm's kernels without the centring) against the composed formula,
forward, backward and double backward; one kernel forward and two backward on CUDA."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

from conftest import CUDA_SKIP_REASON, to_numpy


def reference(x, k, w=None, eps=None):
    x = np.asarray(x, np.float64)
    dims = tuple(range(x.ndim - k, x.ndim))
    out = x / np.sqrt((x * x).mean(dims, keepdims=True) + (np.finfo(np.float32).eps if eps is None else eps))
    return out if w is None else out * w


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
@pytest.mark.parametrize("shape, norm", [((4, 7), (7,)), ((2, 3, 5), (3, 5)), ((0, 6), (6,)), ((3, 1), (1,)),
                                         ((5,), (5,))])
@pytest.mark.parametrize("with_weight", [True, False])
def test_values_match_numpy(device, dtype, shape, norm, with_weight):
    rng = np.random.default_rng(1)
    x_np, w_np = rng.uniform(-3, 3, shape), rng.uniform(0.5, 1.5, norm)
    x = minitorch.tensor(x_np, dtype=dtype, device=device)
    w = minitorch.tensor(w_np, dtype=dtype, device=device) if with_weight else None
    eps = None if dtype == minitorch.float32 else 1e-6
    y = F.rms_norm(x, norm, w, eps)
    assert y.dtype == dtype and tuple(y.shape) == shape
    tol = 1e-6 if dtype == minitorch.float32 else 1e-12
    np.testing.assert_allclose(to_numpy(y), reference(x_np, len(norm), w_np if with_weight else None, eps),
                               rtol=tol, atol=tol)


def test_non_contiguous_input_and_float64_default_eps(device):
    x_np = np.random.default_rng(2).uniform(-1, 1, (6, 4))
    x = minitorch.tensor(x_np, device=device).t()  # (4, 6), strided
    want = x_np.T / np.sqrt((x_np.T ** 2).mean(1, keepdims=True) + np.finfo(np.float64).eps)
    np.testing.assert_allclose(to_numpy(F.rms_norm(x, (6,))), want, rtol=1e-12)


@pytest.mark.parametrize("dt", [minitorch.float16, minitorch.bfloat16], ids=str)
def test_16_bit_input_computes_in_float32(device, dt):
    x = minitorch.tensor(np.random.default_rng(3).uniform(-4, 4, (3, 16)), device=device).to(dt)
    w = minitorch.tensor(np.linspace(0.5, 1.5, 16), device=device).to(dt)
    y = F.rms_norm(x, (16,), w)
    assert y.dtype == dt
    want = F.rms_norm(x.float(), (16,), w.float()).to(dt)
    np.testing.assert_array_equal(to_numpy(y.float()), to_numpy(want.float()))


def test_gradcheck_input_and_weight(device):
    rng = np.random.default_rng(4)
    x = minitorch.tensor(rng.uniform(-2, 2, (3, 2, 4)), device=device, requires_grad=True)
    w = minitorch.tensor(rng.uniform(0.5, 1.5, (2, 4)), device=device, requires_grad=True)
    assert gradcheck(lambda x, w: F.rms_norm(x, (2, 4), w, 1e-5), (x, w))
    assert gradcheck(lambda x: F.rms_norm(x, (4,)), (x,))


def test_module_parameter_repr_and_state_dict(device):
    m = nn.RMSNorm([2, 4], eps=1e-6).to(device)
    assert repr(m) == "RMSNorm((2, 4), eps=1e-06, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"] and np.all(to_numpy(m.weight) == 1.0)
    x = minitorch.randn(5, 2, 4, device=device, requires_grad=True)
    m(x).pow(2).sum().backward()
    assert tuple(m.weight.grad.shape) == (2, 4) and tuple(x.grad.shape) == (5, 2, 4)
    bare = nn.RMSNorm(4, elementwise_affine=False)
    assert bare.weight is None and list(bare.state_dict()) == []
    assert repr(bare) == "RMSNorm((4,), eps=None, elementwise_affine=False)"


def test_errors():
    x = minitorch.randn(3, 4)
    with pytest.raises(ValueError, match=r"rms_norm: given normalized_shape=\(5,\)"):
        F.rms_norm(x, (5,))
    with pytest.raises(ValueError, match=r"rms_norm: expected weight of shape \(4,\)"):
        F.rms_norm(x, (4,), minitorch.ones(3))
    with pytest.raises(TypeError, match="rms_norm: expected a floating point input"):
        F.rms_norm(minitorch.ones(3, 4, dtype=minitorch.int64), (4,))


# ---- the fused op (ops/nn.cpp: the layer norm's kernels without the centring) ----

def test_fused_matches_the_composed_formula_forward_backward(device):
    """Values and the gradients of input and weight against _rms_norm_composed (the readable
    formula), on a strided input with two normalized dims."""
    from minitorch.nn.functional import _rms_norm_composed
    rng = np.random.default_rng(5)
    base = rng.uniform(-2, 2, (4, 3, 6))
    g, w_np = rng.standard_normal((6, 4, 3)), rng.uniform(0.5, 1.5, (4, 3))
    results = []
    for fn in (lambda x, w: F.rms_norm(x, (4, 3), w, 1e-5), lambda x, w: _rms_norm_composed(x, (4, 3), w, 1e-5)):
        x0 = minitorch.tensor(base, device=device, dtype=minitorch.float32, requires_grad=True)
        w = minitorch.tensor(w_np, device=device, dtype=minitorch.float32, requires_grad=True)
        y = fn(x0.permute(2, 0, 1), w)  # (6, 4, 3), strided
        y.backward(minitorch.tensor(g, device=device, dtype=minitorch.float32))
        results.append((to_numpy(y), to_numpy(x0.grad), to_numpy(w.grad), y.grad_fn.name()))
    (*fused, name), (*composed, _) = results
    assert name == "FusedRmsNormBackward0"
    for a, b in zip(fused, composed):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_double_backward_matches_the_composed_formula(device):
    from minitorch.nn.functional import _rms_norm_composed
    rng = np.random.default_rng(6)
    x = minitorch.tensor(rng.uniform(-2, 2, (3, 5)), device=device, requires_grad=True)
    w = minitorch.tensor(rng.uniform(0.5, 1.5, (5,)), device=device, requires_grad=True)
    out = []
    for fn in (F.rms_norm, _rms_norm_composed):
        y = fn(x, (5,), w, 1e-6)
        gx, gw = minitorch.autograd.grad((y * y * y).sum(), (x, w), create_graph=True)
        ggx, ggw = minitorch.autograd.grad((gx * gx).sum() + (gw * gx[0]).sum(), (x, w))
        out.append([to_numpy(t) for t in (gx, gw, ggx, ggw)])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    assert gradcheck(lambda x, w: F.rms_norm(x, (5,), w, 1e-6), (x, w))


@pytest.mark.parametrize("dt", [minitorch.float16, minitorch.bfloat16], ids=str)
def test_16_bit_gradients_follow_float32(device, dt):
    rng = np.random.default_rng(7)
    x_np, w_np, g_np = rng.uniform(-3, 3, (6, 32)), rng.uniform(0.5, 1.5, 32), rng.standard_normal((6, 32))
    grads = []
    for t in (dt, minitorch.float32):
        x = minitorch.tensor(x_np, device=device).to(t).requires_grad_()
        w = minitorch.tensor(w_np, device=device).to(t).requires_grad_()
        F.rms_norm(x, (32,), w).backward(minitorch.tensor(g_np, device=device).to(t))
        assert x.grad.dtype == t and w.grad.dtype == t
        grads.append((to_numpy(x.grad.float()), to_numpy(w.grad.float())))
    tol = 2e-2 if dt == minitorch.float16 else 8e-2
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * np.abs(b).max())


@pytest.mark.parametrize("xt,wt", [(minitorch.bfloat16, minitorch.float32), (minitorch.float16, minitorch.float32),
                                   (minitorch.float32, minitorch.bfloat16), (minitorch.float32, minitorch.float64),
                                   (minitorch.float16, minitorch.bfloat16)], ids=str)
def test_a_weight_of_another_dtype_gives_the_input_dtype(device, xt, wt):
    """PyTorch 2.11 (its composite path for mixed dtypes; autocast leaves rms_norm alone): the
    normalization and the weight's product are formed in the wider type and rounded once to
    the input's dtype. The gradients come back in the input's and the weight's dtypes."""
    rng = np.random.default_rng(8)
    x_np, w_np, g_np = rng.uniform(-2, 2, (5, 8)), rng.uniform(0.5, 1.5, 8), rng.standard_normal((5, 8))
    x = minitorch.tensor(x_np, device=device).to(xt).requires_grad_()
    w = minitorch.tensor(w_np, device=device).to(wt).requires_grad_()
    y = F.rms_norm(x, (8,), w)
    assert y.dtype == xt
    eps = float(np.finfo(np.float32).eps)  # the input's computing type's
    # PyTorch's rule, in NumPy: normalized in float32, times the weight in the wider type, rounded once
    xs = to_numpy(x.detach().float()).astype(np.float32)
    normed = xs * (1 / np.sqrt((xs * xs).mean(1, keepdims=True) + np.float32(eps))).astype(np.float32)
    wide = np.float64 if wt == minitorch.float64 else np.float32
    want = minitorch.tensor(normed.astype(wide) * to_numpy(w.detach().double()).astype(wide)).to(xt)
    tol = 1e-6 if xt == minitorch.float32 else 8e-3  # a few float32 roundings; 16 bits: one rounding apart
    np.testing.assert_allclose(to_numpy(y.double()), to_numpy(want.double()), rtol=tol, atol=1e-7)
    composed = minitorch.nn.functional._rms_norm_composed(x.detach(), (8,), w.detach(), eps)
    assert composed.dtype == xt
    np.testing.assert_allclose(to_numpy(composed.double()), to_numpy(y.double()), rtol=tol, atol=1e-7)
    y.backward(minitorch.tensor(g_np, device=device).to(xt))
    assert x.grad.dtype == xt and w.grad.dtype == wt
    xr = minitorch.tensor(x_np, device=device).to(xt).double().requires_grad_()
    wr = minitorch.tensor(w_np, device=device).to(wt).double().requires_grad_()
    F.rms_norm(xr, (8,), wr, eps).backward(minitorch.tensor(g_np, device=device).to(xt).double())
    np.testing.assert_allclose(to_numpy(x.grad.double()), to_numpy(xr.grad), rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(to_numpy(w.grad.double()), to_numpy(wr.grad), rtol=3e-2, atol=3e-2)


def test_a_16_bit_activation_and_a_float32_weight_run_fused_on_cuda():
    """The autocast case (a Linear's bfloat16 output into nn.RMSNorm's float32 weight): the
    fused kernels between two casts, not the composed formula's dozen kernels."""
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    from minitorch.profiler import ProfilerActivity, profile
    x = minitorch.randn(64, 96, device="cuda").bfloat16().requires_grad_()
    w = minitorch.ones(96, device="cuda", requires_grad=True)
    g = minitorch.randn(64, 96, device="cuda").bfloat16()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        F.rms_norm(x, (96,), w).backward(g)
    names = [k.name for e in p.events() for k in e.kernels]
    assert sum("layer_norm" in n for n in names) == 3, names  # forward; grad_in and the weight's sums
    assert sum("copy" in n for n in names) == 4 and len(names) == 7, names  # and a cast each way, twice


def test_one_kernel_forward_two_backward_on_cuda():
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    from minitorch.profiler import ProfilerActivity, profile
    x = minitorch.randn(64, 96, device="cuda", requires_grad=True)
    w = minitorch.ones(96, device="cuda", requires_grad=True)
    g = minitorch.randn(64, 96, device="cuda")

    def kernels(fn):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            fn()
        return [k.name for e in p.events() for k in e.kernels]
    y = [None]
    fwd = kernels(lambda: y.__setitem__(0, F.rms_norm(x, (96,), w)))
    bwd = kernels(lambda: y[0].backward(g))
    assert len(fwd) == 1 and "layer_norm" in fwd[0], fwd
    assert len(bwd) == 2 and all("layer_norm" in n for n in bwd), bwd  # grad_in; the weight's column sums
