"""``intrinsic.quantized.ConvReLU2d``: quantized Conv2d with the ReLU fused into requantization."""
from __future__ import annotations

from ...quantized.conv import Conv2d
from ..fused import ConvReLU2d as FloatConvReLU2d


class ConvReLU2d(Conv2d):
    """``relu(conv2d(x))`` on quantized tensors (PyTorch's ``QuantizedConvReLU2d``)."""

    _FLOAT_MODULE = (FloatConvReLU2d,)
    _NAME = "QuantizedConvReLU2d"
    _RELU = True
