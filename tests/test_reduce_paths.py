"""Reductions along every path of the reduce kernels, against NumPy on every device.

The ops see the input as a contiguous (outer, R, inner) tensor and reduce its middle dim
(a view when the reduced dims are adjacent, one copy otherwise). The CUDA kernels then
take one of these paths (cuda/reduce.cu), which the shapes below are chosen to reach:

- rows (inner == 1): a warp per row (R <= 1024) or a block per row;
- columns (inner > 1): a thread per output, looping over R;
- split: few outputs and a long R, so R is cut into slices (blockIdx.y), one partial per
  slice, and the last block of each column of slices to finish reduces the partials, in
  the same launch. A full reduction of 2**20 + 3 values
  is 256 slices of 4097; (3, 70001).sum(1) is 17 slices of 4118 per row; (2000, 3).sum(0)
  is 61 slices of 33 rows.

Ties and NaNs are placed in different slices (and at the edges of a slice) so the second
pass must keep the rules of one pass: NaN wins, ties go to the smaller index.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, assert_tensor_equal, make_tensor, random_array, to_numpy
from minitorch.testing import gradcheck

SUM_TOL = {
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-4),
    np.dtype(np.float64): dict(rtol=1e-12, atol=1e-10),
}

BIG = 2**20 + 3  # odd, so the last slice is short
# The CPU splits a reduction across threads in chunks of at least 2**20 values (reduce.cpp).
TWO_CHUNKS = 2**21 + 3


def expected_sum(x_np, axis=None, keepdims=False):
    """NumPy's sum, accumulated in float64 (int64 for integers and bool), in x's float dtype."""
    if x_np.dtype.kind == "f":
        return np.asarray(x_np.astype(np.float64).sum(axis=axis, keepdims=keepdims)).astype(x_np.dtype)
    return np.asarray(x_np.sum(axis=axis, keepdims=keepdims, dtype=np.int64))


# ------------------------------------------------------------------- sums ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1, 7, 1000, 5000, 12345, BIG], ids=lambda n: f"n{n}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_full_sum_of_every_size(device, n, dtype):
    # 1000: a warp; 5000: a block; 12345 and BIG: split into slices.
    x_np = random_array(n, (n,), dtype)
    if dtype == np.int64:
        x_np = np.random.default_rng(n).integers(-(2**40), 2**40, size=n)  # exact sums past 2**53 / n
    out = minitorch.tensor(x_np, device=device).sum()
    assert_tensor_equal(out, expected_sum(x_np), **SUM_TOL.get(x_np.dtype, {}))


@pytest.mark.parametrize("device", DEVICES)
def test_full_sum_of_a_multi_dim_tensor_and_its_mean(device):
    x_np = random_array(1, (3, 509, 687), np.float32)  # 1,049,049 values, no dim reduced alone
    x = minitorch.tensor(x_np, device=device)
    assert_tensor_equal(x.sum(), expected_sum(x_np), **SUM_TOL[x_np.dtype])
    assert_tensor_equal(x.mean(), np.float32(x_np.astype(np.float64).mean()), rtol=1e-5, atol=1e-6)
    assert_tensor_equal(x.sum((0, 1, 2), keepdim=True), expected_sum(x_np, keepdims=True), **SUM_TOL[x_np.dtype])


# shape, dims, the path on CUDA (outer, R, inner as the kernel sees it)
DIM_CASES = [
    ((3000, 40), 1, "rows, a warp each, 375 blocks"),
    ((600, 2000), -1, "rows, a block each"),
    ((3, 70001), 1, "rows split into 17 slices"),
    ((5, 9000), 1, "rows split into 2 slices"),
    ((4096, 64), 0, "columns (1, 4096, 64) split into 128 slices"),
    ((20, 9), 0, "columns, too short to split"),
    ((64, 33), 0, "columns split into 2 slices"),
    ((700, 3, 5), 0, "columns (1, 700, 15)"),
    ((3, 200, 5), 1, "columns (3, 200, 5), a middle dim"),
    ((5, 300, 400), 1, "columns (5, 300, 400) split into 9 slices"),
    ((2, 30, 40, 3), (1, 2), "adjacent dims: columns (2, 1200, 3)"),
    ((4, 5, 6, 7), (2, 3), "adjacent trailing dims: rows (20, 42)"),
    ((4, 5, 6, 7), (0, 1), "adjacent leading dims: columns (1, 20, 42)"),
    ((6, 5, 4, 3), (0, 2), "not adjacent: one copy"),
    ((6, 5, 4, 3), (1, 3), "not adjacent: one copy"),
    ((6, 5, 4, 3), (-1, 0), "not adjacent, negative dims"),
    ((5, 1, 1, 4), (1, 2), "only size-1 dims reduced: R = 1"),
    ((1, 5, 1), 1, "size-1 dims around the reduced one"),
    ((3, 1, 4), (0, 1), "a size-1 dim between reduced and kept ones"),
    ((3, 0, 2), 1, "an empty reduced dim: zeros"),
    ((3, 0, 2), 0, "an empty kept dim: an empty result"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("keepdim", [False, True], ids=["", "keepdim"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,dims,path", DIM_CASES, ids=[c[2] for c in DIM_CASES])
def test_sum_and_mean_along_dims(device, shape, dims, path, dtype, keepdim):
    x_np = random_array(len(path), shape, dtype)
    x = minitorch.tensor(x_np, device=device)
    axis = dims if isinstance(dims, int) else tuple(dims)
    out = x.sum(dims, keepdim=keepdim)
    assert out.is_contiguous()
    assert_tensor_equal(out, expected_sum(x_np, axis, keepdim), **SUM_TOL.get(x_np.dtype, {}))
    if dtype != np.int64:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of nothing: nan
            want = x_np.astype(np.float64).mean(axis=axis, keepdims=keepdim).astype(dtype)
        assert_tensor_equal(x.mean(dims, keepdim=keepdim), want, **SUM_TOL[x_np.dtype])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,dims,path", DIM_CASES, ids=[c[2] for c in DIM_CASES])
def test_bool_sums_count_and_any(device, shape, dims, path):
    x_np = random_array(len(path), shape, np.bool_)
    x = minitorch.tensor(x_np, device=device)
    axis = dims if isinstance(dims, int) else tuple(dims)
    assert_tensor_equal(x.sum(dims), x_np.sum(axis=axis, dtype=np.int64))
    assert_tensor_equal(x.sum(dims, dtype=minitorch.bool), x_np.any(axis=axis))  # as PyTorch


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["step", "transpose"])
@pytest.mark.parametrize("shape,dims,path", DIM_CASES, ids=[c[2] for c in DIM_CASES])
def test_sum_of_non_contiguous_inputs(device, shape, dims, path, layout):
    x_np = random_array(len(path), shape, np.float64)
    x = make_tensor(x_np, layout, device)
    axis = dims if isinstance(dims, int) else tuple(dims)
    out = x.sum(dims)
    assert out.is_contiguous()
    assert_tensor_equal(out, expected_sum(x_np, axis), **SUM_TOL[x_np.dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_permuted_inputs_are_read_in_memory_order(device):
    # A permuted contiguous tensor is reduced without a copy when its kept dims stay in
    # order; the result is still laid out as its shape says.
    a_np = random_array(2, (20, 30, 40), np.float32)
    a = minitorch.tensor(a_np, device=device)
    for perm in [(1, 0, 2), (2, 0, 1), (0, 2, 1), (2, 1, 0)]:
        t, t_np = a.permute(*perm), a_np.transpose(perm)
        for dims in [0, 1, 2, (0, 1), (1, 2), (0, 2)]:
            out = t.sum(dims)
            assert out.is_contiguous(), (perm, dims)
            assert_tensor_equal(out, expected_sum(t_np, dims), **SUM_TOL[a_np.dtype])
        for dim in range(3):
            values, indices = t.max(dim)
            assert values.is_contiguous() and indices.is_contiguous()
            assert_tensor_equal(values, t_np.max(dim))
            assert_tensor_equal(indices, t_np.argmax(dim).astype(np.int64))
            assert_tensor_equal(t.argmin(dim), t_np.argmin(dim).astype(np.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_expanded_input(device):
    x_np = random_array(3, (1, 300), np.float32)
    x = minitorch.tensor(x_np, device=device).expand(500, 300)  # stride 0: one copy
    want = np.broadcast_to(x_np, (500, 300))
    for dim in (0, 1):
        assert_tensor_equal(x.sum(dim), expected_sum(want, dim), **SUM_TOL[x_np.dtype])
        assert_tensor_equal(x.argmax(dim), want.argmax(dim).astype(np.int64))


@settings(max_examples=25, deadline=None)
@given(outer=st.integers(1, 6), r=st.integers(1, 3000), inner=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       which=st.sampled_from(["middle", "last", "first", "full"]), layout=st.sampled_from(["contiguous", "step"]))
def test_random_long_reductions(device, outer, r, inner, seed, which, layout):
    # Long reduced dims reach the split paths (R up to 3000, few outputs).
    x_np = np.random.default_rng(seed).integers(-4, 5, size=(outer, r, inner)).astype(np.float32)
    x = make_tensor(x_np, layout, device)
    dim = {"middle": 1, "last": 2, "first": 0, "full": None}[which]
    if dim is None:
        assert_tensor_equal(x.sum(), expected_sum(x_np))
        assert_tensor_equal(x.max(), np.float32(x_np.max()))
        assert x.argmin().item() == x_np.argmin()
        return
    assert_tensor_equal(x.sum(dim), expected_sum(x_np, dim))  # small integers: exact
    values, indices = x.max(dim)
    assert_tensor_equal(values, x_np.max(dim))
    assert_tensor_equal(indices, x_np.argmax(dim).astype(np.int64))
    assert_tensor_equal(x.argmin(dim), x_np.argmin(dim).astype(np.int64))


# ------------------------------------------------- max / min / arg, ties, NaN ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ties", [
    [4096, 4097, 8194, 600000, BIG - 1],  # the last of slice 0, the first of slice 1, ...
    [100 * 4097 + 5, 3 * 4097 + 7],       # a later slice holds the later tie
    [BIG - 1, BIG - 2],                   # both in the short last slice
    [0, BIG - 1],
], ids=["edges", "two-slices", "last-slice", "ends"])
def test_full_argmax_ties_across_slices(device, dtype, ties):
    x_np = np.random.default_rng(len(ties)).integers(-1000, 1000, size=BIG).astype(dtype)
    x_np[ties] = 5000
    x_np[[t + 2 for t in ties if t + 2 < BIG]] = -5000  # min ties near them
    x = minitorch.tensor(x_np, device=device)
    assert x.argmax().item() == min(ties) == x_np.argmax()
    assert x.argmin().item() == x_np.argmin()
    assert x.max().item() == 5000  # values only
    values, indices = x.max(0)
    assert values.item() == 5000 and indices.item() == min(ties)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("nans", [[700000, 300000], [4097], [BIG - 1], [4096, 4097]], ids=str)
def test_full_reductions_propagate_nan_across_slices(device, dtype, nans):
    x_np = random_array(7, (BIG,), dtype)
    x_np[[5, 900000]] = np.inf  # a larger value elsewhere must not win over NaN
    x_np[[6, 900001]] = -np.inf
    x_np[nans] = np.nan
    x = minitorch.tensor(x_np, device=device)
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())
    assert x.argmax().item() == min(nans) == x_np.argmax()
    assert x.argmin().item() == min(nans) == x_np.argmin()
    assert np.isnan(x.sum().item())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("which", ["max", "min"])
def test_ties_and_nan_across_row_slices(device, which):
    # (3, 70001) along dim 1: each row is 17 slices of 4118.
    x_np = np.random.default_rng(1).uniform(-1, 1, size=(3, 70001)).astype(np.float32)
    sign = 1 if which == "max" else -1
    x_np[0, [70000, 4118, 4117, 30000]] = 2 * sign  # the tie at 4117 ends slice 0
    x_np[1, [69999, 5000]] = np.nan
    x_np[1, 0] = 3 * sign
    x_np[2, :] = 0.5  # all equal: index 0
    x = minitorch.tensor(x_np, device=device)
    values, indices = getattr(x, which)(1)
    assert_tensor_equal(values, np.array([2 * sign, np.nan, 0.5], np.float32))
    assert_tensor_equal(indices, np.array([4117, 5000, 0], np.int64))
    assert_tensor_equal(getattr(x, "arg" + which)(1, keepdim=True), np.array([[4117], [5000], [0]], np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("which", ["max", "min"])
def test_ties_and_nan_across_column_slices(device, which):
    # (2000, 3) along dim 0: 61 slices of 33 rows for each of the 3 columns.
    x_np = np.random.default_rng(2).uniform(-1, 1, size=(2000, 3))
    sign = 1 if which == "max" else -1
    x_np[[1999, 40, 33, 32], 0] = 2 * sign  # 32 ends slice 0, 33 starts slice 1
    x_np[[1500, 700], 1] = np.nan
    x_np[:, 2] = -0.25
    x = minitorch.tensor(x_np, device=device)
    values, indices = getattr(x, which)(0)
    assert_tensor_equal(values, np.array([2 * sign, np.nan, -0.25]))
    assert_tensor_equal(indices, np.array([32, 700, 0], np.int64))
    # the same through a transpose: dim 1 of x.T is read in place, as the same columns
    assert_tensor_equal(getattr(x.T, "arg" + which)(1), np.array([32, 700, 0], np.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_bool_max_and_argmax_across_slices(device):
    x_np = np.zeros(BIG, np.bool_)
    x_np[[900000, 5000, 4097 * 7]] = True
    x = minitorch.tensor(x_np, device=device)
    assert x.max().item() is True and x.min().item() is False
    assert x.argmax().item() == 5000 and x.argmin().item() == 0
    assert_tensor_equal(x.sum(), np.int64(3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,dim", [((3000, 40), 1), ((600, 2000), 1), ((4096, 64), 0), ((3, 200, 5), 1),
                                       ((5, 9000), -1), ((1, 5, 1), 1), ((3, 1, 4), 1)], ids=str)
def test_max_min_along_each_path(device, shape, dim):
    x_np = np.random.default_rng(3).integers(-50, 50, size=shape).astype(np.float64)
    x = minitorch.tensor(x_np, device=device)
    for which, ref_v, ref_i in [("max", np.max, np.argmax), ("min", np.min, np.argmin)]:
        values, indices = getattr(x, which)(dim)
        assert_tensor_equal(values, ref_v(x_np, axis=dim))
        assert_tensor_equal(indices, ref_i(x_np, axis=dim).astype(np.int64))
        kept_v, kept_i = getattr(x, which)(dim, keepdim=True)
        assert_tensor_equal(kept_v, ref_v(x_np, axis=dim, keepdims=True))
        assert_tensor_equal(kept_i, ref_i(x_np, axis=dim, keepdims=True).astype(np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,dim", [((40000, 3), 1), ((4100, 1030), 1), ((5, 2, 250000), 1)],
                         ids=["warp-rows", "block-rows", "columns"])
def test_more_outputs_than_blocks(device, shape, dim):
    # The grid has at most 4096 blocks along x; its blocks then loop over the rest (a
    # block-per-row block reuses its shared memory for its next row).
    x_np = np.random.default_rng(5).integers(-9, 10, size=shape).astype(np.float32)
    x = minitorch.tensor(x_np, device=device)
    if x_np.size < 2**21:  # the same kernels; spare the emulator the largest sum
        assert_tensor_equal(x.sum(dim), expected_sum(x_np, dim))
    values, indices = x.max(dim)
    assert_tensor_equal(values, x_np.max(dim))
    assert_tensor_equal(indices, x_np.argmax(dim).astype(np.int64))


# ----------------------------------------------------------------- gradients ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", [
    lambda x: x.sum((1, 2)),
    lambda x: x.sum((0, 2)),
    lambda x: x.sum(0, keepdim=True),
    lambda x: x.mean((2, 3)),
    lambda x: x.permute(3, 0, 1, 2).sum(0),
    lambda x: x.permute(2, 0, 1, 3).sum((1, 2)),
    lambda x: x.max(1).values,
    lambda x: x.permute(1, 0, 2, 3).min(0).values,
    lambda x: x.max(),
], ids=["sum12", "sum02", "sum0-keepdim", "mean23", "perm-sum0", "perm-sum12", "max1", "perm-min0", "max-all"])
def test_gradcheck_along_each_layout(device, fn):
    x_np = np.random.default_rng(4).permutation(60).reshape(2, 3, 5, 2) / 7.0  # distinct: no ties for max
    x = minitorch.tensor(x_np, requires_grad=True, device=device)
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=lambda d: np.dtype(d).name)
def test_full_reductions_give_the_same_bits_on_any_number_of_threads(dtype):
    # The CPU cuts one long row into fixed blocks that threads share, and combines the
    # block results in block order: 1 and 2 threads must agree to the last bit.
    x_np = random_array(3, (TWO_CHUNKS,), dtype) if dtype != np.int64 else \
        np.random.default_rng(3).integers(-10**6, 10**6, size=TWO_CHUNKS)
    x = minitorch.tensor(x_np)
    before = minitorch.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            minitorch.set_num_threads(threads)
            results.append((x.sum().item(), x.max().item(), x.argmax().item(), x.argmin().item()))
    finally:
        minitorch.set_num_threads(before)
    assert results[0] == results[1]
    assert results[0][2] == x_np.argmax() and results[0][3] == x_np.argmin()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("r", [2048 * 2, 2048 * 5 + 7, 2048 * 9 - 1], ids=lambda r: f"r{r}")
def test_row_sums_and_full_sums_give_the_same_bits(dtype, r):
    # The CPU reads full blocks two at a time from the two halves of a range (two memory
    # streams); a block's arithmetic must not depend on that pairing, nor on whether the
    # row is one output of x.sum(1) or the whole of x[i].sum().
    x_np = random_array(r, (3, r), dtype) if dtype != np.int64 else \
        np.random.default_rng(r).integers(-10**6, 10**6, size=(3, r))
    x = minitorch.tensor(x_np)
    rows = x.sum(1).tolist()
    assert rows == [x[i].sum().item() for i in range(3)]
    assert rows == [x[i].contiguous().sum().item() for i in range(3)]
    np.testing.assert_allclose(rows, expected_sum(x_np, axis=1), **SUM_TOL.get(x_np.dtype, {}))


@pytest.mark.parametrize("n", [1, 7, 8, 9, 63, 255, 256, 257, 1000, 2047, 2048, 2049], ids=lambda n: f"n{n}")
def test_row_sums_around_the_lane_counts(n):
    # The CPU sums a row shorter than 256 values in 8 float lanes, a longer one in 32, each
    # a fixed tree; a row of x.sum(1) and the same row summed alone take the same path.
    x_np = random_array(n, (5, n), np.float32)
    x = minitorch.tensor(x_np)
    rows = x.sum(1).tolist()
    assert rows == [x[i].sum().item() for i in range(5)]
    np.testing.assert_allclose(rows, expected_sum(x_np, axis=1), **SUM_TOL[np.dtype(np.float32)])
    np.testing.assert_allclose(x.mean(1).tolist(), x_np.astype(np.float64).mean(1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, dim", [((33, 2100), 0), ((2, 40, 1500), 1), ((70, 1024), 0), ((3, 5, 1025), 1)],
                         ids=str)
def test_column_sums_across_strips(shape, dim):
    # Column sums take strips of up to 1024 neighbouring outputs on the CPU: outputs on
    # both sides of a strip's edge, with rows not a multiple of the 32 summed in float.
    x_np = random_array(7, shape, np.float32)
    x = minitorch.tensor(x_np)
    np.testing.assert_allclose(x.sum(dim).numpy(), expected_sum(x_np, axis=dim), **SUM_TOL[np.dtype(np.float32)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("at", [[15, 16], [16, 17], [31, 47], [49], [0, 49]], ids=str)
def test_row_ties_around_the_simd_groups(device, at):
    # A row's best value is found 16 lanes at a time, then its first place group by group.
    row = np.linspace(-1, 0, 50).astype(np.float32)[::-1].copy()
    row[at] = 7.0
    x_np = np.stack([row, -row])
    x = minitorch.tensor(x_np, device=device)
    assert_tensor_equal(x.argmax(1), x_np.argmax(1))
    assert_tensor_equal(x.argmin(1), x_np.argmin(1))
    assert x_np.argmax(1)[0] == at[0] == x_np.argmin(1)[1]


_SUMS_SCRIPT = """
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
import numpy as np, minitorch
rng = np.random.default_rng(5)
out = []
for shape, dim in [((100003,), None), ((7, 1000), 1), ((9, 100), 1), ((3, 5000), 1), ((70, 1030), 0), ((5, 33, 7), 1)]:
    x = minitorch.tensor(rng.uniform(-10, 10, size=shape).astype(np.float32))
    out.append((x.sum() if dim is None else x.sum(dim)).reshape(-1).tolist())
print(json.dumps([minitorch.backends.cpu.get_cpu_capability(), out]))
"""


def test_float_sums_have_the_same_bits_on_sse_and_avx2():
    # reduce_avx2.cpp compiles the sums' loops (reduce_loops.h) with 32-byte vectors; the
    # lanes are explicit arrays, so each lane adds its values in the same order as the
    # 16-byte build does: the two must agree to the last bit.
    with open("/proc/cpuinfo") if os.path.exists("/proc/cpuinfo") else open(os.devnull) as f:
        if " avx2" not in f.read():
            pytest.skip("needs an x86-64 CPU with AVX2 (Linux)")
    here = os.path.dirname(os.path.abspath(__file__))
    results = {}
    for cap in ("sse", "avx2"):
        r = subprocess.run([sys.executable, "-c", _SUMS_SCRIPT, json.dumps([here] + sys.path)],
                           env=dict(os.environ, MINITORCH_CPU_CAPABILITY=cap), capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        got_cap, results[cap] = json.loads(r.stdout)
        assert got_cap == cap.upper()
    assert results["sse"] == results["avx2"]


# ---- structure: a split reduction is one launch (the profiler counts the same on a GPU) ----

@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("shape, dim, kernel", [
    ((BIG,), None, "reduce_rows_kernel"),       # 256 slices of one row
    ((3, 70001), 1, "reduce_rows_kernel"),     # 17 slices of 3 rows
    ((40, 100000), 1, "reduce_rows_kernel"),   # several blocks across (blockIdx.x), each with its slices
    ((4096, 64), 0, "reduce_cols_kernel"),     # 128 slices of 64 columns
    ((5000, 600), 0, "reduce_cols_kernel"),    # 3 blocks across, 156 slices
])
def test_split_reductions_finish_in_one_launch(shape, dim, kernel):
    """The last block to finish reduces the slices' partials: one launch for a split sum,
    max/argmax and var, and the arrival counters are back at 0 afterwards, so the same call
    again gives the same bits."""
    from minitorch.profiler import ProfilerActivity, profile

    a = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    a.flat[len(a.flat) // 3] = 50.0  # one clear maximum, in a middle slice
    x = minitorch.tensor(a, device="cuda")
    calls = {
        "sum": lambda: x.sum() if dim is None else x.sum(dim),
        "amax": lambda: x.amax() if dim is None else x.amax(dim),
        "argmax": lambda: x.argmax() if dim is None else x.argmax(dim),
        "var": lambda: x.var() if dim is None else x.var(dim),
    }
    want = {"sum": a.astype(np.float64).sum(axis=dim), "amax": a.max(axis=dim), "argmax": a.argmax(axis=dim),
            "var": a.astype(np.float64).var(axis=dim, ddof=1)}
    for name, call in calls.items():
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            first = call()
        kernels = [k.name.split("<")[0] for e in prof.events() for k in e.kernels]
        assert kernels == [kernel], (name, kernels)
        np.testing.assert_allclose(to_numpy(first), want[name], rtol=1e-5, atol=1e-3, err_msg=name)
        for _ in range(2):
            assert_tensor_equal(call(), first)
