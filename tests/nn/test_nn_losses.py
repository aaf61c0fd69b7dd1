"""Every loss against its NumPy formula, with reductions, ignore_index, large logits
and the error cases (wrong target dtype, out-of-range labels, mismatched batch), on
every device."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch import nn
from minitorch.nn import functional as F


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, low=-3.0, high=3.0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def labels(n, c, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, c, size=n).astype(np.int64)


def on(device, *arrays, requires_grad=False):
    """The arrays as minitorch tensors on ``device`` (one tensor for one array)."""
    ts = tuple(minitorch.tensor(a, device=device, requires_grad=requires_grad) for a in arrays)
    return ts[0] if len(ts) == 1 else ts


def check_grad(xt, expected, **tol):
    """``xt.grad`` lives beside ``xt`` (same device and dtype) and equals ``expected``."""
    assert xt.grad.device == xt.device and xt.grad.dtype == xt.dtype
    np.testing.assert_allclose(to_np(xt.grad), expected, **tol)


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

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_matches_numpy(device, reduction):
    x, t = rand((8, 5), 1), labels(8, 5, 2)
    loss = nn.CrossEntropyLoss(reduction=reduction)(*on(device, x, t))
    expected = np_nll(np_log_softmax(x), t, reduction)
    assert tuple(loss.shape) == np.shape(expected)
    assert loss.dtype == minitorch.float32 and loss.device.type == device
    np.testing.assert_allclose(to_np(loss), expected, **TOL)


@given(n=st.integers(1, 6), c=st.integers(1, 7), seed=st.integers(0, 2**31), reduction=st.sampled_from(REDUCTIONS))
def test_cross_entropy_float64_hypothesis(device, n, c, seed, reduction):
    x, t = rand((n, c), seed, -10, 10, np.float64), labels(n, c, seed)
    loss = F.cross_entropy(*on(device, x, t), reduction=reduction)
    assert loss.dtype == minitorch.float64
    np.testing.assert_allclose(to_np(loss), np_nll(np_log_softmax(x), t, reduction), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_ignore_index(device, reduction):
    x = rand((6, 4), 3)
    t = np.array([0, -100, 3, 2, -100, 1], np.int64)
    loss = F.cross_entropy(*on(device, x, t), reduction=reduction)
    expected = np_nll(np_log_softmax(x), t, reduction)
    np.testing.assert_allclose(to_np(loss), expected, **TOL)
    if reduction == "none":
        assert to_np(loss)[1] == 0 and to_np(loss)[4] == 0


def test_cross_entropy_custom_ignore_index_and_gradient(device):
    x = rand((4, 3), 4)
    t = np.array([2, 1, 2, 0], np.int64)
    xt = on(device, x, requires_grad=True)
    loss = nn.CrossEntropyLoss(ignore_index=2)(xt, on(device, t))
    np.testing.assert_allclose(to_np(loss), np_nll(np_log_softmax(x), t, "mean", 2), **TOL)
    loss.backward()
    # rows with the ignored label get no gradient; the others (softmax - onehot) / 2
    sm = np.exp(np_log_softmax(x))
    expected = (sm - np.eye(3)[t]) / 2
    expected[[0, 2]] = 0.0
    check_grad(xt, expected, **TOL)
    np.testing.assert_array_equal(to_np(xt.grad)[[0, 2]], np.zeros((2, 3), np.float32))


def test_cross_entropy_all_ignored_mean_is_nan(device):
    xt = on(device, rand((2, 3)), requires_grad=True)
    loss = F.cross_entropy(xt, on(device, np.array([-100, -100])))
    assert np.isnan(to_np(loss))  # PyTorch: 0/0
    loss.backward()
    np.testing.assert_array_equal(to_np(xt.grad), np.zeros((2, 3)))  # ...but no row gets a gradient (as PyTorch)


@pytest.mark.parametrize("fn", [F.cross_entropy, F.nll_loss])
def test_mean_loss_of_an_empty_batch_is_nan(device, fn):
    assert np.isnan(to_np(fn(*on(device, np.zeros((0, 4), np.float32), np.zeros(0, np.int64)))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_large_logits_finite(device, dtype):
    x = np.array([[1e4, 0.0, -1e4], [-1e4, 1e4, 0.0], [5e3, 5e3, -5e3]], dtype)
    t = np.array([0, 0, 1], np.int64)
    xt = on(device, x, requires_grad=True)
    loss = F.cross_entropy(xt, on(device, t), reduction="none")
    got = to_np(loss)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [0.0, 2e4, np.log(2)], rtol=1e-5, atol=1e-5)
    loss.sum().backward()
    assert np.all(np.isfinite(to_np(xt.grad)))
    check_grad(xt, np.exp(np_log_softmax(x)) - np.eye(3)[t], atol=1e-6)


def test_cross_entropy_gradient_matches_formula(device):
    x, t = rand((5, 4), 9), labels(5, 4, 9)
    xt = on(device, x, requires_grad=True)
    F.cross_entropy(xt, on(device, t)).backward()
    check_grad(xt, (np.exp(np_log_softmax(x)) - np.eye(4)[t]) / 5, **TOL)


def test_cross_entropy_float_targets_type_error(device):
    with pytest.raises(TypeError, match="int64"):
        F.cross_entropy(*on(device, rand((2, 3)), np.array([0.0, 1.0])))


@pytest.mark.parametrize("bad", [5, 3, -1])
def test_cross_entropy_out_of_range_label_index_error(device, bad):
    # On a GPU the label is checked by a kernel and the IndexError comes at the next
    # synchronization (here .item()); on the CPU at once.
    with pytest.raises(IndexError, match=rf"target {bad} is out of bounds for 3 classes"):
        F.cross_entropy(*on(device, rand((2, 3)), np.array([0, bad]))).item()


def test_cross_entropy_batch_mismatch_value_error(device):
    with pytest.raises(ValueError) as e:
        F.cross_entropy(*on(device, rand((2, 3)), np.array([0, 1, 2])))
    assert "(2, 3)" in str(e.value) and "(3,)" in str(e.value)


def test_cross_entropy_bad_reduction(device):
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(*on(device, rand((2, 3)), np.array([0, 1])), reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.CrossEntropyLoss(reduction="avg")


def test_cross_entropy_integer_logits_type_error(device):
    with pytest.raises(TypeError):
        F.cross_entropy(*on(device, np.array([[1, 2], [3, 4]]), np.array([0, 1])))


def test_cross_entropy_equals_nll_of_log_softmax(device):
    x, t = rand((7, 6), 11), labels(7, 6, 11)
    xt, tt = on(device, x, t)
    a = F.cross_entropy(xt, tt)
    b = F.nll_loss(F.log_softmax(xt, 1), tt)
    np.testing.assert_allclose(to_np(a), to_np(b), **TOL)


# ---------------------------------------------------------------- NLL ----

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_matches_numpy(device, reduction):
    logp = np_log_softmax(rand((6, 4), 5)).astype(np.float32)
    t = np.array([0, 3, -100, 1, 2, 2], np.int64)
    loss = nn.NLLLoss(reduction=reduction)(*on(device, logp, t))
    np.testing.assert_allclose(to_np(loss), np_nll(logp.astype(np.float64), t, reduction), **TOL)


def test_nll_loss_gradient(device):
    logp = rand((3, 4), 6)
    t = np.array([1, 0, 3], np.int64)
    xt = on(device, logp, requires_grad=True)
    F.nll_loss(xt, on(device, t), reduction="sum").backward()
    check_grad(xt, -np.eye(4, dtype=np.float32)[t], rtol=0, atol=0)


def test_nll_loss_errors(device):
    x = on(device, rand((2, 3)))
    with pytest.raises(TypeError):
        F.nll_loss(x, on(device, np.array([0.0, 1.0])))
    with pytest.raises(IndexError, match="target 7"):
        F.nll_loss(x, on(device, np.array([7, 1]))).item()
    with pytest.raises(ValueError):
        F.nll_loss(x, on(device, np.array([0])))


# ---------------------------------------------------------------- MSE / L1 ----

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss(device, reduction):
    a, b = rand((4, 3), 1), rand((4, 3), 2)
    loss = nn.MSELoss(reduction=reduction)(*on(device, a, b))
    np.testing.assert_allclose(to_np(loss), reduce((a.astype(np.float64) - b) ** 2, reduction), **TOL)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_l1_loss(device, reduction):
    a, b = rand((4, 3), 3), rand((4, 3), 4)
    loss = nn.L1Loss(reduction=reduction)(*on(device, a, b))
    np.testing.assert_allclose(to_np(loss), reduce(np.abs(a.astype(np.float64) - b), reduction), **TOL)


@pytest.mark.parametrize("name,ref", [("mse_loss", np.square), ("l1_loss", np.abs)])
def test_regression_losses_broadcast_another_shape_with_pytorchs_warning(device, name, ref):
    a, b = rand((4, 1), 5), rand((4,), 6)
    with pytest.warns(UserWarning, match=r"^Using a target size \(minitorch.Size\(\[4\]\)\) that is different to "
                                         r"the input size \(minitorch.Size\(\[4, 1\]\)\)\. This will likely lead to "
                                         r"incorrect results due to broadcasting\. Please ensure they have the same "
                                         r"size\.$") as record:
        loss = getattr(F, name)(*on(device, a, b))
    assert record[0].filename == __file__  # points at the caller's line, as PyTorch's stacklevel does
    np.testing.assert_allclose(to_np(loss), ref(a.astype(np.float64) - b).mean(), **TOL)  # a (4, 4) broadcast
    with pytest.warns(UserWarning), pytest.raises(ValueError):  # shapes that do not broadcast still raise
        getattr(F, name)(minitorch.zeros(4, 3, device=device), minitorch.zeros(4, device=device))


def test_binary_cross_entropy_shape_mismatch_raises(device):
    with pytest.raises(ValueError, match=r"target size \(3,\) must be the same as input size \(4, 3\)"):
        F.binary_cross_entropy(minitorch.full((4, 3), 0.5, device=device), minitorch.zeros(3, device=device))


# ---------------------------------------------------------------- BCE ----

def np_bce(p, t):
    p = p.astype(np.float64)
    return -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log(1 - p), -100))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_loss(device, reduction):
    p = rand((5, 3), 1, 0.01, 0.99)
    t = (rand((5, 3), 2, 0, 1) > 0.5).astype(np.float32)
    loss = nn.BCELoss(reduction=reduction)(*on(device, p, t))
    np.testing.assert_allclose(to_np(loss), reduce(np_bce(p, t), reduction), **TOL)


def test_bce_soft_targets(device):
    p = rand((10,), 3, 0.05, 0.95)
    t = rand((10,), 4, 0, 1)
    loss = F.binary_cross_entropy(*on(device, p, t), reduction="none")
    np.testing.assert_allclose(to_np(loss), np_bce(p, t), **TOL)


def test_bce_clamps_log_at_minus_100(device):
    p = np.array([0.0, 1.0, 0.0, 1.0], np.float32)
    t = np.array([1.0, 0.0, 0.0, 1.0], np.float32)
    loss = to_np(F.binary_cross_entropy(*on(device, p, t), reduction="none"))
    np.testing.assert_allclose(loss, [100.0, 100.0, 0.0, 0.0], rtol=1e-6)


def np_bce_logits(x, t):
    x = x.astype(np.float64)
    return np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(device, reduction):
    x = rand((6, 2), 5, -5, 5)
    t = (rand((6, 2), 6, 0, 1) > 0.5).astype(np.float32)
    loss = nn.BCEWithLogitsLoss(reduction=reduction)(*on(device, x, t))
    np.testing.assert_allclose(to_np(loss), reduce(np_bce_logits(x, t), reduction), **TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_with_logits_large_logits_stable(device, dtype):
    x = np.array([1e4, -1e4, 1e4, -1e4, 100.0, -100.0], dtype)
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0], dtype)
    xt = on(device, x, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(xt, on(device, t), reduction="none")
    got = to_np(loss)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [0.0, 0.0, 1e4, 1e4, 0.0, 100.0], rtol=1e-6, atol=1e-6)
    loss.sum().backward()
    assert np.all(np.isfinite(to_np(xt.grad)))
    check_grad(xt, [0.0, 0.0, 1.0, -1.0, 0.0, -1.0], atol=1e-6)  # d/dx = sigmoid(x) - t


def test_bce_with_logits_gradient_is_sigmoid_minus_target(device):
    # including logits exactly 0 (e.g. a zero-initialised output layer), where the
    # kinks of relu(x) and |x| in the stable formula must cancel
    x = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 0.0], np.float32)
    t = np.array([0.0, 1.0, 0.3, 0.0, 1.0, 0.5], np.float32)
    xt = on(device, x, requires_grad=True)
    F.binary_cross_entropy_with_logits(xt, on(device, t), reduction="sum").backward()
    check_grad(xt, 1 / (1 + np.exp(-x.astype(np.float64))) - t, rtol=1e-6, atol=1e-7)


def test_bce_with_logits_equals_bce_of_sigmoid(device):
    x, t = on(device, rand((8,), 7, -4, 4, np.float64), rand((8,), 8, 0, 1, np.float64))
    a = F.binary_cross_entropy_with_logits(x, t)
    b = F.binary_cross_entropy(x.sigmoid(), t)
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-12)


def test_bce_shape_mismatch(device):
    with pytest.raises(ValueError, match="binary_cross_entropy"):
        F.binary_cross_entropy(minitorch.full((3,), 0.5, device=device), minitorch.zeros(3, 1, device=device))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits"):
        F.binary_cross_entropy_with_logits(minitorch.zeros(3, device=device), minitorch.zeros(4, device=device))


# ---------------------------------------------------------------- one_hot ----

def test_one_hot(device):
    t = on(device, np.array([0, 2, 1, 2]))
    oh = F.one_hot(t, 4)
    assert oh.device == t.device and oh.dtype == minitorch.int64
    np.testing.assert_array_equal(to_np(oh), np.eye(4, dtype=np.int64)[[0, 2, 1, 2]])
    assert tuple(F.one_hot(t).shape) == (4, 3)
    with pytest.raises(TypeError):
        F.one_hot(on(device, np.array([0.0, 1.0])))
