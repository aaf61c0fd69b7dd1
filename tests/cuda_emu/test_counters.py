"""The CUDA emulator's memory counters (minitorch.cuda.emulator_counters) against counts
made by hand: global requests and 32-byte sectors, shared-memory bank conflicts,
divergent branches, barriers and atomics. One RawModule holds every kernel, so the file
compiles two libraries (the plain one and the counting one)."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import minitorch
from minitorch.cuda import KernelCounters, RawModule, emulator_counters

pytestmark = [
    pytest.mark.skipif(not minitorch.cuda.is_emulated(), reason="tests the CUDA emulator itself"),
    pytest.mark.skipif(not (os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")),
                       reason="no host C++ compiler to build kernels with"),
]

SOURCE = r"""
// one thread per element; i * stride wraps around, so every element is read once
extern "C" __global__ void copy(const float* x, float* y, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(i * stride) % n];
}

// a 32x32 block of threads transposes one 32x32 tile through shared memory
template <int PAD>
__device__ void transpose_tile(const float* x, float* y) {
    __shared__ float tile[32][32 + PAD];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = x[ty * 32 + tx];   // a warp writes one row: 32 banks, no conflict
    __syncthreads();
    y[ty * 32 + tx] = tile[tx][ty];   // a warp reads one column: bank (33*tx + ty) % 32 with the pad
}
extern "C" __global__ void transpose_padded(const float* x, float* y) { transpose_tile<1>(x, y); }
extern "C" __global__ void transpose_unpadded(const float* x, float* y) { transpose_tile<0>(x, y); }

extern "C" __global__ void branches(const float* x, float* y, int uniform) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int side = uniform ? (threadIdx.x / 32) % 2 : threadIdx.x % 2;
    if (side) y[i] = 2.0f * x[i];
    else y[i] = x[i] + 1.0f;
}

extern "C" __global__ void count_up(int* counts, int same) {
    atomicAdd(&counts[same ? 0 : threadIdx.x], 1);
}

extern "C" __global__ void three_barriers(float* y) {
    __shared__ float s[64];
    for (int k = 0; k < 3; ++k) {
        s[threadIdx.x] = k;
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = s[63 - threadIdx.x];
}
"""


@pytest.fixture(scope="module")
def module() -> RawModule:
    return RawModule(SOURCE)


def cuda(a: np.ndarray) -> minitorch.Tensor:
    return minitorch.from_numpy(np.ascontiguousarray(a)).cuda()


def counted(kernel, grid, block, *args) -> KernelCounters:
    with emulator_counters() as c:
        kernel[grid, block](*args)
    assert len(c.launches) == 1 and kernel.last_counters is c.launches[0]
    return c.launches[0]


def test_coalesced_and_stride_32_copy(module):
    n = 1024  # 4 blocks of 256 threads: 32 warps, one load and one store instruction each
    x = np.arange(n, dtype=np.float32)
    copy = module.get_function("copy")
    y = cuda(np.zeros(n, np.float32))
    c = counted(copy, n // 256, 256, cuda(x), y, np.int32(n), np.int32(1))
    np.testing.assert_array_equal(y.cpu().numpy(), x)
    # A warp's 32 floats are 128 contiguous bytes: 4 sectors (cudaMalloc aligns to 256 bytes).
    assert (c.global_load_requests, c.global_load_sectors, c.global_load_bytes) == (32, 32 * 4, 4 * n)
    assert (c.global_store_requests, c.global_store_sectors, c.global_store_bytes) == (32, 32 * 4, 4 * n)
    assert c.coalescing_efficiency == 1.0
    assert (c.blocks, c.warps, c.divergent_branches, c.shared_bank_conflicts, c.barriers, c.atomics) == \
        (4, 32, 0, 0, 0, 0)

    # Stride 32: lane l reads x[32 l + ...], 128 bytes apart, one sector per lane.
    c = counted(copy, n // 256, 256, cuda(x), y, np.int32(n), np.int32(32))
    np.testing.assert_array_equal(y.cpu().numpy(), x[(np.arange(n) * 32) % n])
    assert (c.global_load_requests, c.global_load_sectors) == (32, 32 * 32)
    assert c.global_store_sectors == 128
    assert c.coalescing_efficiency == pytest.approx(2 * 4 * n / (32 * (1024 + 128)))
    assert c.as_dict()["coalescing_efficiency"] == c.coalescing_efficiency


def test_bounds_check_diverges_in_the_last_warp(module):
    n = 1000  # the last warp (elements 992..1023) has 8 lanes inside, 24 outside
    c = counted(module.get_function("copy"), 4, 256, cuda(np.ones(n, np.float32)), cuda(np.zeros(n, np.float32)),
                np.int32(n), np.int32(1))
    assert c.divergent_branches == 1
    assert c.global_load_requests == 32 and c.global_load_bytes == 4 * n
    assert c.global_load_sectors == 31 * 4 + 1  # the last warp's 8 floats: 32 bytes, one sector


@pytest.mark.parametrize("padded, conflicts", [(True, 0), (False, 32 * 31)])
def test_transpose_bank_conflicts(module, padded, conflicts):
    x = np.arange(32 * 32, dtype=np.float32)
    y = cuda(np.zeros(32 * 32, np.float32))
    kernel = module.get_function("transpose_padded" if padded else "transpose_unpadded")
    c = counted(kernel, 1, (32, 32), cuda(x), y)
    np.testing.assert_array_equal(y.cpu().numpy().reshape(32, 32), x.reshape(32, 32).T)
    # 32 warps (one per row ty): one shared store (a row) and one shared load (a column) each.
    assert (c.shared_store_requests, c.shared_load_requests) == (32, 32)
    # Unpadded, the column's 32 words are all in bank ty: a 32-way conflict, 31 extra wavefronts.
    assert c.shared_bank_conflicts == conflicts
    assert c.barriers == 1
    assert c.global_load_sectors == c.global_store_sectors == 32 * 4


@pytest.mark.parametrize("uniform, divergent", [(False, 2), (True, 0)])
def test_divergent_against_warp_uniform_branch(module, uniform, divergent):
    x = np.arange(64, dtype=np.float32)
    y = cuda(np.zeros(64, np.float32))
    c = counted(module.get_function("branches"), 1, 64, cuda(x), y, np.int32(uniform))
    side = (np.arange(64) // 32) % 2 if uniform else np.arange(64) % 2
    np.testing.assert_array_equal(y.cpu().numpy(), np.where(side == 1, 2 * x, x + 1))
    assert c.divergent_branches == divergent  # 2 warps; threadIdx.x % 2 splits each
    # Each side's load and store is its own instruction: divergent, both sides run with half
    # the lanes (2 instructions per warp); uniform, each warp runs one side only.
    assert c.global_load_requests == (2 if uniform else 4)
    assert c.global_load_bytes == 4 * 64


@pytest.mark.parametrize("same, conflicts", [(True, 2 * 31), (False, 0)])
def test_atomics(module, same, conflicts):
    counts = cuda(np.zeros(64, np.int32))
    c = counted(module.get_function("count_up"), 1, 64, counts, np.int32(same))
    assert counts.cpu().numpy().sum() == 64
    assert c.atomics == 64
    assert c.atomic_conflicts == conflicts  # per warp: 32 lanes on one address, 31 wait
    assert c.global_load_requests == c.global_store_requests == 0  # an atomic is neither


def test_barriers_are_counted_per_block(module):
    y = cuda(np.zeros(128, np.float32))
    c = counted(module.get_function("three_barriers"), 2, 64, y)
    assert c.barriers == 2 * 3
    assert (c.shared_store_requests, c.shared_load_requests, c.shared_bank_conflicts) == (2 * 2 * 3, 2 * 2, 0)
    np.testing.assert_array_equal(y.cpu().numpy(), np.full(128, 2.0, np.float32))


def test_counting_is_off_by_default(module):
    kernel = module.get_function("copy")
    kernel[1, 32](cuda(np.ones(32, np.float32)), cuda(np.zeros(32, np.float32)), np.int32(32), np.int32(1))
    assert kernel.last_counters is None
    with emulator_counters() as outer:
        with emulator_counters() as inner:
            kernel[1, 32](cuda(np.ones(32, np.float32)), cuda(np.zeros(32, np.float32)), np.int32(32), np.int32(1))
        kernel[1, 32](cuda(np.ones(32, np.float32)), cuda(np.zeros(32, np.float32)), np.int32(32), np.int32(1))
    assert len(inner.launches) == 1 and len(outer.launches) == 2
    assert "global loads : 1 requests, 4 sectors" in str(outer.launches[0])


def test_without_a_counting_build_the_kernel_runs_uncounted(monkeypatch):
    # A compiler that cannot build the instrumented library (here: an option it rejects).
    from minitorch.cuda_kernels import emulated_backend

    monkeypatch.setattr(emulated_backend, "COUNTING_FLAGS", emulated_backend.COUNTING_FLAGS + ("-fno-such-option",))
    kernel = minitorch.cuda.RawKernel('extern "C" __global__ void ones(float* y) { y[threadIdx.x] = 1.0f; }',
                                      "ones")
    y = cuda(np.zeros(32, np.float32))
    with pytest.warns(RuntimeWarning, match="cannot count this kernel's memory accesses"):
        with emulator_counters() as c:
            kernel[1, 32](y)
    assert c.launches == [] and kernel.last_counters is None
    assert y.cpu().numpy().sum() == 32


def test_profiler_kernel_records_carry_the_counters(module):
    from minitorch.profiler import ProfilerActivity, profile

    copy = module.get_function("copy")
    x, y = cuda(np.ones(1024, np.float32)), cuda(np.zeros(1024, np.float32))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        copy[4, 256](x, y, np.int32(1024), np.int32(32))
    records = [k for e in prof.events() for k in e.kernels if k.name == "copy"]
    assert len(records) == 1
    counters = records[0].counters
    assert counters == copy.last_counters.as_dict()
    assert (counters["global_load_requests"], counters["global_load_sectors"]) == (32, 1024)
    assert counters["coalescing_efficiency"] == pytest.approx(2 * 4096 / (32 * (1024 + 128)))
