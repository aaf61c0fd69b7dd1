"""logcumsumexp: the scan kernels with the log-sum-exp step of scan_math.h (hi + log1p(exp(lo -
hi)), the same code on both devices), against NumPy's np.logaddexp.accumulate in float64.
Every kernel of the CUDA ladder is reached on emulated 'cuda': one thread per strided line,
pieces of few long strided lines (chunked), a warp per contiguous line, and the look-back scan
(MINITORCH_SCAN_TILE makes its tiles small). tests/opinfo checks the dtypes and layouts,
tests/golden_ops PyTorch's values and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, launches
from minitorch.testing import gradcheck

INF = float("inf")


def _ref(x: np.ndarray, axis: int) -> np.ndarray:
    return np.logaddexp.accumulate(x.astype(np.float64), axis=axis)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,dim", [((3, 40), 1), ((300, 2), 0), ((4, 5, 6), 1), ((7,), 0)])
def test_values_on_every_kernel(shape, dim, device):
    """(3, 40) along 1: a warp per line; (300, 2) along 0: two long strided lines, in pieces;
    (4, 5, 6) along 1: a thread per strided line."""
    x = np.random.default_rng(0).normal(scale=5.0, size=shape)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-6)):
        got = minitorch.tensor(x.astype(dtype), device=device).logcumsumexp(dim)
        assert got.dtype == minitorch.tensor(x.astype(dtype)).dtype
        np.testing.assert_allclose(got.cpu().numpy(), _ref(x.astype(dtype), dim), rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_lookback_tiles(device, monkeypatch):
    if device == "cpu":
        pytest.skip("the tile size is the CUDA look-back scan's")
    monkeypatch.setenv("MINITORCH_SCAN_TILE", "64")
    x = np.random.default_rng(1).normal(scale=3.0, size=(2, 37 * 64 + 5))
    t = minitorch.tensor(x, device=device, requires_grad=True)
    y = t.logcumsumexp(1)
    np.testing.assert_allclose(y.detach().cpu().numpy(), _ref(x, 1), rtol=1e-12)
    y.sum().backward()  # the backward's reverse scans run on the tiles too
    cpu = minitorch.tensor(x, requires_grad=True)
    cpu.logcumsumexp(1).sum().backward()
    np.testing.assert_allclose(t.grad.cpu().numpy(), cpu.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_far_apart_and_infinite_values(device):
    """No overflow, no early underflow to -inf (a composition shifted by the maximum gives
    -inf for -1000 beside 0); infinities and NaN as PyTorch's."""
    def lcse(values):
        return minitorch.tensor(values, dtype=minitorch.float64, device=device).logcumsumexp(0).cpu().numpy()

    np.testing.assert_allclose(lcse([-1000.0, 0.0, 800.0, 800.0]), [-1000.0, 0.0, 800.0, 800.0 + np.log(2)], rtol=1e-15)
    np.testing.assert_array_equal(lcse([INF, 1.0, np.nan, 2.0]), [INF, INF, np.nan, np.nan])
    np.testing.assert_array_equal(lcse([-INF, -INF, 1.0, -INF]), [-INF, -INF, 1.0, 1.0])
    np.testing.assert_array_equal(lcse([1.0, INF, -INF]), [1.0, INF, INF])
    f32 = minitorch.tensor([80.0, 80.0, -200.0], device=device).logcumsumexp(0).cpu().numpy()  # exp(80) overflows float32
    np.testing.assert_allclose(f32, [80.0, 80.0 + np.log(2), 80.0 + np.log(2)], rtol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit(dtype, device):
    x = np.random.default_rng(2).normal(size=(2, 50)).astype(np.float32)
    t = minitorch.tensor(x, device=device).to(getattr(minitorch, dtype))
    got = t.logcumsumexp(1)
    assert got.dtype == getattr(minitorch, dtype)
    want = _ref(t.float().cpu().numpy(), 1)
    np.testing.assert_allclose(got.float().cpu().numpy(), want, rtol=1e-2 if dtype == "bfloat16" else 2e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_0_dim_and_empty(device):
    s = minitorch.tensor(2.5, device=device).logcumsumexp(0)
    assert s.shape == () and s.item() == 2.5
    assert minitorch.tensor(2.5, device=device).logcumsumexp(-1).item() == 2.5
    e = minitorch.zeros((0, 3), device=device).logcumsumexp(0)
    assert e.shape == (0, 3)
    assert minitorch.zeros((2, 0), device=device).logcumsumexp(0).shape == (2, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_gradient(device):
    rng = np.random.default_rng(3)
    x = minitorch.tensor(rng.normal(size=(3, 6)), device=device, requires_grad=True)
    assert gradcheck(lambda a: a.logcumsumexp(1), (x,))
    assert gradcheck(lambda a: a.logcumsumexp(0), (x,))
    # the exact gradient: dx_i = sum_{j >= i} g_j exp(x_i - y_j), with g of both signs
    g = rng.normal(size=(3, 6))
    y = x.logcumsumexp(1)
    y.backward(minitorch.tensor(g, device=device))
    xv, yv = x.detach().cpu().numpy(), _ref(x.detach().cpu().numpy(), 1)
    want = np.array([[sum(g[r, j] * np.exp(xv[r, i] - yv[r, j]) for j in range(i, 6)) for i in range(6)]
                     for r in range(3)])
    np.testing.assert_allclose(x.grad.cpu().numpy(), want, rtol=1e-12, atol=1e-14)
    assert y.grad_fn.name() == "LogcumsumexpBackward0"


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward(device):
    rng = np.random.default_rng(4)
    x = minitorch.tensor(rng.normal(size=(2, 5)), device=device, requires_grad=True)
    w = minitorch.tensor(rng.normal(size=(2, 5)), device=device)

    def grad_of(a):
        with minitorch.enable_grad():  # gradcheck's finite differences run under no_grad
            return minitorch.autograd.grad((a.logcumsumexp(1) * w).sum(), (a,), create_graph=True)[0]

    assert gradcheck(grad_of, (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_at_minus_infinity_is_zero(device):
    """exp(x_i - y_j) is 0 for x_i = -inf. torch 1.13 gives NaN there (its formula meets
    -inf + inf where the whole line before is -inf); the limit is 0."""
    x = minitorch.tensor([-INF, -INF, 1.0, -INF, 2.0], dtype=minitorch.float64, device=device, requires_grad=True)
    x.logcumsumexp(0).sum().backward()
    got = x.grad.cpu().numpy()
    assert got[0] == 0 and got[1] == 0 and got[3] == 0
    e = np.exp(np.array([1.0, 2.0]) - np.logaddexp(1.0, 2.0))
    np.testing.assert_allclose(got[[2, 4]], [1 + 1 + e[0], e[1]], rtol=1e-14)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_one_launch_forward_cuda():
    x = minitorch.randn(4, 8, device="cuda")
    assert len(launches(lambda: x.logcumsumexp(1))) == 1
    assert len(launches(lambda: x.t().logcumsumexp(1))) == 2  # a strided input: its copy, the scan


def test_errors():
    with pytest.raises(TypeError, match="logcumsumexp: expected a floating tensor, got int64"):
        minitorch.tensor([1, 2]).logcumsumexp(0)
    with pytest.raises(TypeError, match="logcumsumexp"):
        minitorch.tensor([True]).logcumsumexp(0)
    with pytest.raises(IndexError, match="logcumsumexp"):
        minitorch.zeros(2, 3).logcumsumexp(2)
    with pytest.raises(TypeError, match="dim"):
        minitorch.zeros(2, 3).logcumsumexp(1.5)
    assert not hasattr(minitorch.Tensor, "logcumsumexp_")  # PyTorch has no in-place form
