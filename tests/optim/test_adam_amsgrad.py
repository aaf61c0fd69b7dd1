"""Adam/AdamW ``amsgrad=`` and ``maximize=`` against NumPy (PyTorch's formulas), on every
device; an LR scheduler's ``state_dict`` round trip. (tests/zoo/programs/mlp_pipeline.py
trains with AMSGrad and reloads a scheduler against PyTorch.)"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import optim


def np_adam(p, grads, lr, b1, b2, eps, wd, amsgrad, maximize, decoupled):
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if wd:
            if decoupled:
                p = p * (1 - lr * wd)
            else:
                g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt((vmax if amsgrad else v) / (1 - b2 ** t)) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
@pytest.mark.parametrize("amsgrad,maximize", [(True, False), (False, True), (True, True)])
def test_amsgrad_and_maximize(device, cls, amsgrad, maximize):
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) * s for s in (3.0, 0.1, 0.1, 2.0)]  # v shrinks, then grows: vmax matters
    p = minitorch.tensor(p0, device=device, requires_grad=True)
    opt = cls([p], lr=0.1, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.05, amsgrad=amsgrad, maximize=maximize)
    for g in grads:
        p.grad = minitorch.tensor(g, device=device)
        opt.step()
    want = np_adam(p0, grads, 0.1, 0.9, 0.99, 1e-8, 0.05, amsgrad, maximize, cls is optim.AdamW)
    np.testing.assert_allclose(p.detach().cpu().numpy(), want, rtol=1e-10, atol=1e-12)
    group = opt.state_dict()["param_groups"][0]
    assert group["amsgrad"] is amsgrad and group["maximize"] is maximize


def test_scheduler_state_dict_round_trip():
    p = minitorch.zeros(2, requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3 and state["base_lrs"] == [1.0]
    opt2 = optim.SGD([p], lr=opt.param_groups[0]["lr"])
    sched2 = optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    sched2.load_state_dict(state)
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr() == [0.25]
