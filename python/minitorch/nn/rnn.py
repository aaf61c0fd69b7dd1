"""Recurrent layers: the cells ``RNNCell``, ``LSTMCell``, ``GRUCell`` (one time step) and
the sequence modules ``RNN``, ``LSTM``, ``GRU`` (PyTorch's shapes, gate order, parameter
names, initialisation and reprs).

A sequence module runs, for each layer and direction, one matmul for the input part of
every time step at once (``x @ W_ih.T + b_ih`` over the whole ``(L, N, H_in)`` input),
then a loop over time for the hidden part (``h @ W_hh.T + b_hh``). That loop is one C++
op per layer (``_C._rnn_layer``, ``_C._lstm_layer``, ``_C._gru_layer``,
cpp/src/ops/rnn.cpp) whose backward, backpropagation through time, walks the steps back
itself. The cells (one step) are composed of ordinary ops, so autograd records them.

Gate formulas (PyTorch's order of the gates in the stacked weights):

- RNN:  ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)
- LSTM: ``i, f, g, o`` = sigmoid, sigmoid, tanh, sigmoid of the four row blocks;
  ``c' = f * c + i * g``, ``h' = o * tanh(c')``
- GRU:  ``r, z`` = sigmoid of the first two blocks, ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``,
  ``h' = (1 - z) * n + z * h``
"""
from __future__ import annotations

import math
import numbers
import warnings

import minitorch as _mt  # stack / cat, looked up when called

from .. import _C
from ..amp import autocast_mode as _amp
from ..ops.creation import zeros
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence, _packed_rows

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---- one time step: ``xw`` is the input projection x @ W_ih^T + b_ih, already computed ----

def _rnn_step(xw, h, w_hh, b_hh, relu: bool):
    pre = xw + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


def _lstm_step(xw, h, c, w_hh, b_hh):
    """i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the four quarters of the gates;
    c' = f * c + i * g; h' = o * tanh(c'). The gate math is one fused C++ op
    (``_C._lstm_cell``; formulas in cpp/include/minitorch/rnn_math.h): one kernel forward,
    one backward, instead of a dozen small ops and their graph nodes per step."""
    gates = xw + F.linear(h, w_hh, b_hh)
    return _C._lstm_cell(gates, c)


def _gru_step(xw, h, w_hh, b_hh):
    hw = F.linear(h, w_hh, b_hh)  # b_hn must stay inside r * (...), so it is not folded into xw
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = hw.chunk(3, -1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    cand = (xn + r * hn).tanh()
    return cand + z * (h - cand)  # = (1 - z) * cand + z * h


def _check_size(name: str, what: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: {what} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name}: {what} must be greater than zero, got {value}")


def _is_tensor(t) -> bool:
    return isinstance(t, _C.Tensor)


# ------------------------------------------------------------------ cells ----

class RNNCellBase(Module):
    """Shared parameters of the cells: ``weight_ih`` (gates*hidden, input_size),
    ``weight_hh`` (gates*hidden, hidden_size), ``bias_ih`` and ``bias_hh`` (gates*hidden),
    all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        _check_size(name, "input_size", input_size)
        _check_size(name, "hidden_size", hidden_size)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(_C._empty((g, input_size), dtype, device))
        self.weight_hh = Parameter(_C._empty((g, hidden_size), dtype, device))
        if bias:
            self.bias_ih = Parameter(_C._empty((g,), dtype, device))
            self.bias_hh = Parameter(_C._empty((g,), dtype, device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _batched(self, input, hx: tuple):
        """Checks shapes; returns (input as (N, in), states as (N, hidden) each, unbatched).
        ``hx`` holds the given states (each may be None: zeros)."""
        name = type(self).__name__
        if not _is_tensor(input):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise _C.InputError(f"{name}: input has inconsistent input_size: got {input.shape[-1]} "
                                f"expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        states = []
        for k, h in enumerate(hx):
            what = "hx" if len(hx) == 1 else f"hx[{k}]"
            if h is None:
                states.append(zeros((x.shape[0], self.hidden_size), dtype=input.dtype, device=input.device))
                continue
            if not _is_tensor(h):
                raise TypeError(f"{name}: {what} must be a Tensor, got {type(h).__name__}")
            if h.dim() != input.dim():
                raise _C.InputError(f"{name}: Expected {what} to be {input.dim()}D like the input, got {h.dim()}D "
                                    f"(input shape {tuple(input.shape)}, {what} shape {tuple(h.shape)})")
            h = h.unsqueeze(0) if unbatched else h
            if h.shape[0] != x.shape[0]:
                raise _C.InputError(f"{name}: Input batch size {x.shape[0]} doesn't match hidden{k} batch size "
                                    f"{h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise _C.InputError(f"{name}: hidden{k} has inconsistent hidden_size: got {h.shape[1]}, "
                                    f"expected {self.hidden_size}")
            states.append(h)
        return x, states, unbatched


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    >>> cell = minitorch.nn.RNNCell(10, 20)
    >>> h = cell(minitorch.randn(3, 10))            # h0 = zeros
    >>> h = cell(minitorch.randn(3, 10), h)         # (3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._batched(input, (hx,))
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                      self.nonlinearity == "relu")
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    """One LSTM step; gates ``i, f, g, o`` in that order in the stacked weights.
    ``forward(input, (h, c))`` returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
        x, (h, c), unbatched = self._batched(input, (None, None) if hx is None else tuple(hx))
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step; gates ``r, z, n`` in that order, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._batched(input, (hx,))
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h


# --------------------------------------------------------------- sequences ----

class RNNBase(Module):
    """Shared machinery of ``RNN``, ``LSTM`` and ``GRU``: per layer ``l`` and direction,
    parameters ``weight_ih_l{l}``, ``weight_hh_l{l}``, ``bias_ih_l{l}``, ``bias_hh_l{l}``
    (``..._reverse`` for the backward direction), in PyTorch's order."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        _check_size(name, "input_size", input_size)
        _check_size(name, "hidden_size", hidden_size)
        _check_size(name, "num_layers", num_layers)
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if proj_size != 0:
            raise NotImplementedError(f"{name}: proj_size={proj_size} (LSTM projections) is not supported in "
                                      "minitorch; use proj_size=0")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * num_directions
            for suffix in ("", "_reverse")[:num_directions]:
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for kind, shape in shapes:
                    pname = f"{kind}_l{layer}{suffix}"
                    setattr(self, pname, Parameter(_C._empty(shape, dtype, device)))
                    self._flat_weights_names.append(pname)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights for cuDNN here; minitorch has no such packing."""

    @property
    def all_weights(self) -> list:
        """The parameters grouped per layer and direction: ``[[w_ih, w_hh, b_ih, b_hh], ...]``."""
        per = 4 if self.bias else 2
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ----
    def _check_states(self, input, states: list, unbatched: bool, batch: int) -> list:
        """Each given state (or None) as (num_layers * D, N, hidden); checks its shape."""
        name = type(self).__name__
        want = (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)
        out = []
        for k, h in enumerate(states):
            what = "hidden" if len(states) == 1 else f"hidden[{k}]"
            short = ("hx", "cx")[k]
            if h is None:
                out.append(zeros(want, dtype=input.dtype, device=input.device))
                continue
            if not _is_tensor(h):
                raise TypeError(f"{name}: {short} must be a Tensor, got {type(h).__name__}")
            if h.dim() != (2 if unbatched else 3):
                kind = "unbatched 2-D" if unbatched else "batched 3-D"
                raise _C.InputError(f"{name}: For {kind} input, {short} should also be {2 if unbatched else 3}-D "
                                    f"but got {h.dim()}-D tensor")
            h = h.unsqueeze(1) if unbatched else h
            if h.dtype != input.dtype:
                raise _C.DTypeError(f"{name}: Input and hidden tensors are not the same dtype, found input tensor "
                                    f"with {input.dtype} and {short} with {h.dtype}")
            if tuple(h.shape) != want:
                got = tuple(h.shape[::2]) if unbatched else tuple(h.shape)
                exp = (want[0], want[2]) if unbatched else want
                raise _C.InputError(f"{name}: Expected {what} size {exp}, got {got}")
            out.append(h)
        return out

    def _run(self, input, states: list):
        """Runs every layer and direction over ``input``; returns (output, [final states])."""
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            return self._run_packed(input, states)
        if not _is_tensor(input):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        if input.shape[-1] != self.input_size:
            raise _C.InputError(f"{name}: input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                                f"got {input.shape[-1]}")
        unbatched = input.dim() == 2
        if unbatched:
            x = input.unsqueeze(1)  # (L, 1, H_in), whatever batch_first says (as PyTorch)
        else:
            x = input.transpose(0, 1) if self.batch_first else input  # time-major (L, N, H_in)
        if x.shape[0] == 0:
            raise _C.InputError(f"{name}: Expected sequence length to be larger than 0, got input of shape "
                                f"{tuple(input.shape)}")
        states = self._check_states(input, states, unbatched, x.shape[1])
        num_directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            done = self._cudnn_layer(x, states, layer, num_directions)
            if done is not None:
                x, last = done
                for k, s in enumerate(last):
                    finals[k].extend(s[d] for d in range(num_directions))
                continue
            outs = []
            for d, suffix in enumerate(("", "_reverse")[:num_directions]):
                idx = layer * num_directions + d
                out, last = self._direction(x, [s[idx] for s in states], f"l{layer}{suffix}", reverse=d == 1)
                outs.append(out)
                for k, s in enumerate(last):
                    finals[k].append(s)
            x = outs[0] if num_directions == 1 else _mt.cat(outs, 2)
        output = x.squeeze(1) if unbatched else (x.transpose(0, 1) if self.batch_first else x)
        finals = [_mt.stack(f, 0) for f in finals]
        if unbatched:
            finals = [f.squeeze(1) for f in finals]
        return output, finals

    def _run_packed(self, packed: PackedSequence, states: list):
        """Every layer and direction over a PackedSequence (sequences sorted longest first):
        returns (PackedSequence output, [final states in the original batch order]). Each
        sequence's final state is taken at its own last step, and the reverse direction starts
        at that step (see _direction_chunks)."""
        name = type(self).__name__
        data, sizes = packed.data, [int(v) for v in packed.batch_sizes.tolist()]
        if not _is_tensor(data) or data.dim() != 2 or data.shape[-1] != self.input_size:
            raise _C.InputError(f"{name}: packed input data must be (sum of lengths, {self.input_size}), got "
                                f"{tuple(data.shape) if _is_tensor(data) else type(data).__name__}")
        steps, batch = len(sizes), sizes[0]
        # the padded time-major batch (T, B, in), sorted order; padding rows stay 0
        rows = _packed_rows(sizes, batch, data.device)
        x = _C._full((steps * batch, self.input_size), 0.0, data.dtype, data.device)
        x = x.index_copy(0, rows, data).reshape(steps, batch, self.input_size)
        states = self._check_states(data, states, False, batch)
        if packed.sorted_indices is not None:
            states = [h.index_select(1, packed.sorted_indices) for h in states]
        lengths = [sum(1 for n in sizes if n > b) for b in range(batch)]
        num_directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            outs = []
            for d, suffix in enumerate(("", "_reverse")[:num_directions]):
                idx = layer * num_directions + d
                out, last = self._direction_chunks(x, [h[idx] for h in states], f"l{layer}{suffix}", d == 1, lengths)
                outs.append(out)
                for k, h in enumerate(last):
                    finals[k].append(h)
            x = outs[0] if num_directions == 1 else _mt.cat(outs, 2)
        output = x.reshape(steps * batch, x.shape[2]).index_select(0, rows)
        finals = [_mt.stack(f, 0) for f in finals]
        if packed.unsorted_indices is not None:
            finals = [f.index_select(1, packed.unsorted_indices) for f in finals]
        return PackedSequence(output, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices), finals

    def _direction_chunks(self, x, states: list, key: str, reverse: bool, lengths: list):
        """One direction of one layer over padded (T, B, in) ``x`` whose sequence b (sorted
        longest first) has ``lengths[b]`` steps. Time splits into chunks between consecutive
        distinct lengths; in a chunk the unfinished sequences are a fixed prefix of the batch,
        and one ``_direction`` call runs them. Forward, a sequence's final state is recorded
        when its chunk ends it; reverse, the chunks run last to first and a sequence joins
        (from its initial state) at its own last step. Returns the (T, B, hidden) outputs,
        0 past each sequence's end, and the final states (B, hidden)."""
        batch = x.shape[1]
        chunks, start = [], 0  # (first step, end step, sequences still running)
        for end in sorted(set(lengths)):
            chunks.append((start, end, sum(1 for n in lengths if n > start)))
            start = end

        def full_batch(out, active):
            if active == batch:
                return out
            gap = _C._full((out.shape[0], batch - active, out.shape[2]), 0.0, out.dtype, out.device)
            return _mt.cat([out, gap], 1)

        outs, done = [], []
        if not reverse:
            current = list(states)
            for first, end, active in chunks:
                out, current = self._direction(x[first:end, :active], [h[:active] for h in current], key, False)
                outs.append(full_batch(out, active))
                still = sum(1 for n in lengths if n > end)
                done.append([h[still:] for h in current])  # the sequences this chunk ends
                current = [h[:still] for h in current]
            finals = [_mt.cat([d[k] for d in reversed(done)], 0) for k in range(len(states))]
            return _mt.cat(outs, 0), finals
        current = None
        for first, end, active in reversed(chunks):
            start_states = [h[:active] for h in states]
            if current is not None:  # the running ones, then the ones that start here
                start_states = [_mt.cat([c, h[c.shape[0]:active]], 0) for c, h in zip(current, states)]
            out, current = self._direction(x[first:end, :active], start_states, key, True)
            outs.append(full_batch(out, active))
        return _mt.cat(outs[::-1], 0), list(current)

    def _cudnn_layer(self, x, states: list, layer: int, num_directions: int):
        """The whole layer, both directions, on cuDNN's RNN API (``_C._cudnn_rnn_layer``;
        cuda/cudnn_rnn.cu), as PyTorch runs RNNs on a GPU: returns (output, [final states as
        (D, N, hidden)]), or None where cuDNN is off, missing or declines (then the layer runs
        minitorch's own kernels, ``_direction``)."""
        if not _C._has_rnn_library(x.device) or not _C._get_cudnn_switch("enabled"):
            return None
        if "_direction" in self.__dict__ or type(self)._direction is not RNNBase._direction:
            return None  # a layer with steps of its own (the dynamic quantized LSTM's) runs them
        weights = []
        for suffix in ("", "_reverse")[:num_directions]:
            key = f"l{layer}{suffix}"
            weights += [getattr(self, f"weight_ih_{key}"), getattr(self, f"weight_hh_{key}")]
            if self.bias:
                weights += [getattr(self, f"bias_ih_{key}"), getattr(self, f"bias_hh_{key}")]
        rows = slice(layer * num_directions, (layer + 1) * num_directions)
        hc = [s[rows] for s in states]
        device_type = x.device.type
        if _amp.is_autocast_enabled(device_type):  # the layer runs in the autocast dtype, as PyTorch's does
            dtype = _amp.get_autocast_dtype(device_type)
            x, hc, weights = (_amp._cast(v, device_type, dtype) for v in (x, hc, weights))
        out = _C._cudnn_rnn_layer(x, hc[0], hc[1] if self.mode == "LSTM" else None, weights, self.mode,
                                  num_directions == 2)
        if out is None:
            return None
        return out[0], out[1:]

    def _direction(self, x, states: list, key: str, reverse: bool):
        """One layer in one direction over time-major ``x`` (L, N, in): returns the
        (L, N, hidden) outputs and the final states."""
        w_hh = getattr(self, f"weight_hh_{key}")
        b_hh = getattr(self, f"bias_hh_{key}") if self.bias else None
        b_ih = getattr(self, f"bias_ih_{key}") if self.bias else None
        if b_hh is not None and self.mode != "GRU":
            # Both biases join the input projection (as cuDNN does): each step's h @ W_hh^T is then
            # one GEMM with no bias to add, and b_hh's gradient is one sum over all the steps
            # instead of a sum per step plus an accumulation per step. (GRU's b_hn must stay
            # inside r * (...).)
            b_ih, b_hh = b_ih + b_hh, None
        xw = F.linear(x, getattr(self, f"weight_ih_{key}"), b_ih)  # every time step in one matmul
        # The whole recurrence is one C++ op with its own backward (cpp/src/ops/rnn.cpp): per
        # step one GEMM and one cell kernel each way (for nn.RNN the cell is the activation's
        # map), and dW_hh one GEMM at the end. Under autocast the input projection is 16-bit,
        # and the layer runs in it (as PyTorch's cuDNN RNNs do): the states and W_hh (b_hh)
        # are cast to its dtype.
        def cast(t):
            return t if t is None or t.dtype == xw.dtype else t.to(xw.dtype)
        if self.mode == "LSTM":
            out, h, c = _C._lstm_layer(xw, cast(states[0]), cast(states[1]), cast(w_hh), reverse)
            return out, (h, c)
        if self.mode == "GRU":
            out, h = _C._gru_layer(xw, cast(states[0]), cast(w_hh), cast(b_hh), reverse)
            return out, (h,)
        out, h = _C._rnn_layer(xw, cast(states[0]), cast(w_hh), self.mode == "RNN_RELU", reverse)
        return out, (h,)


class RNN(RNNBase):
    """A multi-layer Elman RNN over a sequence: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    Input (L, N, input_size) (``batch_first``: (N, L, input_size); unbatched: (L, input_size)),
    optional ``h_0`` (num_layers * num_directions, N, hidden_size). Returns ``(output, h_n)``
    with output (L, N, num_directions * hidden_size).

    >>> rnn = minitorch.nn.RNN(10, 20, num_layers=2)
    >>> output, h_n = rnn(minitorch.randn(5, 3, 10))
    >>> output.shape, h_n.shape
    (minitorch.Size([5, 3, 20]), minitorch.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        output, (h_n,) = self._run(input, [hx])
        return output, h_n


class LSTM(RNNBase):
    """A multi-layer LSTM over a sequence; gates ``i, f, g, o`` in PyTorch's order.
    ``forward(input, (h_0, c_0))`` returns ``(output, (h_n, c_n))``. ``proj_size`` is not
    supported (only 0)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTM: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
        output, (h_n, c_n) = self._run(input, [None, None] if hx is None else list(hx))
        return output, (h_n, c_n)


class GRU(RNNBase):
    """A multi-layer GRU over a sequence; gates ``r, z, n`` in PyTorch's order,
    ``n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))``. Returns ``(output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)

    def forward(self, input, hx=None):
        output, (h_n,) = self._run(input, [hx])
        return output, h_n
