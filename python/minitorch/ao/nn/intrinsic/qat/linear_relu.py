"""``intrinsic.qat.LinearReLU``: QAT Linear then ReLU (from a fused ``LinearReLU``)."""
from __future__ import annotations

import minitorch.nn.functional as F

from ...qat.linear import Linear
from ..fused import LinearReLU as FusedLinearReLU


class LinearReLU(Linear):
    """``relu(F.linear(x, weight_fake_quant(weight), bias))``."""

    _FLOAT_MODULE = (FusedLinearReLU,)

    def forward(self, input):
        return F.relu(super().forward(input))

    def to_float(self):
        import minitorch

        return FusedLinearReLU(super().to_float(), minitorch.nn.ReLU())
