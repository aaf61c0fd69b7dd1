"""tanh's and sigmoid's backward as one elementwise op each (op_list.h: _tanh_backward(g, y) =
g (1 - y^2), _sigmoid_backward(g, y) = g y (1 - y), y the forward's output, as PyTorch's
tanh_backward / sigmoid_backward): values against NumPy on every device and dtype with
broadcasting and strided views, float64 gradcheck of the first and second derivatives
(the backward ops' own gradient), the nodes' names, and one launch each way on CUDA."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, to_numpy

import minitorch
from minitorch import _C, autograd
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import assert_close, gradcheck

REF = {"tanh": lambda g, y: g * (1 - y * y), "sigmoid": lambda g, y: g * y * (1 - y)}
OPS = {"tanh": _C._tanh_backward, "sigmoid": _C._sigmoid_backward}


def _values(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype,tol", [(minitorch.float64, 1e-12), (minitorch.float32, 1e-6),
                                       (minitorch.float16, 2e-3), (minitorch.bfloat16, 2e-2)])
def test_values_broadcast_and_strided(device, name, dtype, tol):
    g_np, y_np = _values((4, 6), 0), _values((6,), 1)
    g = minitorch.tensor(g_np, dtype=dtype, device=device)
    y = minitorch.tensor(y_np, dtype=dtype, device=device)
    out = OPS[name](g, y)  # y broadcast over the rows
    assert out.dtype == dtype and tuple(out.shape) == (4, 6)
    want = REF[name](to_numpy(g.double()), to_numpy(y.double()))
    assert_close(out.double(), want, rtol=tol, atol=tol)
    gt = minitorch.tensor(_values((6, 4), 2), dtype=dtype, device=device).t()  # a transposed view
    want = REF[name](to_numpy(gt.double()), to_numpy(y.double()))
    assert_close(OPS[name](gt, y).double(), want, rtol=tol, atol=tol)
    assert tuple(OPS[name](g[:0], y).shape) == (0, 6)


def test_integer_inputs_promote_to_float(device):
    out = _C._tanh_backward(minitorch.tensor([1, 2], device=device), minitorch.tensor([0, 1], device=device))
    assert out.dtype == minitorch.get_default_dtype()
    assert_close(out, np.array([1.0, 0.0]))


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_first_and_second_derivative_gradcheck(device, name):
    x = minitorch.tensor(_values((3, 4), 3) * 2, dtype=minitorch.float64, device=device, requires_grad=True)
    w = minitorch.tensor(_values((3, 4), 4), dtype=minitorch.float64, device=device, requires_grad=True)
    fn = getattr(minitorch, name)
    assert gradcheck(fn, (x,))

    def first_gradient(x, w):
        with autograd.enable_grad():  # gradcheck's finite differences run under no_grad
            (gx,) = autograd.grad(fn(x), x, grad_outputs=w, create_graph=True)
        return gx

    assert gradcheck(first_gradient, (x, w))
    y = fn(x)
    assert y.grad_fn.name() == f"{name.capitalize()}Backward0"
    (gx,) = autograd.grad(y, x, grad_outputs=w, create_graph=True)
    assert gx.grad_fn.name() == f"{name.capitalize()}BackwardBackward0"  # PyTorch's name too


@pytest.mark.needs_cuda
@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16])
def test_cuda_one_launch_each_way(name, dtype):
    x = minitorch.randn(64, 257, device="cuda", dtype=dtype, requires_grad=True)
    g = minitorch.randn(64, 257, device="cuda", dtype=dtype)
    out = []

    def kernels(fn):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
        return [k.name for e in prof.events() for k in e.kernels]

    assert len(kernels(lambda: out.append(getattr(x, name)()))) == 1
    backward = kernels(lambda: out[0].backward(g))
    assert len(backward) == 1, backward  # was three: y * y, 1 - that, g * that
