"""The everyday math and linear-algebra composites (ops/pointwise_math.py; count_nonzero,
nansum, nanmean, trace in ops/reduction.py; diff in ops/join.py; addmv, addr, addbmm, kron,
tensordot, cdist, cross in ops/linalg.py).

Their values on every dtype, layout and device, their forms and float64 gradients are the
OpInfo battery's (tests/opinfo). Here: the special values the battery's gradcheck cannot
take (NaN, inf, huge and tiny magnitudes, zero distances), the defaults that depend on the
dtype (nan_to_num), cross's default dim, and the errors.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minitorch

NAN, INF = math.nan, math.inf


def t(values, device, dtype=minitorch.float32, requires_grad=False):
    return minitorch.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def vals(x):
    x = x.detach().cpu()
    return (x.double() if x.dtype.is_floating_point else x).numpy()


# ---------------------------------------------------------------- NaN and inf ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nan_to_num_defaults_are_the_dtypes_finite_extremes(dtype, device):
    dt = getattr(minitorch, dtype)
    out = minitorch.nan_to_num(t([NAN, INF, -INF, 1.5], device, dt))
    info = minitorch.finfo(dt)
    assert out.dtype == dt
    np.testing.assert_array_equal(vals(out), [0.0, info.max, info.min, 1.5])
    got = t([NAN, INF, -INF], device, dt).nan_to_num(nan=1.0, posinf=2.0, neginf=-2.0)
    np.testing.assert_array_equal(vals(got), [1.0, 2.0, -2.0])


def test_nan_to_num_on_integers_copies_and_in_place_writes(device):
    i = minitorch.tensor([1, -2, 3], device=device)
    assert minitorch.equal(minitorch.nan_to_num(i), i)
    x = t([NAN, 2.0, -INF], device)
    assert x.nan_to_num_() is x
    np.testing.assert_array_equal(vals(x), [0.0, 2.0, minitorch.finfo(minitorch.float32).min])


def test_nan_to_num_gradient_is_one_only_where_kept(device):
    x = t([NAN, INF, -INF, 2.0], device, minitorch.float64, requires_grad=True)
    minitorch.nan_to_num(x).sum().backward()
    np.testing.assert_array_equal(vals(x.grad), [0.0, 0.0, 0.0, 1.0])


def test_fmax_fmin_ignore_nan(device):
    a = t([NAN, 1.0, NAN, 3.0, -INF], device)
    b = t([2.0, NAN, NAN, 1.0, 5.0], device)
    np.testing.assert_array_equal(vals(minitorch.fmax(a, b)), [2.0, 1.0, NAN, 3.0, 5.0])
    np.testing.assert_array_equal(vals(minitorch.fmin(a, b)), [2.0, 1.0, NAN, 1.0, -INF])
    # maximum, unlike fmax, propagates NaN
    assert math.isnan(vals(minitorch.maximum(a, b))[0])


def test_fmax_gradient_goes_to_the_value_taken(device):
    a = t([NAN, 4.0], device, minitorch.float64, requires_grad=True)
    b = t([2.0, 1.0], device, minitorch.float64, requires_grad=True)
    minitorch.fmax(a, b).sum().backward()
    np.testing.assert_array_equal(vals(a.grad), [0.0, 1.0])
    np.testing.assert_array_equal(vals(b.grad), [1.0, 0.0])


def test_nansum_and_nanmean(device):
    x = t([[NAN, 1.0, 2.0], [NAN, NAN, NAN]], device)
    np.testing.assert_array_equal(vals(minitorch.nansum(x, 1)), [3.0, 0.0])
    got = vals(minitorch.nanmean(x, dim=1))
    assert got[0] == 1.5 and math.isnan(got[1])
    assert minitorch.nansum(x).item() == 3.0
    assert minitorch.nanmean(x, 1, keepdim=True).shape == (2, 1)
    i = minitorch.tensor([[1, 2], [3, 4]], device=device)
    assert minitorch.nansum(i).dtype == minitorch.int64 and minitorch.nansum(i).item() == 10
    assert minitorch.nanmean(i, dtype=minitorch.float64).item() == 2.5
    with pytest.raises(TypeError):
        minitorch.nanmean(i)


def test_nansum_gradient_is_zero_at_nan(device):
    x = t([NAN, 1.0, 2.0], device, minitorch.float64, requires_grad=True)
    minitorch.nanmean(x).backward()
    np.testing.assert_array_equal(vals(x.grad), [0.0, 0.5, 0.5])


def test_xlogy_at_zero(device):
    x = t([0.0, 0.0, 0.0, 2.0, NAN], device)
    y = t([0.0, NAN, INF, 0.0, 1.0], device)
    np.testing.assert_array_equal(vals(minitorch.xlogy(x, y)), [0.0, NAN, 0.0, -INF, NAN])
    i = minitorch.tensor([0, 1, 2], device=device)
    out = minitorch.xlogy(i, 3)
    assert out.dtype == minitorch.float32
    np.testing.assert_allclose(vals(out), [0.0, math.log(3), 2 * math.log(3)], rtol=1e-6)


def test_xlogy_gradient_is_finite_where_x_is_zero(device):
    x = t([0.0, 2.0], device, minitorch.float64, requires_grad=True)
    y = t([0.0, 3.0], device, minitorch.float64, requires_grad=True)
    minitorch.xlogy(x, y).sum().backward()
    np.testing.assert_allclose(vals(x.grad), [0.0, math.log(3.0)])
    np.testing.assert_allclose(vals(y.grad), [0.0, 2.0 / 3.0])


# ------------------------------------------------------- range: no overflow ----

def test_hypot_does_not_overflow_or_underflow(device):
    big = t([1e30, 2e38, 1e-30], device)
    other = t([1e30, 2e38, 1e-30], device)
    np.testing.assert_allclose(vals(minitorch.hypot(big, other)), [math.sqrt(2) * 1e30, math.sqrt(2) * 2e38,
                                                                   math.sqrt(2) * 1e-30], rtol=1e-6)
    np.testing.assert_array_equal(vals(minitorch.hypot(t([INF, NAN, 3.0, 0.0], device),
                                                       t([NAN, -INF, 4.0, 0.0], device))), [INF, INF, 5.0, 0.0])


def test_hypot_gradient_at_zero_is_finite(device):
    a = t([0.0, 3.0], device, minitorch.float64, requires_grad=True)
    b = t([0.0, -4.0], device, minitorch.float64, requires_grad=True)
    minitorch.hypot(a, b).sum().backward()
    np.testing.assert_allclose(vals(a.grad), [0.0, 0.6])
    np.testing.assert_allclose(vals(b.grad), [0.0, -0.8])


def test_logaddexp_at_large_magnitudes(device):
    a = t([1000.0, -1000.0, 1000.0, INF, -INF, INF], device, minitorch.float64)
    b = t([1000.0, -1000.0, -1000.0, INF, -INF, -INF], device, minitorch.float64)
    ln2 = math.log(2)
    np.testing.assert_allclose(vals(minitorch.logaddexp(a, b)), [1000 + ln2, -1000 + ln2, 1000.0, INF, -INF, INF])
    np.testing.assert_allclose(vals(minitorch.logaddexp2(a, b)), [1001.0, -999.0, 1000.0, INF, -INF, INF])
    f32 = minitorch.logaddexp(t([1000.0, -1000.0], device), t([1000.0, -1000.0], device))
    np.testing.assert_allclose(vals(f32), [1000 + ln2, -1000 + ln2], rtol=1e-6)


def test_logaddexp_gradient_is_the_softmax_of_the_pair(device):
    a = t([1000.0, 0.0], device, minitorch.float64, requires_grad=True)
    b = t([1000.0, math.log(3.0)], device, minitorch.float64, requires_grad=True)
    minitorch.logaddexp(a, b).sum().backward()
    np.testing.assert_allclose(vals(a.grad), [0.5, 0.25])
    np.testing.assert_allclose(vals(b.grad), [0.5, 0.75])


def test_logit_ends(device):
    np.testing.assert_array_equal(vals(minitorch.logit(t([0.0, 1.0, 0.5], device))), [-INF, INF, 0.0])
    got = vals(minitorch.logit(t([0.0, 1.0], device), eps=0.25))
    np.testing.assert_allclose(got, [math.log(1 / 3), math.log(3)], rtol=1e-6)


def test_lerp_weight_one_gives_end_exactly(device):
    a, b = t([1e8, -3.0], device), t([1.0, 7.0], device)
    np.testing.assert_array_equal(vals(minitorch.lerp(a, b, 1.0)), vals(b))
    np.testing.assert_array_equal(vals(minitorch.lerp(a, b, t([1.0, 0.0], device))), [1.0, -3.0])


# ------------------------------------------------------------- linear algebra ----

@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, INF])
def test_cdist_gradient_at_zero_distance_is_zero_not_nan(p, device):
    x1 = t([[1.0, 2.0], [3.0, 4.0]], device, minitorch.float64, requires_grad=True)
    x2 = t([[1.0, 2.0]], device, minitorch.float64, requires_grad=True)
    d = minitorch.cdist(x1, x2, p=p)
    assert vals(d)[0, 0] == 0.0
    d.sum().backward()
    assert np.all(np.isfinite(vals(x1.grad))) and np.all(np.isfinite(vals(x2.grad)))
    assert np.all(vals(x1.grad)[0] == 0.0)


def test_cdist_shapes_and_p0(device):
    a, b = minitorch.ones(2, 3, 4, device=device), minitorch.zeros(1, 5, 4, device=device)
    assert minitorch.cdist(a, b).shape == (2, 3, 5)
    x = t([[0.0, 1.0, 2.0]], device)
    y = t([[0.0, 0.0, 2.0], [1.0, 1.0, 1.0]], device)
    np.testing.assert_array_equal(vals(minitorch.cdist(x, y, p=0)), [[1.0, 2.0]])
    with pytest.raises(ValueError, match="non-negative"):
        minitorch.cdist(x, y, p=-1)
    with pytest.raises(ValueError, match="columns"):
        minitorch.cdist(x, minitorch.zeros(2, 4, device=device))
    with pytest.raises(ValueError, match="2-D"):
        minitorch.cdist(minitorch.zeros(3, device=device), y)
    with pytest.raises(TypeError):
        minitorch.cdist(x.double(), y)


def test_cross_default_dim_is_the_first_of_size_3_with_a_warning(device):
    a = minitorch.tensor(np.arange(9.0).reshape(3, 3), device=device)
    b = minitorch.tensor(np.ones((3, 3)), device=device)
    with pytest.warns(UserWarning, match="deprecated"):
        got = minitorch.cross(a, b)
    np.testing.assert_allclose(vals(got), np.cross(vals(a), vals(b), axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(vals(a.cross(b, dim=-1)), np.cross(vals(a), vals(b), axis=-1))
    with pytest.raises(ValueError, match="same number of dimensions"):
        minitorch.cross(a, minitorch.ones(3, device=device), dim=-1)
    with pytest.raises(ValueError, match="length 3"):
        minitorch.cross(minitorch.ones(2, 4, device=device), minitorch.ones(2, 4, device=device), dim=1)


def test_linear_algebra_errors(device):
    m = minitorch.ones(2, 3, device=device)
    with pytest.raises(ValueError, match="trace"):
        minitorch.trace(minitorch.ones(2, 2, 2, device=device))
    with pytest.raises(ValueError, match="contracted dimensions"):
        minitorch.tensordot(m, m, dims=1)
    with pytest.raises(ValueError, match="same length"):
        minitorch.tensordot(m, m, dims=([0, 1], [0]))
    with pytest.raises(ValueError, match="addmv"):
        minitorch.addmv(minitorch.ones(3, device=device), m, minitorch.ones(3, device=device))
    with pytest.raises(ValueError, match="addr"):
        minitorch.addr(minitorch.ones(3, 2, device=device), minitorch.ones(2, device=device),
                       minitorch.ones(3, device=device))
    with pytest.raises(ValueError, match="bmm"):
        minitorch.addbmm(minitorch.ones(2, 2, device=device), minitorch.ones(2, 2, 3, device=device),
                         minitorch.ones(3, 3, 2, device=device))


def test_trace_of_rectangular_and_integer_matrices(device):
    x = minitorch.tensor(np.arange(12).reshape(3, 4), device=device)
    assert minitorch.trace(x).dtype == minitorch.int64 and minitorch.trace(x).item() == 0 + 5 + 10
    assert minitorch.trace(x.T).item() == 15


# ----------------------------------------------------------------- the others ----

def test_count_nonzero_counts_nan_and_returns_int64(device):
    x = t([[0.0, NAN, 1.0], [0.0, 0.0, -2.0]], device)
    got = minitorch.count_nonzero(x, dim=1)
    assert got.dtype == minitorch.int64 and got.tolist() == [2, 1]
    assert x.count_nonzero().item() == 3
    assert minitorch.count_nonzero(x, (0, 1)).item() == 3


def test_diff_with_prepend_append_and_bool(device):
    x = minitorch.tensor([1, 4, 9], device=device)
    got = minitorch.diff(x, prepend=minitorch.tensor([0], device=device), append=minitorch.tensor([16], device=device))
    assert got.tolist() == [1, 3, 5, 7]
    assert minitorch.diff(x, n=5).tolist() == []
    b = minitorch.tensor([True, True, False], device=device)
    assert minitorch.diff(b).tolist() == [False, True]
    with pytest.raises(ValueError, match="one-dimensional"):
        minitorch.diff(minitorch.tensor(1.0, device=device))
    with pytest.raises(ValueError, match="non-negative"):
        minitorch.diff(x, n=-1)


def test_dtype_errors(device):
    i = minitorch.tensor([1, 2], device=device)
    f = minitorch.tensor([1.0, 2.0], device=device)
    with pytest.raises(TypeError, match="addcdiv"):
        minitorch.addcdiv(i, i, i)
    with pytest.raises(TypeError, match="heaviside"):
        minitorch.heaviside(f, i)
    with pytest.raises(TypeError, match="lerp"):
        minitorch.lerp(i, i, 0.5)
    with pytest.raises(TypeError, match="weight"):
        minitorch.lerp(f, f, "half")
    assert minitorch.deg2rad(i).dtype == minitorch.float32


def test_heaviside_is_not_differentiable(device):
    x = t([-1.0, 0.0, 2.0], device, requires_grad=True)
    out = minitorch.heaviside(x, t([0.5], device, requires_grad=True))
    assert out.grad_fn is None and out.tolist() == [0.0, 0.5, 1.0]
