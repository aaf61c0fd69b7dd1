"""The fused kernels of the sequence models: layer_norm (one op each way, two-pass
statistics) and the LSTM cell (gates, c and h in one op), against NumPy on every device,
float64 gradcheck, and one graph node where the composed versions had a dozen. (nn.LSTM
itself runs a whole layer as one op: tests/nn/test_lstm_layer.py.)"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import _C, nn
from minitorch.nn import functional as F
from minitorch.testing import assert_close, gradcheck


def arr(shape, seed=0, scale=1.0, offset=0.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale + offset


def T(a, device, grad=False, dtype=None):
    return minitorch.tensor(a, device=device, requires_grad=grad, dtype=dtype)


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (w if w is not None else 1) + (b if b is not None else 0)


@pytest.mark.parametrize("shape,k", [((4, 6), 1), ((2, 3, 5), 2), ((3, 1, 40), 1), ((2, 70), 1)])
def test_layer_norm_matches_numpy(device, shape, k):
    x = arr(shape)
    w, b = arr(shape[-k:], 1), arr(shape[-k:], 2)
    out = F.layer_norm(T(x, device), shape[-k:], T(w, device), T(b, device))
    assert out.grad_fn is None
    assert_close(out, np_layer_norm(x, k, w, b))
    assert_close(F.layer_norm(T(x, device, dtype=minitorch.float32), shape[-k:]), np_layer_norm(x, k), rtol=1e-4,
                 atol=1e-5)


def test_layer_norm_far_from_zero_keeps_precision(device):
    # float32 values around 1e4 with spread 1: sum-of-squares variance would lose it all
    x = arr((8, 64), 3, scale=1.0, offset=1e4).astype(np.float32)
    out = F.layer_norm(T(x, device), (64,))
    assert_close(out, np_layer_norm(x.astype(np.float64), 1), rtol=1e-2, atol=2e-3)


def test_layer_norm_gradcheck(device):
    x = T(arr((3, 2, 5)), device, True)
    w, b = T(arr((5,), 1), device, True), T(arr((5,), 2), device, True)
    assert gradcheck(lambda a, p, q: F.layer_norm(a, (5,), p, q), (x, w, b))
    assert gradcheck(lambda a: F.layer_norm(a, (2, 5)), (x,))
    assert gradcheck(lambda a, p: F.layer_norm(a.transpose(0, 1), (3, 5), p), (x, T(arr((3, 5), 4), device, True)))
    out = F.layer_norm(x, (5,), w, b)
    assert out.grad_fn.name() == "NativeLayerNormBackward0"


def test_layer_norm_module_and_errors(device):
    ln = nn.LayerNorm(6).to(device)
    x = T(arr((2, 6)).astype(np.float32), device, True)
    ln(x).sum().backward()
    assert ln.weight.grad.shape == (6,) and ln.bias.grad.shape == (6,)
    assert_close(ln.bias.grad, np.full(6, 2.0))
    with pytest.raises(ValueError, match="layer_norm"):
        F.layer_norm(T(arr((2, 6)), device), (5,))
    with pytest.raises(TypeError, match="layer_norm"):
        F.layer_norm(T(np.arange(6).reshape(2, 3), device), (3,))


def np_lstm_cell(gates, c):
    H = c.shape[1]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    i, f, g, o = sig(gates[:, :H]), sig(gates[:, H:2 * H]), np.tanh(gates[:, 2 * H:3 * H]), sig(gates[:, 3 * H:])
    c2 = f * c + i * g
    return o * np.tanh(c2), c2


def test_lstm_cell_matches_numpy(device):
    gates, c = arr((5, 12), 0, scale=3.0), arr((5, 3), 1)
    h2, c2 = _C._lstm_cell(T(gates, device), T(c, device))
    ref_h, ref_c = np_lstm_cell(gates, c)
    assert_close(h2, ref_h)
    assert_close(c2, ref_c)


def test_lstm_cell_gradcheck(device):
    gates, c = T(arr((4, 8), 0, scale=2.0), device, True), T(arr((4, 2), 1), device, True)
    assert gradcheck(lambda g, s: _C._lstm_cell(g, s), (gates, c))
    assert gradcheck(lambda g, s: _C._lstm_cell(g, s)[0], (gates, c))   # c' unused: its gradient is zero
    assert gradcheck(lambda g, s: _C._lstm_cell(g, s)[1] * 3, (gates, c))
    h2, c2 = _C._lstm_cell(gates, c)
    assert h2.grad_fn is c2.grad_fn and h2.grad_fn.name() == "LstmCellBackward0"
    with pytest.raises(ValueError, match="lstm_cell"):
        _C._lstm_cell(gates, T(arr((4, 3)), device))
