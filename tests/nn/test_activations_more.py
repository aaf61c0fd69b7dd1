"""GELU, SiLU, LeakyReLU, ELU, Softplus and channel dropout (Dropout1d/2d): values against
NumPy formulas on every device, float64 gradcheck, reprs and errors as in PyTorch, and,
when PyTorch is installed, outputs and gradients against it."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import CUDA_SKIP_REASON, TORCH_SKIP_REASON, nonempty_shapes, seeds
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_softplus(x, beta=1.0, threshold=20.0):
    bx = beta * x
    return np.where(bx > threshold, x, np.log1p(np.exp(np.minimum(bx, threshold))) / beta)


# name -> (minitorch call, NumPy formula), both taking an array/tensor x
CASES = {
    "gelu": (lambda x: F.gelu(x), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    "silu": (lambda x: F.silu(x), lambda x: x / (1 + np.exp(-x))),
    "leaky_relu": (lambda x: F.leaky_relu(x), lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu_0.2": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": (lambda x: F.elu(x), lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "elu_alpha": (lambda x: F.elu(x, alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0)))),
    "softplus": (lambda x: F.softplus(x), np_softplus),
    "softplus_beta": (lambda x: F.softplus(x, beta=2, threshold=5), lambda x: np_softplus(x, 2.0, 5.0)),
}

MODULES = {
    "gelu": lambda: nn.GELU(), "gelu_tanh": lambda: nn.GELU("tanh"), "silu": lambda: nn.SiLU(),
    "leaky_relu": lambda: nn.LeakyReLU(), "leaky_relu_0.2": lambda: nn.LeakyReLU(0.2), "elu": lambda: nn.ELU(),
    "elu_alpha": lambda: nn.ELU(alpha=0.5), "softplus": lambda: nn.Softplus(),
    "softplus_beta": lambda: nn.Softplus(beta=2, threshold=5),
}


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=15)
@given(shape=nonempty_shapes(max_dims=3), seed=seeds, dtype=st.sampled_from([np.float32, np.float64]))
def test_activation_matches_numpy(device, name, shape, seed, dtype):
    ours, ref = CASES[name]
    x = np.random.default_rng(seed).uniform(-12, 12, size=shape).astype(dtype)
    out = ours(minitorch.tensor(x, device=device))
    assert out.device.type == device and out.dtype == minitorch.tensor(x).dtype
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_np(out), ref(x.astype(np.float64)).astype(dtype), **tol)


@pytest.mark.parametrize("name", list(CASES))
def test_module_form_matches_functional(device, name):
    x = minitorch.tensor(np.linspace(-25, 25, 41), device=device)
    np.testing.assert_array_equal(to_np(MODULES[name]()(x)), to_np(CASES[name][0](x)))


def test_values_at_the_branch_points():
    x = minitorch.tensor([-30.0, -1.0, 0.0, 1.0, 19.9, 20.0, 20.1, 80.0], dtype=minitorch.float64)
    np.testing.assert_allclose(to_np(F.softplus(x)), np_softplus(to_np(x)), rtol=1e-13)
    assert to_np(F.softplus(x))[-1] == 80.0  # linear beyond the threshold: no overflow
    np.testing.assert_array_equal(to_np(F.leaky_relu(x, 0.1))[:3], [-3.0, -0.1, 0.0])
    np.testing.assert_allclose(to_np(F.elu(x))[:3], [math.expm1(-30), math.expm1(-1), 0.0])
    np.testing.assert_array_equal(to_np(F.gelu(x))[[2, -1]], [0.0, 80.0])


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(device, name):
    # values away from the kinks at 0 (leaky_relu, elu) and at the softplus thresholds
    arr = np.random.default_rng(1).uniform(0.1, 4, size=(3, 4)) * np.array([1, -1, 1, -1])
    x = minitorch.tensor(arr, device=device, requires_grad=True)
    assert gradcheck(CASES[name][0], (x,))


def test_gradients_large_inputs_are_finite(device):
    """No NaN from the branch where() does not take (exp of a large x)."""
    x = minitorch.tensor([-200.0, -50.0, 50.0, 200.0, 1000.0], device=device, requires_grad=True)
    for fn in (F.elu, F.softplus, lambda t: F.softplus(t, beta=0.5), F.silu, F.gelu):
        x.grad = None
        fn(x).sum().backward()
        g = to_np(x.grad)
        assert np.all(np.isfinite(g)), (fn, g)
    x.grad = None
    F.elu(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [math.exp(-200), math.exp(-50), 1, 1, 1], rtol=1e-6, atol=1e-7)


def test_reprs_like_pytorch():
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.SiLU()) == "SiLU()"
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.Softplus()) == "Softplus(beta=1, threshold=20)"
    assert repr(nn.Dropout1d()) == "Dropout1d(p=0.5, inplace=False)"
    assert repr(nn.Dropout2d(0.2)) == "Dropout2d(p=0.2, inplace=False)"
    for m in (nn.GELU(), nn.SiLU(), nn.ELU(), nn.Dropout2d()):
        assert list(m.state_dict()) == [] and list(m.parameters()) == []


def test_errors():
    with pytest.raises(ValueError, match="gelu.*approximate"):
        F.gelu(minitorch.zeros(2), approximate="fast")
    with pytest.raises(ValueError, match="GELU.*approximate"):
        nn.GELU("fast")
    with pytest.raises(ValueError, match="dropout1d.*2-D.*3-D"):
        F.dropout1d(minitorch.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match="dropout2d.*3-D or 4-D"):
        F.dropout2d(minitorch.zeros(2, 3))
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability"):
            nn.Dropout2d(p)
        with pytest.raises(ValueError, match="dropout probability"):
            F.dropout1d(minitorch.zeros(2, 3), p)


# ---------------------------------------------------------------- channel dropout ----

@pytest.mark.parametrize("kind,shape", [("1d", (4, 50, 3)), ("1d", (50, 6)), ("2d", (4, 50, 2, 3)),
                                        ("2d", (3, 40, 1, 1))])
@pytest.mark.parametrize("p", [0.3, 0.7])
def test_channel_dropout_zeroes_whole_channels(device, kind, shape, p):
    minitorch.manual_seed(0)
    layer = nn.Dropout1d(p) if kind == "1d" else nn.Dropout2d(p)
    x = np.random.default_rng(0).uniform(1, 2, size=shape).astype(np.float32)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    out = layer(xt)
    y = to_np(out)
    lead = 1 if (kind == "1d" and len(shape) == 2) else 2  # unbatched (C, L): channels are dim 0
    per_channel = y.reshape(shape[:lead] + (-1,)) if lead == 2 else y.reshape(shape[0], -1)
    dropped = np.all(per_channel == 0, axis=-1)
    kept = np.all(per_channel != 0, axis=-1)
    assert np.all(dropped | kept), "a channel was partly zeroed"
    xs = x.reshape(per_channel.shape)
    np.testing.assert_allclose(per_channel[kept], xs[kept] / (1 - p), rtol=1e-6)
    assert abs(dropped.mean() - p) < 0.25
    assert 0 < dropped.sum() < dropped.size
    out.sum().backward()  # the gradient is the same mask, scaled
    g = to_np(xt.grad).reshape(per_channel.shape)
    np.testing.assert_allclose(g, np.where(kept[..., None], 1 / (1 - p), 0.0) * np.ones_like(g), rtol=1e-6)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_channel_dropout_launches_on_cuda(dtype):
    """The channel mask comes scaled from the fused dropout kernel (applied to ones): three
    launches forward (ones, dropout, the product), one backward (g times the mask)."""
    from minitorch.profiler import ProfilerActivity, profile

    minitorch.manual_seed(0)
    x = minitorch.rand(8, 16, 5, 5, device="cuda", dtype=getattr(minitorch, dtype)).add(1.0).requires_grad_()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts) as fwd:
        y = F.dropout2d(x, 0.25)
    with profile(activities=acts) as bwd:
        y.float().sum().backward()
    assert [e.key for e in fwd.events() if e.kernel_count] == ["full", "dropout", "mul"]
    assert sum(e.kernel_count for e in bwd.events() if e.key == "MulBackward0") == 1
    ratio = (y.float() / x.float()).detach().cpu().numpy().reshape(8, 16, -1)
    assert np.all((ratio == 0).all(-1) | np.isclose(ratio, 4 / 3, rtol=1e-2).all(-1))
    assert y.dtype == x.dtype and 0 < (ratio == 0).all(-1).sum() < 128


def test_channel_dropout_eval_and_edge_probabilities(device):
    x = minitorch.tensor(np.random.default_rng(0).uniform(1, 2, (2, 3, 4)).astype(np.float32), device=device)
    layer = nn.Dropout1d(0.5).eval()
    assert layer(x) is x
    x4 = x.unsqueeze(-1)
    assert F.dropout2d(x4, 0.5, training=False) is x4
    np.testing.assert_array_equal(to_np(F.dropout1d(x, 0.0)), to_np(x))
    np.testing.assert_array_equal(to_np(F.dropout1d(x, 1.0)), np.zeros((2, 3, 4), np.float32))


def test_dropout2d_on_3d_input_warns_and_drops_channels():
    minitorch.manual_seed(1)
    x = minitorch.ones(2, 30, 4)
    with pytest.warns(UserWarning, match="dropout2d"):
        y = to_np(F.dropout2d(x, 0.5))
    assert np.all((y == 0).all(-1) | (y == 2).all(-1))


# ---------------------------------------------------------------- PyTorch ----

def test_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    tf = torch.nn.functional
    theirs = {
        "gelu": tf.gelu, "gelu_tanh": lambda x: tf.gelu(x, approximate="tanh"), "silu": tf.silu,
        "leaky_relu": tf.leaky_relu, "leaky_relu_0.2": lambda x: tf.leaky_relu(x, 0.2), "elu": tf.elu,
        "elu_alpha": lambda x: tf.elu(x, alpha=0.5), "softplus": tf.softplus,
        "softplus_beta": lambda x: tf.softplus(x, beta=2, threshold=5),
    }
    arr = np.concatenate([np.random.default_rng(2).uniform(-30, 30, 50), [-1.0, 0.5, 2.5, 2.6, 19.0, 21.0]])
    g = np.random.default_rng(3).standard_normal(arr.shape)
    for name, (ours, _) in CASES.items():
        x = minitorch.tensor(arr, requires_grad=True)
        xt = torch.tensor(arr, requires_grad=True)
        out, out_t = ours(x), theirs[name](xt)
        out.backward(minitorch.tensor(g))
        out_t.backward(torch.tensor(g))
        np.testing.assert_allclose(to_np(out), out_t.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(to_np(x.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=name)
    for ours_m, theirs_m in ((nn.GELU("tanh"), torch.nn.GELU("tanh")), (nn.LeakyReLU(0.3, True),
                             torch.nn.LeakyReLU(0.3, True)), (nn.ELU(2.0), torch.nn.ELU(2.0)),
                             (nn.Softplus(2, 10), torch.nn.Softplus(2, 10)), (nn.SiLU(), torch.nn.SiLU())):
        assert repr(ours_m) == repr(theirs_m)
