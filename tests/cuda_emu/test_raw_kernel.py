"""minitorch.cuda.RawKernel in the emulator: students' CUDA C compiled by the host
C++ compiler against cuda/emu and launched on "cuda" tensors, checked against NumPy.

Compiled kernels are cached on disk (MINITORCH_CACHE_DIR or ~/.cache/minitorch), so
only the first run pays for compiling; the cache tests use a fresh directory.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import minitorch
from minitorch.cuda import CompileError, RawKernel, RawModule, emulator_schedule, get_emulator_schedule
from minitorch.cuda_kernels.source import find_kernels, rewrite_dynamic_shared
from kernel_sources import SLIDING_AVERAGE

pytestmark = [
    pytest.mark.skipif(not minitorch.cuda.is_emulated(), reason="RawKernel tests for the emulated CUDA build"),
    pytest.mark.skipif(not (os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
                            or shutil.which("clang++")), reason="no host C++ compiler to build kernels with"),
]

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def cuda(a: np.ndarray) -> minitorch.Tensor:
    return minitorch.from_numpy(np.ascontiguousarray(a)).cuda()


def numpy(t: minitorch.Tensor) -> np.ndarray:
    return t.cpu().numpy()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def saxpy() -> RawKernel:
    return RawKernel(SAXPY, "saxpy")


# ------------------------------------------------------------------ kernels

@pytest.mark.parametrize("style", ["cupy", "numba"])
def test_saxpy_both_launch_styles(saxpy, rng, style):
    n = 1000  # not a multiple of the block: the bounds check matters
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    tx, ty = cuda(x), cuda(y)
    grid, block = (n + 255) // 256, 256
    if style == "cupy":
        saxpy((grid,), (block,), (np.float32(2.5), tx, ty, np.int32(n)))
    else:
        saxpy[grid, block](np.float32(2.5), tx, ty, np.int32(n))
    np.testing.assert_allclose(numpy(ty), 2.5 * x + y, rtol=1e-6)


def test_map_kernel_with_cpp_linkage(rng):
    # No extern "C": the launcher names the kernel as the source does, mangled or not.
    square = RawKernel(r"""
    // Grid-stride loop: any grid covers any n.
    __global__ void square(const double* x, double* out, long long n) {
        for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            out[i] = x[i] * x[i];
    }""", "square")
    x = rng.standard_normal((37, 11))
    out = minitorch.empty(37, 11, dtype=minitorch.float64).cuda()
    square(3, 64, (cuda(x), out, x.size))  # a Python int is a long long
    np.testing.assert_array_equal(numpy(out), x * x)


def test_zip_kernel(rng):
    where_greater = RawKernel(r"""
    extern "C" __global__ void pick(const float* a, const float* b, const bool* take_a, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = take_a[i] ? a[i] : b[i];
    }""", "pick")
    a, b = rng.standard_normal(300, dtype=np.float32), rng.standard_normal(300, dtype=np.float32)
    out = minitorch.zeros(300).cuda()
    where_greater[3, 128](cuda(a), cuda(b), cuda(a > b), out, np.int32(300))
    np.testing.assert_array_equal(numpy(out), np.maximum(a, b))


MATMUL = r"""
#define TILE 16
// C[M, N] = A[M, K] @ B[K, N], row-major. One thread per element of C; a 16x16 block
// computes a 16x16 tile of C, walking K in 16-wide tiles of A and B held in shared memory.
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int K, int N) {
    __shared__ float a[TILE][TILE];
    __shared__ float b[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        a[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[row * K + k0 + threadIdx.x] : 0.0f;
        b[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < K && col < N ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();  // the tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) sum += a[threadIdx.y][k] * b[k][threadIdx.x];
        __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    if (row < M && col < N) C[row * N + col] = sum;
}
"""


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_tiled_matmul_2d_grid(rng, schedule):
    M, K, N = 37, 29, 45  # none a multiple of the tile
    A, B = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    C = minitorch.empty(M, N).cuda()
    with emulator_schedule(schedule):
        RawKernel(MATMUL, "matmul")[((N + 15) // 16, (M + 15) // 16), (16, 16)](
            cuda(A), cuda(B), C, np.int32(M), np.int32(K), np.int32(N))
    np.testing.assert_allclose(numpy(C), A @ B, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scope", ["function", "file"])
def test_dynamic_shared_memory(rng, scope):
    # Reverses each block's slice of x; the block size, and so the buffer, is chosen at launch.
    declaration = "extern __shared__ float buf[];"
    source = f"""
    {declaration if scope == "file" else ""}
    extern "C" __global__ void reverse_blocks(float* x) {{
        {declaration if scope == "function" else ""}
        int t = threadIdx.x, base = blockIdx.x * blockDim.x;
        buf[t] = x[base + t];
        __syncthreads();  // the whole slice is in buf before anyone reads it back
        x[base + t] = buf[blockDim.x - 1 - t];
    }}"""
    x = rng.standard_normal(4 * 48, dtype=np.float32)
    tx = cuda(x)
    kernel = RawKernel(source, "reverse_blocks")
    with emulator_schedule("reverse"):
        if scope == "function":
            kernel(4, 48, (tx,), shared_mem=48 * 4)
        else:
            kernel[4, 48, 0, 48 * 4](tx)  # Numba's [grid, block, stream, shared bytes]
    np.testing.assert_array_equal(numpy(tx), x.reshape(4, 48)[:, ::-1].ravel())


def test_block_reduction_with_atomic_add(rng):
    total = RawKernel(r"""
    // Each block sums 2 * blockDim.x elements with a tree in shared memory; thread 0 adds
    // the block's sum to *out. blockDim.x must be a power of two, at most 256.
    extern "C" __global__ void total(const float* x, float* out, int n) {
        __shared__ float partial[256];
        int t = threadIdx.x, i = blockIdx.x * 2 * blockDim.x + t;
        float v = 0.0f;
        if (i < n) v += x[i];
        if (i + blockDim.x < n) v += x[i + blockDim.x];
        partial[t] = v;
        __syncthreads();  // all partial sums written
        for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
            if (t < stride) partial[t] += partial[t + stride];
            __syncthreads();  // this level done before the next reads it
        }
        if (t == 0) atomicAdd(out, partial[0]);
    }""", "total")
    x = rng.standard_normal(10_000, dtype=np.float32)
    out = minitorch.zeros(1).cuda()
    with emulator_schedule("random:3"):
        total[(10_000 + 511) // 512, 256](cuda(x), out, np.int32(x.size))
    np.testing.assert_allclose(numpy(out)[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)


def test_raw_module_compiles_once_for_several_kernels(rng):
    module = RawModule(code=r"""
    extern "C" __global__ void scale(float* x, float s, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= s;
    }
    extern "C" __global__ void shift(float* x, float s, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] += s;
    }
    template <class T>
    __global__ void fill(T* x, T value, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] = value;
    }""", name_expressions=["fill<long long>"])
    x = rng.standard_normal(100, dtype=np.float32)
    tx = cuda(x)
    module.get_function("scale")(1, 128, (tx, np.float32(3), np.int32(100)))
    module.get_function("shift")[1, 128](tx, np.float32(1), np.int32(100))
    np.testing.assert_allclose(numpy(tx), x * 3 + 1, rtol=1e-6)
    ints = minitorch.zeros(10, dtype=minitorch.int64).cuda()
    module.get_function("fill<long long>")(1, 32, (ints, 7, np.int32(10)))
    assert numpy(ints).tolist() == [7] * 10
    with pytest.raises(ValueError, match=r"no kernel 'scael'.*scale, shift"):
        module.get_function("scael")
    with pytest.raises(ValueError, match="'fill' is a template"):
        module.get_function("fill")


def test_unknown_kernel_name_lists_the_kernels():
    with pytest.raises(ValueError, match=r"no __global__ function named 'saxpi'.*it defines: saxpy"):
        RawKernel(SAXPY, "saxpi")


def test_options_define_macros(rng):
    source = r"""
    extern "C" __global__ void times(float* x) { x[threadIdx.x] *= FACTOR; }"""
    x = rng.standard_normal(8, dtype=np.float32)
    tx = cuda(x)
    RawKernel(source, "times", options=("-DFACTOR=3", "-arch=sm_80", "--use_fast_math"))(1, 8, (tx,))
    np.testing.assert_allclose(numpy(tx), 3 * x, rtol=1e-6)
    with pytest.raises(ValueError, match="option '--frobnicate' is not understood"):
        RawKernel(source, "times", options=("--frobnicate",))


def test_source_reading_finds_kernels_and_keeps_lines():
    source = """
    // __global__ void in_a_comment(int);
    extern "C" __global__ void __launch_bounds__(256) first(float* x) {
        extern __shared__ __align__(16)
            unsigned char bytes[];
    }
    template <class T> __global__ void
    second(T* x);
    """
    assert find_kernels(source) == [("first", False), ("second", True)]
    rewritten = rewrite_dynamic_shared(source)
    assert "constexpr ::mt_raw::DynamicShared<unsigned char> bytes{};" in rewritten
    assert rewritten.count("\n") == source.count("\n")


# ---------------------------------------------------------- the schedule

def sliding_average(x: np.ndarray, block: int) -> np.ndarray:
    rows = x.reshape(-1, block)
    out = rows.copy()
    out[:, 1:] += rows[:, :-1]
    out[:, 2:] += rows[:, :-2]
    return (out / 3.0).ravel()


def run_average(kernel: RawKernel, x: np.ndarray) -> np.ndarray:
    out = minitorch.empty(x.size).cuda()
    kernel[x.size // 64, 64](cuda(x), out)
    return numpy(out)


def test_missing_barrier_shows_under_one_schedule(rng):
    broken = RawKernel(SLIDING_AVERAGE.replace("BARRIER", ""), "average3")
    # Fresh numbers every launch: __shared__ arrays keep the last block's values, which
    # could otherwise hide the stale reads.
    x = rng.standard_normal(4 * 64, dtype=np.float32)
    with emulator_schedule("forward"):
        np.testing.assert_allclose(run_average(broken, x), sliding_average(x, 64), rtol=1e-5)
    x = rng.standard_normal(4 * 64, dtype=np.float32)
    with emulator_schedule("reverse"):
        assert not np.allclose(run_average(broken, x), sliding_average(x, 64), rtol=1e-5)


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:1", "random:2"])
def test_barrier_makes_it_right_under_every_schedule(rng, schedule):
    fixed = RawKernel(SLIDING_AVERAGE.replace("BARRIER", "__syncthreads();  // tile[] complete"), "average3")
    x = rng.standard_normal(4 * 64, dtype=np.float32)
    with emulator_schedule(schedule):
        np.testing.assert_allclose(run_average(fixed, x), sliding_average(x, 64), rtol=1e-5)


def test_schedule_context_manager_restores_and_decorates():
    before = get_emulator_schedule()
    with emulator_schedule("random:7"):
        assert get_emulator_schedule() == "random:7"
        with emulator_schedule("reverse"):
            assert get_emulator_schedule() == "reverse"
        assert get_emulator_schedule() == "random:7"
    assert get_emulator_schedule() == before

    @emulator_schedule("reverse")
    def inside() -> str:
        return get_emulator_schedule()

    assert inside() == "reverse" and get_emulator_schedule() == before
    for bad in ["backwards", "random:", "random:-1", "random:x", ""]:
        with pytest.raises(ValueError, match="forward', 'reverse', 'random:SEED'"):
            emulator_schedule(bad)


@pytest.mark.skipif(not hasattr(minitorch._C, "_cuda_get_emulator_schedule"),
                    reason="this extension cannot set the schedule of minitorch's own kernels")
def test_schedule_covers_minitorchs_own_kernels():
    with emulator_schedule("random:5"):
        assert minitorch._C._cuda_get_emulator_schedule() == "random:5"


# ------------------------------------------------------------------ errors

def test_compile_error_has_the_line_and_the_compilers_message():
    source = ('extern "C" __global__ void broken(float* x) {\n'
              "    int i = threadIdx.x;\n"
              "    x[i] = undeclared_thing;\n"  # line 3
              "}\n")
    with pytest.raises(CompileError) as info:
        RawKernel(source, "broken")
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "broken.cu:3:" in message and "undeclared_thing" in message
    assert "declared" in message  # g++: "was not declared"; clang++: "undeclared identifier"
    assert info.value.log in message


@pytest.mark.parametrize("grid, block, shared, error, match", [
    (1, 1025, 0, ValueError, "block.x = 1025 is over CUDA's limit of 1024"),
    (1, (32, 33), 0, ValueError, "1056 threads is over CUDA's limit of 1024"),
    (1, (1, 1, 65), 0, ValueError, r"block.z = 65 is over CUDA's limit of 64"),
    ((1, 65536), 32, 0, ValueError, r"grid.y = 65536 is over CUDA's limit of 65535"),
    (0, 32, 0, ValueError, r"grid.x = 0; every dimension must be at least 1"),
    (1, (32, 0), 0, ValueError, r"block.y = 0"),
    (1, 32, 64 * 1024, ValueError, "65536 bytes of dynamic shared memory.*48 KiB"),
    (1, 32, -1, ValueError, "dynamic shared memory"),
    (1.5, 32, 0, TypeError, "grid must be an int or a tuple of up to 3 ints"),
    (1, (1, 1, 1, 1), 0, TypeError, "block must be an int or a tuple of up to 3 ints"),
])
def test_bad_launch_configurations_raise_before_launching(saxpy, grid, block, shared, error, match):
    y = minitorch.zeros(4).cuda()
    with pytest.raises(error, match=match):
        saxpy(grid, block, (np.float32(1), y, y, np.int32(4)), shared_mem=shared)
    assert numpy(y).tolist() == [0.0] * 4


def test_bad_arguments_name_the_argument_and_the_fix(saxpy):
    x, y = minitorch.ones(4).cuda(), minitorch.zeros(4).cuda()
    launch = saxpy[1, 32]
    with pytest.raises(TypeError, match=r"saxpy\(float, const float\*, float\*, int\) takes 4 argument\(s\), 3 given"):
        launch(np.float32(1), x, y)
    with pytest.raises(TypeError, match=r"argument 0 \(parameter `float`\).*Python float.*numpy\.float32\(2\.0\)"):
        launch(2.0, x, y, np.int32(4))
    with pytest.raises(TypeError, match=r"argument 3 \(parameter `int`\).*Python int.*numpy\.int32\(4\)"):
        launch(np.float32(2), x, y, 4)
    with pytest.raises(TypeError, match=r"argument 0 \(parameter `float`\) does not take a numpy\.float64"):
        launch(np.float64(2), x, y, np.int32(4))
    with pytest.raises(ValueError, match=r"argument 1 is a tensor on 'cpu'.*x\.cuda\(\)"):
        launch(np.float32(2), minitorch.ones(4), y, np.int32(4))
    with pytest.raises(ValueError, match=r"argument 2 is a non-contiguous tensor.*x\.contiguous\(\)"):
        launch(np.float32(2), x, minitorch.zeros(4, 2).cuda()[:, 0], np.int32(4))
    with pytest.raises(TypeError, match=r"argument 1 \(parameter `const float\*`\) must be a cuda tensor, got ndarray"):
        launch(np.float32(2), np.ones(4, np.float32), y, np.int32(4))
    with pytest.raises(TypeError, match=r"argument 1 .*4-byte elements, but the tensor is int64"):
        launch(np.float32(2), minitorch.ones(4, dtype=minitorch.int64).cuda(), y, np.int32(4))
    with pytest.raises(TypeError, match=r"argument 3 \(parameter `int`\) takes a number, got a tensor"):
        launch(np.float32(2), x, y, minitorch.tensor(4).cuda())
    with pytest.raises(ValueError, match="only the default stream"):
        saxpy[1, 32, 5]
    with pytest.raises(TypeError, match="args must be a tuple"):
        saxpy(1, 32, x)
    assert numpy(y).tolist() == [0.0] * 4


def test_python_numbers_fill_64_bit_parameters():
    kernel = RawKernel(r"""
    extern "C" __global__ void put(double* out, double a, long long b, unsigned long long c, bool d) {
        out[0] = a; out[1] = double(b); out[2] = double(c); out[3] = d ? 1.0 : 0.0;
    }""", "put")
    out = minitorch.zeros(4, dtype=minitorch.float64).cuda()
    kernel(1, 1, (out, 0.5, -3, 7, True))
    assert numpy(out).tolist() == [0.5, -3.0, 7.0, 1.0]


def test_deadlock_raises_instead_of_hanging():
    # Half the warp waits at the barrier; the other half waits in a shuffle for lanes that
    # are at the barrier. Neither can go on.
    kernel = RawKernel(r"""
    extern "C" __global__ void stuck(float* x) {
        float v = x[threadIdx.x];
        if (threadIdx.x < 16) __syncthreads();
        x[threadIdx.x] = __shfl_down_sync(0xffffffffu, v, 1);
    }""", "stuck")
    before = minitorch.cuda.emulator_diagnostics()
    with pytest.raises(RuntimeError, match=r"(?s)stuck: the launch failed in the CUDA emulator.*deadlock.*stuck.cu:4"):
        kernel(1, 32, (minitorch.zeros(32).cuda(),))
    assert minitorch.cuda.emulator_diagnostics() > before


def test_emulator_reports_are_counted_and_warned(capfd):
    kernel = RawKernel(r"""
    extern "C" __global__ void early_exit(float* x) {
        if (threadIdx.x >= 16) return;
        __syncthreads();  // the threads that returned never arrive: undefined on a GPU
        x[threadIdx.x] = 1.0f;
    }""", "early_exit")
    before = minitorch.cuda.emulator_diagnostics()
    with pytest.warns(RuntimeWarning, match="early_exit: the CUDA emulator reported 1 problem"):
        kernel(1, 32, (minitorch.zeros(32).cuda(),))
    assert minitorch.cuda.emulator_diagnostics() == before + 1
    assert "16 of 32 threads exited before reaching __syncthreads()" in capfd.readouterr().err


# ------------------------------------------------------------------- cache

@pytest.fixture
def compiles(monkeypatch, tmp_path):
    """A fresh cache directory, and the list of compiler runs that build a library."""
    monkeypatch.setenv("MINITORCH_CACHE_DIR", str(tmp_path))
    runs = []
    real_run = subprocess.run

    def spy(command, *args, **kwargs):
        if "-shared" in command:
            runs.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    return runs


def test_disk_cache_compiles_once_per_source_and_options(compiles, tmp_path, rng):
    source = SAXPY.replace("y[i] = a * x[i] + y[i]", "y[i] = a * x[i] + y[i] + OFFSET")
    first = RawKernel(source, "saxpy", options=("-DOFFSET=0",))
    assert len(compiles) == 1
    libraries = list((tmp_path / "kernels").iterdir())
    assert [p.suffix for p in libraries] == [".so"]  # no temporary file left behind
    RawKernel(source, "saxpy", options=("-DOFFSET=0",))
    assert len(compiles) == 1 and list((tmp_path / "kernels").iterdir()) == libraries
    other = RawKernel(source, "saxpy", options=("-DOFFSET=1",))
    assert len(compiles) == 2 and len(list((tmp_path / "kernels").iterdir())) == 2

    x = rng.standard_normal(8, dtype=np.float32)
    y0, y1 = minitorch.zeros(8).cuda(), minitorch.zeros(8).cuda()
    first[1, 8](np.float32(1), cuda(x), y0, np.int32(8))
    other[1, 8](np.float32(1), cuda(x), y1, np.int32(8))
    np.testing.assert_allclose(numpy(y1) - numpy(y0), np.ones(8), rtol=1e-6)


def test_failed_compile_leaves_nothing_in_the_cache(compiles, tmp_path):
    with pytest.raises(CompileError):
        RawKernel('extern "C" __global__ void k(float* x) { x[0] = ; }', "k")
    assert list((tmp_path / "kernels").iterdir()) == []


def test_no_compiler_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(RuntimeError, match=r"looked for \$CXX, then c\+\+, g\+\+ and clang\+\+ on PATH"):
        RawKernel(SAXPY, "saxpy")
