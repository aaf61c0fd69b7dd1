"""``minitorch.backends.cudnn``: the switches (every build), loading cuDNN (any GPU build,
no GPU needed), the descriptors minitorch hands it (checked through cuDNN's own output
size, no GPU needed), and convolutions on it (a real GPU): the same numbers as the
im2col path for every floating dtype, and the launches the profiler sees.
"""
from __future__ import annotations

import ctypes.util
import random

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import backends
from minitorch.profiler import ProfilerActivity, profile
from conftest import DEVICES

GPU_BUILD = minitorch.cuda.is_compiled() and not minitorch.cuda.is_emulated()
REAL_GPU = GPU_BUILD and minitorch.cuda.is_available()
on_cudnn = pytest.mark.skipif(not (REAL_GPU and backends.cudnn.is_available()),
                              reason="needs a GPU and cuDNN (the emulator has no cuDNN)")
has_library = pytest.mark.skipif(not backends.cudnn.is_available(), reason="cuDNN is not loadable here")

SWITCHES = ("enabled", "benchmark", "deterministic", "allow_tf32")


@pytest.fixture
def restore_switches():
    saved = {n: getattr(backends.cudnn, n) for n in SWITCHES}
    yield
    for n, v in saved.items():
        setattr(backends.cudnn, n, v)


def test_switch_defaults_are_pytorchs():
    # allow_tf32 is turned off by conftest for the whole suite (PyTorch's default is True,
    # tested in a fresh interpreter by test_precision_switches).
    assert backends.cudnn.enabled is True
    assert backends.cudnn.benchmark is False
    assert backends.cudnn.deterministic is False


@pytest.mark.parametrize("name", ["enabled", "benchmark", "deterministic"])
def test_switches_set_and_reject_non_bools(name, restore_switches):
    start = getattr(backends.cudnn, name)
    setattr(backends.cudnn, name, not start)
    assert getattr(backends.cudnn, name) is (not start)
    with pytest.raises(TypeError, match=name):
        setattr(backends.cudnn, name, "yes")
    with pytest.raises(AttributeError, match="has no setting 'benchmrk'"):
        backends.cudnn.benchmrk = True
    assert f"{name}=" in repr(backends.cudnn)


def test_flags_sets_for_a_block_and_restores_even_on_error(restore_switches):
    with pytest.raises(KeyError), backends.cudnn.flags(enabled=False, benchmark=True, deterministic=True):
        assert (backends.cudnn.enabled, backends.cudnn.benchmark, backends.cudnn.deterministic) == (False, True, True)
        raise KeyError("inside")
    assert (backends.cudnn.enabled, backends.cudnn.benchmark, backends.cudnn.deterministic) == (True, False, False)


def test_availability_and_version_agree():
    available = backends.cudnn.is_available()
    assert isinstance(available, bool)
    version = backends.cudnn.version()
    assert (version is None) == (not available)
    assert (backends.cudnn.unavailable_reason() == "") == available
    if not GPU_BUILD:
        assert not available  # the CPU-only and emulated builds have no cuDNN
        if minitorch.cuda.is_compiled():
            assert "emulated" in backends.cudnn.unavailable_reason()


@pytest.mark.skipif(not GPU_BUILD or not ctypes.util.find_library("cudnn"),
                    reason="needs a GPU build of minitorch and a libcudnn the dynamic loader finds")
def test_a_gpu_build_loads_the_installed_cudnn_without_a_gpu():
    """dlopen and every dlsym, which need no GPU: CI's nvcc build runs this."""
    assert backends.cudnn.is_available(), backends.cudnn.unavailable_reason()
    assert backends.cudnn.version() >= 90000  # cuDNN 9: major * 10000 + minor * 100 + patch


def _out_size(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


@has_library
def test_cudnn_reads_padding_stride_and_dilation_as_minitorch_means_them():
    """cuDNN's own output size for the descriptors minitorch builds (no GPU needed) is the
    size conv2d gives: each parameter reaches the right slot of cudnnSetConvolution2dDescriptor."""
    rng = random.Random(0)
    for _ in range(200):
        n, c, o = rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 6)
        kh, kw = rng.randint(1, 5), rng.randint(1, 5)
        sh, sw, ph, pw = rng.randint(1, 3), rng.randint(1, 3), rng.randint(0, 3), rng.randint(0, 3)
        dh, dw = rng.randint(1, 3), rng.randint(1, 3)
        h = rng.randint(dh * (kh - 1) + 1, 20)
        w = rng.randint(dw * (kw - 1) + 1, 20)
        got = minitorch._C._cudnn_output_shape((n, c, h, w), (o, c, kh, kw), (sh, sw), (ph, pw), (dh, dw))
        want = (n, o, _out_size(h, kh, sh, ph, dh), _out_size(w, kw, sw, pw, dw))
        assert tuple(got) == want
        # and conv2d on the CPU agrees on the shape
        if rng.random() < 0.1:
            y = F.conv2d(minitorch.zeros(n, c, h, w), minitorch.zeros(o, c, kh, kw), stride=(sh, sw), padding=(ph, pw),
                         dilation=(dh, dw))
            assert tuple(y.shape) == want


# ---------------------------------------------------------------- a real GPU ----

def _conv_and_grads(x, w, b, **kw):
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    b = b.detach().requires_grad_()
    y = F.conv2d(x, w, b, **kw)
    minitorch.manual_seed(1)  # the same upstream gradient on every call
    y.backward(minitorch.randn_like(y))
    return [t.detach().float().cpu().numpy() for t in (y, x.grad, w.grad, b.grad)]


DTYPES = [
    pytest.param(minitorch.float32, 1e-4, id="float32"),
    pytest.param(minitorch.float64, 1e-10, id="float64"),
    pytest.param(minitorch.float16, 2e-2, id="float16"),
    pytest.param(minitorch.bfloat16, 1e-1, id="bfloat16"),
]


@on_cudnn
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("geometry", [
    {"stride": 1, "padding": 1, "dilation": 1},
    {"stride": 2, "padding": 0, "dilation": 1},
    {"stride": (1, 2), "padding": (2, 1), "dilation": (2, 1)},
])
def test_cudnn_matches_im2col(dtype, tol, geometry, restore_switches):
    minitorch.manual_seed(0)
    x = minitorch.randn(3, 4, 11, 9, device="cuda").to(dtype)
    w = minitorch.randn(5, 4, 3, 3, device="cuda").to(dtype)
    b = minitorch.randn(5, device="cuda").to(dtype)
    with backends.cudnn.flags(enabled=False):
        want = _conv_and_grads(x, w, b, **geometry)
    with backends.cudnn.flags(enabled=True):
        got = _conv_and_grads(x, w, b, **geometry)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol * max(1.0, float(np.abs(e).max())))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16], ids=str)
def test_the_comparison_itself_runs_without_a_gpu(device, dtype, restore_switches):
    """The GPU tests' helper, where CI can run it: with cuDNN off and "on" (absent on the CPU and
    in the emulator, so im2col both times) the results must be the same arrays. Where cuDNN
    really runs (a GPU), its sums go in another order: the same within a rounding or two."""
    minitorch.manual_seed(0)
    x, w, b = (minitorch.randn(*s, device=device).to(dtype) for s in ((2, 3, 7, 6), (4, 3, 3, 3), (4,)))
    with backends.cudnn.flags(enabled=False):
        want = _conv_and_grads(x, w, b, padding=1)
    with backends.cudnn.flags(enabled=True):
        got = _conv_and_grads(x, w, b, padding=1)
    assert [a.shape for a in got] == [(2, 4, 7, 6), (2, 3, 7, 6), (4, 3, 3, 3), (4,)]
    for g, e in zip(got, want):
        if device == "cuda" and REAL_GPU and backends.cudnn.is_available():
            tol = 1e-4 if dtype == minitorch.float32 else 2 ** -5  # bfloat16: 8 bits of mantissa
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol * max(1.0, float(np.abs(e).max())))
        else:
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


# Each pass is one library call: a plan of cuDNN's graph API (cuda/cudnn_conv_graph.cu), or a
# legacy function where no plan takes the case (tests/conv/test_cudnn_graph.py tells them apart).
CUDNN_PASSES = [("cudnnBackendExecute(ConvolutionForward)", "cudnnConvolutionForward"),
                ("cudnnBackendExecute(ConvolutionBackwardData)", "cudnnConvolutionBackwardData"),
                ("cudnnBackendExecute(ConvolutionBackwardFilter)", "cudnnConvolutionBackwardFilter")]


def _kernel_names(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


@on_cudnn
def test_conv_forward_and_backward_run_on_cudnn_not_im2col(restore_switches):
    x = minitorch.randn(8, 3, 16, 16, device="cuda", requires_grad=True)
    conv = minitorch.nn.Conv2d(3, 6, 3, padding=1).to("cuda")
    names = _kernel_names(lambda: conv(x).sum().backward())
    for calls in CUDNN_PASSES:
        assert sum(names.count(c) for c in calls) == 1, names
    assert not any("im2col" in n or "col2im" in n for n in names), names
    backends.cudnn.enabled = False
    names = _kernel_names(lambda: conv(x).sum().backward())
    assert not any(n.startswith("cudnn") for n in names) and any("im2col" in n for n in names), names


@on_cudnn
def test_benchmark_and_deterministic_give_the_same_results(restore_switches):
    minitorch.manual_seed(0)
    x = minitorch.randn(4, 8, 20, 20, device="cuda")
    w = minitorch.randn(16, 8, 3, 3, device="cuda")
    b = minitorch.zeros(16, device="cuda")
    plain = _conv_and_grads(x, w, b, padding=1)
    with backends.cudnn.flags(benchmark=True):
        timed = _conv_and_grads(x, w, b, padding=1)
    with backends.cudnn.flags(deterministic=True):
        first = _conv_and_grads(x, w, b, padding=1)
        second = _conv_and_grads(x, w, b, padding=1)
    for p, t, f, s in zip(plain, timed, first, second):
        np.testing.assert_allclose(t, p, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(f, p, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(f, s)  # the same bits on every run


# ---- grouped and transposed convolutions: cuDNN (group count, backward-data as forward) vs im2col ----

def _grads_of(fn, *tensors):
    ts = [t.detach().requires_grad_() for t in tensors]
    y = fn(*ts)
    minitorch.manual_seed(1)
    y.backward(minitorch.randn_like(y))
    return [t.detach().float().cpu().numpy() for t in (y, *(t.grad for t in ts))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [
    ("conv2d", (2, 6, 9, 8), (6, 1, 3, 3), dict(groups=6, padding=1)),                     # depthwise
    ("conv2d", (2, 4, 9, 8), (6, 2, 3, 3), dict(groups=2, stride=2, dilation=2)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 4, 4), dict(stride=2, padding=1)),           # DCGAN's upsampling
    ("conv_transpose2d", (2, 4, 5, 6), (4, 2, 3, 3), dict(stride=2, output_padding=1, groups=2)),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 2, 3, 3), dict(dilation=2, output_padding=1)),  # im2col only
])
def test_grouped_and_transposed_match_with_cudnn_on_and_off(device, case, restore_switches):
    """On a GPU: cuDNN against im2col; on the CPU and in the emulator both runs are im2col."""
    name, xs, ws, kw = case
    minitorch.manual_seed(0)
    x, w = minitorch.randn(*xs, device=device), minitorch.randn(*ws, device=device)
    fn = getattr(F, name)
    with backends.cudnn.flags(enabled=False):
        want = _grads_of(lambda a, b: fn(a, b, **kw), x, w)
    with backends.cudnn.flags(enabled=True):
        got = _grads_of(lambda a, b: fn(a, b, **kw), x, w)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(e).max())))


@on_cudnn
def test_grouped_and_transposed_convolutions_run_on_cudnn(restore_switches):
    x = minitorch.randn(4, 8, 16, 16, device="cuda", requires_grad=True)
    for layer in (minitorch.nn.Conv2d(8, 8, 3, padding=1, groups=8),
                  minitorch.nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)):
        names = _kernel_names(lambda: layer.to("cuda")(x).sum().backward())
        for calls in CUDNN_PASSES:
            assert sum(names.count(c) for c in calls) == 1, (layer, names)
        assert not any("im2col" in n or "col2im" in n for n in names), names
