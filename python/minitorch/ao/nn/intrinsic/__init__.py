"""``minitorch.ao.nn.intrinsic`` (``torch.ao.nn.intrinsic``): fused float modules; their
quantization-aware (``.qat``) and quantized (``.quantized``) forms live in the subpackages."""
from .fused import BNReLU2d, ConvBn2d, ConvBnReLU2d, ConvReLU2d, LinearBn1d, LinearReLU, _FusedModule  # noqa: F401
from . import qat, quantized  # noqa: F401,E402

__all__ = ["BNReLU2d", "ConvBn2d", "ConvBnReLU2d", "ConvReLU2d", "LinearBn1d", "LinearReLU"]
