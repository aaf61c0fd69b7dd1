"""``nn.Unfold`` and ``nn.Fold``: sliding blocks of an image as columns (im2col) and back
(col2im), the two halves of how conv2d runs."""
from __future__ import annotations

from . import functional as F
from .module import Module


class Unfold(Module):
    """(N, C, H, W) -> (N, C*KH*KW, L): every sliding block as a column (F.unfold).

    >>> minitorch.nn.Unfold(kernel_size=3, padding=1)(minitorch.randn(2, 4, 5, 5)).shape
    minitorch.Size([2, 36, 25])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """(N, C*KH*KW, L) -> (N, C, *output_size): sums the blocks back into an image (F.fold)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
