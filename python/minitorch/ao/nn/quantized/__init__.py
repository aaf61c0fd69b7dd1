"""``minitorch.ao.nn.quantized`` (``torch.ao.nn.quantized``): modules computing on quantized
tensors. Float modules that only move or compare values (``nn.ReLU``, ``nn.MaxPool2d``,
``nn.AdaptiveAvgPool2d``, ``nn.Flatten``) take quantized tensors as they are."""
from . import dynamic  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .linear import Linear, LinearPackedParams  # noqa: F401
from .modules import DeQuantize, FloatFunctional, QFunctional, Quantize, ReLU6  # noqa: F401
from ....nn.pooling import MaxPool2d  # noqa: F401  (works on quantized tensors)

__all__ = ["Conv2d", "Linear", "LinearPackedParams", "DeQuantize", "FloatFunctional", "QFunctional", "Quantize",
           "ReLU6", "MaxPool2d"]
