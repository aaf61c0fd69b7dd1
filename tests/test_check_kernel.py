"""minitorch.testing.check_kernel: a student's RawKernel against a NumPy reference under
every emulator schedule. Each test uses a kernel with one known mistake and asserts on
the facts the failure message must give a student (schedule, output, index, values)."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import minitorch
from minitorch.cuda import RawKernel
from kernel_sources import SLIDING_AVERAGE
from minitorch.testing import DEFAULT_SCHEDULES, KernelCheck, check_kernel

_HAS_COMPILER = bool(os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++"))
ON_GPU = minitorch.cuda.is_available() and not minitorch.cuda.is_emulated()
pytestmark = [
    pytest.mark.switches_emulator_on,  # (check_kernel switches the emulator on: tests/conftest.py runs these last)
    pytest.mark.skipif(not (ON_GPU or minitorch._C._emulator_compiled),
                       reason="check_kernel needs a CUDA device, real or emulated"),
    pytest.mark.skipif(not ON_GPU and not _HAS_COMPILER,
                       reason="no host C++ compiler to build kernels with in the emulator"),
]
emulator_only = pytest.mark.skipif(ON_GPU, reason="schedules and the emulator's reports exist only in the emulator")


@pytest.fixture(autouse=True)
def _emulator_without_a_gpu():
    """Without a GPU the kernels run in the emulator, as check_kernel itself arranges; switched
    on here too, for the RawKernels that tests build before calling it."""
    if not ON_GPU:
        minitorch.cuda.emulate(True)


BLOCK = 64
N = 4 * BLOCK

def average3_inputs(rng: np.random.Generator) -> dict:
    return {"x": rng.standard_normal(N, dtype=np.float32), "out": np.zeros(N, np.float32)}


def average3_reference(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    rows = x.astype(np.float64).reshape(-1, BLOCK)
    total = rows.copy()
    total[:, 1:] += rows[:, :-1]
    total[:, 2:] += rows[:, :-2]
    return (total / 3).ravel()


def check_average3(kernel, **kwargs) -> KernelCheck:
    return check_kernel(kernel, (N // BLOCK, BLOCK), average3_inputs, average3_reference, **kwargs)


def test_correct_kernel_passes_every_schedule():
    result = check_average3(RawKernel(SLIDING_AVERAGE.replace("BARRIER", "__syncthreads();"), "average3"), trials=2)
    assert result.kernel == "average3" and result.trials == 2
    assert 0 <= result.max_abs_error < 1e-6
    if minitorch.cuda.is_emulated():
        assert result.schedules == DEFAULT_SCHEDULES and result.emulated and result.note == ""
        # One more run, counted: 4 blocks of 2 warps, each passing the one barrier.
        c = result.counters
        assert (c.blocks, c.warps, c.barriers) == (4, 8, 4)
        assert c.global_load_requests == 8 and c.global_load_sectors == 8 * 4
        assert "barriers: 4" in str(result)
        assert "right in 4 schedule(s) (forward, reverse, random:1, random:2) x 2 run(s)" in str(result)


@emulator_only
def test_missing_barrier_fails_under_the_schedule_that_exposes_it():
    broken = RawKernel(SLIDING_AVERAGE.replace("BARRIER", ""), "average3")
    # Forward order happens to be right: threads t-1 and t-2 wrote their elements before t reads them.
    assert check_average3(broken, schedules=["forward"]).schedules == ("forward",)
    with pytest.raises(AssertionError) as info:
        check_average3(broken)
    message = str(info.value)
    assert message.startswith("average3: output 'out' is wrong under schedule 'reverse':")
    # Under reverse, thread 0 runs last and is right; thread 1 reads tile[0] before thread 0 wrote it.
    assert "First wrong element at flat index 1:" in message
    assert "It was right under 'forward'" in message and "__syncthreads()" in message


def test_off_by_one_names_the_first_wrong_index():
    # A map over a (5, 37) matrix whose bounds check leaves out the last element.
    square = RawKernel(r"""
    extern "C" __global__ void square(const float* x, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n - 1) out[i] = x[i] * x[i];
    }""", "square")
    with pytest.raises(AssertionError) as info:
        check_kernel(square, (2, 128),
                     lambda rng: {"x": rng.uniform(1, 2, (5, 37)).astype(np.float32),
                                  "out": np.zeros((5, 37), np.float32), "n": np.int32(5 * 37)},
                     lambda x, out, n: x.astype(np.float64) ** 2)
    message = str(info.value)
    assert ("under schedule 'forward'" if minitorch.cuda.is_emulated() else "on the GPU") in message
    assert "1 of 185 elements differ" in message
    assert "flat index 184, index (4, 36): expected" in message and "got 0." in message
    assert "It was right under" not in message  # wrong under the first schedule already: no barrier story


@emulator_only
def test_barrier_in_a_divergent_branch_fails_with_the_emulators_report():
    # The lectures' mistake: the barrier inside `if (i < n)`. The threads past n never reach
    # it; the numbers can still come out right, so only the emulator's report catches it.
    guarded = RawKernel(r"""
    extern "C" __global__ void average3(const float* x, float* out, int n) {
        __shared__ float tile[64];
        int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
        if (i < n) {
            tile[t] = x[i];
            __syncthreads();
            float sum = tile[t];
            if (t >= 1) sum += tile[t - 1];
            if (t >= 2) sum += tile[t - 2];
            out[i] = sum / 3.0f;
        }
    }""", "average3")
    n = N - 6

    def reference(x, out, n):
        return average3_reference(np.concatenate([x, np.zeros(N - n, np.float32)]), None)[:n]

    with pytest.raises(AssertionError) as info:
        check_kernel(guarded, (N // BLOCK, BLOCK),
                     lambda rng: {"x": rng.standard_normal(n, dtype=np.float32), "out": np.zeros(n, np.float32),
                                  "n": np.int32(n)},
                     reference)
    message = str(info.value)
    assert "average3: the CUDA emulator reported a problem under schedule 'forward'" in message
    assert "undefined behaviour" in message
    assert "block (3,0,0): 6 of 64 threads exited before reaching __syncthreads() at average3.cu:7" in message


def test_compile_error_fails_with_the_compilers_log():
    source = SLIDING_AVERAGE.replace("BARRIER", "__syncthreads()")  # no semicolon
    with pytest.raises(AssertionError, match=r"(?s)^the kernel did not compile:\n.*average3\.cu:\d+"):
        check_average3(lambda: RawKernel(source, "average3"))
    with pytest.raises(AssertionError, match="building the kernel failed: .*no __global__ function named 'avg'"):
        check_average3(lambda: RawKernel(source, "avg"))


@emulator_only
def test_deadlock_fails_naming_the_schedule():
    stuck = RawKernel(r"""
    extern "C" __global__ void stuck(float* x, float* out) {
        float v = x[threadIdx.x];
        if (threadIdx.x < 16) __syncthreads();
        out[threadIdx.x] = __shfl_down_sync(0xffffffffu, v, 1);
    }""", "stuck")
    with pytest.raises(AssertionError,
                       match=r"(?s)stuck: the launch under schedule 'forward' raised RuntimeError.*deadlock"):
        check_kernel(stuck, (1, 32), lambda rng: {"x": np.ones(32, np.float32), "out": np.zeros(32, np.float32)},
                     lambda x, out: x)


def test_several_outputs_fresh_inputs_and_a_launch_function():
    # out[i] = x[i] + y[i], diff[i] = x[i] - y[i]; the size changes from run to run.
    kernel = RawKernel(r"""
    extern "C" __global__ void sum_diff(const double* x, const double* y, double* out, double* diff, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { out[i] = x[i] + y[i]; diff[i] = x[i] - y[i]; }
    }""", "sum_diff")
    seen = []

    def make_inputs(rng):
        n = int(rng.integers(1, 300))
        seen.append(n)
        return {"x": rng.standard_normal(n), "y": rng.standard_normal(n), "out": np.zeros(n), "diff": np.zeros(n),
                "n": np.int32(n)}

    result = check_kernel(kernel, lambda a: ((int(a["n"]) + 63) // 64, 64), make_inputs,
                          lambda x, y, **_: {"diff": x - y, "out": x + y}, outputs=("out", "diff"), trials=3)
    runs = 3 * (len(DEFAULT_SCHEDULES) if minitorch.cuda.is_emulated() else 1)
    assert len(seen) == runs and len(set(seen)) > 1  # new inputs for every run...
    seen.clear()
    check_kernel(kernel, lambda a: ((int(a["n"]) + 63) // 64, 64), make_inputs,
                 lambda x, y, **_: (x + y, x - y), outputs=("out", "diff"), trials=3)
    assert len(set(seen)) > 1 and result.max_abs_error == 0.0  # ...the same ones on every call

    with pytest.raises(AssertionError, match="output 'diff' is wrong"):
        check_kernel(kernel, lambda a: ((int(a["n"]) + 63) // 64, 64), make_inputs,
                     lambda x, y, **_: (x + y, y - x), outputs=("out", "diff"))


def test_graders_mistakes_are_value_errors_not_failures():
    ok = RawKernel(SLIDING_AVERAGE.replace("BARRIER", "__syncthreads();"), "average3")
    with pytest.raises(ValueError, match="'forward', 'reverse', 'random:SEED'"):
        check_average3(ok, schedules=["backwards"])
    with pytest.raises(ValueError, match=r"output\(s\) \['y'\] are not among the arguments \['x', 'out'\]"):
        check_average3(ok, outputs="y")
    with pytest.raises(ValueError, match=r"value for output 'out' has shape \(128,\), the output has \(256,\)"):
        check_kernel(ok, (4, 64), average3_inputs, lambda x, out: x[:128])
    with pytest.raises(TypeError, match=r"launch must be \(grid, block\)"):
        check_kernel(ok, 4, average3_inputs, average3_reference)
    with pytest.raises(TypeError, match="make_inputs must return a dict"):
        check_kernel(ok, (4, 64), lambda rng: [1], average3_reference)


@emulator_only
def test_on_a_real_gpu_it_runs_once_and_says_so(monkeypatch):
    # Pretend the device is a GPU: no schedules are tried, and the result says why.
    monkeypatch.setattr(minitorch.cuda, "is_emulated", lambda: False)
    broken = RawKernel(SLIDING_AVERAGE.replace("BARRIER", ""), "average3")
    with minitorch.cuda.emulator_schedule("forward"):  # what check_kernel leaves the "GPU" to: the bug hides
        result = check_average3(broken, schedules=["reverse"])
    assert result.schedules == () and not result.emulated and result.trials == 1
    assert "no schedules were tried" in result.note and "no schedules were tried" in str(result)
