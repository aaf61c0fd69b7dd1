"""Recurrent layers on a device's RNN library (``_C._cudnn_rnn_layer``, ops/rnn.cpp; on a GPU
cuDNN's RNN API, cuda/cudnn_rnn.cu), as PyTorch runs nn.LSTM / GRU / RNN on a GPU.

- Every build: the op's argument checks, and "no library here" (the CPU, the emulator)
  answering None so that the modules run their own layer ops.
- Every build: the op, its graph node (``CudnnRnnBackward0``), the weights' gradients as
  views of one buffer, the bidirectional join and nn's library path, run through the
  reference library (cpu/rnn_reference.cpp: the same contract kept with minitorch's own
  layer ops), registered for the CPU by a fixture: values and every gradient equal to the
  modules' own path, for each cell, direction, bias, layout; a declined case falls back.
- A GPU with cuDNN: the same comparison against minitorch's own kernels on the GPU, and
  the profiler showing cuDNN's calls instead of the per-step kernels.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import _C, backends, nn
from minitorch.profiler import ProfilerActivity, profile

GPU_BUILD = minitorch.cuda.is_compiled() and not minitorch.cuda.is_emulated()
REAL_GPU = GPU_BUILD and minitorch.cuda.is_available()
on_cudnn = pytest.mark.skipif(not (REAL_GPU and _C._cudnn_rnn_unavailable_reason() == ""),
                              reason="needs a GPU and cuDNN's RNN API (the emulator has no cuDNN)")

MODULES = {
    "LSTM": lambda *a, **k: nn.LSTM(*a, **k),
    "GRU": lambda *a, **k: nn.GRU(*a, **k),
    "RNN_TANH": lambda *a, **k: nn.RNN(*a, nonlinearity="tanh", **k),
    "RNN_RELU": lambda *a, **k: nn.RNN(*a, nonlinearity="relu", **k),
}


@pytest.fixture
def reference_library():
    _C._set_reference_rnn_library(True)
    try:
        yield
    finally:
        _C._set_reference_rnn_library(False)


def _weights(mode, I, H, D=1, bias=True, dtype=minitorch.float64, seed=0):
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(D):
        shapes = [(g * H, I), (g * H, H)] + ([(g * H,), (g * H,)] if bias else [])
        out += [minitorch.tensor(rng.standard_normal(s) * 0.3, dtype=dtype) for s in shapes]
    return out


# ---- every build: the checks and "no library here" ----

def test_no_library_on_the_cpu_or_the_emulator_answers_none():
    assert not _C._has_rnn_library("cpu")
    x, h = minitorch.randn(3, 2, 4, dtype=minitorch.float64), minitorch.zeros(1, 2, 5, dtype=minitorch.float64)
    assert _C._cudnn_rnn_layer(x, h, None, _weights("GRU", 4, 5), "GRU") is None
    if minitorch.cuda.is_available() and minitorch.cuda.is_emulated():
        assert not _C._has_rnn_library("cuda")
        dev = [t.to("cuda") for t in _weights("GRU", 4, 5)]
        assert _C._cudnn_rnn_layer(x.to("cuda"), h.to("cuda"), None, dev, "GRU") is None


def test_the_op_checks_its_arguments():
    f64 = minitorch.float64
    x, h, c = minitorch.randn(3, 2, 4, dtype=f64), minitorch.zeros(1, 2, 5, dtype=f64), minitorch.zeros(1, 2, 5, dtype=f64)
    with pytest.raises(ValueError, match="mode 'LSTM', 'GRU'"):
        _C._cudnn_rnn_layer(x, h, c, _weights("LSTM", 4, 5), "lstm")
    with pytest.raises(ValueError, match=r"cudnn_rnn_layer: expected 2 or 4 weights"):
        _C._cudnn_rnn_layer(x, h, c, _weights("LSTM", 4, 5)[:3], "LSTM")
    with pytest.raises(ValueError, match=r"cudnn_rnn_layer: expected weight 1 of shape \(20, 5\), got \(20, 4\)"):
        w = _weights("LSTM", 4, 5)
        w[1] = minitorch.zeros(20, 4, dtype=f64)
        _C._cudnn_rnn_layer(x, h, c, w, "LSTM")
    with pytest.raises(ValueError, match="only an LSTM has a cell state"):
        _C._cudnn_rnn_layer(x, h, c, _weights("GRU", 4, 5), "GRU")
    with pytest.raises(ValueError, match="expected cx of hx's shape"):
        _C._cudnn_rnn_layer(x, h, None, _weights("LSTM", 4, 5), "LSTM")
    with pytest.raises(ValueError, match=r"expected hx of shape \(2, 2, H\)"):
        _C._cudnn_rnn_layer(x, h, c, _weights("LSTM", 4, 5, D=2), "LSTM", True)
    with pytest.raises(ValueError, match="T > 0"):
        _C._cudnn_rnn_layer(x[:0], h, c, _weights("LSTM", 4, 5), "LSTM")
    with pytest.raises(TypeError, match="one floating dtype"):
        _C._cudnn_rnn_layer(x.float(), h, c, _weights("LSTM", 4, 5), "LSTM")


# ---- every build: the op and nn's path through the reference library ----

def _run(module, x, states, backward=True):
    """Output, final states and the gradients of x, the states and every parameter."""
    for p in module.parameters():
        p.grad = None
    out, last = module(x, states if len(states) > 1 else states[0])
    last = list(last) if isinstance(last, tuple) else [last]
    if backward:
        loss = (out * out.detach().cos()).sum() + sum((s * (k + 2)).sum() for k, s in enumerate(last))
        loss.backward()
    grads = [x.grad] + [s.grad for s in states] + [p.grad for p in module.parameters()]
    return [out] + last, grads, out


def _case(mode, bidirectional, bias, batch_first=False, layers=2, dtype=minitorch.float64):
    minitorch.manual_seed(3)
    m = MODULES[mode](4, 5, num_layers=layers, bias=bias, bidirectional=bidirectional, batch_first=batch_first,
                      dtype=dtype)
    D = 2 if bidirectional else 1
    rng = np.random.default_rng(1)
    shape = (3, 6, 4) if batch_first else (6, 3, 4)
    x = minitorch.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)
    states = [minitorch.tensor(rng.standard_normal((layers * D, 3, 5)) * 0.5, dtype=dtype, requires_grad=True)
              for _ in range(2 if mode == "LSTM" else 1)]
    return m, x, states


def _fresh(x, states):
    return x.detach().requires_grad_(), [s.detach().requires_grad_() for s in states]


@pytest.mark.parametrize("mode", list(MODULES))
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_the_library_path_equals_the_layers_own_ops(mode, bidirectional, bias, reference_library):
    m, x, states = _case(mode, bidirectional, bias)
    vals, grads, out = _run(m, x, states)
    assert out.grad_fn.name() == "CudnnRnnBackward0"  # the last layer came from the library
    with minitorch.no_grad():  # inference: no reserve space kept, the same values
        first = m(x, states if len(states) > 1 else states[0])[0]
    np.testing.assert_allclose(first.numpy(), vals[0].detach().numpy(), rtol=1e-12, atol=1e-12)
    _C._set_reference_rnn_library(False)
    x2, states2 = _fresh(x, states)
    ref_vals, ref_grads, ref_out = _run(m, x2, states2)
    assert ref_out.grad_fn.name() != "CudnnRnnBackward0"
    for got, want in zip(vals + grads, ref_vals + ref_grads):
        assert got is not None and want is not None
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_batch_first_unbatched_and_no_grad_through_the_library(mode, reference_library):
    m, x, states = _case(mode, True, True, batch_first=True, layers=1)
    vals, grads, _ = _run(m, x, states)
    with minitorch.no_grad():
        out, _ = m(x, states if len(states) > 1 else states[0])
    assert out.grad_fn is None
    np.testing.assert_allclose(out.numpy(), vals[0].detach().numpy(), rtol=1e-12)
    single = x[0].detach()  # (L, in): unbatched
    s1 = [s[:, 0].detach() for s in states]
    got, _ = m(single, tuple(s1) if len(s1) > 1 else s1[0])
    _C._set_reference_rnn_library(False)
    want, _ = m(single, tuple(s1) if len(s1) > 1 else s1[0])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    _C._set_reference_rnn_library(True)
    x2, states2 = _fresh(x, states)
    _C._set_reference_rnn_library(False)
    ref_vals, ref_grads, _ = _run(m, x2, states2)
    for g, w in zip(vals + grads, ref_vals + ref_grads):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_one_library_call_per_layer_and_the_weights_gradients_are_views(reference_library):
    m, x, states = _case("LSTM", True, True, layers=2)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out, _ = m(x, tuple(states))
    calls = [e for e in prof.events() if e.name == "cudnn_rnn_layer"]
    assert len(calls) == 2, [e.name for e in prof.events()]
    # The op itself: its gradients come back as views of one flat buffer (as cuDNN's weight space).
    w = [p.detach().requires_grad_() for p in list(m.parameters())[:8]]
    xs = x.detach().requires_grad_()
    h = states[0][:2].detach()
    c = states[1][:2].detach()
    y, hy, cy = _C._cudnn_rnn_layer(xs, h, c, w, "LSTM", True)
    assert y.grad_fn.name() == "CudnnRnnBackward0" and hy.grad_fn is y.grad_fn and cy.grad_fn is y.grad_fn
    y.sum().backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in w)
    assert xs.grad is not None and xs.grad.shape == xs.shape


def test_a_declined_case_runs_the_layers_own_ops(reference_library):
    # The reference library declines bfloat16, as some cuDNN versions do.
    m = nn.GRU(4, 5, dtype=minitorch.bfloat16)
    x = minitorch.randn(3, 2, 4, dtype=minitorch.bfloat16, requires_grad=True)
    out, h = m(x)
    assert out.grad_fn.name() != "CudnnRnnBackward0" and tuple(out.shape) == (3, 2, 5)
    out.float().sum().backward()
    assert x.grad is not None


def test_dropout_between_layers_and_the_switch(reference_library):
    m = nn.LSTM(4, 5, num_layers=3, dropout=0.5)
    x = minitorch.randn(6, 2, 4, requires_grad=True)
    out, (h, c) = m(x)
    assert tuple(out.shape) == (6, 2, 5) and tuple(h.shape) == (3, 2, 5)
    out.sum().backward()
    assert x.grad is not None
    with backends.cudnn.flags(enabled=False):  # backends.cudnn.enabled also switches the library off
        out, _ = m(x)
    assert out.grad_fn.name() != "CudnnRnnBackward0"


# ---- a GPU with cuDNN ----

def _kernel_names(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name for e in prof.events() for k in e.kernels]


@on_cudnn
@pytest.mark.parametrize("mode", list(MODULES))
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype,tol", [(minitorch.float32, 2e-4), (minitorch.float64, 1e-10)])
def test_cudnn_equals_minitorchs_kernels(mode, bidirectional, bias, dtype, tol):
    m, x, states = _case(mode, bidirectional, bias, dtype=dtype)
    m = m.to("cuda")
    x = x.detach().to("cuda").requires_grad_()
    states = [s.detach().to("cuda").requires_grad_() for s in states]
    with backends.cudnn.flags(allow_tf32=False):  # float32's tolerance: no TF32 in cuDNN's GEMMs
        vals, grads, out = _run(m, x, states)
        assert out.grad_fn.name() == "CudnnRnnBackward0"
        # Inference (no graph: cuDNN's inference mode, no reserve space) gives the same values.
        with minitorch.no_grad():
            first = m(x, states if len(states) > 1 else states[0])[0]
        np.testing.assert_allclose(first.cpu().numpy(), vals[0].detach().cpu().numpy(), rtol=tol, atol=tol)
    x2, states2 = _fresh(x, states)
    with backends.cudnn.flags(enabled=False):
        ref_vals, ref_grads, ref_out = _run(m, x2, states2)
    assert ref_out.grad_fn.name() != "CudnnRnnBackward0"
    for got, want in zip(vals + grads, ref_vals + ref_grads):
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().cpu().numpy(), rtol=tol, atol=tol)


@on_cudnn
def test_cudnn_runs_the_layer_not_the_per_step_kernels():
    m = nn.LSTM(16, 32, num_layers=2).to("cuda")
    x = minitorch.randn(10, 4, 16, device="cuda", requires_grad=True)
    names = _kernel_names(lambda: m(x)[0].sum().backward())
    for call in ("cudnnRNNForward", "cudnnRNNBackwardData_v8", "cudnnRNNBackwardWeights_v8"):
        assert names.count(call) == 2, names
    assert not any("lstm_cell" in n for n in names), names


@on_cudnn
@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16])
def test_16_bit_and_autocast_close_to_float32(dtype):
    m = nn.LSTM(8, 16, bidirectional=True).to("cuda")
    x = minitorch.randn(5, 3, 8, device="cuda")
    want, _ = m(x)
    with minitorch.autocast("cuda", dtype=dtype):
        got, (h, c) = m(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.detach().float().cpu().numpy(), want.detach().cpu().numpy(), atol=3e-2)
    got.float().sum().backward()
    assert all(p.grad is not None for p in m.parameters())


def test_backward_twice_with_retain_graph_and_an_in_place_weight_change(reference_library):
    m, x, states = _case("GRU", True, True, layers=1)
    out, h = m(x, states[0])
    assert out.grad_fn.name() == "CudnnRnnBackward0"
    out.sum().backward(retain_graph=True)
    first = m.weight_hh_l0.grad.numpy().copy()
    out.sum().backward()
    np.testing.assert_allclose(m.weight_hh_l0.grad.numpy(), 2 * first, rtol=1e-12)
    # A weight changed in place between forward and backward is reported, as on the layers' own path.
    out, h = m(x, states[0])
    with minitorch.no_grad():
        m.weight_hh_l0_reverse.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_a_layer_with_steps_of_its_own_keeps_them(reference_library):
    # The dynamic quantized LSTM runs nn.LSTM's checks with its own (quantized) steps: the
    # library must not run the float weights in their place.
    import minitorch.ao.quantization as tq
    minitorch.manual_seed(0)
    q = tq.quantize_dynamic(nn.Sequential(nn.LSTM(4, 6, num_layers=2, bidirectional=True)), {nn.LSTM})
    x = minitorch.randn(5, 3, 4)
    got, (h, c) = q(x)
    _C._set_reference_rnn_library(False)
    want, (h2, c2) = q(x)
    for a, b in ((got, want), (h, h2), (c, c2)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert got.grad_fn is None or got.grad_fn.name() != "CudnnRnnBackward0"
