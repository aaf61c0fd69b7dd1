"""The dynamic quantized ``Linear`` (``torch.ao.nn.quantized.dynamic.Linear``): float in,
float out. The weight is qint8 (quantized once, by ``quantize_dynamic``); each input batch is
quantized to quint8 with qparams from its own min/max at run time (7 bits: ``reduce_range``,
as PyTorch's x86 modules), multiplied in integers and scaled back to float."""
from __future__ import annotations

import minitorch

from .....nn.linear import Linear as FloatLinear
from ..linear import Linear as QLinear
from ..utils import _quantize_weight


class Linear(QLinear):
    """PyTorch's ``DynamicQuantizedLinear``: no output qparams to calibrate."""

    _FLOAT_MODULE = (FloatLinear,)
    _NAME = "DynamicQuantizedLinear"

    def forward(self, x):
        w, b = self._weight_bias()
        return minitorch.ops.quantized.linear_dynamic(x, w, b, reduce_range=True)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._packed_params.dtype}, "
                f"qscheme={self.weight().qscheme()}")

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        from ....quantization.qconfig import default_dynamic_qconfig

        if type(mod) not in cls._FLOAT_MODULE and not hasattr(mod, "weight_fake_quant"):
            raise TypeError(f"nnqd.Linear.from_float only works for Linear, got {type(mod).__name__}")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        weight_observer = qconfig.weight()
        if getattr(weight_observer, "dtype", None) is not minitorch.qint8:
            raise RuntimeError(f"The only supported dtype for nnqd.Linear is qint8 in minitorch, got "
                               f"{getattr(weight_observer, 'dtype', None)}")
        weight_observer(mod.weight)
        q = cls(mod.in_features, mod.out_features, dtype=minitorch.qint8)
        q.set_weight_bias(_quantize_weight(mod.weight, weight_observer), mod.bias)
        return q
