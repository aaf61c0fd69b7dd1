"""F.rms_norm and nn.RMSNorm (PyTorch 2.4+'s, for LLaMA-style models): values against NumPy
on every device, multi-dim normalized_shape, no weight, eps=None (the machine epsilon of the
computing type), float16 / bfloat16 computed in float32 and rounded once, float64 gradcheck
of the input and the weight, the module's parameter, repr and state_dict, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

from conftest import to_numpy


def reference(x, k, w=None, eps=None):
    x = np.asarray(x, np.float64)
    dims = tuple(range(x.ndim - k, x.ndim))
    out = x / np.sqrt((x * x).mean(dims, keepdims=True) + (np.finfo(np.float32).eps if eps is None else eps))
    return out if w is None else out * w


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
@pytest.mark.parametrize("shape, norm", [((4, 7), (7,)), ((2, 3, 5), (3, 5)), ((0, 6), (6,)), ((3, 1), (1,)),
                                         ((5,), (5,))])
@pytest.mark.parametrize("with_weight", [True, False])
def test_values_match_numpy(device, dtype, shape, norm, with_weight):
    rng = np.random.default_rng(1)
    x_np, w_np = rng.uniform(-3, 3, shape), rng.uniform(0.5, 1.5, norm)
    x = minitorch.tensor(x_np, dtype=dtype, device=device)
    w = minitorch.tensor(w_np, dtype=dtype, device=device) if with_weight else None
    eps = None if dtype == minitorch.float32 else 1e-6
    y = F.rms_norm(x, norm, w, eps)
    assert y.dtype == dtype and tuple(y.shape) == shape
    tol = 1e-6 if dtype == minitorch.float32 else 1e-12
    np.testing.assert_allclose(to_numpy(y), reference(x_np, len(norm), w_np if with_weight else None, eps),
                               rtol=tol, atol=tol)


def test_non_contiguous_input_and_float64_default_eps(device):
    x_np = np.random.default_rng(2).uniform(-1, 1, (6, 4))
    x = minitorch.tensor(x_np, device=device).t()  # (4, 6), strided
    want = x_np.T / np.sqrt((x_np.T ** 2).mean(1, keepdims=True) + np.finfo(np.float64).eps)
    np.testing.assert_allclose(to_numpy(F.rms_norm(x, (6,))), want, rtol=1e-12)


@pytest.mark.parametrize("dt", [minitorch.float16, minitorch.bfloat16], ids=str)
def test_16_bit_input_computes_in_float32(device, dt):
    x = minitorch.tensor(np.random.default_rng(3).uniform(-4, 4, (3, 16)), device=device).to(dt)
    w = minitorch.tensor(np.linspace(0.5, 1.5, 16), device=device).to(dt)
    y = F.rms_norm(x, (16,), w)
    assert y.dtype == dt
    want = F.rms_norm(x.float(), (16,), w.float()).to(dt)
    np.testing.assert_array_equal(to_numpy(y.float()), to_numpy(want.float()))


def test_gradcheck_input_and_weight(device):
    rng = np.random.default_rng(4)
    x = minitorch.tensor(rng.uniform(-2, 2, (3, 2, 4)), device=device, requires_grad=True)
    w = minitorch.tensor(rng.uniform(0.5, 1.5, (2, 4)), device=device, requires_grad=True)
    assert gradcheck(lambda x, w: F.rms_norm(x, (2, 4), w, 1e-5), (x, w))
    assert gradcheck(lambda x: F.rms_norm(x, (4,)), (x,))


def test_module_parameter_repr_and_state_dict(device):
    m = nn.RMSNorm([2, 4], eps=1e-6).to(device)
    assert repr(m) == "RMSNorm((2, 4), eps=1e-06, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"] and np.all(to_numpy(m.weight) == 1.0)
    x = minitorch.randn(5, 2, 4, device=device, requires_grad=True)
    m(x).pow(2).sum().backward()
    assert tuple(m.weight.grad.shape) == (2, 4) and tuple(x.grad.shape) == (5, 2, 4)
    bare = nn.RMSNorm(4, elementwise_affine=False)
    assert bare.weight is None and list(bare.state_dict()) == []
    assert repr(bare) == "RMSNorm((4,), eps=None, elementwise_affine=False)"


def test_errors():
    x = minitorch.randn(3, 4)
    with pytest.raises(ValueError, match=r"rms_norm: given normalized_shape=\(5,\)"):
        F.rms_norm(x, (5,))
    with pytest.raises(ValueError, match=r"rms_norm: expected weight of shape \(4,\)"):
        F.rms_norm(x, (4,), minitorch.ones(3))
    with pytest.raises(TypeError, match="rms_norm: expected a floating point input"):
        F.rms_norm(minitorch.ones(3, 4, dtype=minitorch.int64), (4,))
