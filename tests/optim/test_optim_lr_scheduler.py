"""Learning-rate schedules: values against their formulas (and PyTorch when installed; every
schedule against PyTorch's own sequences: test_lr_scheduler_golden.py).

The schedules are plain arithmetic on ``param_groups`` and run once; the test that a
scheduled lr drives the optimizer's steps runs on every device."""
import math

import numpy as np
import pytest

import minitorch
from conftest import TORCH_SKIP_REASON, to_numpy


def make_opt(lr=0.1):
    p = minitorch.nn.Parameter(minitorch.zeros(2))
    return minitorch.optim.SGD([p], lr=lr, momentum=0.9)


def test_cosine_annealing_follows_half_a_cosine():
    opt = make_opt(0.1)
    sched = minitorch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.001)
    seen = []
    for _ in range(12):
        opt.step()
        sched.step()
        seen.append(opt.param_groups[0]["lr"])
    for t, lr in enumerate(seen, start=1):  # past T_max the cosine rises again, as PyTorch's
        expected = 0.001 + (0.1 - 0.001) * (1 + math.cos(math.pi * t / 10)) / 2
        assert lr == pytest.approx(expected, rel=1e-12)
    assert seen[9] == pytest.approx(0.001) and sched.get_last_lr() == [seen[-1]]


def test_step_lr_multiplies_every_step_size():
    opt = make_opt(1.0)
    sched = minitorch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    lrs = []
    for _ in range(7):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25]


@pytest.mark.parametrize("make_sched", [
    lambda opt: minitorch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5),
    lambda opt: minitorch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.1),
], ids=["step", "cosine"])
def test_scheduled_lr_drives_the_steps(make_sched, device):
    # SGD with momentum on a constant gradient of ones: buf = 0.9 * buf + 1, p -= lr * buf
    p = minitorch.nn.Parameter(minitorch.zeros(3, dtype=minitorch.float64, device=device))
    opt = minitorch.optim.SGD([p], lr=1.0, momentum=0.9)
    sched = make_sched(opt)
    expected, buf = 0.0, 0.0
    for _ in range(6):
        lr = opt.param_groups[0]["lr"]
        p.grad = minitorch.ones(3, dtype=minitorch.float64, device=device)
        opt.step()
        sched.step()
        buf = 0.9 * buf + 1.0
        expected -= lr * buf
        np.testing.assert_allclose(to_numpy(p), np.full(3, expected), rtol=1e-14)
    assert p.device == device
    (state,) = opt.state.values()
    assert state["momentum_buffer"].device == device


def test_invalid_arguments():
    with pytest.raises(ValueError, match="T_max"):
        minitorch.optim.lr_scheduler.CosineAnnealingLR(make_opt(), T_max=0)
    with pytest.raises(ValueError, match="step_size"):
        minitorch.optim.lr_scheduler.StepLR(make_opt(), step_size=0)


def test_cosine_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    opt = make_opt(0.05)
    sched = minitorch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7)
    p = torch.zeros(2, requires_grad=True)
    topt = torch.optim.SGD([p], lr=0.05, momentum=0.9)
    tsched = torch.optim.lr_scheduler.CosineAnnealingLR(topt, T_max=7)
    for _ in range(7):
        opt.step()
        sched.step()
        topt.step()
        tsched.step()
        assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"], rel=1e-9, abs=1e-15)
