"""autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against derivatives worked out
by hand, the nesting of results for tensor / tuple inputs and outputs, strict mode,
create_graph, on every device; autograd.gradcheck / gradgradcheck; PyTorch when installed."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import TORCH_SKIP_REASON
from minitorch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def f(x):  # R^3 -> R^3
    return minitorch.stack([x[0] * x[1], x[2].sin(), (x ** 2).sum()])


def jac_f(x):
    return np.array([[x[1], x[0], 0], [0, 0, np.cos(x[2])], [2 * x[0], 2 * x[1], 2 * x[2]]])


def g(x):  # R^3 -> R, Hessian [[6x0, 1, 0], [1, 6x1, 0], [0, 0, 6x2]]
    return (x ** 3).sum() + x[0] * x[1]


def hess_g(x):
    return np.array([[6 * x[0], 1, 0], [1, 6 * x[1], 0], [0, 0, 6 * x[2]]])


X = np.array([0.5, -1.5, 2.0])
V = np.array([1.0, -2.0, 0.5])


def test_jacobian_vjp_jvp(device):
    x, v = minitorch.tensor(X, device=device), minitorch.tensor(V, device=device)
    J = jacobian(f, x)
    assert tuple(J.shape) == (3, 3) and not J.requires_grad and J.device.type == device
    np.testing.assert_allclose(to_np(J), jac_f(X), rtol=1e-12)
    out, vj = vjp(f, x, v)
    np.testing.assert_allclose(to_np(out), to_np(f(x)))
    np.testing.assert_allclose(to_np(vj), V @ jac_f(X), rtol=1e-12)
    out, jv = jvp(f, x, v)
    np.testing.assert_allclose(to_np(jv), jac_f(X) @ V, rtol=1e-12)
    assert not x.requires_grad  # the caller's tensor is left alone


def test_hessian_hvp_vhp(device):
    x, v = minitorch.tensor(X, device=device), minitorch.tensor(V, device=device)
    H = hessian(g, x)
    np.testing.assert_allclose(to_np(H), hess_g(X), rtol=1e-12)
    value, hv = hvp(g, x, v)
    np.testing.assert_allclose(value.item(), g(x).item())
    np.testing.assert_allclose(to_np(hv), hess_g(X) @ V, rtol=1e-12)
    _, vh = vhp(g, x, v)
    np.testing.assert_allclose(to_np(vh), V @ hess_g(X), rtol=1e-12)


def test_tuple_nesting(device):
    a = minitorch.tensor(np.arange(4.0).reshape(2, 2), device=device)
    b = minitorch.tensor([1.0, -1.0], dtype=minitorch.float64, device=device).double()
    a = a.double()
    J = jacobian(lambda a, b: (a @ b, b.sum()), (a, b))
    assert [[tuple(t.shape) for t in row] for row in J] == [[(2, 2, 2), (2, 2)], [(2, 2), (2,)]]
    np.testing.assert_allclose(to_np(J[0][1]), to_np(a))  # d(a @ b)/db = a
    np.testing.assert_allclose(to_np(J[1][0]), np.zeros((2, 2)))  # b.sum() does not use a
    H = hessian(lambda a, b: (a @ b).pow(2).sum(), (a, b))
    assert len(H) == 2 and len(H[0]) == 2 and tuple(H[1][1].shape) == (2, 2)
    np.testing.assert_allclose(to_np(H[1][1]), 2 * to_np(a).T @ to_np(a), rtol=1e-12)  # d2/db2 |a b|^2


def test_strict_and_create_graph(device):
    x = minitorch.tensor(X, device=device)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        jacobian(lambda x, y: x * 2, (x, x.clone()), strict=True)
    w = minitorch.tensor(X, device=device, requires_grad=True)
    J = jacobian(lambda x: x ** 3, w, create_graph=True)
    assert J.requires_grad
    J.sum().backward()  # d/dw of sum(diag(3 w^2)) = 6 w
    np.testing.assert_allclose(to_np(w.grad), 6 * X, rtol=1e-12)


def test_argument_errors():
    x = minitorch.tensor(X)
    with pytest.raises(RuntimeError, match="v can only be None"):
        vjp(f, x)
    with pytest.raises(RuntimeError, match="invalid size"):
        jvp(f, x, minitorch.ones(2, dtype=minitorch.float64))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        jacobian(f, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="single Tensor with a single element"):
        hessian(f, x)
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        jacobian(f, x, strategy="forward-mode")


def test_gradcheck_aliases():
    x = minitorch.tensor(X, requires_grad=True)
    assert minitorch.autograd.gradcheck(lambda x: (x ** 3).sin(), (x,))
    assert minitorch.autograd.gradgradcheck(lambda x: (x ** 3).sin(), (x,))
    minitorch.manual_seed(0)
    assert minitorch.autograd.gradgradcheck(lambda a, b: a * b.exp(), (x, minitorch.tensor(V, requires_grad=True)))


def test_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    tf = lambda x: torch.stack([x[0] * x[1], x[2].sin(), (x ** 2).sum()])  # noqa: E731
    tx = torch.tensor(X)
    np.testing.assert_allclose(to_np(jacobian(f, minitorch.tensor(X))),
                               torch.autograd.functional.jacobian(tf, tx).numpy(), rtol=1e-12)
    tg = lambda x: (x ** 3).sum() + x[0] * x[1]  # noqa: E731
    np.testing.assert_allclose(to_np(hessian(g, minitorch.tensor(X))),
                               torch.autograd.functional.hessian(tg, tx).numpy(), rtol=1e-12)
    _, tjv = torch.autograd.functional.jvp(tf, tx, torch.tensor(V))
    np.testing.assert_allclose(to_np(jvp(f, minitorch.tensor(X), minitorch.tensor(V))[1]), tjv.numpy(), rtol=1e-12)
