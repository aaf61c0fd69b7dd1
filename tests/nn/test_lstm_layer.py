"""The whole-layer LSTM op (``_C._lstm_layer``, cpp/src/ops/rnn.cpp), which nn.LSTM runs for
each layer and direction: values against a NumPy loop over the steps, float64 gradcheck of
all four inputs, nn.LSTM against the step-by-step composition it replaced (values and every
gradient), autocast, errors, and the structure (graph nodes, kernel launches per step)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch import _C, nn
from minitorch.nn import functional as F
from minitorch.nn.rnn import _lstm_step
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import assert_close, gradcheck


def arr(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def T(a, device, grad=False, dtype=None):
    return minitorch.tensor(a, device=device, requires_grad=grad, dtype=dtype)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_lstm_layer(xw, h0, c0, w_hh, reverse=False):
    """The reference: the steps in a NumPy loop."""
    steps, _, h4 = xw.shape
    H = h4 // 4
    out = np.zeros(xw.shape[:2] + (H,))
    h, c = h0, c0
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        g = xw[t] + h @ w_hh.T
        i, f, gg, o = sigmoid(g[:, :H]), sigmoid(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), sigmoid(g[:, 3 * H:])
        c = f * c + i * gg
        h = o * np.tanh(c)
        out[t] = h
    return out, h, c


def inputs(steps, n, hidden, device, seed=0, grad=False, dtype=None):
    xw = arr((steps, n, 4 * hidden), seed)
    h0, c0 = arr((n, hidden), seed + 1, 0.5), arr((n, hidden), seed + 2, 0.5)
    w = arr((4 * hidden, hidden), seed + 3, 0.4)
    return (xw, h0, c0, w), [T(a, device, grad, dtype) for a in (xw, h0, c0, w)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps,n,hidden", [(1, 1, 1), (5, 3, 4), (7, 1, 6), (3, 4, 33)])
def test_lstm_layer_matches_numpy(device, reverse, steps, n, hidden):
    ref_in, args = inputs(steps, n, hidden, device)
    out, h, c = _C._lstm_layer(*args, reverse)
    ref = np_lstm_layer(*ref_in, reverse=reverse)
    for got, want in zip((out, h, c), ref):
        assert_close(got, want, rtol=1e-10, atol=1e-12)
    out32, h32, c32 = _C._lstm_layer(*inputs(steps, n, hidden, device, dtype=minitorch.float32)[1], reverse)
    for got, want in zip((out32, h32, c32), ref):
        assert got.dtype == minitorch.float32
        assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16])
def test_lstm_layer_16_bit(device, dtype):
    ref_in, args = inputs(4, 3, 8, device, dtype=dtype)
    ref = np_lstm_layer(*[np.asarray(a.float().tolist()) for a in args])
    got = _C._lstm_layer(*args, False)
    for g, want in zip(got, ref):
        assert g.dtype == dtype
        assert_close(g.float(), want, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_gradcheck(device, reverse):
    _, args = inputs(4, 2, 3, device, seed=5, grad=True)
    assert gradcheck(lambda *a: _C._lstm_layer(*a, reverse), args)
    # only the outputs; only the final states; a weighted mix (the gradient reaching h_n joins
    # the one from the output at the last step inside the cell's backward kernel)
    assert gradcheck(lambda *a: _C._lstm_layer(*a, reverse)[0], args)
    assert gradcheck(lambda *a: _C._lstm_layer(*a, reverse)[2] * 3, args)
    assert gradcheck(lambda *a: (lambda o, h, c: o.sum(0) * 2 + h - c)(*_C._lstm_layer(*a, reverse)), args)


def test_lstm_layer_gradients_of_some_inputs(device):
    (xw, h0, c0, w), _ = inputs(3, 2, 3, device, seed=2)
    # only w_hh requires grad; then only the input projection
    w_t = T(w, device, True)
    _C._lstm_layer(T(xw, device), T(h0, device), T(c0, device), w_t)[0].sum().backward()
    x_t = T(xw, device, True)
    _C._lstm_layer(x_t, T(h0, device), T(c0, device), T(w, device))[1].sum().backward()
    # the same from a run where everything requires grad
    args = [T(a, device, True) for a in (xw, h0, c0, w)]
    _C._lstm_layer(*args)[0].sum().backward()
    assert_close(w_t.grad, args[3].grad)
    args = [T(a, device, True) for a in (xw, h0, c0, w)]
    _C._lstm_layer(*args)[1].sum().backward()
    assert_close(x_t.grad, args[0].grad)


def test_lstm_layer_no_grad_records_nothing(device):
    _, args = inputs(3, 2, 3, device, grad=True)
    with minitorch.no_grad():
        out, h, c = _C._lstm_layer(*args)
    assert out.grad_fn is None and not out.requires_grad
    out, h, c = _C._lstm_layer(*args)
    assert out.grad_fn.name() == "LstmLayerBackward0" and h.grad_fn is out.grad_fn


def test_lstm_layer_output_changed_in_place_is_refused(device):
    _, args = inputs(3, 2, 3, device, grad=True)
    out, h, c = _C._lstm_layer(*args)
    loss = out.sum()
    with minitorch.no_grad():
        out.mul_(2)
    with pytest.raises(RuntimeError, match="in-?place"):
        loss.backward()


def test_lstm_layer_errors(device):
    _, (xw, h0, c0, w) = inputs(3, 2, 3, device)
    with pytest.raises(ValueError, match="lstm_layer"):
        _C._lstm_layer(xw[:, :, :10], h0, c0, w)  # 10 is not 4H
    with pytest.raises(ValueError, match="lstm_layer"):
        _C._lstm_layer(xw, h0[:1], c0, w)
    with pytest.raises(ValueError, match="lstm_layer"):
        _C._lstm_layer(xw, h0, c0, w[:, :2])
    with pytest.raises(ValueError, match="lstm_layer"):
        _C._lstm_layer(xw[:0], h0, c0, w)
    with pytest.raises(TypeError, match="lstm_layer"):
        _C._lstm_layer(xw.float(), h0, c0, w)
    with pytest.raises(TypeError, match="lstm_layer"):
        _C._lstm_layer(xw.long(), h0.long(), c0.long(), w.long())


def test_lstm_layer_empty_batch(device):
    _, (xw, h0, c0, w) = inputs(3, 2, 3, device, grad=True)
    out, h, c = _C._lstm_layer(xw[:, :0], h0[:0], c0[:0], w)
    assert tuple(out.shape) == (3, 0, 3) and tuple(h.shape) == (0, 3)
    out.sum().backward()
    assert_close(w.grad, np.zeros((12, 3)))


# ---- nn.LSTM against the step-by-step composition it replaced ----------------------------

def composed_lstm(lstm, x):
    """nn.LSTM written with the per-step fused cell (``_lstm_step``): the reference."""
    layers_in = x.transpose(0, 1) if lstm.batch_first else x
    dirs = 2 if lstm.bidirectional else 1
    finals_h, finals_c = [], []
    for layer in range(lstm.num_layers):
        outs = []
        for d, suffix in enumerate(("", "_reverse")[:dirs]):
            key = f"l{layer}{suffix}"
            b = getattr(lstm, f"bias_ih_{key}") + getattr(lstm, f"bias_hh_{key}") if lstm.bias else None
            xw = F.linear(layers_in, getattr(lstm, f"weight_ih_{key}"), b).unbind(0)
            n = layers_in.shape[1]
            h = minitorch.zeros(n, lstm.hidden_size, dtype=x.dtype, device=x.device)
            c = minitorch.zeros(n, lstm.hidden_size, dtype=x.dtype, device=x.device)
            steps = range(len(xw) - 1, -1, -1) if d else range(len(xw))
            hs = [None] * len(xw)
            for t in steps:
                h, c = _lstm_step(xw[t], h, c, getattr(lstm, f"weight_hh_{key}"), None)
                hs[t] = h
            outs.append(minitorch.stack(hs, 0))
            finals_h.append(h)
            finals_c.append(c)
        layers_in = outs[0] if dirs == 1 else minitorch.cat(outs, 2)
    out = layers_in.transpose(0, 1) if lstm.batch_first else layers_in
    return out, (minitorch.stack(finals_h, 0), minitorch.stack(finals_c, 0))


@pytest.mark.parametrize("layers,bidirectional,batch_first,bias", [(1, False, True, True), (2, True, False, True),
                                                                   (2, False, False, False)])
def test_nn_lstm_matches_the_step_by_step_composition(device, layers, bidirectional, batch_first, bias):
    minitorch.manual_seed(3)
    lstm = nn.LSTM(5, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                   bias=bias).to(device).double()
    x = T(arr((2, 4, 5) if batch_first else (4, 2, 5), 9), device, True)
    out, (h, c) = lstm(x)
    loss = (out * out).sum() + h.sum() * 2 - c.sum()
    loss.backward()
    grads = [p.grad for p in lstm.parameters()] + [x.grad]
    for p in lstm.parameters():
        p.grad = None
    x.grad = None
    ref_out, (ref_h, ref_c) = composed_lstm(lstm, x)
    ((ref_out * ref_out).sum() + ref_h.sum() * 2 - ref_c.sum()).backward()
    assert_close(out, ref_out, rtol=1e-10, atol=1e-12)
    assert_close(h, ref_h, rtol=1e-10, atol=1e-12)
    assert_close(c, ref_c, rtol=1e-10, atol=1e-12)
    for g, p in zip(grads, list(lstm.parameters()) + [x]):
        assert_close(g, p.grad, rtol=1e-9, atol=1e-11)


def test_nn_lstm_has_one_node_per_layer_and_direction(device):
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True).to(device)
    out, (h, c) = lstm(T(arr((5, 2, 3)).astype(np.float32), device))
    names, seen, keep, todo = [], set(), [], [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        keep.append(node)
        seen.add(id(node))
        names.append(node.name())
        todo.extend(fn for fn, _ in node.next_functions)
    assert names.count("LstmLayerBackward0") == 4 and "LstmCellBackward0" not in names


def test_nn_lstm_hidden_of_another_dtype_is_refused(device):
    lstm = nn.LSTM(3, 4).to(device)
    x = T(arr((5, 2, 3)), device, dtype=minitorch.float32)
    h0 = minitorch.zeros(1, 2, 4, dtype=minitorch.float64, device=device)
    with pytest.raises(TypeError, match="same dtype"):
        lstm(x, (h0, h0.float()))


def test_nn_lstm_under_autocast_runs_in_the_16_bit_dtype(device):
    lstm = nn.LSTM(3, 4, num_layers=2).to(device)
    x = T(arr((5, 2, 3)), device, dtype=minitorch.float32)
    with minitorch.autocast(device_type=device, dtype=minitorch.bfloat16):
        out, (h, c) = lstm(x)
    assert out.dtype == h.dtype == c.dtype == minitorch.bfloat16
    out.float().sum().backward()
    assert lstm.weight_hh_l0.grad.dtype == minitorch.float32
    with minitorch.no_grad():
        ref, _ = lstm(x)
    assert_close(out.float(), ref, rtol=0.05, atol=0.05)


# ---- structure: kernel launches per step (exact, the same on a GPU and in the emulator) ----

@pytest.mark.needs_cuda
@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_launches_two_kernels_per_step(reverse):
    steps = 6
    _, args = inputs(steps, 4, 8, "cuda", grad=True, dtype=minitorch.float32)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out, h, c = _C._lstm_layer(*args, reverse)
    forward = [k.name for e in prof.events() for k in e.kernels]
    # h0 copied into the state buffer, then per step one GEMM and one cell kernel
    assert len(forward) == 2 * steps + 1, forward
    assert sum("lstm_cell" in k for k in forward) == steps, forward
    loss = out.sum()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss.backward()
    node = [e for e in prof.events() if e.name == "LstmLayerBackward0"]
    backward = [k.name for k in node[0].kernels]
    # the zeros of the unused h_n and c_n gradients and dc's copy, then per step the cell's
    # backward and the dh GEMM, and one GEMM for dW_hh over all the steps
    assert sum("lstm_cell_backward" in k for k in backward) == steps, backward
    assert len(backward) <= 2 * steps + 4, backward
