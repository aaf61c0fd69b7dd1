"""conv2d on cuDNN's graph API (cuda/cudnn_conv_graph.cu): the operation graphs minitorch
describes, the engine configurations cuDNN's heuristics rank for them, the ones the switches
forbid, and the execution plans made from them -- all for an H100 described in JSON, so no GPU
is needed (cuDNN >= 9.8 builds plans from a device description). Then, on a real GPU, that the
convolutions run through those plans and give im2col's numbers."""
from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import _C, backends
from minitorch.profiler import ProfilerActivity, profile

GPU_BUILD = minitorch.cuda.is_compiled() and not minitorch.cuda.is_emulated()
REAL_GPU = GPU_BUILD and minitorch.cuda.is_available()
has_graph_api = pytest.mark.skipif(not (GPU_BUILD and backends.cudnn.is_available()
                                        and backends.cudnn.version() >= 90800),
                                   reason="needs the GPU build and cuDNN >= 9.8 (a GPU is not needed)")
on_cudnn = pytest.mark.skipif(not (REAL_GPU and backends.cudnn.is_available()), reason="needs a GPU and cuDNN")

# An H100 SXM as cuDNN describes a device (the fields of its device-properties JSON).
H100 = json.dumps({
    "deviceName": "NVIDIA H100 80GB HBM3", "deviceVer": 900, "driverVer": 13000, "cudaDeviceId": 0,
    "multiProcessorCount": 132, "warpSize": 32, "maxThreadsPerBlock": 1024, "maxThreadsPerSM": 2048,
    "maxCtasPerSM": 32, "regsPerBlock": 65536, "maxRegistersPerSM": 65536,
    "maxSharedMemoryPerBlock": 49152, "maxSharedMemoryPerBlockOptin": 232448, "reservedSharedMemoryPerBlock": 1024,
    "maxGridSize": [2147483647, 65535, 65535], "maxBlockSize": [1024, 1024, 64],
    "l2CacheSize": 52428800, "totalGlobalMem": 85899345920, "smClockRateKHz": 1980000, "memClockRateKHz": 2619000,
    "pciDeviceId": 0, "isTccDriver": 0, "supportCoopLaunch": 1,
})
FORWARD, BACKWARD_DATA, BACKWARD_FILTER = 0, 1, 2
PASSES = [pytest.param(FORWARD, id="forward"), pytest.param(BACKWARD_DATA, id="backward_data"),
          pytest.param(BACKWARD_FILTER, id="backward_filter")]
TENSOR_CORE, NONDETERMINISTIC = 1 << 0, 1 << 4  # CUDNN_NUMERICAL_NOTE_TENSOR_CORE, _NONDETERMINISTIC


@pytest.fixture
def restore_switches():
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    saved = {n: getattr(backends.cudnn, n) for n in names}
    yield
    for n, v in saved.items():
        setattr(backends.cudnn, n, v)


def plans(x, w, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1, dtype=minitorch.float32, pass_=FORWARD,
          device=H100):
    """[(engine, workspace bytes or -1, notes, allowed)] for one pass of conv2d(x, w)."""
    return [tuple(r) for r in _C._cudnn_graph_plans(x, w, stride, pad, dil, groups, dtype, pass_, device)]


def runnable(rows):
    """The configurations the switches allow that made a plan."""
    return [r for r in rows if r[3] and r[1] >= 0]


@has_graph_api
@pytest.mark.parametrize("pass_", PASSES)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float16, minitorch.bfloat16, minitorch.float64],
                         ids=str)
def test_a_resnet_convolution_gets_plans_for_every_pass_and_dtype(pass_, dtype, restore_switches):
    rows = plans((128, 64, 32, 32), (64, 64, 3, 3), pad=(1, 1), dtype=dtype, pass_=pass_)
    assert runnable(rows), rows
    assert all(r[1] >= -1 for r in rows)


@has_graph_api
def test_every_geometry_is_described_as_conv2d_means_it(restore_switches):
    """Random padding, stride, dilation and groups (depthwise too): cuDNN checks that the output's
    size fits the convolution as described, so a parameter in the wrong slot fails the graph; every
    pass of every case gets a plan."""
    rng = random.Random(0)
    for _ in range(12):
        groups = rng.choice([1, 1, 2, 4])
        c, o = groups * rng.randint(1, 3), groups * rng.randint(1, 3)
        kh, kw = rng.randint(1, 4), rng.randint(1, 4)
        stride, pad, dil = (rng.randint(1, 3), rng.randint(1, 2)), (rng.randint(0, 2), rng.randint(0, 2)), \
            (rng.randint(1, 2), rng.randint(1, 3))
        h, w = rng.randint(dil[0] * (kh - 1) + 1, 17), rng.randint(dil[1] * (kw - 1) + 1, 17)
        for pass_ in (FORWARD, BACKWARD_DATA, BACKWARD_FILTER):
            rows = plans((2, c, h, w), (o, c // groups, kh, kw), stride, pad, dil, groups, pass_=pass_)
            assert runnable(rows), (c, o, kh, kw, stride, pad, dil, groups, pass_)
    depthwise = plans((4, 32, 16, 16), (32, 1, 3, 3), pad=(1, 1), groups=32)
    assert runnable(depthwise)


@has_graph_api
def test_float32_keeps_off_tensor_cores_while_allow_tf32_is_off(restore_switches):
    """TF32 engines (NumericalNote TENSOR_CORE on float32 data) are ranked for an H100 but run only
    while backends.cudnn.allow_tf32 says so; 16-bit data may always use them."""
    shape = ((128, 64, 32, 32), (64, 64, 3, 3))
    backends.cudnn.allow_tf32 = False
    off = plans(*shape, pad=(1, 1))
    assert any(r[2] & TENSOR_CORE for r in off), "the heuristics rank TF32 engines for float32 on an H100"
    assert runnable(off) and not any(r[2] & TENSOR_CORE for r in runnable(off))
    backends.cudnn.allow_tf32 = True
    on = plans(*shape, pad=(1, 1))
    assert any(r[2] & TENSOR_CORE for r in runnable(on))
    backends.cudnn.allow_tf32 = False
    half = plans(*shape, pad=(1, 1), dtype=minitorch.bfloat16)
    assert any(r[2] & TENSOR_CORE for r in runnable(half))


@has_graph_api
@pytest.mark.parametrize("pass_", PASSES)
def test_deterministic_drops_the_nondeterministic_engines(pass_, restore_switches):
    shape = ((64, 32, 28, 28), (64, 32, 3, 3))
    backends.cudnn.deterministic = True
    rows = plans(*shape, pad=(1, 1), pass_=pass_)
    assert runnable(rows) and not any(r[2] & NONDETERMINISTIC for r in runnable(rows))
    assert all(not r[3] for r in rows if r[2] & NONDETERMINISTIC)
    backends.cudnn.deterministic = False
    assert all(r[3] for r in plans(*shape, pad=(1, 1), pass_=pass_) if r[2] == NONDETERMINISTIC)


@has_graph_api
def test_bad_descriptions_raise(restore_switches):
    shape = ((2, 4, 8, 8), (4, 4, 3, 3))
    with pytest.raises(ValueError, match="device description"):
        plans(*shape, device='{"deviceName": "no such GPU"}')
    with pytest.raises(ValueError, match="device description"):
        plans(*shape, device="not json")
    with pytest.raises(ValueError, match="pass must be"):
        plans(*shape, pass_=3)
    with pytest.raises(ValueError, match="do not fit"):
        plans((2, 4, 8, 8), (4, 3, 3, 3))
    with pytest.raises(ValueError, match="does not fit"):
        plans((2, 4, 2, 2), (4, 4, 3, 3))
    with pytest.raises(ValueError, match="graph API"):  # cuDNN convolves floating types only
        plans(*shape, dtype=minitorch.int32)


# ---------------------------------------------------------------- a real GPU ----

def _names(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


GRAPH_CALLS = ["cudnnBackendExecute(ConvolutionForward)", "cudnnBackendExecute(ConvolutionBackwardData)",
               "cudnnBackendExecute(ConvolutionBackwardFilter)"]
LEGACY_CALLS = ["cudnnConvolutionForward", "cudnnConvolutionBackwardData", "cudnnConvolutionBackwardFilter"]


@on_cudnn
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16, minitorch.float64], ids=str)
def test_convolutions_run_on_graph_plans_and_match_the_legacy_calls(dtype, monkeypatch, restore_switches):
    """One forward and backward: three plan executions and no legacy call; the same numbers as
    MINITORCH_CUDNN_API=legacy (within a rounding: the engines may differ) and as im2col."""
    backends.cudnn.allow_tf32 = False  # float32 in full precision on every path: the tolerance is float32's
    minitorch.manual_seed(0)
    x = minitorch.randn(4, 8, 13, 11, device="cuda").to(dtype)
    w = minitorch.randn(16, 8, 3, 3, device="cuda").to(dtype)

    def run():
        xs, ws = x.detach().requires_grad_(), w.detach().requires_grad_()
        y = F.conv2d(xs, ws, padding=1, stride=(1, 2))
        y.backward(minitorch.ones_like(y))
        return [t.detach().float().cpu().numpy() for t in (y, xs.grad, ws.grad)]

    monkeypatch.delenv("MINITORCH_CUDNN_API", raising=False)
    names = _names(run)
    assert [names.count(n) for n in GRAPH_CALLS] == [1, 1, 1], names
    assert not any(n in LEGACY_CALLS for n in names), names
    graph = run()
    monkeypatch.setenv("MINITORCH_CUDNN_API", "legacy")
    names = _names(run)
    assert [names.count(n) for n in LEGACY_CALLS] == [1, 1, 1], names
    legacy = run()
    with backends.cudnn.flags(enabled=False):
        im2col = run()
    tol = {minitorch.float32: 1e-4, minitorch.bfloat16: 5e-2, minitorch.float64: 1e-10}[dtype]
    for g, l, i in zip(graph, legacy, im2col):
        scale = max(1.0, float(np.abs(i).max()))
        np.testing.assert_allclose(g, l, rtol=tol, atol=tol * scale)
        np.testing.assert_allclose(g, i, rtol=tol, atol=tol * scale)


@on_cudnn
def test_graph_plans_under_benchmark_and_deterministic(restore_switches):
    """benchmark times every plan once per shape; deterministic gives the same bits every run."""
    backends.cudnn.allow_tf32 = False  # else the plans timed and the deterministic ones may round differently
    minitorch.manual_seed(0)
    x = minitorch.randn(4, 8, 20, 20, device="cuda", requires_grad=True)
    w = minitorch.randn(16, 8, 3, 3, device="cuda", requires_grad=True)

    def run():
        x.grad = w.grad = None
        y = F.conv2d(x, w, padding=1)
        y.sum().backward()
        return [t.detach().cpu().numpy() for t in (y, x.grad, w.grad)]

    plain = run()
    with backends.cudnn.flags(benchmark=True):
        timed = run()
        names = _names(run)
        assert [names.count(n) for n in GRAPH_CALLS] == [1, 1, 1], names
    with backends.cudnn.flags(deterministic=True):
        first, second = run(), run()
    for p, t, f, s in zip(plain, timed, first, second):
        np.testing.assert_allclose(t, p, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(f, p, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(f, s)


@on_cudnn
def test_a_view_at_an_odd_address_gets_its_own_plan(restore_switches):
    """x starting 2 bytes into its storage (a bfloat16 view): the plan is made for that alignment."""
    base = minitorch.randn(1 + 2 * 4 * 9 * 9, device="cuda").to(minitorch.bfloat16)
    x = base[1:].view(2, 4, 9, 9)
    w = minitorch.randn(4, 4, 3, 3, device="cuda").to(minitorch.bfloat16)
    got = F.conv2d(x, w, padding=1).float().cpu().numpy()
    with backends.cudnn.flags(enabled=False):
        want = F.conv2d(x, w, padding=1).float().cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=5e-2, atol=5e-2 * max(1.0, float(np.abs(want).max())))
