"""RawKernel's GPU path: NVRTC compiling CUDA C (this needs the GPU build, not a GPU:
CI's nvcc build compiles here with an explicit -arch), and launches on a real GPU."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import minitorch
from minitorch import _C
from minitorch.cuda_kernels.nvrtc_backend import compiler_style_locations

GPU_BUILD = bool(_C._cuda_compiled) and not _C._cuda_is_emulated()
ON_GPU = GPU_BUILD and minitorch.cuda.is_available()

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
template <class T> __global__ void scale(T* x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}
"""

needs_gpu_build = pytest.mark.skipif(not GPU_BUILD, reason="NVRTC is the GPU build's compiler")
needs_gpu = pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")


@needs_gpu_build
def test_nvrtc_compiles_to_a_cubin_and_lowers_names():
    try:
        ok, log, cubin, lowered, version = _C._nvrtc_compile(SAXPY, "saxpy.cu", ["saxpy", "scale<float>"],
                                                             ["--gpu-architecture=sm_80"], "")
    except RuntimeError as e:
        if "was not found" in str(e):
            pytest.skip(f"no NVRTC library here: {e}")
        raise
    assert ok, log
    assert cubin[:4] == b"\x7fELF"  # machine code for sm_80, not PTX
    assert lowered[0] == "saxpy" and lowered[1].startswith("_Z5scaleIfE")
    assert version >= 11010


@needs_gpu_build
def test_nvrtc_compile_error_keeps_the_line_and_message():
    bad = "extern \"C\" __global__ void k(float* x) {\n    x[0] = undefined_name;\n}\n"
    try:
        ok, log, cubin, lowered, _ = _C._nvrtc_compile(bad, "k.cu", ["k"], ["--gpu-architecture=sm_80"], "")
    except RuntimeError as e:
        if "was not found" in str(e):
            pytest.skip(f"no NVRTC library here: {e}")
        raise
    assert not ok and cubin == b"" and lowered == []
    assert "k.cu(2)" in log and "undefined_name" in log
    # what a student sees: the location as the emulator's compiler (and every editor) writes it
    assert compiler_style_locations(log).count("k.cu:2: ") == log.count("k.cu(2): ") >= 1


def test_nvrtc_locations_read_like_the_host_compilers():
    log = ('average3.cu(7): error: expected a ";"\n'
           '      out[i] = sum / 3.0f\n'
           'my kernels/k.cu(12): warning #177-D: variable "t" was declared but never referenced\n'
           '2 errors detected in the compilation of "average3.cu".\n')
    assert compiler_style_locations(log) == (
        'average3.cu:7: error: expected a ";"\n'
        '      out[i] = sum / 3.0f\n'
        'my kernels/k.cu:12: warning #177-D: variable "t" was declared but never referenced\n'
        '2 errors detected in the compilation of "average3.cu".\n')


@needs_gpu_build
@pytest.mark.skipif(ON_GPU, reason="checks the error of a GPU build without a GPU")
def test_raw_kernel_without_a_gpu_says_so():
    # In a fresh interpreter: in this one, an earlier test may have switched the emulator on.
    code = ("import minitorch\n"
            "try:\n"
            f"    minitorch.cuda.RawKernel({SAXPY!r}, 'saxpy')\n"
            "except RuntimeError as e:\n"
            "    print(e)\n")
    env = {k: v for k, v in os.environ.items() if k != "MINITORCH_EMULATE_CUDA"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.match(r"RawKernel: CUDA is not available: no NVIDIA GPU with a working driver was found.*"
                    r"minitorch\.cuda\.emulate\(\)", out.stdout), out.stdout


def test_arguments_are_packed_by_size():
    from minitorch.cuda_kernels.nvrtc_backend import _pack

    assert _pack("k", 0, 4, np.float32(2.5)) == np.float32(2.5).tobytes()
    assert _pack("k", 1, 8, 7) == np.int64(7).tobytes()
    assert _pack("k", 2, 8, 1.5) == np.float64(1.5).tobytes()
    with pytest.raises(TypeError, match=r"k: argument 3 \(a 4-byte parameter\) got a Python float.*numpy.float32"):
        _pack("k", 3, 4, 2.0)
    with pytest.raises(TypeError, match="numpy.int32"):
        _pack("k", 0, 4, 3)
    with pytest.raises(TypeError, match="got a 8-byte float64"):
        _pack("k", 0, 4, np.float64(1.0))
    with pytest.raises(ValueError, match="pass x.cuda"):
        _pack("k", 0, 8, minitorch.ones(2))
    with pytest.raises(TypeError, match="cannot pass a str"):
        _pack("k", 0, 8, "x")


@needs_gpu
def test_saxpy_and_a_template_on_the_gpu():
    n = 1000
    rng = np.random.default_rng(0)
    x_np, y_np = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = minitorch.tensor(x_np, device="cuda"), minitorch.tensor(y_np, device="cuda")
    saxpy = minitorch.cuda.RawKernel(SAXPY, "saxpy")
    saxpy(((n + 255) // 256,), (256,), (np.float32(2.0), x, y, np.int32(n)))
    np.testing.assert_allclose(y.cpu().numpy(), 2 * x_np + y_np, rtol=1e-6)
    scale = minitorch.cuda.RawModule(code=SAXPY, name_expressions=["scale<float>"]).get_function("scale<float>")
    scale[(n + 127) // 128, 128](x, np.float32(3.0), np.int32(n))
    np.testing.assert_allclose(x.cpu().numpy(), 3 * x_np, rtol=1e-6)
    with pytest.raises(TypeError, match="numpy.float32"):
        saxpy((4,), (256,), (2.0, x, y, np.int32(n)))
    with pytest.raises(ValueError, match="over CUDA's limit of 1024"):
        saxpy((1,), (2048,), (np.float32(2.0), x, y, np.int32(n)))
