"""A small MLP's forward pass, loss and gradients against PyTorch with the same weights,
on every minitorch device (PyTorch itself runs on its CPU).

Skipped when PyTorch is not installed (it is not a minitorch dependency).
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from conftest import TORCH_SKIP_REASON

torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


ACTS = {"relu": (nn.ReLU, torch.nn.ReLU), "sigmoid": (nn.Sigmoid, torch.nn.Sigmoid), "tanh": (nn.Tanh, torch.nn.Tanh)}


def pair(act: str, dtype, device: str):
    ours_act, torch_act = ACTS[act]
    ours = nn.Sequential(nn.Flatten(), nn.Linear(16, 12), ours_act(), nn.Linear(12, 5)).to(device)
    theirs = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 12), torch_act(), torch.nn.Linear(12, 5))
    if dtype == np.float64:
        ours.double()
        theirs.double()
    with torch.no_grad():
        for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == tn
            tp.copy_(torch.from_numpy(to_np(p)))
    return ours, theirs


@pytest.mark.parametrize("act", list(ACTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_log_softmax", "mse"])
def test_mlp_forward_and_gradients_match_torch(device, act, dtype, loss):
    ours, theirs = pair(act, dtype, device)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4, 4)).astype(dtype)
    y = rng.integers(0, 5, 6).astype(np.int64)
    y_reg = rng.standard_normal((6, 5)).astype(dtype)

    out_m = ours(minitorch.tensor(x, device=device))
    out_t = theirs(torch.from_numpy(x))
    if loss == "cross_entropy":
        l_m = nn.CrossEntropyLoss()(out_m, minitorch.tensor(y, device=device))
        l_t = torch.nn.CrossEntropyLoss()(out_t, torch.from_numpy(y))
    elif loss == "nll_log_softmax":
        l_m = nn.NLLLoss()(nn.LogSoftmax(dim=1)(out_m), minitorch.tensor(y, device=device))
        l_t = torch.nn.NLLLoss()(torch.nn.LogSoftmax(dim=1)(out_t), torch.from_numpy(y))
    else:
        l_m = nn.MSELoss()(out_m, minitorch.tensor(y_reg, device=device))
        l_t = torch.nn.MSELoss()(out_t, torch.from_numpy(y_reg))
    assert out_m.device.type == device and l_m.device.type == device
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_np(out_m), out_t.detach().numpy(), **tol)
    np.testing.assert_allclose(to_np(l_m), l_t.detach().numpy(), **tol)

    l_m.backward()
    l_t.backward()
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert p.grad is not None, n
        assert p.grad.dtype == p.dtype and p.grad.device == p.device, n
        np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), err_msg=n, **tol)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_losses_match_torch(device, reduction):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 4))
    t = np.array([0, 3, -100, 1, 2, 2, -100], np.int64)
    p = rng.uniform(0.01, 0.99, (7, 4))
    tb = rng.uniform(0, 1, (7, 4))
    F, TF = nn.functional, torch.nn.functional

    def ours(a):
        return minitorch.tensor(a, device=device)

    pairs = [
        (F.cross_entropy(ours(x), ours(t), reduction=reduction),
         TF.cross_entropy(torch.from_numpy(x), torch.from_numpy(t), reduction=reduction)),
        (F.nll_loss(ours(x), ours(t), reduction=reduction),
         TF.nll_loss(torch.from_numpy(x), torch.from_numpy(t), reduction=reduction)),
        (F.binary_cross_entropy(ours(p), ours(tb), reduction=reduction),
         TF.binary_cross_entropy(torch.from_numpy(p), torch.from_numpy(tb), reduction=reduction)),
        (F.binary_cross_entropy_with_logits(ours(x * 50), ours(tb), reduction=reduction),
         TF.binary_cross_entropy_with_logits(torch.from_numpy(x * 50), torch.from_numpy(tb), reduction=reduction)),
        (F.mse_loss(ours(x), ours(p), reduction=reduction),
         TF.mse_loss(torch.from_numpy(x), torch.from_numpy(p), reduction=reduction)),
    ]
    for i, (a, b) in enumerate(pairs):
        np.testing.assert_allclose(to_np(a), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=str(i))
