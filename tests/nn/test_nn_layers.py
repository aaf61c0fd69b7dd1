"""``nn.Linear``, the activation layers, dropout and ``nn.init``, against NumPy
formulas, on every device."""
from __future__ import annotations

import math

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


TOL32 = dict(rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- Linear ----

@pytest.mark.parametrize("in_features,out_features", [(784, 128), (3, 5), (1, 1), (128, 10)])
def test_linear_init_bounds(device, in_features, out_features):
    minitorch.manual_seed(in_features)
    lin = nn.Linear(in_features, out_features, device=device)  # initialised on the device
    assert lin.weight.device.type == device and lin.bias.device.type == device
    bound = 1.0 / math.sqrt(in_features)
    w, b = to_np(lin.weight), to_np(lin.bias)
    assert w.shape == (out_features, in_features) and b.shape == (out_features,)
    assert w.dtype == np.float32
    assert np.all(np.abs(w) <= bound + 1e-7)
    assert np.all(np.abs(b) <= bound + 1e-7)
    if w.size >= 1000:  # uniform: spread over the interval, mean near 0, std near bound/sqrt(3)
        assert w.max() > 0.9 * bound and w.min() < -0.9 * bound
        assert abs(w.mean()) < 0.05 * bound
        assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert lin.weight.requires_grad and lin.weight.is_leaf


def test_linear_no_bias(device):
    lin = nn.Linear(4, 3, bias=False).to(device)
    assert lin.bias is None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    x = rand((2, 4))
    np.testing.assert_allclose(to_np(lin(minitorch.tensor(x, device=device))), x @ to_np(lin.weight).T, **TOL32)


@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4), (2, 1, 3, 4), (0, 4)])
def test_linear_matches_numpy(device, shape):
    lin = nn.Linear(4, 3).to(device)
    x = rand(shape, seed=len(shape))
    w, b = to_np(lin.weight), to_np(lin.bias)
    y = lin(minitorch.tensor(x, device=device))
    assert tuple(y.shape) == shape[:-1] + (3,) and y.device.type == device
    np.testing.assert_allclose(to_np(y), x @ w.T + b, **TOL32)
    # backward: dW = g^T x and db = sum(g) over every leading dim
    g = rand(shape[:-1] + (3,), seed=7)
    (y * minitorch.tensor(g, device=device)).sum().backward()
    for p in (lin.weight, lin.bias):
        assert p.grad.device == p.device and p.grad.dtype == p.dtype
    g2, x2 = g.reshape(-1, 3).astype(np.float64), x.reshape(-1, 4)
    np.testing.assert_allclose(to_np(lin.weight.grad), g2.T @ x2, **TOL32)
    np.testing.assert_allclose(to_np(lin.bias.grad), g2.sum(0), **TOL32)


@given(n=st.integers(0, 6), i=st.integers(1, 7), o=st.integers(1, 7), seed=st.integers(0, 2**31))
def test_functional_linear_float64_hypothesis(device, n, i, o, seed):
    x, w, b = rand((n, i), seed, dtype=np.float64), rand((o, i), seed + 1, dtype=np.float64), rand((o,), seed + 2, dtype=np.float64)
    xt, wt, bt = (minitorch.tensor(a, device=device) for a in (x, w, b))
    y = F.linear(xt, wt, bt)
    assert y.dtype == minitorch.float64
    np.testing.assert_allclose(to_np(y), x @ w.T + b, rtol=1e-12, atol=1e-12)
    y0 = F.linear(xt, wt)
    np.testing.assert_allclose(to_np(y0), x @ w.T, rtol=1e-12, atol=1e-12)


def test_linear_noncontiguous_input(device):
    lin = nn.Linear(3, 2).to(device)
    x = rand((3, 5))
    xt = minitorch.tensor(x, device=device).T  # (5, 3), transposed strides
    assert not xt.is_contiguous()
    np.testing.assert_allclose(to_np(lin(xt)), x.T @ to_np(lin.weight).T + to_np(lin.bias), **TOL32)


def test_linear_wrong_in_features_names_both_shapes(device):
    lin = nn.Linear(3, 2).to(device)
    with pytest.raises(ValueError) as e:
        lin(minitorch.zeros(4, 5, device=device))
    assert "(4, 5)" in str(e.value) and "(2, 3)" in str(e.value)


def test_linear_bad_constructor_args():
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(-1, 3)
    with pytest.raises(ValueError, match="out_features"):
        nn.Linear(3, 2.5)


def test_linear_to_double(device):
    lin = nn.Linear(3, 2).to(device).double()
    assert lin.weight.dtype == minitorch.float64 and lin.bias.dtype == minitorch.float64
    assert lin.weight.device.type == device and lin.bias.device.type == device
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad


# ---------------------------------------------------------------- activations ----

def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


ACTIVATIONS = {
    "Sigmoid": (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    "ReLU": (nn.ReLU(), lambda x: np.maximum(x, 0)),
    "Tanh": (nn.Tanh(), np.tanh),
    "Softmax-1": (nn.Softmax(dim=1), lambda x: np_softmax(x, 1)),
    "Softmax0": (nn.Softmax(dim=0), lambda x: np_softmax(x, 0)),
    "SoftmaxNone": (nn.Softmax(), lambda x: np_softmax(x, -1)),
    "LogSoftmax1": (nn.LogSoftmax(dim=1), lambda x: np_log_softmax(x, 1)),
    "LogSoftmax-2": (nn.LogSoftmax(dim=-2), lambda x: np_log_softmax(x, -2)),
    "Identity": (nn.Identity(), lambda x: x),
    "Flatten": (nn.Flatten(), lambda x: x.reshape(x.shape[0], -1)),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_matches_numpy(device, name, dtype):
    layer, ref = ACTIVATIONS[name]
    x = rand((4, 5, 3), seed=1, low=-6, high=6, dtype=dtype)
    x[0, 0, 0] = 0.0
    y = layer(minitorch.tensor(x, device=device))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    expected = ref(x.astype(np.float64)).astype(dtype)
    assert to_np(y).dtype == dtype
    np.testing.assert_allclose(to_np(y), expected, **tol)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_large_logits_stable(device, fn):
    x = np.array([[1e4, 0.0, -1e4], [1000.0, 1000.0, 1000.0], [-1e4, -1e4 + 1, -1e4]], np.float32)
    y = to_np(fn(minitorch.tensor(x, device=device), 1))
    assert np.all(np.isfinite(y))
    ref = np_softmax(x.astype(np.float64), 1) if fn is F.softmax else np_log_softmax(x.astype(np.float64), 1)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


def test_softmax_rows_sum_to_one(device):
    y = to_np(F.softmax(minitorch.tensor(rand((6, 10), 3, -20, 20), device=device), -1))
    np.testing.assert_allclose(y.sum(-1), np.ones(6), rtol=1e-6)
    assert np.all(y >= 0)


def test_sigmoid_extremes_finite(device):
    x = np.array([-100.0, -30.0, 0.0, 30.0, 100.0], np.float32)
    y = to_np(nn.Sigmoid()(minitorch.tensor(x, device=device)))
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6, atol=1e-30)


# ---------------------------------------------------------------- Dropout ----

@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_train_fraction_and_scale(device, p):
    minitorch.manual_seed(0)
    drop = nn.Dropout(p)
    assert drop.training
    x = rand((200, 250), seed=2, low=1.0, high=2.0)  # no zeros in the input
    y = drop(minitorch.tensor(x, device=device))
    assert y.device.type == device
    y = to_np(y)
    zeroed = y == 0
    frac = zeroed.mean()
    # 50,000 Bernoulli(p) draws: std of the fraction < 0.0023
    assert abs(frac - p) < 0.015, frac
    np.testing.assert_allclose(y[~zeroed], x[~zeroed] / (1 - p), rtol=1e-6)


def test_dropout_different_masks_each_call(device):
    drop = nn.Dropout(0.5)
    x = minitorch.ones(1000, device=device)
    a, b = to_np(drop(x)), to_np(drop(x))
    assert not np.array_equal(a == 0, b == 0)


def test_dropout_reproducible_with_manual_seed(device):
    x = minitorch.ones(1000, device=device)
    minitorch.manual_seed(42)
    a = to_np(F.dropout(x, 0.5))
    minitorch.manual_seed(42)
    b = to_np(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, b)


def test_dropout_eval_is_identity(device):
    drop = nn.Dropout(0.5).eval()
    x = rand((10, 10))
    xt = minitorch.tensor(x, device=device)
    np.testing.assert_array_equal(to_np(drop(xt)), x)
    np.testing.assert_array_equal(to_np(F.dropout(xt, 0.5, training=False)), x)


def test_dropout_p_edges(device):
    x = rand((5, 5), low=1, high=2)
    xt = minitorch.tensor(x, device=device)
    np.testing.assert_array_equal(to_np(nn.Dropout(0.0)(xt)), x)
    np.testing.assert_array_equal(to_np(nn.Dropout(1.0)(xt)), np.zeros_like(x))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(xt, -0.1)


def test_dropout_gradient_is_mask_scaled(device):
    minitorch.manual_seed(3)
    x = minitorch.ones(100, 10, device=device, requires_grad=True)
    y = F.dropout(x, 0.3)
    y.sum().backward()
    assert x.grad.device == x.device
    np.testing.assert_allclose(to_np(x.grad), to_np(y), rtol=1e-6)


# ---------------------------------------------------------------- init ----

def test_xavier_uniform_bound(device):
    minitorch.manual_seed(0)
    w = minitorch.empty(300, 200, device=device)
    out = nn.init.xavier_uniform_(w)
    assert out is w or out.data_ptr() == w.data_ptr()  # in place
    bound = math.sqrt(6.0 / (300 + 200))
    a = to_np(w)
    assert np.all(np.abs(a) <= bound + 1e-7)
    assert a.max() > 0.95 * bound and a.min() < -0.95 * bound
    assert abs(a.std() - bound / math.sqrt(3)) < 0.02 * bound
    minitorch.manual_seed(0)
    nn.init.xavier_uniform_(w, gain=2.0)
    assert np.abs(to_np(w)).max() > 1.9 * bound
    assert np.all(np.abs(to_np(w)) <= 2 * bound + 1e-7)


@pytest.mark.parametrize("nonlinearity,gain", [("relu", math.sqrt(2.0)), ("leaky_relu", math.sqrt(2.0 / (1 + 0.01**2))),
                                               ("linear", 1.0), ("tanh", 5.0 / 3), ("sigmoid", 1.0)])
def test_calculate_gain(nonlinearity, gain):
    assert nn.init.calculate_gain(nonlinearity) == pytest.approx(gain)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming_uniform_bound(device, mode):
    minitorch.manual_seed(1)
    w = minitorch.empty(400, 100, device=device)
    nn.init.kaiming_uniform_(w, mode=mode, nonlinearity="relu")
    fan = 100 if mode == "fan_in" else 400
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan)
    a = to_np(w)
    assert np.all(np.abs(a) <= bound + 1e-7)
    assert a.max() > 0.95 * bound and a.min() < -0.95 * bound
    assert abs(a.std() - bound / math.sqrt(3)) < 0.02 * bound


def test_kaiming_uniform_a_sqrt5_is_linear_default_bound(device):
    w = minitorch.empty(64, 49, device=device)
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    assert np.abs(to_np(w)).max() <= 1 / math.sqrt(49) + 1e-7
    assert np.abs(to_np(w)).max() > 0.9 / math.sqrt(49)


def test_zeros_ones_constant(device):
    w = minitorch.randn(3, 4, device=device)
    nn.init.zeros_(w)
    np.testing.assert_array_equal(to_np(w), np.zeros((3, 4), np.float32))
    nn.init.ones_(w)
    np.testing.assert_array_equal(to_np(w), np.ones((3, 4), np.float32))
    nn.init.constant_(w, 2.5)
    np.testing.assert_array_equal(to_np(w), np.full((3, 4), 2.5, np.float32))


def test_init_on_parameter_records_no_graph(device):
    lin = nn.Linear(5, 5).to(device)
    nn.init.normal_(lin.weight)
    nn.init.zeros_(lin.bias)
    assert lin.weight.is_leaf and lin.weight.grad_fn is None and lin.weight.requires_grad
    np.testing.assert_array_equal(to_np(lin.bias), np.zeros(5, np.float32))


@pytest.mark.parametrize("mean,std", [(0.0, 1.0), (2.0, 0.5), (-1.0, 3.0)])
def test_normal_mean_std(device, mean, std):
    minitorch.manual_seed(7)
    w = minitorch.empty(200, 200, device=device)
    nn.init.normal_(w, mean, std)
    a = to_np(w)
    # 40,000 samples: standard error of the mean is std/200
    assert abs(a.mean() - mean) < 5 * std / 200
    assert abs(a.std() - std) < 0.02 * std


def test_uniform_range(device):
    w = minitorch.empty(100, 100, device=device)
    nn.init.uniform_(w, -0.3, 0.7)
    a = to_np(w)
    assert a.min() >= -0.3 and a.max() <= 0.7
    assert abs(a.mean() - 0.2) < 0.01


def test_fans_need_two_dims():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(minitorch.empty(5))


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_dim_out_of_range(device, fn):
    x = minitorch.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="dimension out of range"):
        fn(x, 2)
    with pytest.raises(IndexError, match="dimension out of range"):
        fn(x, -3)


def test_functional_linear_bad_bias_and_weight(device):
    x = minitorch.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match=r"bias of shape \(5,\)"):
        F.linear(x, minitorch.zeros(4, 3, device=device), minitorch.zeros(5, device=device))
    with pytest.raises(ValueError, match="weight"):
        F.linear(x, minitorch.zeros(3, device=device))
