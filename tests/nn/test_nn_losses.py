"""Every loss against its NumPy formula, with reductions, ignore_index, large logits
and the error cases (wrong target dtype, out-of-range labels, mismatched batch)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch import nn
from minitorch.nn import functional as F

from conftest import DEVICES


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, low=-3.0, high=3.0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def labels(n, c, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, c, size=n).astype(np.int64)


def np_log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def np_nll(logp, t, reduction="mean", ignore_index=-100):
    keep = t != ignore_index
    per = np.zeros(len(t))
    per[keep] = -logp[np.arange(len(t))[keep], t[keep]]
    if reduction == "none":
        return per
    if reduction == "sum":
        return per.sum()
    return per.sum() / keep.sum()


def reduce(per, reduction):
    return {"none": per, "sum": per.sum(), "mean": per.mean()}[reduction]


REDUCTIONS = ["none", "sum", "mean"]
TOL = dict(rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- cross entropy ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_matches_numpy(device, reduction):
    x, t = rand((8, 5), 1), labels(8, 5, 2)
    loss = nn.CrossEntropyLoss(reduction=reduction)(minitorch.tensor(x, device=device),
                                                    minitorch.tensor(t, device=device))
    expected = np_nll(np_log_softmax(x), t, reduction)
    assert tuple(loss.shape) == np.shape(expected)
    assert loss.dtype == minitorch.float32
    np.testing.assert_allclose(to_np(loss), expected, **TOL)


@given(n=st.integers(1, 6), c=st.integers(1, 7), seed=st.integers(0, 2**31), reduction=st.sampled_from(REDUCTIONS))
def test_cross_entropy_float64_hypothesis(n, c, seed, reduction):
    x, t = rand((n, c), seed, -10, 10, np.float64), labels(n, c, seed)
    loss = F.cross_entropy(minitorch.tensor(x), minitorch.tensor(t), reduction=reduction)
    assert loss.dtype == minitorch.float64
    np.testing.assert_allclose(to_np(loss), np_nll(np_log_softmax(x), t, reduction), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_ignore_index(reduction):
    x = rand((6, 4), 3)
    t = np.array([0, -100, 3, 2, -100, 1], np.int64)
    loss = F.cross_entropy(minitorch.tensor(x), minitorch.tensor(t), reduction=reduction)
    expected = np_nll(np_log_softmax(x), t, reduction)
    np.testing.assert_allclose(to_np(loss), expected, **TOL)
    if reduction == "none":
        assert to_np(loss)[1] == 0 and to_np(loss)[4] == 0


def test_cross_entropy_custom_ignore_index_and_gradient():
    x = rand((4, 3), 4)
    t = np.array([2, 1, 2, 0], np.int64)
    xt = minitorch.tensor(x, requires_grad=True)
    loss = nn.CrossEntropyLoss(ignore_index=2)(xt, minitorch.tensor(t))
    np.testing.assert_allclose(to_np(loss), np_nll(np_log_softmax(x), t, "mean", 2), **TOL)
    loss.backward()
    g = to_np(xt.grad)
    # rows with the ignored label get no gradient; the others (softmax - onehot) / 2
    np.testing.assert_array_equal(g[[0, 2]], np.zeros((2, 3), np.float32))
    sm = np.exp(np_log_softmax(x))
    onehot = np.eye(3)[t]
    np.testing.assert_allclose(g[[1, 3]], ((sm - onehot) / 2)[[1, 3]], **TOL)


def test_cross_entropy_all_ignored_mean_is_nan():
    loss = F.cross_entropy(minitorch.tensor(rand((2, 3))), minitorch.tensor([-100, -100]))
    assert np.isnan(to_np(loss))  # PyTorch: 0/0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_large_logits_finite(dtype):
    x = np.array([[1e4, 0.0, -1e4], [-1e4, 1e4, 0.0], [5e3, 5e3, -5e3]], dtype)
    t = np.array([0, 0, 1], np.int64)
    xt = minitorch.tensor(x, requires_grad=True)
    loss = F.cross_entropy(xt, minitorch.tensor(t), reduction="none")
    got = to_np(loss)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [0.0, 2e4, np.log(2)], rtol=1e-5, atol=1e-5)
    loss.sum().backward()
    g = to_np(xt.grad)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, np.exp(np_log_softmax(x)) - np.eye(3)[t], atol=1e-6)


def test_cross_entropy_gradient_matches_formula():
    x, t = rand((5, 4), 9), labels(5, 4, 9)
    xt = minitorch.tensor(x, requires_grad=True)
    F.cross_entropy(xt, minitorch.tensor(t)).backward()
    expected = (np.exp(np_log_softmax(x)) - np.eye(4)[t]) / 5
    np.testing.assert_allclose(to_np(xt.grad), expected, **TOL)
    assert xt.grad.dtype == minitorch.float32


def test_cross_entropy_float_targets_type_error():
    with pytest.raises(TypeError, match="int64"):
        F.cross_entropy(minitorch.tensor(rand((2, 3))), minitorch.tensor([0.0, 1.0]))


@pytest.mark.parametrize("bad", [5, 3, -1])
def test_cross_entropy_out_of_range_label_index_error(bad):
    with pytest.raises(IndexError, match=rf"target {bad} is out of bounds for 3 classes"):
        F.cross_entropy(minitorch.tensor(rand((2, 3))), minitorch.tensor([0, bad]))


def test_cross_entropy_batch_mismatch_value_error():
    with pytest.raises(ValueError) as e:
        F.cross_entropy(minitorch.tensor(rand((2, 3))), minitorch.tensor([0, 1, 2]))
    assert "(2, 3)" in str(e.value) and "(3,)" in str(e.value)


def test_cross_entropy_bad_reduction():
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(minitorch.tensor(rand((2, 3))), minitorch.tensor([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.CrossEntropyLoss(reduction="avg")


def test_cross_entropy_integer_logits_type_error():
    with pytest.raises(TypeError):
        F.cross_entropy(minitorch.tensor([[1, 2], [3, 4]]), minitorch.tensor([0, 1]))


def test_cross_entropy_equals_nll_of_log_softmax():
    x, t = rand((7, 6), 11), labels(7, 6, 11)
    xt, tt = minitorch.tensor(x), minitorch.tensor(t)
    a = F.cross_entropy(xt, tt)
    b = F.nll_loss(F.log_softmax(xt, 1), tt)
    np.testing.assert_allclose(to_np(a), to_np(b), **TOL)


# ---------------------------------------------------------------- NLL ----

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_matches_numpy(reduction):
    logp = np_log_softmax(rand((6, 4), 5)).astype(np.float32)
    t = np.array([0, 3, -100, 1, 2, 2], np.int64)
    loss = nn.NLLLoss(reduction=reduction)(minitorch.tensor(logp), minitorch.tensor(t))
    np.testing.assert_allclose(to_np(loss), np_nll(logp.astype(np.float64), t, reduction), **TOL)


def test_nll_loss_gradient():
    logp = rand((3, 4), 6)
    t = np.array([1, 0, 3], np.int64)
    xt = minitorch.tensor(logp, requires_grad=True)
    F.nll_loss(xt, minitorch.tensor(t), reduction="sum").backward()
    np.testing.assert_array_equal(to_np(xt.grad), -np.eye(4, dtype=np.float32)[t])


def test_nll_loss_errors():
    with pytest.raises(TypeError):
        F.nll_loss(minitorch.tensor(rand((2, 3))), minitorch.tensor([0.0, 1.0]))
    with pytest.raises(IndexError, match="target 7"):
        F.nll_loss(minitorch.tensor(rand((2, 3))), minitorch.tensor([7, 1]))
    with pytest.raises(ValueError):
        F.nll_loss(minitorch.tensor(rand((2, 3))), minitorch.tensor([0]))


# ---------------------------------------------------------------- MSE / L1 ----

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss(reduction):
    a, b = rand((4, 3), 1), rand((4, 3), 2)
    loss = nn.MSELoss(reduction=reduction)(minitorch.tensor(a), minitorch.tensor(b))
    np.testing.assert_allclose(to_np(loss), reduce((a.astype(np.float64) - b) ** 2, reduction), **TOL)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_l1_loss(reduction):
    a, b = rand((4, 3), 3), rand((4, 3), 4)
    loss = nn.L1Loss(reduction=reduction)(minitorch.tensor(a), minitorch.tensor(b))
    np.testing.assert_allclose(to_np(loss), reduce(np.abs(a.astype(np.float64) - b), reduction), **TOL)


def test_mse_shape_mismatch():
    with pytest.raises(ValueError, match=r"target size \(3,\) must be the same as input size \(4, 3\)"):
        F.mse_loss(minitorch.zeros(4, 3), minitorch.zeros(3))


# ---------------------------------------------------------------- BCE ----

def np_bce(p, t):
    p = p.astype(np.float64)
    return -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log(1 - p), -100))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_loss(reduction):
    p = rand((5, 3), 1, 0.01, 0.99)
    t = (rand((5, 3), 2, 0, 1) > 0.5).astype(np.float32)
    loss = nn.BCELoss(reduction=reduction)(minitorch.tensor(p), minitorch.tensor(t))
    np.testing.assert_allclose(to_np(loss), reduce(np_bce(p, t), reduction), **TOL)


def test_bce_soft_targets():
    p = rand((10,), 3, 0.05, 0.95)
    t = rand((10,), 4, 0, 1)
    loss = F.binary_cross_entropy(minitorch.tensor(p), minitorch.tensor(t), reduction="none")
    np.testing.assert_allclose(to_np(loss), np_bce(p, t), **TOL)


def test_bce_clamps_log_at_minus_100():
    p = np.array([0.0, 1.0, 0.0, 1.0], np.float32)
    t = np.array([1.0, 0.0, 0.0, 1.0], np.float32)
    loss = to_np(F.binary_cross_entropy(minitorch.tensor(p), minitorch.tensor(t), reduction="none"))
    np.testing.assert_allclose(loss, [100.0, 100.0, 0.0, 0.0], rtol=1e-6)


def np_bce_logits(x, t):
    x = x.astype(np.float64)
    return np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction):
    x = rand((6, 2), 5, -5, 5)
    t = (rand((6, 2), 6, 0, 1) > 0.5).astype(np.float32)
    loss = nn.BCEWithLogitsLoss(reduction=reduction)(minitorch.tensor(x), minitorch.tensor(t))
    np.testing.assert_allclose(to_np(loss), reduce(np_bce_logits(x, t), reduction), **TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_with_logits_large_logits_stable(dtype):
    x = np.array([1e4, -1e4, 1e4, -1e4, 100.0, -100.0], dtype)
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0], dtype)
    xt = minitorch.tensor(x, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(xt, minitorch.tensor(t), reduction="none")
    got = to_np(loss)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [0.0, 0.0, 1e4, 1e4, 0.0, 100.0], rtol=1e-6, atol=1e-6)
    loss.sum().backward()
    g = to_np(xt.grad)  # d/dx = sigmoid(x) - t
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, [0.0, 0.0, 1.0, -1.0, 0.0, -1.0], atol=1e-6)


def test_bce_with_logits_gradient_is_sigmoid_minus_target():
    # including logits exactly 0 (e.g. a zero-initialised output layer), where the
    # kinks of relu(x) and |x| in the stable formula must cancel
    x = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 0.0], np.float32)
    t = np.array([0.0, 1.0, 0.3, 0.0, 1.0, 0.5], np.float32)
    xt = minitorch.tensor(x, requires_grad=True)
    F.binary_cross_entropy_with_logits(xt, minitorch.tensor(t), reduction="sum").backward()
    np.testing.assert_allclose(to_np(xt.grad), 1 / (1 + np.exp(-x.astype(np.float64))) - t, rtol=1e-6, atol=1e-7)


def test_bce_with_logits_equals_bce_of_sigmoid():
    x = rand((8,), 7, -4, 4, np.float64)
    t = rand((8,), 8, 0, 1, np.float64)
    a = F.binary_cross_entropy_with_logits(minitorch.tensor(x), minitorch.tensor(t))
    b = F.binary_cross_entropy(minitorch.tensor(x).sigmoid(), minitorch.tensor(t))
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-12)


def test_bce_shape_mismatch():
    with pytest.raises(ValueError, match="binary_cross_entropy"):
        F.binary_cross_entropy(minitorch.full((3,), 0.5), minitorch.zeros(3, 1))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits"):
        F.binary_cross_entropy_with_logits(minitorch.zeros(3), minitorch.zeros(4))


# ---------------------------------------------------------------- one_hot ----

def test_one_hot():
    t = minitorch.tensor([0, 2, 1, 2])
    np.testing.assert_array_equal(to_np(F.one_hot(t, 4)), np.eye(4, dtype=np.int64)[[0, 2, 1, 2]])
    assert tuple(F.one_hot(t).shape) == (4, 3)
    with pytest.raises(TypeError):
        F.one_hot(minitorch.tensor([0.0, 1.0]))
