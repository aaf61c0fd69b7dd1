"""Float64 ``gradcheck`` (analytic vs finite differences) of the fused nn ops and the
composed losses, on every device, plus a check that gradcheck itself catches a wrong
backward."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.nn import functional as F
from minitorch.testing import GradcheckError, gradcheck


def leaf(shape, seed, device, low=-2.0, high=2.0, grad=True):
    arr = np.random.default_rng(seed).uniform(low, high, size=shape)
    return minitorch.tensor(arr, device=device, requires_grad=grad)


def labels(values, device):
    return minitorch.tensor(values, device=device)


REDUCTIONS = ["none", "sum", "mean"]


@pytest.mark.parametrize("xshape", [(4, 3), (3,), (2, 3, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_gradcheck_linear(device, xshape, bias):
    x, w = leaf(xshape, 0, device), leaf((5, 3), 1, device)
    b = leaf((5,), 2, device) if bias else None
    inputs = (x, w, b) if bias else (x, w)
    assert gradcheck(lambda *a: F.linear(*a), inputs)


def test_gradcheck_linear_only_weight(device):
    x, w, b = leaf((4, 3), 0, device, grad=False), leaf((2, 3), 1, device), leaf((2,), 2, device, grad=False)
    assert gradcheck(F.linear, (x, w, b))


def test_linear_gradients_match_formula(device):
    x, w, b = leaf((4, 3), 0, device), leaf((2, 3), 1, device), leaf((2,), 2, device)
    g = np.random.default_rng(3).uniform(-1, 1, (4, 2))
    F.linear(x, w, b).backward(minitorch.tensor(g, device=device))
    for t in (x, w, b):
        assert t.grad.device == t.device and t.grad.dtype == minitorch.float64
    xn, wn = x.detach().cpu().numpy(), w.detach().cpu().numpy()
    np.testing.assert_allclose(x.grad.cpu().numpy(), g @ wn, rtol=1e-12)
    np.testing.assert_allclose(w.grad.cpu().numpy(), g.T @ xn, rtol=1e-12)
    np.testing.assert_allclose(b.grad.cpu().numpy(), g.sum(0), rtol=1e-12)


@pytest.mark.parametrize("fn", [F.log_softmax, F.softmax], ids=["log_softmax", "softmax"])
@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((5,), 0)])
def test_gradcheck_softmaxes(device, fn, shape, dim):
    assert gradcheck(lambda x: fn(x, dim), (leaf(shape, 4, device),))


def test_gradcheck_log_softmax_noncontiguous(device):
    base = leaf((4, 3), 5, device)
    assert gradcheck(lambda b: F.log_softmax(b.T, 1), (base,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_cross_entropy(device, reduction):
    x = leaf((5, 4), 6, device)
    t = labels([0, 3, 1, 1, 2], device)
    assert gradcheck(lambda x: F.cross_entropy(x, t, reduction=reduction), (x,))


def test_gradcheck_cross_entropy_ignore_index(device):
    x = leaf((4, 3), 7, device)
    t = labels([0, -100, 2, 1], device)
    assert gradcheck(lambda x: F.cross_entropy(x, t), (x,))


def test_gradcheck_cross_entropy_through_linear(device):
    x, w, b = leaf((4, 3), 8, device), leaf((5, 3), 9, device), leaf((5,), 10, device)
    t = labels([4, 0, 2, 2], device)
    assert gradcheck(lambda x, w, b: F.cross_entropy(F.linear(x, w, b).tanh(), t), (x, w, b))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_nll_loss(device, reduction):
    x = leaf((4, 3), 11, device)
    t = labels([2, 0, -100, 1], device)
    assert gradcheck(lambda x: F.nll_loss(x, t, reduction=reduction), (x,))


def test_gradcheck_nll_of_log_softmax(device):
    x = leaf((3, 5), 12, device)
    t = labels([4, 0, 2], device)
    assert gradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t), (x,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_mse_loss(device, reduction):
    a, b = leaf((3, 4), 13, device), leaf((3, 4), 14, device)
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (a, b))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_binary_cross_entropy(device, reduction):
    p = leaf((3, 4), 15, device, 0.05, 0.95)
    t = leaf((3, 4), 16, device, 0.0, 1.0)
    assert gradcheck(lambda p, t: F.binary_cross_entropy(p, t, reduction=reduction), (p, t))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_binary_cross_entropy_with_logits(device, reduction):
    x = leaf((3, 4), 17, device, -5, 5)
    t = leaf((3, 4), 18, device, 0.0, 1.0)
    assert gradcheck(lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction), (x, t))


def test_gradcheck_binary_cross_entropy_with_logits_at_zero(device):
    x = minitorch.tensor(np.array([0.0, 0.0, 0.5, -0.5]), device=device, requires_grad=True)
    t = minitorch.tensor(np.array([0.0, 1.0, 0.2, 0.7]), device=device)
    assert gradcheck(lambda x: F.binary_cross_entropy_with_logits(x, t, reduction="sum"), (x,))


def test_gradcheck_detects_wrong_gradient(device):
    class WrongExp(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # wrong: should be g * exp(x)

    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongExp.apply, (leaf((3,), 19, device),))


def test_gradcheck_rejects_float32():
    with pytest.raises(TypeError, match="float64"):
        gradcheck(lambda x: F.softmax(x, 0), (minitorch.randn(3, requires_grad=True),))
