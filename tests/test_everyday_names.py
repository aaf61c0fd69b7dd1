"""The everyday PyTorch names added in Python on top of existing ops (issue 12, point 4):
``all``/``any``, ``isclose``/``allclose``/``equal``, ``square``/``reciprocal``/
``clamp_min``/``clamp_max``, ``mm``/``mv``/``dot``, ``movedim``/``unflatten``, the
aliases (``clip``, ``greater``, ``swapaxes``...), the in-place forms (``exp_``,
``clamp_``, ``normal_``...), ``new_*``, ``type()``/``nbytes``/``itemsize``, the
top-level view functions, and the import path ``minitorch.utils.data``.

NumPy is the reference; PyTorch's documented semantics decide dtypes, defaults and
which exception a bad input raises. Every differentiable addition gets a float64
gradcheck; everything runs on ``cpu`` and ``cuda`` where available.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import (
    DEVICES,
    LAYOUTS,
    assert_tensor_equal,
    broadcastable_pairs,
    make_tensor,
    random_array,
    seeds,
    shapes,
    to_numpy,
)
from minitorch.testing import gradcheck
from conftest import CUDA_SKIP_REASON

DTYPES = [np.float32, np.float64, np.int64, np.bool_]
FLOATS = [np.float32, np.float64]


def dtype_id(d) -> str:
    return np.dtype(d).name


def leaf64(arr, device: str) -> minitorch.Tensor:
    return minitorch.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True, device=device)


def some_values(seed: int, shape, dtype) -> np.ndarray:
    """Random values with plenty of zeros (so all/any see both answers)."""
    arr = random_array(seed, shape, dtype, -2, 3)
    if np.dtype(dtype).kind == "f":
        arr = np.where(np.random.default_rng(seed + 1).random(shape) < 0.3, 0, arr).astype(dtype)
    return arr


# ------------------------------------------------------------------ all / any ----

@st.composite
def shape_and_dims(draw):
    """A shape and a ``dim`` argument for it: None, an int (maybe negative) or a tuple."""
    shape = draw(shapes(min_dims=0, max_dims=4))
    n = len(shape)
    if n == 0:
        return shape, draw(st.sampled_from([None, 0, -1, (0,)]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return shape, None
    if kind == "int":
        return shape, draw(st.integers(-n, n - 1))
    picked = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    return shape, tuple(d - n if draw(st.booleans()) else d for d in picked)


def _numpy_axis(dim, ndim):
    if dim is None or ndim == 0:
        return None
    return dim if isinstance(dim, int) else tuple(dim)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("name", ["all", "any"])
@settings(max_examples=25)
@given(case=shape_and_dims(), keepdim=st.booleans(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_all_any_match_numpy(device, dtype, name, case, keepdim, seed, layout):
    shape, dim = case
    arr = some_values(seed, shape, dtype)
    x = make_tensor(arr, layout if arr.ndim else "contiguous", device)  # a 0-dim tensor has one layout
    expected = getattr(np, name)(arr, axis=_numpy_axis(dim, arr.ndim), keepdims=keepdim)
    for got in (getattr(x, name)(dim, keepdim), getattr(minitorch, name)(x, dim=dim, keepdim=keepdim)):
        assert got.device == device
        assert not got.requires_grad
        assert_tensor_equal(got, expected)


@pytest.mark.parametrize("device", DEVICES)
def test_all_any_forms_and_special_values(device):
    x = minitorch.tensor([[1.0, 0.0, float("nan")], [2.0, float("-inf"), 3.0]], device=device)
    assert_tensor_equal(x.all(), np.bool_(False))
    assert_tensor_equal(x.any(), np.bool_(True))
    # NaN and inf are nonzero, as in PyTorch and NumPy.
    assert_tensor_equal(x.all(dim=1), np.array([False, True]))
    assert_tensor_equal(x.all(0), np.array([True, False, True]))
    assert_tensor_equal(x.any(dim=(0, 1), keepdim=True), np.array([[True]]))
    assert_tensor_equal(minitorch.all(x, -1), np.array([False, True]))
    assert_tensor_equal(x.t().all(1), np.array([True, False, True]))  # non-contiguous
    assert_tensor_equal(x[:, ::2].any(0), np.array([True, True]))
    assert_tensor_equal(minitorch.tensor(0, device=device).any(), np.bool_(False))
    assert_tensor_equal(minitorch.tensor(True, device=device).all(0), np.bool_(True))
    assert bool(minitorch.tensor([3, 4], device=device).all()) is True


@pytest.mark.parametrize("device", DEVICES)
def test_all_any_of_empty_tensors(device):
    e = minitorch.zeros(0, 3, device=device)
    assert_tensor_equal(e.all(), np.bool_(True))
    assert_tensor_equal(e.any(), np.bool_(False))
    assert_tensor_equal(e.all(0), np.array([True, True, True]))
    assert_tensor_equal(e.any(0, keepdim=True), np.zeros((1, 3), dtype=bool))
    assert_tensor_equal(e.all(1), np.zeros((0,), dtype=bool))


def test_all_any_never_require_grad():
    w = minitorch.tensor([1.0, 0.0], requires_grad=True)
    for out in (w.all(), w.any(0), minitorch.all(w * 2), (w * 2).any(dim=0, keepdim=True)):
        assert out.dtype == minitorch.bool and not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_bad_dims(name):
    x = minitorch.zeros(2, 3)
    with pytest.raises(IndexError, match=f"{name}: dimension out of range"):
        getattr(x, name)(2)
    with pytest.raises(IndexError, match=name):
        getattr(minitorch, name)(x, (0, -3))
    with pytest.raises(ValueError, match=f"{name}: dim 1 appears more than once"):
        getattr(x, name)((1, -1))
    with pytest.raises(TypeError, match=f"{name}: dim must be an int"):
        getattr(x, name)(1.0)
    with pytest.raises(TypeError, match=name):
        getattr(minitorch, name)([1, 0])


# ----------------------------------------------------- isclose / allclose / equal ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@settings(max_examples=20)
@given(pair=broadcastable_pairs(max_dims=3), seed=seeds, layouts=st.tuples(*[st.sampled_from(LAYOUTS)] * 2),
       tol=st.sampled_from([(1e-5, 1e-8), (0.0, 0.0), (0.1, 0.5), (0.0, 1.0)]), equal_nan=st.booleans())
def test_isclose_allclose_match_numpy(device, dtype, pair, seed, layouts, tol, equal_nan):
    rtol, atol = tol
    a = random_array(seed, pair[0], dtype, -3, 3)
    b = random_array(seed + 1, pair[1], dtype, -3, 3)
    if np.dtype(dtype).kind == "f":  # near misses, exact ties, NaNs and infinities
        rng = np.random.default_rng(seed + 2)
        b = np.where(rng.random(pair[1]) < 0.3, b + rng.uniform(-1, 1, pair[1]) * 1e-6, b).astype(dtype)
        a.reshape(-1)[:2] = [np.nan, np.inf][: a.size]
        b.reshape(-1)[:1] = [np.nan][: b.size]
    x, y = make_tensor(a, layouts[0], device), make_tensor(b, layouts[1], device)
    expected = np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert_tensor_equal(x.isclose(y, rtol, atol, equal_nan), expected)
    assert_tensor_equal(minitorch.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan), expected)
    assert x.allclose(y, rtol, atol, equal_nan) is bool(expected.all())
    assert minitorch.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan) is bool(expected.all())


@pytest.mark.parametrize("device", DEVICES)
def test_isclose_defaults_and_infinities(device):
    x = minitorch.tensor([1.0, 1e10, 0.0, float("inf"), float("-inf"), float("nan")], dtype=minitorch.float64,
                         device=device)
    y = minitorch.tensor([1.0 + 1e-4, 1.00001e10, 1e-9, float("inf"), float("inf"), float("nan")],
                         dtype=minitorch.float64, device=device)
    assert_tensor_equal(x.isclose(y), np.array([False, True, True, True, False, False]))
    assert_tensor_equal(x.isclose(y, equal_nan=True), np.array([False, True, True, True, False, True]))
    assert not x.allclose(y)
    assert x[1:5:2].allclose(y[1:5:2])
    assert minitorch.tensor([True, False]).isclose(minitorch.tensor([False, False]), atol=1.0).all()


def test_isclose_bad_input():
    x = minitorch.zeros(2)
    with pytest.raises(TypeError, match="isclose.*same dtype.*float32 and float64"):
        x.isclose(x.double())
    with pytest.raises(TypeError, match="isclose.*must be a Tensor"):
        x.isclose(0.0)
    with pytest.raises(ValueError, match="allclose: shapes"):
        minitorch.allclose(x, minitorch.zeros(3))
    with pytest.raises(ValueError, match="isclose: rtol and atol"):
        x.isclose(x, rtol=-1e-3)
    with pytest.raises(TypeError, match="allclose"):
        minitorch.allclose(np.zeros(2), x)


@pytest.mark.parametrize("device", DEVICES)
def test_equal(device):
    a = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert a.equal(a.clone()) is True
    assert minitorch.equal(a.t(), minitorch.tensor([[1.0, 3.0], [2.0, 4.0]], device=device))  # non-contiguous
    assert not a.equal(a.t())
    assert not a.equal(a[0])  # no broadcasting: shapes must match
    assert not a.equal(a.reshape(4))
    assert a.equal(a.long())  # dtypes are promoted, as in PyTorch
    assert not minitorch.tensor([float("nan")], device=device).equal(minitorch.tensor([float("nan")], device=device))
    assert minitorch.zeros(0, 2, device=device).equal(minitorch.ones(0, 2, device=device))
    assert not minitorch.zeros(0, 2, device=device).equal(minitorch.zeros(2, 0, device=device))
    with pytest.raises(TypeError, match="equal.*must be a Tensor"):
        a.equal([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("name", ["isclose", "allclose", "equal"])
def test_compare_across_devices_raises(name):
    with pytest.raises(RuntimeError, match=f"{name}: expected all tensors to be on the same device"):
        getattr(minitorch, name)(minitorch.zeros(2), minitorch.zeros(2, device="cuda"))


# ---------------------------------------------- square / reciprocal / clamp_min/max ----

UNARY_COMPOSITES = {
    "square": (lambda a: np.square(a) if a.dtype != np.bool_ else a.astype(np.int64)),
    "reciprocal": (lambda a: np.reciprocal(a.astype(np.float32) if a.dtype.kind != "f" else a)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("name", list(UNARY_COMPOSITES))
@settings(max_examples=15)
@given(shape=shapes(max_dims=3), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_square_reciprocal_match_numpy(device, dtype, name, shape, seed, layout):
    arr = random_array(seed, shape, dtype, -4, 5)
    if name == "reciprocal" and arr.dtype.kind == "f":
        arr = np.where(np.abs(arr) < 0.25, 0.5, arr).astype(dtype)
    x = make_tensor(arr, layout, device)
    with np.errstate(divide="ignore"):
        expected = UNARY_COMPOSITES[name](arr)
    for got in (getattr(x, name)(), getattr(minitorch, name)(x)):
        assert_tensor_equal(got, expected, rtol=1e-6)


def test_reciprocal_of_zero_and_ints():
    assert_tensor_equal(minitorch.tensor([0, 2, -4]).reciprocal(), np.array([np.inf, 0.5, -0.25], dtype=np.float32))
    assert_tensor_equal(minitorch.tensor([True, False]).square(), np.array([1, 0]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=dtype_id)
@settings(max_examples=15)
@given(pair=broadcastable_pairs(max_dims=3), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_clamp_min_max_match_numpy(device, dtype, pair, seed, layout):
    shape, bound_shape = pair
    if np.broadcast_shapes(shape, bound_shape) != tuple(shape):
        bound_shape = ()
    arr = random_array(seed, shape, dtype, -5, 5)
    bound = random_array(seed + 1, bound_shape, dtype, -3, 3)
    x = make_tensor(arr, layout, device)
    b = minitorch.tensor(bound, device=device)
    assert_tensor_equal(x.clamp_min(b), np.maximum(arr, bound))
    assert_tensor_equal(minitorch.clamp_max(x, b), np.minimum(arr, bound))
    assert_tensor_equal(x.clamp_min(1), np.maximum(arr, 1).astype(dtype))
    assert_tensor_equal(minitorch.clamp_min(x, min=-1), np.maximum(arr, -1).astype(dtype))
    assert_tensor_equal(x.clamp_max(max=2), np.minimum(arr, 2).astype(dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=dtype_id)
@settings(max_examples=15)
@given(pair=broadcastable_pairs(max_dims=3), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_clamp_with_both_bounds_matches_numpy(device, dtype, pair, seed, layout):
    """clamp(x, lo, hi) is one ternary kernel: numbers (the CPU loop with both bounds as
    values) and tensors (broadcast) give NumPy's minimum(maximum(x, lo), hi)."""
    shape, bound_shape = pair
    if np.broadcast_shapes(shape, bound_shape) != tuple(shape):
        bound_shape = ()
    arr = random_array(seed, shape, dtype, -5, 5)
    lo = random_array(seed + 1, bound_shape, dtype, -3, 0)
    hi = random_array(seed + 2, bound_shape, dtype, 0, 3)
    x = make_tensor(arr, layout, device)
    got = x.clamp(minitorch.tensor(lo, device=device), minitorch.tensor(hi, device=device))
    assert_tensor_equal(got, np.minimum(np.maximum(arr, lo), hi))
    assert_tensor_equal(x.clamp(-2, 3), np.clip(arr, -2, 3).astype(dtype))
    assert_tensor_equal(minitorch.clamp(x, min=3, max=-2), np.full(arr.shape, -2, dtype))  # min > max: every y is max


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_with_both_bounds_nan_and_16_bit(device):
    arr = np.array([-3.0, -0.25, np.nan, 0.5, 4.0])
    x = minitorch.tensor(arr, device=device)
    assert_tensor_equal(x.clamp(-1, 1), np.clip(arr, -1, 1))  # a NaN x stays NaN
    assert np.isnan(x.clamp(float("nan"), 1).cpu().numpy()).all()  # a NaN bound gives NaN, as PyTorch
    for dt in (minitorch.float16, minitorch.bfloat16):
        got = x.to(dt).clamp(-1, 0.75)
        assert got.dtype == dt
        np.testing.assert_array_equal(got.float().cpu().numpy(), np.clip(arr, -1, 0.75).astype(np.float32))
    assert minitorch.tensor([1, 5, 9], device=device).clamp(2, 6).tolist() == [2, 5, 6]
    assert minitorch.tensor([1, 5, 9], device=device).clamp(2.5, 6).dtype == minitorch.float32


def test_clamp_min_max_need_a_bound():
    with pytest.raises(TypeError, match="clamp_min.*not None"):
        minitorch.zeros(2).clamp_min(None)
    with pytest.raises(TypeError, match="clamp_max"):
        minitorch.clamp_max(minitorch.zeros(2))


# ---------------------------------------------------------------- mm / mv / dot ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=dtype_id)
@settings(max_examples=15)
@given(n=st.integers(0, 4), k=st.integers(0, 4), m=st.integers(0, 4), seed=seeds,
       layouts=st.tuples(*[st.sampled_from(LAYOUTS)] * 2))
def test_mm_mv_dot_match_numpy(device, dtype, n, k, m, seed, layouts):
    a = random_array(seed, (n, k), dtype, -3, 3)
    b = random_array(seed + 1, (k, m), dtype, -3, 3)
    v = random_array(seed + 2, (k,), dtype, -3, 3)
    w = random_array(seed + 3, (k,), dtype, -3, 3)
    ta, tb = make_tensor(a, layouts[0], device), make_tensor(b, layouts[1], device)
    tv, tw = make_tensor(v, layouts[1], device), make_tensor(w, layouts[0], device)
    tol = dict(rtol=1e-5, atol=1e-5)
    assert_tensor_equal(ta.mm(tb), a @ b, **tol)
    assert_tensor_equal(minitorch.mm(ta, tb), a @ b, **tol)
    assert_tensor_equal(ta.mv(tv), a @ v, **tol)
    assert_tensor_equal(minitorch.mv(ta, tv), a @ v, **tol)
    assert_tensor_equal(tv.dot(tw), np.asarray(v @ w), **tol)
    assert_tensor_equal(minitorch.dot(tv, tw), np.asarray(v @ w), **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_mm_mv_dot_gradcheck(device):
    rng = np.random.default_rng(0)
    a, b = leaf64(rng.normal(size=(3, 4)), device), leaf64(rng.normal(size=(4, 2)), device)
    v, w = leaf64(rng.normal(size=4), device), leaf64(rng.normal(size=4), device)
    assert gradcheck(lambda p, q: p.mm(q), (a, b))
    assert gradcheck(lambda p, q: minitorch.mm(p.t(), q.t()), (b, a))  # non-contiguous operands
    assert gradcheck(lambda p, q: p.mv(q), (a, v))
    assert gradcheck(lambda p, q: minitorch.dot(p, q), (v, w))


def test_mm_mv_dot_bad_input():
    m, v = minitorch.zeros(2, 3), minitorch.zeros(3)
    with pytest.raises(ValueError, match=r"mm: expected 2-D and 2-D tensors, got shapes \(2, 3\) and \(3,\)"):
        m.mm(v)
    with pytest.raises(ValueError, match=r"mm: shapes \(2, 3\) and \(2, 3\) cannot be multiplied \(3 != 2\)"):
        minitorch.mm(m, m)
    with pytest.raises(ValueError, match="mv: expected 2-D and 1-D"):
        m.mv(m)
    with pytest.raises(ValueError, match=r"mv: shapes \(2, 3\) and \(2,\) cannot be multiplied"):
        m.mv(minitorch.zeros(2))
    with pytest.raises(ValueError, match=r"dot: the vectors have different lengths \(3 != 2\)"):
        v.dot(minitorch.zeros(2))
    with pytest.raises(ValueError, match="dot: expected 1-D and 1-D"):
        minitorch.dot(m, v)
    with pytest.raises(TypeError, match="mm.*must be a Tensor"):
        m.mm([[1.0], [2.0], [3.0]])
    with pytest.raises(TypeError, match="same dtype"):  # matmul's rule, as PyTorch's mm
        m.mm(minitorch.zeros(3, 1, dtype=minitorch.float64))


# ---------------------------------------------------------- movedim / unflatten ----

@st.composite
def movedim_cases(draw):
    shape = draw(shapes(min_dims=1, max_dims=4, max_side=3))
    n = len(shape)
    k = draw(st.integers(1, n))
    src = draw(st.permutations(range(n)))[:k]
    dst = draw(st.permutations(range(n)))[:k]
    if k == 1 and draw(st.booleans()):
        return shape, src[0] - n * draw(st.integers(0, 1)), dst[0]  # plain ints, maybe negative
    return shape, tuple(src), tuple(d - n if draw(st.booleans()) else d for d in dst)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=30)
@given(case=movedim_cases(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_movedim_matches_numpy(device, case, seed, layout):
    shape, src, dst = case
    arr = random_array(seed, shape, np.float32)
    x = make_tensor(arr, layout, device)
    expected = np.moveaxis(arr, src, dst)
    for got in (x.movedim(src, dst), minitorch.movedim(x, src, dst), x.moveaxis(src, dst),
                minitorch.moveaxis(x, src, dst)):
        assert got._storage_id() == x._storage_id()  # a view
        assert_tensor_equal(got, expected)


@pytest.mark.parametrize("device", DEVICES)
def test_movedim_unflatten_gradcheck(device):
    a = leaf64(np.random.default_rng(1).normal(size=(2, 3, 4)), device)
    assert gradcheck(lambda t: t.movedim((0, 2), (1, 0)) * minitorch.arange(3.0, device=device).double(), (a,))
    assert gradcheck(lambda t: minitorch.unflatten(t.movedim(1, 2), 1, (2, 2)).sin(), (a,))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("shape", "dim", "sizes", "expected"), [
    ((2, 12), 1, (3, 4), (2, 3, 4)),
    ((2, 12), -1, (3, -1), (2, 3, 4)),
    ((6,), 0, [1, 6, 1], (1, 6, 1)),
    ((4, 1), 1, (1, 1), (4, 1, 1)),
    ((0, 6), 1, (2, 3), (0, 2, 3)),
    ((3, 0), 1, (0, 5), (3, 0, 5)),
    ((3, 0), 1, (-1, 5), (3, 0, 5)),
])
def test_unflatten(device, shape, dim, sizes, expected):
    arr = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    for x in (minitorch.tensor(arr, device=device), minitorch.tensor(arr.T.copy(), device=device).t()):
        got = x.unflatten(dim, sizes)
        assert got._storage_id() == x._storage_id()  # a view, also of a non-contiguous tensor
        assert_tensor_equal(got, arr.reshape(expected))


def test_unflatten_and_movedim_bad_input():
    x = minitorch.zeros(2, 12)
    with pytest.raises(ValueError, match=r"unflatten: sizes \(5, 2\) don't multiply up to the size of dim 1 \(12\)"):
        x.unflatten(1, (5, 2))
    with pytest.raises(ValueError, match="unflatten: sizes .* cannot split dim 1 of size 12"):
        x.unflatten(1, (5, -1))
    with pytest.raises(ValueError, match="unflatten"):
        x.unflatten(1, (-1, -1))
    with pytest.raises(ValueError, match="unflatten: sizes must be non-empty"):
        x.unflatten(1, ())
    with pytest.raises(IndexError, match="unflatten: dimension out of range"):
        x.unflatten(2, (2, 6))
    with pytest.raises(IndexError, match="unflatten"):
        minitorch.tensor(1.0).unflatten(0, (1,))
    with pytest.raises(TypeError, match="unflatten"):
        x.unflatten(1, (2.0, 6))
    with pytest.raises(ValueError, match="movedim: source .* same number of dims"):
        x.movedim((0, 1), 0)
    with pytest.raises(ValueError, match="movedim: dim 0 appears more than once in source"):
        x.movedim((0, -2), (0, 1))
    with pytest.raises(IndexError, match="movedim: dimension out of range"):
        minitorch.movedim(x, 0, 2)
    with pytest.raises(TypeError, match="movedim: destination must be an int"):
        x.movedim(0, "1")
    assert_tensor_equal(minitorch.tensor(5.0).movedim(0, -1), np.float32(5.0))


# ---------------------------------------------------------------------- aliases ----

ALIAS_CASES = [  # (alias, op, extra args)
    ("absolute", "abs", ()), ("negative", "neg", ()), ("multiply", "mul", (2.5,)), ("subtract", "sub", (1.5,)),
    ("divide", "div", (4.0,)), ("true_divide", "div", (-2.0,)), ("greater", "gt", (0.5,)),
    ("greater_equal", "ge", (0.0,)), ("less", "lt", (0.5,)), ("less_equal", "le", (0.0,)),
    ("not_equal", "ne", (0.0,)), ("clip", "clamp", (-1.0, 1.0)), ("swapaxes", "transpose", (0, -1)),
    ("swapdims", "transpose", (1, 0)), ("moveaxis", "movedim", (0, 1)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("alias", "op", "args"), ALIAS_CASES, ids=[c[0] for c in ALIAS_CASES])
def test_aliases_are_their_ops(device, alias, op, args):
    arr = np.random.default_rng(3).integers(-3, 4, size=(3, 4)).astype(np.float32)
    x = minitorch.tensor(arr, device=device)[:, ::2]  # non-contiguous
    expected = to_numpy(getattr(x, op)(*args))
    assert_tensor_equal(getattr(x, alias)(*args), expected)
    assert_tensor_equal(getattr(minitorch, alias)(x, *args), expected)
    assert getattr(minitorch.Tensor, alias) is getattr(minitorch.Tensor, op)


def test_alias_values_against_numpy():
    a = minitorch.tensor([[-2.0, 0.0, 3.0]])
    b = minitorch.tensor([[1.0], [0.0]])
    assert_tensor_equal(minitorch.greater(a, b), np.array([[-2.0, 0.0, 3.0]]) > np.array([[1.0], [0.0]]))
    assert_tensor_equal(a.less_equal(b), np.array([[-2.0, 0.0, 3.0]]) <= np.array([[1.0], [0.0]]))
    assert_tensor_equal(minitorch.true_divide(minitorch.tensor([1, 3]), 2), np.array([0.5, 1.5], dtype=np.float32))
    assert_tensor_equal(a.clip(max=1.0), np.array([[-2.0, 0.0, 1.0]], dtype=np.float32))
    assert_tensor_equal(minitorch.absolute(a), np.array([[2.0, 0.0, 3.0]], dtype=np.float32))
    assert minitorch.zeros(2, 3).nelement() == 6 and minitorch.zeros(2, 3).ndimension() == 2


# ----------------------------------------------------------------- in-place forms ----

def _domain(name: str, dtype):
    """Inputs where op and op_ are defined for ``dtype`` (positive for log/sqrt...)."""
    if name in ("log", "log2", "sqrt", "rsqrt", "reciprocal"):
        return 0.5, 4.0
    if name == "log1p":
        return -0.5, 4.0
    return -3.0, 3.0


INPLACE_UNARY = ["neg", "abs", "sign", "relu", "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sigmoid",
                 "tanh", "sin", "cos", "tan", "erf", "floor", "ceil", "round", "trunc", "frac", "square",
                 "reciprocal", "absolute", "negative"]
INPLACE_WITH_ARGS = [  # (name, args, kwargs)
    ("clamp", (-1.0, 1.0), {}), ("clamp", (), {"max": 0.5}), ("clip", (), {"min": -0.5}), ("clamp_min", (0.0,), {}),
    ("clamp_max", (0.25,), {}), ("pow", (2.0,), {}), ("remainder", (1.5,), {}), ("fmod", (-1.25,), {}),
    ("atan2", "tensor", {}), ("pow", "tensor", {}), ("clamp", "tensor", {}),
]


def _check_inplace(x: minitorch.Tensor, name: str, args, kwargs):
    """``x.name_(...)`` returns x, keeps its storage, and holds what ``x.name(...)`` gives."""
    expected = to_numpy(getattr(x, name)(*args, **kwargs)).astype(to_numpy(x).dtype)
    storage, version = x._storage_id(), x._version
    out = getattr(x, name + "_")(*args, **kwargs)
    assert out is x and x._storage_id() == storage and x._version > version
    assert_tensor_equal(x, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize("name", INPLACE_UNARY)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_inplace_unary_matches_out_of_place(device, dtype, name, layout):
    low, high = _domain(name, dtype)
    arr = random_array(7, (3, 4), dtype, low, high)
    _check_inplace(make_tensor(arr, layout, device), name, (), {})


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
@pytest.mark.parametrize(("name", "args", "kwargs"), INPLACE_WITH_ARGS,
                         ids=[f"{n}-{a if isinstance(a, str) else len(a)}-{sorted(k)}" for n, a, k in INPLACE_WITH_ARGS])
def test_inplace_with_arguments(device, dtype, name, args, kwargs):
    arr = random_array(8, (3, 4), dtype, 0.5, 3.0)
    if args == "tensor":  # a broadcast tensor operand, of another dtype (cast back into x)
        other = minitorch.tensor(random_array(9, (3,), np.float64, 0.5, 2.0), device=device)
        args = (other, other + 1) if name == "clamp" else (other,)
    x = minitorch.tensor(arr, device=device).t()  # non-contiguous
    _check_inplace(x, name, args, kwargs)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_writes_through_views(device):
    base = minitorch.tensor(np.arange(12.0).reshape(3, 4), dtype=minitorch.float32, device=device)
    base[:, 1::2].square_()
    base[0].neg_()
    expected = np.arange(12.0).reshape(3, 4)
    expected[:, 1::2] **= 2
    expected[0] *= -1
    assert_tensor_equal(base, expected.astype(np.float32))
    i = minitorch.tensor([-3, 4, 0], device=device)
    assert_tensor_equal(i.abs_().clamp_(max=3).neg_(), np.array([-3, -3, 0]))
    b = minitorch.tensor([True, False], device=device)
    assert_tensor_equal(b.logical_not_(), np.array([False, True]))
    assert_tensor_equal(minitorch.tensor([1, 2], device=device).bitwise_not_(), np.array([-2, -3]))
    assert_tensor_equal(minitorch.zeros(0, 3, device=device).exp_(), np.zeros((0, 3), dtype=np.float32))


def test_inplace_autograd_rules():
    w = minitorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="exp_: a leaf Variable that requires grad is being used in an in-place operation"):
        w.exp_()
    h = (w * 2).clamp_(0, 3)  # inside a graph: recorded, as in PyTorch
    h.sum().backward()
    assert w.grad.tolist() == [2.0, 0.0]  # 2 * w = (2, 4): the second was clamped
    w.grad = None
    p = minitorch.full((2,), 2.0).pow_(w)  # an argument that requires grad: recorded too
    p.sum().backward()
    assert w.grad.tolist() == pytest.approx([2 * 0.6931471805599453, 4 * 0.6931471805599453])  # 2**w * ln 2
    with pytest.raises(RuntimeError, match="normal_: a leaf Variable that requires grad"):
        w.normal_()
    with minitorch.no_grad():  # how parameters are updated or initialised
        w.sqrt_().uniform_(0.0, 0.5)
    assert w.is_leaf and w.requires_grad and float(w.max()) < 0.5
    # A tensor saved for backward and changed in place: backward refuses, like PyTorch.
    x = minitorch.tensor([0.5, 1.5])
    y = (x * w).sum()
    x.exp_()
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        y.backward()


def test_inplace_bad_input_leaves_tensor_unchanged():
    i = minitorch.tensor([1, 2])
    with pytest.raises(TypeError, match="exp_: result type float32 can't be cast to the desired output type int64"):
        i.exp_()
    with pytest.raises(TypeError, match="reciprocal_: result type float32"):
        i.reciprocal_()
    x = minitorch.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"pow_: output with shape \(2,\) doesn't match the broadcast shape \(3, 2\)"):
        x.pow_(minitorch.ones(3, 2))
    with pytest.raises(RuntimeError, match="sigmoid_: unsupported operation: more than one element"):
        x.expand(3, 2).sigmoid_()
    assert_tensor_equal(i, np.array([1, 2]))
    assert_tensor_equal(x, np.array([1.0, 2.0], dtype=np.float32))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_normal_uniform_fill(device, dtype):
    minitorch.manual_seed(11)
    expected = to_numpy(minitorch.randn(2000, dtype=dtype, device=device)) * 0.5 + 3.0
    minitorch.manual_seed(11)
    x = minitorch.empty(2000, dtype=dtype, device=device)
    assert x.normal_(3.0, 0.5) is x
    np.testing.assert_allclose(to_numpy(x), expected, rtol=1e-6)  # the same stream as randn
    assert abs(to_numpy(x).mean() - 3.0) < 0.1 and abs(to_numpy(x).std() - 0.5) < 0.1
    u = minitorch.zeros(40, 50, device=device, dtype=dtype).t().uniform_(-2.0, 1.0)  # non-contiguous
    vals = to_numpy(u)
    assert vals.min() >= -2.0 and vals.max() < 1.0 and len(np.unique(vals)) > 1900
    assert abs(vals.mean() + 0.5) < 0.1
    with pytest.raises(TypeError, match="normal_: expected a floating point tensor, got int64"):
        minitorch.zeros(2, dtype=minitorch.int64).normal_()
    with pytest.raises(ValueError, match="normal_: expects std >= 0.0"):
        x.normal_(0.0, -1.0)
    with pytest.raises(ValueError, match=r"uniform_: expects to return a \[from, to\) range"):
        x.uniform_(1.0, 0.0)


# ---------------------------------------------------------------------- new_* ----

@pytest.mark.parametrize("device", DEVICES)
def test_new_factories_follow_self(device):
    x = minitorch.zeros(2, dtype=minitorch.float64, device=device)
    cases = [
        (x.new_zeros(2, 3), np.zeros((2, 3))),
        (x.new_zeros((2, 3)), np.zeros((2, 3))),
        (x.new_ones([4]), np.ones(4)),
        (x.new_full((2, 1), 7), np.full((2, 1), 7.0)),
        (x.new_tensor([1, 2]), np.array([1.0, 2.0])),  # self's dtype, not the data's
        (x.new_zeros(0, 2), np.zeros((0, 2))),
    ]
    for got, expected in cases:
        assert got.device == device and not got.requires_grad
        assert_tensor_equal(got, expected)
    e = x.new_empty(3, 1)
    assert e.shape == (3, 1) and e.dtype == minitorch.float64 and e.device == device
    i = x.new_ones(2, dtype=minitorch.int64, device="cpu", requires_grad=False)
    assert_tensor_equal(i, np.ones(2, dtype=np.int64))
    assert i.device == "cpu"
    r = x.new_tensor([[0.5]], requires_grad=True)
    assert r.requires_grad and r.is_leaf and r.dtype == minitorch.float64
    assert minitorch.tensor([1, 2]).new_full((2,), 3).dtype == minitorch.int64
    with pytest.raises(TypeError, match="new_zeros"):
        x.new_zeros(2.5)


# ------------------------------------------------------ type / nbytes / itemsize ----

@pytest.mark.parametrize("device", DEVICES)
def test_type_names_and_sizes(device):
    prefix = "minitorch." if device == "cpu" else "minitorch.cuda."
    names = {minitorch.float32: "FloatTensor", minitorch.float64: "DoubleTensor", minitorch.int64: "LongTensor",
             minitorch.bool: "BoolTensor"}
    for dtype, name in names.items():
        x = minitorch.zeros(3, 2, dtype=dtype, device=device)
        assert x.type() == prefix + name
        assert x.itemsize == x.element_size() == dtype.itemsize
        assert x.nbytes == 6 * dtype.itemsize
        assert x.t().nbytes == x.nbytes and x[:, :1].nbytes == 3 * dtype.itemsize
    x = minitorch.tensor([1.5, -2.5], device=device)
    assert x.type(minitorch.float32) is x  # already that type: no copy
    assert_tensor_equal(x.type(minitorch.int64), np.array([1, -2]))
    d = x.type("minitorch.DoubleTensor")
    assert d.dtype == minitorch.float64 and d.device == "cpu"
    assert x.get_device() == (-1 if device == "cpu" else 0)
    assert x.is_cpu == (device == "cpu")
    with pytest.raises(ValueError, match="type: invalid type 'torch.FloatTensor'"):
        x.type("torch.FloatTensor")
    with pytest.raises(TypeError, match="type: expected a dtype"):
        x.type(3)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_type_moves_to_cuda():
    y = minitorch.zeros(2).type("minitorch.cuda.LongTensor")
    assert y.device == "cuda:0" and y.type() == "minitorch.cuda.LongTensor"


# ------------------------------------------------------- top-level functions ----

@pytest.mark.parametrize("device", DEVICES)
def test_top_level_view_functions(device):
    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = minitorch.tensor(arr, device=device)
    assert_tensor_equal(minitorch.transpose(x, 0, 2), arr.transpose(2, 1, 0))
    assert_tensor_equal(minitorch.permute(x, (1, 2, 0)), arr.transpose(1, 2, 0))
    assert_tensor_equal(minitorch.reshape(x, (4, -1)), arr.reshape(4, -1))
    assert_tensor_equal(minitorch.flatten(x, 1), arr.reshape(2, 12))
    assert_tensor_equal(minitorch.flatten(x), arr.reshape(-1))
    assert_tensor_equal(minitorch.unsqueeze(x, -1), arr[..., None])
    assert_tensor_equal(minitorch.squeeze(minitorch.unsqueeze(x, 1)), arr)
    assert_tensor_equal(minitorch.squeeze(minitorch.unsqueeze(x, 1), 1), arr)
    assert_tensor_equal(minitorch.t(x[0]), arr[0].T)
    c = minitorch.clone(x[:, ::2])
    assert c.is_contiguous() and c._storage_id() != x._storage_id()
    assert_tensor_equal(c, arr[:, ::2])
    assert minitorch.numel(x) == 24 and minitorch.numel(minitorch.zeros(0, 3)) == 0
    assert minitorch.is_floating_point(x) and not minitorch.is_floating_point(x.long())
    assert minitorch.is_tensor(x) and minitorch.is_tensor(minitorch.nn.Parameter(minitorch.zeros(1)))
    assert not minitorch.is_tensor(arr) and not minitorch.is_tensor([1.0])
    assert minitorch.get_default_dtype() == minitorch.float32 == minitorch.tensor([1.0]).dtype


def test_top_level_functions_check_their_input():
    for name in ("transpose", "permute", "reshape", "numel", "clone", "square", "mm", "movedim", "all", "equal"):
        with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input' must be a Tensor, not list"):
            getattr(minitorch, name)([1.0, 2.0], 0)


def test_top_level_gradcheck_through_view_functions():
    a = leaf64(np.random.default_rng(5).normal(size=(2, 3)), "cpu")
    assert gradcheck(lambda t: minitorch.square(minitorch.transpose(t, 0, 1)).reciprocal(), (a,))
    assert gradcheck(lambda t: minitorch.clamp_min(minitorch.reshape(t, (3, 2)), 0.1), (a,))
    assert gradcheck(lambda t: minitorch.clip(t, -0.5, 0.5).clamp_max(0.3), (a,))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed_leaf"])
def test_square_reciprocal_clamp_gradcheck(device, layout):
    rng = np.random.default_rng(6)
    arr = rng.uniform(0.5, 2.0, size=(3, 2)) * rng.choice([-1.0, 1.0], size=(3, 2))
    if layout == "contiguous":
        a = leaf64(arr, device)
    else:
        a = minitorch.tensor(arr.T.copy(), dtype=minitorch.float64, device=device).t().requires_grad_()
        assert not a.is_contiguous()
    bound = leaf64(rng.uniform(-1.0, 1.0, size=(2,)), device)  # a broadcast tensor bound gets its gradient too
    assert gradcheck(lambda t: t.square(), (a,))
    assert gradcheck(lambda t: minitorch.reciprocal(t), (a,))
    assert gradcheck(lambda t, b: t.clamp_min(b), (a, bound))
    assert gradcheck(lambda t, b: minitorch.clamp_max(t, b), (a, bound))


# ------------------------------------------------------ minitorch.utils.data ----

def test_utils_data_is_minitorch_data():
    from minitorch.utils.data import DataLoader, Dataset, TensorDataset

    import minitorch.utils.data as d

    assert DataLoader is minitorch.data.DataLoader
    assert Dataset is minitorch.data.Dataset and TensorDataset is minitorch.data.TensorDataset
    assert d is minitorch.utils.data is importlib.import_module("minitorch.utils.data")
    assert sorted(d.__all__) == sorted(minitorch.data.__all__)
    for name in minitorch.data.__all__:
        assert getattr(d, name) is getattr(minitorch.data, name)
    # The usual loop, written with the PyTorch import path.
    ds = TensorDataset(minitorch.arange(6.0).reshape(3, 2), minitorch.tensor([0, 1, 0]))
    batches = list(DataLoader(ds, batch_size=2))
    assert [tuple(b[0].shape) for b in batches] == [(2, 2), (1, 2)]
    assert_tensor_equal(batches[1][1], np.array([0]))
