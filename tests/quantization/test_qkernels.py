"""The integer kernels (cpu/qgemm.cpp, cuda/qgemm.cu, ops/quantized.cpp) and the quantized
Linear / Conv2d of minitorch.ops.quantized: against a NumPy int64 reference, the float
reference within 1 LSB, and PyTorch 1.13's outputs on the same weights (golden.npz)."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import minitorch
from minitorch.ops import quantized as Q

from conftest import CUDA_SKIP_REASON

G = np.load(pathlib.Path(__file__).with_name("golden.npz"))
f = minitorch.from_numpy
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _ints(g, shape, lo, hi, dtype):
    return g.integers(lo, hi + 1, shape).astype(dtype)


def _np_qgemm(a, a_zp, b, b_zp):
    return (a.astype(np.int64) - a_zp) @ (b.astype(np.int64) - b_zp[:, None]).T


# Shapes for every CPU path: few rows (M < 8, b widened in registers), many rows with full-range
# activations (int16 tiles) and with 7-bit ones (a_max 127: maddubs tiles), K past a multiple of 32.
@pytest.mark.parametrize("m,k,n,a_max", [(0, 5, 3, 255), (3, 0, 2, 255), (1, 1, 1, 255), (5, 37, 7, 255),
                                         (2, 64, 9, 127), (9, 33, 4, 255), (70, 45, 13, 127), (67, 1, 5, 127)])
def test_qgemm_matches_int64_reference(m, k, n, a_max, device):
    g = np.random.default_rng(m * 100 + k * 10 + n)
    a = _ints(g, (m, k), 0, a_max, np.uint8)
    b = _ints(g, (n, k), -128, 127, np.int8)
    a_zp, b_zp = int(g.integers(0, 256)), _ints(g, (n,), -128, 127, np.int32)
    out = minitorch._C._qgemm(f(a).to(device), a_zp, f(b).to(device), f(b_zp).to(device))
    assert out.dtype == minitorch.int32 and out.shape == (m, n)
    np.testing.assert_array_equal(out.cpu().numpy(), _np_qgemm(a, a_zp, b, b_zp))


def test_qgemm_reads_non_contiguous_operands(device):
    g = np.random.default_rng(7)
    a = _ints(g, (40, 6), 0, 255, np.uint8)
    b = _ints(g, (6, 5), -128, 127, np.int8)  # given as b.T: (5, 6) with strides (1, 5)
    b_zp = np.zeros(5, np.int32)
    out = minitorch._C._qgemm(f(a).to(device).T.contiguous().T, 3, f(b).to(device).T, f(b_zp).to(device))
    np.testing.assert_array_equal(out.cpu().numpy(), _np_qgemm(a, 3, b.T, b_zp))


def test_fused_requantization_is_within_one_lsb_of_float(device):
    g = np.random.default_rng(3)
    m, k, n = 17, 45, 11
    a, b = _ints(g, (m, k), 0, 255, np.uint8), _ints(g, (n, k), -127, 127, np.int8)
    a_zp, b_zp = 128, np.zeros(n, np.int32)
    atw = g.uniform(1e-4, 5e-4, n).astype(np.float32)
    bias = g.standard_normal(n).astype(np.float32)
    out_scale, out_zp = 0.05, 100
    for relu in (False, True):
        y = minitorch._C._qlinear(f(a).to(device), a_zp, f(b).to(device), f(b_zp).to(device), f(bias).to(device),
                                  f(atw).to(device), out_scale, out_zp, relu).cpu().numpy().astype(np.int64)
        real = _np_qgemm(a, a_zp, b, b_zp) * atw.astype(np.float64) + bias
        ref = np.clip(np.rint(real / out_scale) + out_zp, out_zp if relu else 0, 255)
        assert np.abs(y - ref).max() <= 1
        # bit for bit the readable float32 reference (fbgemm's formula) in minitorch ops
        ref32 = Q.requantize_reference(f(_np_qgemm(a, a_zp, b, b_zp).astype(np.int32)), f(bias), f(atw),
                                       out_scale, out_zp, relu)
        np.testing.assert_array_equal(y, ref32.numpy())
    yd = minitorch._C._qlinear_dynamic(f(a).to(device), a_zp, f(b).to(device), f(b_zp).to(device), None,
                                       f(atw).to(device), False).cpu().numpy()
    np.testing.assert_allclose(yd, _np_qgemm(a, a_zp, b, b_zp) * atw.astype(np.float64), rtol=1e-6)


def test_qgemm_errors_name_the_op():
    a, b = minitorch.zeros(2, 3, dtype=minitorch.uint8), minitorch.zeros(4, 3, dtype=minitorch.int8)
    zp = minitorch.zeros(4, dtype=minitorch.int32)
    with pytest.raises(TypeError, match="quantized_gemm: expected uint8 activations and int8 weights"):
        minitorch._C._qgemm(b, 0, b, zp)
    with pytest.raises(ValueError, match=r"quantized_gemm: expected a \(M, K\) and b \(N, K\)"):
        minitorch._C._qgemm(a, 0, minitorch.zeros(4, 2, dtype=minitorch.int8), zp)
    with pytest.raises(ValueError, match=r"b_zp must have shape \(4,\)"):
        minitorch._C._qgemm(a, 0, b, minitorch.zeros(3, dtype=minitorch.int32))


def _linear_case(wn):
    x, w = G["linear/x"], G["linear/w"]
    qx = minitorch.quantize_per_tensor(f(x), 0.02, 120, minitorch.quint8)
    if wn == "pt":
        qw = minitorch.quantize_per_tensor(f(w), 0.007, 0, minitorch.qint8)
    else:
        qw = minitorch.quantize_per_channel(f(w), f(G["linear/w_scales"]), minitorch.zeros(7, dtype=minitorch.int64),
                                            0, minitorch.qint8)
    return x, qx, qw


@pytest.mark.parametrize("wn", ["pt", "pc"])
def test_quantized_linear_matches_pytorch(wn, device):
    x, qx, qw = _linear_case(wn)
    qx, qw, b = qx.to(device), qw.to(device), f(G["linear/b"]).to(device)
    # PyTorch's goldens come from its onednn engine (Debian's 1.13 has no fbgemm): allow 1 LSB
    for fn, key in ((Q.linear, "y"), (Q.linear_relu, "y_relu")):
        y = fn(qx, qw, b, 0.05, 110)
        assert y.dtype == minitorch.quint8 and y.q_scale() == 0.05 and y.q_zero_point() == 110
        assert np.abs(y.int_repr().cpu().numpy().astype(int) - G[f"linear/{wn}/{key}"]).max() <= 1
    y = Q.linear(qx, qw, None, 0.05, 110)
    assert np.abs(y.int_repr().cpu().numpy().astype(int) - G[f"linear/{wn}/y_nobias"]).max() <= 1
    for rr in (False, True):
        yd = Q.linear_dynamic(f(x).to(device), qw, b, reduce_range=rr)
        assert yd.dtype == minitorch.float32
        np.testing.assert_allclose(yd.cpu().numpy(), G[f"linear/{wn}/dyn_{int(rr)}"], rtol=1e-5, atol=1e-5)


def test_quantized_linear_batches_and_weight_zero_points():
    g = np.random.default_rng(5)
    x = g.standard_normal((2, 3, 10)).astype(np.float32)
    w = g.standard_normal((4, 10)).astype(np.float32) * 0.2
    qx = minitorch.quantize_per_tensor(f(x), 0.03, 128, minitorch.quint8)
    qw = minitorch.quantize_per_tensor(f(w), 0.004, 5, minitorch.qint8)  # a non-zero weight zero point
    y = Q.linear(qx, qw, None, 0.02, 128)
    assert y.shape == (2, 3, 4)
    real = qx.dequantize().numpy() @ qw.dequantize().numpy().T
    assert np.abs(y.dequantize().numpy() - real).max() <= 0.02 * 0.5 + 1e-4


def _conv_args(c):
    a = G[f"{c}/args"]
    return int(a[0]), int(a[1]), tuple(int(v) for v in a[2:4]), tuple(int(v) for v in a[4:6])


@pytest.mark.parametrize("cn", ["g1", "g2"])
@pytest.mark.parametrize("wn", ["pt", "pc"])
def test_quantized_conv2d_matches_pytorch(cn, wn):
    c = f"conv_{cn}"
    groups, stride, padding, dilation = _conv_args(c)
    qx = minitorch.quantize_per_tensor(f(G[f"{c}/x"]), 0.03, 100, minitorch.quint8)
    w = f(G[f"{c}/w"])
    qw = (minitorch.quantize_per_tensor(w, 0.01, 0, minitorch.qint8) if wn == "pt" else
          minitorch.quantize_per_channel(w, f(G[f"{c}/w_scales"]), minitorch.zeros(6, dtype=minitorch.int64), 0,
                                         minitorch.qint8))
    y = Q.conv2d(qx, qw, f(G[f"{c}/b"]), stride, padding, dilation, groups, 0.04, 90)
    assert y.dtype == minitorch.quint8 and y.shape == G[f"{c}/{wn}/y"].shape
    assert np.abs(y.int_repr().numpy().astype(int) - G[f"{c}/{wn}/y"]).max() <= 1
    yr = Q.conv2d_relu(qx, qw, f(G[f"{c}/b"]), stride, padding, dilation, groups, 0.04, 90)
    np.testing.assert_array_equal(yr.int_repr().numpy(), np.maximum(y.int_repr().numpy(), 90))


def test_quantized_conv2d_on_emulated_cuda():
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    c = "conv_g1"
    qx = minitorch.quantize_per_tensor(f(G[f"{c}/x"][:1, :, :4, :4]), 0.03, 100, minitorch.quint8)
    qw = minitorch.quantize_per_tensor(f(G[f"{c}/w"][:2]), 0.01, 0, minitorch.qint8)
    cpu = Q.conv2d(qx, qw, None, 1, 1, 1, 1, 0.04, 90)
    gpu = Q.conv2d(qx.cuda(), qw.cuda(), None, 1, 1, 1, 1, 0.04, 90)
    assert gpu.is_cuda
    np.testing.assert_array_equal(gpu.int_repr().cpu().numpy(), cpu.int_repr().numpy())


def test_quantized_op_errors():
    _, qx, qw = _linear_case("pt")
    with pytest.raises(TypeError, match="quantized::linear: expected a quantized input"):
        Q.linear(qx.dequantize(), qw, None, 0.1, 0)
    with pytest.raises(RuntimeError, match="does not match the weight's in_features"):
        Q.linear(qx[:, :5], qw, None, 0.1, 0)
    with pytest.raises(RuntimeError, match="qint8 quantized weight"):
        Q.linear(qx, qx, None, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"bias of shape \(7,\)"):
        Q.linear(qx, qw, minitorch.ones(3), 0.1, 0)
    with pytest.raises(RuntimeError, match="expected a float input"):
        Q.linear_dynamic(qx, qw)


@pytest.mark.parametrize("capability", ["default", "sse"])
def test_fallback_paths_agree(capability):
    """MINITORCH_CPU_CAPABILITY=default runs the readable triple loop (zero points as correction
    terms), sse the portable int16 loop: both give the AVX2 path's integers."""
    code = ("import numpy as np, minitorch as mt\n"
            "g = np.random.default_rng(0)\n"  # (a 7-bit case, which AVX2 runs on maddubs, is above)
            "a = g.integers(0, 256, (70, 45)).astype(np.uint8); b = g.integers(-128, 128, (13, 45)).astype(np.int8)\n"
            "zp = g.integers(-128, 128, 13).astype(np.int32)\n"
            "out = mt._C._qgemm(mt.from_numpy(a), 77, mt.from_numpy(b), mt.from_numpy(zp)).numpy()\n"
            "ref = (a.astype(np.int64) - 77) @ (b.astype(np.int64) - zp[:, None]).T\n"
            "assert (out == ref).all(), 'mismatch'\n"
            "print(mt.backends.cpu.get_cpu_capability())\n")
    # the child imports the minitorch under test (an installed one has no _C in python/)
    env = dict(os.environ, MINITORCH_CPU_CAPABILITY=capability,
               PYTHONPATH=os.path.dirname(os.path.dirname(minitorch.__file__)))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
