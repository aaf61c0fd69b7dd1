"""The math ops beyond the basic arithmetic, against NumPy (and PyTorch when installed).

Unary: sin cos tan rsqrt log1p expm1 erf (float results; int64/bool promote to
float32), floor ceil round trunc (same dtype; round is half to even), frac, sign,
isnan isinf isfinite, logical_not, bitwise_not / ``~``.
Binary: remainder / ``%`` (Python's sign rule), fmod (C's), atan2 / arctan2,
logical_and/or/xor, bitwise_and/or/xor / ``& | ^`` (bool and int64 only).

Their values on every dtype, layout and device, their forms (method, function, in-place,
aliases, operators) and float64 gradients on every layout are the OpInfo battery's
(tests/opinfo). Here: the special values (NaN, inf, -0.0, half-integers, integers past
2**53), mixed dtypes and promotion, scalar operands, the errors (integer division by zero,
bitwise ops on floats), and gradient formulas pinned to values.
"""
from __future__ import annotations

import math
import operator
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import (
    DEVICES,
    LAYOUTS,
    TOL,
    assert_tensor_equal,
    broadcastable_pairs,
    make_tensor,
    random_array,
    seeds,
    shapes,
    to_numpy,
)
from minitorch.testing import gradcheck
from conftest import CUDA_SKIP_REASON, TORCH_SKIP_REASON

FLOATS = [np.float32, np.float64]
dtype_id = lambda d: np.dtype(d).name  # noqa: E731

# Enough examples to meet size-0/size-1 dims and every layout; the file has many
# parametrizations, so fewer per test than the suite default (40).
FEW = settings(max_examples=15)


def _erf(x):
    # math.erf is libm's erf: correctly handles +-inf and NaN. otypes: works on size 0.
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _rsqrt(x):
    with np.errstate(divide="ignore"):  # rsqrt(0) = inf (bool False, int 0)
        return 1.0 / np.sqrt(x)


# ------------------------------------------------------ unary float results ----

# name: (NumPy reference (on float64), low, high, float32 tolerance)
UNARY_FLOAT = {
    "sin": (np.sin, -20, 20, dict(rtol=1e-5, atol=1e-6)),
    "cos": (np.cos, -20, 20, dict(rtol=1e-5, atol=1e-6)),
    "tan": (np.tan, -1.5, 1.5, dict(rtol=2e-5, atol=1e-6)),
    "rsqrt": (_rsqrt, 0.01, 10, dict(rtol=1e-5, atol=1e-6)),
    "log1p": (np.log1p, -0.99, 10, dict(rtol=1e-5, atol=1e-6)),
    "expm1": (np.expm1, -10, 10, dict(rtol=1e-5, atol=1e-6)),
    "erf": (_erf, -4, 4, dict(rtol=2e-5, atol=2e-6)),
}


def _unary_forms(x, name):
    """The op as a method and as a module function (both must agree)."""
    return [getattr(x, name)(), getattr(minitorch, name)(x)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("name", list(UNARY_FLOAT))
def test_unary_float_special_values(device, name, dtype):
    ref, _, _, tol32 = UNARY_FLOAT[name]
    x_np = np.array([-np.inf, -2.5, -1.0, -0.5, -0.0, 0.0, 1e-30, 0.5, 1.0, 2.5, 100.0, np.inf, np.nan], dtype=dtype)
    x = make_tensor(x_np, "step", device)
    with np.errstate(all="ignore"):
        expected = np.asarray(ref(x_np.astype(np.float64))).astype(dtype)
    tol = tol32 if dtype == np.float32 else TOL[np.dtype(dtype)]
    # allclose tells inf from -inf and NaN from a number: rsqrt(-0.) = -inf, log1p(-1) = -inf,
    # expm1(-inf) = -1, erf(+-inf) = +-1, sin(inf) = NaN, ...
    for out in _unary_forms(x, name):
        assert_tensor_equal(out, expected, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_log1p_expm1_are_accurate_near_zero(device):
    # The point of log1p/expm1: log(1 + x) and exp(x) - 1 lose every digit for tiny x.
    x64 = np.array([1e-300, 1e-17, -1e-12, 3e-10, 1e-5, -1e-5, 1e-3])
    x = minitorch.tensor(x64, device=device)
    assert_tensor_equal(x.log1p(), np.log1p(x64), rtol=1e-14)
    assert_tensor_equal(x.expm1(), np.expm1(x64), rtol=1e-14)
    x32 = np.array([1e-30, 1e-9, -3e-8, 1e-6, -1e-6, 1e-3], dtype=np.float32)
    x = minitorch.tensor(x32, device=device)
    assert_tensor_equal(x.log1p(), np.log1p(x32.astype(np.float64)).astype(np.float32), rtol=1e-6)
    assert_tensor_equal(x.expm1(), np.expm1(x32.astype(np.float64)).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_erf_values(device):
    # A few well-known values, independent of libm: erf(0.5), erf(1), erf(2), odd symmetry.
    x = minitorch.tensor(np.array([0.0, 0.5, 1.0, 2.0, -1.0, 6.0]), device=device)
    want = np.array([0.0, 0.5204998778130465, 0.8427007929497149, 0.9953222650189527, -0.8427007929497149, 1.0])
    assert_tensor_equal(x.erf(), want, rtol=1e-14, atol=1e-15)


# -------------------------------------------------- floor ceil round trunc ----

ROUNDING = {"floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ROUNDING))
@FEW
@given(shape=shapes(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_rounding_int64_is_the_identity(device, name, shape, seed, layout):
    # full int64 range: a trip through double would change values past 2**53
    x_np = np.random.default_rng(seed).integers(-(2**63), 2**63 - 1, size=shape, dtype=np.int64)
    x = make_tensor(x_np, layout, device)
    for out in _unary_forms(x, name):
        assert_tensor_equal(out, x_np)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ROUNDING))
def test_rounding_special_values(device, name):
    ref = ROUNDING[name]
    x64 = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, -3.5,
                    0.49999999999999994, -0.49999999999999994,  # round as floor(x + 0.5) gets these wrong
                    2.0**52 + 1, -(2.0**52) - 1, 2.0**52 - 0.5, 2.0**53, 1e300, -1e300, 1e-300, -1e-300])
    x32 = np.array([np.nan, np.inf, -np.inf, 0.5, -0.5, 2.5, 0.49999997, -0.49999997,
                    2.0**23 + 1, 2.0**23 - 0.5, -(2.0**23) + 0.5, 3e38, -3e38, 1e-38], dtype=np.float32)
    for x_np in (x64, x32):
        x = make_tensor(x_np, "step", device)
        for out in _unary_forms(x, name):
            assert_tensor_equal(out, ref(x_np))  # NaN stays NaN, inf stays inf


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ROUNDING))
def test_rounding_keeps_the_sign_of_zero(device, name):
    # IEEE (and PyTorch/NumPy): ceil(-0.5) = trunc(-0.7) = round(-0.4) = -0.0, floor(-0.0) = -0.0
    x_np = np.array([-0.0, -0.4, -0.5, -0.7, 0.0, 0.3])
    got = to_numpy(getattr(minitorch.tensor(x_np, device=device), name)())
    want = ROUNDING[name](x_np)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"{name}: sign of zero")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ROUNDING))
def test_rounding_bool_raises(device, name):
    b = minitorch.tensor([True, False], device=device)
    with pytest.raises(TypeError):
        getattr(b, name)()
    with pytest.raises(TypeError):
        getattr(minitorch, name)(b)


# -------------------------------------------------------------------- frac ----


@pytest.mark.parametrize("device", DEVICES)
def test_frac_special_values(device):
    x_np = np.array([np.nan, np.inf, -np.inf, -2.75, 2.75, -0.5, 3.0, 2.0**52 + 1, 1e-300])
    with np.errstate(invalid="ignore"):
        want = x_np - np.trunc(x_np)  # frac(+-inf) = inf - inf = NaN, as in PyTorch
    assert_tensor_equal(minitorch.tensor(x_np, device=device).frac(), want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("values", [[1, -2, 3], [True, False]], ids=["int64", "bool"])
def test_frac_of_integers_raises(device, values):
    x = minitorch.tensor(values, device=device)
    with pytest.raises(TypeError):
        x.frac()
    with pytest.raises(TypeError):
        minitorch.frac(x)


# -------------------------------------------------------------------- sign ----


@pytest.mark.parametrize("device", DEVICES)
def test_sign_special_values(device):
    x_np = np.array([-np.inf, -1e-300, -0.0, 0.0, 1e-300, np.inf])
    assert_tensor_equal(minitorch.tensor(x_np, device=device).sign(), [-1.0, -1.0, 0.0, 0.0, 1.0, 1.0])
    big = np.array([-(2**63), 2**63 - 1, 0], dtype=np.int64)
    assert_tensor_equal(minitorch.tensor(big, device=device).sign(), np.array([-1, 1, 0], dtype=np.int64))


# ---------------------------------------------------- isnan isinf isfinite ----

CLASSIFY = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}


@pytest.mark.parametrize("device", DEVICES)
def test_isnan_isinf_isfinite_int64_values(device):
    x = minitorch.tensor(np.array([0, -(2**63), 2**63 - 1]), device=device)
    assert_tensor_equal(x.isnan(), np.array([False] * 3))
    assert_tensor_equal(x.isinf(), np.array([False] * 3))
    assert_tensor_equal(x.isfinite(), np.array([True] * 3))


# ------------------------------------------------- logical_not, bitwise_not ----


@pytest.mark.parametrize("device", DEVICES)
def test_bitwise_not_values(device):
    x = minitorch.tensor(np.array([0, -1, 5, -(2**63), 2**63 - 1]), device=device)
    assert_tensor_equal(~x, np.array([-1, 0, -6, 2**63 - 1, -(2**63)], dtype=np.int64))
    assert_tensor_equal(~minitorch.tensor([True, False], device=device), np.array([False, True]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
def test_bitwise_not_float_raises(device, dtype):
    x = minitorch.ones(3, dtype=dtype, device=device)
    for f in (operator.invert, lambda t: t.bitwise_not(), minitorch.bitwise_not):
        with pytest.raises(TypeError):
            f(x)


# -------------------------------------------------------------- binary ops ----

def _np_atan2(a, b):
    out = np.arctan2(a.astype(np.float64), b.astype(np.float64))
    # the wider float input's dtype; int/bool inputs only: the default float32 (PyTorch)
    floats = [d for d in (a.dtype, b.dtype) if d.kind == "f"]
    return out.astype(np.result_type(*floats) if floats else np.float32)


# name: (operator or None, NumPy reference)
BINARY = {
    "remainder": (operator.mod, np.remainder),
    "fmod": (None, np.fmod),
    "atan2": (None, _np_atan2),
    "logical_and": (None, np.logical_and),
    "logical_or": (None, np.logical_or),
    "logical_xor": (None, np.logical_xor),
    "bitwise_and": (operator.and_, np.bitwise_and),
    "bitwise_or": (operator.or_, np.bitwise_or),
    "bitwise_xor": (operator.xor, np.bitwise_xor),
}


def _binary_forms(name, a, b):
    """Method, module function, operator (when there is one) and alias."""
    outs = [getattr(a, name)(b), getattr(minitorch, name)(a, b)]
    if BINARY[name][0] is not None:
        outs.append(BINARY[name][0](a, b))
    if name == "atan2":
        outs += [a.arctan2(b), minitorch.arctan2(a, b)]
    return outs


def _binary_operand(name, dtype, seed, shape, role):
    """One operand, in a domain where the op is well defined and well conditioned."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if name.startswith("logical"):
        # zeros often; -0.0 is zero, NaN is not
        pool = {"f": [-0.0, 0.0, 0.0, 1.0, -2.5, 0.5, np.nan], "i": [0, 0, 1, -3, 2**62], "b": [False, True]}
        return rng.choice(np.array(pool[dtype.kind], dtype=dtype), size=shape)
    if name.startswith("bitwise"):
        if dtype.kind == "b":
            return random_array(seed, shape, np.bool_)
        return rng.integers(-(2**63), 2**63 - 1, size=shape, dtype=np.int64)
    if name in ("remainder", "fmod") and role == "b":
        # divisors away from zero, both signs
        mag = rng.uniform(0.5, 5, size=shape) if dtype.kind == "f" else rng.integers(1, 8, size=shape)
        return (mag * rng.choice([-1, 1], size=shape)).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-20, 21, size=shape).astype(dtype)
    return random_array(seed, shape, dtype)


def _binary_tol(name, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float32 and name in ("remainder", "fmod"):
        # mathematically exact ops, but a correct a - b * floor(a / b) may be off by an ulp of a
        return dict(rtol=1e-5, atol=1e-5)
    return TOL[dtype]


# dtype pairs for the ops that take any (logical) or bool/int64 (bitwise) dtypes
ANY_DTYPES = [np.float32, np.float64, np.int64, np.bool_]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor",
                                  "bitwise_and", "bitwise_or", "bitwise_xor"])
@FEW
@given(pair=broadcastable_pairs(max_dims=3), seed=seeds, data=st.data())
def test_binary_mixed_dtypes(device, name, pair, seed, data):
    pool = ANY_DTYPES if name.startswith("logical") else [np.int64, np.bool_]
    da, db = data.draw(st.sampled_from(pool)), data.draw(st.sampled_from(pool))
    a_np = _binary_operand(name, da, seed, pair[0], "a")
    b_np = _binary_operand(name, db, seed + 1, pair[1], "b")
    a, b = make_tensor(a_np, "transpose", device), make_tensor(b_np, "step", device)
    expected = BINARY[name][1](a_np, b_np)  # logical: bool; bitwise: int64 & bool -> int64
    for out in _binary_forms(name, a, b):
        assert_tensor_equal(out, expected)


# (left, right, result) for two dimensioned tensors
PROMOTION = [
    ("remainder", np.float32, np.float64, np.float64),
    ("remainder", np.int64, np.float32, np.float32),
    ("remainder", np.float64, np.int64, np.float64),
    ("fmod", np.int64, np.float64, np.float64),
    ("fmod", np.float64, np.float32, np.float64),
    ("atan2", np.int64, np.int64, np.float32),
    ("atan2", np.int64, np.float64, np.float64),
    ("atan2", np.float32, np.float64, np.float64),
    ("atan2", np.bool_, np.int64, np.float32),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("name", "da", "db", "want"), PROMOTION,
                         ids=[f"{n}-{dtype_id(a)}-{dtype_id(b)}" for n, a, b, _ in PROMOTION])
def test_binary_promotion(device, name, da, db, want):
    a_np = np.array([[-7, 7], [5, -5], [0, 3]]).astype(da)
    b_np = np.array([3, -2]).astype(db)
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    expected = BINARY[name][1](a_np.astype(np.float64), b_np.astype(np.float64)).astype(want)
    for out in _binary_forms(name, a, b):
        assert_tensor_equal(out, expected, **TOL[np.dtype(want)])


# -------------------------------------------------- remainder / fmod values ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=dtype_id)
def test_remainder_and_fmod_sign_rules(device, dtype):
    a_np = np.array([7, -7, 7, -7, 6, -6, 0, 2]).astype(dtype)
    b_np = np.array([3, 3, -3, -3, 3, -3, 5, 9]).astype(dtype)
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    # remainder takes the divisor's sign (Python's %), fmod the dividend's (C's fmod)
    assert_tensor_equal(a % b, np.array([1, 2, -2, -1, 0, 0, 0, 2]).astype(dtype))
    assert_tensor_equal(minitorch.fmod(a, b), np.array([1, -1, 1, -1, 0, 0, 0, 2]).astype(dtype))
    # Python agrees on the ints
    assert (a % b).tolist() == [int(x) % int(y) for x, y in zip(a_np, b_np)]


@pytest.mark.parametrize("device", DEVICES)
def test_remainder_and_fmod_int64_large_values(device):
    # exact past 2**53 (no trip through double), and no overflow at the ends of the range
    a_np = np.array([2**62 + 3, -(2**62) - 3, 2**63 - 1, -(2**63), -(2**63), 9, -9])
    b_np = np.array([2**31 + 1, 7, -(2**40) - 5, 3, 2**63 - 1, -(2**63), 2**63 - 1])
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    assert_tensor_equal(a % b, np.remainder(a_np, b_np))
    assert_tensor_equal(minitorch.fmod(a, b), np.fmod(a_np, b_np))


@pytest.mark.parametrize("device", DEVICES)
def test_remainder_and_fmod_float_large_and_tiny_values(device):
    # fmod is exact for any magnitudes; a - b * floor(a / b) is not (1e20 / 3 has no
    # integer part left to floor in float64)
    a_np = np.array([1e20, -1e20, 1e300, -1e17 - 16, 5e15 + 1, 1e-300, -1e-300, 7.0])
    b_np = np.array([3.0, 0.7, -3.0, 7.0, -0.3, 3.0, 3.0, 1e-300])
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    assert_tensor_equal(a % b, np.remainder(a_np, b_np))
    assert_tensor_equal(minitorch.fmod(a, b), np.fmod(a_np, b_np))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_remainder_and_fmod_float_special_values(device, dtype):
    vals = np.array([-np.inf, -3.5, -0.0, 0.0, 2.25, np.inf, np.nan], dtype=dtype)
    a_np, b_np = np.meshgrid(vals, vals, indexing="ij")
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    with np.errstate(all="ignore"):
        # x % 0 and inf % y are NaN (no error for floats, on any device)
        assert_tensor_equal(minitorch.fmod(a, b), np.fmod(a_np, b_np))
        rem = np.remainder(a_np, b_np)
    # NumPy and PyTorch agree on these; x % inf is x or inf by the divisor-sign rule
    assert_tensor_equal(a % b, rem)


def test_int64_min_remainder_minus_one_does_not_crash():
    # INT64_MIN % -1 overflows in C (SIGFPE on x86); the answer is 0. In a child process,
    # so a crash fails this test instead of killing the test run.
    code = (
        "import minitorch, numpy as np\n"
        "devices = ['cpu'] + (['cuda'] if minitorch.cuda.is_available() else [])\n"
        "for d in devices:\n"
        "    a = minitorch.tensor(np.array([-(2**63), 5]), device=d)\n"
        "    b = minitorch.tensor(np.array([-1, -1]), device=d)\n"
        "    for r in (a % b, minitorch.fmod(a, b), a % -1, minitorch.fmod(a, -1)):\n"
        "        assert r.tolist() == [0, 0], (d, r.tolist())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(minitorch.__file__)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, f"exit status {proc.returncode}\n{proc.stderr[-2000:]}"


def _int_zero_divisor_cases(device):
    a = minitorch.tensor(np.array([[5, -7, 0], [3, 8, -1]]), device=device)
    b = minitorch.tensor(np.array([2, 0, -3]), device=device)
    return [
        ("a % b", lambda: a % b),
        ("a.remainder(b)", lambda: a.remainder(b)),
        ("fmod(a, b)", lambda: minitorch.fmod(a, b)),
        ("a.fmod(b)", lambda: a.fmod(b)),
        ("a % 0", lambda: a % 0),
        ("remainder(a, 0)", lambda: minitorch.remainder(a, 0)),
        ("fmod(a, 0)", lambda: minitorch.fmod(a, 0)),
        ("7 % b", lambda: 7 % b),
        ("a.T % b[:, None]", lambda: a.T % b[:, None]),  # non-contiguous, broadcast
    ]


def test_int_remainder_by_zero_raises_on_cpu():
    for desc, f in _int_zero_divisor_cases("cpu"):
        with pytest.raises(RuntimeError):
            f()
            pytest.fail(f"{desc}: no error for an integer division by zero")
    a = minitorch.tensor([4, 5])
    with pytest.raises(RuntimeError):
        a %= minitorch.tensor([2, 0])


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_int_remainder_by_zero_does_not_crash_on_cuda():
    for desc, f in _int_zero_divisor_cases("cuda"):
        try:
            out = f()
        except RuntimeError:
            continue  # an error is fine too; a crash or a hang is not
        assert out.dtype == minitorch.int64, desc
        to_numpy(out)  # the device is still usable
    a = minitorch.tensor(np.array([[5, -7, 0], [3, 8, -1]]), device="cuda")
    b = minitorch.tensor(np.array([2, 0, -3]), device="cuda")
    try:
        got = to_numpy(a % b)
    except RuntimeError:
        return
    # the columns with a nonzero divisor are still right
    np.testing.assert_array_equal(got[:, [0, 2]], np.remainder([[5, 0], [3, -1]], [2, -3]))


# ------------------------------------------------------------- atan2 values ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_atan2_quadrants_and_special_values(device, dtype):
    vals = np.array([-np.inf, -2.0, -1.0, -0.0, 0.0, 1.0, 3.0, np.inf, np.nan], dtype=dtype)
    y_np, x_np = np.meshgrid(vals, vals, indexing="ij")
    y, x = minitorch.tensor(y_np, device=device), minitorch.tensor(x_np, device=device)
    # atan2(+-0, -1) = +-pi, atan2(0, 0) = 0, atan2(inf, -inf) = 3pi/4, ...
    expected = np.arctan2(y_np, x_np)
    assert_tensor_equal(minitorch.atan2(y, x), expected, **TOL[np.dtype(dtype)])
    assert_tensor_equal(y.arctan2(x), expected, **TOL[np.dtype(dtype)])


# ---------------------------------------------------------- scalar operands ----

# (description, minitorch form, NumPy form, domain of x)
# A Python number never widens a float tensor: float32 stays float32.
FLOAT_SCALAR_FORMS = [
    ("x % 3", lambda x: x % 3, lambda x: np.remainder(x, 3), "any"),
    ("x % -2.5", lambda x: x % -2.5, lambda x: np.remainder(x, -2.5), "any"),
    ("7.5 % x", lambda x: 7.5 % x, lambda x: np.remainder(7.5, x), "nonzero"),
    ("-4 % x", lambda x: -4 % x, lambda x: np.remainder(-4, x), "nonzero"),
    ("x.remainder(1.5)", lambda x: x.remainder(1.5), lambda x: np.remainder(x, 1.5), "any"),
    ("remainder(x, 2)", lambda x: minitorch.remainder(x, 2), lambda x: np.remainder(x, 2), "any"),
    ("remainder(5, x)", lambda x: minitorch.remainder(5, x), lambda x: np.remainder(5, x), "nonzero"),
    ("x.fmod(-3)", lambda x: x.fmod(-3), lambda x: np.fmod(x, -3), "any"),
    ("fmod(x, 2.5)", lambda x: minitorch.fmod(x, 2.5), lambda x: np.fmod(x, 2.5), "any"),
    ("fmod(-7, x)", lambda x: minitorch.fmod(-7, x), lambda x: np.fmod(-7, x), "nonzero"),
    ("x.atan2(-1.5)", lambda x: x.atan2(-1.5), lambda x: np.arctan2(x, -1.5), "any"),
    ("atan2(x, 2)", lambda x: minitorch.atan2(x, 2), lambda x: np.arctan2(x, 2), "any"),
    ("atan2(1.0, x)", lambda x: minitorch.atan2(1.0, x), lambda x: np.arctan2(1.0, x), "any"),
    ("arctan2(-1, x)", lambda x: minitorch.arctan2(-1, x), lambda x: np.arctan2(-1, x), "any"),
    ("logical_and(x, 0)", lambda x: minitorch.logical_and(x, 0), lambda x: np.logical_and(x, 0), "logical"),
    ("logical_or(x, 0.0)", lambda x: minitorch.logical_or(x, 0.0), lambda x: np.logical_or(x, 0.0), "logical"),
    ("logical_xor(1, x)", lambda x: minitorch.logical_xor(1, x), lambda x: np.logical_xor(1, x), "logical"),
    ("logical_and(2.5, x)", lambda x: minitorch.logical_and(2.5, x), lambda x: np.logical_and(2.5, x), "logical"),
]


def _scalar_form_input(domain, seed, shape, dtype):
    rng = np.random.default_rng(seed)
    if domain == "nonzero":
        return (rng.uniform(0.5, 10, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)
    if domain == "logical":
        return rng.choice(np.array([0.0, -0.0, 1.0, -3.5, np.nan], dtype=dtype), size=shape)
    return random_array(seed, shape, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("form", FLOAT_SCALAR_FORMS, ids=[f[0] for f in FLOAT_SCALAR_FORMS])
@settings(max_examples=10)
@given(shape=shapes(max_dims=3), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_scalar_operand_float(device, dtype, form, shape, seed, layout):
    desc, f, ref, domain = form
    x_np = _scalar_form_input(domain, seed, shape, dtype)
    x = make_tensor(x_np, layout, device)
    expected = np.asarray(ref(x_np))
    if expected.dtype != np.bool_:
        expected = expected.astype(dtype)
    tol = _binary_tol("remainder", dtype) if expected.dtype != np.bool_ else {}
    assert_tensor_equal(f(x), expected, **tol)


# (description, minitorch form, NumPy form (result cast to the result dtype), input dtype, result dtype)
I64, BOOL = np.int64, np.bool_
INT_SCALAR_FORMS = [
    ("x % 3", lambda x: x % 3, lambda x: np.remainder(x, 3), I64, I64),
    ("x % -4", lambda x: x % -4, lambda x: np.remainder(x, -4), I64, I64),
    ("17 % x", lambda x: 17 % x, lambda x: np.remainder(17, x), I64, I64),
    ("x % 2.5", lambda x: x % 2.5, lambda x: np.remainder(x, 2.5), I64, np.float32),
    ("fmod(x, -3)", lambda x: minitorch.fmod(x, -3), lambda x: np.fmod(x, -3), I64, I64),
    ("x.fmod(2.5)", lambda x: x.fmod(2.5), lambda x: np.fmod(x, 2.5), I64, np.float32),
    ("atan2(x, 2)", lambda x: minitorch.atan2(x, 2), lambda x: np.arctan2(x, 2.0), I64, np.float32),
    ("x & 6", lambda x: x & 6, lambda x: np.bitwise_and(x, 6), I64, I64),
    ("6 & x", lambda x: 6 & x, lambda x: np.bitwise_and(6, x), I64, I64),
    ("x | -8", lambda x: x | -8, lambda x: np.bitwise_or(x, -8), I64, I64),
    ("-8 | x", lambda x: -8 | x, lambda x: np.bitwise_or(-8, x), I64, I64),
    ("x ^ 5", lambda x: x ^ 5, lambda x: np.bitwise_xor(x, 5), I64, I64),
    ("5 ^ x", lambda x: 5 ^ x, lambda x: np.bitwise_xor(5, x), I64, I64),
    ("x & True", lambda x: x & True, lambda x: np.bitwise_and(x, 1), I64, I64),
    ("x.bitwise_or(1)", lambda x: x.bitwise_or(1), lambda x: np.bitwise_or(x, 1), I64, I64),
    ("bitwise_xor(3, x)", lambda x: minitorch.bitwise_xor(3, x), lambda x: np.bitwise_xor(3, x), I64, I64),
    ("logical_or(x, 0)", lambda x: minitorch.logical_or(x, 0), lambda x: np.logical_or(x, 0), I64, BOOL),
    ("b & True", lambda b: b & True, lambda b: b & True, BOOL, BOOL),
    ("True & b", lambda b: True & b, lambda b: True & b, BOOL, BOOL),
    ("b | False", lambda b: b | False, lambda b: b | False, BOOL, BOOL),
    ("False | b", lambda b: False | b, lambda b: False | b, BOOL, BOOL),
    ("b ^ True", lambda b: b ^ True, lambda b: b ^ True, BOOL, BOOL),
    ("True ^ b", lambda b: True ^ b, lambda b: True ^ b, BOOL, BOOL),
    # a Python int is of a higher category than bool: the result is int64 (PyTorch)
    ("b & 3", lambda b: b & 3, lambda b: b.astype(I64) & 3, BOOL, I64),
    ("bitwise_or(b, 2)", lambda b: minitorch.bitwise_or(b, 2), lambda b: b.astype(I64) | 2, BOOL, I64),
    ("logical_xor(b, 1)", lambda b: minitorch.logical_xor(b, 1), lambda b: np.logical_xor(b, 1), BOOL, BOOL),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", INT_SCALAR_FORMS, ids=[f[0] for f in INT_SCALAR_FORMS])
@settings(max_examples=10)
@given(shape=shapes(max_dims=3), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_scalar_operand_int64_and_bool(device, form, shape, seed, layout):
    desc, f, ref, in_dtype, out_dtype = form
    rng = np.random.default_rng(seed)
    if in_dtype == BOOL:
        x_np = random_array(seed, shape, np.bool_)
    elif desc.startswith("17 %"):
        x_np = rng.integers(1, 8, size=shape) * rng.choice([-1, 1], size=shape)
    else:
        x_np = rng.integers(-50, 51, size=shape).astype(np.int64)
    x = make_tensor(x_np, layout, device)
    expected = np.asarray(ref(x_np)).astype(out_dtype)
    assert_tensor_equal(f(x), expected, **TOL[np.dtype(out_dtype)])


@pytest.mark.parametrize("device", DEVICES)
def test_bitwise_and_remainder_with_zero_dim_tensors(device):
    # a 0-dim tensor counts like a Python number: only its category matters (bool < int)
    b = minitorch.tensor([True, False, True], device=device)
    five = minitorch.full((), 5, dtype=minitorch.int64, device=device)
    assert_tensor_equal(b & five, np.array([1, 0, 1]))  # int64
    assert_tensor_equal(five | b, np.array([5, 5, 5]))
    t = minitorch.full((), True, dtype=minitorch.bool, device=device)
    i = minitorch.tensor(np.array([2, 3, -4]), device=device)
    assert_tensor_equal(i ^ t, np.array([3, 2, -3]))  # int64 ^ True
    x32 = minitorch.tensor(np.array([7.5, -7.5], dtype=np.float32), device=device)
    two = minitorch.full((), 2.0, dtype=minitorch.float64, device=device)
    assert_tensor_equal(x32 % two, np.array([1.5, 0.5], dtype=np.float32))  # stays float32
    assert_tensor_equal(minitorch.atan2(x32, two), np.arctan2(np.array([7.5, -7.5]), 2.0).astype(np.float32),
                        **TOL[np.dtype(np.float32)])


@pytest.mark.parametrize("device", DEVICES)
def test_bitwise_rejects_floats(device):
    f32 = minitorch.tensor([1.0, 2.0], device=device)
    f64 = minitorch.tensor(np.array([1.0, 0.0]), device=device)
    i = minitorch.tensor([1, 2], device=device)
    b = minitorch.tensor([True, False], device=device)
    cases = [
        lambda: f32 & f32, lambda: f64 | i, lambda: b ^ f32, lambda: i & f64,
        lambda: minitorch.bitwise_and(f32, i), lambda: f64.bitwise_or(b), lambda: minitorch.bitwise_xor(f32, f32),
        lambda: i & 1.5, lambda: 2.0 | b, lambda: minitorch.bitwise_xor(i, 0.5),
    ]
    for k, f in enumerate(cases):
        with pytest.raises(TypeError):
            f()
            pytest.fail(f"case {k}: no TypeError")


# ----------------------------------------------------------------- in place ----


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_with_python_numbers_and_operator_syntax(device):
    x = minitorch.tensor(np.array([7.5, -7.5, 2.0]), device=device)
    x %= 2
    assert_tensor_equal(x, np.array([1.5, 0.5, 0.0]))
    i = minitorch.tensor(np.array([12, -5, 2**62 + 7]), device=device)
    i &= 6
    assert_tensor_equal(i, np.array([4, 2, 6]))
    i |= 1
    assert_tensor_equal(i, np.array([5, 3, 7]))
    i ^= -1
    assert_tensor_equal(i, np.array([-6, -4, -8]))
    i %= 5
    assert_tensor_equal(i, np.array([4, 1, 2]))
    b = minitorch.tensor([True, False, True], device=device)
    b &= minitorch.tensor([True, True, False], device=device)
    assert_tensor_equal(b, np.array([True, False, False]))
    b |= True
    assert_tensor_equal(b, np.array([True, True, True]))
    b ^= minitorch.tensor([False, True, False], device=device)
    assert_tensor_equal(b, np.array([True, False, True]))


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_result_must_fit_self(device):
    # like add_: the promoted result type must be castable to self's dtype
    i = minitorch.tensor([4, 5], device=device)
    with pytest.raises(TypeError):
        i %= minitorch.tensor([1.5, 2.0], device=device)
    b = minitorch.tensor([True, False], device=device)
    with pytest.raises(TypeError):
        b &= minitorch.tensor([1, 2], device=device)
    with pytest.raises(TypeError):
        b |= 3


# ----------------------------------------------- empty, 0-dim and size-1 ----


@pytest.mark.parametrize("device", DEVICES)
def test_large_strided_inputs_use_threads_correctly(device):
    """Big enough to be split across threads, with transposed and broadcast operands."""
    n = minitorch.get_num_threads()
    try:
        minitorch.set_num_threads(2)
        a_np = random_array(9, (301, 420), np.float64)
        b_np = random_array(10, (301, 1), np.float64, 0.5, 3)
        a = minitorch.tensor(a_np, device=device).T  # (420, 301), non-contiguous
        b = minitorch.tensor(b_np, device=device).T  # (1, 301)
        assert_tensor_equal(a.sin(), np.sin(a_np.T), rtol=1e-15, atol=1e-15)
        assert_tensor_equal(a[::3, 1:].round(), np.rint(a_np.T[::3, 1:]))
        assert_tensor_equal(a % b, np.remainder(a_np.T, b_np.T), rtol=1e-12, atol=1e-12)
        assert_tensor_equal(minitorch.atan2(a, b), np.arctan2(a_np.T, b_np.T), rtol=1e-15, atol=1e-15)
        i_np = np.random.default_rng(11).integers(-(2**62), 2**62, size=(301, 420))
        i = minitorch.tensor(i_np, device=device).T
        assert_tensor_equal(i ^ (i > 0), i_np.T ^ (i_np.T > 0))
        assert_tensor_equal(minitorch.logical_xor(a > 0, i), np.logical_xor(a_np.T > 0, i_np.T))
    finally:
        minitorch.set_num_threads(n)


# --------------------------------------------------------------- gradients ----

def _leaf(arr, layout, device):
    """(leaf, get): gradcheck perturbs ``leaf``, the op sees ``get(leaf)`` (= ``arr``).

    See tests/autograd/test_gradcheck_ops.py for the layouts.
    """
    arr = np.asarray(arr, dtype=np.float64)
    rev = tuple(range(arr.ndim))[::-1]
    if layout == "contiguous":
        return minitorch.tensor(arr, requires_grad=True, device=device), lambda t: t
    if layout == "transposed_leaf":
        leaf = minitorch.tensor(np.ascontiguousarray(arr.transpose(rev)), device=device).permute(*rev)
        return leaf.requires_grad_(), lambda t: t
    if layout == "strided_leaf":
        big = np.full(tuple(2 * s + 1 for s in arr.shape), 1e6)
        idx = tuple(slice(1, None, 2) for _ in arr.shape)
        big[idx] = arr
        return minitorch.tensor(big, device=device)[idx].requires_grad_(), lambda t: t
    leaf = minitorch.tensor(np.ascontiguousarray(arr.transpose(rev)), requires_grad=True, device=device)
    return leaf, lambda t: t.permute(*rev)


def check(fn, arrays, layouts=None, *, device):
    layouts = layouts or ["contiguous"] * len(arrays)
    prepared = [_leaf(a, lay, device) for a, lay in zip(arrays, layouts)]
    for (leaf, get), a in zip(prepared, arrays):
        np.testing.assert_array_equal(to_numpy(get(leaf)), a)

    def wrapped(*ts):
        out = fn(*(get(t) for (_, get), t in zip(prepared, ts)))
        assert out.device == ts[0].device
        assert out.requires_grad or not minitorch.is_grad_enabled()  # gradcheck's own passes run under no_grad
        return out

    assert gradcheck(wrapped, tuple(leaf for leaf, _ in prepared))


def _rng(seed):
    return np.random.default_rng(seed)


def test_unary_gradient_values(device):
    # gradcheck compares backward with the forward; pin the formulas too.
    v = np.array([-1.1, -0.3, 0.4, 1.0])
    want = {
        "sin": np.cos(v), "cos": -np.sin(v), "tan": 1 / np.cos(v) ** 2, "expm1": np.exp(v),
        "erf": 2 / np.sqrt(np.pi) * np.exp(-v * v), "log1p": 1 / (1 + v),
    }
    for name, g in want.items():
        x = minitorch.tensor(v, requires_grad=True, device=device)
        getattr(x, name)().sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), g, rtol=1e-12, err_msg=name)
    x = minitorch.tensor(np.array([0.25, 1.0, 4.0]), requires_grad=True, device=device)
    x.rsqrt().sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), -0.5 * np.array([0.25, 1.0, 4.0]) ** -1.5, rtol=1e-12)


def test_frac_gradient_is_one(device):
    x = minitorch.tensor(np.array([-2.5, -1.0, 0.0, 0.3, 7.0]), requires_grad=True, device=device)
    (x.frac() * minitorch.tensor(np.arange(5.0), device=device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.arange(5.0))


def test_binary_gradient_values(device):
    # d/da = 1 for both; d/db = -floor(a / b) (remainder), -trunc(a / b) (fmod)
    a_np, b_np = np.array([7.5, -7.5, 7.5, -7.5]), np.array([2.0, 2.0, -2.0, -2.0])
    for name, q in (("remainder", np.floor), ("fmod", np.trunc)):
        a = minitorch.tensor(a_np, requires_grad=True, device=device)
        b = minitorch.tensor(b_np, requires_grad=True, device=device)
        getattr(minitorch, name)(a, b).sum().backward()
        np.testing.assert_array_equal(to_numpy(a.grad), np.ones(4), err_msg=name)
        np.testing.assert_array_equal(to_numpy(b.grad), -q(a_np / b_np), err_msg=name)
    # atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
    y_np, x_np = np.array([1.0, -2.0, 0.5]), np.array([-1.0, 3.0, 0.0])
    y = minitorch.tensor(y_np, requires_grad=True, device=device)
    x = minitorch.tensor(x_np, requires_grad=True, device=device)
    minitorch.atan2(y, x).sum().backward()
    r2 = x_np**2 + y_np**2
    np.testing.assert_allclose(to_numpy(y.grad), x_np / r2, rtol=1e-14)
    np.testing.assert_allclose(to_numpy(x.grad), -y_np / r2, rtol=1e-14)
    # one side a constant tensor: only the other gets a gradient
    y = minitorch.tensor(y_np, requires_grad=True, device=device)
    x = minitorch.tensor(x_np, device=device)
    (minitorch.atan2(y, x) + y.fmod(x + 2.5)).sum().backward()
    np.testing.assert_allclose(to_numpy(y.grad), x_np / r2 + 1.0, rtol=1e-14)
    assert x.grad is None


# (description, function of x, domain of x)
SCALAR_GRAD = {
    "x % 1.5": (lambda x: x % 1.5, "quotient"),
    "x % -2": (lambda x: x % -2, "quotient"),
    "5.25 % x": (lambda x: 5.25 % x, "divisor"),
    "x.fmod(-1.5)": (lambda x: x.fmod(-1.5), "quotient"),
    "fmod(5.25, x)": (lambda x: minitorch.fmod(5.25, x), "divisor"),
    "remainder(-5.25, x)": (lambda x: minitorch.remainder(-5.25, x), "divisor"),
    "atan2(x, 2.0)": (lambda x: minitorch.atan2(x, 2.0), "any"),
    "atan2(1.0, x)": (lambda x: minitorch.atan2(1.0, x), "any"),
    "x.atan2(-1)": (lambda x: x.atan2(-1), "nonzero"),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed_leaf", "view_of_leaf"])
@pytest.mark.parametrize("name", list(SCALAR_GRAD))
def test_scalar_forms_gradcheck(device, name, layout):
    fn, domain = SCALAR_GRAD[name]
    r = _rng(6)
    if domain == "quotient":  # x / 1.5 and x / 2 away from integers
        x = r.integers(-4, 4, size=(3, 4)) * 3.0 + r.choice([0.6, 1.1, 2.1, 2.4], size=(3, 4))
    elif domain == "divisor":  # 5.25 / x away from integers: x near +-2 or +-1 (5.25/2 = 2.625)
        x = r.choice([-2.0, -1.0, 1.0, 2.0], size=(3, 4)) + r.uniform(-0.02, 0.02, size=(3, 4))
    elif domain == "nonzero":
        x = r.uniform(0.5, 2.0, size=(3, 4)) * r.choice([-1.0, 1.0], size=(3, 4))
    else:
        x = r.uniform(-2.0, 2.0, size=(3, 4))
    check(fn, [x], [layout], device=device)


# ------------------------------------------- zero-gradient and bool outputs ----

PIECEWISE_CONSTANT = ["floor", "ceil", "round", "trunc", "sign"]


@pytest.mark.parametrize("name", PIECEWISE_CONSTANT)
def test_piecewise_constant_ops_have_zero_gradient(device, name):
    # PyTorch: the output requires grad and the gradient is exactly zero everywhere,
    # also on the jumps (integers, half-integers, 0).
    x = minitorch.tensor(np.array([-2.5, -1.0, -0.3, 0.0, 0.5, 1.7, 3.0]), requires_grad=True, device=device)
    for out in _unary_forms(x, name):
        assert out.requires_grad, f"{name}: the output does not require grad"
        assert out.dtype == minitorch.float64
    (getattr(x, name)() * minitorch.tensor(np.arange(1.0, 8.0), device=device)).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros(7))
    # it takes part in a bigger graph: d/dx (x * f(x)) = f(x) where f' = 0
    x.grad = None
    (x * getattr(minitorch, name)(x)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), getattr(np, "rint" if name == "round" else name)(to_numpy(x)))


@pytest.mark.parametrize("name", PIECEWISE_CONSTANT + ["frac", "sin", "rsqrt", "erf"])
def test_no_grad_when_not_asked(device, name):
    x = minitorch.tensor(np.array([0.5, 1.5]), device=device)
    assert not getattr(x, name)().requires_grad
    x.requires_grad_()
    with minitorch.no_grad():
        assert not getattr(x, name)().requires_grad


def test_bool_outputs_do_not_require_grad(device):
    x = minitorch.tensor(np.array([-1.0, 0.0, np.nan, np.inf]), requires_grad=True, device=device)
    y = minitorch.tensor(np.array([2.0, 0.0, 1.0, -3.0]), requires_grad=True, device=device)
    outs = {
        "isnan": x.isnan(), "isinf": minitorch.isinf(x), "isfinite": x.isfinite(),
        "logical_not": x.logical_not(), "logical_and": minitorch.logical_and(x, y),
        "logical_or": x.logical_or(y), "logical_xor": minitorch.logical_xor(x, y),
        "x > y": x > y, "x == y": x == y,
        "&": (x > 0) & (y > 0), "|": (x > 0) | (y < 0), "^": (x > 0) ^ (y > 0), "~": ~(y > 0),
        "bitwise_and": minitorch.bitwise_and(x < 0, y > 0),
    }
    for desc, out in outs.items():
        assert out.dtype == minitorch.bool, desc
        assert not out.requires_grad, desc
        assert out.grad_fn is None, desc
    # the values, while here (NaN is True for the logical ops)
    assert_tensor_equal(outs["logical_and"], np.array([True, False, True, True]))
    assert_tensor_equal(outs["logical_xor"], np.array([False, False, False, False]))
    assert_tensor_equal(outs["logical_not"], np.array([False, True, False, False]))


# ------------------------------------------------------------ vs PyTorch ----

def test_matches_pytorch(device):
    """The same inputs through PyTorch (CPU, optional): values and result dtypes."""
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    to_torch_dtype = {minitorch.float32: torch.float32, minitorch.float64: torch.float64,
                      minitorch.int64: torch.int64, minitorch.bool: torch.bool}
    r = _rng(8)
    f64 = np.concatenate([r.uniform(-5, 5, size=20), [0.5, -0.5, 1.5, 2.5, -0.0, 0.0, np.inf, -np.inf, np.nan]])
    f32 = f64.astype(np.float32)
    i64 = np.concatenate([r.integers(-20, 21, size=20), [0, 1, -1, 2**62, -(2**62), 7, -7, 3, -3]])
    divisor_f = np.where(np.abs(f64) < 0.5, 0.75, f64)
    divisor_i = np.where(i64 == 0, 3, i64) % 11 + 1  # 1..11
    divisor_i = divisor_i * np.where(np.arange(i64.size) % 2, 1, -1)
    boolv = i64 % 3 == 0

    def compare(name, got, want):
        from_torch = {v: k for k, v in to_torch_dtype.items()}
        assert got.dtype == from_torch[want.dtype], f"{name}: {got.dtype} vs {want.dtype}"
        want_np = want.numpy()
        tol = dict(rtol=2e-5, atol=1e-6) if want.dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
        if want_np.dtype.kind == "f":
            np.testing.assert_allclose(to_numpy(got), want_np, equal_nan=True, err_msg=name, **tol)
        else:
            np.testing.assert_array_equal(to_numpy(got), want_np, err_msg=name)

    with np.errstate(all="ignore"):
        for arr in (f64, f32, i64, boolv):
            for name in list(UNARY_FLOAT) + list(CLASSIFY) + ["logical_not"] + (["sign"] if arr is not boolv else []):
                compare(f"{name}({arr.dtype})", getattr(minitorch.tensor(arr, device=device), name)(),
                        getattr(torch, name)(torch.from_numpy(arr)))
        for arr in (f64, f32, i64):
            for name in list(ROUNDING) + ["frac"]:
                if name == "frac" and arr.dtype.kind == "i":
                    continue
                compare(f"{name}({arr.dtype})", getattr(minitorch.tensor(arr, device=device), name)(),
                        getattr(torch, name)(torch.from_numpy(arr)))
        for a, b in ((f64, divisor_f), (f32, divisor_f.astype(np.float32)), (i64, divisor_i), (i64, divisor_f),
                     (f32, f64)):
            for name in ("remainder", "fmod", "atan2", "logical_and", "logical_xor"):
                got = getattr(minitorch, name)(minitorch.tensor(a, device=device), minitorch.tensor(b, device=device))
                want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
                compare(f"{name}({a.dtype}, {b.dtype})", got, want)
        for a, b in ((i64, i64[::-1].copy()), (i64, boolv), (boolv, boolv[::-1].copy())):
            for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
                got = getattr(minitorch, name)(minitorch.tensor(a, device=device), minitorch.tensor(b, device=device))
                want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
                compare(f"{name}({a.dtype}, {b.dtype})", got, want)
            compare(f"~{a.dtype}", ~minitorch.tensor(a, device=device), ~torch.from_numpy(a))
        for s in (3, -2, 2.5):
            compare(f"i64 % {s}", minitorch.tensor(i64, device=device) % s, torch.from_numpy(i64) % s)
            compare(f"f32 % {s}", minitorch.tensor(f32, device=device) % s, torch.from_numpy(f32) % s)
            compare(f"{s} % divisor", s % minitorch.tensor(divisor_f, device=device), s % torch.from_numpy(divisor_f))
        compare("bool & 3", minitorch.tensor(boolv, device=device) & 3, torch.from_numpy(boolv) & 3)


# ------------------------------------------------------------------ log2 ----
# Added after the others, as the example of what a new elementwise op touches.

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log2_matches_numpy(device, dtype):
    x = np.array([[0.5, 1.0, 2.0], [8.0, 0.0, -1.0]], dtype=dtype)
    for layout in ("contiguous", "transposed"):
        t = minitorch.tensor(x, device=device)
        t = t.T if layout == "transposed" else t
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.log2(x.T if layout == "transposed" else x)
            np.testing.assert_allclose(t.log2().cpu().numpy(), expected, rtol=1e-6)
            np.testing.assert_allclose(minitorch.log2(t).cpu().numpy(), expected, rtol=1e-6)
    assert minitorch.log2(minitorch.tensor([1, 4], device=device)).dtype == minitorch.float32


def test_log2_gradient(device):
    x = minitorch.tensor([0.5, 2.0, 3.0], dtype=minitorch.float64, requires_grad=True, device=device)
    assert minitorch.testing.gradcheck(minitorch.log2, (x,))
