"""Batch norm of float16 / bfloat16 inputs (issue 31), on every device (the CUDA kernels run
in the emulator): "mixed" (a 16-bit input with float32 weight, bias and running statistics,
what autocast gives a BatchNorm after a 16-bit convolution, as PyTorch allows) and all
16-bit (a module .to(bfloat16)). Checked against NumPy in float64 on the same 16-bit values:
the output and grad_input have the input's dtype, rounded once from float32 arithmetic; in
mixed mode the running statistics and the parameter gradients stay float32, to float32
precision."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F

from test_batchnorm_fused import np_batch_norm, np_batch_norm_grads, rand, to_np

HALVES = ["float16", "bfloat16"]
# A 16-bit output is the float32 result rounded once: half an ulp, relative (2^-11, 2^-8),
# on values of a few units (normalized data times a weight in [-2, 2], plus a bias).
TOL16 = {"float16": dict(rtol=2e-3, atol=4e-3), "bfloat16": dict(rtol=1e-2, atol=3e-2)}
TOL32 = dict(rtol=1e-5, atol=1e-5)
SHAPES = [(6, 3), (4, 3, 5), (3, 2, 5, 6), (2, 3, 2, 3, 4)]  # BatchNorm1d (2 forms), 2d, 3d


@pytest.mark.parametrize("shape", SHAPES, ids=["1d", "1d_seq", "2d", "3d"])
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("params", ["float32", "same"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("track", [True, False], ids=["track", "notrack"])
def test_16bit_batch_norm_against_numpy(device, shape, dtype, params, training, affine, track):
    if not training and not track:
        pytest.skip("eval needs running statistics")
    mdt = getattr(minitorch, dtype)
    pdt = minitorch.float32 if params == "float32" else mdt
    c = shape[1]
    xt = minitorch.tensor(rand(shape, 1).astype(np.float32), device=device).to(mdt).requires_grad_()
    g = minitorch.tensor(rand(shape, 2).astype(np.float32), device=device).to(mdt)
    wt = minitorch.tensor(rand((c,), 3), device=device).to(pdt).requires_grad_() if affine else None
    bt = minitorch.tensor(rand((c,), 4), device=device).to(pdt).requires_grad_() if affine else None
    rmt = minitorch.tensor(rand((c,), 5), device=device).to(pdt) if track else None
    rvt = minitorch.tensor(rand((c,), 6, 0.5, 2.0), device=device).to(pdt) if track else None
    # the reference reads the same (rounded) values the kernels do
    x, gn = to_np(xt).astype(np.float64), to_np(g).astype(np.float64)
    w = to_np(wt).astype(np.float64) if affine else np.ones(c)
    b = to_np(bt).astype(np.float64) if affine else np.zeros(c)
    rm = to_np(rmt).astype(np.float64) if track else None
    rv = to_np(rvt).astype(np.float64) if track else None

    y = F.batch_norm(xt, rmt, rvt, wt, bt, training=training, momentum=0.2, eps=1e-3)
    y.backward(g)
    want, want_rm, want_rv = np_batch_norm(x, w, b, 1e-3, rm, rv, 0.2, training)
    assert y.dtype == mdt and xt.grad.dtype == mdt
    np.testing.assert_allclose(to_np(y), want, **TOL16[dtype])
    tol_p = TOL32 if params == "float32" else TOL16[dtype]
    if track:
        assert rmt.dtype == pdt and rvt.dtype == pdt
        np.testing.assert_allclose(to_np(rmt), want_rm, **tol_p)
        np.testing.assert_allclose(to_np(rvt), want_rv, **tol_p)
    axes = (0,) + tuple(range(2, x.ndim))
    mean, var = (x.mean(axis=axes), x.var(axis=axes)) if training else (rm, rv)
    gx, gw, gb = np_batch_norm_grads(x, gn, w, 1e-3, training, mean, var)
    np.testing.assert_allclose(to_np(xt.grad), gx, **TOL16[dtype])
    if affine:
        assert wt.grad.dtype == pdt and bt.grad.dtype == pdt
        # sums of up to 144 products: float32 (mixed) or one 16-bit rounding of the sum
        scale = np.abs(gn).sum() / c
        tol = dict(rtol=1e-5, atol=1e-5 * scale) if params == "float32" else dict(rtol=TOL16[dtype]["rtol"],
                                                                                    atol=TOL16[dtype]["rtol"] * scale)
        np.testing.assert_allclose(to_np(wt.grad), gw, **tol)
        np.testing.assert_allclose(to_np(bt.grad), gb, **tol)


@pytest.mark.parametrize("dtype", HALVES)
def test_module_mixed_under_autocast_keeps_float32_state(device, dtype):
    """A float32 BatchNorm2d fed a 16-bit activation (as after an autocast conv): the output
    is 16-bit, running statistics and parameter gradients float32, as in PyTorch."""
    mdt = getattr(minitorch, dtype)
    bn = nn.BatchNorm2d(4).to(device)
    x = minitorch.tensor(rand((3, 4, 5, 5), 7).astype(np.float32), device=device).to(mdt).requires_grad_()
    with minitorch.autocast(device, dtype=mdt):
        y = bn(x)
    y.float().pow(2).sum().backward()
    assert y.dtype == mdt and x.grad.dtype == mdt
    assert bn.running_mean.dtype == bn.running_var.dtype == minitorch.float32
    assert bn.weight.grad.dtype == bn.bias.grad.dtype == minitorch.float32
    xr = to_np(x).astype(np.float64)
    want, want_rm, want_rv = np_batch_norm(xr, np.ones(4), np.zeros(4), 1e-5, np.zeros(4), np.ones(4))
    np.testing.assert_allclose(to_np(y), want, **TOL16[dtype])
    np.testing.assert_allclose(to_np(bn.running_mean), want_rm, **TOL32)
    np.testing.assert_allclose(to_np(bn.running_var), want_rv, **TOL32)
    bn.eval()
    with minitorch.autocast(device, dtype=mdt):
        assert bn(x.detach()).dtype == mdt


def test_mixed_dtype_errors(device):
    x = minitorch.zeros(2, 3, 4, device=device, dtype=minitorch.bfloat16)
    w32, b64 = minitorch.ones(3, device=device), minitorch.zeros(3, device=device, dtype=minitorch.float64)
    with pytest.raises(TypeError, match="weight .float32. and bias .float64. must have the same dtype"):
        F.batch_norm(x, None, None, w32, b64, training=True)
    with pytest.raises(TypeError, match="must have the same dtype"):  # float16 beside bfloat16 is not mixed
        F.batch_norm(x, None, None, minitorch.ones(3, device=device, dtype=minitorch.float16), None, training=True)
    with pytest.raises(TypeError, match="must have the same dtype"):  # nor a float32 input with 16-bit weights
        F.batch_norm(x.float(), None, None, w32.to(minitorch.bfloat16), None, training=True)
