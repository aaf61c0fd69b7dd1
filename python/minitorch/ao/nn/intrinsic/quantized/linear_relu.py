"""``intrinsic.quantized.LinearReLU``: quantized Linear with the ReLU fused into requantization."""
from __future__ import annotations

import minitorch

from ...quantized.linear import Linear
from ..fused import LinearReLU as FloatLinearReLU


class LinearReLU(Linear):
    """``relu(x @ W.T + b)`` on quantized tensors (PyTorch's ``QuantizedLinearReLU``): the clamp of
    the requantization starts at the zero point instead of 0, so the ReLU costs nothing."""

    _FLOAT_MODULE = (FloatLinearReLU,)
    _NAME = "QuantizedLinearReLU"

    def forward(self, x):
        w, b = self._weight_bias()
        return minitorch.ops.quantized.linear_relu(x, w, b, self.scale, self.zero_point)
