"""flip / roll / tril / triu / repeat (one remap kernel each), var / std / var_mean /
std_mean / logsumexp / norm (one reduce_stats kernel each) and sort / argsort / topk as C++
ops: values against NumPy on every device and dtype they take (non-contiguous inputs,
size-0/1 dims, negative dims), float64 gradcheck of the C++ backward nodes, PyTorch's
errors, and launch counts through the profiler (the Python compositions they replace
launched 2-15 kernels each)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, make_tensor, random_array, to_numpy
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import assert_close, gradcheck

FLOAT = [np.float32, np.float64]
LOW = {"float16": minitorch.float16, "bfloat16": minitorch.bfloat16}
SHAPES = [(3, 4), (2, 3, 5), (1, 4, 1), (0, 3), (4, 0, 2), (5,)]
LAYOUTS = ["contiguous", "step", "transpose"]


def mt(a, device, layout="contiguous", grad=False):
    t = make_tensor(np.asarray(a), layout, device)
    return t.requires_grad_() if grad else t


def dev_arr(seed, shape, dtype=np.float64):
    return random_array(seed, shape, dtype, -3.0, 3.0)


def grad_of(fn, a, device):
    x = mt(a, device, grad=True)
    fn(x).sum().backward()
    return to_numpy(x.grad)


# --------------------------------------------------------------- rearrange ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_flip_roll_tril_triu_repeat_match_numpy(device, shape, layout, dtype):
    a = random_array(len(shape), shape, dtype)
    x = mt(a, device, layout)
    nd = len(shape)
    np.testing.assert_array_equal(to_numpy(x.flip(-1)), np.flip(a, -1))
    np.testing.assert_array_equal(to_numpy(minitorch.flip(x, tuple(range(nd)))), np.flip(a, tuple(range(nd))))
    np.testing.assert_array_equal(to_numpy(x.roll(2, -1)), np.roll(a, 2, -1))
    np.testing.assert_array_equal(to_numpy(x.roll(-7)), np.roll(a, -7))
    np.testing.assert_array_equal(to_numpy(x.roll((1, -2), (0, -1))), np.roll(a, (1, -2), (0, -1)))
    reps = (2,) + (1, 3)[:nd] + (1,) * max(0, nd - 2)
    np.testing.assert_array_equal(to_numpy(x.repeat(*reps)), np.tile(a, reps))
    if nd >= 2:
        for k in (-1, 0, 2):
            np.testing.assert_array_equal(to_numpy(x.tril(k)), np.tril(a, k))
            np.testing.assert_array_equal(to_numpy(minitorch.triu(x, k)), np.triu(a, k))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_rearrange_16bit_is_exact(device, name):
    a = random_array(1, (3, 5), np.float32).round(1)
    x = mt(a, device).to(LOW[name])
    ref = x.float()
    for fn in (lambda t: t.flip(0), lambda t: t.roll(2, 1), lambda t: t.tril(1), lambda t: t.triu(-1),
               lambda t: t.repeat(2, 1)):
        out = fn(x)
        assert out.dtype == LOW[name]
        np.testing.assert_array_equal(to_numpy(out.float()), to_numpy(fn(ref)))


def test_rearrange_gradcheck(device):
    a = dev_arr(0, (3, 4))
    x = mt(a, device, grad=True)
    assert gradcheck(lambda t: t.flip(0, 1), (x,))
    assert gradcheck(lambda t: t.roll((1, 3), (0, 1)), (x,))
    assert gradcheck(lambda t: t.roll(5), (x,))
    assert gradcheck(lambda t: t.tril(1), (x,))
    assert gradcheck(lambda t: t.triu(-1), (x,))
    assert gradcheck(lambda t: t.repeat(2, 1, 3), (x,))
    xt = mt(a.T.copy(), device, "transpose", grad=True)
    assert gradcheck(lambda t: t.repeat(1, 2), (xt,))


def test_rearrange_backward_nodes_are_cpp(device):
    x = mt(dev_arr(0, (3, 4)), device, grad=True)
    assert type(x.flip(0).grad_fn).__name__ != "BackwardCFunction"
    names = {fn(x).grad_fn.name() for fn in (lambda t: t.flip(0), lambda t: t.roll(1, 0), lambda t: t.tril(),
                                            lambda t: t.triu(), lambda t: t.repeat(2, 1))}
    assert names == {"FlipBackward0", "RollBackward0", "TrilBackward0", "TriuBackward0", "RepeatBackward0"}


def test_rearrange_errors(device):
    x = mt(dev_arr(0, (3, 4)), device)
    with pytest.raises(RuntimeError, match="flip: dim 0 appears multiple times"):
        x.flip(0, -2)
    with pytest.raises(IndexError, match="flip"):
        x.flip(2)
    with pytest.raises(RuntimeError, match="roll: shifts and dimensions must align"):
        x.roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="roll"):
        x.roll((1, 2))
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        mt(dev_arr(0, (3,)), device).tril()
    with pytest.raises(RuntimeError, match="repeat: number of dimensions of repeat dims"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match="repeat.*negative"):
        x.repeat(2, -1)
    with pytest.raises(TypeError, match="flip"):
        x.flip(0.5)


# -------------------------------------------------------------- statistics ----

def np_var(a, dims, correction):
    n = np.prod([a.shape[d] for d in dims]) if a.ndim else 1
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ((a - a.mean(dims, keepdims=True)) ** 2).sum(dims) if a.ndim else np.float64(0)
        return s / max(n - correction, 0)


STAT_CASES = [((3, 4), 1), ((3, 4), -1), ((2, 3, 5), (0, 2)), ((2, 3, 5), None), ((1, 6, 1), 1),
              ((4, 0, 2), 2), ((4, 0, 2), 1), ((7,), 0), ((2, 3, 5), (-1, -2))]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, dim", STAT_CASES)
@pytest.mark.parametrize("dtype", FLOAT)
@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_var_std_mean_match_numpy(device, shape, dim, layout, dtype, correction):
    a = dev_arr(3, shape, dtype)
    x = mt(a, device, layout)
    dims = tuple(range(len(shape))) if dim is None else tuple(d % len(shape) for d in np.atleast_1d(dim))
    want = np_var(a.astype(np.float64), dims, correction)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = x.var(dim, correction=correction)
        s = minitorch.std(x, dim, correction=correction, keepdim=True)
        vm = minitorch.var_mean(x, dim, correction=correction)
        sm = minitorch.std_mean(x, dim, correction=correction)
    assert v.dtype == x.dtype and tuple(v.shape) == np.shape(want)
    np.testing.assert_allclose(to_numpy(v), want, equal_nan=True, **tol)
    np.testing.assert_allclose(to_numpy(s), np.sqrt(want).reshape(tuple(s.shape)), equal_nan=True, **tol)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mean = a.astype(np.float64).mean(dims)
    np.testing.assert_allclose(to_numpy(vm[0]), want, equal_nan=True, **tol)
    np.testing.assert_allclose(to_numpy(vm[1]), mean, equal_nan=True, **tol)
    np.testing.assert_allclose(to_numpy(sm[0]), np.sqrt(want), equal_nan=True, **tol)
    np.testing.assert_allclose(to_numpy(sm[1]), mean, equal_nan=True, **tol)


def test_var_argument_forms_and_warnings(device):
    a = dev_arr(0, (4, 5))
    x = mt(a, device)
    assert_close(x.var(), np.var(a, ddof=1))
    assert_close(x.var(unbiased=False), np.var(a))
    assert_close(x.var(False), np.var(a))                      # the old (input, unbiased) form
    assert_close(x.std(1, True, True), np.std(a, 1, ddof=1, keepdims=True))
    assert_close(x.var((0, 1), correction=0), np.var(a))
    assert_close(mt(np.array(2.5), device).var(unbiased=False), 0.0)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = mt(np.array([1.0]), device).var()
    assert math.isnan(out.item())
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert mt(np.array([1.0, 2.0]), device).var(correction=3).item() == math.inf
    with pytest.raises(RuntimeError, match="var: pass either unbiased or correction"):
        x.var(unbiased=True, correction=1)
    with pytest.raises(TypeError, match="var: only supports floating-point"):
        mt(np.arange(4), device).var()
    with pytest.raises(IndexError, match="std"):
        x.std(2)
    with pytest.raises(RuntimeError, match="appears"):
        x.var((1, -1))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_stats_16bit_compute_in_float32(device, name):
    a = dev_arr(1, (6, 40), np.float32)
    x = mt(a, device).to(LOW[name])
    ref = x.float()  # the same (rounded) values
    tol = dict(rtol=1e-2, atol=1e-2)
    for fn in (lambda t: t.var(1), lambda t: t.std(0), lambda t: t.logsumexp(1), lambda t: t.norm(dim=1),
               lambda t: minitorch.var_mean(t, 1)[1]):
        out = fn(x)
        assert out.dtype == LOW[name]
        assert_close(out.float(), fn(ref), **tol)


@pytest.mark.parametrize("shape, dim", [((50000,), 0), ((20000, 3), 0), ((3, 20000), 1)])
def test_stats_of_long_lines(device, shape, dim):
    """Few long lines: on the GPU each line is cut into slices whose partial summaries a
    second launch merges (rows and columns); the result must not depend on the cut."""
    a = dev_arr(9, shape) + 1000.0  # a large mean: a naive sum of squares would lose the variance
    x = mt(a, device)
    assert_close(x.var(dim), np.var(a, dim, ddof=1), rtol=1e-9, atol=1e-9)
    vm = minitorch.std_mean(x, dim)
    assert_close(vm[0], np.std(a, dim, ddof=1), rtol=1e-9, atol=1e-9)
    assert_close(vm[1], a.mean(dim), rtol=1e-12, atol=1e-9)
    assert_close(x.logsumexp(dim), np_logsumexp(a, (dim,)), rtol=1e-12, atol=1e-9)
    for p in (2, 1, math.inf, 3):
        assert_close(x.norm(p, dim), np_norm(a, p, (dim,)), rtol=1e-10, atol=1e-9)
    f = mt(a.astype(np.float32), device)
    assert_close(f.var(dim), np.var(a.astype(np.float32).astype(np.float64), dim, ddof=1).astype(np.float32),
                 rtol=1e-5, atol=1e-5)


def test_moments_gradcheck(device):
    a = dev_arr(0, (3, 4))
    x = mt(a, device, grad=True)
    assert gradcheck(lambda t: t.var(1), (x,))
    assert gradcheck(lambda t: t.var((0, 1), correction=0, keepdim=True), (x,))
    assert gradcheck(lambda t: t.std(0, correction=2), (x,))
    assert gradcheck(lambda t: minitorch.var_mean(t, -1), (x,))
    assert gradcheck(lambda t: minitorch.std_mean(t, 0, keepdim=True), (x,))
    assert gradcheck(lambda t: minitorch.var_mean(t, 1)[1], (x,))   # only the mean used
    xt = mt(a.T.copy(), device, "transpose", grad=True)
    assert gradcheck(lambda t: t.std(), (xt,))


def test_std_gradient_is_zero_where_std_is_zero(device):
    g = grad_of(lambda t: t.std(1), np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]), device)
    np.testing.assert_array_equal(g[0], 0.0)
    np.testing.assert_allclose(g[1], [-0.5, 0.0, 0.5])


def np_logsumexp(a, dims, keepdims=False):
    m = np.max(a, axis=dims, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m
    return out if keepdims else out.squeeze(dims)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((2, 3, 5), (0, 2)), ((2, 3, 5), -2), ((1, 6, 1), 1),
                                        ((4, 0, 2), 1), ((7,), 0)])
@pytest.mark.parametrize("dtype", FLOAT)
def test_logsumexp_matches_numpy(device, shape, dim, layout, dtype):
    a = dev_arr(2, shape, dtype) * 100  # exp(300) overflows a naive float64 sum
    x = mt(a, device, layout)
    dims = tuple(d % len(shape) for d in np.atleast_1d(dim))
    out = x.logsumexp(dim, keepdim=True)
    assert out.dtype == x.dtype
    assert_close(out, np_logsumexp(a.astype(np.float64), dims, True).astype(dtype),
                 rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5 if dtype == np.float32 else 1e-12)


def test_logsumexp_infinities_ints_and_errors(device):
    inf = math.inf
    x = mt(np.array([[inf, inf], [-inf, -inf], [1.0, inf], [math.nan, 1.0], [-inf, 0.0]]), device)
    np.testing.assert_array_equal(to_numpy(x.logsumexp(1)), [inf, -inf, inf, math.nan, 0.0])
    i = mt(np.array([[1, 2], [3, 4]]), device)
    out = minitorch.logsumexp(i, 1)
    assert out.dtype == minitorch.get_default_dtype()
    assert_close(out, np_logsumexp(np.array([[1.0, 2.0], [3.0, 4.0]]), (1,)), rtol=1e-6, atol=1e-6)
    assert mt(np.zeros((2, 0)), device).logsumexp(1).tolist() == [-inf, -inf]
    with pytest.raises(TypeError):
        x.logsumexp(None)
    with pytest.raises(IndexError, match="logsumexp"):
        x.logsumexp(2)


def test_logsumexp_gradcheck(device):
    x = mt(dev_arr(0, (3, 4)), device, grad=True)
    assert gradcheck(lambda t: t.logsumexp(1), (x,))
    assert gradcheck(lambda t: t.logsumexp((0, 1), keepdim=True), (x,))
    assert x.logsumexp(1).grad_fn.name() == "LogsumexpBackward0"


NORM_PS = [2, "fro", 1, math.inf, -math.inf, 0, 3, 0.5, -1.5]


def np_norm(a, p, dims, keepdims=False):
    ax = np.abs(a)
    if p in ("fro", 2):
        return np.sqrt((ax ** 2).sum(dims, keepdims=keepdims))
    if p == math.inf:
        return ax.max(dims, keepdims=keepdims)
    if p == -math.inf:
        return ax.min(dims, keepdims=keepdims)
    if p == 0:
        return (a != 0).sum(dims, keepdims=keepdims).astype(a.dtype)
    with np.errstate(divide="ignore"):
        return (ax ** p).sum(dims, keepdims=keepdims) ** (1 / p)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("p", NORM_PS)
@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((2, 3, 5), (0, 2)), ((2, 3, 5), None), ((1, 6, 1), -2),
                                        ((7,), 0)])
@pytest.mark.parametrize("dtype", FLOAT)
def test_norm_matches_numpy(device, p, shape, dim, layout, dtype):
    a = dev_arr(4, shape, dtype)
    a.flat[::3] = 0  # p = 0 counts non-zeros
    x = mt(a, device, layout)
    dims = tuple(range(len(shape))) if dim is None else tuple(d % len(shape) for d in np.atleast_1d(dim))
    out = x.norm(p, dim, keepdim=True)
    assert out.dtype == x.dtype
    assert_close(out, np_norm(a.astype(np.float64), p, dims, True).astype(dtype),
                 rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6 if dtype == np.float32 else 1e-12)


def test_norm_dtype_empty_and_errors(device):
    x = mt(dev_arr(0, (3, 4), np.float32), device)
    out = x.norm(dtype=minitorch.float64)
    assert out.dtype == minitorch.float64
    assert_close(out, np.linalg.norm(to_numpy(x).astype(np.float64)), rtol=1e-12, atol=1e-12)
    assert minitorch.norm(mt(np.zeros((0, 3)), device), 1, dim=0).tolist() == [0.0, 0.0, 0.0]
    assert mt(np.zeros((0, 3)), device).norm(math.inf, dim=1).shape == (0,)
    with pytest.raises(IndexError, match="norm"):
        mt(np.zeros((0, 3)), device).norm(math.inf, dim=0)
    with pytest.raises(TypeError, match="norm"):
        mt(np.arange(3), device).norm()
    with pytest.raises(RuntimeError, match="nuc"):
        x.norm("nuc")


@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, 3, 0.5, 0])
def test_norm_gradcheck(device, p):
    a = dev_arr(5, (3, 4))
    x = mt(a, device, grad=True)
    assert gradcheck(lambda t: t.norm(p, dim=1), (x,))
    assert gradcheck(lambda t: t.norm(p), (x,))
    assert x.norm(p).grad_fn.name() == "LinalgVectorNormBackward0"


def test_norm_gradient_at_zero_and_ties(device):
    np.testing.assert_array_equal(grad_of(lambda t: t.norm(), np.zeros(3), device), 0.0)
    np.testing.assert_array_equal(grad_of(lambda t: t.norm(3), np.zeros(3), device), 0.0)
    np.testing.assert_allclose(grad_of(lambda t: t.norm(math.inf), np.array([-2.0, 1.0, 2.0]), device),
                               [-0.5, 0.0, 0.5])


# -------------------------------------------------------------------- sort ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, dim", [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -2), ((1, 4, 1), 1), ((4, 0), 1),
                                        ((6,), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_sort_argsort_topk_match_numpy(device, shape, dim, layout, dtype):
    a = random_array(7, shape, dtype, -4, 4)  # ints with ties: the sort is stable
    x = mt(a, device, layout)
    for desc in (False, True):
        order = np.argsort(-a if dtype != np.bool_ and desc else (~a if desc else a), axis=dim, kind="stable")
        v, i = x.sort(dim, descending=desc)
        np.testing.assert_array_equal(to_numpy(i), order)
        np.testing.assert_array_equal(to_numpy(v), np.take_along_axis(a, order, dim))
        np.testing.assert_array_equal(to_numpy(x.argsort(dim, descending=desc, stable=True)), order)
    n = shape[dim]
    for k in {0, min(1, n), n // 2, n}:
        for largest in (True, False):
            v, i = x.topk(k, dim, largest=largest)
            ref = np.take(np.sort(a, axis=dim, kind="stable"), range(n - 1, n - k - 1, -1) if largest else range(k),
                          axis=dim)
            np.testing.assert_array_equal(to_numpy(v), ref)
            np.testing.assert_array_equal(np.take_along_axis(a, to_numpy(i), dim), ref)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_sort_topk_16bit(device, name):
    a = np.random.default_rng(0).permutation(12).astype(np.float32).reshape(3, 4)
    x = mt(a, device).to(LOW[name])
    v, i = x.topk(2, 1)
    assert v.dtype == LOW[name]
    np.testing.assert_array_equal(to_numpy(v.float()), -np.sort(-a, 1)[:, :2])
    np.testing.assert_array_equal(to_numpy(x.sort(0)[0].float()), np.sort(a, 0))


def test_sort_topk_gradcheck(device):
    a = np.random.default_rng(0).permutation(24).astype(np.float64).reshape(2, 3, 4) / 7  # distinct values
    x = mt(a, device, grad=True)
    assert gradcheck(lambda t: t.sort(1)[0], (x,))
    assert gradcheck(lambda t: t.sort(-1, descending=True)[0], (x,))
    assert gradcheck(lambda t: t.topk(2, 2)[0], (x,))
    assert gradcheck(lambda t: t.topk(1, 0, largest=False)[0], (x,))
    xt = mt(a.transpose(2, 1, 0).copy(), device, "transpose", grad=True)
    assert gradcheck(lambda t: t.topk(3, 0)[0], (xt,))
    assert x.sort(1)[0].grad_fn.name() == "SortBackward0"
    assert x.topk(1)[0].grad_fn.name() == "TopkBackward0"
    s = mt(np.array(2.0), device, grad=True)
    v, i = s.sort()
    v.backward()
    assert s.grad.item() == 1.0 and i.item() == 0


def test_topk_errors(device):
    x = mt(dev_arr(0, (3, 4)), device)
    with pytest.raises(RuntimeError, match="topk: selected index k"):
        x.topk(5)
    with pytest.raises(IndexError, match="topk"):
        x.topk(1, 2)
    with pytest.raises(TypeError, match="topk"):
        x.topk(1.5)


# ------------------------------------------------------------------ launches ----

cuda_only = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def launches(fn) -> list:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


REARRANGE = {
    "flip": lambda x: x.flip(0, 1), "roll": lambda x: x.roll((1, 2), (0, 1)), "tril": lambda x: x.tril(),
    "triu": lambda x: x.triu(1), "repeat": lambda x: x.repeat(2, 1, 3), "roll-flat": lambda x: x.roll(7),
}


@cuda_only
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "float16"])
@pytest.mark.parametrize("name", list(REARRANGE))
def test_rearrange_is_one_launch(name, layout):
    x = minitorch.randn(64, 300, device="cuda")
    x = x.T if layout == "transposed" else x.to(minitorch.float16) if layout == "float16" else x
    ks = launches(lambda: REARRANGE[name](x))
    # roll of the flattened tensor: a transposed input is first made contiguous (reshape)
    assert len(ks) == (2 if name == "roll-flat" and layout == "transposed" else 1), ks


@cuda_only
@pytest.mark.parametrize("op", [lambda x: x.var(1), lambda x: x.std(0), lambda x: minitorch.var_mean(x, 1),
                                lambda x: minitorch.std_mean(x, -1, keepdim=True), lambda x: x.var(),
                                lambda x: x.logsumexp(1), lambda x: x.logsumexp((0, 1)), lambda x: x.norm(),
                                lambda x: x.norm(1, dim=1), lambda x: x.norm(math.inf, dim=0),
                                lambda x: x.norm(3, dim=1)],
                         ids=["var", "std0", "var_mean", "std_mean", "var-all", "lse", "lse-all", "norm", "norm1",
                              "norm-inf", "norm3"])
@pytest.mark.parametrize("shape", [(64, 300), (8, 5000), (4096, 3)])
def test_stats_are_at_most_two_launches(op, shape):
    x = minitorch.randn(*shape, device="cuda")
    ks = launches(lambda: op(x))
    assert 1 <= len(ks) <= 2, ks
    assert not any("copy" in k or "zip" in k or "map" in k for k in ks), ks


@cuda_only
def test_sort_topk_forward_is_one_sort_launch_with_grad():
    x = minitorch.randn(64, 300, device="cuda", requires_grad=True)
    ks = launches(lambda: x.sort(1))
    assert len(ks) == 1, ks   # the values' gradient no longer comes from a gather in Python
    ks = launches(lambda: x.topk(5, 1))
    assert len(ks) == 1, ks   # the sort writes the first k values and indices itself: no copies of a slice
