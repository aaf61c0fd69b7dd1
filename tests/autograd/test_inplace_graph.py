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
        h.clamp_(0.1, 0.9)
        h -= x          # x requires grad: recorded
        h.sigmoid_()    # last: its node saves the written h (as PyTorch, a later write would be refused)
        return h

    def out_of_place(x, w):
        h = x * 2
        h = h + w
        h = h * h
        return (h.clamp(0.1, 0.9) - x).sigmoid()

    for a, b in zip(grads(inplace, x, w), grads(out_of_place, x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_a_write_after_an_inplace_op_that_saved_its_result_is_refused(device):
    """relu_ and sigmoid_ save their result, which is the written tensor itself (as in
    PyTorch): changing it again before backward is the usual version error."""
    x = leaf((3, 4), device, 3)
    for first in ("relu_", "sigmoid_", "exp_"):
        h = x * 2
        getattr(h, first)()
        h += 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            h.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_in_a_graph_writes_once(device):
    """x += y, relu_, sigmoid_ inside a graph write into x with one kernel (x *= y, whose
    backward reads x, and gelu-like ops that save their input, copy x first): no result
    computed aside and copied back. Counted through the profiler."""
    from minitorch.profiler import ProfilerActivity, profile
    x = leaf((64, 8), device, 4)
    y = leaf((8,), device, 5)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    h, k, m = x * 2, x * 3, x * 4
    with profile(activities=activities) as prof:
        h += y
        h.sub_(x)
        h *= y
        h.relu_()  # last write into h: relu_ saves it (a later write is refused, as in PyTorch)
        F.relu(k, inplace=True)
        m.sigmoid_()
    names = [e.name for e in prof.events()]
    assert names == ["add_", "sub_", "mul_", "relu_", "relu_", "sigmoid_"], names
    if device == "cuda":  # h *= y: a copy of h (MulBackward0 reads it), then the write
        assert [e.kernel_count for e in prof.events()] == [1, 1, 2, 1, 1, 1]
    x.grad = y.grad = None
    (h.sum() + k.sum() + m.sum()).backward()
    ref = (((x * 2 + y - x) * y).relu().sum() + (x * 3).relu().sum() + (x * 4).sigmoid().sum())
    gx, gy = minitorch.autograd.grad(ref, [x, y])
    np.testing.assert_allclose(x.grad.cpu().numpy(), gx.cpu().numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.cpu().numpy(), gy.cpu().numpy(), rtol=1e-12)


INPLACE_MODULES = {
    "relu": lambda: nn.ReLU(inplace=True),
    "leaky_relu": lambda: nn.LeakyReLU(0.2, inplace=True),
    "elu": lambda: nn.ELU(0.7, inplace=True),
    "silu": lambda: nn.SiLU(inplace=True),
    "hardswish": lambda: nn.Hardswish(inplace=True),
    "hardsigmoid": lambda: nn.Hardsigmoid(inplace=True),
    "mish": lambda: nn.Mish(inplace=True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(INPLACE_MODULES))
def test_inplace_activation_modules_write_with_their_kernel(device, name):
    """nn.<Act>(inplace=True) returns its input, written by the activation's own kernel (a copy
    of the input first where the backward reads it: at most two launches, no copy back), with
    the out-of-place values and gradients; outside a graph too."""
    from minitorch.profiler import ProfilerActivity, profile
    x = leaf((5, 6), device, 6)
    h = x * 2
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        out = INPLACE_MODULES[name]()(h)
    assert out is h
    assert "copy_" not in [e.name for e in prof.events()]
    if device == "cuda":
        assert sum(e.kernel_count for e in prof.events()) <= 2
    module = INPLACE_MODULES[name]()
    module.inplace = False
    ref = module(x * 2)
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().cpu().numpy(), rtol=1e-12)
    (g,) = minitorch.autograd.grad(out.sum(), [x])
    (g_ref,) = minitorch.autograd.grad(ref.sum(), [x])
    np.testing.assert_allclose(g.cpu().numpy(), g_ref.cpu().numpy(), rtol=1e-12)
    with minitorch.no_grad():
        y = x.detach() * 2
        assert INPLACE_MODULES[name]()(y) is y
        np.testing.assert_allclose(y.cpu().numpy(), ref.detach().cpu().numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["tanh_", "sigmoid_", "exp_"])
def test_double_backward_through_an_inplace_op_that_saved_its_result(device, op):
    """The node of h.tanh_() saves the written h, linked back to that node: create_graph
    differentiates through it as through h.tanh()."""
    x = minitorch.tensor(np.linspace(-1, 1, 6), dtype=minitorch.float64, device=device, requires_grad=True)

    def second(inplace):
        h = x * 2
        if inplace:
            getattr(h, op)()
        else:
            h = getattr(h, op[:-1])()
        (g,) = minitorch.autograd.grad((h * h).sum(), [x], create_graph=True)
        (gg,) = minitorch.autograd.grad(g.sum(), [x])
        return g.detach().cpu().numpy(), gg.cpu().numpy()

    for a, b in zip(second(True), second(False)):
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
