"""Markers of where quantization starts and ends in an eager-mode model.

``QuantStub`` is an observer point before ``convert`` and becomes ``nn.quantized.Quantize``
(float -> quint8) after it; ``DeQuantStub`` becomes ``nn.quantized.DeQuantize``. Between them
every module must accept quantized tensors once converted.
"""
from __future__ import annotations

from ...nn.module import Module


class QuantStub(Module):
    """The identity until ``convert`` turns it into ``Quantize`` with its observer's qparams."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(Module):
    """The identity until ``convert`` turns it into ``DeQuantize``."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(Module):
    """``module`` between a ``QuantStub`` and a ``DeQuantStub`` (with its qconfig), so a float
    model can be quantized whole: ``quantize(QuantWrapper(model), ...)``."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))
