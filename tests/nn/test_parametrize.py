"""``nn.utils.parametrize`` and ``nn.utils.parametrizations`` (weight_norm, spectral_norm),
and the legacy ``nn.utils.weight_norm``: values, gradients (float64 gradcheck), PyTorch's
state_dict keys and class names, stacking, assignment through ``right_inverse``,
``cached``, removal and errors, on every device. (tests/zoo/programs/spectral_gan.py
trains with them against PyTorch.)"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn.utils import parametrize
from minitorch.nn.utils.parametrizations import spectral_norm, weight_norm
from minitorch.testing import gradcheck


def to_np(t):
    return np.array(t.detach().cpu().numpy(), copy=True)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Scale(nn.Module):
    def forward(self, X):
        return X * 2.0

    def right_inverse(self, X):
        return X / 2.0


def test_register_parametrization_basics(device):
    layer = nn.Linear(3, 3).double().to(device)
    w0 = to_np(layer.weight)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, nn.Linear)
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    np.testing.assert_allclose(to_np(layer.parametrizations.weight.original), w0)
    w = to_np(layer.weight)
    np.testing.assert_allclose(w, w.T)
    x = minitorch.tensor(np.random.default_rng(0).standard_normal((2, 3)), device=device)
    layer(x).sum().backward()
    assert layer.parametrizations.weight.original.grad is not None
    assert {id(p) for p in layer.parameters()} == {id(layer.bias), id(layer.parametrizations.weight.original)}
    assert gradcheck(lambda x, o: layer(x).sum(), (x.requires_grad_(), layer.parametrizations.weight.original))


def test_stacking_assignment_and_removal(device):
    layer = nn.Linear(3, 3).double().to(device)
    parametrize.register_parametrization(layer, "weight", Scale())
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert [type(m).__name__ for m in layer.parametrizations.weight] == ["Scale", "Symmetric"]
    target = np.arange(9.0).reshape(3, 3)
    target = target + target.T
    layer.weight = minitorch.tensor(target, device=device)  # through right_inverse: original = target / 2
    np.testing.assert_allclose(to_np(layer.parametrizations.weight.original), target / 2)
    np.testing.assert_allclose(to_np(layer.weight), target)
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and list(layer.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(to_np(layer.weight), target)
    assert isinstance(layer.weight, nn.Parameter)


def test_parametrization_errors():
    layer = nn.Linear(3, 2)

    class Bad(nn.Module):
        def forward(self, X):
            return X[0]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(layer, "weight", Bad())
    assert type(layer) is nn.Linear and "weight" in layer._parameters  # left as it was
    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(layer, "nope", Symmetric())
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(layer, "weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(device, dim):
    conv = nn.Conv2d(2, 3, 2).double().to(device)
    w0 = to_np(conv.weight)
    weight_norm(conv, dim=dim)
    assert list(conv.state_dict()) == ["bias", "parametrizations.weight.original0",
                                       "parametrizations.weight.original1"]
    g, v = conv.parametrizations.weight.original0, conv.parametrizations.weight.original1
    axes = tuple(d for d in range(4) if d != dim) if dim is not None else None
    np.testing.assert_allclose(to_np(g), np.sqrt((w0 ** 2).sum(axis=axes, keepdims=dim is not None)), rtol=1e-12)
    np.testing.assert_allclose(to_np(conv.weight), w0, rtol=1e-12)  # unchanged at registration
    x = minitorch.tensor(np.random.default_rng(1).standard_normal((1, 2, 3, 3)), device=device, requires_grad=True)
    assert gradcheck(lambda x, g, v: conv(x).sum(), (x, g, v))


def test_legacy_weight_norm_matches_parametrization(device):
    rng = np.random.default_rng(2)
    a, b = nn.Linear(4, 3).double().to(device), nn.Linear(4, 3).double().to(device)
    b.load_state_dict(a.state_dict())
    nn.utils.weight_norm(a)
    weight_norm(b)
    assert list(a.state_dict()) == ["bias", "weight_g", "weight_v"]
    with minitorch.no_grad():
        a.weight_g.mul_(1.5)
        b.parametrizations.weight.original0.mul_(1.5)
    x = minitorch.tensor(rng.standard_normal((2, 4)), device=device)
    ya, yb = a(x), b(x)
    np.testing.assert_allclose(to_np(ya), to_np(yb), rtol=1e-12)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(to_np(a.weight_g.grad), to_np(b.parametrizations.weight.original0.grad), rtol=1e-12)
    nn.utils.remove_weight_norm(a)
    assert list(a.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(to_np(a(x)), to_np(ya), rtol=1e-12)


def test_spectral_norm(device):
    rng = np.random.default_rng(3)
    lin = nn.Linear(5, 4).double().to(device)
    w0 = to_np(lin.weight)
    spectral_norm(lin, n_power_iterations=3)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                      "parametrizations.weight.0._v"]
    for _ in range(30):  # power iteration converges to the top singular vectors
        lin.weight
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(to_np(lin.weight), w0 / sigma, rtol=1e-8)
    lin.eval()
    u = to_np(lin.parametrizations.weight[0]._u)
    lin.weight
    np.testing.assert_array_equal(to_np(lin.parametrizations.weight[0]._u), u)  # no iteration in eval
    x = minitorch.tensor(rng.standard_normal((2, 5)), device=device, requires_grad=True)
    assert gradcheck(lambda x, w: lin(x).sum(), (x, lin.parametrizations.weight.original))
    conv = spectral_norm(nn.Conv2d(2, 3, 2))
    assert tuple(conv.parametrizations.weight[0]._u.shape) == (3,)
    assert tuple(conv.parametrizations.weight[0]._v.shape) == (8,)
    assert type(copy.deepcopy(conv)).__name__ == "ParametrizedConv2d"


def test_forward_pre_hook():
    lin = nn.Linear(2, 2)
    seen = []
    handle = lin.register_forward_pre_hook(lambda m, inputs: seen.append(len(inputs)))
    lin(minitorch.ones(1, 2))
    handle.remove()
    lin(minitorch.ones(1, 2))
    assert seen == [1]
    lin.register_forward_pre_hook(lambda m, inputs: (inputs[0] * 0,))
    np.testing.assert_allclose(to_np(lin(minitorch.ones(1, 2))), to_np(lin.bias).reshape(1, 2))
