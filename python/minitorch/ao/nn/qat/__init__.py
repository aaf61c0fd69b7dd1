"""``minitorch.ao.nn.qat`` (``torch.ao.nn.qat``): modules for quantization-aware training, whose
weights are fake-quantized in the forward pass; ``prepare_qat`` puts them in, ``convert`` turns
them into quantized modules."""
from .conv import Conv2d  # noqa: F401
from .linear import Linear  # noqa: F401

__all__ = ["Conv2d", "Linear"]
