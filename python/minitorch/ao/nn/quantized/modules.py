"""Quantized modules without weights: ``Quantize`` (float -> quantized, what a ``QuantStub``
becomes), ``DeQuantize``, ``ReLU6``, and ``QFunctional`` / ``FloatFunctional`` for the
arithmetic a ``forward`` writes inline (``x + y`` cannot be observed or swapped; a
``FloatFunctional`` member's ``add`` can)."""
from __future__ import annotations

import minitorch

from ....nn.linear import Identity
from ....nn.module import Module
from .utils import _act_qparams, _load_number


class Quantize(Module):
    """Quantizes its float input per tensor with fixed ``scale``/``zero_point`` (buffers).

    ``Quantize(scale=tensor([0.0157]), zero_point=tensor([64]), dtype=minitorch.quint8)``
    """

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", minitorch.tensor([float(scale)]))
        self.register_buffer("zero_point", minitorch.tensor([int(zero_point)], dtype=minitorch.int64))
        self.dtype = dtype

    def forward(self, X):
        return minitorch.quantize_per_tensor(X, float(self.scale.item()), int(self.zero_point.item()), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False):
        if getattr(mod, "activation_post_process", None) is None:
            raise RuntimeError(f"{type(mod).__name__} has no activation_post_process: call prepare() (and calibrate) "
                               "before convert()")
        scale, zero_point = _act_qparams(mod)
        return Quantize(scale, zero_point, mod.activation_post_process.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale!r}, zero_point={self.zero_point!r}, dtype={self.dtype}"


class DeQuantize(Module):
    """Dequantizes its quantized input to float32."""

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False):
        return DeQuantize()


class ReLU6(Module):
    """``min(max(x, 0), 6)`` on a quantized tensor, keeping its qparams (on the integers:
    ``clamp(q, zero_point, zero_point + round(6 / scale))``)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        if not getattr(input, "is_quantized", False):
            raise RuntimeError("QuantizedReLU6: expected a quantized input tensor, got a float one (put a QuantStub "
                               "before it)")
        return input._float_op("hardtanh", lambda x: x.clamp(0.0, 6.0))

    def _get_name(self) -> str:
        return "QuantizedReLU6"

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""  # nn.ReLU's

    def __repr__(self) -> str:
        return f"{self._get_name()}({self.extra_repr()})"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False):
        return ReLU6(mod.inplace)


class FloatFunctional(Module):
    """Float ``add``/``mul``/``cat``/``add_relu``/``add_scalar``/``mul_scalar``/``matmul`` whose
    result passes through ``activation_post_process`` (an observer after ``prepare``); use one
    instance per call site. ``convert`` makes it a ``QFunctional`` with the observed qparams.

        self.skip_add = FloatFunctional()
        ...
        out = self.skip_add.add(x, identity)
    """

    def __init__(self):
        super().__init__()
        self.activation_post_process = Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        return self.activation_post_process(minitorch.add(x, y))

    def add_scalar(self, x, y):
        return minitorch.add(x, y)  # not observed: the output qparams follow the input's (as PyTorch)

    def mul(self, x, y):
        return self.activation_post_process(minitorch.mul(x, y))

    def mul_scalar(self, x, y):
        return minitorch.mul(x, y)

    def cat(self, x, dim: int = 0):
        return self.activation_post_process(minitorch.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(minitorch.relu(minitorch.add(x, y)))

    def matmul(self, x, y):
        return self.activation_post_process(minitorch.matmul(x, y))


class QFunctional(Module):
    """The quantized ``FloatFunctional``: each op dequantizes its quantized inputs, computes in
    float32 and requantizes to ``scale``/``zero_point`` (quint8), as PyTorch's reference
    quantized add/mul/cat do. ``add_scalar``/``mul_scalar`` keep the input's qparams' grid."""

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = Identity()

    def _get_name(self) -> str:
        return "QFunctional"

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def _q(self, y):
        return minitorch.quantize_per_tensor(y, self.scale, self.zero_point, minitorch.quint8)

    @staticmethod
    def _deq(x):
        return x.dequantize() if getattr(x, "is_quantized", False) else x

    def add(self, x, y):
        return self._q(self._deq(x) + self._deq(y))

    def add_scalar(self, x, y: float):
        return x._float_op("add", lambda v: v + y)

    def mul(self, x, y):
        return self._q(self._deq(x) * self._deq(y))

    def mul_scalar(self, x, y: float):
        return x._float_op("mul", lambda v: v * y)

    def cat(self, x, dim: int = 0):
        return self._q(minitorch.cat([self._deq(t) for t in x], dim=dim))

    def add_relu(self, x, y):
        return self._q(minitorch.relu(self._deq(x) + self._deq(y)))

    def matmul(self, x, y):
        return self._q(minitorch.matmul(self._deq(x), self._deq(y)))

    def _save_to_state_dict(self, destination, prefix):
        destination[prefix + "scale"] = minitorch.tensor(self.scale)
        destination[prefix + "zero_point"] = minitorch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        self.scale = _load_number(state_dict, prefix + "scale", float, error_msgs, self.scale)
        self.zero_point = _load_number(state_dict, prefix + "zero_point", int, error_msgs, self.zero_point)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False):
        if type(mod) is not FloatFunctional:
            raise TypeError(f"QFunctional.from_float expects an instance of FloatFunctional, got {type(mod).__name__}")
        new = QFunctional()
        new.scale, new.zero_point = _act_qparams(mod)
        return new

    def __repr__(self) -> str:
        return f"QFunctional(\n  {self.extra_repr()}\n  (activation_post_process): Identity()\n)"
