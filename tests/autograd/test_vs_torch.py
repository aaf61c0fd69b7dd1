"""Forward values and gradients of every leaf against PyTorch (float64): minitorch on
every device (``cpu``, and ``cuda`` when available), PyTorch on the CPU as the reference.

Skipped when PyTorch is not installed (it is not a minitorch dependency).
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import TORCH_SKIP_REASON, to_numpy

torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


def rand(shape, seed, low=-1.0, high=1.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape)


# name -> (function of the leaves, written once for both libraries, leaf arrays)
# Each function gets a namespace `lib` (minitorch or torch) for the module-level calls.
CASES = {
    "mlp": (
        lambda lib, x, w1, b1, w2: ((x @ w1 + b1).relu() @ w2).sigmoid().mean(),
        [rand((4, 3), 0), rand((3, 5), 1), rand((5,), 2), rand((5, 2), 3)],
    ),
    "broadcast_add_mul": (
        lambda lib, a, b, c: ((a + b) * c - a / 2).sum(1),
        [rand((3, 1), 4), rand((4,), 5), rand((2, 3, 4), 6)],
    ),
    "softmax_cross_entropy": (
        lambda lib, logits, target: -(
            (logits - logits.max(1, keepdim=True).values
             - (logits - logits.max(1, keepdim=True).values).exp().sum(1, keepdim=True).log()) * target
        ).sum(1).mean(),
        [rand((4, 5), 7, -3, 3), np.eye(5)[[0, 3, 1, 4]]],
    ),
    "max_dim_and_div": (
        lambda lib, x, y: x.max(0).values / (y.abs() + 1) + x.min(1).values.sum(),
        [rand((3, 4), 8), rand((4,), 9)],
    ),
    "pow_forms": (
        lambda lib, base, e: (base ** e).sum(0) + (base ** 2.5).mean() + (2 ** e).sum() + (1.5 / base) ** 2,
        [rand((3, 4), 10, 0.5, 2.0), rand((4,), 11)],
    ),
    "views_and_slices": (
        lambda lib, x: (x.T[1:, ::2] * x.reshape(4, 3)[:3, :2]).sum()
        + x.unsqueeze(0).expand(2, 3, 4)[:, 1].tanh().sum(0).sum()
        + x.flatten()[3::4].exp().sum()
        + x[..., None].permute(2, 1, 0).squeeze(0)[2].sum(),
        [rand((3, 4), 12)],
    ),
    "batched_matmul_broadcast": (
        lambda lib, a, b, v: ((a @ b).sum((0, 1)) @ v).tanh(),
        [rand((2, 1, 3, 4), 13), rand((5, 4, 2), 14), rand((2,), 15)],
    ),
    "vector_matmuls": (
        lambda lib, u, m, v: (u @ m) @ v + u @ (m @ v) + (m.T @ u) @ (m.T @ u) * 0.5 + (u @ u) * (v @ v),
        [rand((3,), 16), rand((3, 4), 17), rand((4,), 18)],
    ),
    "where_clamp_maximum": (
        lambda lib, x, y: lib.where(x > 0, x * y, y.exp()).sum()
        + x.clamp(-0.5, 0.5).sum() * 2
        + lib.maximum(x, y * 0.7).mean()
        + lib.minimum(x.sigmoid(), y).sum(),
        [rand((3, 4), 19), rand((3, 4), 20)],
    ),
    "layernorm_like": (
        lambda lib, x, g, b: (
            (x - x.mean(-1, keepdim=True))
            / ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True).sqrt()
            * g + b
        ).tanh(),
        [rand((2, 3, 4), 21), rand((4,), 22, 0.5, 1.5), rand((4,), 23)],
    ),
    "noncontiguous_leaves_chain": (
        lambda lib, x, w: ((x.T @ w).log().abs() + 1).sqrt().sum(0) - (x.T * 3).sum(),
        [rand((4, 3), 24, 0.5, 1.0), rand((4, 2), 25, 0.5, 1.0)],
    ),
    "shared_subexpression": (
        lambda lib, x: (lambda h: (h * h + h.exp() + h.T.sum(0, keepdim=True).T).sum())(x.sigmoid() * 2 - x),
        [rand((3, 3), 26)],
    ),
}


def _mt_leaves(arrays, device):
    return [minitorch.tensor(a.astype(np.float64), requires_grad=True, device=device) for a in arrays]


def _torch_leaves(arrays):
    return [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_torch(device, name):
    fn, arrays = CASES[name]
    mt_in, th_in = _mt_leaves(arrays, device), _torch_leaves(arrays)
    mt_out = fn(minitorch, *mt_in)
    th_out = fn(torch, *th_in)
    assert tuple(mt_out.shape) == tuple(th_out.shape)
    assert mt_out.dtype == minitorch.float64 and mt_out.device == device
    np.testing.assert_allclose(to_numpy(mt_out), th_out.detach().numpy(), rtol=1e-10, atol=1e-12)

    # a non-trivial upstream gradient, the same for both
    g = np.random.default_rng(99).uniform(0.5, 1.5, size=tuple(th_out.shape))
    mt_out.backward(minitorch.tensor(g, device=device))
    th_out.backward(torch.tensor(g))
    for i, (a, b) in enumerate(zip(mt_in, th_in)):
        assert (a.grad is None) == (b.grad is None), f"leaf {i}"
        if b.grad is None:
            continue
        assert tuple(a.grad.shape) == tuple(b.grad.shape), f"leaf {i}"
        assert a.grad.device == a.device, f"leaf {i}"
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}: gradient of leaf {i}")


@pytest.mark.parametrize("name", ["mlp", "views_and_slices", "where_clamp_maximum"])
def test_autograd_grad_matches_torch(device, name):
    fn, arrays = CASES[name]
    mt_in, th_in = _mt_leaves(arrays, device), _torch_leaves(arrays)
    mt_out, th_out = fn(minitorch, *mt_in), fn(torch, *th_in)
    mt_g = minitorch.autograd.grad(mt_out.sum(), mt_in)
    th_g = torch.autograd.grad(th_out.sum(), th_in)
    for i, (a, b) in enumerate(zip(mt_g, th_g)):
        assert a.device == device, f"input {i}"
        np.testing.assert_allclose(to_numpy(a), b.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"input {i}")
    assert all(t.grad is None for t in mt_in)


def test_noncontiguous_leaf_gradients_match_torch(device):
    base = rand((5, 4), 30)
    mt_x = minitorch.tensor(base, device=device)[1::2].T.requires_grad_()  # (4, 2), strided and transposed
    th_x = torch.tensor(base)[1::2].T.clone().requires_grad_()
    assert not mt_x.is_contiguous()
    w = rand((2, 3), 31)
    mt_out = (mt_x @ minitorch.tensor(w, device=device)).sigmoid().sum(0)
    th_out = (th_x @ torch.tensor(w)).sigmoid().sum(0)
    np.testing.assert_allclose(to_numpy(mt_out), th_out.detach().numpy(), rtol=1e-12)
    mt_out.sum().backward()
    th_out.sum().backward()
    assert tuple(mt_x.grad.shape) == (4, 2) and mt_x.grad.device == mt_x.device
    np.testing.assert_allclose(to_numpy(mt_x.grad), th_x.grad.numpy(), rtol=1e-12)


def test_max_and_maximum_ties_match_torch(device):
    vals = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    mt_x = minitorch.tensor(vals, requires_grad=True, device=device)
    th_x = torch.tensor(vals, requires_grad=True)
    (mt_x.max() + minitorch.maximum(mt_x, mt_x * 0 + 2.0).sum()).backward()
    (th_x.max() + torch.maximum(th_x, th_x * 0 + 2.0).sum()).backward()
    np.testing.assert_allclose(to_numpy(mt_x.grad), th_x.grad.numpy())
