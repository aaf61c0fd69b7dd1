"""The CUDA sort and scan kernels on every path, against the CPU's answers.

sort (cuda/sort.cu): lines of up to 4096 values are sorted by one block in shared memory
(a bitonic network, padded to a power of two, ordering by (value, place) so the result is
the stable sort); longer lines by CUB's radix sort or, in the emulator, a merge sort
(test_sort_long_lines_cuda.py). cumsum / cumprod (cuda/scan.cu):
contiguous lines by a warp each, 32 values per step (a shuffle scan plus a carry); lines
along a strided dim by a thread each (a few long lines: test_scan_lookback_cuda.py). cummax /
cummin the same way, scanning (value, place) pairs. Lengths are chosen at the edges of those paths: a
power of two, one past it, 4096 and 4097, a chunk of 32 and one past it.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch.profiler import ProfilerActivity, profile

cuda_only = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
pytestmark = cuda_only


def _lines(dtype, shape, rng, ties: bool):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-5 if ties else -10**6, 5 if ties else 10**6, size=shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if ties:
        x = np.round(x * 2) / 2  # many equal values: stability shows
    flat = x.reshape(-1)
    if flat.size > 3:
        flat[:: max(flat.size // 5, 1)] = np.nan
        flat[1] = -0.0
        flat[2] = np.inf
    return x


@pytest.mark.parametrize("length", [1, 2, 3, 31, 64, 65, 1000, 4096, 4097])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bfloat16", np.int64, np.int32, np.int16, np.int8,
                                   np.uint8, np.bool_])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_the_cpu_stable_sort(length, dtype, descending):
    """(float32 and bool lines sort as one 64-bit number per element in the bitonic kernel,
    float64 and int64 as value and place; the 16-bit and narrow integer types are widened to
    those first: every order is checked against the CPU's, NaN, -0.0 and inf included.)"""
    rng = np.random.default_rng(length)
    rows = 3 if length < 4096 else 2
    x = _lines(np.float32 if dtype == "bfloat16" else dtype, (rows, length), rng, ties=True)
    cpu = minitorch.tensor(x)
    if dtype == "bfloat16":
        cpu = cpu.to(minitorch.bfloat16)
    want_v, want_i = cpu.sort(dim=1, descending=descending)
    got_v, got_i = cpu.to("cuda").sort(dim=1, descending=descending)
    np.testing.assert_array_equal(got_i.cpu().numpy(), want_i.numpy())
    np.testing.assert_array_equal(got_v.cpu().float().numpy() if dtype == "bfloat16" else got_v.cpu().numpy(),
                                  want_v.float().numpy() if dtype == "bfloat16" else want_v.numpy())


@pytest.mark.parametrize("shape,dim", [((4, 33, 5), 1), ((2, 3, 7), 0), ((6, 4097), 1), ((70, 2), 0), ((0, 5), 1),
                                       ((5, 0), 1)])
def test_sort_along_a_strided_dim_and_empty(shape, dim):
    rng = np.random.default_rng(1)
    x = _lines(np.float32, shape, rng, ties=True)
    cpu = minitorch.tensor(x)
    for descending in (False, True):
        want_v, want_i = cpu.sort(dim=dim, descending=descending)
        got_v, got_i = cpu.to("cuda").sort(dim=dim, descending=descending)
        np.testing.assert_array_equal(got_i.cpu().numpy(), want_i.numpy())
        np.testing.assert_array_equal(got_v.cpu().numpy(), want_v.numpy())


@pytest.mark.parametrize("shape, dim, k", [((3, 5000), 1, 9), ((5000, 3), 0, 4), ((2, 4500, 3), 1, 4500),
                                          ((2, 300, 3), 1, 7), ((4, 6), 1, 0)])
def test_topk_writes_only_the_first_k(shape, dim, k):
    """topk is the sort kernel writing k of each line (short lines: the bitonic kernel; long
    ones: the merge sort or CUB, then k written back), also along a middle dim; ties and NaN
    in the order of the CPU's partial sort."""
    a = np.random.default_rng(4).integers(-20, 20, shape).astype(np.float32)  # many ties
    a.flat[::97] = np.nan
    x = minitorch.tensor(a)
    for largest in (True, False):
        wv, wi = x.topk(k, dim=dim, largest=largest)
        v, i = x.to("cuda").topk(k, dim=dim, largest=largest)
        assert tuple(v.shape) == tuple(wv.shape) and v.is_contiguous() and i.is_contiguous()
        np.testing.assert_array_equal(i.cpu().numpy(), wi.numpy())
        np.testing.assert_array_equal(v.cpu().numpy(), wv.numpy())
        full_v, full_i = x.sort(dim=dim, descending=largest)  # the CPU's topk is its sort's first k
        np.testing.assert_array_equal(wi.numpy(), np.take(full_i.numpy(), np.arange(k), axis=dim))


def test_topk_and_argsort_ride_on_the_sort():
    x = minitorch.tensor(np.random.default_rng(2).standard_normal((8, 500)).astype(np.float32))
    v, i = x.to("cuda").topk(7, dim=1)
    wv, wi = x.topk(7, dim=1)
    np.testing.assert_array_equal(v.cpu().numpy(), wv.numpy())
    np.testing.assert_array_equal(i.cpu().numpy(), wi.numpy())
    np.testing.assert_array_equal(x.to("cuda").argsort(dim=1).cpu().numpy(), x.argsort(dim=1).numpy())


def _kernels(fn) -> list:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.split("<")[0] for e in prof.events() for k in e.kernels]


def test_a_short_line_sort_is_one_bitonic_launch():
    x = minitorch.randn(64, 1000, device="cuda")
    names = _kernels(lambda: x.sort(dim=1))
    assert names == ["bitonic_sort_kernel"], names
    long = minitorch.randn(2, 5000, device="cuda")
    names = _kernels(lambda: long.sort(dim=1))
    if minitorch.cuda.is_emulated():  # runs of 4096, one merge pass (5000 < 2 * 4096), write back
        assert names == ["stage_lines_kernel", "bitonic_sort_kernel", "merge_pass_kernel", "write_lines_kernel"], names
    else:  # CUB's launches between ours are its own
        assert names[0] == "stage_lines_kernel" and names[-1] == "write_lines_kernel", names


@pytest.mark.parametrize("length", [129, 1000, 1024, 1025, 2048, 2049, 4096])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16", np.bool_])
def test_short_lines_by_cub_block_radix_sort(monkeypatch, length, dtype):
    """MINITORCH_CUDA_SORT=block: lines of 129 to 4096 values of float32, float16, bfloat16 and
    bool go to CUB's BlockRadixSort (block_radix_sort_kernel: 256 x 4, 256 x 8 or 512 x 8 values a
    block) on a GPU, in the order of the CPU's stable sort, ascending and descending, along the
    last dim and a middle one, and topk's first k. The emulator cannot compile CUB's device code:
    there the switch leaves the bitonic kernel, which this checks too."""
    monkeypatch.setenv("MINITORCH_CUDA_SORT", "block")
    rng = np.random.default_rng(length)
    x = _lines(np.float32 if dtype == "bfloat16" else dtype, (3, length, 2), rng, ties=True)
    cpu = minitorch.tensor(x)
    if dtype == "bfloat16":
        cpu = cpu.to(minitorch.bfloat16)
    dev = cpu.to("cuda")
    want_kernel = "bitonic_sort_kernel" if minitorch.cuda.is_emulated() else "block_radix_sort_kernel"
    for dim in (1, 2):  # dim 1: lines two values apart (inner = 2); dim 2 of a transposed copy: contiguous lines
        line = dev.transpose(1, 2).contiguous() if dim == 2 else dev
        src = cpu.transpose(1, 2).contiguous() if dim == 2 else cpu
        for descending in (False, True):
            assert _kernels(lambda: line.sort(dim=dim, descending=descending)) == [want_kernel]
            got_v, got_i = line.sort(dim=dim, descending=descending)
            want_v, want_i = src.sort(dim=dim, descending=descending)
            np.testing.assert_array_equal(got_i.cpu().numpy(), want_i.numpy())
            np.testing.assert_array_equal(got_v.cpu().float().numpy(), want_v.float().numpy())
    for largest in (False, True):
        got_v, got_i = dev.topk(5, dim=1, largest=largest)
        want_v, want_i = cpu.topk(5, dim=1, largest=largest)
        np.testing.assert_array_equal(got_i.cpu().numpy(), want_i.numpy())
        np.testing.assert_array_equal(got_v.cpu().float().numpy(), want_v.float().numpy())


@pytest.mark.parametrize("length", [1, 2, 31, 32, 33, 100, 1025])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_contiguous_scans_match_the_cpu(length, dtype, op):
    rng = np.random.default_rng(length)
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-3, 4, size=(5, length)).astype(dtype)
    else:
        x = (rng.uniform(0.5, 1.5, size=(5, length)) * rng.choice([-1, 1], size=(5, length))).astype(dtype)
    cpu = minitorch.tensor(x)
    want = getattr(cpu, op)(1).numpy()
    got = getattr(cpu.to("cuda"), op)(1).cpu().numpy()
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


def test_scan_paths_and_gradients():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 70, 3)).astype(np.float64)
    for dim in (0, 1, 2, -1):
        cpu = minitorch.tensor(x, requires_grad=True)
        dev = minitorch.tensor(x, device="cuda", requires_grad=True)
        cpu.cumsum(dim).pow(2).sum().backward()
        dev.cumsum(dim).pow(2).sum().backward()
        np.testing.assert_allclose(dev.grad.cpu().numpy(), cpu.grad.numpy(), rtol=1e-12, atol=1e-12)
    x = minitorch.randn(64, 300, device="cuda")
    assert _kernels(lambda: x.cumsum(1)) == ["warp_scan_kernel"]
    assert _kernels(lambda: x.cumsum(0)) == ["scan_kernel"]


@pytest.mark.parametrize("length", [1, 2, 31, 32, 33, 100, 1025])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_contiguous_cummax_cummin_match_the_cpu(length, dtype, op):
    """One warp per line scans (value, place) pairs: ties (later place wins) and NaNs
    (a NaN wins until the next NaN) must come out as the CPU's walk one value at a time."""
    x = _lines(dtype, (5, length), np.random.default_rng(length), ties=True)
    cpu = minitorch.tensor(x)
    want_v, want_i = getattr(cpu, op)(1)
    dev = cpu.to("cuda")
    got_v, got_i = getattr(dev, op)(1)
    np.testing.assert_array_equal(got_i.cpu().numpy(), want_i.numpy())
    np.testing.assert_array_equal(got_v.cpu().numpy(), want_v.numpy())
    if length > 1:  # int32 is staged through int64 (copies around the kernel)
        assert "warp_scan_extreme_kernel" in _kernels(lambda: getattr(dev, op)(1))


def test_cummax_along_a_strided_dim_is_a_thread_per_line():
    x = minitorch.randn(40, 3, device="cuda")
    assert _kernels(lambda: x.cummax(0)) == ["scan_extreme_kernel"]
    np.testing.assert_array_equal(x.cummax(0).indices.cpu().numpy(), x.cpu().cummax(0).indices.numpy())
