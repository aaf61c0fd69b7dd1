"""``optim.Adagrad``, ``Adamax``, ``NAdam``, ``RAdam``, ``Adadelta``, ``Rprop``, ``ASGD`` and
``LBFGS`` against PyTorch and against NumPy, on every device.

- PyTorch's results are in golden_optim.npz (make_golden_optim.py writes it with PyTorch 1.13,
  for the cases in its CASES): the parameters of a small float64 MLP after every step, the
  losses, and the state after the last step. PyTorch is not needed here; when it is installed,
  the same runs are also compared with it directly, with the options 1.13 lacks too.
- NumPy transcriptions of PyTorch 2.11's update rules check every optimizer but LBFGS on
  synthetic gradients, the options newer than 1.13 (NAdam / RAdam ``decoupled_weight_decay``
  and ``maximize``) included, and the scalar state that PyTorch rounds to float32.
- Then state_dict round trips, state keys, repr, argument errors, parameters without a
  gradient, ``maximize``, that steps record no graph, and LBFGS's closure handling.
"""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.optim import ASGD, LBFGS, Adadelta, Adagrad, Adamax, NAdam, RAdam, Rprop
from conftest import TORCH_SKIP_REASON

from make_golden_optim import CASES, GOLDEN, LBFGS_STATE, SCALAR_STATE, SIZES, cases_json, run_torch

OPTIMIZERS = {cls.__name__: cls for cls in (Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD, LBFGS)}
# PyTorch 2.11's state keys.
STATE_KEYS = {
    "Adagrad": {"step", "sum"},
    "Adamax": {"step", "exp_avg", "exp_inf"},
    "NAdam": {"step", "mu_product", "exp_avg", "exp_avg_sq"},
    "RAdam": {"step", "exp_avg", "exp_avg_sq"},
    "Adadelta": {"step", "square_avg", "acc_delta"},
    "Rprop": {"step", "prev", "step_size"},
    "ASGD": {"step", "eta", "mu", "ax"},
    "LBFGS": {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
              "prev_loss", "al"},
}
# Options PyTorch 1.13 does not have: compared with PyTorch only when a newer one is installed
# (and with NumPy below, always).
NEWER_CASES = {
    "nadam_decoupled": ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True), 5, {}),
    "nadam_maximize": ("NAdam", dict(maximize=True, weight_decay=0.05), 5, {}),
    "radam_decoupled": ("RAdam", dict(lr=0.01, betas=(0.9, 0.8), weight_decay=0.1, decoupled_weight_decay=True),
                        9, {}),
    "radam_maximize": ("RAdam", dict(lr=0.01, betas=(0.9, 0.8), maximize=True), 9, {}),
}
RTOL, ATOL = 1e-10, 1e-12
# LBFGS runs up to 40 quasi-Newton iterations in a case, its parameters grow to ~40, and
# 1e-16 differences (summation orders in dot products and matmuls) grow with them.
LBFGS_RTOL = 1e-8

GOLDEN_ARRAYS = np.load(GOLDEN)
INIT = [GOLDEN_ARRAYS[f"init/{i}"] for i in range(4)]
X, Y = GOLDEN_ARRAYS["data/x"], GOLDEN_ARRAYS["data/y"]


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def make_model(device):
    (a, b, c) = SIZES
    model = nn.Sequential(nn.Linear(a, b), nn.Tanh(), nn.Linear(b, c)).double().to(device)
    with minitorch.no_grad():
        for p, w in zip(model.parameters(), INIT):
            p.copy_(minitorch.tensor(w, device=device))
    return model


def closure_for(model, opt, device):
    x, y = minitorch.tensor(X, device=device), minitorch.tensor(Y, device=device)

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss
    return closure


def train(model, opt, closure, steps: int) -> list[float]:
    losses = []
    for _ in range(steps):
        if isinstance(opt, LBFGS):
            loss = opt.step(closure)
        else:
            loss = closure()
            opt.step()
        losses.append(loss.item())
    return losses


def run_minitorch(case, device) -> dict:
    """The minitorch twin of make_golden_optim.run_torch: the same arrays."""
    optimizer, kwargs, steps, _ = case
    model = make_model(device)
    params = list(model.parameters())
    opt = OPTIMIZERS[optimizer](params, **kwargs)
    closure = closure_for(model, opt, device)
    rows, losses = [], []
    for _ in range(steps):
        losses += train(model, opt, closure, 1)
        rows.append(np.concatenate([to_np(p).reshape(-1) for p in params]))
    out = {"params": np.stack(rows), "loss": np.array(losses)}
    state = opt.state[id(params[0])]
    assert set(state) == STATE_KEYS[optimizer]
    if optimizer == "LBFGS":
        for key in LBFGS_STATE:
            out[f"state/{key}"] = np.array(float(state[key]))
        return out
    for key in state:
        values = [opt.state[id(p)][key] for p in params]
        if key in SCALAR_STATE:
            assert all(isinstance(v, (int, float)) for v in values), key
            out[f"state/{key}"] = np.array([float(v) for v in values])
        else:
            assert all(v.device == device and v.dtype == minitorch.float64 for v in values), key
            out[f"state/{key}"] = np.concatenate([to_np(v).reshape(-1) for v in values])
    return out


def assert_same_run(ours: dict, theirs: dict, where: str, rtol: float = RTOL) -> None:
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=rtol, err_msg=f"{where}: losses")
    assert ours["params"].shape == theirs["params"].shape
    for step, (a, b) in enumerate(zip(ours["params"], theirs["params"]), 1):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=ATOL, err_msg=f"{where}: parameters after step {step}")
    keys = {k for k in theirs if k.startswith("state/")}
    assert {k for k in ours if k.startswith("state/")} == keys, where
    for k in keys:
        if k in ("state/step", "state/func_evals", "state/n_iter", "state/eta", "state/mu", "state/mu_product"):
            # counts, and the scalars PyTorch rounds to float32: the very same numbers
            np.testing.assert_array_equal(ours[k], theirs[k], err_msg=f"{where}: {k}")
        elif k in ("state/t", "state/H_diag"):
            # LBFGS's H_diag = y.s / y.y, y a difference of gradients: 1e-16 differences in the
            # gradients (summation order) come back amplified
            np.testing.assert_allclose(ours[k], theirs[k], rtol=LBFGS_RTOL, err_msg=f"{where}: {k}")
        else:
            np.testing.assert_allclose(ours[k], theirs[k], rtol=rtol, atol=ATOL, err_msg=f"{where}: {k}")


# ------------------------------------------------------------------ PyTorch ----

def test_golden_file_is_current():
    assert str(GOLDEN_ARRAYS["cases"]) == cases_json(), "CASES changed: run make_golden_optim.py"
    golden_cases = {k.split("/")[0] for k in GOLDEN_ARRAYS.files if "/" in k} - {"init", "data"}
    assert golden_cases == set(CASES)
    assert {c[0] for c in CASES.values()} == set(OPTIMIZERS)  # every optimizer has golden cases


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_golden(name, device):
    theirs = {k.removeprefix(f"{name}/"): GOLDEN_ARRAYS[k] for k in GOLDEN_ARRAYS.files if k.startswith(f"{name}/")}
    rtol = LBFGS_RTOL if CASES[name][0] == "LBFGS" else RTOL
    assert_same_run(run_minitorch(CASES[name], device), theirs, f"{name} on {device}", rtol)


@pytest.mark.parametrize("name", list(CASES) + list(NEWER_CASES))
def test_matches_pytorch_live(name, device):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    case = CASES.get(name) or NEWER_CASES[name]
    torch.set_num_threads(1)
    try:
        theirs = run_torch(torch, case)
    except TypeError as e:  # an option this PyTorch does not have (decoupled_weight_decay before 2.x)
        pytest.skip(f"PyTorch {torch.__version__} lacks an option of {name}: {e}")
    rtol = LBFGS_RTOL if case[0] == "LBFGS" else RTOL
    assert_same_run(run_minitorch(case, device), theirs, f"{name} on {device} (PyTorch {torch.__version__})", rtol)


# -------------------------------------------------------------------- NumPy ----
# PyTorch 2.11's for-loop steps (torch/optim/<name>.py, _single_tensor_*), in NumPy. Scalars that
# PyTorch keeps in float32 0-dim tensors go through f32.

def f32(x) -> float:
    return float(np.float32(x))


def np_adagrad(p, grads, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
               maximize=False, **_):
    total = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        total = total + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(total) + eps)
    return p, {"step": len(grads), "sum": total}


def np_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False, **_):
    (b1, b2), m, u = betas, np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1 ** t) * m / u
    return p, {"step": len(grads), "exp_avg": m, "exp_inf": u}


def np_nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
             decoupled_weight_decay=False, maximize=False, **_):
    (b1, b2), m, v, prod = betas, np.zeros_like(p), np.zeros_like(p), 1.0
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        prod = f32(prod * f32(mu))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2 ** t)) + eps
        p = p - lr * (1 - mu) / (1 - prod) * g / denom - lr * mu_next / (1 - prod * mu_next) * m / denom
    return p, {"step": len(grads), "mu_product": prod, "exp_avg": m, "exp_avg_sq": v}


def np_radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
             maximize=False, **_):
    (b1, b2), m, v = betas, np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * rect * np.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
    return p, {"step": len(grads), "exp_avg": m, "exp_avg_sq": v}


def np_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False, **_):
    v, u = np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        dx = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * dx * dx
        p = p - lr * dx
    return p, {"step": len(grads), "square_avg": v, "acc_delta": u}


def np_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False, **_):
    prev, size = np.zeros_like(p), np.full_like(p, lr)
    for g in grads:
        g = -g if maximize else g
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)), *step_sizes)
        g = np.where(s < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
    return p, {"step": len(grads), "prev": prev, "step_size": size}


def np_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False, **_):
    eta, mu, ax = f32(lr), 1.0, np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax) if mu != 1 else p
        eta = f32(lr / (1 + lambd * lr * t) ** alpha)
        mu = f32(1 / max(1, t - t0))
    return p, {"step": len(grads), "eta": eta, "mu": mu, "ax": ax}


NUMPY = {"Adagrad": np_adagrad, "Adamax": np_adamax, "NAdam": np_nadam, "RAdam": np_radam, "Adadelta": np_adadelta,
         "Rprop": np_rprop, "ASGD": np_asgd}
NUMPY_CASES = {
    "adagrad": ("Adagrad", {}),
    "adagrad_all": ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    "adagrad_maximize_foreach": ("Adagrad", dict(maximize=True, foreach=True)),
    "adagrad_fused": ("Adagrad", dict(lr=0.1, fused=True)),
    "adamax": ("Adamax", {}),
    "adamax_all": ("Adamax", dict(lr=0.05, betas=(0.5, 0.9), eps=1e-3, weight_decay=0.1, maximize=True,
                                  capturable=True)),
    "nadam": ("NAdam", {}),
    "nadam_decoupled": ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    "nadam_maximize_l2": ("NAdam", dict(lr=0.05, weight_decay=0.05, maximize=True)),
    "nadam_momentum_decay": ("NAdam", dict(momentum_decay=0.1, betas=(0.8, 0.9), eps=1e-4, capturable=True)),
    "radam": ("RAdam", {}),
    "radam_decoupled": ("RAdam", dict(lr=0.05, betas=(0.9, 0.8), weight_decay=0.1, decoupled_weight_decay=True)),
    "radam_maximize_l2": ("RAdam", dict(lr=0.05, betas=(0.9, 0.8), weight_decay=0.05, maximize=True, eps=1e-4)),
    "adadelta": ("Adadelta", {}),
    "adadelta_all": ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-4, weight_decay=0.1, maximize=True)),
    "rprop": ("Rprop", {}),
    "rprop_all": ("Rprop", dict(lr=0.1, etas=(0.2, 1.3), step_sizes=(0.01, 0.2), maximize=True)),
    "asgd": ("ASGD", {}),
    "asgd_all": ("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.6, t0=3, weight_decay=0.1, maximize=True)),
}
NUMPY_STEPS = 10  # RAdam's rectified branch from step 7 (betas[1] = 0.8) / 8 (0.999)


def synthetic(seed=0, shape=(3, 4), steps=NUMPY_STEPS):
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(steps)]
    for g in grads[::3]:  # exact zeros: Rprop's sign(g * prev) == 0 branch
        g[0, :2] = 0.0
    return p0, grads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_steps_match_numpy(name, dtype, device):
    optimizer, kwargs = NUMPY_CASES[name]
    p0, grads = synthetic()
    p = nn.Parameter(minitorch.tensor(p0.astype(dtype), device=device))
    opt = OPTIMIZERS[optimizer]([p], **kwargs)
    for g in grads:
        p.grad = minitorch.tensor(g.astype(dtype), device=device)
        opt.step()
    if dtype == np.float32:
        grads = [g.astype(np.float32).astype(np.float64) for g in grads]
        p0 = p0.astype(np.float32).astype(np.float64)
    want, want_state = NUMPY[optimizer](p0, grads, **kwargs)
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(to_np(p), want, **tol, err_msg=name)
    state = opt.state[id(p)]
    assert set(state) == STATE_KEYS[optimizer] == set(want_state)
    for k, v in want_state.items():
        if k in SCALAR_STATE:
            assert state[k] == v, k  # the step count, and scalars rounded as PyTorch's float32 ones
        else:
            assert state[k].device == device and state[k].dtype == p.dtype, k
            np.testing.assert_allclose(to_np(state[k]), v, **tol, err_msg=f"{name}: {k}")


def test_radam_rectification_starts_when_rho_exceeds_5(device):
    """With betas[1] = 0.8, rho_t > 5 from step 7: steps 1-6 are momentum SGD, lr * m_hat."""
    p0, grads = synthetic(seed=3)
    p = nn.Parameter(minitorch.tensor(p0, device=device))
    opt = RAdam([p], lr=0.1, betas=(0.9, 0.8))
    m = np.zeros_like(p0)
    want = p0.copy()
    for t, g in enumerate(grads[:6], 1):
        p.grad = minitorch.tensor(g, device=device)
        opt.step()
        m = 0.9 * m + 0.1 * g
        want = want - 0.1 * m / (1 - 0.9 ** t)
        np.testing.assert_allclose(to_np(p), want, rtol=1e-12, err_msg=f"step {t}")
    p.grad = minitorch.tensor(grads[6], device=device)
    opt.step()
    assert not np.allclose(to_np(p), want - 0.1 * (0.9 * m + 0.1 * grads[6]) / (1 - 0.9 ** 7))


# ------------------------------------------------------------ the machinery ----

def numpy_checkpoint(sd: dict) -> dict:
    """A state_dict with its tensors (also those in lists) as NumPy arrays, as if saved."""
    def conv(v):
        if isinstance(v, minitorch.Tensor):
            return to_np(v)
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return copy.deepcopy({"state": {k: {kk: conv(vv) for kk, vv in s.items()} for k, s in sd["state"].items()},
                          "param_groups": sd["param_groups"]})


def tensor_checkpoint(sd: dict, device) -> dict:
    def conv(v):
        if isinstance(v, np.ndarray):
            return minitorch.tensor(v, device=device)
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return {"state": {k: {kk: conv(vv) for kk, vv in s.items()} for k, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}


ROUND_TRIP = ["adagrad_options", "adamax_options", "nadam_options", "radam_options", "adadelta_options",
              "rprop_options", "asgd_averaging", "lbfgs_short_history", "lbfgs_strong_wolfe_short"]


@pytest.mark.parametrize("checkpoint", ["checkpoint_on_device", "checkpoint_on_cpu"])
@pytest.mark.parametrize("name", ROUND_TRIP)
def test_state_dict_round_trip_resumes_exactly(name, device, checkpoint):
    """Steps, a state_dict saved through NumPy, loaded into a fresh optimizer (built with
    another lr, which the checkpoint's groups replace): both go on to the same parameters."""
    optimizer, kwargs, _, _ = CASES[name]
    cls = OPTIMIZERS[optimizer]
    m1 = make_model(device)
    opt1 = cls(m1.parameters(), **kwargs)
    c1 = closure_for(m1, opt1, device)
    train(m1, opt1, c1, 2)
    sd = opt1.state_dict()
    assert set(sd["state"]) == ({0} if optimizer == "LBFGS" else {0, 1, 2, 3})
    assert all(set(s) == STATE_KEYS[optimizer] for s in sd["state"].values())
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3]
    saved = tensor_checkpoint(numpy_checkpoint(sd), device if checkpoint == "checkpoint_on_device" else "cpu")

    m2 = make_model(device)
    m2.load_state_dict(m1.state_dict())
    opt2 = cls(m2.parameters(), **{**kwargs, "lr": 123.0})
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt1.param_groups[0]["lr"]
    for s in opt2.state.values():
        for v in s.values():
            for t in (v if isinstance(v, list) else [v]):
                if isinstance(t, minitorch.Tensor):
                    assert t.device == device and t.dtype == minitorch.float64
    c2 = closure_for(m2, opt2, device)
    losses1, losses2 = train(m1, opt1, c1, 2), train(m2, opt2, c2, 2)
    assert losses1 == losses2
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(to_np(p2), to_np(p1))


def test_lbfgs_load_state_dict_copies_the_history():
    """The loaded optimizer owns its history: stepping it leaves the saved one alone."""
    optimizer, kwargs, _, _ = CASES["lbfgs_short_history"]
    m = make_model("cpu")
    opt = LBFGS(m.parameters(), **kwargs)
    train(m, opt, closure_for(m, opt, "cpu"), 1)
    sd = opt.state_dict()
    before = [to_np(t) for t in sd["state"][0]["old_dirs"]] + [to_np(sd["state"][0]["prev_flat_grad"])]
    m2 = make_model("cpu")
    opt2 = LBFGS(m2.parameters(), **kwargs)
    opt2.load_state_dict(sd)
    train(m2, opt2, closure_for(m2, opt2, "cpu"), 1)
    after = [to_np(t) for t in sd["state"][0]["old_dirs"]] + [to_np(sd["state"][0]["prev_flat_grad"])]
    assert len(before) == len(after) and all(np.array_equal(a, b) for a, b in zip(before, after))


ONE_OF_EACH = ["Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"]


@pytest.mark.parametrize("optimizer", ONE_OF_EACH)
def test_parameter_without_grad_is_skipped(optimizer, device):
    a = nn.Parameter(minitorch.tensor(np.ones(3), device=device))
    b = nn.Parameter(minitorch.tensor(np.ones(3), device=device))
    opt = OPTIMIZERS[optimizer]([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.grad is None
    np.testing.assert_array_equal(to_np(b), np.ones(3))
    assert not np.array_equal(to_np(a), np.ones(3))
    assert opt.state[id(a)]["step"] == 1
    if optimizer == "Adagrad":  # PyTorch's Adagrad makes every parameter's state when it is built
        assert opt.state[id(b)]["step"] == 0
        np.testing.assert_array_equal(to_np(opt.state[id(b)]["sum"]), np.zeros(3))
    else:
        assert id(b) not in opt.state


def test_lbfgs_parameter_without_grad_stays():
    a = nn.Parameter(minitorch.tensor(np.array([1.0, -2.0])))
    b = nn.Parameter(minitorch.tensor(np.array([3.0])))
    opt = LBFGS([a, b], max_iter=5)

    def closure():
        opt.zero_grad()
        loss = ((a - 0.5) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_array_equal(to_np(b), [3.0])
    np.testing.assert_allclose(to_np(a), [0.5, 0.5], rtol=1e-9)


@pytest.mark.parametrize("optimizer", ONE_OF_EACH)
def test_maximize_is_descent_on_the_negated_gradient(optimizer, device):
    p0, grads = synthetic(seed=5, steps=4)
    a = nn.Parameter(minitorch.tensor(p0, device=device))
    b = nn.Parameter(minitorch.tensor(p0, device=device))
    opt_a = OPTIMIZERS[optimizer]([a], maximize=True)
    opt_b = OPTIMIZERS[optimizer]([b])
    assert opt_a.param_groups[0]["maximize"] and not opt_b.param_groups[0]["maximize"]
    for g in grads:
        a.grad = minitorch.tensor(g, device=device)
        b.grad = minitorch.tensor(-g, device=device)
        opt_a.step()
        opt_b.step()
    np.testing.assert_array_equal(to_np(a), to_np(b))


@pytest.mark.parametrize("name", ["adagrad_options", "adamax_options", "nadam_options", "radam_options",
                                  "adadelta_options", "rprop_options", "asgd_averaging", "lbfgs_strong_wolfe_short"])
def test_steps_record_no_graph(name, device):
    optimizer, kwargs, _, _ = CASES[name]
    m = make_model(device)
    opt = OPTIMIZERS[optimizer](m.parameters(), **kwargs)
    before = [to_np(p) for p in m.parameters()]
    train(m, opt, closure_for(m, opt, device), 2)
    for b, p in zip(before, m.parameters()):
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.grad_fn is None and p.requires_grad
        assert not np.array_equal(to_np(p), b)
    for s in opt.state.values():
        for v in s.values():
            for t in (v if isinstance(v, list) else [v]):
                if isinstance(t, minitorch.Tensor):
                    assert t.grad_fn is None and not t.requires_grad
    assert minitorch.is_grad_enabled()


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    for cls in (NAdam, LBFGS):
        p = nn.Parameter(minitorch.tensor(np.array([2.0, -1.0])))
        opt = cls([p])
        seen = []

        def closure():
            seen.append(minitorch.is_grad_enabled())
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        with minitorch.no_grad():
            loss = opt.step(closure)
        assert isinstance(loss, minitorch.Tensor) and loss.item() == 5.0  # the loss before the step
        assert seen and all(seen)
        assert not np.array_equal(to_np(p), [2.0, -1.0])


def test_lbfgs_returns_the_first_loss_and_counts_evaluations():
    p = nn.Parameter(minitorch.tensor(np.array([2.0, -1.0])))
    opt = LBFGS([p], max_iter=3)
    assert opt.param_groups[0]["max_eval"] == 3 * 5 // 4
    calls = []

    def closure():
        opt.zero_grad()
        loss = ((p - 1.0) ** 2 * minitorch.tensor(np.array([1.0, 10.0]))).sum()
        loss.backward()
        calls.append(loss.item())
        return loss

    loss = opt.step(closure)
    assert loss.item() == calls[0] == 1.0 + 40.0
    state = opt.state[id(p)]
    assert state["func_evals"] == len(calls) and 1 <= state["n_iter"] <= 3


def test_lbfgs_argument_errors():
    p = nn.Parameter(minitorch.ones(2))
    q = nn.Parameter(minitorch.ones(2))
    with pytest.raises(ValueError, match="parameter groups"):
        LBFGS([{"params": [p]}, {"params": [q]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        LBFGS([p], lr=-1)
    opt = LBFGS([p])
    with pytest.raises(TypeError, match="closure"):
        opt.step(None)
    opt = LBFGS([p], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(lambda: (p * p).sum())


ERRORS = [
    (Adagrad, dict(lr=-0.1), "Invalid learning rate: -0.1"),
    (Adagrad, dict(lr_decay=-1.0), "Invalid lr_decay value: -1.0"),
    (Adagrad, dict(weight_decay=-1.0), "Invalid weight_decay value"),
    (Adagrad, dict(initial_accumulator_value=-1.0), "Invalid initial_accumulator_value value"),
    (Adagrad, dict(eps=-1.0), "Invalid epsilon value"),
    (Adamax, dict(lr=-1.0), "Invalid learning rate"),
    (Adamax, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (Adamax, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (Adamax, dict(eps=-1.0), "Invalid epsilon value"),
    (Adamax, dict(weight_decay=-1.0), "Invalid weight_decay value"),
    (NAdam, dict(lr=-1.0), "Invalid learning rate"),
    (NAdam, dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
    (NAdam, dict(momentum_decay=-1.0), "Invalid momentum_decay value: -1.0"),
    (NAdam, dict(weight_decay=-1.0), "Invalid weight_decay value"),
    (NAdam, dict(eps=-1.0), "Invalid epsilon value"),
    (RAdam, dict(lr=-1.0), "Invalid learning rate"),
    (RAdam, dict(betas=(-0.1, 0.9)), "Invalid beta parameter at index 0"),
    (RAdam, dict(weight_decay=-1.0), "Invalid weight_decay value"),
    (RAdam, dict(eps=-1.0), "Invalid epsilon value"),
    (Adadelta, dict(lr=-1.0), "Invalid learning rate"),
    (Adadelta, dict(rho=1.5), "Invalid rho value: 1.5"),
    (Adadelta, dict(eps=-1.0), "Invalid epsilon value"),
    (Adadelta, dict(weight_decay=-1.0), "Invalid weight_decay value"),
    (Rprop, dict(lr=-1.0), "Invalid learning rate"),
    (Rprop, dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (Rprop, dict(etas=(0.5, 0.9)), "Invalid eta values"),
    (ASGD, dict(lr=-1.0), "Invalid learning rate"),
    (ASGD, dict(lambd=-1.0), "Invalid lambd value: -1.0"),
    (ASGD, dict(alpha=-1.0), "Invalid alpha value"),
    (ASGD, dict(weight_decay=-1.0), "Invalid weight_decay value"),
]


@pytest.mark.parametrize("cls,kwargs,match", ERRORS, ids=[f"{c.__name__}-{next(iter(k))}" for c, k, _ in ERRORS])
def test_invalid_arguments(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls([nn.Parameter(minitorch.ones(2))], **kwargs)


@pytest.mark.parametrize("optimizer", ONE_OF_EACH)
def test_unsupported_options_and_dtypes(optimizer):
    cls = OPTIMIZERS[optimizer]
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        cls([nn.Parameter(minitorch.ones(2))], differentiable=True)
    ints = minitorch.ones(3, dtype=minitorch.int64)
    ints.grad = minitorch.ones(3, dtype=minitorch.int64)
    floats = nn.Parameter(minitorch.ones(3))
    floats.grad = minitorch.ones(3)
    opt = cls([floats, ints])
    with pytest.raises(RuntimeError, match="floating point"):
        opt.step()
    np.testing.assert_array_equal(to_np(floats), np.ones(3, np.float32))  # nothing moved


def test_adagrad_fused_and_foreach():
    p = nn.Parameter(minitorch.ones(2))
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        Adagrad([p], fused=True, foreach=True)
    ints = minitorch.ones(3, dtype=minitorch.int64)
    ints.grad = minitorch.ones(3, dtype=minitorch.int64)
    with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating point"):
        Adagrad([ints], fused=True).step()


def test_adagrad_state_is_made_when_built():
    a, b = nn.Parameter(minitorch.ones(2)), nn.Parameter(minitorch.ones(3))
    opt = Adagrad([{"params": [a]}, {"params": [b], "initial_accumulator_value": 5.0}], initial_accumulator_value=0.5)
    for p in (a, b):  # as PyTorch: the optimizer's value, not a group's
        assert opt.state[id(p)]["step"] == 0
        np.testing.assert_array_equal(to_np(opt.state[id(p)]["sum"]), np.full(tuple(p.shape), 0.5, np.float32))
    assert set(opt.state_dict()["state"]) == {0, 1}


def test_defaults_match_pytorch():
    p = [nn.Parameter(minitorch.ones(2))]
    g = Adagrad(p).param_groups[0]
    assert (g["lr"], g["lr_decay"], g["weight_decay"], g["initial_accumulator_value"], g["eps"], g["foreach"],
            g["maximize"], g["differentiable"], g["fused"]) == (1e-2, 0, 0, 0, 1e-10, None, False, False, None)
    g = Adamax(p).param_groups[0]
    assert (g["lr"], g["betas"], g["eps"], g["weight_decay"], g["capturable"]) == (2e-3, (0.9, 0.999), 1e-8, 0, False)
    g = NAdam(p).param_groups[0]
    assert (g["lr"], g["betas"], g["eps"], g["weight_decay"], g["momentum_decay"], g["decoupled_weight_decay"]) == \
        (2e-3, (0.9, 0.999), 1e-8, 0, 4e-3, False)
    g = RAdam(p).param_groups[0]
    assert (g["lr"], g["betas"], g["eps"], g["weight_decay"], g["decoupled_weight_decay"]) == \
        (1e-3, (0.9, 0.999), 1e-8, 0, False)
    g = Adadelta(p).param_groups[0]
    assert (g["lr"], g["rho"], g["eps"], g["weight_decay"]) == (1.0, 0.9, 1e-6, 0)
    g = Rprop(p).param_groups[0]
    assert (g["lr"], g["etas"], g["step_sizes"]) == (1e-2, (0.5, 1.2), (1e-6, 50))
    g = ASGD(p).param_groups[0]
    assert (g["lr"], g["lambd"], g["alpha"], g["t0"], g["weight_decay"]) == (1e-2, 1e-4, 0.75, 1e6, 0)
    g = LBFGS(p).param_groups[0]
    assert (g["lr"], g["max_iter"], g["max_eval"], g["tolerance_grad"], g["tolerance_change"], g["history_size"],
            g["line_search_fn"]) == (1, 20, 25, 1e-7, 1e-9, 100, None)
    # PyTorch's group keys, exactly
    assert set(NAdam(p).param_groups[0]) == {"params", "lr", "betas", "eps", "weight_decay", "momentum_decay",
                                             "decoupled_weight_decay", "maximize", "foreach", "capturable",
                                             "differentiable"}
    assert set(ASGD(p).param_groups[0]) == {"params", "lr", "lambd", "alpha", "t0", "weight_decay", "foreach",
                                            "maximize", "differentiable", "capturable"}


def test_repr():
    p = [nn.Parameter(minitorch.ones(1))]
    r = repr(NAdam(p, lr=0.01))
    assert r.startswith("NAdam (\nParameter Group 0\n") and r.endswith("\n)")
    assert "    lr: 0.01\n" in r and "    momentum_decay: 0.004\n" in r and "    decoupled_weight_decay: False\n" in r
    r = repr(LBFGS(p))
    assert r.startswith("LBFGS (\nParameter Group 0\n") and "    line_search_fn: None\n" in r
    assert "    max_eval: 25\n" in r
    assert "    etas: (0.5, 1.2)\n" in repr(Rprop(p))


def test_exported():
    for name in ("Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD", "LBFGS"):
        assert name in minitorch.optim.__all__ and getattr(minitorch.optim, name) is OPTIMIZERS[name]


def test_cases_json_round_trips():
    """The kwargs in CASES survive JSON (tuples as lists), so the file can say which were used."""
    assert json.loads(cases_json()).keys() == CASES.keys()
