"""The fused activations of op_list.h (F.gelu both ways, F.silu, F.mish, F.hardswish,
F.hardsigmoid): values against NumPy in float64 on every device and dtype, float64
gradcheck of the first and (create_graph=True) second derivatives, layouts, size-0,
the kinks of the piecewise ones, and one kernel forward and one backward on CUDA."""
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
}
NAMES = list(ACTS)
SMOOTH = ["gelu", "gelu_tanh", "silu", "mish"]


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


def assert_one_launch_each_way(fn):
    """fn(x) on CUDA is one kernel launch, and its backward one more."""
    x = minitorch.randn(64, 257, device="cuda", requires_grad=True)
    g = minitorch.randn(64, 257, device="cuda")
    out = []
    forward = _kernels(lambda: out.append(fn(x)))
    assert len(forward) == 1, forward
    backward = _kernels(lambda: out[0].backward(g))
    assert len(backward) == 1, backward


@needs_cuda
@pytest.mark.parametrize("name", NAMES)
def test_one_launch_forward_and_one_backward(name):
    assert_one_launch_each_way(ACTS[name][0])
