"""QAT ``Linear`` (``torch.ao.nn.qat.Linear``): ``nn.Linear`` whose weight passes through a
fake-quantize module (``weight_fake_quant``) in every forward, so training sees int8 weights."""
from __future__ import annotations

import minitorch.nn.functional as F

from ....nn.container import Sequential
from ....nn.linear import Linear as FloatLinear


def _check_qat_source(cls, mod, float_types: tuple) -> None:
    if type(mod) not in float_types:
        want = ", ".join(t.__name__ for t in float_types)
        raise TypeError(f"qat.{cls.__name__}.from_float only works for {want}, got {type(mod).__name__}")
    if getattr(mod, "qconfig", None) is None:
        raise RuntimeError("Input float module must have a valid qconfig (set model.qconfig before prepare_qat)")


class Linear(FloatLinear):
    """``F.linear(x, weight_fake_quant(weight), bias)``; shares the float module's parameters."""

    _FLOAT_MODULE = (FloatLinear,)

    def __init__(self, in_features: int, out_features: int, bias: bool = True, qconfig=None, device=None,
                 dtype=None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        if not qconfig:
            raise ValueError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight().to(self.weight.device)

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        _check_qat_source(cls, mod, cls._FLOAT_MODULE)
        lin = mod[0] if isinstance(mod, Sequential) else mod
        q = cls(lin.in_features, lin.out_features, bias=lin.bias is not None, qconfig=mod.qconfig)
        q.weight = lin.weight
        q.bias = lin.bias
        q.weight_fake_quant.to(lin.weight.device)
        return q

    def to_float(self):
        lin = FloatLinear(self.in_features, self.out_features, self.bias is not None)
        lin.weight, lin.bias = self.weight, self.bias
        lin.train(self.training)
        return lin
