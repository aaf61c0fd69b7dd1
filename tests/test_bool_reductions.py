"""Reductions of bool tensors read as bools: ``b.sum()`` counts the True values into int64 in
the reduce kernel itself (no int64 copy of b first), and ``any`` / ``all`` are bool sums
(``sum(dtype=bool)``, True where any value is): one launch for ``b.any()``, as PyTorch's.
Checked against NumPy on every device, through the split (two-pass) reductions too, and by
launch counts."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, launches

SHAPES = [(7,), (5, 9), (3, 0, 4), (2, 3, 4), (3, 70000), (140000,), (70000, 3)]


def flags(shape, p, seed=0):
    return np.random.default_rng(seed).random(shape) < p


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_bool_sum_counts_in_int64(device, shape):
    b = flags(shape, 0.3)
    t = minitorch.tensor(b, device=device)
    total = t.sum()
    assert total.dtype == minitorch.int64 and total.item() == b.sum()
    for dim in range(len(shape)):
        for keepdim in (False, True):
            got = t.sum(dim, keepdim=keepdim)
            assert got.dtype == minitorch.int64
            np.testing.assert_array_equal(got.cpu().numpy(), b.sum(dim, keepdims=keepdim))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind", ["bool", "float", "int"])
def test_any_all_match_numpy(device, shape, kind):
    rng = np.random.default_rng(1)
    if kind == "bool":
        a = flags(shape, 0.001, seed=2)  # mostly False: any() has something to find
    elif kind == "float":
        a = np.where(rng.random(shape) < 0.001, 0.0, rng.standard_normal(shape)).astype(np.float32)
        if a.size:
            a.flat[a.size // 2] = np.nan  # NaN is nonzero: any() True, all() unaffected
    else:
        a = rng.integers(0, 2, shape).astype(np.int64) * (rng.random(shape) < 0.999)
    t = minitorch.tensor(a, device=device)
    assert t.any().item() == bool(a.any()) and t.all().item() == bool(a.all())
    for dim in range(len(shape)):
        got_any, got_all = t.any(dim), t.all(dim, keepdim=True)
        assert got_any.dtype == minitorch.bool and got_all.dtype == minitorch.bool
        np.testing.assert_array_equal(got_any.cpu().numpy(), a.any(dim))
        np.testing.assert_array_equal(got_all.cpu().numpy(), a.all(dim, keepdims=True))


@pytest.mark.parametrize("device", DEVICES)
def test_any_all_of_nothing(device):
    e = minitorch.zeros(0, 3, dtype=minitorch.bool, device=device)
    assert e.any().item() is False and e.all().item() is True
    np.testing.assert_array_equal(e.any(0).cpu().numpy(), [False] * 3)
    np.testing.assert_array_equal(e.all(0).cpu().numpy(), [True] * 3)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_bool_reductions_launch_counts():
    x = minitorch.randn(64, 64, device="cuda")
    b = x > 0
    assert len(launches(lambda: b.sum())) == 1  # the count reads the bools
    assert len(launches(lambda: b.sum(1))) == 1
    assert len(launches(lambda: b.any())) == 1
    assert len(launches(lambda: x.any(1))) == 2  # x != 0, then the bool sum
    assert len(launches(lambda: b.all())) == 3  # not, bool sum, not
    long = minitorch.ones(3, 70000, dtype=minitorch.bool, device="cuda")
    names = launches(lambda: long.sum(1))
    assert len(names) <= 2 and not any(n.startswith("copy") for n in names), names
