"""In-place writes through views inside a graph (PyTorch's CopySlices), and copy_ / fill_ /
zero_ / setitem on tensors that are part of a graph: gradients against the out-of-place
computation (float64 gradcheck), and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES
from minitorch.testing import gradcheck


def leaf(shape, device, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    return minitorch.tensor(a, dtype=minitorch.float64, device=device, requires_grad=True)


def np_of(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_on_a_column_routes_gradients_to_x_and_v(device):
    x, v = leaf((3, 4), device, 0), leaf((3,), device, 1)

    def f(x, v):
        y = x * 2
        y[:, 0] = v * 3
        return (y * y).sum(1)

    out = f(x, v)
    y_np = np_of(x) * 2
    y_np[:, 0] = np_of(v) * 3
    np.testing.assert_allclose(np_of(out), (y_np ** 2).sum(1))
    out.sum().backward()
    gx = 2 * 2 * y_np
    gx[:, 0] = 0
    np.testing.assert_allclose(np_of(x.grad), gx)
    np.testing.assert_allclose(np_of(v.grad), 2 * y_np[:, 0] * 3)
    assert gradcheck(f, (x, v))


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_ops_on_views(device):
    x, w = leaf((4, 3), device, 2), leaf((3,), device, 3)

    def narrow_mul(x, w):
        y = x.sin()
        y.narrow(0, 1, 2).mul_(3)
        return y * w

    def view_add(x, w):
        y = x * 1.5
        out = y[1:3]  # out += identity where out is a view of y
        out += w
        return y.exp()

    def select_relu(x, w):
        y = x - w
        y[2].relu_()
        return y

    for f in (narrow_mul, view_add, select_relu):
        assert gradcheck(f, (x, w)), f.__name__
    y = narrow_mul(x, w)
    expected = np.sin(np_of(x))
    expected[1:3] *= 3
    np.testing.assert_allclose(np_of(y), expected * np_of(w))


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_with_an_index_tensor_and_a_mask(device):
    x, v = leaf((5, 2), device, 4), leaf((2, 2), device, 5)
    idx = minitorch.tensor([3, 0], device=device)

    def f(x, v):
        y = x * 1.5
        y[idx] = v * v
        return y.tanh()

    def g(x):
        y = x * x
        y[y > 0.5] = 0.0  # a boolean mask (PyTorch: masked_fill_)
        return y

    assert gradcheck(f, (x, v))
    assert gradcheck(g, (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_copy_fill_zero_on_graph_tensors(device):
    x, s = leaf((3,), device, 6), leaf((3,), device, 7)

    def copy(x, s):
        y = x * 2
        y.copy_(s.exp())
        return y * x

    def fill(x):
        y = x * 2
        z = y[1:]
        z.fill_(4.0)
        return y * x

    def zero(x):
        y = x * 3
        y.zero_()
        return y + x

    assert gradcheck(copy, (x, s))
    assert gradcheck(fill, (x,))
    assert gradcheck(zero, (x,))
    # a plain buffer written from something that requires grad now carries its gradient
    buf = minitorch.zeros(2, 3, dtype=minitorch.float64, device=device)
    buf[0] = s
    buf.sum().backward()
    np.testing.assert_allclose(np_of(s.grad), np.ones(3))


@pytest.mark.parametrize("device", DEVICES)
def test_errors_match_pytorch(device):
    x = leaf((3, 2), device, 8)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.zero_()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        x[0].mul_(2)
    y = x * 2
    s = y.sin()  # saves y
    y[1] = 0.0
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: .* is at version 1; expected version 0 instead"):
        s.sum().backward()


def test_random_fills_in_a_graph_give_the_old_values_zero_gradient():
    x = leaf((4,), "cpu", 9)
    y = x * 2
    y.normal_()
    (y * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np_of(y))  # d(y*x)/dx with y a constant now
    z = x * 3
    z[1:].uniform_(0.0, 1.0)
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np_of(y) + np.array([3.0, 0.0, 0.0, 0.0]))
