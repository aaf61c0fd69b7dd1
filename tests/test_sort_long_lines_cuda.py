"""The CUDA sort of lines longer than 4096 values (cuda/sort.cu), against a Python reference.

A long line is copied into a contiguous (lines, R) buffer (every NaN made the one positive
NaN), sorted there, and written back through the sorted places. The sort is CUB's radix
sort on a GPU; in the emulator (and on a GPU with MINITORCH_CUDA_SORT=merge) a merge sort:
bitonic runs of 4096, then one merge pass per doubling of the run width, each element
finding its place by a binary search in the partner run. The order is PyTorch's: stable,
NaN above every number (last ascending, first descending), whatever its sign or payload.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def _reference_order(line: np.ndarray, descending: bool) -> np.ndarray:
    """The stable order of one line: NaN above every number, ties by place."""
    nan = np.isnan(line) if line.dtype.kind == "f" else np.zeros(line.shape, bool)
    value = np.where(nan, 0, line)
    value = value if value.dtype == np.int64 else value.astype(np.float64)
    if descending:  # NaNs first, then larger values first; lexsort is stable, its last key leads
        return np.lexsort((-value, ~nan))
    return np.lexsort((value, nan))


def _check(x: np.ndarray, dim: int, descending: bool, to=None):
    """Sorts x along dim on "cuda" and checks indices and values against the reference."""
    t = minitorch.tensor(x)
    if to is not None:
        t = t.to(to)
    values, indices = t.to("cuda").sort(dim=dim, descending=descending)
    got_i = indices.cpu().numpy()
    moved = np.moveaxis(x, dim, -1)
    want_i = np.apply_along_axis(_reference_order, -1, moved, descending)
    np.testing.assert_array_equal(np.moveaxis(got_i, dim, -1), want_i)
    want_v = np.take_along_axis(moved, want_i, -1)
    got_v = values.to(minitorch.float32).cpu().numpy() if to is not None else values.cpu().numpy()
    np.testing.assert_array_equal(np.moveaxis(got_v, dim, -1), want_v)


def _ties(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == np.int64:
        return rng.integers(-20, 20, size=shape).astype(np.int64)
    x = (np.round(rng.standard_normal(shape) * 4) / 4).astype(dtype)  # many equal values
    flat = x.reshape(-1)
    flat[::97] = np.nan
    flat[5::89] = np.inf
    flat[7::91] = -np.inf
    flat[11::93] = -0.0
    return x


@pytest.mark.parametrize("length", [4097, 10000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("descending", [False, True])
def test_cuda_long_lines_sort_stably(length, dtype, descending):
    x = _ties(np.random.default_rng(length), (3, length), dtype)
    _check(x, 1, descending)


@pytest.mark.parametrize("shape,dim", [((2, 5000, 3), 1), ((9000, 2), 0)])
def test_cuda_long_lines_along_a_strided_dim(shape, dim):
    x = _ties(np.random.default_rng(7), shape, np.float32)
    for descending in (False, True):
        _check(x, dim, descending)


@pytest.mark.parametrize("dtype,bits,nans", [
    (np.float32, np.uint32, [0x7FC00000, 0x7FC00123, 0xFFC00000, 0xFF800001, 0x7F800001]),
    (np.float64, np.uint64, [0x7FF8000000000000, 0xFFF8000000000000, 0xFFF0000000000001, 0x7FF0000000000abc]),
])
def test_cuda_long_line_nans_of_any_sign_and_payload(dtype, bits, nans):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(6000).astype(dtype)
    x[:4] = [np.inf, -np.inf, 0.0, -0.0]
    raw = x.view(bits)
    for k, nan in enumerate(nans):
        raw[100 + 1000 * k] = nan
        raw[101 + 1000 * k] = nan
    for descending in (False, True):
        values, indices = minitorch.tensor(x[None]).to("cuda").sort(dim=1, descending=descending)
        want = _reference_order(x, descending)
        got = indices.cpu().numpy()[0]
        np.testing.assert_array_equal(got, want)
        nan_first = np.isnan(x[got[: len(nans) * 2]]).all()
        assert nan_first == descending and np.isnan(x[got[-len(nans) * 2:]]).all() != descending
        # the values written out are the line's own: a NaN keeps its sign and payload
        np.testing.assert_array_equal(values.cpu().numpy()[0].view(bits), raw[got])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cuda_long_line_sort_16_bit(dtype):
    rng = np.random.default_rng(4)
    x = _ties(rng, (2, 5000), np.float32)  # quarters: exact in float16 and bfloat16
    for descending in (False, True):
        _check(x, 1, descending, to=getattr(minitorch, dtype))


def test_cuda_long_line_order_statistics_ride_on_the_sort():
    x = np.random.default_rng(5).standard_normal((2, 9001)).astype(np.float32)
    x[0, 17] = x[0, 4000] = x[0, 8999]  # a tie across runs
    cpu, gpu = minitorch.tensor(x), minitorch.tensor(x).to("cuda")
    v, i = gpu.topk(50, dim=1)
    wv, wi = cpu.topk(50, dim=1)
    np.testing.assert_array_equal(v.cpu().numpy(), wv.numpy())
    np.testing.assert_array_equal(i.cpu().numpy(), wi.numpy())
    v, i = gpu.topk(5, dim=1, largest=False)
    np.testing.assert_array_equal(i.cpu().numpy(), np.argsort(x, axis=1, kind="stable")[:, :5])
    np.testing.assert_array_equal(gpu.argsort(dim=1).cpu().numpy(), np.argsort(x, axis=1, kind="stable"))
    np.testing.assert_array_equal(gpu.msort().cpu().numpy(), np.sort(x, axis=0))  # msort: along dim 0
    flat = gpu.reshape(-1)
    np.testing.assert_array_equal(flat.msort().cpu().numpy(), np.sort(x.reshape(-1)))
    assert flat.median().item() == np.sort(x.reshape(-1))[(x.size - 1) // 2]  # the lower median
    kv, ki = gpu.kthvalue(4321, dim=1)
    np.testing.assert_array_equal(kv.cpu().numpy(), np.sort(x, axis=1)[:, 4320])
    np.testing.assert_allclose(flat.quantile(0.9).item(), np.quantile(x.reshape(-1), 0.9), rtol=1e-6)


def test_cuda_long_line_sort_gradient_goes_back_through_the_places():
    x = minitorch.tensor(np.random.default_rng(6).standard_normal(5000).astype(np.float32), requires_grad=True)
    g = np.arange(5000, dtype=np.float32)
    values, indices = x.to("cuda").sort(descending=True)
    (values * minitorch.tensor(g).to("cuda")).sum().backward()
    want = np.zeros(5000, np.float32)
    want[indices.cpu().numpy()] = g
    np.testing.assert_array_equal(x.grad.numpy(), want)


def _kernels(fn) -> list:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.split("<")[0] for e in prof.events() for k in e.kernels]


@pytest.mark.parametrize("length", [4097, 8192, 8193, 20000])
def test_cuda_long_line_sort_launches(length):
    x = minitorch.randn(2, length, device="cuda")
    names = _kernels(lambda: x.sort(dim=1))
    if minitorch.cuda.is_emulated():  # the merge sort: runs, one pass per doubling of 4096, write back
        passes = math.ceil(math.log2(length / 4096))
        assert names == ["stage_lines_kernel", "bitonic_sort_kernel"] + ["merge_pass_kernel"] * passes + [
            "write_lines_kernel"], names
    else:  # CUB's launches are its own (the profiler records minitorch's): the places in the
        # copy are written as it is staged (no arange, no int32 staging copies)
        assert names == ["stage_lines_kernel", "line_of_kernel", "write_lines_kernel"], names


def test_merge_sort_switch_is_read_at_every_call(monkeypatch):
    # MINITORCH_CUDA_SORT=merge sends long lines to the merge sort in the nvcc build too (the
    # emulated build always takes it), whenever it is set.
    x = minitorch.randn(3, 9000, device="cuda")
    x.sort(dim=1)
    monkeypatch.setenv("MINITORCH_CUDA_SORT", "merge")
    names = _kernels(lambda: x.sort(dim=1))
    assert names[:2] == ["stage_lines_kernel", "bitonic_sort_kernel"] and "merge_pass_kernel" in names, names
    values, indices = x.sort(dim=1)
    want = np.sort(x.cpu().numpy(), axis=1, kind="stable")
    np.testing.assert_array_equal(values.cpu().numpy(), want)
    np.testing.assert_array_equal(np.take_along_axis(x.cpu().numpy(), indices.cpu().numpy(), 1), want)
