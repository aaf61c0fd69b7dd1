"""float16 / bfloat16 training ops read and written in place by the CUDA kernels (issue 31):
dropout, the class losses (cross_entropy, nll_loss) and the optimizer steps (SGD, Adam, AdamW,
RMSprop, GradScaler's unscale).

Each kernel loads 16-bit values, computes in float32 registers and rounds once at the store,
in one launch as in float32. So each test compares a 16-bit op with the same op on the
float32 values, rounded after (the same bits), and counts the launches (structural, the same
on a GPU and in the emulator, never times). The CPU may still stage 16-bit tensors through
float32 copies: where a test takes a device, the CPU must give the same bits.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, DEVICES

import minitorch
import minitorch.nn.functional as F
from minitorch import nn, optim
from test_half_native import BF16, F16, HALVES, assert_same_bits, bits, kernels, samples

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def half(dt, a, device="cuda") -> minitorch.Tensor:
    return minitorch.tensor(np.asarray(a, np.float32), device=device).to(dt)


def launches(fn) -> list[str]:
    """The names of the kernels fn() launches, without their template arguments."""
    return [k.name.split("<")[0] for k in kernels(fn)]


# ---- dropout --------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_draws_float32_masks_and_rounds_once(device, dt, p):
    x = half(dt, samples((37, 53), 1), device).requires_grad_()
    g = half(dt, samples((37, 53), 2), device)
    minitorch.manual_seed(5)
    y = F.dropout(x, p)
    y.backward(g)
    x32 = x.detach().float().requires_grad_()
    minitorch.manual_seed(5)
    y32 = F.dropout(x32, p)  # the same seed: the same draws, in float32
    y32.backward(g.float())
    assert y.dtype == dt and y.grad_fn.name() == "NativeDropoutBackward0"
    assert_same_bits(y, y32.to(dt))
    assert_same_bits(x.grad, x32.grad.to(dt))
    # the mask is float32's: kept exactly where float32 kept (finite non-zero inputs tell)
    finite = np.isfinite(bits(x).view(np.float32)) & (bits(x).view(np.float32) != 0)
    kept16 = bits(y).view(np.float32) != 0
    kept32 = y32.detach().cpu().numpy() != 0
    np.testing.assert_array_equal(kept16[finite], kept32[finite])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_dropout_strided_input_and_double_backward(device, dt):
    x = half(dt, samples((20, 30), 3), device).t().requires_grad_()  # a transposed view
    minitorch.manual_seed(8)
    y = F.dropout(x, 0.3)
    minitorch.manual_seed(8)
    y32 = F.dropout(x.detach().float(), 0.3)
    assert_same_bits(y, y32.to(dt))
    w = half(dt, samples((30, 20), 4), device).requires_grad_()
    (gx,) = minitorch.autograd.grad(y, x, grad_outputs=w, create_graph=True)
    (gw,) = minitorch.autograd.grad(gx.float().sum(), w)  # d(w * scale * mask) / dw = scale * mask
    assert gw.dtype == dt
    minitorch.manual_seed(8)
    mask = F.dropout(minitorch.ones(30, 20, device=device), 0.3).cpu().numpy() != 0  # the draws of that seed
    scale = minitorch.tensor([1 / 0.7]).to(dt).float().item()
    np.testing.assert_array_equal(gw.float().cpu().numpy(), np.where(mask, scale, 0.0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_dropout_edges_return_what_float32_does(device, dt):
    x = half(dt, samples((6, 7), 5), device)
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.5, training=False) is x
    zero = F.dropout(x, 1.0)
    assert zero.dtype == dt
    assert_same_bits(zero, (x.float() * 0.0).to(dt))  # NaN and inf stay NaN, as x * 0
    layer = nn.Dropout(0.5)
    layer.eval()
    assert layer(x) is x
    empty = F.dropout(minitorch.zeros(0, 3, device=device, dtype=dt), 0.5)
    assert tuple(empty.shape) == (0, 3) and empty.dtype == dt
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("p", [0.2, 0.5, 0.75])
def test_dropout_mask_statistics(device, dt, p):
    minitorch.manual_seed(21)
    n = 40000
    y = nn.Dropout(p)(minitorch.ones(n, device=device, dtype=dt)).float().cpu().numpy()
    kept = y != 0
    # the kept fraction is binomial: within 5 standard deviations of 1 - p
    assert abs(kept.mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    want = minitorch.tensor([1 / (1 - p)]).to(dt).float().item()  # the scale rounded once
    np.testing.assert_array_equal(np.unique(y[kept]), [want])
    # another call draws another mask; the same seed draws the same one
    again = nn.Dropout(p)(minitorch.ones(n, device=device, dtype=dt)).float().cpu().numpy()
    assert (again != y).any()
    minitorch.manual_seed(21)
    np.testing.assert_array_equal(F.dropout(minitorch.ones(n, device=device, dtype=dt), p).float().cpu().numpy(), y)


@needs_cuda
@pytest.mark.parametrize("dt", HALVES)
def test_dropout_launches_as_many_kernels_as_float32(dt):
    x32 = minitorch.randn(64, 100, device="cuda")
    x = x32.to(dt)
    for fn in (lambda t: F.dropout(t, 0.5), lambda t: nn.Dropout(0.25)(t)):
        assert launches(lambda: fn(x)) == launches(lambda: fn(x32)) == ["dropout_kernel"]
    x.requires_grad_(), x32.requires_grad_()
    y, y32 = F.dropout(x, 0.5), F.dropout(x32, 0.5)
    g, g32 = minitorch.ones_like(y), minitorch.ones_like(y32)
    assert launches(lambda: y.backward(g)) == launches(lambda: y32.backward(g32))
    assert x.grad.dtype == dt


# ---- cross_entropy and nll_loss --------------------------------------------------------------

LOSSES = {"cross_entropy": F.cross_entropy, "nll_loss": F.nll_loss}


def targets(n: int, c: int, seed: int, device="cuda", ignore=None) -> minitorch.Tensor:
    t = np.random.default_rng(seed).integers(0, c, n)
    if ignore is not None and n > 2:
        t[::3] = ignore
    return minitorch.tensor(t.astype(np.int64), device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(64, 10), (5, 1500), (1, 1), (0, 4), (33, 7)])
def test_class_losses_equal_float32_math_rounded(device, dt, loss, reduction, shape):
    n, c = shape
    fn = LOSSES[loss]
    xv = np.random.default_rng(6).uniform(-6, 6, shape).astype(np.float32)
    x = half(dt, xv, device).requires_grad_()
    ignore = 2 if shape == (33, 7) else -100
    t = targets(n, c, 7, device, ignore if ignore != -100 else None)
    out = fn(x, t, reduction=reduction, ignore_index=ignore)
    x32 = x.detach().float().requires_grad_()
    out32 = fn(x32, t, reduction=reduction, ignore_index=ignore)
    assert out.dtype == dt
    assert_same_bits(out, out32.to(dt))
    g = half(dt, samples(tuple(out.shape), 8, 0.5, 2.0), device)
    out.backward(g)
    out32.backward(g.float())
    assert x.grad.dtype == dt
    assert_same_bits(x.grad, x32.grad.to(dt))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_class_losses_with_inf_and_nan_logits(device, dt):
    x = half(dt, samples((8, 9), 9), device).requires_grad_()
    t = targets(8, 9, 10, device)
    for fn in LOSSES.values():
        x.grad = None
        out = fn(x, t)
        x32 = x.detach().float().requires_grad_()
        out32 = fn(x32, t)
        assert_same_bits(out, out32.to(dt))
        out.backward()
        out32.backward()
        assert_same_bits(x.grad, x32.grad.to(dt))


@needs_cuda
@pytest.mark.parametrize("dt", HALVES)
def test_class_loss_target_out_of_range_is_an_index_error(dt):
    x = half(dt, np.zeros((3, 4)))
    t = minitorch.tensor([0, 4, 1], device="cuda")
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(x, t).item()


@needs_cuda
@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss", "log_softmax_nll"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_class_losses_launch_as_many_kernels_as_float32(dt, loss, reduction):
    fn = {"cross_entropy": F.cross_entropy, "nll_loss": F.nll_loss,
          "log_softmax_nll": lambda x, t, **kw: F.nll_loss(F.log_softmax(x, 1), t, **kw)}[loss]
    x32 = minitorch.randn(64, 10, device="cuda")
    t = targets(64, 10, 11)
    x = x32.to(dt)
    n16, n32 = launches(lambda: fn(x, t, reduction=reduction)), launches(lambda: fn(x32, t, reduction=reduction))
    assert n16 == n32 and "copy_kernel" not in n16, (n16, n32)
    x.requires_grad_(), x32.requires_grad_()
    out, out32 = fn(x, t, reduction=reduction), fn(x32, t, reduction=reduction)
    g, g32 = minitorch.ones_like(out), minitorch.ones_like(out32)
    b16, b32 = launches(lambda: out.backward(g)), launches(lambda: out32.backward(g32))
    assert b16 == b32 and "copy_kernel" not in b16, (b16, b32)


# ---- optimizers --------------------------------------------------------------------------------

SHAPES = [(0,), (1,), (3, 5), (70,), (2, 3, 4)]
OPTIMIZERS = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.1),
    "sgd_wd": lambda ps: optim.SGD(ps, lr=0.05, weight_decay=0.01),
    "sgd_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01),
    "sgd_nesterov": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adam": lambda ps: optim.Adam(ps, lr=1e-2),
    "adam_wd": lambda ps: optim.Adam(ps, lr=1e-2, betas=(0.8, 0.99), weight_decay=0.1),
    "adamw": lambda ps: optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    "adam_amsgrad_maximize": lambda ps: optim.Adam(ps, lr=1e-2, amsgrad=True, maximize=True, weight_decay=0.1),
    "adamw_amsgrad": lambda ps: optim.AdamW(ps, lr=1e-2, amsgrad=True),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=1e-2),
    "rmsprop_all": lambda ps: optim.RMSprop(ps, lr=1e-2, alpha=0.9, momentum=0.9, centered=True, weight_decay=0.01,
                                            maximize=True),
}


def _state_copy(state: dict, dtype) -> dict:
    return {k: (v.detach().to(dtype) if isinstance(v, minitorch.Tensor) else v) for k, v in state.items()}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_equal_float32_math_rounded(device, dt, name):
    """Each step of a 16-bit optimizer is the float32 step on the 16-bit values (param, grad and
    state upcast exactly), rounded once: states keep the parameter's dtype, as in PyTorch."""
    make = OPTIMIZERS[name]
    rng = np.random.default_rng(12)
    params = [half(dt, rng.uniform(-2, 2, s), device).requires_grad_() for s in SHAPES]
    opt = make(params)
    for step in range(3):
        for p in params:
            p.grad = half(dt, rng.standard_normal(p.shape) * (1 + step), device)
        mirror = [p.detach().float().requires_grad_() for p in params]
        opt32 = make(mirror)
        for p, m in zip(params, mirror):
            m.grad = p.grad.float()
            if id(p) in opt.state:
                opt32.state[id(m)] = _state_copy(opt.state[id(p)], minitorch.float32)
        opt.step()
        opt32.step()
        for p, m in zip(params, mirror):
            assert p.dtype == dt
            assert_same_bits(p.detach(), m.detach().to(dt))
            state, state32 = opt.state.get(id(p), {}), opt32.state.get(id(m), {})
            assert state.keys() == state32.keys()
            for k, v in state.items():
                if isinstance(v, minitorch.Tensor):
                    assert v.dtype == dt, (k, v.dtype)
                    assert_same_bits(v, state32[k].to(dt))
                else:
                    assert v == state32[k]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_single_parameter_steps_equal_float32_math_rounded(device, dt):
    rng = np.random.default_rng(13)
    p, g, buf = (half(dt, rng.standard_normal(40), device) for _ in range(3))
    p32, buf32 = p.float(), buf.float()
    minitorch._C._sgd_step(p, g, buf, lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=True)
    minitorch._C._sgd_step(p32, g.float(), buf32, lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.01,
                           nesterov=True)
    assert_same_bits(p, p32.to(dt))
    assert_same_bits(buf, buf32.to(dt))
    m, v = half(dt, rng.standard_normal(40), device), half(dt, rng.uniform(0, 1, 40), device)
    p32, m32, v32 = p.float(), m.float(), v.float()
    kw = dict(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1, decoupled=True, step=3)
    minitorch._C._adam_step(p, g, m, v, **kw)
    minitorch._C._adam_step(p32, g.float(), m32, v32, **kw)
    for got, want in ((p, p32), (m, m32), (v, v32)):
        assert_same_bits(got, want.to(dt))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", [pytest.param(BF16, id="bfloat16")])  # GradScaler refuses float16 grads
def test_grad_scaler_unscale_of_16_bit_grads(device, dt):
    grads = [half(dt, samples((9, 4), 14), device), half(dt, np.arange(5.0) * 1e3, device)]
    wants = [(gr.float() * np.float32(1 / 1024)).to(dt) for gr in grads]
    found = minitorch.zeros(1, device=device)
    inv = minitorch.full((1,), 1 / 1024, device=device)
    minitorch._C._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    for gr, want in zip(grads, wants):
        assert_same_bits(gr, want)
    assert found.item() == 1.0  # the first holds inf and NaN
    found.zero_()
    minitorch._C._amp_foreach_non_finite_check_and_unscale_(grads[1:], found, inv)
    assert found.item() == 0.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_amsgrad_keeps_its_maximum_in_16_bits(device, dt):
    rng = np.random.default_rng(15)
    p = half(dt, rng.standard_normal(30), device).requires_grad_()
    p32 = p.detach().float().requires_grad_()
    opt, opt32 = optim.Adam([p], lr=1e-2, amsgrad=True), optim.Adam([p32], lr=1e-2, amsgrad=True)
    for _ in range(3):
        g = half(dt, rng.standard_normal(30), device)
        p.grad, p32.grad = g, g.float()
        opt.step(), opt32.step()
    assert opt.state[id(p)]["max_exp_avg_sq"].dtype == dt
    np.testing.assert_allclose(p.detach().float().cpu().numpy(), p32.detach().cpu().numpy(), rtol=2**-6, atol=2**-6)


@needs_cuda
@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_launch_as_many_kernels_as_float32(dt, name):
    make = OPTIMIZERS[name]

    def counted(dtype):
        params = [minitorch.randn(*s, device="cuda").to(dtype).requires_grad_() for s in [(7, 3), (1,), (0,), (50,)]]
        for p in params:
            p.grad = minitorch.ones_like(p)
        opt = make(params)
        opt.step()  # the first step makes the state
        return launches(opt.step)

    n16, n32 = counted(dt), counted(minitorch.float32)
    assert n16 == n32 and len(n16) == 1, (n16, n32)
