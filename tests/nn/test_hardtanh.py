"""``F.hardtanh`` / ``F.relu6`` (``_C._hardtanh``, ``_C._hardtanh_``): one clamp kernel
forward, PyTorch's gradient (1 strictly inside the bounds, 0 at and beyond them, where
``clamp``'s is 1 at the bounds), and the in-place form that writes once inside a graph.
Against NumPy on every device and floating dtype, float64 gradcheck and double backward,
the in-place rules, launch counts on CUDA, and PyTorch when installed."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, TORCH_SKIP_REASON
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

FLOATS = [minitorch.float32, minitorch.float64, minitorch.float16, minitorch.bfloat16]
# Points at, inside and beyond the bounds of hardtanh(-0.5, 1) and of relu6.
X = np.array([-2.0, -0.5, -0.25, 0.0, 0.5, 1.0, 1.5, 6.0, 7.0])


def to_np(t) -> np.ndarray:
    return np.array(t.detach().to(minitorch.float64).cpu().numpy())


def want_grad(x, lo, hi):
    return ((x > lo) & (x < hi)).astype(np.float64)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("bounds", [(-0.5, 1.0), (0.0, 6.0), (1.0, 1.0)])
@pytest.mark.parametrize("inplace", [False, True])
def test_values_and_pytorchs_gradient_at_the_bounds(device, dtype, bounds, inplace):
    lo, hi = bounds
    leaf = minitorch.tensor(X, device=device).to(dtype).requires_grad_()
    h = leaf * 1.0  # not a leaf, so the in-place form may write it
    y = F.hardtanh(h, lo, hi, inplace=inplace)
    assert (y is h) == inplace and y.dtype == dtype and y.grad_fn.name() == "HardtanhBackward0"
    np.testing.assert_array_equal(to_np(y), np.clip(X, lo, hi))
    y.backward(minitorch.ones_like(y))
    np.testing.assert_array_equal(to_np(leaf.grad), want_grad(X, lo, hi))


def test_relu6_is_hardtanh_0_6_and_nan_passes_the_gradient(device):
    x = minitorch.tensor([-1.0, 0.0, 3.0, 6.0, 7.0, float("nan")], device=device, requires_grad=True)
    y = F.relu6(x)
    np.testing.assert_array_equal(to_np(y), [0.0, 0.0, 3.0, 6.0, 6.0, np.nan])
    y.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [0.0, 0.0, 1.0, 0.0, 0.0, 1.0])  # PyTorch's rule for NaN too


def test_non_contiguous_and_empty(device):
    base = minitorch.tensor(np.linspace(-3, 3, 24).reshape(4, 6), device=device, dtype=minitorch.float64)
    xt = base.t().requires_grad_()
    y = F.hardtanh(xt, -1.5, 2.0)
    np.testing.assert_array_equal(to_np(y), np.clip(to_np(base).T, -1.5, 2.0))
    y.sum().backward()
    np.testing.assert_array_equal(to_np(xt.grad), want_grad(to_np(base).T, -1.5, 2.0))
    e = minitorch.zeros(0, 3, device=device, requires_grad=True)
    assert F.relu6(e).shape == (0, 3)
    h = e * 1
    assert F.relu6(h, inplace=True) is h


def test_gradcheck_and_double_backward(device):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (4, 5))
    x[np.abs(np.abs(x) - 1) < 0.05] = 0.3  # no point near a bound, where the gradient jumps
    t = minitorch.tensor(x, device=device, requires_grad=True)
    assert gradcheck(lambda a: F.hardtanh(a), (t,))
    assert gradcheck(lambda a: F.hardtanh(a * 1.0, inplace=True), (t,))
    g, = minitorch.autograd.grad(F.relu6(t * 3).pow(2).sum(), t, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(to_np(t.grad), 18 * want_grad(3 * x, 0, 6), rtol=1e-12)


def test_in_place_rules(device):
    leaf = minitorch.randn(5, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.relu6(leaf, inplace=True)
    # The result is saved: writing into it again before backward is refused, as in PyTorch.
    h = leaf * 2
    F.relu6(h, inplace=True)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h.sum().backward()
    # A view of a live base takes the general path; the base's gradient is still right.
    x = minitorch.tensor(X, device=device, requires_grad=True)
    base = x * 1.0
    view = base[2:6]
    F.hardtanh(view, -0.5, 1.0, inplace=True)
    base.sum().backward()
    want = np.ones_like(X)
    want[2:6] = want_grad(X[2:6], -0.5, 1.0)
    np.testing.assert_array_equal(to_np(x.grad), want)
    # Outside a graph: a plain write.
    with minitorch.no_grad():
        z = minitorch.tensor(X, device=device)
        assert F.hardtanh(z, -0.5, 1.0, inplace=True) is z
    np.testing.assert_array_equal(to_np(z), np.clip(X, -0.5, 1.0))


def test_modules_integers_and_errors(device):
    m = nn.ReLU6(inplace=True)
    x = minitorch.tensor(X, device=device)
    assert m(x) is x and repr(m) == "ReLU6(inplace=True)"
    np.testing.assert_array_equal(to_np(x), np.clip(X, 0, 6))
    ints = minitorch.tensor([-3, 0, 4, 9], device=device)
    assert F.hardtanh(ints, -1, 2).tolist() == [-1, 0, 2, 2]  # integers: a plain clamp
    assert F.relu6(ints, inplace=True) is ints and ints.tolist() == [0, 0, 4, 6]
    with pytest.raises(ValueError, match="hardtanh: min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(TypeError, match="hardtanh: expected a floating-point input, got int64"):
        minitorch._C._hardtanh(ints, 0.0, 1.0)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_one_launch_each_way_on_cuda():
    """Forward one kernel (out of place or in place, inside a graph too: no copy of x, no
    copy back), backward one kernel."""
    from minitorch.profiler import ProfilerActivity, profile

    def launches(fn):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
        return [k.name for e in prof.events() for k in e.kernels]

    leaf = minitorch.randn(64, 33, device="cuda", requires_grad=True)
    h = leaf * 4
    assert len(launches(lambda: F.relu6(h))) == 1
    g = minitorch.ones(64, 33, device="cuda")
    y = F.relu6(h)
    assert len(launches(lambda: minitorch.autograd.grad(y, leaf, g))) == 2  # hardtanh's, then mul's
    h = leaf * 4
    assert len(launches(lambda: F.relu6(h, inplace=True))) == 1
    assert len(launches(lambda: minitorch.autograd.grad(h, leaf, g))) == 2


def test_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    for lo, hi in [(-0.5, 1.0), (0.0, 6.0)]:
        x = minitorch.tensor(X, requires_grad=True)
        tx = torch.tensor(X, requires_grad=True)
        F.hardtanh(x, lo, hi).sum().backward()
        torch.nn.functional.hardtanh(tx, lo, hi).sum().backward()
        np.testing.assert_array_equal(to_np(x.grad), tx.grad.numpy())
