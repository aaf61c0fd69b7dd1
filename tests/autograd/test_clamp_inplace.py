"""x.clamp_(min, max), clamp_min_, clamp_max_ and clip_: one kernel writing x outside a graph
(the ternary clamp for two bounds, maximum / minimum for one); inside a graph, clamp of a copy
of x rebased as x's history (clamp's gradient, ties at the bounds included). Checked against
NumPy and the out-of-place op, with PyTorch's in-place rules, and by launch count."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, launches

X = np.array([[-2.0, -0.5, 0.0, 0.5], [1.0, 2.0, np.nan, -1.0], [0.3, -0.3, 1.5, -1.5]], dtype=np.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("lo, hi", [(-1.0, 1.0), (None, 0.25), (-0.25, None), (1.0, -1.0), ("tensor", "tensor")])
def test_matches_numpy(device, lo, hi):
    t = minitorch.tensor(X, device=device)
    if lo == "tensor":  # bounds broadcast over the rows
        lo_np, hi_np = np.array([-1.0, -0.4, 0.0, -2.0], np.float32), np.array([1.0, 0.4, 0.1, 2.0], np.float32)
        lo, hi = minitorch.tensor(lo_np, device=device), minitorch.tensor(hi_np, device=device)
    else:
        lo_np, hi_np = lo, hi
    want = X
    if lo_np is not None:
        want = np.where(np.isnan(want), want, np.maximum(want, lo_np))
    if hi_np is not None:
        want = np.where(np.isnan(want), want, np.minimum(want, hi_np))
    assert t.clamp_(lo, hi) is t
    np.testing.assert_array_equal(t.cpu().numpy(), want)
    np.testing.assert_array_equal(t.cpu().numpy(), minitorch.tensor(X, device=device).clamp(lo, hi).cpu().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_one_sided_forms_aliases_and_strided_self(device):
    t = minitorch.tensor(X, device=device)
    t.T.clamp_min_(0.0)  # a transposed view writes the same memory
    np.testing.assert_array_equal(t.cpu().numpy(), np.where(np.isnan(X), X, np.maximum(X, 0.0)))
    t = minitorch.tensor(X, device=device)
    t[:, ::2].clamp_max_(0.0)
    want = X.copy()
    want[:, ::2] = np.where(np.isnan(X[:, ::2]), X[:, ::2], np.minimum(X[:, ::2], 0.0))
    np.testing.assert_array_equal(t.cpu().numpy(), want)
    t = minitorch.tensor(X, device=device)
    t.clip_(-0.5, 0.5)
    np.testing.assert_array_equal(t.cpu().numpy(), minitorch.tensor(X, device=device).clamp(-0.5, 0.5).cpu().numpy())
    i = minitorch.tensor(np.arange(-3, 3), device=device)
    i.clamp_(-1, 1)
    np.testing.assert_array_equal(i.cpu().numpy(), np.clip(np.arange(-3, 3), -1, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("lo, hi", [(-1.0, 1.0), (None, 0.5), (0.5, None)])
def test_gradient_inside_a_graph_is_clamps(device, lo, hi):
    # Ties at a bound included: x = 0.5 against min 0.5 (clamp passes the gradient there).
    x_np = np.array([-2.0, -1.0, 0.5, 0.7, 1.0, 3.0])
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    h = x * 1
    h.clamp_(lo, hi)
    assert h.grad_fn is not None
    (h * minitorch.tensor(np.arange(6.0), device=device)).sum().backward()
    x2 = minitorch.tensor(x_np, device=device, requires_grad=True)
    (x2.clamp(lo, hi) * minitorch.tensor(np.arange(6.0), device=device)).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), x2.grad.cpu().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_pytorch_in_place_rules(device):
    leaf = minitorch.randn(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.clamp_(-1, 1)
    with pytest.raises(ValueError, match="at least one"):
        minitorch.zeros(3, device=device).clamp_()
    with pytest.raises(TypeError):
        minitorch.zeros(3, dtype=minitorch.int64, device=device).clamp_(-0.5, 0.5)  # a float result into int64
    with pytest.raises(TypeError, match="bool"):
        minitorch.zeros(3, dtype=minitorch.bool, device=device).clamp_(0, 1)
    e = minitorch.randn(1, 3, device=device).expand(2, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        e.clamp_(-1, 1)
    with pytest.raises(TypeError, match="None"):
        minitorch.zeros(3, device=device).clamp_min_(None)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_one_launch_outside_a_graph():
    x = minitorch.randn(64, 64, device="cuda")
    for fn in (lambda: x.clamp_(-1, 1), lambda: x.clamp_min_(0), lambda: x.clamp_max_(0.5), lambda: x.clip_(-2, 2)):
        names = launches(fn)
        assert len(names) == 1, names
