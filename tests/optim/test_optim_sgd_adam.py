"""SGD, Adam and AdamW against hand-written NumPy updates (PyTorch's update rules),
over several steps with gradients that depend on the parameters, on every device;
the optimizer's state lives on the parameters' device."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn

# A quadratic with a known gradient: loss = sum(c * p**2) / 2 + sum(d * p)  ->  grad = c * p + d
C = np.array([[0.5, 2.0, 1.0], [3.0, 0.1, 1.5]])
D = np.array([[0.3, -1.0, 0.2], [-0.7, 0.4, 1.1]])
P0 = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]])


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def grad_np(p):
    return C * p + D


def backward(param):
    c, d = minitorch.tensor(C, device=param.device), minitorch.tensor(D, device=param.device)
    loss = (c * param * param).sum() / 2 + (d * param).sum()
    loss.backward()
    return loss


def run_minitorch(make_opt, device, steps: int = 3, p0=P0):
    param = nn.Parameter(minitorch.tensor(p0.copy(), device=device))
    opt = make_opt([param])
    history = []
    for _ in range(steps):
        opt.zero_grad()
        backward(param)
        assert param.grad.device == device
        np.testing.assert_allclose(to_np(param.grad), grad_np(to_np(param)), rtol=1e-12)
        opt.step()
        assert param.device == device
        history.append(to_np(param))
    return param, opt, history


def state_of(opt, device) -> dict:
    """The state of the optimizer's only parameter, after checking that its tensors
    (momentum buffer, Adam moments) live on ``device``, like the parameter."""
    (state,) = opt.state.values()
    for k, v in state.items():
        if isinstance(v, minitorch.Tensor):
            assert v.device == device, f"state {k!r} is on {v.device}, the parameter on {device}"
    return state


def sgd_np(steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, p0=P0):
    p, buf, out = p0.copy(), None, []
    for _ in range(steps):
        d = grad_np(p) + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
        out.append(p.copy())
    return out


def adam_np(steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False, p0=P0):
    b1, b2 = betas
    p, m, v, out = p0.copy(), np.zeros_like(p0), np.zeros_like(p0), []
    for t in range(1, steps + 1):
        g = grad_np(p)
        if weight_decay:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(p.copy())
    return out


SGD_CASES = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.1, momentum=0.9),
    "nesterov": dict(lr=0.05, momentum=0.9, nesterov=True),
    "weight_decay": dict(lr=0.1, weight_decay=0.01),
    "dampening": dict(lr=0.1, momentum=0.8, dampening=0.3),
    "all": dict(lr=0.02, momentum=0.5, weight_decay=0.1, nesterov=True),
}


@pytest.mark.parametrize("case", list(SGD_CASES))
def test_sgd_matches_numpy(case, device):
    kw = SGD_CASES[case]
    _, _, got = run_minitorch(lambda ps: minitorch.optim.SGD(ps, **kw), device, steps=3)
    expected = sgd_np(3, **kw)
    for step, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=f"step {step + 1}")


def test_sgd_momentum_buffer_state(device):
    _, opt, _ = run_minitorch(lambda ps: minitorch.optim.SGD(ps, lr=0.1, momentum=0.9), device, steps=2)
    state = state_of(opt, device)
    p1 = sgd_np(1, 0.1, 0.9)[0]
    expected_buf = 0.9 * grad_np(P0) + grad_np(p1)
    np.testing.assert_allclose(to_np(state["momentum_buffer"]), expected_buf, rtol=1e-12)


ADAM_CASES = {
    "default": dict(lr=1e-3),
    "lr_betas": dict(lr=0.1, betas=(0.8, 0.99)),
    "eps": dict(lr=0.05, eps=1e-2),
    "l2": dict(lr=0.1, weight_decay=0.1),
}


@pytest.mark.parametrize("case", list(ADAM_CASES))
def test_adam_matches_numpy(case, device):
    kw = ADAM_CASES[case]
    _, opt, got = run_minitorch(lambda ps: minitorch.optim.Adam(ps, **kw), device, steps=3)
    expected = adam_np(3, **kw)
    for step, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"step {step + 1}")
    state = state_of(opt, device)
    assert state["step"] == 3


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, weight_decay=0.5), dict(lr=0.01, weight_decay=0.0)])
def test_adamw_matches_numpy(kw, device):
    _, _, got = run_minitorch(lambda ps: minitorch.optim.AdamW(ps, **kw), device, steps=3)
    expected = adam_np(3, weight_decay=kw.get("weight_decay", 1e-2), decoupled=True, lr=kw["lr"])
    for step, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"step {step + 1}")


def test_adamw_differs_from_adam_l2(device):
    _, _, a = run_minitorch(lambda ps: minitorch.optim.Adam(ps, lr=0.1, weight_decay=0.5), device, steps=3)
    _, _, w = run_minitorch(lambda ps: minitorch.optim.AdamW(ps, lr=0.1, weight_decay=0.5), device, steps=3)
    assert not np.allclose(a[-1], w[-1])


def test_adam_first_step_is_lr_times_sign(device):
    # With bias correction, the first Adam step has size ~lr in every coordinate.
    _, _, got = run_minitorch(lambda ps: minitorch.optim.Adam(ps, lr=0.01), device, steps=1)
    np.testing.assert_allclose(got[0], P0 - 0.01 * np.sign(grad_np(P0)), rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda ps: minitorch.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: minitorch.optim.Adam(ps, lr=0.1),
], ids=["sgd", "adam"])
def test_float32_params_stay_float32(make, device):
    param = nn.Parameter(minitorch.tensor(P0.astype(np.float32), device=device))
    opt = make([param])
    for _ in range(2):
        opt.zero_grad()
        (param * param).sum().backward()
        opt.step()
    assert param.dtype == minitorch.float32 and param.device == device
    assert all(v.dtype == minitorch.float32 for v in state_of(opt, device).values() if isinstance(v, minitorch.Tensor))
