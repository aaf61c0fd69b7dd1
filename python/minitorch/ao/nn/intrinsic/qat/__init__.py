"""``minitorch.ao.nn.intrinsic.qat``: fused modules for quantization-aware training."""
from .conv_fused import ConvBn2d, ConvBnReLU2d, ConvReLU2d  # noqa: F401
from .linear_fused import LinearBn1d  # noqa: F401
from .linear_relu import LinearReLU  # noqa: F401

__all__ = ["ConvBn2d", "ConvBnReLU2d", "ConvReLU2d", "LinearBn1d", "LinearReLU"]
