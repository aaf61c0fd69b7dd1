"""In-place ops inside a graph (PyTorch's "rebasing history", cpp autograd.h): the op's
gradient is recorded and becomes the written tensor's history; what saved the old values
refuses backward; a view, or a tensor whose views are alive, is refused (not supported yet)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
import minitorch.nn.functional as F
from conftest import DEVICES


def grads(fn, *inputs):
    for t in inputs:
        t.grad = None
    fn(*inputs).sum().backward()
    return [t.grad.numpy() if t.device.type == "cpu" else t.grad.cpu().numpy() for t in inputs]


def leaf(shape, device, seed):
    rng = np.random.default_rng(seed)
    return minitorch.tensor(rng.standard_normal(shape), dtype=minitorch.float64, device=device, requires_grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_ops_give_the_out_of_place_gradients(device):
    x, w = leaf((3, 4), device, 0), leaf((4,), device, 1)

    def inplace(x, w):
        h = x * 2
        h += w          # C++ add_
        h *= h          # C++ mul_ of itself (its own backward reads h: computed from a copy)
        h.sigmoid_()    # a generic in-place form
        h.clamp_(0.1, 0.9)
        h -= x          # x requires grad: recorded
        return h

    def out_of_place(x, w):
        h = x * 2
        h = h + w
        h = h * h
        return (h.sigmoid().clamp(0.1, 0.9)) - x

    for a, b in zip(grads(inplace, x, w), grads(out_of_place, x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_residual_block_with_inplace_add_and_relu(device):
    conv = nn.Conv2d(2, 2, 3, padding=1, dtype=minitorch.float64).to(device)
    x = leaf((1, 2, 4, 4), device, 2)

    def block(x, inplace):
        out = conv(x)
        if inplace:
            out += x
            return F.relu(out, inplace=True)
        return F.relu(out + x)

    a = grads(lambda x: block(x, True), x)[0]
    wa = conv.weight.grad.clone()
    conv.weight.grad = None
    b = grads(lambda x: block(x, False), x)[0]
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(wa.cpu().numpy(), conv.weight.grad.cpu().numpy(), rtol=1e-12)
    relu = nn.ReLU(inplace=True)
    h = x * 1
    assert relu(h) is h and repr(relu) == "ReLU(inplace=True)"


@pytest.mark.parametrize("device", DEVICES)
def test_a_plain_tensor_joins_the_graph(device):
    w = leaf((3,), device, 3)
    buf = minitorch.zeros(3, dtype=minitorch.float64, device=device)
    buf += w * 3
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("device", DEVICES)
def test_what_stays_refused(device):
    w = leaf((3,), device, 4)
    with pytest.raises(RuntimeError, match="add: a leaf Variable that requires grad is being used in an in-place operation"):
        w += 1
    h = w * 1
    s = h.sin()  # saves h
    h += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()
    g = w * 1
    v = g[0]
    with pytest.raises(RuntimeError, match="whose views are alive"):
        g += 1
    v2 = g[1:]
    with pytest.raises(RuntimeError, match="while other views of its base are alive"):
        v.mul_(2)  # v2 would keep the old history
    del v2
    v.mul_(2)  # the only view of g: recorded through g's history (CopySlices, test_inplace_views.py)
    t = (w * 1).view(3)[:2]  # a view whose base is gone (an op's temporary): allowed
    t.exp_()
    t.sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy()[:2], np.exp(w.detach().cpu().numpy()[:2]))
    with minitorch.no_grad():  # outside a graph, as before
        h2 = w * 1
        h2 += 1
        assert not h2.requires_grad
