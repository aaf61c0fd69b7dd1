"""F.conv_transpose3d / nn.ConvTranspose3d: outputs and gradients against PyTorch's
(golden_conv_transpose3d.npz from make_golden_conv_transpose3d.py: strides, padding,
output_padding, dilation, groups), against conv3d's input gradient (its definition) on every
device, float64 gradcheck, the module's output_size, unbatched input, errors."""
from __future__ import annotations

import os

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

from make_golden_conv_transpose3d import CASES, run

GOLDEN = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_conv_transpose3d.npz"))


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_matches_pytorch(i):
    for key, got in zip("yxwb", run(minitorch, i)):
        np.testing.assert_allclose(got, GOLDEN[f"{i}/{key}"], rtol=1e-10, atol=1e-10, err_msg=key)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(stride=(1, 2, 2), dilation=2, groups=2)])
def test_is_the_input_gradient_of_conv3d(device, kw):
    rng = np.random.default_rng(5)
    w = minitorch.tensor(rng.standard_normal((4, 2 if kw.get("groups") else 4, 2, 3, 2)), device=device)
    x = minitorch.tensor(rng.standard_normal((1, 4, 5, 6, 7)), device=device, requires_grad=True)
    y = F.conv3d(x, w, **kw)
    g = minitorch.tensor(rng.standard_normal(tuple(y.shape)), device=device)
    y.backward(g)
    # conv_transpose3d with these settings maps g back onto x's shape: conv3d's input gradient
    def triple(v):
        return (v,) * 3 if isinstance(v, int) else tuple(v)
    s, p, dil = (triple(kw.get(k, d)) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1)))
    extra = tuple(x.shape[i + 2] - ((y.shape[i + 2] - 1) * s[i] - 2 * p[i] + dil[i] * (w.shape[i + 2] - 1) + 1)
                  for i in range(3))
    back = F.conv_transpose3d(g, w, None, output_padding=tuple(extra), **kw)
    np.testing.assert_allclose(to_np(back), to_np(x.grad), rtol=1e-10, atol=1e-10)


def test_gradcheck(device):
    rng = np.random.default_rng(1)
    x = minitorch.tensor(rng.standard_normal((1, 2, 2, 2, 3)), device=device, requires_grad=True)
    w = minitorch.tensor(rng.standard_normal((2, 2, 2, 1, 2)), device=device, requires_grad=True)
    b = minitorch.tensor(rng.standard_normal(2), device=device, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=(1, 0, 0)), (x, w, b))


def test_module(device):
    minitorch.manual_seed(0)
    up = nn.ConvTranspose3d(4, 2, 2, stride=2).to(device)
    assert tuple(up.weight.shape) == (4, 2, 2, 2, 2) and repr(up) == \
        "ConvTranspose3d(4, 2, kernel_size=(2, 2, 2), stride=(2, 2, 2))"
    x = minitorch.randn(3, 4, 2, 3, 4, device=device)
    assert tuple(up(x).shape) == (3, 2, 4, 6, 8)
    assert tuple(up(x, output_size=(5, 7, 9)).shape) == (3, 2, 5, 7, 9)
    np.testing.assert_allclose(to_np(up(x[0])), to_np(up(x)[0]), rtol=1e-6)  # unbatched


def test_errors():
    x = minitorch.zeros(1, 2, 2, 2, 2)
    with pytest.raises(ValueError, match="expected bias to be 1-dimensional with 3 elements"):
        F.conv_transpose3d(x, minitorch.zeros(2, 3, 2, 2, 2), minitorch.zeros(1))
    with pytest.raises(ValueError, match="Only zero batch or zero channel inputs"):
        F.conv_transpose3d(minitorch.zeros(1, 2, 0, 2, 2), minitorch.zeros(2, 3, 2, 2, 2))
    with pytest.raises(ValueError, match="expects 3 input channels"):
        F.conv_transpose3d(x, minitorch.zeros(3, 1, 2, 2, 2))
    with pytest.raises(ValueError, match="5-D weight"):
        F.conv_transpose3d(x, minitorch.zeros(2, 1, 2, 2))
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose3d(x, minitorch.zeros(2, 1, 2, 2, 2), output_padding=(2, 0, 0), stride=2)


def test_result_is_contiguous(device):
    y = F.conv_transpose3d(minitorch.randn(2, 3, 2, 2, 2, device=device), minitorch.randn(3, 2, 2, 2, 2, device=device),
                           stride=2)
    assert y.is_contiguous() and tuple(y.view(2, -1).shape) == (2, 128)
