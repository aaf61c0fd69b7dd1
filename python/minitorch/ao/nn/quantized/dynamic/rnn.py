"""The dynamic quantized ``LSTM`` (``torch.ao.nn.quantized.dynamic.LSTM``): the float LSTM with
its weight matrices per layer and direction stored as qint8; the gate matmuls are dynamic
quantized linears (the whole sequence's inputs quantized from their min/max in one matmul, then
each step's hidden state from its own), the gate nonlinearities and the cell state stay float."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from .....nn.module import Module
from .....nn.rnn import LSTM as FloatLSTM
from ..utils import _quantize_weight


class LSTM(Module):
    """PyTorch's ``DynamicQuantizedLSTM``: same arguments, inputs and outputs as ``nn.LSTM``.

    State dict: ``weight_ih_l{k}{_reverse}`` / ``weight_hh_...`` as qint8 quantized tensors and the
    float ``bias_ih_...`` / ``bias_hh_...`` (PyTorch saves opaque packed objects instead).
    """

    _FLOAT_MODULE = FloatLSTM

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, dtype=None):
        super().__init__()
        # a float LSTM does the argument checks and gives the shapes (and the layout of its run)
        lstm = FloatLSTM(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional)
        object.__setattr__(self, "_float_lstm", lstm)  # not a child: not part of the state
        self.mode = "LSTM"
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, 0
        self.dtype = minitorch.qint8 if dtype is None else dtype
        self._params = {}
        for name in lstm._flat_weights_names:
            p = getattr(lstm, name).detach()
            if name.startswith("weight"):
                self._params[name] = minitorch.quantize_per_tensor(p, 1.0, 0, minitorch.qint8)
            else:
                self._params[name] = p
        self._flat_weights_names = list(self._params)

    def _to_device(self, device) -> None:
        """Module.to(device) moves the int8 weights and float biases (plain attributes)."""
        self._params = {name: v.to(device) for name, v in self._params.items()}

    def _get_name(self) -> str:
        return "DynamicQuantizedLSTM"

    def extra_repr(self) -> str:
        return FloatLSTM.extra_repr(self)

    def __repr__(self) -> str:
        return f"{self._get_name()}({self.extra_repr()})"

    def _save_to_state_dict(self, destination, prefix):
        for name, v in self._params.items():
            destination[prefix + name] = v

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        for name in self._params:
            if prefix + name in state_dict:
                v = state_dict[prefix + name]
                if name.startswith("weight") and not getattr(v, "is_quantized", False):
                    error_msgs.append(f"While copying {prefix + name}: expected a quantized tensor")
                    continue
                self._params[name] = v

    def forward(self, input, hx=None):
        """Returns ``output, (h_n, c_n)`` as ``nn.LSTM`` does."""
        lstm = self._float_lstm
        lstm.__dict__["_direction"] = self._direction  # the float LSTM's checks and layout, our quantized steps
        lstm.train(self.training)
        try:
            if hx is None:
                output, finals = lstm._run(input, [None, None])
            else:
                if not isinstance(hx, tuple) or len(hx) != 2:
                    raise TypeError("DynamicQuantizedLSTM: hx must be a tuple (h_0, c_0)")
                output, finals = lstm._run(input, list(hx))
        finally:
            del lstm.__dict__["_direction"]
        return output, tuple(finals)

    def _direction(self, x, states, key: str, reverse: bool):
        w_ih, w_hh = self._params[f"weight_ih_{key}"], self._params[f"weight_hh_{key}"]
        b_ih = self._params.get(f"bias_ih_{key}")
        b_hh = self._params.get(f"bias_hh_{key}")
        lin = minitorch.ops.quantized.linear_dynamic
        h, c = states
        L, N = x.shape[0], x.shape[1]
        # the input projection of every step in one matmul (its activations quantized together),
        # as PyTorch's quantized LSTM does; the hidden projection step by step
        xw = lin(x.reshape(L * N, x.shape[2]), w_ih, b_ih, reduce_range=True).reshape(L, N, -1)
        steps = range(L - 1, -1, -1) if reverse else range(L)
        outs = [None] * L
        for t in steps:
            gates = xw[t] + lin(h, w_hh, b_hh, reduce_range=True)
            i, f, g, o = gates.chunk(4, 1)
            c = F.sigmoid(f) * c + F.sigmoid(i) * g.tanh()
            h = F.sigmoid(o) * c.tanh()
            outs[t] = h
        return minitorch.stack(outs, 0), (h, c)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        from ....quantization.qconfig import default_dynamic_qconfig

        if type(mod) is not FloatLSTM:
            raise TypeError(f"nnqd.LSTM.from_float only works for nn.LSTM, got {type(mod).__name__}")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        if qconfig.weight().dtype is not minitorch.qint8:
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {qconfig.weight().dtype}")
        q = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first, mod.dropout,
                mod.bidirectional, minitorch.qint8)
        for name in mod._flat_weights_names:
            p = getattr(mod, name)
            if name.startswith("weight"):
                obs = qconfig.weight()
                obs(p)
                q._params[name] = _quantize_weight(p, obs)
            else:
                q._params[name] = p.detach().clone()
        return q
