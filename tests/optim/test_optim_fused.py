"""The fused optimizer steps (one kernel pass per parameter, ``_C._sgd_step`` /
``_C._adam_step``) against the reference steps written with tensor ops (``fused=False``)
and against NumPy versions of PyTorch's formulas: SGD (plain, momentum, dampening,
Nesterov, weight decay), Adam and AdamW, float32 and float64, on every device, over
several steps, for parameters of odd sizes and of no elements. Then how the optimizers
choose the fused step, the errors for bad state, version counters and state_dict."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch import _C, nn
from minitorch.optim import SGD, Adam, AdamW

from conftest import CUDA_SKIP_REASON, to_numpy

STEPS = 4
SIZES = [1, 7, 1003]
DTYPES = [np.float32, np.float64]
# Fused and reference steps round differently (a*b+c in one expression, sqrt(v)/sqrt(bc2)
# instead of sqrt(v/bc2)); both must stay this close to NumPy in the parameter's dtype.
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-11, atol=1e-13)}

SGD_CASES = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.1, momentum=0.9),
    "dampening": dict(lr=0.1, momentum=0.8, dampening=0.3),
    "nesterov": dict(lr=0.05, momentum=0.9, nesterov=True),
    "weight_decay": dict(lr=0.1, weight_decay=0.01),
    "all": dict(lr=0.02, momentum=0.5, weight_decay=0.1, nesterov=True),
}
ADAM_CASES = {
    "adam": (Adam, dict(lr=1e-3)),
    "adam_betas_eps": (Adam, dict(lr=0.05, betas=(0.8, 0.99), eps=1e-2)),
    "adam_l2": (Adam, dict(lr=0.1, weight_decay=0.1)),
    "adamw": (AdamW, dict(lr=0.1)),
    "adamw_wd": (AdamW, dict(lr=0.01, weight_decay=0.5)),
    "adamw_no_wd": (AdamW, dict(lr=0.01, weight_decay=0.0)),
}


class Problem:
    """A quadratic whose gradient at p is c * p + d (c > 0), for a parameter of n elements."""

    def __init__(self, n: int, dtype, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.dtype = np.dtype(dtype)
        self.p0 = rng.uniform(-2, 2, n).astype(dtype)
        self.c = rng.uniform(0.1, 3, n).astype(dtype)
        self.d = rng.uniform(-1, 1, n).astype(dtype)

    def grad(self, p: np.ndarray) -> np.ndarray:
        return (self.c * p + self.d).astype(self.dtype)

    def run(self, make_opt, device, steps: int = STEPS) -> tuple[list[np.ndarray], object]:
        """Steps an optimizer on the problem; the parameter after each step, and the optimizer."""
        p = nn.Parameter(minitorch.tensor(self.p0.copy(), device=device))
        opt = make_opt([p])
        out = []
        for _ in range(steps):
            p.grad = minitorch.tensor(self.grad(to_numpy(p)), device=device)
            opt.step()
            assert p.dtype == minitorch.tensor(self.p0).dtype and p.device == device
            out.append(to_numpy(p))
        return out, opt


def sgd_np(prob: Problem, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    """PyTorch's SGD in NumPy, computed in the parameter's dtype (Python floats are weak)."""
    p, buf, out = prob.p0.copy(), None, []
    for _ in range(steps):
        d = prob.grad(p)
        if weight_decay:
            d = d + p * weight_decay
        if momentum:
            buf = d.copy() if buf is None else buf * momentum + d * (1 - dampening)
            d = d + buf * momentum if nesterov else buf
        p = p - d * lr
        out.append(p.copy())
    return out


def adam_np(prob: Problem, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    """PyTorch's Adam / AdamW in NumPy, in the parameter's dtype."""
    b1, b2 = betas
    p, out = prob.p0.copy(), []
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t in range(1, steps + 1):
        g = prob.grad(p)
        if weight_decay:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + p * weight_decay
        m = m * b1 + g * (1 - b1)
        v = v * b2 + g * g * (1 - b2)
        denom = np.sqrt(v) / math.sqrt(1 - b2**t) + eps  # Python floats keep p's dtype
        p = p - (lr / (1 - b1**t)) * (m / denom)
        out.append(p.copy())
    return out


def assert_steps_close(got, expected, dtype, what):
    for step, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, **TOL[np.dtype(dtype).type], err_msg=f"{what}, step {step + 1}")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(SGD_CASES))
def test_sgd_fused_matches_reference_and_numpy(case, dtype, n, device):
    kw = SGD_CASES[case]
    prob = Problem(n, dtype)
    fused, opt = prob.run(lambda ps: SGD(ps, **kw), device)
    reference, _ = prob.run(lambda ps: SGD(ps, fused=False, **kw), device)
    expected = sgd_np(prob, STEPS, **kw)
    assert_steps_close(fused, expected, dtype, "fused vs NumPy")
    assert_steps_close(reference, expected, dtype, "reference vs NumPy")
    assert_steps_close(fused, reference, dtype, "fused vs reference")
    if kw.get("momentum"):
        (state,) = opt.state.values()
        assert set(state) == {"momentum_buffer"}
        buf = state["momentum_buffer"]
        assert buf.device == device and buf.dtype == minitorch.tensor(prob.p0).dtype and tuple(buf.shape) == (n,)
    else:
        assert not opt.state  # plain SGD keeps no state, as PyTorch


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(ADAM_CASES))
def test_adam_fused_matches_reference_and_numpy(case, dtype, n, device):
    cls, kw = ADAM_CASES[case]
    prob = Problem(n, dtype)
    fused, opt = prob.run(lambda ps: cls(ps, **kw), device)
    reference, _ = prob.run(lambda ps: cls(ps, fused=False, **kw), device)
    wd = kw.get("weight_decay", 1e-2 if cls is AdamW else 0.0)
    expected = adam_np(prob, STEPS, **{**kw, "weight_decay": wd}, decoupled=cls is AdamW)
    assert_steps_close(fused, expected, dtype, "fused vs NumPy")
    assert_steps_close(reference, expected, dtype, "reference vs NumPy")
    assert_steps_close(fused, reference, dtype, "fused vs reference")
    (state,) = opt.state.values()
    assert set(state) == {"step", "exp_avg", "exp_avg_sq"}
    assert state["step"] == STEPS and isinstance(state["step"], int)
    for k in ("exp_avg", "exp_avg_sq"):
        assert state[k].device == device and tuple(state[k].shape) == (n,)
        assert state[k].grad_fn is None and not state[k].requires_grad


@pytest.mark.parametrize("make", [
    lambda ps: SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: Adam(ps, lr=0.1),
    lambda ps: AdamW(ps, lr=0.1),
], ids=["sgd", "adam", "adamw"])
def test_empty_param(make, device):
    p = nn.Parameter(minitorch.zeros(0, 3, device=device))
    opt = make([p])
    for _ in range(2):
        p.grad = minitorch.zeros(0, 3, device=device)
        opt.step()
    assert tuple(p.shape) == (0, 3)
    (state,) = opt.state.values()
    assert all(tuple(v.shape) == (0, 3) for v in state.values() if isinstance(v, minitorch.Tensor))
    assert state.get("step", 2) == 2


# ---- which step runs --------------------------------------------------------------------

@pytest.fixture
def fused_calls(monkeypatch):
    """Counts the parameters passed to _C._sgd_step_foreach and _C._adam_step_foreach
    (under "sgd" / "adam") and the calls (under "sgd_calls" / "adam_calls")."""
    calls = {"sgd": 0, "adam": 0, "sgd_calls": 0, "adam_calls": 0}

    def counting(name, real):
        def step(params, *args, **kw):
            calls[name] += len(params)
            calls[name + "_calls"] += 1
            return real(params, *args, **kw)
        return step

    monkeypatch.setattr(_C, "_sgd_step_foreach", counting("sgd", _C._sgd_step_foreach))
    monkeypatch.setattr(_C, "_adam_step_foreach", counting("adam", _C._adam_step_foreach))
    return calls


@pytest.mark.parametrize("kw, fused", [
    (dict(), True),
    (dict(fused=None), True),
    (dict(fused=True), True),
    (dict(foreach=True), True),
    (dict(fused=False), False),
    (dict(foreach=False), False),
    (dict(fused=True, foreach=False), True),
    (dict(fused=False, foreach=True), False),
])
@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_fused_is_the_default(name, kw, fused, fused_calls, device):
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).to(device)
    opt = SGD(m.parameters(), lr=0.1, momentum=0.9, **kw) if name == "sgd" else Adam(m.parameters(), **kw)
    assert opt.param_groups[0]["fused"] == kw.get("fused") and opt.param_groups[0]["foreach"] == kw.get("foreach")
    for _ in range(2):
        opt.zero_grad()
        m(minitorch.ones(5, 3, device=device)).sum().backward()
        opt.step()
    assert fused_calls[name] == (2 * 4 if fused else 0)  # every parameter, every step
    assert fused_calls[name + "_calls"] == (2 if fused else 0)  # one multi-tensor call a step


def test_fused_and_foreach_together_is_an_error():
    p = nn.Parameter(minitorch.ones(2))
    for cls in (SGD, Adam, AdamW):
        with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
            cls([p], lr=0.1, fused=True, foreach=True)


def test_fused_true_needs_floating_params():
    w = nn.Parameter(minitorch.ones(3))
    w.grad = minitorch.ones(3)
    p = minitorch.tensor([1, 2, 3])
    p.grad = minitorch.tensor([1, 1, 1])
    for cls in (SGD, Adam):
        with pytest.raises(RuntimeError, match="requires all the params to be floating point"):
            cls([w, p], lr=1, fused=True).step()
        assert w.tolist() == [1.0, 1.0, 1.0]  # refused before any parameter moved


def test_multi_tensor_groups_split_by_device_and_dtype():
    """The optimizers' split of a group: one (params, grads) pair per device and dtype in
    first-seen order, the params without a grad left out, and the reference step for a
    strided view or an integer tensor."""
    def param(dtype, device="cpu", grad=True):
        p = minitorch.zeros(3, dtype=dtype, device=device)
        if grad:
            p.grad = minitorch.ones(3, dtype=dtype, device=device)
        return p

    f32, f64, f32b, none, f64b = param(minitorch.float32), param(minitorch.float64), param(minitorch.float32), \
        param(minitorch.float32, grad=False), param(minitorch.float64)
    view = minitorch.zeros(3, 2)[:, 0]
    view.grad = minitorch.ones(3)
    ints = param(minitorch.int64)
    params = [f32, view, f64, none, f32b, ints, f64b]
    if minitorch.cuda.is_available():
        params.append(param(minitorch.float32, "cuda"))
    groups, reference = _C._multi_tensor_groups(params)
    assert [[id(p) for p in ps] for ps, _ in groups][:2] == [[id(f32), id(f32b)], [id(f64), id(f64b)]]
    assert all(g is p.grad for ps, gs in groups for p, g in zip(ps, gs))
    assert len(groups) == (3 if minitorch.cuda.is_available() else 2)
    assert [id(p) for p in reference] == [id(view), id(ints)]
    with pytest.raises(TypeError, match="multi_tensor_groups: argument 'params' must be a Tensor"):
        _C._multi_tensor_groups([f32, 3])


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_noncontiguous_param_takes_the_reference_step(name, fused_calls, device):
    base = np.arange(24, dtype=np.float64).reshape(4, 6) / 10
    big = minitorch.tensor(base, device=device)
    p = big[:, ::2]  # a strided leaf
    assert not p.is_contiguous()
    q = minitorch.tensor(base[:, ::2].copy(), device=device)
    make = (lambda ps, **kw: SGD(ps, lr=0.1, momentum=0.9, **kw)) if name == "sgd" else \
        (lambda ps, **kw: Adam(ps, lr=0.1, **kw))
    opt, ref = make([p]), make([q], fused=False)
    for _ in range(3):
        for t in (p, q):
            t.grad = minitorch.tensor(to_numpy(t) * 2 - 1, device=device)
        opt.step()
        ref.step()
    assert fused_calls[name] == 0
    np.testing.assert_allclose(to_numpy(p), to_numpy(q), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(big)[:, 1::2], base[:, 1::2])  # the rest of the storage is untouched


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_strided_grad_is_read_correctly(name, device):
    """A transposed (strided) gradient gives the same step as its contiguous copy."""
    g = np.random.default_rng(0).standard_normal((3, 5))
    results = []
    for grad in (minitorch.tensor(g, device=device), minitorch.tensor(g.T.copy(), device=device).t()):
        p = nn.Parameter(minitorch.ones(3, 5, dtype=minitorch.float64, device=device))
        opt = SGD([p], lr=0.1, momentum=0.9) if name == "sgd" else Adam([p], lr=0.1)
        p.grad = grad
        opt.step()
        results.append(to_numpy(p))
    np.testing.assert_array_equal(results[0], results[1])


# ---- state_dict ------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda ps, **kw: SGD(ps, lr=0.1, momentum=0.9, nesterov=True, **kw),
    lambda ps, **kw: Adam(ps, lr=0.05, weight_decay=0.1, **kw),
    lambda ps, **kw: AdamW(ps, lr=0.05, **kw),
], ids=["sgd", "adam", "adamw"])
@pytest.mark.parametrize("load_fused", [True, False], ids=["into_fused", "into_reference"])
def test_state_dict_round_trip_between_fused_and_reference(make, load_fused, device):
    prob = Problem(7, np.float64)

    def stepped(opt, p, steps):
        for _ in range(steps):
            p.grad = minitorch.tensor(prob.grad(to_numpy(p)), device=device)
            opt.step()

    p1 = nn.Parameter(minitorch.tensor(prob.p0.copy(), device=device))
    opt1 = make([p1])
    stepped(opt1, p1, 3)
    sd = opt1.state_dict()
    keys = set(sd["state"][0])
    assert keys in ({"momentum_buffer"}, {"step", "exp_avg", "exp_avg_sq"})
    if "step" in keys:
        assert sd["state"][0]["step"] == 3
    assert sd["param_groups"][0]["fused"] is None and sd["param_groups"][0]["foreach"] is None

    p2 = nn.Parameter(minitorch.tensor(to_numpy(p1), device=device))
    opt2 = make([p2], fused=None if load_fused else False)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["fused"] is None  # the saved group's options, as PyTorch
    opt2.param_groups[0]["fused"] = None if load_fused else False
    assert set(opt2.state[id(p2)]) == keys
    stepped(opt1, p1, 2)
    stepped(opt2, p2, 2)
    np.testing.assert_allclose(to_numpy(p2), to_numpy(p1), rtol=1e-12, atol=1e-14)
    for k in keys:
        a, b = opt1.state[id(p1)][k], opt2.state[id(p2)][k]
        if isinstance(a, minitorch.Tensor):
            np.testing.assert_allclose(to_numpy(b), to_numpy(a), rtol=1e-12, atol=1e-14)
        else:
            assert a == b == 5


# ---- bad input -------------------------------------------------------------------------

def sgd_call(p, g, buf=None, momentum=0.9):
    return _C._sgd_step(p, g, buf, lr=0.1, momentum=momentum, dampening=0.0, weight_decay=0.0, nesterov=False)


def adam_call(p, g, m, v, step=1, decoupled=False):
    return _C._adam_step(p, g, m, v, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
                         decoupled=decoupled, step=step)


def test_fused_step_errors(device):
    f32 = dict(dtype=minitorch.float32, device=device)
    p, g = minitorch.ones(2, 3, **f32), minitorch.ones(2, 3, **f32)
    with pytest.raises(TypeError, match=r"sgd_step: grad has dtype float64 but the param has dtype float32"):
        sgd_call(p, minitorch.ones(2, 3, dtype=minitorch.float64, device=device))
    with pytest.raises(ValueError, match=r"sgd_step: grad of shape \(3, 2\) does not match the param of shape \(2, 3\)"):
        sgd_call(p, minitorch.ones(3, 2, **f32))
    with pytest.raises(ValueError, match=r"sgd_step: momentum_buffer of shape \(6,\) does not match the param"):
        sgd_call(p, g, minitorch.ones(6, **f32))
    with pytest.raises(TypeError, match=r"sgd_step: expected a floating-point param, got int64"):
        sgd_call(minitorch.tensor([1, 2], device=device), minitorch.tensor([1, 2], device=device))
    with pytest.raises(TypeError, match=r"sgd_step: argument 'grad' must be a Tensor, not NoneType"):
        sgd_call(p, None)
    with pytest.raises(ValueError, match=r"sgd_step: the fused step needs a contiguous param, got shape \(3, 2\)"):
        sgd_call(p.t(), g.t())
    with pytest.raises(ValueError, match=r"sgd_step: momentum_buffer must be contiguous"):
        sgd_call(p, g, minitorch.ones(3, 2, **f32).t())
    with pytest.raises(ValueError, match=r"sgd_step: momentum_buffer shares memory with the param"):
        sgd_call(p, g, p)
    m, v = minitorch.zeros(2, 3, **f32), minitorch.zeros(2, 3, **f32)
    with pytest.raises(ValueError, match=r"adam_step: exp_avg_sq of shape \(2, 2\) does not match the param of shape \(2, 3\)"):
        adam_call(p, g, m, minitorch.zeros(2, 2, **f32))
    with pytest.raises(TypeError, match=r"adamw_step: exp_avg has dtype float64"):
        adam_call(p, g, minitorch.zeros(2, 3, dtype=minitorch.float64, device=device), v, decoupled=True)
    with pytest.raises(ValueError, match=r"adam_step: exp_avg_sq shares memory with exp_avg"):
        adam_call(p, g, m, m)
    with pytest.raises(ValueError, match=r"adam_step: step counts from 1, got 0"):
        adam_call(p, g, m, v, step=0)
    # nothing was written by the refused calls
    for t in (p, m, v):
        np.testing.assert_array_equal(to_numpy(t), np.full((2, 3), float(t is p), np.float32))


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_fused_step_device_mismatch():
    p = minitorch.ones(3)
    with pytest.raises(RuntimeError, match="sgd_step: expected all tensors to be on the same device"):
        sgd_call(p, minitorch.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="adam_step: expected all tensors to be on the same device"):
        adam_call(p, minitorch.ones(3), minitorch.zeros(3), minitorch.zeros(3, device="cuda"))


@pytest.mark.parametrize("cls", [SGD, Adam])
def test_bad_loaded_state_is_an_error_and_changes_nothing(cls, device):
    p = nn.Parameter(minitorch.ones(4, device=device))
    opt = cls([p], lr=0.1, momentum=0.9) if cls is SGD else cls([p], lr=0.1)
    p.grad = minitorch.ones(4, device=device)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0] = {k: (minitorch.zeros(5) if isinstance(v, minitorch.Tensor) else v)
                      for k, v in sd["state"][0].items()}
    opt.load_state_dict(sd)
    before = to_numpy(p)
    with pytest.raises(ValueError, match=r"of shape \(5,\) does not match the param of shape \(4,\)"):
        opt.step()
    np.testing.assert_array_equal(to_numpy(p), before)
    assert opt.state[id(p)].get("step", 1) == 1  # not counted


def test_fused_step_bypasses_grad_mode_and_records_nothing(device):
    """Like an optimizer step, the fused op writes a leaf that requires grad even with
    grad mode on (no_grad semantics) and records no graph."""
    p = nn.Parameter(minitorch.ones(3, device=device))
    assert minitorch.is_grad_enabled()
    buf = sgd_call(p, minitorch.ones(3, device=device))
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert buf.grad_fn is None and not buf.requires_grad
    np.testing.assert_allclose(to_numpy(p), np.full(3, 0.9, np.float32))
    np.testing.assert_array_equal(to_numpy(buf), np.ones(3, np.float32))  # first step: buf = d
    assert sgd_call(p, minitorch.ones(3, device=device), buf) is buf
    np.testing.assert_allclose(to_numpy(buf), np.full(3, 1.9, np.float32), rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda ps: SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: Adam(ps, lr=0.1),
], ids=["sgd", "adam"])
def test_step_bumps_the_version_of_saved_params(make, device):
    """A graph that saved the parameter cannot run backward after the step changed it."""
    p = nn.Parameter(minitorch.ones(3, device=device))
    opt = make([p])
    p.grad = minitorch.ones(3, device=device)
    y = (p * p).sum()  # mul saves p
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
