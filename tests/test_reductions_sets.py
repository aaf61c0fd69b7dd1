"""prod, cummax / cummin, the order statistics (median, nanmedian, kthvalue, mode, quantile,
nanquantile), unique, bincount, histc, searchsorted and bucketize.

Their values on every dtype, layout and device, their forms and float64 gradients are the
OpInfo battery's (tests/opinfo). Here: what the battery cannot say -- prod's exact gradient
at zeros and its integer wraparound, the long lines that split a GPU reduction, the tie and
NaN rules of cummax and the medians, the named results, and the errors.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch

NAN = math.nan


def t(values, device, dtype=minitorch.float64, requires_grad=False):
    return minitorch.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def vals(x):
    x = x.detach().cpu()
    return (x.double() if x.dtype.is_floating_point else x).numpy()


# ---------------------------------------------------------------- prod ----

def test_prod_gradient_with_one_and_with_two_zeros(device):
    x = t([[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 2.0], [1.0, 2.0, 3.0, 4.0]], device, requires_grad=True)
    x.prod(1).sum().backward()
    # one zero: it gets the product of the others, the rest 0; two zeros: all 0; none: out / x
    np.testing.assert_allclose(vals(x.grad), [[0, 24, 0, 0], [0, 0, 0, 0], [24, 12, 8, 6]])
    x.grad = None
    x.prod().backward()  # the whole tensor holds three zeros
    np.testing.assert_array_equal(vals(x.grad), np.zeros((3, 4)))
    y = t([3.0, 0.0, 2.0], device, requires_grad=True)
    y.prod().backward()
    np.testing.assert_array_equal(vals(y.grad), [0.0, 6.0, 0.0])
    assert x.prod(1).grad_fn.name() == "ProdBackward1" and y.prod().grad_fn.name() == "ProdBackward0"


def test_prod_dtypes(device):
    assert t([1, 2, 3], device, minitorch.int64).prod().dtype == minitorch.int64
    assert t([True, True], device, minitorch.bool).prod().item() == 1
    assert t([True, False], device, minitorch.bool).prod().dtype == minitorch.int64
    assert t([2, 3], device, minitorch.int64).prod(dtype=minitorch.float32).dtype == minitorch.float32
    assert t([[2, 3]], device, minitorch.int64).prod(1, keepdim=True).shape == (1, 1)
    assert minitorch.prod(t([], device)).item() == 1.0
    # int64 wraps around as PyTorch's (2^62 * 4 = 2^64 = 0 mod 2^64)
    assert t([2**62, 4], device, minitorch.int64).prod().item() == 0
    assert t([2**40, 2**30], device, minitorch.int64).prod().item() == ((2**70 + 2**63) % 2**64) - 2**63


@pytest.mark.parametrize("shape,dim", [((300_000,), None), ((3, 70_000), 1), ((70_000, 3), 0)])
def test_prod_of_long_lines(shape, dim, device):
    """Long lines, so a GPU splits them into slices whose partial products a second launch
    multiplies; floats multiply in double."""
    rng = np.random.default_rng(0)
    x = np.exp(rng.uniform(-1e-3, 1e-3, size=shape))
    got = t(x, device).prod() if dim is None else t(x, device).prod(dim)
    np.testing.assert_allclose(vals(got), np.prod(x, axis=dim), rtol=1e-10)
    got32 = t(x, device, minitorch.float32).prod() if dim is None else t(x, device, minitorch.float32).prod(dim)
    np.testing.assert_allclose(vals(got32), np.prod(x.astype(np.float32).astype(np.float64), axis=dim), rtol=1e-6)


def test_prod_errors(device):
    x = t([[1.0, 2.0]], device)
    with pytest.raises(IndexError):
        x.prod(2)
    with pytest.raises(TypeError):
        x.prod(1.5)


# ---------------------------------------------------------------- cummax / cummin ----

def test_cummax_ties_take_the_later_index_and_nan_wins(device):
    r = t([1.0, 3.0, 2.0, 3.0, NAN, 5.0, NAN], device).cummax(0)
    assert type(r).__name__ == "cummax" and r._fields == ("values", "indices")
    np.testing.assert_array_equal(vals(r.values), [1, 3, 3, 3, NAN, NAN, NAN])
    np.testing.assert_array_equal(vals(r.indices), [0, 1, 1, 3, 4, 4, 6])
    r = minitorch.cummin(t([2, 1, 1, 3], device, minitorch.int64), 0)
    np.testing.assert_array_equal(vals(r.values), [2, 1, 1, 1])
    np.testing.assert_array_equal(vals(r.indices), [0, 1, 2, 2])


def test_cummax_gradient_goes_to_the_indices(device):
    x = t([[1.0, 3.0, 2.0], [4.0, 1.0, 5.0]], device, requires_grad=True)
    v, _ = x.cummax(1)
    v.backward(t([[1.0, 10.0, 100.0], [1.0, 10.0, 100.0]], device))
    np.testing.assert_array_equal(vals(x.grad), [[1, 110, 0], [11, 0, 100]])
    assert v.grad_fn.name() == "CummaxBackward0"


# ---------------------------------------------------------------- order statistics ----

def test_median_named_results_and_nan(device):
    x = t([[3.0, 1.0, 4.0, 2.0], [1.0, NAN, 2.0, NAN]], device)
    assert minitorch.median(t([3.0, 1.0, 4.0, 2.0], device)).item() == 2.0  # the lower median
    assert math.isnan(x.median().item())
    assert x.nanmedian().item() == 2.0
    r = x.median(1)
    assert type(r).__name__ == "median"
    np.testing.assert_array_equal(vals(r.values), [2.0, NAN])
    np.testing.assert_array_equal(vals(r.indices), [3, 1])  # the first NaN
    r = x.nanmedian(1, keepdim=True)
    assert type(r).__name__ == "nanmedian" and r.values.shape == (2, 1)
    np.testing.assert_array_equal(vals(r.values), [[2.0], [1.0]])
    assert math.isnan(t([NAN, NAN], device).nanmedian().item())


def test_median_of_all_shares_the_gradient_among_ties(device):
    x = t([1.0, 2.0, 2.0, 5.0], device, requires_grad=True)
    x.median().backward()
    np.testing.assert_array_equal(vals(x.grad), [0.0, 0.5, 0.5, 0.0])


def test_kthvalue_and_mode(device):
    x = t([[5.0, 1.0, 4.0], [2.0, 2.0, 9.0]], device)
    r = x.kthvalue(2, 1)
    assert type(r).__name__ == "kthvalue"
    np.testing.assert_array_equal(vals(r.values), [4.0, 2.0])
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 1 \(k = 4"):
        x.kthvalue(4, 1)
    with pytest.raises(RuntimeError):
        x.kthvalue(0)
    with pytest.raises(IndexError):
        x.kthvalue(1, 2)
    m = t([[1, 2, 2, 3, 3], [7, 7, 7, 0, 0]], device, minitorch.int64).mode(1)
    assert type(m).__name__ == "mode"
    np.testing.assert_array_equal(vals(m.values), [2, 7])  # the smallest of the most frequent
    np.testing.assert_array_equal(vals(m.indices), [2, 2])  # the last place it is found


def test_quantile_forms_and_errors(device):
    x = t([[1.0, 2.0, 3.0, 4.0], [NAN, 1.0, 2.0, 3.0]], device)
    np.testing.assert_allclose(vals(x.quantile(0.5, dim=1)), [2.5, NAN])
    np.testing.assert_allclose(vals(x.nanquantile(0.5, dim=1)), [2.5, 2.0])
    q = t([0.0, 1.0], device)
    assert x.quantile(q, dim=1, keepdim=True).shape == (2, 2, 1)
    assert x.quantile(q).shape == (2,)
    np.testing.assert_allclose(vals(t([1.0, 2.0, 3.0, 4.0], device).quantile(0.5, interpolation="nearest")), 3.0)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        x.quantile(1.5)
    with pytest.raises(RuntimeError, match="interpolation"):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(TypeError):
        t([1, 2], device, minitorch.int64).quantile(0.5)
    with pytest.raises(TypeError, match="same dtype"):
        x.quantile(t([0.5], device, minitorch.float32))
    with pytest.raises(RuntimeError, match="non-empty"):
        t([], device).quantile(0.5)


# ---------------------------------------------------------------- sets and bins ----

def test_unique_forms(device):
    x = t([[2, 1], [2, 1], [0, 3]], device, minitorch.int64)
    assert vals(x.unique()).tolist() == [0, 1, 2, 3]
    out, inv, counts = minitorch.unique(x, return_inverse=True, return_counts=True)
    assert inv.shape == (3, 2) and vals(out)[vals(inv)].tolist() == vals(x).tolist()
    assert vals(counts).tolist() == [1, 2, 2, 1]
    rows, inv, counts = x.unique(dim=0, return_inverse=True, return_counts=True)
    assert vals(rows).tolist() == [[0, 3], [2, 1]] and vals(inv).tolist() == [1, 1, 0]
    assert vals(counts).tolist() == [1, 2]
    out, counts = t([1, 1, 2, 1], device, minitorch.int64).unique_consecutive(return_counts=True)
    assert vals(out).tolist() == [1, 2, 1] and vals(counts).tolist() == [2, 1, 1]
    assert x.unique().grad_fn is None


def test_bincount_and_histc(device):
    x = t([0, 2, 2, 5], device, minitorch.int64)
    assert vals(x.bincount()).tolist() == [1, 0, 2, 0, 0, 1]
    assert vals(x.bincount(minlength=8)).tolist() == [1, 0, 2, 0, 0, 1, 0, 0]
    w = x.bincount(t([0.5, 1.0, 2.0, 3.0], device, minitorch.float32))
    assert w.dtype == minitorch.float32 and vals(w).tolist() == [0.5, 0, 3.0, 0, 0, 3.0]
    assert x.bincount(t([1, 1, 1, 1], device, minitorch.int64)).dtype == minitorch.float64
    with pytest.raises(ValueError, match="bincount: .*non-negative"):
        t([1, -1], device, minitorch.int64).bincount()
    with pytest.raises(ValueError, match="bincount: .*1-d"):
        t([[1]], device, minitorch.int64).bincount()
    with pytest.raises(ValueError, match="bincount: weights"):
        x.bincount(t([1.0], device))
    with pytest.raises(TypeError):
        t([1.0], device).bincount()
    h = t([1.0, 2.0, 1.0, 3.0, 7.0, NAN], device).histc(bins=4, min=0, max=3)
    assert vals(h).tolist() == [0.0, 2.0, 1.0, 1.0]  # 3.0 = max: the last bin; 7 and NaN left out
    assert vals(t([2.0, 2.0], device).histc(bins=2)).tolist() == [0.0, 2.0]  # [1, 3] around a single value
    with pytest.raises(ValueError, match="histc: bins"):
        t([1.0], device).histc(bins=0)


def test_searchsorted_and_bucketize(device):
    seq = t([1.0, 3.0, 3.0, 5.0], device)
    v = t([3.0, 0.0, 6.0, NAN], device)
    assert vals(minitorch.searchsorted(seq, v)).tolist() == [1, 0, 4, 4]  # NaN: past the end
    assert vals(minitorch.searchsorted(seq, v, right=True)).tolist() == [3, 0, 4, 4]
    assert vals(minitorch.searchsorted(seq, v, side="right")).tolist() == [3, 0, 4, 4]
    out = minitorch.searchsorted(seq, 3)
    assert out.shape == () and out.item() == 1 and out.dtype == minitorch.int64
    narrow = minitorch.searchsorted(seq, v, out_int32=True)
    assert narrow.dtype == minitorch.int32 and vals(narrow).tolist() == [1, 0, 4, 4]
    assert minitorch.bucketize(v, seq, out_int32=True).dtype == minitorch.int32
    rows = t([[1, 2, 3], [4, 5, 6]], device, minitorch.int64)
    assert vals(minitorch.searchsorted(rows, t([[2], [7]], device, minitorch.int64))).tolist() == [[1], [3]]
    with pytest.raises(ValueError, match=r"searchsorted: boundaries tensor should be 1 dimension or the first N-1"):
        minitorch.searchsorted(rows, t([[1, 2], [3, 4], [5, 6]], device, minitorch.int64))
    with pytest.raises(ValueError, match="side and right can't be set to opposites"):
        minitorch.searchsorted(seq, v, side="left", right=True)
    with pytest.raises(ValueError, match="scalar only when boundaries tensor dimension is 1"):
        minitorch.searchsorted(rows, 2)
    unsorted = t([5.0, 1.0, 3.0], device)
    assert vals(minitorch.searchsorted(unsorted, t([2.0], device), sorter=unsorted.argsort())).tolist() == [1]
    b = t([1.0, 3.0, 5.0], device)
    assert vals(minitorch.bucketize(t([0.5, 3.0, 9.0], device), b)).tolist() == [0, 1, 3]
    assert vals(minitorch.bucketize(t([0.5, 3.0, 9.0], device), b, right=True)).tolist() == [0, 2, 3]
    with pytest.raises(ValueError, match="bucketize: boundaries tensor must be 1 dimension"):
        minitorch.bucketize(v, rows)


def test_searchsorted_many_values(device):
    """A binary search per value: 10^5 values in 10^4 boundaries."""
    rng = np.random.default_rng(1)
    seq = np.sort(rng.normal(size=10_000))
    v = rng.normal(size=100_000)
    got = minitorch.searchsorted(t(seq, device), t(v, device))
    np.testing.assert_array_equal(vals(got), np.searchsorted(seq, v))
