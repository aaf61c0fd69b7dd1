"""sum / mean over all elements and over one dim against NumPy (float64 references): the
blocked float lanes of the CPU reduce kernel keep float32 sums of many rows accurate; shapes
with size-1 dims, non-contiguous inputs, integer and bool sums down a column."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch


def to_np(t):
    return np.array(t.cpu().numpy(), copy=True)


@pytest.mark.parametrize("shape, dim", [((3000, 37), 0), ((2, 1000, 300), 1), ((1, 513, 1), 1), ((7, 1, 5), 1),
                                        ((4097,), 0), ((65, 33), 1), ((3, 4, 5), None)])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_float32_sums_are_accurate(device, shape, dim, op):
    x = np.random.default_rng(sum(shape)).uniform(-1, 1, size=shape).astype(np.float32) + 3.0
    t = minitorch.tensor(x, device=device)
    got = getattr(t, op)() if dim is None else getattr(t, op)(dim)
    want = getattr(x.astype(np.float64), op)(axis=dim)
    np.testing.assert_allclose(to_np(got), want, rtol=2e-7, atol=0)


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_non_contiguous_inputs(device, layout):
    x = np.random.default_rng(5).standard_normal((40, 70))
    t = minitorch.tensor(x, device=device)
    t, x = (t.T, x.T) if layout == "transposed" else (t[::3, 1::2], x[::3, 1::2])
    for dim in (0, 1, None):
        got = t.sum() if dim is None else t.sum(dim)
        np.testing.assert_allclose(to_np(got), x.sum(axis=dim), rtol=1e-12, atol=1e-12)
        got = t.mean() if dim is None else t.mean(dim, keepdim=True)
        np.testing.assert_allclose(to_np(got), x.mean(axis=dim, keepdims=dim is not None), rtol=1e-12, atol=1e-12)


def test_integer_and_bool_column_sums(device):
    x = np.random.default_rng(6).integers(-5, 6, size=(100, 33))
    np.testing.assert_array_equal(to_np(minitorch.tensor(x, device=device).sum(0)), x.sum(0))
    b = x > 0
    np.testing.assert_array_equal(to_np(minitorch.tensor(b, device=device).sum(0)), b.sum(0))
