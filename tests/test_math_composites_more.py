"""copysign, sinc, float_power, aminmax, cov and corrcoef (compositions in ops/pointwise_math.py
and ops/reduction.py): their edges beyond tests/opinfo's battery -- signed zeros, the gradient
of sinc at 0, weights in cov, empty inputs -- on every device."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_copysign_signed_zero_and_gradient(device):
    x = minitorch.tensor([1.0, -2.0, 3.0, 0.0], device=device, requires_grad=True)
    s = minitorch.tensor([-0.0, 0.0, -1.0, -1.0], device=device)
    y = minitorch.copysign(x, s)
    assert y.tolist() == [-1.0, 2.0, -3.0, -0.0] and np.signbit(y.detach().cpu().numpy()[3])
    y.sum().backward()
    assert x.grad.tolist() == [-1.0, -1.0, -1.0, 0.0]
    assert minitorch.copysign(minitorch.tensor([2, -3], device=device), -1.0).tolist() == [-2.0, -3.0]
    wide = minitorch.copysign(minitorch.tensor([1, -2], device=device), minitorch.tensor(-1.0, dtype=minitorch.float64,
                                                                                         device=device))
    assert wide.dtype == minitorch.float64  # PyTorch's promotion: the 0-dim float64 decides


@pytest.mark.parametrize("device", DEVICES)
def test_sinc_at_zero(device):
    x = minitorch.tensor([0.0, 0.5, -1.5], dtype=minitorch.float64, device=device, requires_grad=True)
    y = x.sinc()
    np.testing.assert_allclose(y.detach().cpu().numpy(), np.sinc([0.0, 0.5, -1.5]), atol=1e-15)
    y.sum().backward()
    g = x.grad.cpu().numpy()
    assert g[0] == 0.0 and np.isfinite(g).all()


@pytest.mark.parametrize("device", DEVICES)
def test_float_power_is_float64(device):
    x = minitorch.tensor([2, 3], device=device)
    assert x.float_power(2).dtype == minitorch.float64 and x.float_power(2).tolist() == [4.0, 9.0]
    assert minitorch.float_power(x, minitorch.tensor([0.5, -1.0], device=device)).tolist() == pytest.approx(
        [2 ** 0.5, 1 / 3])
    y = minitorch.tensor([1.5, 2.0], dtype=minitorch.float64, device=device)
    assert y.float_power_(2) is y and y.tolist() == [2.25, 4.0]
    with pytest.raises(RuntimeError, match="float64"):  # only float64 holds the result (PyTorch's rule)
        minitorch.tensor([1.5], device=device).float_power_(2)


@pytest.mark.parametrize("device", DEVICES)
def test_aminmax(device):
    x = minitorch.tensor([[3.0, float("nan")], [1.0, 2.0]], device=device)
    r = minitorch.aminmax(x, dim=1)
    assert r.min[1].item() == 1.0 and np.isnan(r.min[0].item()) and np.isnan(r.max[0].item())
    lo, hi = minitorch.tensor([[4, -2], [7, 0]], device=device).aminmax(keepdim=True)
    assert lo.shape == (1, 1) and (lo.item(), hi.item()) == (-2, 7)
    empty = minitorch.zeros(3, 0, device=device)
    assert minitorch.aminmax(empty, dim=0).min.shape == (0,)
    with pytest.raises(ValueError, match="empty"):
        minitorch.aminmax(empty)
    with pytest.raises(IndexError, match="non-zero size"):
        minitorch.aminmax(empty, dim=1)


@pytest.mark.parametrize("device", DEVICES)
def test_cov_and_corrcoef(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8))
    t = minitorch.tensor(x, device=device)
    fw = rng.integers(0, 4, 8)
    aw = rng.uniform(0.1, 2.0, 8)
    for kw in ({}, dict(correction=0), dict(correction=2)):
        np.testing.assert_allclose(minitorch.cov(t, **kw).cpu().numpy(), np.cov(x, ddof=kw.get("correction", 1)),
                                   rtol=1e-12)
    got = minitorch.cov(t, fweights=minitorch.tensor(fw, device=device), aweights=minitorch.tensor(aw, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), np.cov(x, fweights=fw, aweights=aw), rtol=1e-12)
    assert minitorch.cov(t[0]).shape == () and minitorch.cov(t[:1]).shape == ()  # one variable: 0-dim
    assert minitorch.corrcoef(t[:1]).shape == ()
    assert minitorch.cov(t.float(), aweights=minitorch.tensor(aw, device=device)).dtype == minitorch.float64
    np.testing.assert_allclose(minitorch.corrcoef(t).cpu().numpy(), np.corrcoef(x), rtol=1e-12)
    ints = minitorch.tensor([[1, 2, 4], [0, 5, 1]], device=device)
    assert minitorch.cov(ints).dtype == minitorch.float32
    t.requires_grad_()
    minitorch.corrcoef(t).sum().backward()
    assert np.isfinite(t.grad.cpu().numpy()).all()
    with pytest.raises(TypeError, match="bool"):
        minitorch.cov(minitorch.tensor([[True, False]], device=device))
    with pytest.raises(ValueError, match="two or fewer"):
        minitorch.cov(minitorch.zeros(2, 2, 2, device=device))
    with pytest.raises(ValueError, match="negative"):
        minitorch.cov(t.detach(), fweights=minitorch.tensor([-1] + [1] * 7, device=device))
    with pytest.raises(TypeError, match="integral"):
        minitorch.cov(t.detach(), fweights=minitorch.ones(8, device=device))
