"""Reductions (sum, mean, max, min, argmax, argmin) against NumPy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from conftest import DEVICES, LAYOUTS, TOL, assert_tensor_equal, make_tensor, random_array, seeds, shapes

SUM_TOL = {
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-4),
    np.dtype(np.float64): dict(rtol=1e-12, atol=1e-11),
}


@st.composite
def shape_and_dims(draw, allow_tuple=True):
    """A shape and a dim spec for it: an int (maybe negative) or a tuple of distinct dims."""
    shape = draw(shapes())
    n = len(shape)
    if allow_tuple and draw(st.booleans()):
        dims = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        dims = tuple(d - n if draw(st.booleans()) else d for d in dims)
    else:
        dims = draw(st.integers(-n, n - 1))
    return shape, dims


def _axis(dims):
    return dims if isinstance(dims, int) else tuple(dims)


def _form(x, name, form, *args, **kwargs):
    return getattr(x, name)(*args, **kwargs) if form == "method" else getattr(minitorch, name)(x, *args, **kwargs)


# ----------------------------------------------------------------- sum/mean ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_sum_float(device, form, dtype, sd, keepdim, seed, layout):
    shape, dims = sd
    x_np = random_array(seed, shape, dtype)
    x = make_tensor(x_np, layout, device)
    out = _form(x, "sum", form, dims, keepdim)
    expected = x_np.astype(np.float64).sum(axis=_axis(dims), keepdims=keepdim).astype(dtype)
    assert_tensor_equal(out, expected, **SUM_TOL[np.dtype(dtype)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_sum_int_and_bool_give_int64(device, dtype, sd, keepdim, seed, layout):
    shape, dims = sd
    x_np = random_array(seed, shape, dtype)
    x = make_tensor(x_np, layout, device)
    out = x.sum(dims, keepdim=keepdim)
    assert_tensor_equal(out, x_np.sum(axis=_axis(dims), keepdims=keepdim, dtype=np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_mean_float(device, form, dtype, sd, keepdim, seed, layout):
    shape, dims = sd
    x_np = random_array(seed, shape, dtype)
    x = make_tensor(x_np, layout, device)
    out = _form(x, "mean", form, dims, keepdim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on the mean of nothing (nan)
        expected = x_np.astype(np.float64).mean(axis=_axis(dims), keepdims=keepdim).astype(dtype)
    assert_tensor_equal(out, expected, **SUM_TOL[np.dtype(dtype)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
@given(shape=shapes(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_full_sum_is_zero_dim(device, dtype, shape, seed, layout):
    x_np = random_array(seed, shape, dtype)
    x = make_tensor(x_np, layout, device)
    out = x.sum()
    assert out.dim() == 0 and tuple(out.shape) == ()
    want = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.int64)
    expected = np.asarray(x_np.astype(np.float64 if want.kind == "f" else np.int64).sum()).astype(want)
    assert_tensor_equal(out, expected, **SUM_TOL.get(want, {}))
    assert_tensor_equal(minitorch.sum(x), expected, **SUM_TOL.get(want, {}))


@pytest.mark.parametrize("device", DEVICES)
def test_full_mean_is_zero_dim(device):
    x = minitorch.tensor(np.arange(12.0).reshape(3, 4), device=device)
    out = x.mean()
    assert out.dim() == 0 and out.item() == 5.5 and out.dtype == minitorch.float64
    kept = x.mean((0, 1), keepdim=True)
    assert tuple(kept.shape) == (1, 1) and kept.item() == 5.5


@pytest.mark.parametrize("device", DEVICES)
def test_sum_and_mean_of_empty(device):
    e = minitorch.zeros(0, 3, device=device)
    assert_tensor_equal(e.sum(), np.float32(0))
    assert_tensor_equal(e.sum(0), np.zeros(3, np.float32))
    assert_tensor_equal(e.sum(1), np.zeros(0, np.float32))
    assert np.isnan(e.mean().item())
    assert_tensor_equal(e.mean(0), np.full(3, np.nan, np.float32))
    assert_tensor_equal(minitorch.zeros(0, dtype=minitorch.int64, device=device).sum(), np.int64(0))
    with pytest.raises(IndexError, match=r"max: expected the reduced dims to have non-zero size \(input shape \(0, 3\)\)"):
        e.max(0)
    with pytest.raises(IndexError, match=r"argmin: expected the reduced dims to have non-zero size"):
        e.argmin(0)
    v, i = e.max(1)  # reducing a non-empty dim of an empty tensor is fine
    assert_tensor_equal(v, np.zeros(0, np.float32))
    assert_tensor_equal(i, np.zeros(0, np.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_sum_dtype_argument(device):
    x = minitorch.tensor(np.array([1, 2, 3], np.int64), device=device)
    assert_tensor_equal(x.sum(dtype=minitorch.float64), np.float64(6))
    assert_tensor_equal(x.mean(dtype=minitorch.float32), np.float32(2))
    assert_tensor_equal(minitorch.mean(x, dtype=minitorch.float64), np.float64(2))


@pytest.mark.parametrize("device", DEVICES)
def test_float32_sum_is_accurate(device):
    # 10^6 copies of 0.1: naive float32 accumulation drifts by ~1%.
    x = minitorch.full((1000, 1000), 0.1, device=device)
    np.testing.assert_allclose(x.sum().item(), 1e5, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_is_one_node_whose_gradient_is_g_over_the_count(device):
    # mean is its own reduce kernel (the sum divided before the store) and its own graph node,
    # named as PyTorch names it
    x_np = np.random.default_rng(3).standard_normal((3, 4, 5))
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    assert x.mean().grad_fn.name() == "MeanBackward0"
    y = x.mean((0, 2))
    assert y.grad_fn.name() == "MeanBackward1"
    assert_tensor_equal(y, x_np.mean(axis=(0, 2)), rtol=1e-12, atol=1e-12)
    g = np.arange(1.0, 5.0)
    y.backward(minitorch.tensor(g, device=device))
    assert_tensor_equal(x.grad, np.broadcast_to((g / 15).reshape(1, 4, 1), (3, 4, 5)), rtol=1e-15, atol=0)
    # a line long enough to be split across blocks on a GPU (the count applies once, at the end)
    long_np = np.random.default_rng(4).uniform(0, 1, (2, 300001)).astype(np.float32)
    long = minitorch.tensor(long_np, device=device)
    assert_tensor_equal(long.mean(1), long_np.astype(np.float64).mean(1).astype(np.float32), rtol=1e-6, atol=0)
    assert_tensor_equal(long.mean(), np.float32(long_np.astype(np.float64).mean()), rtol=1e-6, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_of_int_raises_type_error(device):
    x = minitorch.tensor([1, 2, 3], device=device)
    with pytest.raises(TypeError, match="mean"):
        x.mean()
    with pytest.raises(TypeError, match="mean"):
        minitorch.mean(minitorch.tensor([True, False], device=device), 0)


@pytest.mark.parametrize("device", DEVICES)
def test_sum_repeated_dim_raises(device):
    x = minitorch.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match=r"sum: dim 1 appears multiple times"):
        x.sum((1, -1))


# --------------------------------------------------------- max / min / arg ----

@st.composite
def shape_and_dim(draw):
    return draw(shape_and_dims(allow_tuple=False))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("which", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=lambda d: np.dtype(d).name)
@given(sd=shape_and_dim(), keepdim=st.booleans(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_max_min_dim(device, form, which, dtype, sd, keepdim, seed, layout):
    shape, dim = sd
    # Few distinct values, so ties are common: the index must be the first one.
    x_np = np.random.default_rng(seed).integers(-3, 4, size=shape).astype(dtype)
    x = make_tensor(x_np, layout, device)
    if shape[dim] == 0:
        with pytest.raises(IndexError, match=which):
            _form(x, which, form, dim, keepdim)
        return
    out = _form(x, which, form, dim, keepdim)
    values, indices = out  # a (values, indices) pair ...
    assert out.values is values and out.indices is indices  # ... with names
    ref_v = (np.max if which == "max" else np.min)(x_np, axis=dim, keepdims=keepdim)
    ref_i = (np.argmax if which == "max" else np.argmin)(x_np, axis=dim, keepdims=keepdim)
    assert_tensor_equal(values, ref_v)
    assert_tensor_equal(indices, ref_i.astype(np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("which", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=lambda d: np.dtype(d).name)
@given(sd=shape_and_dim(), keepdim=st.booleans(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_argmax_argmin_dim(device, form, which, dtype, sd, keepdim, seed, layout):
    shape, dim = sd
    x_np = np.random.default_rng(seed).integers(-3, 4, size=shape).astype(dtype)
    x = make_tensor(x_np, layout, device)
    if shape[dim] == 0:
        with pytest.raises(IndexError, match=which):
            _form(x, which, form, dim, keepdim)
        return
    ref = getattr(np, which)(x_np, axis=dim, keepdims=keepdim)
    assert_tensor_equal(_form(x, which, form, dim, keepdim), ref.astype(np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
@given(shape=shapes(), seed=seeds, layout=st.sampled_from(LAYOUTS))
def test_full_max_min_argmax_argmin(device, dtype, shape, seed, layout):
    x_np = np.random.default_rng(seed).integers(-3, 4, size=shape).astype(dtype)
    x = make_tensor(x_np, layout, device)
    if x_np.size == 0:
        for name in ("max", "min", "argmax", "argmin"):
            with pytest.raises(RuntimeError, match=name):
                getattr(x, name)()
        return
    for name, ref in [("max", np.max), ("min", np.min)]:
        out = getattr(x, name)()
        assert out.dim() == 0
        assert_tensor_equal(out, np.asarray(ref(x_np)))
        assert_tensor_equal(getattr(minitorch, name)(x), np.asarray(ref(x_np)))
    for name in ("argmax", "argmin"):
        ref = np.asarray(getattr(np, name)(x_np), dtype=np.int64)  # flat index, first of ties
        assert_tensor_equal(getattr(x, name)(), ref)
        kept = getattr(x, name)(keepdim=True)
        assert tuple(kept.shape) == (1,) * len(shape)
        assert kept.cpu().numpy().item() == ref.item()


@pytest.mark.parametrize("device", DEVICES)
def test_argmax_ties_return_first_index(device):
    x = minitorch.tensor([[1.0, 5.0, 5.0, 2.0], [7.0, 7.0, 7.0, 7.0]], device=device)
    assert_tensor_equal(x.argmax(1), np.array([1, 0], np.int64))
    assert_tensor_equal(x.argmin(1), np.array([0, 0], np.int64))
    assert x.argmax().item() == 4
    assert_tensor_equal(x.max(1).indices, np.array([1, 0], np.int64))
    assert_tensor_equal(x.T.argmax(0), np.array([1, 0], np.int64))  # through a transpose


@pytest.mark.parametrize("device", DEVICES)
def test_max_min_propagate_nan(device):
    x = minitorch.tensor(np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]]), device=device)
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())
    v, i = x.max(1)
    assert_tensor_equal(v, np.array([np.nan, 6.0]))
    assert_tensor_equal(i, np.array([1, 2], np.int64))
    assert_tensor_equal(x.argmin(1), np.array([1, 0], np.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_size_one_and_negative_dims(device):
    x_np = random_array(3, (2, 1, 3), np.float64)
    x = minitorch.tensor(x_np, device=device)
    assert_tensor_equal(x.sum(1), x_np.sum(1), **TOL[np.dtype(np.float64)])
    assert_tensor_equal(x.sum(-2, keepdim=True), x_np.sum(-2, keepdims=True), **TOL[np.dtype(np.float64)])
    v, i = x.max(-2)
    assert_tensor_equal(v, x_np.max(-2))
    assert_tensor_equal(i, np.zeros((2, 3), np.int64))
    assert_tensor_equal(x.argmax(-1), x_np.argmax(-1))
    assert_tensor_equal(x.mean((-1, 0)), x_np.mean((-1, 0)), **TOL[np.dtype(np.float64)])


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_of_a_zero_dim_tensor(device):
    z = minitorch.full((), 4.0, device=device)
    for out in (z.sum(), z.sum(0), z.mean(-1), z.max(), z.min()):
        assert out.dim() == 0 and out.item() == 4.0
    v, i = z.max(0)
    assert v.item() == 4.0 and i.item() == 0 and i.dim() == 0
    assert z.argmax().item() == 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "argmax", "argmin"])
def test_dim_out_of_range_raises_index_error(device, name):
    x = minitorch.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match=r"\[-2, 1\], but got 2"):
        getattr(x, name)(2)


@pytest.mark.parametrize("device", DEVICES)
def test_int64_reductions_are_exact(device):
    # past 2**53 a trip through double would round
    x_np = np.array([[2**53 + 1, 3], [-5, 2**60]], dtype=np.int64)
    x = minitorch.tensor(x_np, device=device)
    assert x.sum().item() == int(x_np.sum())
    assert_tensor_equal(x.sum(0), x_np.sum(0))
    assert_tensor_equal(x.max(1).values, x_np.max(1))
    assert x.min().item() == -5
