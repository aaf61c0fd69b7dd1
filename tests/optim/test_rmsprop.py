"""``optim.RMSprop``: steps against a NumPy transcription of PyTorch's update rule on every
device, state keys, argument checks, state_dict round trip, and PyTorch itself when
installed."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.optim import RMSprop
from conftest import TORCH_SKIP_REASON

CONFIGS = {
    "default": {},
    "wd": dict(weight_decay=0.1),
    "momentum": dict(momentum=0.9),
    "centered": dict(centered=True),
    "all": dict(lr=0.05, alpha=0.9, eps=1e-6, weight_decay=0.01, momentum=0.5, centered=True),
    "maximize": dict(maximize=True, momentum=0.3),
}


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def numpy_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                  maximize=False):
    p = p.copy()
    v, m, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            m = alpha * m + (1 - alpha) * g
            avg = np.sqrt(v - m * m) + eps
        else:
            avg = np.sqrt(v) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p, dict(square_avg=v, grad_avg=m, momentum_buffer=buf)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_steps_match_numpy(device, name):
    cfg = CONFIGS[name]
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) for _ in range(5)]
    p = nn.Parameter(minitorch.tensor(p0, device=device))
    opt = RMSprop([p], **cfg)
    for g in grads:
        p.grad = minitorch.tensor(g, device=device)
        opt.step()
    want, state = numpy_rmsprop(p0, grads, **cfg)
    np.testing.assert_allclose(to_np(p), want, rtol=1e-12, atol=1e-14)
    s = opt.state[id(p)]
    keys = {"step", "square_avg"} | ({"momentum_buffer"} if cfg.get("momentum", 0) > 0 else set()) | \
        ({"grad_avg"} if cfg.get("centered") else set())
    assert set(s) == keys and s["step"] == 5
    for k in keys - {"step"}:
        assert s[k].device.type == device
        np.testing.assert_allclose(to_np(s[k]), state[k], rtol=1e-12, atol=1e-14, err_msg=k)


def test_defaults_and_skipped_parameters():
    p, q = nn.Parameter(minitorch.ones(2)), nn.Parameter(minitorch.ones(2))
    opt = RMSprop([p, q])
    g = opt.param_groups[0]
    assert (g["lr"], g["alpha"], g["eps"], g["weight_decay"], g["momentum"], g["centered"]) == \
        (1e-2, 0.99, 1e-8, 0, 0, False)
    p.grad = minitorch.tensor([1.0, -2.0])
    opt.step()
    # first step: v = 0.01 g^2, so p -= lr * g / (0.1 |g| + eps) = lr * 10 * sign(g)
    np.testing.assert_allclose(to_np(p), [1 - 0.1, 1 + 0.1], rtol=1e-6)
    np.testing.assert_array_equal(to_np(q), [1.0, 1.0])  # no gradient: untouched, no state
    assert id(q) not in opt.state


@pytest.mark.parametrize("kwargs,match", [(dict(lr=-1.0), "learning rate"), (dict(eps=-1.0), "epsilon"),
                                          (dict(momentum=-0.1), "momentum"), (dict(weight_decay=-1.0), "weight_decay"),
                                          (dict(alpha=-0.5), "alpha")])
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RMSprop([nn.Parameter(minitorch.ones(2))], **kwargs)


def test_state_dict_round_trip_resumes_exactly(device):
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(4)]
    cfg = dict(momentum=0.9, centered=True)
    a = nn.Parameter(minitorch.tensor(p0, device=device))
    opt_a = RMSprop([a], **cfg)
    for g in grads:
        a.grad = minitorch.tensor(g, device=device)
        opt_a.step()
    b = nn.Parameter(minitorch.tensor(p0, device=device))
    opt_b = RMSprop([b], **cfg)
    for g in grads[:2]:
        b.grad = minitorch.tensor(g, device=device)
        opt_b.step()
    opt_c = RMSprop([b], lr=0.5)
    opt_c.load_state_dict(opt_b.state_dict())
    assert opt_c.param_groups[0]["centered"] and opt_c.param_groups[0]["lr"] == 1e-2
    for g in grads[2:]:
        b.grad = minitorch.tensor(g, device=device)
        opt_c.step()
    np.testing.assert_array_equal(to_np(b), to_np(a))


@pytest.mark.parametrize("name", list(CONFIGS))
def test_five_steps_match_torch(device, name):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    cfg = CONFIGS[name]
    ours = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4)).double().to(device)
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 4)).double()
    with torch.no_grad():
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            tp.copy_(torch.from_numpy(to_np(p)))
    opt, topt = RMSprop(ours.parameters(), **cfg), torch.optim.RMSprop(theirs.parameters(), **cfg)
    rng = np.random.default_rng(0)
    for step in range(5):
        x, y = rng.standard_normal((10, 6)), rng.integers(0, 4, 10)
        opt.zero_grad()
        nn.functional.cross_entropy(ours(minitorch.tensor(x, device=device)),
                                    minitorch.tensor(y, device=device)).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        topt.step()
        for (n, p), tp in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(to_np(p), tp.detach().numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{n} after step {step + 1}")
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        ts = topt.state[tp]
        s = opt.state[id(p)]
        assert set(s) == set(ts)
        for k in set(s) - {"step"}:
            np.testing.assert_allclose(to_np(s[k]), ts[k].numpy(), rtol=1e-9, atol=1e-12, err_msg=k)
