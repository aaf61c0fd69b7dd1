"""Recurrent layers (``RNNCell``, ``LSTMCell``, ``GRUCell``, ``RNN``, ``LSTM``, ``GRU``) against a
NumPy reference that runs the gate formulas step by step with the same weights, on every
device; float64 gradcheck through short sequences; PyTorch's names, reprs and errors; and,
when PyTorch is importable, outputs and gradients against torch with torch's weights."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.testing import gradcheck

from conftest import TORCH_SKIP_REASON, to_numpy

MODES = ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def make_seq(mode, input_size, hidden_size, **kwargs):
    if mode.startswith("RNN"):
        return nn.RNN(input_size, hidden_size, nonlinearity=mode[4:].lower(), **kwargs)
    return getattr(nn, mode)(input_size, hidden_size, **kwargs)


def make_cell(mode, input_size, hidden_size, **kwargs):
    if mode.startswith("RNN"):
        return nn.RNNCell(input_size, hidden_size, nonlinearity=mode[4:].lower(), **kwargs)
    return getattr(nn, mode + "Cell")(input_size, hidden_size, **kwargs)


def arr(shape, seed, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def mt(a, device, grad=False):
    return minitorch.tensor(np.asarray(a), device=device, requires_grad=grad)


def params_np(module) -> dict:
    return {k: to_numpy(v) for k, v in module.state_dict().items()}


# ---------------------------------------------------------------- NumPy reference ----

def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_step(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of each cell, written from the formulas in PyTorch's documentation."""
    gi = x @ w_ih.T + (0.0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0.0 if b_hh is None else b_hh)
    n = h.shape[-1]
    if mode == "RNN_TANH":
        return np.tanh(gi + gh), None
    if mode == "RNN_RELU":
        return np.maximum(gi + gh, 0.0), None
    if mode == "LSTM":
        i, f, g, o = np.split(gi + gh, 4, axis=-1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        return sig(o) * np.tanh(c), c
    r = sig(gi[..., :n] + gh[..., :n])
    z = sig(gi[..., n:2 * n] + gh[..., n:2 * n])
    cand = np.tanh(gi[..., 2 * n:] + r * gh[..., 2 * n:])
    return (1 - z) * cand + z * h, None


def np_seq(mode, p, x, h0, c0, num_layers, bidirectional, batch_first, zero_between_layers=False):
    """The whole module: returns (output, h_n, c_n) in the module's layouts."""
    unbatched = x.ndim == 2
    if unbatched:
        x, h0 = x[:, None], h0[:, None]
        c0 = None if c0 is None else c0[:, None]
    elif batch_first:
        x = x.transpose(1, 0, 2)
    D = 2 if bidirectional else 1
    L, N, _ = x.shape
    hn, cn = [], []
    for layer in range(num_layers):
        if layer > 0 and zero_between_layers:
            x = np.zeros_like(x)
        outs = []
        for d in range(D):
            key = f"l{layer}" + ("_reverse" if d else "")
            h = h0[layer * D + d]
            c = None if c0 is None else c0[layer * D + d]
            out = np.zeros((L, N, h.shape[-1]))
            for t in (range(L - 1, -1, -1) if d else range(L)):
                h, c = np_step(mode, x[t], h, c, p[f"weight_ih_{key}"], p[f"weight_hh_{key}"],
                               p.get(f"bias_ih_{key}"), p.get(f"bias_hh_{key}"))
                out[t] = h
            outs.append(out)
            hn.append(h)
            cn.append(c)
        x = np.concatenate(outs, axis=-1)
    hn = np.stack(hn)
    cn = np.stack(cn) if c0 is not None else None
    if unbatched:
        return x[:, 0], hn[:, 0], (None if cn is None else cn[:, 0])
    return (x.transpose(1, 0, 2) if batch_first else x), hn, cn


def test_reference_gru_matches_explicit_formula():
    """The reference's GRU step, checked once by hand on numbers: n uses r * (W_hn h + b_hn)."""
    w_ih, w_hh = np.full((3, 1), 0.5), np.full((3, 1), -0.25)
    b_ih, b_hh = np.array([0.1, 0.2, 0.3]), np.array([0.4, 0.5, 0.6])
    x, h = np.array([[2.0]]), np.array([[1.0]])
    r, z = sig(1.0 + 0.1 - 0.25 + 0.4), sig(1.0 + 0.2 - 0.25 + 0.5)
    n = np.tanh(1.0 + 0.3 + r * (-0.25 + 0.6))
    got, _ = np_step("GRU", x, h, None, w_ih, w_hh, b_ih, b_hh)
    np.testing.assert_allclose(got, [[(1 - z) * n + z * 1.0]], rtol=1e-15)


# ------------------------------------------------------------------------ cells ----

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_numpy(device, mode, bias, batched):
    cell = make_cell(mode, 3, 4, bias=bias).double().to(device)
    p = params_np(cell)
    shape = (2,) if batched else ()
    x, h, c = arr(shape + (3,), 1), arr(shape + (4,), 2), arr(shape + (4,), 3)
    hx = (mt(h, device), mt(c, device)) if mode == "LSTM" else mt(h, device)
    got = cell(mt(x, device), hx)
    want_h, want_c = np_step(mode, x, h, c, p["weight_ih"], p["weight_hh"], p.get("bias_ih"), p.get("bias_hh"))
    if mode == "LSTM":
        got_h, got_c = got
        np.testing.assert_allclose(to_numpy(got_c), want_c, rtol=1e-12, atol=1e-12)
    else:
        got_h = got
    assert got_h.device.type == device and tuple(got_h.shape) == shape + (4,)
    np.testing.assert_allclose(to_numpy(got_h), want_h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_cell_default_state_is_zeros(device, mode):
    cell = make_cell(mode, 3, 2).to(device)
    x = mt(arr((2, 3), 4).astype(np.float32), device)
    zeros = minitorch.zeros(2, 2, device=device)
    hx = (zeros, zeros) if mode == "LSTM" else zeros
    a, b = cell(x), cell(x, hx)
    for u, v in zip(a if mode == "LSTM" else [a], b if mode == "LSTM" else [b]):
        assert u.dtype == minitorch.float32
        np.testing.assert_array_equal(to_numpy(u), to_numpy(v))


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_cell(device, mode):
    cell = make_cell(mode, 2, 2).double().to(device)
    x, h, c = mt(arr((2, 2), 5), device, True), mt(arr((2, 2), 6), device, True), mt(arr((2, 2), 7), device, True)
    wa, wb = mt(arr((2, 2), 8), device), mt(arr((2, 2), 9), device)

    def f(x, h, c, *params):
        if mode == "LSTM":
            h2, c2 = cell(x, (h, c))
            return (h2 * wa).sum() + (c2 * wb).sum()
        return (cell(x, h) * wa).sum()

    inputs = (x, h, c) if mode == "LSTM" else (x, h, mt(arr((2, 2), 7), device))
    assert gradcheck(f, inputs + tuple(cell.parameters()))


# -------------------------------------------------------------------- sequences ----

# (num_layers, bidirectional, batch_first, initial states given, batched)
CONFIGS = [
    pytest.param(1, False, False, False, True, id="plain"),
    pytest.param(2, True, True, True, True, id="2layers-bidir-batch_first-h0"),
    pytest.param(2, False, False, True, True, id="2layers-h0"),
    pytest.param(1, True, True, True, False, id="unbatched-bidir-h0"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("num_layers,bidirectional,batch_first,with_h0,batched", CONFIGS)
def test_sequence_matches_numpy(device, mode, num_layers, bidirectional, batch_first, with_h0, batched):
    m = make_seq(mode, 3, 2, num_layers=num_layers, bidirectional=bidirectional,
                 batch_first=batch_first).double().to(device)
    p = params_np(m)
    D, L, N = 2 if bidirectional else 1, 4, 2
    xshape = ((N, L, 3) if batch_first else (L, N, 3)) if batched else (L, 3)
    sshape = (num_layers * D, N, 2) if batched else (num_layers * D, 2)
    x = arr(xshape, 10)
    h0 = arr(sshape, 11) if with_h0 else np.zeros(sshape)
    c0 = arr(sshape, 12) if with_h0 else np.zeros(sshape)
    if mode == "LSTM":
        hx = (mt(h0, device), mt(c0, device)) if with_h0 else None
        out, (hn, cn) = m(mt(x, device), hx)
    else:
        out, hn = m(mt(x, device), mt(h0, device) if with_h0 else None)
    want_out, want_hn, want_cn = np_seq(mode, p, x, h0, c0 if mode == "LSTM" else None, num_layers, bidirectional,
                                        batch_first)
    assert out.device.type == device
    np.testing.assert_allclose(to_numpy(out), want_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(hn), want_hn, rtol=1e-12, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(to_numpy(cn), want_cn, rtol=1e-12, atol=1e-12)


def test_sequence_float32_and_shapes(device):
    m = nn.GRU(3, 5, num_layers=2, bidirectional=True, batch_first=True).to(device)
    x = arr((2, 4, 3), 13).astype(np.float32)
    out, hn = m(mt(x, device))
    assert out.dtype == minitorch.float32 and tuple(out.shape) == (2, 4, 10) and tuple(hn.shape) == (4, 2, 5)
    want_out, want_hn, _ = np_seq("GRU", params_np(m), x.astype(np.float64), np.zeros((4, 2, 5)), None, 2, True, True)
    np.testing.assert_allclose(to_numpy(out), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(hn), want_hn, rtol=1e-5, atol=1e-6)
    # The last time step of the forward direction is h_n of the top layer's forward direction.
    np.testing.assert_array_equal(to_numpy(out)[:, -1, :5], to_numpy(hn)[2])
    np.testing.assert_array_equal(to_numpy(out)[:, 0, 5:], to_numpy(hn)[3])


def test_dropout_between_layers_only_in_training(device):
    m = nn.RNN(2, 3, num_layers=2, dropout=1.0).double().to(device)  # p = 1 zeroes layer 1's input
    p, x, h0 = params_np(m), arr((3, 2, 2), 14), np.zeros((2, 2, 3))
    out, _ = m(mt(x, device))
    want, _, _ = np_seq("RNN_TANH", p, x, h0, None, 2, False, False, zero_between_layers=True)
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-12, atol=1e-12)
    out, _ = m.eval()(mt(x, device))
    want, _, _ = np_seq("RNN_TANH", p, x, h0, None, 2, False, False)
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("num_layers,bidirectional", [(2, False), (1, True)], ids=["2layers", "bidir"])
def test_gradcheck_sequence(device, mode, num_layers, bidirectional):
    m = make_seq(mode, 2, 2, num_layers=num_layers, bidirectional=bidirectional).double().to(device)
    D = 2 if bidirectional else 1
    x, h0, c0 = mt(arr((2, 1, 2), 15), device, True), mt(arr((2, 1, 2), 16), device, True), mt(arr((2, 1, 2), 17), device, True)
    wo, wh, wc = mt(arr((2, 1, 2 * D), 18), device), mt(arr((2, 1, 2), 19), device), mt(arr((2, 1, 2), 20), device)

    def f(x, h0, c0, *params):
        if mode == "LSTM":
            out, (hn, cn) = m(x, (h0, c0))
            return (out * wo).sum() + (hn * wh).sum() + (cn * wc).sum()
        out, hn = m(x, h0)
        return (out * wo).sum() + (hn * wh).sum()

    c = c0 if mode == "LSTM" else c0.detach()
    assert gradcheck(f, (x, h0, c) + tuple(m.parameters()))


def test_gradients_match_numpy_bptt(device):
    """A hand-written backward through time of a 1-layer tanh RNN (dL/dx, dL/dW_hh, dL/dh0)."""
    m = nn.RNN(2, 3).double().to(device)
    p = params_np(m)
    x, h0, g = arr((4, 1, 2), 21), arr((1, 1, 3), 22), arr((4, 1, 3), 23)
    xt, ht = mt(x, device, True), mt(h0, device, True)
    out, _ = m(xt, ht)
    (out * mt(g, device)).sum().backward()
    w_ih, w_hh = p["weight_ih_l0"], p["weight_hh_l0"]
    hs = [h0[0]]
    for t in range(4):
        hs.append(np.tanh(x[t] @ w_ih.T + p["bias_ih_l0"] + hs[-1] @ w_hh.T + p["bias_hh_l0"]))
    dx, dw_hh, dh = np.zeros_like(x), np.zeros_like(w_hh), np.zeros((1, 3))
    for t in range(3, -1, -1):
        dpre = (dh + g[t]) * (1 - hs[t + 1] ** 2)
        dx[t] = dpre @ w_ih
        dw_hh += dpre.T @ hs[t]
        dh = dpre @ w_hh
    np.testing.assert_allclose(to_numpy(xt.grad), dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_numpy(m.weight_hh_l0.grad), dw_hh, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_numpy(ht.grad), dh[None], rtol=1e-10, atol=1e-12)


# ------------------------------------------------------ names, init and reprs ----

def torch_keys(num_layers, bidirectional, bias):
    keys = []
    for layer in range(num_layers):
        for sfx in ["", "_reverse"][:2 if bidirectional else 1]:
            kinds = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if bias else [])
            keys += [f"{k}_l{layer}{sfx}" for k in kinds]
    return keys


@pytest.mark.parametrize("mode", MODES)
def test_state_dict_keys_and_shapes(mode):
    m = make_seq(mode, 3, 4, num_layers=2, bidirectional=True)
    sd = m.state_dict()
    assert list(sd) == torch_keys(2, True, True)
    g = GATES[mode] * 4
    assert tuple(sd["weight_ih_l0"].shape) == (g, 3) and tuple(sd["weight_ih_l1_reverse"].shape) == (g, 8)
    assert tuple(sd["weight_hh_l1"].shape) == (g, 4) and tuple(sd["bias_hh_l0_reverse"].shape) == (g,)
    assert list(make_seq(mode, 3, 4, bias=False).state_dict()) == ["weight_ih_l0", "weight_hh_l0"]
    cell = make_cell(mode, 3, 4)
    assert list(cell.state_dict()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    assert tuple(cell.weight_ih.shape) == (g, 3) and tuple(cell.weight_hh.shape) == (g, 4)
    assert [len(w) for w in m.all_weights] == [4, 4, 4, 4]


def test_init_is_uniform_in_bound():
    minitorch.manual_seed(0)
    for m in (nn.LSTM(5, 16, num_layers=2), nn.GRUCell(5, 16)):
        values = np.concatenate([to_numpy(p).ravel() for p in m.parameters()])
        bound = 1 / np.sqrt(16)
        assert values.min() >= -bound and values.max() <= bound
        assert values.min() < -0.9 * bound and values.max() > 0.9 * bound  # spread over the range
        assert abs(values.mean()) < 0.1 * bound


def test_reprs():
    assert repr(nn.RNN(3, 4, 2, nonlinearity="relu", batch_first=True, bidirectional=True, dropout=0.5)) == \
        "RNN(3, 4, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)"
    assert repr(nn.LSTM(3, 4)) == "LSTM(3, 4)"
    assert repr(nn.GRU(3, 4, bias=False)) == "GRU(3, 4, bias=False)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4, bias=False)) == "LSTMCell(3, 4, bias=False)"
    assert repr(nn.GRUCell(3, 4)) == "GRUCell(3, 4)"


def test_positional_arguments_follow_pytorch():
    m = nn.RNN(3, 4, 2, "relu", False, True)  # input, hidden, num_layers, nonlinearity, bias, batch_first
    assert (m.num_layers, m.nonlinearity, m.bias, m.batch_first) == (2, "relu", False, True)
    m = nn.LSTM(3, 4, 2, False, True, 0.0, True)
    assert (m.bias, m.batch_first, m.bidirectional) == (False, True, True)


def test_module_moves_and_trains(device):
    """An LSTM + Linear learns to output the first element of a short sequence."""
    minitorch.manual_seed(0)
    lstm, head = nn.LSTM(1, 8, batch_first=True).to(device), nn.Linear(8, 1).to(device)
    params = list(lstm.parameters()) + list(head.parameters())
    opt = minitorch.optim.Adam(params, lr=0.05)
    x = arr((16, 3, 1), 24)
    xt, yt = mt(x.astype(np.float32), device), mt(x[:, 0].astype(np.float32), device)
    losses = []
    for _ in range(30):
        out, (hn, _) = lstm(xt)
        loss = nn.functional.mse_loss(head(hn[0]), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0], losses[::5]


# ------------------------------------------------------------------------ errors ----

def test_constructor_errors():
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNNCell(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(3, 4, num_layers=2, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.RNN(3, 4, num_layers=0)
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.GRU(3, 4.0)
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(3, 4, num_layers=2, dropout=0.5)


@pytest.mark.parametrize("mode", MODES)
def test_sequence_input_errors(device, mode):
    m = make_seq(mode, 3, 4, num_layers=2).to(device)

    def states(shape):
        z = minitorch.zeros(*shape, device=device)
        return (z, z) if mode == "LSTM" else z

    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        m(minitorch.zeros(2, 1, 5, device=device))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 1D"):
        m(minitorch.zeros(3, device=device))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        m(minitorch.zeros(1, 2, 1, 3, device=device))
    with pytest.raises(RuntimeError, match="Expected hidden(\\[0\\])? size \\(2, 2, 4\\), got \\(2, 3, 4\\)"):
        m(minitorch.zeros(5, 2, 3, device=device), states((2, 3, 4)))
    with pytest.raises(RuntimeError, match="Expected hidden(\\[0\\])? size \\(2, 2, 4\\), got \\(1, 2, 4\\)"):
        m(minitorch.zeros(5, 2, 3, device=device), states((1, 2, 4)))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D"):
        m(minitorch.zeros(5, 3, device=device), states((2, 1, 4)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D"):
        m(minitorch.zeros(5, 1, 3, device=device), states((2, 4)))
    with pytest.raises(RuntimeError, match="sequence length to be larger than 0"):
        m(minitorch.zeros(0, 1, 3, device=device))
    if mode == "LSTM":
        with pytest.raises(TypeError, match="hx must be a tuple"):
            m(minitorch.zeros(5, 1, 3, device=device), minitorch.zeros(2, 1, 4, device=device))
        z = minitorch.zeros(2, 1, 4, device=device)
        with pytest.raises(RuntimeError, match="Expected hidden\\[1\\] size \\(2, 1, 4\\), got \\(2, 1, 5\\)"):
            m(minitorch.zeros(5, 1, 3, device=device), (z, minitorch.zeros(2, 1, 5, device=device)))


@pytest.mark.parametrize("mode", MODES)
def test_cell_input_errors(device, mode):
    cell = make_cell(mode, 3, 4).to(device)

    def states(*shape):
        z = minitorch.zeros(*shape, device=device)
        return (z, z) if mode == "LSTM" else z

    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        cell(minitorch.zeros(2, 5, device=device))
    with pytest.raises(ValueError, match="Expected input to be 1D or 2D, got 3D"):
        cell(minitorch.zeros(2, 2, 3, device=device))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        cell(minitorch.zeros(2, 3, device=device), states(3, 4))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 5, expected 4"):
        cell(minitorch.zeros(2, 3, device=device), states(2, 5))
    with pytest.raises(RuntimeError, match="to be 1D like the input, got 2D"):
        cell(minitorch.zeros(3, device=device), states(1, 4))


# ------------------------------------------------------------- against PyTorch ----

def to_torch(torch, a, grad=False):
    return torch.tensor(np.asarray(a).tolist(), dtype=torch.float64, requires_grad=grad)


def from_torch(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("num_layers,bidirectional,batch_first,with_h0,batched", CONFIGS)
def test_sequence_matches_torch(device, mode, num_layers, bidirectional, batch_first, with_h0, batched):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    kwargs = dict(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    if mode.startswith("RNN"):
        tm = torch.nn.RNN(3, 2, nonlinearity=mode[4:].lower(), **kwargs).double()
    else:
        tm = getattr(torch.nn, mode)(3, 2, **kwargs).double()
    m = make_seq(mode, 3, 2, **kwargs).double()
    assert list(m.state_dict()) == list(tm.state_dict())
    m.load_state_dict({k: minitorch.tensor(from_torch(v)) for k, v in tm.state_dict().items()})
    m.to(device)
    D, L, N = 2 if bidirectional else 1, 3, 2
    xshape = ((N, L, 3) if batch_first else (L, N, 3)) if batched else (L, 3)
    sshape = (num_layers * D, N, 2) if batched else (num_layers * D, 2)
    x, h0, c0 = arr(xshape, 30), arr(sshape, 31), arr(sshape, 32)
    go, gh = arr(xshape[:-1] + (2 * D,), 33), arr(sshape, 34)
    tx, th, tc = to_torch(torch, x, True), to_torch(torch, h0, True), to_torch(torch, c0, True)
    mx, mh, mc = mt(x, device, True), mt(h0, device, True), mt(c0, device, True)
    if mode == "LSTM":
        t_out, (t_hn, t_cn) = tm(tx, (th, tc) if with_h0 else None)
        m_out, (m_hn, m_cn) = m(mx, (mh, mc) if with_h0 else None)
        t_loss = (t_out * to_torch(torch, go)).sum() + (t_hn * to_torch(torch, gh)).sum() + t_cn.sum()
        m_loss = (m_out * mt(go, device)).sum() + (m_hn * mt(gh, device)).sum() + m_cn.sum()
    else:
        t_out, t_hn = tm(tx, th if with_h0 else None)
        m_out, m_hn = m(mx, mh if with_h0 else None)
        t_loss = (t_out * to_torch(torch, go)).sum() + (t_hn * to_torch(torch, gh)).sum()
        m_loss = (m_out * mt(go, device)).sum() + (m_hn * mt(gh, device)).sum()
    np.testing.assert_allclose(to_numpy(m_out), from_torch(t_out), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_numpy(m_hn), from_torch(t_hn), rtol=1e-10, atol=1e-12)
    t_loss.backward()
    m_loss.backward()
    np.testing.assert_allclose(to_numpy(mx.grad), from_torch(tx.grad), rtol=1e-10, atol=1e-12)
    if with_h0:
        np.testing.assert_allclose(to_numpy(mh.grad), from_torch(th.grad), rtol=1e-10, atol=1e-12)
    for (name, p), tp in zip(m.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), from_torch(tp.grad), rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(device, mode, batched):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    if mode.startswith("RNN"):
        tc = torch.nn.RNNCell(3, 2, nonlinearity=mode[4:].lower()).double()
    else:
        tc = getattr(torch.nn, mode + "Cell")(3, 2).double()
    cell = make_cell(mode, 3, 2).double()
    assert list(cell.state_dict()) == list(tc.state_dict())
    cell.load_state_dict({k: minitorch.tensor(from_torch(v)) for k, v in tc.state_dict().items()})
    cell.to(device)
    shape = (2,) if batched else ()
    x, h, c, g = arr(shape + (3,), 40), arr(shape + (2,), 41), arr(shape + (2,), 42), arr(shape + (2,), 43)
    tx, th, tcc = to_torch(torch, x, True), to_torch(torch, h, True), to_torch(torch, c, True)
    mx, mh, mc = mt(x, device, True), mt(h, device, True), mt(c, device, True)
    if mode == "LSTM":
        t_h, t_c = tc(tx, (th, tcc))
        m_h, m_c = cell(mx, (mh, mc))
        ((t_h * to_torch(torch, g)).sum() + t_c.sum()).backward()
        ((m_h * mt(g, device)).sum() + m_c.sum()).backward()
        np.testing.assert_allclose(to_numpy(mc.grad), from_torch(tcc.grad), rtol=1e-10, atol=1e-12)
    else:
        t_h, m_h = tc(tx, th), cell(mx, mh)
        (t_h * to_torch(torch, g)).sum().backward()
        (m_h * mt(g, device)).sum().backward()
    np.testing.assert_allclose(to_numpy(m_h), from_torch(t_h), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_numpy(mx.grad), from_torch(tx.grad), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_numpy(mh.grad), from_torch(th.grad), rtol=1e-10, atol=1e-12)
    for (name, p), tp in zip(cell.named_parameters(), tc.parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), from_torch(tp.grad), rtol=1e-10, atol=1e-12, err_msg=name)
