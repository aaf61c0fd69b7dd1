"""F.dropout's fused kernel (cpu/random.cpp, cuda/random.cu): for float32 / float64 the very
masks and values of the composed form ``x * (rand(shape) >= p) * (1 / (1 - p))`` for the
same seed (so seeded runs and utils.checkpoint's replay are unchanged), its gradient, double
backward, layouts, and one kernel each way on CUDA. (float16 / bfloat16 draw float32's masks:
tests/test_half_native_train.py.)"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, DEVICES, make_tensor, to_numpy

import minitorch
from minitorch import autograd
from minitorch.nn import functional as F
from minitorch.testing import gradcheck
from minitorch.utils.checkpoint import checkpoint
from test_fused_activations import assert_one_launch_each_way


def _composed(x, p):
    """The unfused form (what F.dropout computed before)."""
    keep = minitorch._C._rand(tuple(x.shape), x.dtype, x.device) >= p
    return x * keep * (1.0 / (1.0 - p))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("layout", ["contiguous", "transpose"])
def test_same_values_and_gradient_as_the_composed_form(p, dtype, device, layout):
    x_np = np.random.default_rng(0).normal(size=(33, 47))
    x_np[0, :3] = [-0.0, np.inf, -1.5]
    x = make_tensor(x_np, layout, device).to(dtype).requires_grad_(True)
    g = minitorch.randn(33, 47, device=device, dtype=dtype)
    minitorch.manual_seed(123)
    y = F.dropout(x, p)
    y.backward(g)
    fused_grad = to_numpy(x.grad)
    x.grad = None
    minitorch.manual_seed(123)
    ref = _composed(x, p)
    ref.backward(g)
    np.testing.assert_array_equal(to_numpy(y), to_numpy(ref))
    np.testing.assert_array_equal(fused_grad, to_numpy(x.grad))
    assert y.grad_fn.name() == "NativeDropoutBackward0"


@pytest.mark.parametrize("device", DEVICES)
def test_the_stream_advances_as_rand_would(device):
    x = minitorch.ones(1000, device=device)
    minitorch.manual_seed(7)
    F.dropout(x, 0.3)
    after_fused = to_numpy(minitorch._C._rand((8,), minitorch.float32, device))
    minitorch.manual_seed(7)
    _composed(x, 0.3)
    after_composed = to_numpy(minitorch._C._rand((8,), minitorch.float32, device))
    np.testing.assert_array_equal(after_fused, after_composed)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_and_double_backward(device):
    x = minitorch.randn(4, 5, dtype=minitorch.float64, device=device, requires_grad=True)

    def fixed_mask(x):
        minitorch.manual_seed(3)  # the same mask for every finite-difference evaluation
        return F.dropout(x, 0.4)

    assert gradcheck(fixed_mask, (x,))
    w = minitorch.randn(4, 5, dtype=minitorch.float64, device=device, requires_grad=True)
    y = fixed_mask(x)
    (gx,) = autograd.grad(y, x, grad_outputs=w, create_graph=True)
    (gw,) = autograd.grad(gx.sum(), w)  # d(g * mask / (1 - p)) / dg = mask / (1 - p)
    np.testing.assert_allclose(to_numpy(gw), (to_numpy(y) != 0) / 0.6, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_replays_the_same_mask(device):
    x = minitorch.randn(16, 32, device=device, requires_grad=True)
    minitorch.manual_seed(11)
    y = checkpoint(lambda t: F.dropout(t, 0.5) * 2.0, x, use_reentrant=False)
    y.sum().backward()
    mask = to_numpy(y) != 0
    np.testing.assert_array_equal(to_numpy(x.grad) != 0, mask)
    np.testing.assert_allclose(to_numpy(x.grad)[mask], 4.0, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_probabilities_and_16_bit_input(device):
    x = minitorch.randn(10, device=device)
    np.testing.assert_array_equal(to_numpy(F.dropout(x, 0.0)), to_numpy(x))
    assert not to_numpy(F.dropout(x, 1.0)).any()
    h = F.dropout(x.to(minitorch.float16), 0.5)
    assert h.dtype == minitorch.float16
    assert tuple(F.dropout(minitorch.zeros(0, 3, device=device), 0.5).shape) == (0, 3)


# ---------------------------------------------------------------- launch counts ----

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


@needs_cuda
def test_one_launch_forward_and_one_backward():
    assert_one_launch_each_way(lambda x: F.dropout(x, 0.1))
