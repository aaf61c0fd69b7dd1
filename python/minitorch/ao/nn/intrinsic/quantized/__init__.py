"""``minitorch.ao.nn.intrinsic.quantized``: quantized fused modules."""
from .conv_relu import ConvReLU2d  # noqa: F401
from .linear_relu import LinearReLU  # noqa: F401

__all__ = ["ConvReLU2d", "LinearReLU"]
