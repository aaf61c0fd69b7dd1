"""nn.ZeroPad/ConstantPad/ReflectionPad/ReplicationPad/CircularPad (1d, 2d, 3d) against NumPy's
np.pad, with their reprs, gradients and errors; and Tensor.masked_fill_ inside a graph."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
from conftest import DEVICES
from minitorch.testing import gradcheck

NP_MODE = {"Zero": "constant", "Constant": "constant", "Reflection": "reflect", "Replication": "edge",
           "Circular": "wrap"}


def _np_pad(a, pad, mode, value=0.0):
    dims = len(pad) // 2
    widths = [(0, 0)] * (a.ndim - dims) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(dims))]
    if mode == "constant":
        return np.pad(a, widths, mode, constant_values=value)
    return np.pad(a, widths, mode)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", list(NP_MODE))
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_padding_layers_match_numpy(kind, dims, device):
    rng = np.random.default_rng(dims)
    shape = (2, 3) + (4, 5, 3)[:dims]
    a = rng.standard_normal(shape)
    pad = tuple(int(p) for p in rng.integers(0, 3, size=2 * dims))
    cls = getattr(nn, f"{kind}Pad{dims}d")
    m = cls(pad, 2.5) if kind == "Constant" else cls(pad)
    got = m(minitorch.tensor(a, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), _np_pad(a, pad, NP_MODE[kind], 2.5 if kind == "Constant" else 0.0))
    one = cls(1, 2.5) if kind == "Constant" else cls(1)
    assert one.padding == (1,) * (2 * dims)


def test_reprs_and_errors():
    assert repr(nn.ZeroPad2d((1, 1, 2, 0))) == "ZeroPad2d((1, 1, 2, 0))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert repr(nn.ReflectionPad2d(1)) == "ReflectionPad2d((1, 1, 1, 1))"
    with pytest.raises(ValueError, match="ReplicationPad2d"):
        nn.ReplicationPad2d((1, 2, 3))
    with pytest.raises(TypeError, match="ZeroPad1d"):
        nn.ZeroPad1d(1.5)
    with pytest.raises((ValueError, RuntimeError)):
        nn.ReflectionPad1d(5)(minitorch.zeros(1, 1, 3))  # reflection wider than the input


@pytest.mark.parametrize("kind", ["Zero", "Reflection", "Replication", "Circular"])
def test_padding_gradients(kind):
    x = minitorch.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)), requires_grad=True)
    m = getattr(nn, f"{kind}Pad2d")((1, 2, 2, 1))
    assert gradcheck(lambda t: m(t), (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_masked_fill_in_place_inside_a_graph(device):
    x = minitorch.tensor([1.0, -2.0, 3.0, -4.0], device=device, requires_grad=True)
    y = x * 2
    r = y.masked_fill_(y < 0, 0.0)
    assert r is y and y.tolist() == [2.0, 0.0, 6.0, 0.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0, 0.0]
