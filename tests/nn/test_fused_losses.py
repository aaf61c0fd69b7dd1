"""The per-element losses of op_list.h (F.binary_cross_entropy, F.binary_cross_entropy_with_logits,
F.huber_loss, F.smooth_l1_loss, F.mse_loss, F.l1_loss): one kernel per element and one for the reduction, backward
g times the loss's derivative (one ternary kernel). Values and the gradients of input and target
against NumPy in float64 on every device, at the edges (p = 0 and 1, logits of +-100, x = 0,
|d| = delta), float64 gradcheck of the first and (create_graph=True) second derivatives, the
16-bit dtypes computed in float32 and rounded once, and the launches on CUDA."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, DEVICES, to_numpy

import minitorch
from minitorch import autograd
from minitorch.nn import functional as F
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _bce(p, y):
    with np.errstate(divide="ignore"):
        return -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))


def _huber(d, delta):
    return np.where(np.abs(d) <= delta, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta))


# name -> (loss(input, target) with reduction="none", NumPy loss, d/dinput, d/dtarget)
LOSSES = {
    "bce": (lambda x, y: F.binary_cross_entropy(x, y, reduction="none"), _bce,
            lambda p, y: (p - y) / np.maximum(p * (1 - p), 1e-12),
            lambda p, y: np.maximum(np.log1p(-p), -100) - np.maximum(np.log(p), -100)),
    "bce_with_logits": (lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
                        lambda x, y: np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x))),
                        lambda x, y: _sigmoid(x) - y, lambda x, y: -x),
    "huber": (lambda x, y: F.huber_loss(x, y, reduction="none", delta=0.7), lambda x, y: _huber(x - y, 0.7),
              lambda x, y: np.clip(x - y, -0.7, 0.7), lambda x, y: -np.clip(x - y, -0.7, 0.7)),
    "smooth_l1": (lambda x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.5),
                  lambda x, y: _huber(x - y, 0.5) / 0.5,
                  lambda x, y: np.clip((x - y) / 0.5, -1, 1), lambda x, y: -np.clip((x - y) / 0.5, -1, 1)),
    "mse": (lambda x, y: F.mse_loss(x, y, reduction="none"), lambda x, y: (x - y) ** 2,
            lambda x, y: 2 * (x - y), lambda x, y: -2 * (x - y)),
    "l1": (lambda x, y: F.l1_loss(x, y, reduction="none"), lambda x, y: np.abs(x - y),
           lambda x, y: np.sign(x - y), lambda x, y: -np.sign(x - y)),
}
NAMES = list(LOSSES)


def _points(name):
    """Inputs and targets in float64, with the edges of each loss."""
    rng = np.random.default_rng(1)
    if name == "bce":
        x = np.concatenate([rng.uniform(0.01, 0.99, 12), [0.0, 1.0, 1e-30, 0.5]])
        y = np.concatenate([rng.uniform(0, 1, 12), [1.0, 0.0, 1.0, 0.5]])
    elif name == "bce_with_logits":
        x = np.concatenate([rng.uniform(-5, 5, 12), [0.0, 100.0, -100.0, 30.0]])
        y = np.concatenate([rng.uniform(0, 1, 12), [0.5, 0.0, 1.0, 1.0]])
    else:
        x = np.concatenate([rng.uniform(-3, 3, 12), [0.7, -0.7, 0.5, 0.0]])
        y = np.concatenate([rng.uniform(-1, 1, 12), [0.0, 0.0, 0.0, 0.0]])
    return x.reshape(4, 4), y.reshape(4, 4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_values_and_gradients_match_numpy(name, device):
    fn, ref, d_input, d_target = LOSSES[name]
    x_np, y_np = _points(name)
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    y = minitorch.tensor(y_np, device=device, requires_grad=True)
    loss = fn(x, y)
    np.testing.assert_allclose(to_numpy(loss), ref(x_np, y_np), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(2).uniform(-1, 1, (4, 4))
    loss.backward(minitorch.tensor(g, device=device))
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(to_numpy(x.grad), g * d_input(x_np, y_np), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(to_numpy(y.grad), g * d_target(x_np, y_np), rtol=1e-10, atol=1e-12)


def _interior(name, device):
    """float64 points away from every kink and clamp (for finite differences)."""
    x_np, y_np = {
        "bce": ([[0.2, 0.45, 0.7], [0.9, 0.33, 0.6]], [[0.1, 0.8, 0.5], [1.0, 0.0, 0.3]]),
        "bce_with_logits": ([[-2.0, -0.3, 0.4], [1.7, 3.1, -4.0]], [[0.1, 0.8, 0.5], [1.0, 0.0, 0.3]]),
    }.get(name, ([[-2.0, -0.3, 0.4], [1.7, 0.1, -1.5]], [[0.1, 0.25, 0.5], [-0.2, 0.0, 0.3]]))
    return (minitorch.tensor(x_np, dtype=minitorch.float64, device=device, requires_grad=True),
            minitorch.tensor(y_np, dtype=minitorch.float64, device=device, requires_grad=True))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_gradcheck_first_and_second_derivatives(name, device):
    fn = LOSSES[name][0]
    x, y = _interior(name, device)
    assert gradcheck(fn, (x, y))
    w = minitorch.tensor(np.random.default_rng(3).uniform(-1, 1, (2, 3)), dtype=minitorch.float64, device=device,
                         requires_grad=True)

    def first_gradients(x, y, w):
        with autograd.enable_grad():  # gradcheck's finite differences run under no_grad
            gx, gy = autograd.grad(fn(x, y), (x, y), grad_outputs=w, create_graph=True)
        return gx, gy

    assert gradcheck(first_gradients, (x, y, w))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_16_bit_is_float32_math_rounded_once(name, dtype, device):
    fn = LOSSES[name][0]
    x_np, y_np = _interior(name, "cpu")
    x, y = (minitorch.tensor(to_numpy(t), device=device).to(dtype) for t in (x_np, y_np))
    out = fn(x, y)
    assert out.dtype == dtype
    if name in ("huber", "smooth_l1"):  # the difference is an op of its own, rounded to 16 bits first
        d = x - y
        want = fn(d.float(), minitorch.zeros_like(d.float())).to(dtype)
        if name == "smooth_l1":  # huber, then a multiply by 1 / beta: each rounded, as the two ops are
            want = F.huber_loss(d.float(), minitorch.zeros_like(d.float()), reduction="none",
                                delta=0.5).to(dtype) * 2.0
    else:
        want = fn(x.float(), y.float()).to(dtype)
    np.testing.assert_array_equal(to_numpy(out.float()), to_numpy(want.float()))


def _kernels(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


@pytest.mark.parametrize("name, forward", [("bce_with_logits", 1), ("huber", 2), ("bce", 1), ("mse", 1), ("l1", 1)])
def test_one_kernel_per_element_and_one_backward_on_cuda(name, forward):
    """Forward: the loss's kernel (after the difference for huber), then the mean; backward
    of the input: the mean's gradient, then g times the derivative in one ternary kernel."""
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    fn = LOSSES[name][0]
    x = minitorch.rand(64, 33, device="cuda", requires_grad=True)
    y = minitorch.rand(64, 33, device="cuda")
    out = [None]
    fwd = _kernels(lambda: out.__setitem__(0, fn(x, y).mean()))
    assert len(fwd) == forward + 1, fwd
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out[0].backward()
    per_node = {e.name: [k.name.split("<")[0] for k in e.kernels] for e in prof.events() if e.kernels}
    loss_node = [n for n in per_node if "Loss" in n or "Entropy" in n]
    assert len(loss_node) == 1 and per_node[loss_node[0]] == ["ternary_dense_kernel"], per_node
    bwd = [k for ks in per_node.values() for k in ks]
    assert len(bwd) == 3, bwd  # backward()'s seed 1.0, the mean's gradient (g / count), g * derivative


@pytest.mark.parametrize("device", DEVICES)
def test_mse_and_l1_broadcast_reduce_and_keep_integer_inputs_composed(device):
    """The fused rows broadcast as the composed ops did (with PyTorch's warning), reduce as
    asked, and integer inputs still take the composed path (its dtype rules)."""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal(5)
    x, y = minitorch.tensor(a, device=device), minitorch.tensor(b, device=device)
    with pytest.warns(UserWarning, match="target size"):
        got = F.mse_loss(x, y, reduction="sum")
    np.testing.assert_allclose(got.item(), ((a - b) ** 2).sum(), rtol=1e-12)
    with pytest.warns(UserWarning, match="target size"):
        got = F.l1_loss(x, y)
    np.testing.assert_allclose(got.item(), np.abs(a - b).mean(), rtol=1e-12)
    xi = minitorch.tensor([1, 2, 3], device=device)
    assert F.mse_loss(xi, xi * 2, reduction="sum").item() == 14
    assert F.l1_loss(xi, xi * 2, reduction="none").tolist() == [1, 2, 3]
    assert F.mse_loss(x, x * 0.5).grad_fn is None  # nothing requires a gradient
    xg = minitorch.tensor(a, device=device, requires_grad=True)
    assert F.mse_loss(xg, x, reduction="none").grad_fn.name() == "MseLossBackward0"
    assert F.l1_loss(xg, x, reduction="none").grad_fn.name() == "L1LossBackward0"
