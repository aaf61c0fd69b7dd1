"""FLOPs and bytes in minitorch.profiler (profile(with_flops=True)), the roofline
(minitorch.utils.roofline) and RawKernel launches as profiler events.

Counts are exact and the same on every device (cpp/src/kernel_work.cpp): each test checks
them against the formula docs/profiling.md gives. Never times.
"""
from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import nn
from conftest import CUDA_SKIP_REASON, DEVICES
from minitorch.profiler import ProfilerActivity, profile, record_function
from minitorch.utils.roofline import RooflineRow, roofline_table

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
F32 = 4  # bytes per float32


def activities_for(device: str) -> list:
    return [ProfilerActivity.CPU, ProfilerActivity.CUDA] if device == "cuda" else [ProfilerActivity.CPU]


def only_event(prof, name: str):
    events = [e for e in prof.events() if e.name == name]
    assert len(events) == 1, [e.name for e in prof.events()]
    return events[0]


def check_kernels_add_up(event, device: str) -> None:
    """On cuda the event's work is the sum of its kernels' (charged to main launches)."""
    if device == "cuda":
        assert sum(k.flops for k in event.kernels) == event.flops
        assert sum(k.bytes for k in event.kernels) == event.bytes


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_and_linear_flops(device):
    M, K, N = 6, 5, 7
    a, b = minitorch.randn(M, K, device=device), minitorch.randn(K, N, device=device)
    x, w, bias = minitorch.randn(M, K, device=device), minitorch.randn(N, K, device=device), \
        minitorch.randn(N, device=device)
    p, q = minitorch.randn(3, M, K, device=device), minitorch.randn(3, K, N, device=device)
    with profile(activities=activities_for(device), with_flops=True) as prof:
        a @ b
        F.linear(x, w, bias)
        minitorch.bmm(p, q)
    mm, linear, bmm = prof.events()
    assert (mm.name, linear.name) == ("matmul", "linear")
    assert mm.flops == 2 * M * N * K
    assert mm.bytes == (M * K + K * N + M * N) * F32  # compulsory traffic: a, b and out once
    assert linear.flops == 2 * M * N * K + M * N  # the GEMM, then the bias add
    assert bmm.flops == 3 * 2 * M * N * K
    for e in (mm, linear, bmm):
        check_kernels_add_up(e, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("algorithm", ["im2col", "direct"])
def test_conv2d_flops_forward_and_backward(device, algorithm):
    if device == "cuda" and algorithm == "direct":
        pytest.skip("the direct convolution is the CPU's")
    N, C, H, W, O, KH, KW = 2, 3, 6, 5, 4, 3, 2
    x = minitorch.randn(N, C, H, W, device=device, requires_grad=True)
    w = minitorch.randn(O, C, KH, KW, device=device, requires_grad=True)
    b = minitorch.randn(O, device=device, requires_grad=True)
    # (cuDNN off: on a GPU it would run these convolutions, and its kernels have no col2im)
    with profile(activities=activities_for(device), with_flops=True) as prof, \
            minitorch.backends.cpu.use_conv_algorithm(algorithm), minitorch.backends.cudnn.flags(enabled=False):
        y = F.conv2d(x, w, b, stride=1, padding=1)
        y.sum().backward()
    OH, OW = H + 2 - KH + 1, W + 2 - KW + 1
    gemm = 2 * N * O * OH * OW * C * KH * KW  # each output: a dot product of C*KH*KW terms
    conv = only_event(prof, "conv2d")
    assert conv.flops == gemm + N * O * OH * OW  # plus the bias add
    check_kernels_add_up(conv, device)
    backward = [e for e in prof.events() if "Convolution" in e.name or "Conv" in e.name]
    assert len(backward) == 1, [e.name for e in prof.events()]
    # The input-gradient and weight-gradient GEMMs (each as large as the forward's), col2im's
    # adds (im2col only: the direct convolution adds into the input gradient as it goes), and
    # the bias gradient's sum over (N, OH, OW).
    n_cols = N * C * KH * KW * OH * OW if algorithm == "im2col" else 0
    assert backward[0].flops == 2 * gemm + n_cols + N * O * OH * OW


@pytest.mark.parametrize("device", DEVICES)
def test_attention_layer_norm_softmax_elementwise_flops(device):
    B, Hh, L, S, E = 2, 2, 3, 4, 5
    q = minitorch.randn(B, Hh, L, E, device=device)
    k, v = minitorch.randn(B, Hh, S, E, device=device), minitorch.randn(B, Hh, S, E, device=device)
    x = minitorch.randn(4, 6, device=device)
    ln_w, ln_b = minitorch.randn(6, device=device), minitorch.randn(6, device=device)
    with profile(activities=activities_for(device), with_flops=True) as prof:
        F.scaled_dot_product_attention(q, k, v)
        F.layer_norm(x, (6,), ln_w, ln_b)
        F.softmax(x, -1)
        x.exp()
        x.sum()
    scores = B * Hh * L * S
    sdpa = only_event(prof, "scaled_dot_product_attention")
    # q @ k^T and weights @ v (2*L*S*E each), the scale (1) and the softmax (5) per score
    assert sdpa.flops == 4 * scores * E + scores + 5 * scores
    check_kernels_add_up(sdpa, device)
    assert only_event(prof, "layer_norm").flops == 24 * (5 + 1 + 1)  # with weight and bias
    assert only_event(prof, "softmax").flops == 24 * 5
    exp = only_event(prof, "exp")
    assert exp.flops == 24 and exp.bytes == 2 * 24 * F32
    assert only_event(prof, "sum").flops == 24


@pytest.mark.parametrize("device", DEVICES)
def test_backward_nodes_count_their_gemms(device):
    a = minitorch.randn(4, 5, device=device, requires_grad=True)
    b = minitorch.randn(5, 3, device=device, requires_grad=True)
    y = a @ b
    g = minitorch.ones(4, 3, device=device)
    with profile(activities=activities_for(device), with_flops=True) as prof:
        y.backward(g)
    (node,) = [e for e in prof.events() if e.flops > 0]
    assert node.name.endswith("Backward0")
    assert node.flops == 2 * (2 * 4 * 5 * 3)  # dA = G B^T and dB = A^T G

    x = minitorch.randn(4, 6, device=device, requires_grad=True)
    w, b = minitorch.randn(6, device=device, requires_grad=True), minitorch.randn(6, device=device, requires_grad=True)
    y = F.layer_norm(x, (6,), w, b)
    with profile(activities=activities_for(device), with_flops=True) as prof:
        y.backward(minitorch.ones(4, 6, device=device))
    (node,) = [e for e in prof.events() if e.flops > 0]
    assert node.flops == 24 * ((9 + 1) + 2 + 1)  # grad input (with weight), grad weight, grad bias


@pytest.mark.parametrize("device", DEVICES)
def test_bytes_of_an_elementwise_op_and_without_flops(device):
    n = 1000
    a, b = minitorch.randn(n, device=device), minitorch.randn(n, device=device)
    bias = minitorch.randn(1, device=device)
    with profile(activities=activities_for(device)) as prof:  # with_flops off: bytes only
        a + b
        a + bias.expand(n)
    plain, broadcast = prof.events()
    assert plain.flops == 0  # as PyTorch's, FLOPs only with with_flops=True
    assert plain.bytes == 3 * n * F32  # two inputs and the output
    assert broadcast.bytes == (2 * n + 1) * F32  # a broadcast operand is read once
    if device == "cuda":
        (k,) = plain.kernels
        assert k.bytes == 3 * n * F32 and k.flops == 0
        assert k.shared_memory == 0 and k.counters is None


def test_table_has_the_flops_columns():
    a, b = minitorch.randn(16, 16), minitorch.randn(16, 16)
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        a @ b
        a + b
    table = prof.key_averages().table(sort_by="flops")
    for column in ("Total FLOPs", "GFLOP/s", "Total bytes", "GB/s"):
        assert column in table
    first_row = table.splitlines()[3]
    assert "8.192k" in first_row  # 2 * 16^3, the matmul first
    with profile(activities=[ProfilerActivity.CPU]) as plain:
        a @ b
    assert "Total FLOPs" not in plain.key_averages().table()


@needs_cuda
def test_kernel_averages_table():
    a, b = minitorch.randn(64, device="cuda"), minitorch.randn(64, device="cuda")
    with profile(with_flops=True) as prof:
        for _ in range(3):
            a * b
    (row,) = prof.kernel_averages()
    assert row.count == 3 and row.flops == 3 * 64 and row.bytes == 3 * 3 * 64 * F32
    assert "GB/s" in prof.kernel_averages().table()


def _profile_for_roofline():
    a, b = minitorch.randn(32, 32), minitorch.randn(32, 32)
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        a @ b
        (a + b).exp()
        a.clone()  # a copy: no FLOPs, not on a roofline
    return prof


def test_roofline_table_rows_are_consistent():
    prof = _profile_for_roofline()
    rows = roofline_table(prof, peak_flops=1e12, peak_bandwidth=1e11)
    assert {r.name for r in rows} == {"matmul", "add", "exp"}
    for r in rows:
        assert isinstance(r, RooflineRow)
        assert r.intensity == pytest.approx(r.flops / r.bytes)
        assert r.bound == ("memory" if r.intensity < 10 else "compute")  # ridge at 1e12 / 1e11
        assert r.roof == pytest.approx(min(1e12, r.intensity * 1e11))
        assert r.achieved == pytest.approx(r.flops / (r.time_us * 1e-6))
        assert r.percent_of_roof == pytest.approx(100 * r.achieved / r.roof)
    matmul = next(r for r in rows if r.name == "matmul")
    assert matmul.intensity == pytest.approx(2 * 32**3 / (3 * 32 * 32 * F32))
    assert next(r for r in rows if r.name == "add").intensity == pytest.approx(1 / 12)
    by_event = roofline_table(prof.events(), by="event", peak_flops={"float32": 1e12}, peak_bandwidth=1e11)
    assert [r.name for r in by_event] == ["matmul", "add", "exp"]
    assert roofline_table(prof)  # the CPU estimate as peaks
    with pytest.raises(ValueError, match="by must be"):
        roofline_table(prof, by="layer")
    with pytest.raises(ValueError, match="peak_bandwidth"):
        roofline_table(prof, peak_flops=1e12, peak_bandwidth=0)


def test_roofline_plots_the_points():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minitorch.utils.roofline import roofline

    prof = _profile_for_roofline()
    ax = roofline(prof, peak_flops={"float32": 1e12, "float64": 5e11}, peak_bandwidth=1e11)
    try:
        assert isinstance(ax, matplotlib.axes.Axes)
        (points,) = ax.collections
        offsets = np.asarray(points.get_offsets())
        rows = roofline_table(prof, peak_flops=1e12, peak_bandwidth=1e11)
        assert sorted(offsets[:, 0]) == pytest.approx(sorted(r.intensity for r in rows))
        assert len(ax.lines) == 3  # the memory slope and two ceilings
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert {t.get_text() for t in ax.texts} == {"matmul", "add", "exp"}
    finally:
        plt.close(ax.figure)


def test_roofline_without_matplotlib(monkeypatch):
    from minitorch.utils.roofline import roofline

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        roofline(_profile_for_roofline())


SCALE = r"""
extern "C" __global__ void scale2(const float* x, float* y, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}"""


@needs_cuda
def test_raw_kernel_launch_is_an_event_with_its_record():
    kernel = minitorch.cuda.RawKernel(SCALE, "scale2")
    n = 100
    x, y = minitorch.randn(n, device="cuda"), minitorch.zeros(n, device="cuda")
    with profile(with_flops=True) as prof:
        kernel((4,), (32,), (x, y, np.int32(n)), shared_mem=128)
        with record_function("mine"):
            kernel[2, 64](x, y, np.int32(n))
    alone, mine = prof.events()
    assert alone.name == "scale2"
    (k,) = alone.kernels
    assert k.name == "scale2" and k.grid == (4, 1, 1) and k.block == (32, 1, 1) and k.shared_memory == 128
    assert k.bytes == 2 * n * F32 and alone.bytes == k.bytes  # x and y, once each
    assert k.duration > 0 and alone.device_time_total == k.duration  # the emulated run's host time
    assert mine.name == "mine"
    (k2,) = mine.kernels
    assert k2.grid == (2, 1, 1) and k2.block == (64, 1, 1) and k2.shared_memory == 0
    np.testing.assert_allclose(y.cpu().numpy(), 2 * x.cpu().numpy())
    # Outside a profile a launch records nothing (and still runs).
    kernel[1, 128](x, y, np.int32(n))


def test_peaks_come_from_get_device_properties(monkeypatch):
    from minitorch.utils.roofline import device_peaks

    class Props:  # the shape of minitorch.cpu/cuda.get_device_properties()
        name = "a test CPU"
        peak_flops = {"fp64": 1e11, "fp32": 2e11, "int8": 9e13}
        peak_bandwidth = 1e10

    monkeypatch.setattr(minitorch.cpu, "get_device_properties", lambda device=None: Props(), raising=False)
    ceilings, bandwidth, source = device_peaks("cpu")
    assert ceilings == {"fp64": 1e11, "fp32": 2e11} and bandwidth == 1e10 and source == "a test CPU"
    rows = roofline_table(_profile_for_roofline())  # no kernels: the CPU's peaks
    for r in rows:
        assert r.roof == pytest.approx(min(2e11, r.intensity * 1e10))  # judged against fp32


@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_and_conv_transpose2d_flops(device):
    N, C, H, W, O, KH, KW = 2, 3, 4, 5, 6, 3, 2
    x, w, b = (minitorch.randn(N, C, H, W, device=device), minitorch.randn(C, O, KH, KW, device=device),
               minitorch.randn(O, device=device))
    x1, w1 = minitorch.randn(N, C, 7, device=device), minitorch.randn(O, C, 3, device=device)
    # im2col on the CPU as on cuda (the direct convolution has no col2im: see the test above)
    with profile(activities=activities_for(device), with_flops=True) as prof, \
            minitorch.backends.cpu.use_conv_algorithm("im2col"), minitorch.backends.cudnn.flags(enabled=False):
        F.conv_transpose2d(x, w, b)
        F.conv1d(x1, w1)
    transposed, conv1d = prof.events()
    OH, OW = H + KH - 1, W + KW - 1
    # conv2d's input-gradient GEMM run forward, col2im's adds, and the bias add
    assert transposed.flops == 2 * N * C * H * W * O * KH * KW + N * O * KH * KW * H * W + N * O * OH * OW
    assert conv1d.name == "conv2d"  # conv1d is a conv2d of height 1
    assert conv1d.flops == 2 * N * O * (7 - 3 + 1) * C * 3


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_and_foreach_optimizer_flops(device):
    """The fused BatchNorm (6 per element training, 3 eval; backward 9) and the multi-tensor
    Adam step (14 per element, summed over its parameters): kernel_work.cpp's formulas."""
    bn = nn.BatchNorm2d(4).to(device)
    x = minitorch.randn(2, 4, 3, 3, device=device, requires_grad=True)
    n = x.numel()
    with profile(activities=activities_for(device), with_flops=True) as prof:
        bn(x).sum().backward()
    assert only_event(prof, "batch_norm").flops == 6 * n
    assert only_event(prof, "NativeBatchNormBackward0").flops == 9 * n
    bn.eval()
    with profile(activities=activities_for(device), with_flops=True) as prof:
        bn(x)
    assert only_event(prof, "batch_norm").flops == 3 * n
    params = [nn.Parameter(minitorch.ones(k, device=device)) for k in (10, 1, 7)]
    for p in params:
        p.grad = minitorch.ones_like(p)
    opt = minitorch.optim.Adam(params)
    with profile(activities=activities_for(device), with_flops=True) as prof:
        opt.step()
    assert only_event(prof, "adam_step_foreach").flops == 14 * 18
