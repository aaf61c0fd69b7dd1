"""The modules of the activations in nn/_activation_functional.py (Hardtanh, ReLU6, ...,
PReLU, GLU, Softmin) and nn.Unflatten: each calls its functional op with its arguments,
reprs and state_dict keys as in PyTorch, bad arguments raise, and the functional forms
stay finite where a naive formula would not. Values and gradients of the functional ops
against NumPy are the OpInfo battery's (tests/opinfo/op_db.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


# module -> (the F function it calls, the arguments after x it passes)
CALLS = [
    (nn.Hardtanh(-2.0, 3.0), "hardtanh", (-2.0, 3.0)),
    (nn.ReLU6(), "hardtanh", (0.0, 6.0)),
    (nn.Hardsigmoid(), "hardsigmoid", ()),
    (nn.Hardswish(), "hardswish", ()),
    (nn.Mish(), "mish", ()),
    (nn.LogSigmoid(), "logsigmoid", ()),
    (nn.Softsign(), "softsign", ()),
    (nn.Tanhshrink(), "tanhshrink", ()),
    (nn.Threshold(0.5, -1.0), "threshold", (0.5, -1.0)),
    (nn.Softshrink(0.25), "softshrink", (0.25,)),
    (nn.Hardshrink(0.75), "hardshrink", (0.75,)),
    (nn.SELU(), "selu", ()),
    (nn.CELU(0.5), "celu", (0.5,)),
    (nn.GLU(0), "glu", (0,)),
    (nn.Softmin(1), "softmin", (1,)),
]


@pytest.mark.parametrize("module,name,args", CALLS, ids=[c[1] + "-" + type(c[0]).__name__ for c in CALLS])
def test_module_calls_its_functional_op(device, monkeypatch, module, name, args):
    x = minitorch.tensor(np.linspace(-4, 4, 12).reshape(4, 3), device=device)
    want = getattr(F, name)(x, *args)
    seen = []
    real = getattr(F, name)
    monkeypatch.setattr(F, name, lambda *a, **k: seen.append((a, k)) or real(*a, **k))
    got = module(x)
    # (modules with an inplace= option pass it on, False here)
    assert len(seen) == 1 and seen[0][0][0] is x and seen[0][0][1:] in (args, args + (False,)) and not seen[0][1]
    np.testing.assert_array_equal(to_np(got), to_np(want))


def test_prelu_module(device):
    m = nn.PReLU(3, init=0.1, device=device, dtype=minitorch.float64)
    assert list(m.state_dict()) == ["weight"] and tuple(m.weight.shape) == (3,)
    np.testing.assert_array_equal(to_np(m.weight), [0.1, 0.1, 0.1])
    x = minitorch.tensor([[[-1.0, 2.0]] * 3], device=device, dtype=minitorch.float64)  # (1, 3, 2)
    with minitorch.no_grad():
        m.weight.copy_(minitorch.tensor([0.1, 0.2, 0.3], device=device, dtype=minitorch.float64))
    out = m(x)
    np.testing.assert_allclose(to_np(out), [[[-0.1, 2.0], [-0.2, 2.0], [-0.3, 2.0]]])
    out.sum().backward()
    np.testing.assert_allclose(to_np(m.weight.grad), [-1.0, -1.0, -1.0])  # d/dw of w*x at x = -1
    shared = nn.PReLU()
    assert tuple(shared.weight.shape) == (1,) and to_np(shared.weight)[0] == 0.25
    assert to_np(shared(minitorch.tensor(-4.0))) == -1.0  # a 0-dim input keeps its shape
    with pytest.raises(ValueError, match="PReLU: num_parameters"):
        nn.PReLU(0)


def test_reprs_like_pytorch():
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.Hardtanh(-2, 2, inplace=True)) == "Hardtanh(min_val=-2, max_val=2, inplace=True)"
    assert repr(nn.ReLU6()) == "ReLU6()" and repr(nn.ReLU6(inplace=True)) == "ReLU6(inplace=True)"
    for cls in (nn.Hardsigmoid, nn.Hardswish, nn.Mish, nn.LogSigmoid, nn.Softsign, nn.Tanhshrink):
        assert repr(cls()) == f"{cls.__name__}()"
    assert repr(nn.Hardswish(inplace=True)) == "Hardswish()"  # PyTorch does not show it either
    assert repr(nn.Threshold(0.1, 20)) == "Threshold(threshold=0.1, value=20)"
    assert repr(nn.Threshold(0.1, 20, True)) == "Threshold(threshold=0.1, value=20, inplace=True)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)" and repr(nn.Hardshrink(1.0)) == "Hardshrink(1.0)"
    assert repr(nn.SELU()) == "SELU()" and repr(nn.SELU(True)) == "SELU(inplace=True)"
    assert repr(nn.CELU()) == "CELU(alpha=1.0)" and repr(nn.CELU(2.0, True)) == "CELU(alpha=2.0, inplace=True)"
    assert repr(nn.PReLU()) == "PReLU(num_parameters=1)" and repr(nn.PReLU(4)) == "PReLU(num_parameters=4)"
    assert repr(nn.GLU()) == "GLU(dim=-1)" and repr(nn.Softmin()) == "Softmin(dim=None)"
    assert repr(nn.Unflatten(1, (2, 5))) == "Unflatten(dim=1, unflattened_size=(2, 5))"
    for m in (nn.Hardtanh(), nn.CELU(), nn.GLU(), nn.Unflatten(0, [2])):
        assert list(m.state_dict()) == [] and list(m.parameters()) == []


def test_unflatten_module(device):
    x = minitorch.arange(24.0, device=device).reshape(2, 12)
    out = nn.Unflatten(1, (3, -1))(x)
    assert tuple(out.shape) == (2, 3, 4)
    np.testing.assert_array_equal(to_np(out), np.arange(24.0).reshape(2, 3, 4))
    assert tuple(nn.Unflatten(-1, [2, 2, 3])(x).shape) == (2, 2, 2, 3)
    seq = nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 4)))
    np.testing.assert_array_equal(to_np(seq(x.reshape(2, 3, 4))), to_np(x.reshape(2, 3, 4)))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 6)
    with pytest.raises(TypeError, match="element of type float at pos 1"):
        nn.Unflatten(1, (2, 3.0))
    with pytest.raises(TypeError, match="Unflatten: .*named"):
        nn.Unflatten("features", (("a", 2), ("b", 3)))
    with pytest.raises(ValueError, match="unflatten"):
        nn.Unflatten(1, (5, 5))(x)


def test_hardtanh_bounds():
    with pytest.raises(ValueError, match="hardtanh: min_val cannot be greater than max_val"):
        F.hardtanh(minitorch.zeros(2), 1.0, -1.0)
    assert to_np(F.hardtanh(minitorch.tensor([-3.0, 3.0]), 0.5, 0.5)).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="Hardtanh: max_val \\(1.0\\) must be greater than min_val \\(1.0\\)"):
        nn.Hardtanh(1.0, 1.0)
    with pytest.warns(FutureWarning, match="min_value"):
        m = nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0


def test_argument_errors():
    with pytest.raises(ValueError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(minitorch.zeros(2, 3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(minitorch.tensor(1.0))
    with pytest.raises(IndexError, match="glu: dimension out of range"):
        F.glu(minitorch.zeros(2, 4), 2)
    with pytest.raises(ValueError, match="softshrink: lambda must be greater or equal to 0"):
        F.softshrink(minitorch.zeros(2), -0.5)
    with pytest.raises(ValueError, match="celu: alpha cannot be 0"):
        F.celu(minitorch.zeros(2), 0.0)
    x = minitorch.zeros(2, 4, 3)
    with pytest.raises(ValueError, match="parameter numbers = 3 and channel size = 4"):
        F.prelu(x, minitorch.ones(3))
    with pytest.raises(ValueError, match="scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(x, minitorch.ones(4, 1))
    with pytest.raises(ValueError, match="zero-dim input"):
        F.prelu(minitorch.tensor(1.0), minitorch.ones(2))
    with pytest.raises(TypeError, match="prelu: weight must be a Tensor"):
        F.prelu(x, 0.25)


def test_softmin_implicit_dim_and_dtype():
    x = minitorch.tensor(np.arange(6.0).reshape(2, 3), dtype=minitorch.float32)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        out = F.softmin(x)  # 2-D: dim 1, as PyTorch picks it
    np.testing.assert_allclose(to_np(out).sum(1), [1.0, 1.0], rtol=1e-6)
    with pytest.warns(UserWarning, match="softmin"):
        nn.Softmin()(x)
    out = F.softmin(x, 0, dtype=minitorch.float64)
    assert out.dtype == minitorch.float64
    e = np.exp(-np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(to_np(out), e / e.sum(0), rtol=1e-12)


def test_stable_where_naive_formulas_are_not(device):
    x = minitorch.tensor([-1000.0, -100.0, -30.0, 0.0, 30.0, 100.0, 1000.0], device=device, requires_grad=True)
    xs = to_np(x).astype(np.float64)
    np.testing.assert_allclose(to_np(F.logsigmoid(x)), -np.logaddexp(0, -xs), rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(to_np(F.mish(x)), xs * np.tanh(np.logaddexp(0, xs)), rtol=1e-6, atol=1e-30)
    for fn in (F.logsigmoid, F.mish, F.selu, F.celu, lambda t: F.celu(t, 0.1), F.hardswish, F.softsign,
               F.tanhshrink, lambda t: F.glu(t.reshape(1, 7).expand(2, 7).reshape(14), 0)):
        x.grad = None
        out = fn(x)
        assert np.all(np.isfinite(to_np(out))), (fn, to_np(out))
        out.sum().backward()
        assert np.all(np.isfinite(to_np(x.grad))), (fn, to_np(x.grad))


def test_selu_constants():
    # selu(1) = scale; selu(x) -> -scale * alpha for very negative x (PyTorch's documented constants)
    out = to_np(F.selu(minitorch.tensor([1.0, -50.0], dtype=minitorch.float64)))
    np.testing.assert_allclose(out, [1.0507009873554804934193349852946,
                                     -1.0507009873554804934193349852946 * 1.6732632423543772848170429916717],
                               rtol=1e-15)
    assert math.isclose(to_np(F.celu(minitorch.tensor(-1.0, dtype=minitorch.float64), 2.0)), 2 * math.expm1(-0.5))
