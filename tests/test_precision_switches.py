"""minitorch.finfo / iinfo, and the TF32 switches linked as PyTorch links them:
backends.cuda.matmul.allow_tf32 <-> set/get_float32_matmul_precision, backends.cudnn.allow_tf32
on its own. On the CPU and in the emulator the switches change nothing numerically."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import DEVICES
from minitorch import backends


@pytest.fixture(autouse=True)
def restore_switches():
    matmul, conv, prec = backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32, minitorch.get_float32_matmul_precision()
    kernel = backends.cuda.matmul.kernel
    yield
    minitorch.set_float32_matmul_precision(prec)
    backends.cuda.matmul.allow_tf32 = matmul
    backends.cudnn.allow_tf32 = conv
    backends.cuda.matmul.kernel = kernel


# ---- finfo / iinfo -------------------------------------------------------------------------

@pytest.mark.parametrize("dt, np_dt", [(minitorch.float32, np.float32), (minitorch.float64, np.float64)])
def test_finfo_fields(dt, np_dt):
    f, n = minitorch.finfo(dt), np.finfo(np_dt)
    assert (f.bits, f.eps, f.max, f.min, f.tiny) == (n.bits, float(n.eps), float(n.max), float(n.min), float(n.tiny))
    assert f.smallest_normal == f.tiny and f.dtype == dt.name
    assert f.resolution == {np.float32: 1e-6, np.float64: 1e-15}[np_dt]
    assert 1.0 + f.eps != 1.0 and np_dt(1.0) + np_dt(f.eps / 2) == np_dt(1.0)


def test_finfo_repr_and_default():
    assert repr(minitorch.finfo(minitorch.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)")
    assert minitorch.finfo() == minitorch.finfo(minitorch.get_default_dtype())
    minitorch.set_default_dtype(minitorch.float64)
    try:
        assert minitorch.finfo().dtype == "float64"
    finally:
        minitorch.set_default_dtype(minitorch.float32)


def test_iinfo_fields_and_repr():
    i = minitorch.iinfo(minitorch.int64)
    assert (i.bits, i.min, i.max, i.dtype) == (64, -(2**63), 2**63 - 1, "int64")
    assert repr(i) == "iinfo(min=-9.22337e+18, max=9.22337e+18, dtype=int64)"


def test_info_refuses_the_wrong_kind():
    with pytest.raises(TypeError, match="floating point"):
        minitorch.finfo(minitorch.int64)
    with pytest.raises(TypeError, match="integer"):
        minitorch.iinfo(minitorch.float32)
    with pytest.raises(TypeError, match="bool is not supported"):
        minitorch.iinfo(minitorch.bool)
    with pytest.raises(TypeError, match="dtype"):
        minitorch.finfo("float32")


# ---- TF32 switches -------------------------------------------------------------------------

def test_defaults_are_pytorchs():
    # a fresh process: no other test's settings
    import subprocess
    import sys

    code = ("import minitorch as m; b = m.backends; "
            "print(b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32, m.get_float32_matmul_precision())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "highest"]


def test_precision_and_matmul_flag_are_linked():
    conv = backends.cudnn.allow_tf32
    minitorch.set_float32_matmul_precision("high")
    assert backends.cuda.matmul.allow_tf32 is True and minitorch.get_float32_matmul_precision() == "high"
    minitorch.set_float32_matmul_precision("medium")
    assert backends.cuda.matmul.allow_tf32 is True and minitorch.get_float32_matmul_precision() == "medium"
    backends.cuda.matmul.allow_tf32 = False
    assert minitorch.get_float32_matmul_precision() == "highest"
    backends.cuda.matmul.allow_tf32 = True
    assert minitorch.get_float32_matmul_precision() == "high"
    minitorch.set_float32_matmul_precision("highest")
    assert backends.cuda.matmul.allow_tf32 is False
    assert backends.cudnn.allow_tf32 is conv  # the convolution switch is its own


def test_switch_errors():
    with pytest.raises(ValueError, match="'highest', 'high' or 'medium'"):
        minitorch.set_float32_matmul_precision("low")
    with pytest.raises(TypeError, match="bool"):
        backends.cudnn.allow_tf32 = "yes"
    with pytest.raises(AttributeError, match="alow_tf32"):
        backends.cudnn.alow_tf32 = False
    with pytest.raises(AttributeError, match="no setting"):
        backends.cuda.matmul.fp16 = True
    with pytest.raises(TypeError, match="kernel"):
        backends.cuda.matmul = True


def test_kernel_choice_is_an_attribute_and_the_old_spelling_works():
    assert backends.cuda.matmul.kernel in ("naive", "tiled", "cublas")
    backends.cuda.matmul = "naive"  # earlier versions' spelling sets the kernel
    assert backends.cuda.matmul.kernel == "naive"
    with backends.cuda.use_matmul("tiled"):
        assert backends.cuda.matmul.kernel == "tiled"
    assert backends.cuda.matmul.kernel == "naive"
    with pytest.raises(ValueError):
        backends.cuda.matmul.kernel = "fast"
    assert "allow_tf32=False" in repr(backends.cuda.matmul)


@pytest.mark.parametrize("device", DEVICES)
def test_tf32_changes_nothing_off_the_gpu(device):
    if device == "cuda" and not minitorch.cuda.is_emulated():
        pytest.skip("on a real GPU TF32 rounds (benchmarks/bench_cuda.py measures it)")
    rng = np.random.default_rng(0)
    a = minitorch.tensor(rng.standard_normal((33, 70)).astype(np.float32), device=device)
    b = minitorch.tensor(rng.standard_normal((70, 20)).astype(np.float32), device=device)
    x = minitorch.tensor(rng.standard_normal((2, 3, 9, 9)).astype(np.float32), device=device)
    w = minitorch.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), device=device)
    outs = []
    for allow in (False, True):
        backends.cuda.matmul.allow_tf32 = allow
        backends.cudnn.allow_tf32 = allow
        outs.append(((a @ b).cpu().numpy(), F.conv2d(x, w).cpu().numpy()))
    for u, v in zip(*outs):
        np.testing.assert_array_equal(u, v)


@pytest.mark.skipif(not minitorch.cuda.is_available() or minitorch.cuda.is_emulated(),
                    reason="cuBLAS runs only on a real GPU")
def test_each_switch_picks_the_gemm_on_a_gpu():
    """Through the profiler: a float32 matmul uses the TF32 GEMM exactly when
    backends.cuda.matmul.allow_tf32 is on, a convolution when backends.cudnn.allow_tf32 is."""
    from minitorch.profiler import ProfilerActivity, profile

    backends.cuda.matmul.kernel = "cublas"
    a, b = minitorch.randn(64, 64, device="cuda"), minitorch.randn(64, 64, device="cuda")
    x, w = minitorch.randn(2, 3, 8, 8, device="cuda"), minitorch.randn(4, 3, 3, 3, device="cuda")

    def gemms(fn):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
        return {k.name for e in prof.events() for k in e.kernels if k.name.startswith("cublas")}

    for matmul_tf32, conv_tf32 in [(False, False), (True, False), (False, True), (True, True)]:
        backends.cuda.matmul.allow_tf32 = matmul_tf32
        backends.cudnn.allow_tf32 = conv_tf32
        want = lambda on: {"cublasGemmStridedBatchedEx(tf32)" if on else "cublasSgemmStridedBatched"}  # noqa: E731
        assert gemms(lambda: a @ b) == want(matmul_tf32)
        with backends.cudnn.flags(enabled=False):  # the im2col path's GEMMs (cuDNN picks its own math)
            assert gemms(lambda: F.conv2d(x, w)) == want(conv_tf32)


@pytest.mark.skipif(not minitorch.cuda.is_available() or minitorch.cuda.is_emulated(),
                    reason="cuBLAS runs only on a real GPU")
@pytest.mark.parametrize("dtype,call", [(minitorch.float16, "cublasGemmStridedBatchedEx(fp16)"),
                                        (minitorch.bfloat16, "cublasGemmStridedBatchedEx(bf16)")])
def test_16bit_matmul_is_one_cublas_gemm_in_its_own_type(dtype, call):
    """No float32 staging: a 16-bit matmul (a transposed operand too) is one cuBLAS call on
    16-bit data, whose float32 sums match the float32 product of the same 16-bit inputs."""
    from minitorch.profiler import ProfilerActivity, profile

    backends.cuda.matmul.kernel = "cublas"
    a = minitorch.randn(3, 48, 40, device="cuda").to(dtype)
    b = minitorch.randn(24, 40, device="cuda").to(dtype).t()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        c = a @ b
    assert [k.name for e in prof.events() for k in e.kernels] == [call]
    assert c.dtype == dtype
    want = (a.float() @ b.float()).cpu().numpy()
    tol = 1e-2 if dtype == minitorch.float16 else 8e-2
    np.testing.assert_allclose(c.float().cpu().numpy(), want, rtol=tol, atol=tol * np.abs(want).max())
