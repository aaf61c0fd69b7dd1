"""The whole-layer recurrent ops (``_C._lstm_layer``, ``_C._gru_layer``, ``_C._rnn_layer``,
cpp/src/ops/rnn.cpp), which nn.LSTM, nn.GRU and nn.RNN run for each layer and direction: values against a NumPy loop over
the steps, float64 gradcheck of every input, the modules against the step-by-step
composition they replaced (values and every gradient), autocast, errors, and the structure
(graph nodes, kernel launches per step)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch import _C, nn
from minitorch.nn import functional as F
from minitorch.nn.rnn import _gru_step, _lstm_step, _rnn_step
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


# ---- the GRU layer ---------------------------------------------------------------------

def np_gru_layer(xw, h0, w_hh, b_hh=None, reverse=False):
    steps, _, h3 = xw.shape
    H = h3 // 3
    out = np.zeros(xw.shape[:2] + (H,))
    h = h0
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        hw = h @ w_hh.T + (b_hh if b_hh is not None else 0)
        r = sigmoid(xw[t][:, :H] + hw[:, :H])
        z = sigmoid(xw[t][:, H:2 * H] + hw[:, H:2 * H])
        n = np.tanh(xw[t][:, 2 * H:] + r * hw[:, 2 * H:])
        h = (1 - z) * n + z * h
        out[t] = h
    return out, h


def gru_inputs(steps, n, hidden, device, seed=0, grad=False, dtype=None, bias=True):
    arrays = [arr((steps, n, 3 * hidden), seed), arr((n, hidden), seed + 1, 0.5),
              arr((3 * hidden, hidden), seed + 2, 0.4), arr((3 * hidden,), seed + 3, 0.3) if bias else None]
    return arrays, [None if a is None else T(a, device, grad, dtype) for a in arrays]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps,n,hidden", [(1, 1, 1), (5, 3, 4), (3, 4, 33)])
def test_gru_layer_matches_numpy(device, bias, reverse, steps, n, hidden):
    ref_in, args = gru_inputs(steps, n, hidden, device, bias=bias)
    ref = np_gru_layer(*ref_in, reverse=reverse)
    for got, want in zip(_C._gru_layer(*args, reverse), ref):
        assert_close(got, want, rtol=1e-10, atol=1e-12)
    got32 = _C._gru_layer(*gru_inputs(steps, n, hidden, device, dtype=minitorch.float32, bias=bias)[1], reverse)
    for got, want in zip(got32, ref):
        assert got.dtype == minitorch.float32
        assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_gru_layer_errors(device):
    _, (xw, h0, w, b) = gru_inputs(3, 2, 3, device)
    with pytest.raises(ValueError, match="gru_layer"):
        _C._gru_layer(xw[:, :, :8], h0, w, b)  # 8 is not 3H
    with pytest.raises(ValueError, match="gru_layer"):
        _C._gru_layer(xw, h0, w, b[:4])
    with pytest.raises(ValueError, match="gru_layer"):
        _C._gru_layer(xw, h0[:, :2], w, b)
    with pytest.raises(TypeError, match="gru_layer"):
        _C._gru_layer(xw, h0, w, b.float())
    _, (xw, h0, w, b) = gru_inputs(3, 2, 3, device, grad=True)
    out, h = _C._gru_layer(xw[:, :0], h0[:0], w, b)
    assert tuple(out.shape) == (3, 0, 3) and out.grad_fn.name() == "GruLayerBackward0"
    out.sum().backward()
    assert_close(b.grad, np.zeros(9))


# ---- rnn_layer (nn.RNN): h' = tanh or relu of xw[t] + h W_hh^T ----------------------------

def np_rnn_layer(xw, h0, w_hh, relu=False, reverse=False):
    out = np.zeros(xw.shape)
    h = h0
    for t in (range(xw.shape[0] - 1, -1, -1) if reverse else range(xw.shape[0])):
        pre = xw[t] + h @ w_hh.T
        h = np.maximum(pre, 0) if relu else np.tanh(pre)
        out[t] = h
    return out, h


def rnn_inputs(steps, n, hidden, device, seed=0, grad=False, dtype=None):
    xw, h0, w = arr((steps, n, hidden), seed), arr((n, hidden), seed + 1, 0.5), arr((hidden, hidden), seed + 3, 0.4)
    return (xw, h0, w), [T(a, device, grad, dtype) for a in (xw, h0, w)]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps,n,hidden", [(1, 1, 1), (5, 3, 4), (3, 4, 33)])
def test_rnn_layer_matches_numpy(device, relu, reverse, steps, n, hidden):
    ref_in, args = rnn_inputs(steps, n, hidden, device)
    got = _C._rnn_layer(*args, relu, reverse)
    for g, want in zip(got, np_rnn_layer(*ref_in, relu=relu, reverse=reverse)):
        assert_close(g, want, rtol=1e-10, atol=1e-12)
    xw = args[0]
    assert_close(xw, ref_in[0], rtol=0, atol=0)  # the op adds into its own copy, not into xw


def test_rnn_layer_errors(device):
    _, (xw, h0, w) = rnn_inputs(3, 2, 4, device)
    with pytest.raises(ValueError, match="rnn_layer"):
        _C._rnn_layer(xw[:, :, :3], h0, w)
    with pytest.raises(ValueError, match="rnn_layer"):
        _C._rnn_layer(xw, h0[:1], w)
    with pytest.raises(ValueError, match="rnn_layer"):
        _C._rnn_layer(xw, h0, w[:3])
    with pytest.raises(ValueError, match="rnn_layer"):
        _C._rnn_layer(xw[:0], h0, w)
    with pytest.raises(ValueError, match="rnn_layer"):
        _C._rnn_layer(xw[0], h0, w)
    with pytest.raises(TypeError, match="rnn_layer"):
        _C._rnn_layer(xw, h0.float(), w)
    with pytest.raises(TypeError, match="rnn_layer"):
        _C._rnn_layer(xw.long(), h0.long(), w.long())
    _, (xw, h0, w) = rnn_inputs(3, 2, 4, device, grad=True)
    out, h = _C._rnn_layer(xw[:, :0], h0[:0], w)
    assert tuple(out.shape) == (3, 0, 4) and out.grad_fn.name() == "RnnLayerBackward0"
    out.sum().backward()
    assert_close(w.grad, np.zeros((4, 4)))


def _rnn_tanh(xw, h0, w, reverse=False):
    return _C._rnn_layer(xw, h0, w, False, reverse)


def _rnn_relu(xw, h0, w, reverse=False):
    return _C._rnn_layer(xw, h0, w, True, reverse)


# ---- every layer: 16-bit values and float64 gradcheck -------------------------------------

LAYERS = {"lstm": (inputs, np_lstm_layer, _C._lstm_layer), "gru": (gru_inputs, np_gru_layer, _C._gru_layer),
          "rnn_tanh": (rnn_inputs, np_rnn_layer, _rnn_tanh),
          "rnn_relu": (rnn_inputs, lambda *a: np_rnn_layer(*a, relu=True), _rnn_relu)}


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16])
def test_layer_16_bit(device, layer, dtype):
    make, reference, op = LAYERS[layer]
    _, args = make(4, 3, 8, device, dtype=dtype)
    ref = reference(*[np.asarray(a.float().tolist()) for a in args])
    for g, want in zip(op(*args), ref):
        assert g.dtype == dtype
        assert_close(g.float(), want, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("reverse", [False, True])
def test_layer_gradcheck(device, layer, reverse):
    make, _, op = LAYERS[layer]
    _, args = make(4, 2, 3, device, seed=5, grad=True)
    assert gradcheck(lambda *a: op(*a, reverse), args)
    # only the outputs; only the final state(s); a weighted mix (the gradient reaching h_n joins
    # the one from the output at the last step inside the cell's backward kernel)
    assert gradcheck(lambda *a: op(*a, reverse)[0], args)
    assert gradcheck(lambda *a: op(*a, reverse)[-1] * 3, args)
    assert gradcheck(lambda *a: (lambda o, h, *c: o.sum(0) * 2 + h - sum(c))(*op(*a, reverse)), args)


def test_gru_layer_gradcheck_without_bias(device):
    _, args = gru_inputs(2, 3, 2, device, seed=6, grad=True, bias=False)
    assert gradcheck(lambda *a: _C._gru_layer(*a, None, True), args[:3])


# ---- nn.LSTM and nn.GRU against the step-by-step composition they replaced ---------------

def composed(module, x):
    """nn.LSTM / nn.GRU / nn.RNN written step by step (``_lstm_step``, ``_gru_step``, ``_rnn_step``):
    the reference."""
    lstm, gru = isinstance(module, nn.LSTM), isinstance(module, nn.GRU)
    layers_in = x.transpose(0, 1) if module.batch_first else x
    dirs = 2 if module.bidirectional else 1
    finals_h, finals_c = [], []
    for layer in range(module.num_layers):
        outs = []
        for d, suffix in enumerate(("", "_reverse")[:dirs]):
            key = f"l{layer}{suffix}"
            w_hh = getattr(module, f"weight_hh_{key}")
            b_ih = getattr(module, f"bias_ih_{key}") if module.bias else None
            b_hh = getattr(module, f"bias_hh_{key}") if module.bias else None
            if lstm and module.bias:
                b_ih, b_hh = b_ih + b_hh, None
            xw = F.linear(layers_in, getattr(module, f"weight_ih_{key}"), b_ih).unbind(0)
            n = layers_in.shape[1]
            h = minitorch.zeros(n, module.hidden_size, dtype=x.dtype, device=x.device)
            c = minitorch.zeros(n, module.hidden_size, dtype=x.dtype, device=x.device)
            steps = range(len(xw) - 1, -1, -1) if d else range(len(xw))
            hs = [None] * len(xw)
            for t in steps:
                if lstm:
                    h, c = _lstm_step(xw[t], h, c, w_hh, b_hh)
                elif gru:
                    h = _gru_step(xw[t], h, w_hh, b_hh)
                else:
                    h = _rnn_step(xw[t], h, w_hh, b_hh, module.nonlinearity == "relu")
                hs[t] = h
            outs.append(minitorch.stack(hs, 0))
            finals_h.append(h)
            finals_c.append(c)
        layers_in = outs[0] if dirs == 1 else minitorch.cat(outs, 2)
    out = layers_in.transpose(0, 1) if module.batch_first else layers_in
    h_n = minitorch.stack(finals_h, 0)
    return out, ((h_n, minitorch.stack(finals_c, 0)) if lstm else h_n)


def _rnn_relu_module(*args, **kw):
    return nn.RNN(*args, nonlinearity="relu", **kw)


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU, nn.RNN, _rnn_relu_module])
@pytest.mark.parametrize("layers,bidirectional,batch_first,bias", [(1, False, True, True), (2, True, False, True),
                                                                   (2, False, False, False)])
def test_module_matches_the_step_by_step_composition(device, kind, layers, bidirectional, batch_first, bias):
    minitorch.manual_seed(3)
    module = kind(5, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                  bias=bias).to(device).double()
    x = T(arr((2, 4, 5) if batch_first else (4, 2, 5), 9), device, True)

    def loss_of(out, state):
        h, c = state if kind is nn.LSTM else (state, state)
        return (out * out).sum() + h.sum() * 2 - c.sum()

    out, state = module(x)
    loss_of(out, state).backward()
    grads = [p.grad for p in module.parameters()] + [x.grad]
    for p in module.parameters():
        p.grad = None
    x.grad = None
    ref_out, ref_state = composed(module, x)
    loss_of(ref_out, ref_state).backward()
    assert_close(out, ref_out, rtol=1e-10, atol=1e-12)
    for got, want in zip(state if kind is nn.LSTM else [state], ref_state if kind is nn.LSTM else [ref_state]):
        assert_close(got, want, rtol=1e-10, atol=1e-12)
    for g, p in zip(grads, list(module.parameters()) + [x]):
        assert_close(g, p.grad, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("kind,node", [(nn.LSTM, "LstmLayerBackward0"), (nn.GRU, "GruLayerBackward0"),
                                       (nn.RNN, "RnnLayerBackward0")])
def test_module_has_one_node_per_layer_and_direction(device, kind, node):
    module = kind(3, 4, num_layers=2, bidirectional=True).to(device)
    out, _ = module(T(arr((5, 2, 3)).astype(np.float32), device))
    names, seen, keep, todo = [], set(), [], [out.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        keep.append(fn)
        seen.add(id(fn))
        names.append(fn.name())
        todo.extend(f for f, _ in fn.next_functions)
    if device == "cuda" and _C._cudnn_rnn_unavailable_reason() == "" and minitorch.backends.cudnn.enabled:
        # a GPU with cuDNN: one node per layer, both directions in it (tests/nn/test_cudnn_rnn.py)
        assert names.count("CudnnRnnBackward0") == 2 and node not in names, names
    else:
        assert names.count(node) == 4, names
    assert "LstmCellBackward0" not in names and "SigmoidBackward0" not in names
    assert "TanhBackward0" not in names and "MmBackward0" not in names


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU, nn.RNN])
def test_module_hidden_of_another_dtype_is_refused(device, kind):
    module = kind(3, 4).to(device)
    x = T(arr((5, 2, 3)), device, dtype=minitorch.float32)
    h0 = minitorch.zeros(1, 2, 4, dtype=minitorch.float64, device=device)
    with pytest.raises(TypeError, match="same dtype"):
        module(x, (h0, h0.float()) if kind is nn.LSTM else h0)


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU, nn.RNN])
def test_module_under_autocast_runs_in_the_16_bit_dtype(device, kind):
    module = kind(3, 4, num_layers=2).to(device)
    x = T(arr((5, 2, 3)), device, dtype=minitorch.float32)
    with minitorch.autocast(device_type=device, dtype=minitorch.bfloat16):
        out, state = module(x)
    states = state if kind is nn.LSTM else (state,)
    assert out.dtype == minitorch.bfloat16 and all(s.dtype == minitorch.bfloat16 for s in states)
    out.float().sum().backward()
    assert module.weight_hh_l0.grad.dtype == minitorch.float32
    with minitorch.no_grad():
        ref, _ = module(x)
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


@pytest.mark.needs_cuda
@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_gru_layer_launches_two_kernels_per_step():
    steps = 5
    _, args = gru_inputs(steps, 4, 8, "cuda", grad=True, dtype=minitorch.float32)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out, h = _C._gru_layer(*args, True)
    forward = [k.name for e in prof.events() for k in e.kernels]
    assert len(forward) == 2 * steps + 1 and sum("gru_cell" in k for k in forward) == steps, forward
    loss = out.sum()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss.backward()
    backward = [k.name for k in [e for e in prof.events() if e.name == "GruLayerBackward0"][0].kernels]
    # per step the cell's backward and the dh GEMM; then dh0's add, dW_hh's GEMM and b_hh's sum
    assert sum("gru_cell_backward" in k for k in backward) == steps, backward
    assert len(backward) <= 2 * steps + 5, backward


@pytest.mark.needs_cuda
@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16])
def test_rnn_layer_launches_two_kernels_per_step(dtype):
    steps = 5
    _, args = rnn_inputs(steps, 4, 8, "cuda", grad=True, dtype=dtype)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out, h = _C._rnn_layer(*args, False, True)
    forward = [k.name for e in prof.events() for k in e.kernels]
    # xw into the op's scratch and h0 into the state buffer, then per step the GEMM adding
    # h W_hh^T into the scratch's step and tanh's map (16-bit too: no float32 staging)
    assert len(forward) == 2 * steps + 2, forward
    loss = out.sum() + h.sum()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss.backward()
    backward = [k.name for k in [e for e in prof.events() if e.name == "RnnLayerBackward0"][0].kernels]
    # dy's copy and h_n's add, then per step one zip (tanh's backward) and one accumulating
    # GEMM (none before the first step), dh0's GEMM and dW_hh's over all the steps
    assert len(backward) == 2 * steps + 3, backward
