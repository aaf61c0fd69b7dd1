"""The multi-tensor ("foreach") optimizer steps: one call updates all the parameters of a
group that share a device and dtype (``_C._sgd_step_foreach`` / ``_C._adam_step_foreach`` /
``_C._rmsprop_step_foreach``),
and on a GPU a few launches do it (``cuda/multi_tensor.cuh``): the values against the
reference step, the launch counts through the profiler, the tables that fill up (more
tensors or more chunks than one launch takes), and the errors."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitorch
from minitorch import _C, nn
from minitorch.optim import SGD, Adam, AdamW, RMSprop
from minitorch.profiler import ProfilerActivity, profile

from conftest import to_numpy

# 30 parameters (more than the 24 tensors one launch addresses), one of them empty.
SIZES = [5, 1, 0, 17, 3, 64] * 5


def make_params(device, sizes=SIZES, seed=0):
    rng = np.random.default_rng(seed)
    return [nn.Parameter(minitorch.tensor(rng.standard_normal(n), dtype=minitorch.float64, device=device))
            for n in sizes]


def set_grads(params, refs, step):
    rng = np.random.default_rng(100 + step)
    for k, (p, q) in enumerate(zip(params, refs)):
        if (k + step) % 7 == 0:  # some params have no gradient on some steps
            p.grad = q.grad = None
            continue
        g = rng.standard_normal(p.numel())
        p.grad = minitorch.tensor(g, dtype=minitorch.float64, device=p.device)
        q.grad = minitorch.tensor(g, dtype=minitorch.float64, device=q.device)


@pytest.mark.parametrize("make", [
    lambda ps, **kw: SGD(ps, lr=0.1, **kw),
    lambda ps, **kw: SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, **kw),
    lambda ps, **kw: Adam(ps, lr=0.05, weight_decay=0.1, **kw),
    lambda ps, **kw: AdamW(ps, lr=0.05, **kw),
    lambda ps, **kw: Adam(ps, lr=0.05, amsgrad=True, maximize=True, weight_decay=0.1, **kw),
    lambda ps, **kw: AdamW(ps, lr=0.05, amsgrad=True, **kw),
    # RMSprop has no `fused` argument (PyTorch's has none): foreach=False is its reference step
    lambda ps, fused=None: RMSprop(ps, lr=0.01, foreach=fused),
    lambda ps, fused=None: RMSprop(ps, lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1,
                                   maximize=True, foreach=fused),
], ids=["sgd", "sgd_momentum", "adam", "adamw", "adam_amsgrad_maximize", "adamw_amsgrad", "rmsprop", "rmsprop_all"])
def test_foreach_matches_the_reference_step(make, device):
    """Params that skip a step take their first momentum step later, or run a different
    Adam step count than the others: the foreach step splits them into buckets."""
    params, refs = make_params(device), make_params(device)
    opt, ref = make(params), make(refs, fused=False)
    for step in range(4):
        set_grads(params, refs, step)
        opt.step()
        ref.step()
    for p, q in zip(params, refs):
        np.testing.assert_allclose(to_numpy(p), to_numpy(q), rtol=1e-12, atol=1e-14)
    if isinstance(opt, (Adam, RMSprop)):
        assert [opt.state[id(p)]["step"] for p in params] == [ref.state[id(q)]["step"] for q in refs]
    for p, q in zip(params, refs):
        state, ref_state = opt.state.get(id(p), {}), ref.state.get(id(q), {})
        assert state.keys() == ref_state.keys()
        for k in state.keys() - {"step"}:
            np.testing.assert_allclose(to_numpy(state[k]), to_numpy(ref_state[k]), rtol=1e-12, atol=1e-14, err_msg=k)


def kernels_of(prof, name):
    return sum(e.kernel_count for e in prof.events() if e.name == name)


@pytest.mark.parametrize("name, make", [
    ("sgd_step_foreach", lambda ps: SGD(ps, lr=0.1, momentum=0.9)),
    ("adamw_step_foreach", lambda ps: AdamW(ps, lr=0.1)),
    ("adam_step_foreach", lambda ps: Adam(ps, lr=0.1, amsgrad=True, maximize=True)),  # five lists
    ("rmsprop_step_foreach", lambda ps: RMSprop(ps, lr=0.1)),
    ("rmsprop_step_foreach", lambda ps: RMSprop(ps, lr=0.1, momentum=0.9, centered=True)),  # five lists
])
def test_one_call_and_few_launches_per_step(name, make, device):
    params = make_params(device)
    opt = make(params)
    for p in params:
        p.grad = minitorch.ones_like(p)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for step in range(2):  # SGD's first step makes the momentum buffers, its second reads them
        with profile(activities=activities) as prof:
            opt.step()
        assert [e.name for e in prof.events()].count(name) == 1
        # 29 non-empty params: a table of 24 tensors, then one of 5 (no launch on the CPU).
        assert kernels_of(prof, name) == (2 if device == "cuda" else 0)


def test_tables_that_fill_up_with_chunks():
    """With 4-element chunks, 2 x 700 elements need 350 blocks: a first launch of 320
    ends in the middle of the second tensor, which goes on in the next launch."""
    code = textwrap.dedent("""
        import numpy as np, minitorch
        from minitorch import nn
        from minitorch.optim import Adam
        from minitorch.profiler import ProfilerActivity, profile
        def params():
            return [nn.Parameter(minitorch.tensor(np.linspace(-1, 1, n), device="cuda")) for n in (700, 3, 700)]
        ps, qs = params(), params()
        opt, ref = Adam(ps, lr=0.1), Adam(qs, lr=0.1, fused=False)
        for p, q in zip(ps, qs):
            p.grad = minitorch.tensor(np.cos(np.arange(p.numel())), device="cuda")
            q.grad = p.grad.clone()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            opt.step()
        ref.step()
        for p, q in zip(ps, qs):
            np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), rtol=1e-12, atol=1e-14)
        print(sum(e.kernel_count for e in prof.events() if e.name == "adam_step_foreach"))
    """)
    env = dict(os.environ, MINITORCH_EMULATE_CUDA="1", MINITORCH_MULTI_TENSOR_CHUNK="4")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "2"  # 176 + 1 + 175 = 352 blocks: 320, then 32


def adam_foreach(ps, gs, ms, vs):
    _C._adam_step_foreach(ps, gs, ms, vs, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
                          decoupled=False, step=1)


def test_foreach_errors(device):
    a, b = minitorch.ones(3, device=device), minitorch.ones(2, device=device)
    z3, z2 = minitorch.zeros(3, device=device), minitorch.zeros(2, device=device)
    with pytest.raises(ValueError, match="adam_step_foreach: got 2 params but 1 grads"):
        adam_foreach([a, b], [z3], [z3, z2], [z3, z2])
    with pytest.raises(TypeError, match="all params must have one dtype"):
        adam_foreach([a, b.double()], [z3, z2.double()], [z3.clone(), z2.double()], [z3.clone(), z2.double()])
    with pytest.raises(ValueError, match="two params share memory"):
        adam_foreach([a, a], [z3, z3], [z3.clone(), z3.clone()], [z3.clone(), z3.clone()])
    with pytest.raises(ValueError, match=r"exp_avg of shape \(2,\) does not match the param of shape \(3,\)"):
        adam_foreach([a], [z3], [z2], [z3.clone()])
    with pytest.raises(TypeError, match="params"):
        adam_foreach([a, "x"], [z3, z3], [z3, z3], [z3, z3])
    before = to_numpy(a)
    with pytest.raises(ValueError):  # a bad second param: nothing is updated
        _C._sgd_step_foreach([a, b], [z3 + 1, z3], [None, None], lr=1.0, momentum=0.0, dampening=0.0,
                             weight_decay=0.0, nesterov=False)
    np.testing.assert_array_equal(to_numpy(a), before)


def test_adam_amsgrad_foreach_errors(device):
    a = minitorch.ones(3, device=device)
    z3 = minitorch.zeros(3, device=device)
    with pytest.raises(ValueError, match="adam_step_foreach: got 1 params but 0 max_exp_avg_sqs"):
        _C._adam_step_foreach([a], [z3], [z3.clone()], [z3.clone()], lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
                              weight_decay=0.0, decoupled=False, step=1, amsgrad=True)
    with pytest.raises(ValueError, match="adamw_step_foreach: max_exp_avg_sq of param 0 is None"):
        _C._adam_step_foreach([a], [z3], [z3.clone()], [z3.clone()], lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
                              weight_decay=0.0, decoupled=True, step=1, max_exp_avg_sqs=[None], amsgrad=True)
    with pytest.raises(ValueError, match="adam_step_foreach: got 1 params but 2 max_exp_avg_sqs"):
        _C._adam_step_foreach([a], [z3], [z3.clone()], [z3.clone()], lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
                              weight_decay=0.0, decoupled=False, step=1, max_exp_avg_sqs=[z3.clone(), z3.clone()],
                              amsgrad=True)
    np.testing.assert_array_equal(to_numpy(a), np.ones(3))  # nothing was updated


def test_rmsprop_foreach_errors(device):
    a, b = minitorch.ones(3, device=device), minitorch.ones(2, device=device)
    z3, z2 = minitorch.zeros(3, device=device), minitorch.zeros(2, device=device)

    def step(ps, gs, vs, bufs, avgs, momentum=0.0, centered=False):
        _C._rmsprop_step_foreach(ps, gs, vs, bufs, avgs, lr=0.1, alpha=0.9, eps=1e-8, weight_decay=0.0,
                                 momentum=momentum, centered=centered, maximize=False)

    with pytest.raises(ValueError, match="rmsprop_step_foreach: got 2 params but 0 momentum_buffers"):
        step([a, b], [z3, z2], [z3.clone(), z2.clone()], [], [], momentum=0.9)
    with pytest.raises(ValueError, match="rmsprop_step_foreach: got 1 params but 0 grad_avgs"):
        step([a], [z3], [z3.clone()], [], [], centered=True)
    with pytest.raises(ValueError, match="rmsprop_step_foreach: momentum_buffer of param 1 is None"):
        step([a, b], [z3, z2], [z3.clone(), z2.clone()], [z3.clone(), None], [], momentum=0.9)
    with pytest.raises(ValueError, match=r"square_avg of shape \(2,\) does not match the param of shape \(3,\)"):
        step([a], [z3], [z2], [], [])
    with pytest.raises(ValueError, match="grad_avg shares memory with square_avg"):
        v = z3.clone()
        step([a], [z3], [v], [], [v], centered=True)
    np.testing.assert_array_equal(to_numpy(a), np.ones(3))  # nothing was updated
    # unused lists are not read: momentum 0 and not centered ignore what they hold
    step([a], [z3 + 1], [z3.clone()], [None], [None])
    np.testing.assert_allclose(to_numpy(a), 1 - 0.1 * 1 / (np.sqrt(0.1) + 1e-8), rtol=1e-6)


def test_sgd_foreach_returns_the_buffers_in_order(device):
    ps = make_params(device, [2, 3, 4])
    gs = [minitorch.ones_like(p) for p in ps]
    old = minitorch.full((3,), 5.0, dtype=minitorch.float64, device=device)
    bufs = _C._sgd_step_foreach(ps, gs, [None, old, None], lr=0.1, momentum=0.5, dampening=0.0, weight_decay=0.0,
                                nesterov=False)
    assert bufs[1] is old or np.array_equal(to_numpy(bufs[1]), to_numpy(old))
    np.testing.assert_allclose(to_numpy(bufs[1]), np.full(3, 0.5 * 5 + 1))  # momentum * buf + d
    np.testing.assert_allclose(to_numpy(bufs[0]), np.ones(2))  # first step: buf = d
    assert [tuple(b.shape) for b in bufs] == [(2,), (3,), (4,)]
    no_momentum = _C._sgd_step_foreach(ps, gs, [None, old, None], lr=0.1, momentum=0.0, dampening=0.0,
                                       weight_decay=0.0, nesterov=False)
    assert no_momentum == [None, None, None]
