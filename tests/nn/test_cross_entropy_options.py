"""``F.cross_entropy`` / ``nn.CrossEntropyLoss`` and ``F.nll_loss`` with PyTorch's other
options: class ``weight``, ``label_smoothing``, class-probability targets, (N, C, d1, ...)
and unbatched (C,) inputs, the legacy ``size_average``/``reduce`` flags; BCE ``weight``
and BCE-with-logits ``pos_weight``. NumPy references written from PyTorch's documented
formulas, on every device; float64 gradcheck. (tests/zoo/programs/losses.py checks every
combination against PyTorch's own numbers.)"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

TOL = dict(rtol=1e-10, atol=1e-12)


def to_np(t):
    return np.array(t.detach().cpu().numpy(), copy=True)


def on(device, a, grad=False):
    return minitorch.tensor(np.asarray(a), device=device, requires_grad=grad)


def np_logsm(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def np_ce(x, t, w=None, ignore=-100, reduction="mean", eps=0.0):
    """(M, C) logits, (M,) labels: PyTorch's formula for weights and label smoothing."""
    C = x.shape[1]
    w = np.ones(C) if w is None else w
    lp = np_logsm(x)
    keep = t != ignore
    ts = np.where(keep, t, 0)
    wt = w[ts] * keep
    nll = -lp[np.arange(len(t)), ts] * wt
    smooth = -(lp * w).sum(1) * keep
    if reduction == "none":
        return (1 - eps) * nll + eps / C * smooth
    if reduction == "sum":
        return (1 - eps) * nll.sum() + eps / C * smooth.sum()
    return ((1 - eps) * nll.sum() + eps / C * smooth.sum()) / wt.sum()


X = np.random.default_rng(0).standard_normal((6, 4))
T = np.array([1, 0, -100, 3, 3, 2])
W = np.array([0.5, 2.0, 1.0, 3.0])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("eps", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_weight_and_label_smoothing(device, reduction, eps, weighted):
    w = W if weighted else None
    got = F.cross_entropy(on(device, X), on(device, T), weight=None if w is None else on(device, w),
                          reduction=reduction, label_smoothing=eps)
    np.testing.assert_allclose(to_np(got), np_ce(X, T, w, reduction=reduction, eps=eps), **TOL)
    module = nn.CrossEntropyLoss(weight=None if w is None else on(device, w), reduction=reduction,
                                 label_smoothing=eps)
    np.testing.assert_allclose(to_np(module(on(device, X), on(device, T))), to_np(got), **TOL)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_spatial_input_is_per_position(device, reduction):
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((2, 4, 3, 5)), rng.integers(0, 4, (2, 3, 5))
    t[1, 2, 4] = -100
    got = F.cross_entropy(on(device, x), on(device, t), weight=on(device, W), reduction=reduction,
                          label_smoothing=0.1)
    flat = np_ce(x.transpose(0, 2, 3, 1).reshape(-1, 4), t.reshape(-1), W, reduction=reduction, eps=0.1)
    want = flat.reshape(2, 3, 5) if reduction == "none" else flat
    np.testing.assert_allclose(to_np(got), want, **TOL)
    nll = F.nll_loss(on(device, np_logsm(x)), on(device, t), reduction=reduction)
    want = np_ce(x.transpose(0, 2, 3, 1).reshape(-1, 4), t.reshape(-1), reduction=reduction)
    np.testing.assert_allclose(to_np(nll), want.reshape(2, 3, 5) if reduction == "none" else want, **TOL)


def test_unbatched_input(device):
    got = F.cross_entropy(on(device, X[0]), on(device, np.array(2)), reduction="none")
    assert got.shape == ()
    np.testing.assert_allclose(to_np(got), -np_logsm(X[:1])[0, 2], **TOL)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_probability_targets(device, reduction):
    p = np.random.default_rng(2).random((6, 4))
    p /= p.sum(1, keepdims=True)
    eps = 0.2
    q = p * (1 - eps) + eps / 4
    per = -(np_logsm(X) * q * W).sum(1)
    want = {"none": per, "sum": per.sum(), "mean": per.sum() / 6}[reduction]  # mean: over samples, not weights
    got = F.cross_entropy(on(device, X), on(device, p), weight=on(device, W), reduction=reduction,
                          label_smoothing=eps)
    np.testing.assert_allclose(to_np(got), want, **TOL)


def test_gradcheck_options(device):
    x = on(device, X, grad=True)
    p = np.random.default_rng(3).random((6, 4))
    assert gradcheck(lambda x: F.cross_entropy(x, on(device, T), weight=on(device, W), label_smoothing=0.2), (x,))
    assert gradcheck(lambda x: F.cross_entropy(x, on(device, p / p.sum(1, keepdims=True))), (x,))
    assert gradcheck(lambda x: F.nll_loss(x, on(device, T), weight=on(device, W), reduction="sum"), (x,))


def test_bce_weight_and_pos_weight(device):
    rng = np.random.default_rng(4)
    x, t = rng.standard_normal((3, 4)), rng.random((3, 4))
    pw = np.array([1.0, 2.0, 0.5, 3.0])
    got = F.binary_cross_entropy_with_logits(on(device, x), on(device, t), weight=on(device, W),
                                             pos_weight=on(device, pw), reduction="none")
    s = 1 / (1 + np.exp(-x))
    want = -W * (pw * t * np.log(s) + (1 - t) * np.log(1 - s))
    np.testing.assert_allclose(to_np(got), want, rtol=1e-10, atol=1e-12)
    got = F.binary_cross_entropy(on(device, s), on(device, t), weight=on(device, W), reduction="sum")
    np.testing.assert_allclose(to_np(got), (-W * (t * np.log(s) + (1 - t) * np.log(1 - s))).sum(), **TOL)
    xg = on(device, x, grad=True)
    assert gradcheck(lambda x: nn.BCEWithLogitsLoss(pos_weight=on(device, pw))(x, on(device, t)), (xg,))


def test_legacy_flags_and_buffers():
    x, t = on("cpu", X), on("cpu", T)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert nn.CrossEntropyLoss(reduce=False)(x, t).shape == (6,)
        np.testing.assert_allclose(to_np(F.cross_entropy(x, t, size_average=False)),
                                   to_np(F.cross_entropy(x, t, reduction="sum")), **TOL)
    loss = nn.CrossEntropyLoss(weight=on("cpu", W))
    assert list(loss.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    assert list(nn.BCEWithLogitsLoss(pos_weight=on("cpu", W)).state_dict()) == ["pos_weight"]


def test_errors():
    x, t = on("cpu", X), on("cpu", T)
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.cross_entropy(x, t, weight=on("cpu", np.ones(3)))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, t, label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"expected target of shape \(2, 3\)"):
        F.cross_entropy(on("cpu", np.zeros((2, 4, 3))), on("cpu", np.zeros((2, 4), np.int64)))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, t, reduction="avg")
