"""``nn.Conv2d`` and ``nn.Conv1d`` (PyTorch's shapes, defaults and initialisation)."""
from __future__ import annotations

import math

from .. import _C
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _tuple(v, n: int, name: str):
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"{name} must be an int or a {n}-tuple, got {v!r}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


class _ConvNd(Module):
    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if groups != 1:
            raise NotImplementedError(f"{name}: groups != 1 is not supported yet")
        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: only padding_mode='zeros' is supported")
        for arg, v in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name}: {arg} must be a positive int, got {v!r}")
        n = self._dims
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n, "kernel_size")
        self.stride = _tuple(stride, n, "stride")
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n, "padding")
        self.dilation = _tuple(dilation, n, "dilation")
        if isinstance(self.padding, str) and self.padding not in ("same", "valid"):
            raise ValueError(f"{name}: padding must be 'same', 'valid', an int or a tuple, got {padding!r}")
        if self.padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
        if any(k <= 0 for k in self.kernel_size) or any(s <= 0 for s in self.stride):
            raise ValueError(f"{name}: kernel_size and stride must be positive, got {self.kernel_size}, {self.stride}")
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(_C._empty((out_channels, in_channels, *self.kernel_size), dtype, device))
        self.bias = Parameter(_C._empty((out_channels,), dtype, device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # PyTorch's default: kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_channels * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"  # PyTorch prints padding=same (no quotes)
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W): weight (out_channels, in_channels, KH, KW).

    >>> conv = minitorch.nn.Conv2d(1, 8, 3, padding=1)
    >>> conv(minitorch.randn(64, 1, 28, 28)).shape
    minitorch.Size([64, 8, 28, 28])
    """

    _dims = 2

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L): the lectures' sliding window, weight (out, in, K)."""

    _dims = 1

    def forward(self, x):
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)
