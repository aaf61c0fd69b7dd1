"""Higher-order gradients: autograd.grad(create_graph=True) and backward(create_graph=True).

With create_graph the backward formulas are recorded like any op, so a gradient can be
differentiated again. The check (PyTorch's gradgradcheck idea): the Hessian-vector product
H v = d/dx <grad f(x), v> from double backward must equal the central difference of the
first-order gradient, (grad f(x + eps v) - grad f(x - eps v)) / 2 eps, in float64.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import DEVICES


def leaf(shape, seed, device="cpu", positive=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.5
    return minitorch.tensor(a, dtype=minitorch.float64, device=device, requires_grad=True)


def to_np(t):
    return t.detach().cpu().numpy()


def first_grads(fn, inputs):
    return [to_np(g) for g in minitorch.autograd.grad(fn(*inputs), inputs)]


def check_hvp(fn, inputs, eps=1e-6, rtol=1e-4, atol=1e-6, seed=123):
    """Double-backward Hessian-vector products against central differences of grad."""
    rng = np.random.default_rng(seed)
    vs = [rng.standard_normal(tuple(t.shape)) for t in inputs]
    gs = minitorch.autograd.grad(fn(*inputs), inputs, create_graph=True)
    assert all(g.requires_grad for g in gs), "create_graph=True must give gradients with a graph"
    dot = sum((g * minitorch.tensor(v, dtype=g.dtype, device=g.device)).sum() for g, v in zip(gs, vs))
    hv = [to_np(h) if h is not None else np.zeros(tuple(t.shape))
          for h, t in zip(minitorch.autograd.grad(dot, inputs, allow_unused=True), inputs)]

    def shifted(sign):
        ts = [minitorch.tensor(to_np(t) + sign * eps * v, dtype=t.dtype, device=t.device, requires_grad=True)
              for t, v in zip(inputs, vs)]
        return first_grads(fn, ts)

    plus, minus = shifted(1), shifted(-1)
    for h, p, m in zip(hv, plus, minus):
        np.testing.assert_allclose(h, (p - m) / (2 * eps), rtol=rtol, atol=atol)


def test_second_derivative_of_cube_is_6x():
    x = minitorch.tensor([1.0, -2.0, 0.5], dtype=minitorch.float64, requires_grad=True)
    (g,) = minitorch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([1.0, 4.0, 0.25]))
    (h,) = minitorch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([1.0, -2.0, 0.5]))
    # third derivative: 6
    (g,) = minitorch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (h,) = minitorch.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = minitorch.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(t.numpy(), [6.0, 6.0, 6.0])


@pytest.mark.parametrize("name,fn,positive", [
    ("tanh", lambda x: minitorch.tanh(x), False),
    ("sigmoid", lambda x: minitorch.sigmoid(x), False),
    ("exp_sin", lambda x: minitorch.exp(minitorch.sin(x)), False),
    ("log_sqrt", lambda x: minitorch.log(x) * minitorch.sqrt(x), True),
    ("div_pow", lambda x: (x / (x * x + 1)) ** 2, False),
    ("relu_sq", lambda x: F.relu(x) * x, False),
    ("gelu", lambda x: F.gelu(x), False),
    ("softplus", lambda x: F.softplus(x), False),
])
def test_elementwise_second_derivatives(name, fn, positive):
    x = leaf((3, 4), 0, positive=positive)
    check_hvp(lambda x: fn(x).sum(), [x])


def test_tanh_and_sigmoid_closed_forms():
    x = leaf((5,), 1)
    xs = to_np(x)
    (g,) = minitorch.autograd.grad(minitorch.tanh(x).sum(), x, create_graph=True)
    (h,) = minitorch.autograd.grad(g.sum(), x)
    t = np.tanh(xs)
    np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t ** 2), rtol=1e-10)
    (g,) = minitorch.autograd.grad(minitorch.sigmoid(x).sum(), x, create_graph=True)
    (h,) = minitorch.autograd.grad(g.sum(), x)
    s = 1 / (1 + np.exp(-xs))
    np.testing.assert_allclose(h.numpy(), s * (1 - s) * (1 - 2 * s), rtol=1e-10)


@pytest.mark.parametrize("name,fn", [
    ("sum_sq", lambda x: (x.sum(1) ** 2).sum()),
    ("mean", lambda x: (x.mean(0) ** 3).sum()),
    ("var", lambda x: x.var(1).pow(2).sum()),
    ("std", lambda x: x.std(0).sum() * x.sum()),
    ("var_mean", lambda x: (lambda v, m: (v * m).sum())(*minitorch.var_mean(x, 1))),
    ("logsumexp", lambda x: (x.logsumexp(1) ** 2).sum()),
    ("norm", lambda x: x.norm(dim=1).pow(3).sum()),
    ("max", lambda x: x.max(1)[0].pow(2).sum() + x.max() ** 2),
    ("prod_cumsum", lambda x: (x.cumsum(1) ** 2).sum()),
])
def test_reduction_second_derivatives(name, fn):
    check_hvp(fn, [leaf((3, 4), 2)])


def test_matmul_linear_mse():
    a, b, w, bias = leaf((3, 4), 3), leaf((4, 2), 4), leaf((5, 2), 5), leaf((5,), 6)
    check_hvp(lambda a, b: ((a @ b).tanh() ** 2).sum(), [a, b])
    target = minitorch.tensor(np.ones((3, 5)), dtype=minitorch.float64)
    check_hvp(lambda a, b, w, bias: F.mse_loss(F.linear(a @ b, w, bias).tanh(), target), [a, b, w, bias])


@pytest.mark.parametrize("log", [False, True])
def test_softmax_second_derivatives(log):
    x = leaf((3, 5), 7)
    c = minitorch.tensor(np.random.default_rng(0).standard_normal((3, 5)), dtype=minitorch.float64)
    f = F.log_softmax if log else F.softmax
    check_hvp(lambda x: (f(x, 1) * c).sum() + (f(x, 0) ** 2).sum(), [x])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_and_nll_second_derivatives(reduction):
    x, w = leaf((4, 3), 8), leaf((3, 5), 9)
    t = minitorch.tensor([0, 4, -100, 2])
    red = (lambda l: (l * l).sum()) if reduction == "none" else (lambda l: l)
    check_hvp(lambda x, w: red(F.cross_entropy(x @ w, t, reduction=reduction)), [x, w])
    check_hvp(lambda x, w: red(F.nll_loss(F.log_softmax((x @ w).tanh(), 1), t, reduction=reduction)), [x, w])


def test_layer_norm_second_derivatives():
    x, w, b = leaf((2, 3, 4), 10), leaf((4,), 11), leaf((4,), 12)
    c = minitorch.tensor(np.random.default_rng(1).standard_normal((2, 3, 4)), dtype=minitorch.float64)
    check_hvp(lambda x, w, b: ((F.layer_norm(x, (4,), w, b) * c) ** 2).sum(), [x, w, b])
    check_hvp(lambda x: (F.layer_norm(x, (3, 4)) * c).tanh().sum(), [x])


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv2d_second_derivatives(stride, padding, dilation):
    x, w, b = leaf((2, 2, 5, 6), 13), leaf((3, 2, 3, 2), 14), leaf((3,), 15)
    check_hvp(lambda x, w, b: (F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation) ** 2).sum(),
              [x, w, b])


def test_max_pool_and_indexing_second_derivatives():
    x = leaf((2, 2, 4, 4), 16)
    check_hvp(lambda x: (F.max_pool2d(x * x, 2) ** 2).sum(), [x])
    y = leaf((4, 5), 17)
    idx = minitorch.tensor([3, 0, 3])
    check_hvp(lambda y: (y[1] ** 3).sum() + (y[:, 1:4:2] ** 2).sum() + (y[idx] ** 3).sum()
              + (y.index_select(1, idx) ** 2).sum(), [y])


def test_backward_create_graph_leaves_differentiable_grad():
    x = leaf((3,), 18)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * to_np(x))


def test_create_graph_retains_graph_by_default():
    x = leaf((3,), 19)
    y = (x.exp() * x).sum()
    minitorch.autograd.grad(y, x, create_graph=True)
    (g,) = minitorch.autograd.grad(y, x)  # the graph is still there
    np.testing.assert_allclose(g.numpy(), np.exp(to_np(x)) * (1 + to_np(x)))


def test_gradient_penalty_wgan_gp():
    # D(x) = w2 . tanh(W1 x + b1); penalty = mean((|grad_x D| - 1)^2); its gradient in W1
    # against central differences of the penalty.
    rng = np.random.default_rng(20)
    xs = rng.standard_normal((4, 3))
    params = [leaf((5, 3), 21), leaf((5,), 22), leaf((1, 5), 23)]

    def penalty(w1, b1, w2):
        x = minitorch.tensor(xs, dtype=minitorch.float64, requires_grad=True)
        d = F.linear(F.linear(x, w1, b1).tanh(), w2)
        (gx,) = minitorch.autograd.grad(d.sum(), x, create_graph=True)
        return ((gx.norm(2, dim=1) - 1) ** 2).mean()

    p = penalty(*params)
    p.backward()
    eps = 1e-6
    for k, t in enumerate(params):
        base = to_np(t)
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            vals = []
            for s in (1, -1):
                b = base.copy()
                b[i] += s * eps
                args = [minitorch.tensor(b, dtype=minitorch.float64) if j == k else params[j].detach()
                        for j in range(3)]
                vals.append(penalty(*args).item())
            num[i] = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-4, atol=1e-7)


def test_conv_gradient_penalty_runs_end_to_end():
    x = leaf((2, 1, 6, 6), 24)
    w = leaf((2, 1, 3, 3), 25)
    d = F.conv2d(x, w, padding=1).tanh().sum()
    (gx,) = minitorch.autograd.grad(d, x, create_graph=True)
    ((gx ** 2).sum()).backward()
    assert w.grad is not None and np.isfinite(w.grad.numpy()).all()
    check_hvp(lambda x, w: F.conv2d(x, w, padding=1).tanh().sum(), [x, w])


def test_avg_pool2d_second_derivatives():
    x = leaf((2, 2, 5, 5), 31)
    check_hvp(lambda x: (F.avg_pool2d(x * x, 2) ** 2).sum() + F.avg_pool2d(x, 3, 2, 1).tanh().sum(), [x])


def test_unsupported_double_backward_raises_when_differentiated_again():
    x = leaf((2, 3), 26, positive=True)
    (g,) = minitorch.autograd.grad(x.cumprod(1).sum(), x, create_graph=True)  # first order works
    (expected,) = minitorch.autograd.grad(x.cumprod(1).sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), expected.numpy())
    with pytest.raises(RuntimeError, match="double backward is not supported for CumprodBackward0"):
        minitorch.autograd.grad(g.sum(), x)


def test_custom_function_with_differentiable_backward():
    class Cube(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = leaf((4,), 27)
    (g,) = minitorch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = minitorch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * to_np(x))


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward_on_each_device(device):
    x = leaf((2, 3), 28, device)
    w = leaf((3, 3), 29, device)
    check_hvp(lambda x, w: (F.softmax(x @ w, 1) ** 2).sum() + F.cross_entropy(x @ w, minitorch.tensor(
        [0, 2], device=device)), [x, w])


def test_without_create_graph_gradients_have_no_graph():
    x = leaf((3,), 30)
    (g,) = minitorch.autograd.grad((x ** 3).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
