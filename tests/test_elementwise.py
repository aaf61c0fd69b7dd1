"""Elementwise ops (unary map, binary zip, where, clamp): what the OpInfo battery
(tests/opinfo) does not cover. Python numbers as operands (either side), special values
(NaN, inf, saturation), int64 past 2**53, in-place forms on overlapping memory, big
strided inputs split across threads, and the dense (vectorized) kernels' sizes.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from conftest import (
    DEVICES,
    LAYOUTS,
    TOL,
    assert_tensor_equal,
    make_tensor,
    random_array,
    seeds,
    shapes,
)

FLOATS = [np.float32, np.float64]


# Every op's values on every dtype, layout and device, its forms (method, in-place, aliases,
# operators) and its gradient: the OpInfo battery, tests/opinfo. Here: scalar operands, special
# values and the kernels' paths.

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_binary_inputs_are_not_modified(device, dtype):
    a_np = random_array(0, (3, 4), dtype)
    b_np = random_array(1, (4,), dtype)
    a, b = make_tensor(a_np, "step", device), make_tensor(b_np, "contiguous", device)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, minitorch.maximum):
        op(a, b)
    assert_tensor_equal(a, a_np)
    assert_tensor_equal(b, b_np)


# --------------------------------------------------------- scalar operands ----

# (description, function on a tensor-or-array, domain low, domain high)
SCALAR_FORMS = [
    ("x + 1.5", lambda x: x + 1.5, -10, 10),
    ("1.5 + x", lambda x: 1.5 + x, -10, 10),
    ("x - 2", lambda x: x - 2, -10, 10),
    ("2 - x", lambda x: 2 - x, -10, 10),
    ("3 * x", lambda x: 3 * x, -10, 10),
    ("x * 0.5", lambda x: x * 0.5, -10, 10),
    ("x / 3", lambda x: x / 3, -10, 10),
    ("2 / x", lambda x: 2 / x, 0.5, 10),
    ("x ** 2", lambda x: x**2, -10, 10),
    ("x ** 0.5", lambda x: x**0.5, 0.1, 10),
    ("2 ** x", lambda x: 2**x, -5, 5),
    ("2.5 ** x", lambda x: 2.5**x, -5, 5),
    ("-x", lambda x: -x, -10, 10),
    ("x > 0.5", lambda x: x > 0.5, -3, 3),
    ("x <= 1", lambda x: x <= 1, -3, 3),
    ("x == 2", lambda x: x == 2, -3, 3),
    ("x != 2", lambda x: x != 2, -3, 3),
    ("x >= -1", lambda x: x >= -1, -3, 3),
    ("x < 0", lambda x: x < 0, -3, 3),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("form", SCALAR_FORMS, ids=[f[0] for f in SCALAR_FORMS])
@given(shape=shapes(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_scalar_operand_float(device, dtype, form, shape, seed, layout):
    _, f, lo, hi = form
    x_np = random_array(seed, shape, dtype, lo, hi)
    if any(c in form[0] for c in "<>=!"):
        x_np = np.round(x_np)  # whole numbers: ties with the scalar happen
    x = make_tensor(x_np, layout, device)
    expected = np.asarray(f(x_np))
    if expected.dtype != np.bool_:
        # A Python number never widens a float tensor: float32 stays float32.
        expected = expected.astype(dtype)
    tol = dict(rtol=2e-5, atol=1e-5) if "**" in form[0] and dtype == np.float32 else TOL[np.dtype(expected.dtype)]
    assert_tensor_equal(f(x), expected, **tol)


INT_SCALAR_FORMS = [
    ("x + 2", lambda x: x + 2, np.int64),
    ("2 - x", lambda x: 2 - x, np.int64),
    ("x * 3", lambda x: x * 3, np.int64),
    ("x ** 2", lambda x: x**2, np.int64),
    ("2 ** x", lambda x: 2**x, np.int64),  # x >= 0 below
    ("-x", lambda x: -x, np.int64),
    ("x / 3", lambda x: x / 3, np.float32),  # true division
    ("x + 0.5", lambda x: x + 0.5, np.float32),  # int tensor + Python float -> float32
    ("x > 2", lambda x: x > 2, np.bool_),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", INT_SCALAR_FORMS, ids=[f[0] for f in INT_SCALAR_FORMS])
@given(shape=shapes(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_scalar_operand_int64(device, form, shape, seed, layout):
    _, f, out_dtype = form
    x_np = random_array(seed, shape, np.int64, 0, 10)
    x = make_tensor(x_np, layout, device)
    expected = np.asarray(f(x_np)).astype(out_dtype)
    assert_tensor_equal(f(x), expected, **TOL[np.dtype(out_dtype)])


# ----------------------------------------------------------- special values ----

@pytest.mark.parametrize("device", DEVICES)
def test_unary_special_values(device):
    x_np = np.array([-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan], dtype=np.float32)
    x = minitorch.tensor(x_np, device=device)
    tol = TOL[np.dtype(np.float32)]
    with np.errstate(all="ignore"):
        assert_tensor_equal(x.exp(), np.exp(x_np), **tol)
        assert_tensor_equal(x.log(), np.log(x_np), **tol)
        assert_tensor_equal(x.sqrt(), np.sqrt(x_np), **tol)
        assert_tensor_equal(x.tanh(), np.tanh(x_np), **tol)
        assert_tensor_equal(x.abs(), np.abs(x_np))
    # sigmoid saturates cleanly instead of producing inf/inf = nan
    assert_tensor_equal(x.sigmoid(), np.array([0, 0.26894142, 0.5, 0.5, 0.7310586, 1, np.nan], np.float32), rtol=1e-6)
    big = minitorch.tensor(np.array([-1000.0, 1000.0], dtype=np.float64), device=device)
    assert_tensor_equal(big.sigmoid(), np.array([0.0, 1.0]))
    # relu keeps NaN (like PyTorch)
    assert_tensor_equal(x.relu(), np.array([0, 0, 0, 0, 1, np.inf, np.nan], np.float32))


# ------------------------------------------------------- maximum / minimum ----

@pytest.mark.parametrize("device", DEVICES)
def test_maximum_minimum_propagate_nan(device):
    a = minitorch.tensor(np.array([1.0, np.nan, 3.0, np.nan]), device=device)
    b = minitorch.tensor(np.array([np.nan, 2.0, 1.0, np.nan]), device=device)
    assert_tensor_equal(minitorch.maximum(a, b), np.array([np.nan, np.nan, 3.0, np.nan]))
    assert_tensor_equal(minitorch.minimum(a, b), np.array([np.nan, np.nan, 1.0, np.nan]))
    assert_tensor_equal(a.maximum(b), np.array([np.nan, np.nan, 3.0, np.nan]))


@pytest.mark.parametrize("device", DEVICES)
def test_max_min_with_tensor_argument_is_elementwise(device):
    a_np = np.array([[1.0, 5.0], [-2.0, 0.5]], dtype=np.float32)
    b_np = np.array([0.0, 4.0], dtype=np.float32)
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    assert_tensor_equal(a.max(b), np.maximum(a_np, b_np))
    assert_tensor_equal(minitorch.min(a, b), np.minimum(a_np, b_np))


# --------------------------------------------------------------------- pow ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", ["operator", "method", "function"])
def test_pow_forms(device, form):
    x_np = np.array([[0.5, 1.0, 2.0], [3.0, 4.0, 9.0]], dtype=np.float32)
    x = make_tensor(x_np, "step", device)
    for e in (2, 0.5, -1, 0, 3.0):
        out = x**e if form == "operator" else (x.pow(e) if form == "method" else minitorch.pow(x, e))
        assert_tensor_equal(out, np.power(x_np, np.float32(e)), rtol=1e-6)
    assert_tensor_equal(minitorch.pow(2, x), np.power(np.float32(2), x_np), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_pow_int64_exact(device):
    x_np = np.array([-3, -1, 0, 1, 2, 7], dtype=np.int64)
    x = minitorch.tensor(x_np, device=device)
    assert_tensor_equal(x**3, x_np**3)
    assert_tensor_equal(x**0, np.ones(6, dtype=np.int64))
    # exact for results past float64's 53-bit mantissa
    big = minitorch.tensor(np.array([3], dtype=np.int64), device=device)
    assert (big**39).item() == 3**39


@pytest.mark.parametrize("device", DEVICES)
def test_where_with_scalars_and_a_mask(device):
    x_np = np.array([[-1.5, 2.0], [0.0, -3.0]], dtype=np.float32)
    x = minitorch.tensor(x_np, device=device)
    assert_tensor_equal(minitorch.where(x > 0, x, 0.0), np.where(x_np > 0, x_np, np.float32(0)))
    assert_tensor_equal(minitorch.where(x > 0, 1.0, -1.0), np.where(x_np > 0, 1.0, -1.0).astype(np.float32))
    assert_tensor_equal(minitorch.where(x > 0, 1, 0), np.where(x_np > 0, 1, 0).astype(np.int64))


# ---------------------------------------------------------------- in place ----

@pytest.mark.parametrize("device", DEVICES)
def test_inplace_named_methods(device):
    x_np = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    x = minitorch.tensor(x_np, device=device)
    x.add_(1).mul_(2).sub_(0.5).div_(2)
    assert_tensor_equal(x, ((x_np + 1) * 2 - 0.5) / 2)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_with_overlapping_transpose(device):
    x_np = np.arange(9.0).reshape(3, 3)
    x = minitorch.tensor(x_np, device=device)
    x += x.T  # must read the old values, not what it already wrote
    assert_tensor_equal(x, x_np + x_np.T)
    i_np = np.arange(1, 10).reshape(3, 3)
    i = minitorch.tensor(i_np, device=device)
    i ^= i.T
    assert_tensor_equal(i, i_np ^ i_np.T)


@pytest.mark.parametrize("device", DEVICES)
def test_int64_arithmetic_is_exact(device):
    # values past 2**53, where a trip through double would round
    x_np = np.array([2**53 + 1, -(2**60) - 3, 7], dtype=np.int64)
    x = minitorch.tensor(x_np, device=device)
    assert_tensor_equal(x + 1, x_np + 1)
    assert_tensor_equal(x - (2**53 + 1), x_np - (2**53 + 1))
    assert_tensor_equal(x * 3, x_np * 3)
    assert_tensor_equal(x + x, x_np + x_np)
    assert_tensor_equal(minitorch.maximum(x, 0), np.maximum(x_np, 0))
    assert_tensor_equal(x == 2**53 + 1, np.array([True, False, False]))


@pytest.mark.parametrize("device", DEVICES)
def test_large_strided_broadcast_uses_threads_correctly(device):
    """Big enough to be split across threads, with strided and broadcast operands."""
    n = minitorch.get_num_threads()
    try:
        minitorch.set_num_threads(2)
        a_np = random_array(7, (301, 420), np.float64)
        b_np = random_array(8, (301, 1), np.float64)
        a = minitorch.tensor(a_np, device=device).T  # (420, 301), non-contiguous
        b = minitorch.tensor(b_np, device=device).T  # (1, 301)
        assert_tensor_equal(a * b - a, a_np.T * b_np.T - a_np.T)
        assert_tensor_equal(minitorch.where(a > 0, a, b), np.where(a_np.T > 0, a_np.T, b_np.T))
        assert_tensor_equal(a[::3, 1:].exp(), np.exp(a_np.T[::3, 1:]), rtol=1e-15)
    finally:
        minitorch.set_num_threads(n)


# ------------------------------------------------------- the dense fast path ----
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 1023, 1025, 4099])
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_dense_path_sizes_offsets_and_scalars(device, n, offset):
    """Contiguous operands take the dense (vectorized) kernels: every size around the
    vector width, views starting at an unaligned element (which fall back to the strided
    kernel), a broadcast scalar on either side, bool results, float32 (op fixed at
    compile time) and float64 / int64 (op chosen at run time)."""
    rng = np.random.default_rng(n + offset)
    for dtype in (np.float32, np.float64, np.int64):
        a = (rng.standard_normal(n + offset) * 10).astype(dtype)
        b = (rng.standard_normal(n + offset) * 10).astype(dtype)
        A = minitorch.tensor(a, device=device)[offset:]
        B = minitorch.tensor(b, device=device)[offset:]
        a, b = a[offset:], b[offset:]
        assert_tensor_equal(A + B, a + b)
        assert_tensor_equal(A * 3, a * 3)
        assert_tensor_equal(2 - A, 2 - a)
        assert_tensor_equal(A < B, a < b)
        assert_tensor_equal(A.maximum(B), np.maximum(a, b))
        assert_tensor_equal(-A, -a)
        assert_tensor_equal(A.abs(), np.abs(a))
        if dtype != np.int64:
            assert_tensor_equal(A.exp(), np.exp(a.astype(np.float64)).astype(dtype), rtol=1e-5, atol=0)
            assert_tensor_equal(A.isnan(), np.isnan(a))
            assert_tensor_equal(A.relu(), np.maximum(a, 0))
