"""The backward formulas that run as one ternary kernel (div's gradient for its divisor, the
2-norm's, var's and std's) against the same formulas written with tensor ops, which is what
runs under create_graph (double backward needs the ops' own gradients). Both must give the
same values on every device, at the edges too: a zero vector's norm, a constant row's std,
a broadcast divisor, 16-bit inputs."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import to_numpy


def both_paths(fn, inputs, g):
    """(fused, composed): the gradients of fn(*inputs) with g, without and with create_graph."""
    fused = minitorch.autograd.grad(fn(*inputs), inputs, g)
    composed = minitorch.autograd.grad(fn(*inputs), inputs, g, create_graph=True)
    return [to_numpy(t.detach()) for t in fused], [to_numpy(t.detach()) for t in composed]


def leaf(a, device, dtype=minitorch.float64):
    return minitorch.tensor(np.asarray(a), dtype=dtype, device=device).requires_grad_()


CASES = {
    "div": (lambda a, b: a / b, [(5, 4), (5, 4)]),
    "div_broadcast_divisor": (lambda a, b: a / b, [(5, 4), (1, 4)]),
    "div_number_dividend": (lambda b: 2.5 / b, [(3, 4)]),
    "norm_dim": (lambda x: x.norm(dim=1), [(6, 5)]),
    "norm_keepdim": (lambda x: x.norm(dim=0, keepdim=True), [(6, 5)]),
    "norm_all": (lambda x: x.norm(), [(3, 4)]),
    "var": (lambda x: x.var(1), [(6, 5)]),
    "var_correction0_keepdim": (lambda x: x.var(0, correction=0, keepdim=True), [(6, 5)]),
    "std": (lambda x: x.std(1), [(6, 5)]),
    "std_all": (lambda x: x.std(), [(4, 5)]),
    "normalize": (lambda x: minitorch.nn.functional.normalize(x, dim=1), [(6, 5)]),
    "cosine_similarity": (lambda a, b: minitorch.nn.functional.cosine_similarity(a, b), [(6, 5), (6, 5)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fused_and_composed_backward_agree(device, name):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(len(name))
    inputs = [leaf(rng.standard_normal(s) + (3.0 if name.startswith("div") and k == len(shapes) - 1 else 0.0),
                   device) for k, s in enumerate(shapes)]
    with minitorch.no_grad():
        out_shape = fn(*inputs).shape
    g = minitorch.tensor(rng.standard_normal(tuple(out_shape)), dtype=minitorch.float64, device=device)
    fused, composed = both_paths(fn, inputs, g)
    for f, c in zip(fused, composed):
        np.testing.assert_allclose(f, c, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", ["norm", "std"])
def test_a_zero_norm_or_constant_row_gets_a_zero_gradient(device, op):
    """Row 0 is all zeros (norm 0) or constant (std 0): PyTorch's gradient there is 0, not NaN."""
    a = np.random.default_rng(3).standard_normal((3, 4))
    a[0] = 0.0 if op == "norm" else 1.5
    x = leaf(a, device)
    fn = (lambda t: t.norm(dim=1)) if op == "norm" else (lambda t: t.std(1))
    g = minitorch.ones(3, dtype=minitorch.float64, device=device)
    fused, composed = both_paths(fn, [x], g)
    np.testing.assert_array_equal(fused[0][0], np.zeros(4))
    np.testing.assert_allclose(fused[0], composed[0], rtol=1e-12, atol=1e-14)
    if op == "norm":  # elsewhere x / ||x||
        np.testing.assert_allclose(fused[0][1:], a[1:] / np.linalg.norm(a[1:], axis=1, keepdims=True), rtol=1e-12)
    else:  # (x - mean) / ((N - 1) std)
        rest = a[1:]
        want = (rest - rest.mean(1, keepdims=True)) / (3 * rest.std(1, ddof=1, keepdims=True))
        np.testing.assert_allclose(fused[0][1:], want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16, minitorch.float32])
def test_fused_backward_in_narrow_dtypes(device, dtype):
    """The kernels compute 16-bit inputs in float32 registers: within the dtype's rounding of
    the float64 gradient."""
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((8, 16)), rng.uniform(1, 2, (8, 16))
    tol = {minitorch.float16: 2e-2, minitorch.bfloat16: 5e-2, minitorch.float32: 1e-5}[dtype]
    for fn, arrays in [(lambda x, y: x / y, (a, b)), (lambda x: x.norm(dim=1), (a,)), (lambda x: x.std(1), (a,))]:
        lo = [leaf(v, device, dtype) for v in arrays]
        hi = [leaf(v, device) for v in arrays]
        got = minitorch.autograd.grad(fn(*lo).sum(), lo)
        want = minitorch.autograd.grad(fn(*hi).sum(), hi)
        for g_lo, g_hi in zip(got, want):
            assert g_lo.dtype == dtype
            np.testing.assert_allclose(to_numpy(g_lo.detach().double()), to_numpy(g_hi), rtol=tol, atol=tol)
