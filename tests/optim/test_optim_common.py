"""``Optimizer`` machinery: zero_grad, parameter groups, state_dict, argument
checks, and that steps record no graph.

Everything that steps runs once per device; the optimizer's state must stay on the
parameters' device. Argument checks and ``repr`` are device-independent."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.optim import SGD, Adam, AdamW, RMSprop

OPTIMIZERS = {
    "sgd": lambda ps, **kw: SGD(ps, **{"lr": 0.1, **kw}),
    "sgd_momentum": lambda ps, **kw: SGD(ps, **{"lr": 0.1, "momentum": 0.9, **kw}),
    "adam": lambda ps, **kw: Adam(ps, **{"lr": 0.01, **kw}),
    "adamw": lambda ps, **kw: AdamW(ps, **{"lr": 0.01, **kw}),
    "rmsprop_centered_momentum": lambda ps, **kw: RMSprop(ps, **{"lr": 0.01, "momentum": 0.9, "centered": True, **kw}),
}
# State tensors for model()'s 4 parameters: a momentum buffer each, Adam's two moments, or
# RMSprop's square_avg, grad_avg and momentum_buffer.
STATE_TENSORS = {"sgd": 0, "sgd_momentum": 4, "adam": 8, "adamw": 8, "rmsprop_centered_momentum": 12}


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def model(device="cpu", seed=0):
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3)).to(device)


def state_tensors(opt, device) -> list:
    """The optimizer's state tensors (momentum buffers, Adam moments), after checking
    that each lives on ``device``, the parameters' device."""
    tensors = [(k, v) for s in opt.state.values() for k, v in s.items() if isinstance(v, minitorch.Tensor)]
    for k, v in tensors:
        assert v.device == device, f"state {k!r} is on {v.device}, the parameters on {device}"
    return [v for _, v in tensors]


X = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
Y = np.random.default_rng(1).integers(0, 3, 8).astype(np.int64)


def loss_of(m):
    device = next(m.parameters()).device  # the data goes where the model is
    return nn.functional.cross_entropy(m(minitorch.tensor(X, device=device)), minitorch.tensor(Y, device=device))


def train_steps(m, opt, n):
    losses = []
    for _ in range(n):
        opt.zero_grad()
        loss = loss_of(m)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_training_reduces_loss(name, device):
    m = model(device)
    opt = OPTIMIZERS[name](m.parameters())
    losses = train_steps(m, opt, 30)
    assert losses[-1] < 0.8 * losses[0]
    assert all(p.device == device for p in m.parameters())
    assert len(state_tensors(opt, device)) == STATE_TENSORS[name]


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_zero_grad_set_to_none(name, device):
    m = model(device)
    opt = OPTIMIZERS[name](m.parameters())
    loss_of(m).backward()
    assert all(p.grad is not None for p in m.parameters())
    opt.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in m.parameters())


def test_zero_grad_set_to_zero(device):
    m = model(device)
    opt = SGD(m.parameters(), lr=0.1)
    loss_of(m).backward()
    opt.zero_grad(set_to_none=False)
    for p in m.parameters():
        assert p.grad is not None and p.grad.device == device
        np.testing.assert_array_equal(to_np(p.grad), np.zeros(tuple(p.shape), np.float32))
    # a step on zero gradients leaves plain SGD's parameters unchanged
    before = [to_np(p) for p in m.parameters()]
    opt.step()
    for b, p in zip(before, m.parameters()):
        np.testing.assert_array_equal(to_np(p), b)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_step_records_no_graph(name, device):
    m = model(device)
    opt = OPTIMIZERS[name](m.parameters(), weight_decay=0.1)
    before = [to_np(p) for p in m.parameters()]
    train_steps(m, opt, 2)
    for b, p in zip(before, m.parameters()):
        assert isinstance(p, nn.Parameter)
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
        assert not np.array_equal(to_np(p), b)  # it did update
    for s in opt.state.values():
        for v in s.values():
            if isinstance(v, minitorch.Tensor):
                assert v.grad_fn is None and not v.requires_grad
    assert len(state_tensors(opt, device)) == STATE_TENSORS[name]
    assert minitorch.is_grad_enabled()


def test_params_without_grad_are_skipped(device):
    a = nn.Parameter(minitorch.ones(3, device=device))
    b = nn.Parameter(minitorch.ones(3, device=device))
    opt = Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.grad is None
    np.testing.assert_array_equal(to_np(b), np.ones(3, np.float32))
    assert not np.array_equal(to_np(a), np.ones(3, np.float32))
    assert id(b) not in opt.state
    assert len(state_tensors(opt, device)) == 2


def test_param_groups_different_lr(device):
    a = nn.Parameter(minitorch.tensor(np.ones(3), device=device))
    b = nn.Parameter(minitorch.tensor(np.ones(2), device=device))
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.0)
    assert len(opt.param_groups) == 2
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.0  # defaults fill in the rest
    a.grad = minitorch.tensor(np.full(3, 2.0), device=device)
    b.grad = minitorch.tensor(np.full(2, 2.0), device=device)
    opt.step()
    np.testing.assert_allclose(to_np(a), np.full(3, 1 - 0.1 * 2), rtol=1e-12)
    np.testing.assert_allclose(to_np(b), np.full(2, 1 - 0.5 * 2), rtol=1e-12)
    # changing a group's lr (what schedulers do) takes effect on the next step
    opt.param_groups[0]["lr"] = 0.0
    opt.step()
    np.testing.assert_allclose(to_np(a), np.full(3, 0.8), rtol=1e-12)
    np.testing.assert_allclose(to_np(b), np.full(2, -1.0), rtol=1e-12)


def test_add_param_group_and_duplicates():
    a = nn.Parameter(minitorch.ones(1))
    b = nn.Parameter(minitorch.ones(1))
    opt = Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.2})
    assert opt.param_groups[1]["params"] == [b]
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


@pytest.mark.parametrize("checkpoint", ["checkpoint_on_device", "checkpoint_on_cpu"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_state_dict_round_trip(name, device, checkpoint):
    """Save the state through NumPy (as to a file) and load it into a fresh optimizer.
    A checkpoint read onto the CPU loads into parameters on any device, like PyTorch's
    ``load_state_dict``, which moves the state to each parameter's device."""
    m1 = model(device)
    opt1 = OPTIMIZERS[name](m1.parameters())
    train_steps(m1, opt1, 3)
    sd = opt1.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert sd["param_groups"][0]["lr"] == opt1.param_groups[0]["lr"]
    if name != "sgd":  # plain SGD keeps no state
        assert set(sd["state"]) == {0, 1, 2, 3}
    sd = copy.deepcopy({"state": {k: {kk: (to_np(vv) if isinstance(vv, minitorch.Tensor) else vv)
                                      for kk, vv in v.items()} for k, v in sd["state"].items()},
                        "param_groups": sd["param_groups"]})
    where = device if checkpoint == "checkpoint_on_device" else "cpu"
    sd["state"] = {k: {kk: (minitorch.tensor(vv, device=where) if isinstance(vv, np.ndarray) else vv)
                       for kk, vv in v.items()} for k, v in sd["state"].items()}

    # a fresh model + optimizer, loaded with the same weights and optimizer state ...
    m2 = model(device, seed=1)
    m2.load_state_dict(m1.state_dict())
    opt2 = OPTIMIZERS[name](m2.parameters(), lr=123.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == opt1.param_groups[0]["lr"]
    assert len(state_tensors(opt2, device)) == STATE_TENSORS[name]
    # ... continues exactly like the original
    train_steps(m1, opt1, 2)
    train_steps(m2, opt2, 2)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(to_np(p2), to_np(p1), rtol=1e-6, atol=1e-7)
    assert len(state_tensors(opt2, device)) == STATE_TENSORS[name]


def test_load_state_dict_wrong_group_sizes():
    m = model()
    opt = SGD(m.parameters(), lr=0.1)
    sd = opt.state_dict()
    sd["param_groups"][0]["params"] = [0, 1]
    with pytest.raises(ValueError, match="different number"):
        opt.load_state_dict(sd)


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW])
def test_invalid_lr(cls):
    p = nn.Parameter(minitorch.ones(2))
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        cls([p], lr=-0.1)


def test_invalid_hyperparameters():
    p = nn.Parameter(minitorch.ones(2))
    with pytest.raises(ValueError, match="momentum"):
        SGD([p], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="weight_decay"):
        SGD([p], lr=0.1, weight_decay=-1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta"):
        Adam([p], betas=(1.0, 0.999))
    with pytest.raises(ValueError, match="beta"):
        Adam([p], betas=(0.9, -0.1))
    with pytest.raises(ValueError, match="epsilon"):
        Adam([p], eps=-1e-8)


def test_invalid_params_argument():
    with pytest.raises(TypeError, match="got a Tensor"):
        SGD(nn.Parameter(minitorch.ones(2)), lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        SGD([1.0], lr=0.1)
    x = minitorch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf"):
        SGD([x * 2], lr=0.1)


def test_step_with_closure_returns_loss(device):
    m = model(device)
    opt = SGD(m.parameters(), lr=0.1)

    def closure():
        opt.zero_grad()
        loss = loss_of(m)
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert isinstance(loss, minitorch.Tensor)
    assert loss.item() > loss_of(m).item()


def test_repr_lists_groups():
    opt = SGD([nn.Parameter(minitorch.ones(1))], lr=0.1, momentum=0.9)
    r = repr(opt)
    assert r.startswith("SGD (\nParameter Group 0\n")
    assert "    lr: 0.1\n" in r and "    momentum: 0.9\n" in r and r.endswith("\n)")
