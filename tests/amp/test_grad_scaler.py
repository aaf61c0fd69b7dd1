"""minitorch.amp.GradScaler against PyTorch's rules: scale, unscale_ (one fused check for
all gradients), skipped steps on inf/NaN, backoff and growth, the state machine's errors,
state_dict, and a run with a disabled scaler. Every device."""
from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, TORCH_SKIP_REASON
from minitorch import nn
from minitorch.amp import GradScaler
from minitorch.profiler import ProfilerActivity, profile


def npy(t):
    return t.detach().cpu().numpy()


def model_and_opt(device, opt_cls=minitorch.optim.SGD, **kw):
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2)).to(device)
    return model, opt_cls(model.parameters(), lr=0.1, **kw)


def batch(device):
    rng = np.random.default_rng(1)
    return minitorch.tensor(rng.standard_normal((5, 4)).astype(np.float32), device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_scale_multiplies_tensors_and_nested_sequences(device):
    s = GradScaler(device, init_scale=8.0)
    assert s.get_scale() == 8.0
    x = minitorch.tensor([1.0, -2.0], device=device)
    np.testing.assert_array_equal(npy(s.scale(x)), [8.0, -16.0])
    out = s.scale([x, (x, x * 2)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    np.testing.assert_array_equal(npy(out[1][1]), [16.0, -32.0])
    with pytest.raises(ValueError, match="Tensor"):
        s.scale(3.0)


@pytest.mark.parametrize("device", DEVICES)
def test_step_with_a_scaled_loss_equals_the_plain_step(device):
    # A power-of-two scale is exact: the scaled run must give the same weights bit for bit.
    ref, ref_opt = model_and_opt(device)
    amp, amp_opt = model_and_opt(device)
    s = GradScaler(device, init_scale=1024.0)
    x = batch(device)
    for _ in range(3):
        ref_opt.zero_grad()
        ref(x).square().mean().backward()
        ref_opt.step()
        amp_opt.zero_grad()
        s.scale(amp(x).square().mean()).backward()
        s.step(amp_opt)
        s.update()
    for a, b in zip(ref.parameters(), amp.parameters()):
        np.testing.assert_array_equal(npy(a), npy(b))
    assert s.get_scale() == 1024.0 and s._get_growth_tracker() == 3


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_non_finite_gradient_skips_the_step_and_backs_off(device, bad):
    model, opt = model_and_opt(device)
    s = GradScaler(device, init_scale=64.0, backoff_factor=0.25)
    before = [npy(p).copy() for p in model.parameters()]
    s.scale(model(batch(device)).sum()).backward()
    last = list(model.parameters())[-1]
    g = npy(last.grad).copy()
    g.flat[1] = bad
    last.grad = minitorch.tensor(g, device=device)
    assert s.step(opt) is None  # skipped
    s.update()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(npy(p), b)
    assert s.get_scale() == 16.0 and s._get_growth_tracker() == 0


@pytest.mark.parametrize("device", DEVICES)
def test_growth_after_growth_interval_clean_steps(device):
    model, opt = model_and_opt(device)
    s = GradScaler(device, init_scale=4.0, growth_factor=3.0, growth_interval=3)
    scales = []
    for _ in range(7):
        opt.zero_grad()
        s.scale(model(batch(device)).sum()).backward()
        s.step(opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]


def test_the_scale_never_grows_past_float32():
    model, opt = model_and_opt("cpu")
    s = GradScaler("cpu", init_scale=2.0**127, growth_interval=1)
    s.scale(model(batch("cpu")).sum() * 0).backward()
    s.step(opt)
    s.update()
    assert s.get_scale() == 2.0**127  # 2**128 is inf in float32: the scale stays


@pytest.mark.parametrize("device", DEVICES)
def test_unscale_gives_the_true_gradients_for_clipping(device):
    ref, _ = model_and_opt(device)
    model, opt = model_and_opt(device)
    s = GradScaler(device, init_scale=2.0**10)
    ref(batch(device)).sum().backward()
    s.scale(model(batch(device)).sum()).backward()
    s.unscale_(opt)
    for a, b in zip(ref.parameters(), model.parameters()):
        np.testing.assert_allclose(npy(b.grad), npy(a.grad), rtol=1e-6, atol=0)
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    s.step(opt)  # does not unscale twice
    s.update()


@pytest.mark.parametrize("device", DEVICES)
def test_unscale_is_one_launch_for_all_gradients(device):
    """One multi-tensor launch for the gradients of one dtype, as PyTorch's
    _amp_foreach_non_finite_check_and_unscale_: the CPU time of unscale_ does not grow with
    the number of parameters."""
    minitorch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(8)]).to(device)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
    s = GradScaler(device)
    s.scale(model(batch(device)).sum()).backward()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        s.unscale_(opt)
    events = [e for e in prof.events() if e.name == "amp_unscale"]
    assert len(events) == 1
    if device == "cuda":
        names = [k.name for k in events[0].kernels]
        assert len(names) == 1 and "amp_unscale" in names[0], names  # 16 gradients


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_an_iteration_waits_for_the_gpu_once():
    """step() reads found_inf (the host waits for the GPU: PyTorch's one .item() an iteration);
    update() uses what step read, and unscale_ and scale wait for nothing."""
    model, opt = model_and_opt("cuda")
    s = GradScaler("cuda")
    waits = minitorch._C._cuda_host_waits
    for overflow in (False, True, False):
        before = waits()
        loss = s.scale(model(batch("cuda")).sum())
        loss.backward()
        if overflow:
            model[0].weight.grad[0, 0] = float("inf")
        s.unscale_(opt)
        assert waits() == before
        s.step(opt)
        s.update()
        assert waits() == before + 1
        opt.zero_grad()
    assert s.get_scale() == 2.0**15  # the overflow halved it


@pytest.mark.parametrize("device", DEVICES)
def test_a_gradient_listed_twice_is_unscaled_once(device):
    g = minitorch.full((70000,), 4.0, device=device)
    found, inv = minitorch.zeros(1, device=device), minitorch.full((1,), 0.5, device=device)
    minitorch._C._amp_foreach_non_finite_check_and_unscale_([g, g], found, inv)
    assert npy(g).min() == npy(g).max() == 2.0 and found.item() == 0.0


@pytest.mark.parametrize("device", DEVICES)
def test_unscale_of_many_dtypes_sizes_and_a_strided_gradient(device):
    """One call per dtype; a gradient past a chunk's end, an empty one, a strided one; the
    flag raised by a NaN in any of them (in the middle of a long one too)."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(n) for n in (70000, 3, 0, 17000)]
    dts = [minitorch.float32, minitorch.float16, minitorch.bfloat16, minitorch.float64]
    for bad in (None, 1, 0, 3):
        grads = [minitorch.tensor(a, device=device).to(dt) for a in arrays for dt in dts]
        if bad is not None:
            grads[bad * 4 + 2][len(arrays[bad]) // 2] = float("nan")
        strided = minitorch.tensor(rng.standard_normal((6, 5)), device=device).float().t()
        before = [npy(g.double()).copy() for g in grads] + [npy(strided.double()).copy()]
        found, inv = minitorch.zeros(1, device=device), minitorch.full((1,), 2.0, device=device)
        minitorch._C._amp_foreach_non_finite_check_and_unscale_(grads + [strided], found, inv)
        assert found.item() == (0.0 if bad is None else 1.0)
        for b, g in zip(before, grads + [strided]):
            np.testing.assert_array_equal(npy(g.double()), b * 2.0)  # exact (no 16-bit subnormal lost)


@pytest.mark.parametrize("device", DEVICES)
def test_foreach_check_and_unscale_directly(device):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5))
    b = rng.standard_normal(7).astype(np.float32)
    ga = minitorch.tensor(a, device=device)  # float64 too
    gb = minitorch.tensor(b, device=device)
    strided = minitorch.tensor(rng.standard_normal((4, 6)).astype(np.float32), device=device)
    st = strided.t()  # non-contiguous: scaled through a packed copy
    found = minitorch.zeros(1, device=device)
    inv = minitorch.full((1,), 0.5, device=device)
    minitorch._C._amp_foreach_non_finite_check_and_unscale_([ga, gb, st], found, inv)
    np.testing.assert_allclose(npy(ga), a * 0.5)
    np.testing.assert_allclose(npy(gb), b * 0.5)
    assert found.item() == 0.0
    gb_np = npy(gb).copy()
    gb_np[3] = np.nan
    gb = minitorch.tensor(gb_np, device=device)
    minitorch._C._amp_foreach_non_finite_check_and_unscale_([ga, gb], found, inv)
    assert found.item() == 1.0
    # the flag is only ever raised: a clean call after it leaves it at 1
    minitorch._C._amp_foreach_non_finite_check_and_unscale_([ga], found, inv)
    assert found.item() == 1.0


@pytest.mark.parametrize("device", DEVICES)
def test_foreach_check_refuses_bad_arguments(device):
    g = minitorch.ones(3, device=device)
    found, inv = minitorch.zeros(1, device=device), minitorch.ones(1, device=device)
    f = minitorch._C._amp_foreach_non_finite_check_and_unscale_
    with pytest.raises(ValueError, match="found_inf must be a 1-element tensor"):
        f([g], minitorch.zeros(2, device=device), inv)
    with pytest.raises(TypeError, match="inv_scale must be a float32 tensor"):
        f([g], found, minitorch.ones(1, dtype=minitorch.float64, device=device))
    with pytest.raises(TypeError, match="floating-point gradients"):
        f([minitorch.ones(3, dtype=minitorch.int64, device=device)], found, inv)
    with pytest.raises(ValueError, match="shares memory"):
        f([found], found, inv)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_foreach_check_refuses_mixed_devices():
    with pytest.raises(RuntimeError, match="same device"):
        minitorch._C._amp_foreach_non_finite_check_and_unscale_(
            [minitorch.ones(3, device="cuda")], minitorch.zeros(1), minitorch.ones(1))


def test_the_state_machine_errors():
    model, opt = model_and_opt("cpu")
    s = GradScaler("cpu")
    with pytest.raises(AssertionError, match="scale is None"):
        s.step(opt)  # nothing scaled yet
    s.scale(model(batch("cpu")).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(opt, closure=lambda: 0.0)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        s.update()
    opt.zero_grad()  # no gradients at all: nothing was checked
    with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer"):
        s.step(opt)


def test_constructor_checks():
    with pytest.raises(ValueError, match="growth factor"):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff factor"):
        GradScaler("cpu", backoff_factor=1.0)
    with pytest.raises(ValueError, match="growth_interval"):
        GradScaler("cpu", growth_interval=0)
    with pytest.raises(ValueError, match="device"):
        GradScaler("tpu")


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_scaler_without_cuda_disables_itself():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = GradScaler()
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
    model, opt = model_and_opt("cpu")
    loss = model(batch("cpu")).sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.step(opt)  # a plain step
    s.update()


def test_disabled_scaler_is_a_pass_through():
    model, opt = model_and_opt("cpu")
    ref, ref_opt = model_and_opt("cpu")
    s = GradScaler("cpu", enabled=False)
    s.scale(model(batch("cpu")).sum()).backward()
    ref(batch("cpu")).sum().backward()
    s.unscale_(opt)
    s.step(opt)
    ref_opt.step()
    s.update()
    for a, b in zip(ref.parameters(), model.parameters()):
        np.testing.assert_array_equal(npy(a), npy(b))


def test_update_with_new_scale():
    model, opt = model_and_opt("cpu")
    s = GradScaler("cpu")
    s.scale(model(batch("cpu")).sum())
    s.update(new_scale=3.5)
    assert s.get_scale() == 3.5
    s.update(new_scale=minitorch.tensor([2.0]))
    assert s.get_scale() == 2.0
    with pytest.raises(ValueError, match="1-element"):
        s.update(new_scale=minitorch.tensor([2.0, 3.0]))
    with pytest.raises(TypeError, match="new_scale"):
        s.update(new_scale="big")


def test_state_dict_round_trip_and_pickle():
    model, opt = model_and_opt("cpu")
    s = GradScaler("cpu", init_scale=16.0, growth_factor=4.0, backoff_factor=0.125, growth_interval=5)
    for _ in range(2):
        opt.zero_grad()
        s.scale(model(batch("cpu")).sum()).backward()
        s.step(opt)
        s.update()
    sd = s.state_dict()
    assert sd == {"scale": 16.0, "growth_factor": 4.0, "backoff_factor": 0.125, "growth_interval": 5,
                  "_growth_tracker": 2}
    t = GradScaler("cpu")
    t.load_state_dict(sd)
    assert t.state_dict() == sd
    assert pickle.loads(pickle.dumps(s)).state_dict() == sd
    with pytest.raises(RuntimeError, match="empty"):
        t.load_state_dict({})


def test_matches_torch_grad_scaler_where_installed():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    if not hasattr(torch, "amp") or not hasattr(torch.amp, "GradScaler"):
        pytest.skip("this PyTorch has no torch.amp.GradScaler('cpu')")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    ms = GradScaler("cpu", init_scale=8.0, growth_interval=2)
    tp = torch.nn.Parameter(torch.ones(3))
    mp = minitorch.ones(3, requires_grad=True)
    topt, mopt = torch.optim.SGD([tp], lr=0.1), minitorch.optim.SGD([mp], lr=0.1)
    for grad in ([1.0, 2.0, 3.0], [1.0, float("inf"), 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]):
        ts.scale(torch.zeros(()))
        ms.scale(minitorch.zeros(()))
        tp.grad = torch.tensor(grad) * ts.get_scale()
        mp.grad = minitorch.tensor(grad) * ms.get_scale()
        ts.step(topt)
        ms.step(mopt)
        ts.update()
        ms.update()
        assert ms.get_scale() == ts.get_scale()
        np.testing.assert_allclose(npy(mp.detach()), tp.detach().numpy(), rtol=1e-6)


def test_float16_gradients_are_refused_as_in_pytorch():
    p = minitorch.ones(3, dtype=minitorch.float16, requires_grad=True)
    opt = minitorch.optim.SGD([p], lr=0.1)
    s = GradScaler("cpu")
    s.scale(p.sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        s.step(opt)
    q = minitorch.ones(3, dtype=minitorch.bfloat16, requires_grad=True)  # bfloat16 is allowed
    opt = minitorch.optim.SGD([q], lr=0.5)
    s = GradScaler("cpu", init_scale=4.0)
    s.scale(q.sum()).backward()
    s.step(opt)
    s.update()
    assert q.tolist() == [0.5, 0.5, 0.5]
