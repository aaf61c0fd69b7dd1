"""F.cross_entropy with class weights and label smoothing, and F.nll_loss with weights, as the
one fused op (kernels class_loss / class_loss_backward): values and gradients against the
composed formula (_cross_entropy_composed: log_softmax, the weighted NLL and the smoothing's
share, as PyTorch defines them) in float64 on every device, every reduction, ignored rows,
spatial targets; float64 gradcheck and a double backward; 16-bit logits; and the launches."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, DEVICES, to_numpy

import minitorch
from minitorch import autograd
from minitorch.nn import functional as F
from minitorch.nn.functional import _cross_entropy_composed
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

CASES = [  # (weight?, label_smoothing)
    (True, 0.0), (False, 0.1), (True, 0.25), (False, 1.0), (True, 1.0),
]


def _inputs(device, dtype=minitorch.float64, N=9, C=7, scale=3.0):
    rng = np.random.default_rng(1)
    x = minitorch.tensor(rng.standard_normal((N, C)) * scale, dtype=dtype, device=device, requires_grad=True)
    t_np = rng.integers(0, C, N)
    t_np[[1, N - 1]] = -100  # ignored rows
    t = minitorch.tensor(t_np, device=device)
    w = minitorch.tensor(rng.uniform(0.2, 2.0, C), dtype=dtype, device=device)
    return x, t, w


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted, smoothing", CASES, ids=lambda v: str(v))
def test_fused_matches_the_composed_formula(device, reduction, weighted, smoothing):
    x, t, w = _inputs(device)
    weight = w if weighted else None
    fused = F.cross_entropy(x, t, weight=weight, reduction=reduction, label_smoothing=smoothing)
    if reduction != "none":  # (none: a reshape of it)
        assert fused.grad_fn.name() == "CrossEntropyLossBackward0"
    g = minitorch.tensor(np.random.default_rng(2).uniform(0.5, 1.5, tuple(fused.shape)), device=device)
    (gx,) = autograd.grad(fused, (x,), grad_outputs=g)
    composed = _cross_entropy_composed(x, t, weight, -100, reduction, smoothing)
    (cx,) = autograd.grad(composed, (x,), grad_outputs=g)
    np.testing.assert_allclose(to_numpy(fused), to_numpy(composed), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(gx), to_numpy(cx), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_nll_loss_is_the_fused_op(device, reduction):
    x, t, w = _inputs(device)
    logp = F.log_softmax(x, 1)
    fused = F.nll_loss(logp, t, weight=w, reduction=reduction)
    if reduction != "none":
        assert fused.grad_fn.name() == "NllLossBackward0"
    keep = to_numpy(t) != -100
    picked = -to_numpy(logp)[np.arange(9), np.where(keep, to_numpy(t), 0)] * to_numpy(w)[np.where(keep, to_numpy(t), 0)]
    per_row = np.where(keep, picked, 0.0)
    want = {"none": per_row, "sum": per_row.sum(),
            "mean": per_row.sum() / to_numpy(w)[to_numpy(t)[keep]].sum()}[reduction]
    np.testing.assert_allclose(to_numpy(fused), want, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_spatial_targets_and_all_ignored(device):
    rng = np.random.default_rng(3)
    x = minitorch.tensor(rng.standard_normal((2, 5, 3, 4)), device=device, requires_grad=True)
    t = minitorch.tensor(rng.integers(0, 5, (2, 3, 4)), device=device)
    w = minitorch.tensor(rng.uniform(0.5, 1.5, 5), device=device)
    fused = F.cross_entropy(x, t, weight=w, label_smoothing=0.2)
    x2 = x.permute(0, 2, 3, 1).reshape(-1, 5)
    composed = _cross_entropy_composed(x2, t.reshape(-1), w, -100, "mean", 0.2)
    np.testing.assert_allclose(to_numpy(fused), to_numpy(composed), rtol=1e-12)
    none = minitorch.full((4,), -100, dtype=minitorch.int64, device=device)
    y = F.cross_entropy(minitorch.randn(4, 5, device=device), none, weight=w, label_smoothing=0.1)
    assert np.isnan(y.item())  # 0 / 0, as PyTorch


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_and_double_backward(device):
    x, t, w = _inputs(device, N=4, C=3, scale=1.0)
    assert gradcheck(lambda x: F.cross_entropy(x, t, weight=w, label_smoothing=0.3), (x,))
    assert gradcheck(lambda x: F.cross_entropy(x, t, label_smoothing=0.3, reduction="none"), (x,))
    results = []
    for fn in (lambda: F.cross_entropy(x, t, weight=w, label_smoothing=0.3),
               lambda: _cross_entropy_composed(x, t, w, -100, "mean", 0.3)):
        (gx,) = autograd.grad(fn(), (x,), create_graph=True)
        (ggx,) = autograd.grad((gx * gx).sum(), (x,))
        results.append((to_numpy(gx), to_numpy(ggx)))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float16, minitorch.bfloat16], ids=str)
def test_lower_precision_logits(device, dtype):
    x64, t, w64 = _inputs(device)
    x = x64.detach().to(dtype).requires_grad_()
    loss = F.cross_entropy(x, t, weight=w64.to(dtype), label_smoothing=0.1)
    loss.backward()
    want = _cross_entropy_composed(x.detach().double(), t, w64.to(dtype).double(), -100, "mean", 0.1)
    tol = {minitorch.float32: 1e-5, minitorch.float16: 2e-3, minitorch.bfloat16: 2e-2}[dtype]
    assert loss.dtype == dtype and x.grad.dtype == dtype
    np.testing.assert_allclose(float(loss.float().item()), float(want.item()), rtol=tol)


def test_bad_weight_and_smoothing_raise():
    x, t, w = _inputs("cpu")
    with pytest.raises(ValueError, match="cross_entropy: label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, t, label_smoothing=1.5)
    with pytest.raises(Exception, match="weight"):
        F.cross_entropy(x, t, weight=minitorch.ones(3, dtype=minitorch.float64))


def test_two_launches_forward_one_backward_on_cuda():
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    x = minitorch.randn(64, 100, device="cuda", requires_grad=True)
    t = minitorch.randint(0, 100, (64,), device="cuda")
    w = minitorch.rand(100, device="cuda")

    def kernels(fn):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            fn()
        return [(e.name, k.name) for e in p.events() for k in e.kernels]
    out = [None]
    fwd = kernels(lambda: out.__setitem__(0, F.cross_entropy(x, t, weight=w, label_smoothing=0.1)))
    assert len(fwd) == 2, fwd
    bwd = kernels(lambda: out[0].backward())
    assert [n for n, _ in bwd if n == "CrossEntropyLossBackward0"] == ["CrossEntropyLossBackward0"], bwd
