"""The fused activations of op_list.h (F.gelu both ways, F.silu, F.mish, F.hardswish,
F.hardsigmoid, F.softplus; F.leaky_relu, F.elu and F.prelu, whose parameter is the op's
second input): values against NumPy in float64 on every device and dtype, float64
gradcheck of the first and (create_graph=True) second derivatives, layouts, size-0,
the kinks of the piecewise ones, and one kernel forward and one backward on CUDA (two for
the ones with a parameter: g times the derivative)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, DEVICES, make_tensor, to_numpy

import minitorch
from minitorch import autograd
from minitorch.nn import functional as F
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


# name -> (minitorch function, NumPy reference in float64, its derivative in float64)
ACTS = {
    "gelu": (F.gelu, lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
             lambda x: 0.5 * (1.0 + _erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), _gelu_tanh, None),
    "silu": (F.silu, lambda x: x * _sigmoid(x), lambda x: _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))),
    "mish": (F.mish, lambda x: x * np.tanh(_softplus(x)), None),
    "hardswish": (F.hardswish, lambda x: np.where(x <= -3, 0.0, np.where(x >= 3, x, x * (x + 3) / 6)),
                  lambda x: np.where(x < -3, 0.0, np.where(x <= 3, x / 3 + 0.5, 1.0))),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0.0, 1.0),
                    lambda x: np.where((x > -3) & (x < 3), 1.0 / 6, 0.0)),
    "softplus": (F.softplus, lambda x: np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20)))),
                 lambda x: np.where(x > 20, 1.0, _sigmoid(x))),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
                   lambda x: np.where(x > 0, 1.0, 0.2)),
    "elu": (lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0))),
            lambda x: np.where(x > 0, 1.0, 0.7 * np.exp(np.minimum(x, 0)))),
    "celu": (F.celu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
             lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0)))),
}
NAMES = list(ACTS)
SMOOTH = ["gelu", "gelu_tanh", "silu", "mish", "softplus"]


def _values(shape, seed=0, low=-6.0, high=6.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def _numeric_derivative(ref, x, h=1e-6):
    return (ref(x + h) - ref(x - h)) / (2 * h)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("layout", ["contiguous", "transpose"])
def test_values_and_gradient_match_numpy(name, dtype, device, layout):
    fn, ref, dref = ACTS[name]
    x_np = _values((7, 33)).astype(dtype)
    # also the kinks and far tails: -3, 3 (hardswish/hardsigmoid), large |x| (overflow-safe forms)
    x_np[0, :6] = [-3.0, 3.0, 0.0, -40.0, 40.0, -100.0]
    x = make_tensor(x_np, layout, device).requires_grad_(True)
    y = fn(x)
    tol = dict(rtol=2e-6, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    assert y.dtype == x.dtype and tuple(y.shape) == x_np.shape
    np.testing.assert_allclose(to_numpy(y), ref(x_np.astype(np.float64)), **tol)
    g_np = _values((7, 33), seed=1, low=-1.0, high=1.0).astype(dtype)
    y.backward(make_tensor(g_np, "contiguous", device))
    x64 = x_np.astype(np.float64)
    d = dref(x64) if dref is not None else _numeric_derivative(ref, x64)
    dtol = tol if dref is not None else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(x.grad), g_np * d, **(dtol if dtype == np.float64 else tol | dict(atol=1e-5)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16])
def test_16bit_inputs_compute_in_float32(name, dtype, device):
    fn, ref, _ = ACTS[name]
    x = minitorch.tensor(_values((5, 9)).astype(np.float32), device=device).to(dtype)
    y = fn(x)
    assert y.dtype == dtype
    expected = ref(to_numpy(x.float()).astype(np.float64))
    np.testing.assert_allclose(to_numpy(y.float()), expected, rtol=1e-2 if dtype == minitorch.float16 else 8e-3,
                               atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_size_zero_and_scalar(name, device):
    fn, ref, _ = ACTS[name]
    assert tuple(fn(minitorch.zeros(0, 3, device=device)).shape) == (0, 3)
    s = fn(minitorch.tensor(1.5, dtype=minitorch.float64, device=device))
    assert s.dim() == 0 and abs(s.item() - float(ref(np.array(1.5)))) < 1e-12


def _check_points(device):
    """float64 points on both sides of 0 and away from the kinks of hardswish / hardsigmoid
    (-3, 3), where the derivative jumps."""
    return minitorch.tensor([[-4.5, -2.5, -0.7, 0.1], [0.4, 1.3, 2.6, 4.2]], dtype=minitorch.float64, device=device,
                            requires_grad=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_gradcheck(name, device):
    assert gradcheck(ACTS[name][0], (_check_points(device),))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_second_derivative_gradcheck(name, device):
    """create_graph=True: the backward kernel's own gradient (in g and in x) is right."""
    fn, _, _ = ACTS[name]
    x = _check_points(device)
    w = minitorch.tensor(_values((2, 4), seed=3, low=-1, high=1), dtype=minitorch.float64, device=device,
                         requires_grad=True)

    def first_gradient(x, w):
        with autograd.enable_grad():  # gradcheck's finite differences run under no_grad
            (gx,) = autograd.grad(fn(x), x, grad_outputs=w, create_graph=True)
        return gx

    assert gradcheck(first_gradient, (x, w))


@pytest.mark.parametrize("name", SMOOTH)
def test_second_derivative_matches_numpy(name):
    fn, ref, _ = ACTS[name]
    x_np = np.linspace(-5, 5, 41)
    x = minitorch.tensor(x_np, requires_grad=True)
    (gx,) = autograd.grad(fn(x).sum(), x, create_graph=True)
    (ggx,) = autograd.grad(gx.sum(), x)
    h = 1e-4
    expected = (ref(x_np + h) - 2 * ref(x_np) + ref(x_np - h)) / (h * h)
    np.testing.assert_allclose(to_numpy(ggx), expected, rtol=1e-5, atol=1e-6)


def test_grad_fn_names_and_internal_ops():
    x = minitorch.randn(3, requires_grad=True)
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
    assert F.gelu(x, approximate="tanh").grad_fn.name() == "GeluBackward0"  # one node in PyTorch too
    assert F.silu(x).grad_fn.name() == "SiluBackward0"
    assert F.mish(x).grad_fn.name() == "MishBackward0"
    assert F.hardswish(x).grad_fn.name() == "HardswishBackward0"
    assert F.softplus(x).grad_fn.name() == "SoftplusBackward0"  # PyTorch's names for these three too
    assert F.leaky_relu(x).grad_fn.name() == "LeakyReluBackward0"
    assert F.elu(x).grad_fn.name() == "EluBackward0"
    assert not hasattr(minitorch, "_gelu") or "_gelu" not in minitorch._C._elementwise_ops  # internal, as aten's
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="erf")


def test_inplace_forms_write_the_input():
    x = minitorch.tensor([-1.0, 0.5, 2.0])
    expected = to_numpy(F.silu(x))
    out = F.silu(x, inplace=True)
    np.testing.assert_allclose(to_numpy(x), expected)
    assert out is x or np.array_equal(to_numpy(out), expected)


# ---------------------------------------------------------------- launch counts ----

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def _kernels(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


def assert_one_launch_each_way(fn, backward_launches=1):
    """fn(x) on CUDA is one kernel launch, and its backward one more (or backward_launches)."""
    x = minitorch.randn(64, 257, device="cuda", requires_grad=True)
    g = minitorch.randn(64, 257, device="cuda")
    out = []
    forward = _kernels(lambda: out.append(fn(x)))
    assert len(forward) == 1, forward
    backward = _kernels(lambda: out[0].backward(g))
    assert len(backward) == backward_launches, backward


@needs_cuda
@pytest.mark.parametrize("name", NAMES)
def test_one_launch_forward_and_one_backward(name):
    # (leaky_relu, elu, celu: g * <act>'(x, parameter) in one ternary kernel)
    assert_one_launch_each_way(ACTS[name][0])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, channels", [((4, 3, 5, 2), 3), ((6, 5), 5), ((7,), 1), ((2, 4, 3), 1)])
def test_prelu_is_one_kernel_with_the_weight_gradient(device, shape, channels):
    """F.prelu is _leaky_relu with the learned slope as its second input: values and both
    gradients against NumPy (the weight's summed over everything but its channel), float64
    gradcheck in x and the weight, and on CUDA one launch forward."""
    rng = np.random.default_rng(5)
    x_np, w_np = rng.uniform(-2, 2, shape), rng.uniform(0.05, 0.5, channels)
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    w = minitorch.tensor(w_np, device=device, requires_grad=True)
    ws = w_np.reshape((channels,) + (1,) * (len(shape) - 2)) if channels > 1 else w_np.reshape(())
    y = F.prelu(x, w)
    np.testing.assert_allclose(to_numpy(y), np.where(x_np > 0, x_np, ws * x_np), rtol=1e-12)
    g_np = rng.uniform(-1, 1, shape)
    y.backward(minitorch.tensor(g_np, device=device))
    np.testing.assert_allclose(to_numpy(x.grad), g_np * np.where(x_np > 0, 1.0, ws), rtol=1e-12)
    per = g_np * np.minimum(x_np, 0)
    want_w = per.sum() if channels == 1 else np.moveaxis(per, 1, 0).reshape(channels, -1).sum(1)
    np.testing.assert_allclose(to_numpy(w.grad).reshape(-1), np.reshape(want_w, -1), rtol=1e-10)
    x2 = minitorch.tensor(np.where(np.abs(x_np) < 0.05, 0.3, x_np), device=device, requires_grad=True)
    assert gradcheck(F.prelu, (x2, minitorch.tensor(w_np, device=device, requires_grad=True)))
    if device == "cuda":
        assert len(_kernels(lambda: F.prelu(x, w))) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_elu_family_and_logsigmoid_keep_their_formulas(device):
    """selu (elu times a scale), celu with alpha != 1 (its own formula) and logsigmoid
    (-softplus(-x)) against NumPy, on both sides of 0 and far out."""
    x_np = np.array([-50.0, -3.0, -0.5, 0.0, 0.5, 3.0, 30.0])
    x = minitorch.tensor(x_np, device=device)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(to_numpy(F.selu(x)), scale * np.where(x_np > 0, x_np, alpha * np.expm1(x_np)),
                               rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.celu(x, 0.5)), np.where(x_np > 0, x_np, 0.5 * np.expm1(x_np / 0.5)),
                               rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.logsigmoid(x)), -np.logaddexp(0, -x_np), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.softplus(x, beta=2, threshold=5)),
                               np.where(2 * x_np > 5, x_np, np.logaddexp(0, 2 * x_np) / 2), rtol=1e-12)
