"""``nn.Conv1d/Conv2d/Conv3d``, ``nn.ConvTranspose1d/ConvTranspose2d`` and ``nn.LazyConv1d/2d/3d``
(PyTorch's shapes, defaults, initialisation, reprs and state_dict keys)."""
from __future__ import annotations

import math

from .. import _C
from . import functional as F
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(v, n: int, name: str):
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"{name} must be an int or a {n}-tuple, got {v!r}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


class _ConvNd(Module):
    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        name = type(self).__name__
        for arg, v in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name}: {arg} must be a positive int, got {v!r}")
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups, got in_channels={in_channels} and "
                             f"groups={groups}")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups, got out_channels={out_channels} and "
                             f"groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode={padding_mode!r}")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        n = self._dims
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n, "kernel_size")
        self.stride = _tuple(stride, n, "stride")
        if isinstance(padding, str):
            if self._transposed or padding not in ("same", "valid"):
                allowed = "an int or a tuple" if self._transposed else "'same', 'valid', an int or a tuple"
                raise ValueError(f"{name}: padding must be {allowed}, got {padding!r}")
            self.padding = padding
        else:
            self.padding = _tuple(padding, n, "padding")
        self.dilation = _tuple(dilation, n, "dilation")
        self.output_padding = _tuple(output_padding, n, "output_padding")
        if self.padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
        if any(k <= 0 for k in self.kernel_size) or any(s <= 0 for s in self.stride):
            raise ValueError(f"{name}: kernel_size and stride must be positive, got {self.kernel_size}, {self.stride}")
        self.transposed = self._transposed
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for a padding_mode other than zeros, last dim first (PyTorch's
        # _reversed_padding_repeated_twice); 'same' puts an odd total's extra at the end.
        amounts = []
        for i in reversed(range(n)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                amounts += [total // 2, total - total // 2]
            elif self.padding == "valid":
                amounts += [0, 0]
            else:
                amounts += [self.padding[i], self.padding[i]]
        self._reversed_padding_repeated_twice = amounts
        if self._transposed:  # (in, out/groups, k...): the weight of the conv it transposes
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(_C._empty(shape, dtype, device))
        self.bias = Parameter(_C._empty((out_channels,), dtype, device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # PyTorch's default: kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
        # fan_in read off the weight as init does (size(1) * kernel), for the bias too.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, x, weight, bias):
        # F.conv1d/2d/3d; a padding_mode other than zeros pads with F.pad first
        conv = getattr(F, f"conv{self._dims}d")
        if self.padding_mode != "zeros":
            x = F.pad(x, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(x, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, x):
        return self._conv_forward(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"  # PyTorch prints padding=same (no quotes)
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W): weight (out_channels, in_channels/groups, KH, KW).
    ``groups=in_channels`` is a depthwise convolution; ``padding_mode`` reflect, replicate
    or circular pads with F.pad first.

    >>> conv = minitorch.nn.Conv2d(1, 8, 3, padding=1)
    >>> conv(minitorch.randn(64, 1, 28, 28)).shape
    minitorch.Size([64, 8, 28, 28])
    """

    _dims = 2


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L): the lectures' sliding window, weight (out, in/groups, K)."""

    _dims = 1


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) (video, volumes): weight (out_channels,
    in_channels/groups, KD, KH, KW); ``padding_mode`` reflect, replicate or circular pads
    with F.pad first.

    >>> conv = minitorch.nn.Conv3d(2, 4, 3, padding=1)
    >>> conv(minitorch.randn(1, 2, 5, 6, 6)).shape
    minitorch.Size([1, 4, 5, 6, 6])
    """

    _dims = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding=output_padding)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims: int, dilation=None):
        """The output_padding that makes the output ``output_size`` (PyTorch's rule): sizes
        from the smallest the input gives up to stride - 1 more are reachable."""
        if output_size is None:
            return self.output_padding
        name = type(self).__name__
        non_spatial = 2 if input.dim() == num_spatial_dims + 2 else 1
        output_size = [int(s) for s in output_size]
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"{name}: for {input.dim()}D input, output_size must have {num_spatial_dims} or "
                             f"{non_spatial + num_spatial_dims} elements (got {len(output_size)})")
        dilation = dilation or (1,) * num_spatial_dims
        min_sizes = [(input.shape[d + non_spatial] - 1) * stride[d] - 2 * padding[d]
                     + dilation[d] * (kernel_size[d] - 1) + 1 for d in range(num_spatial_dims)]
        max_sizes = [min_sizes[d] + stride[d] - 1 for d in range(num_spatial_dims)]
        for d in range(num_spatial_dims):
            if not min_sizes[d] <= output_size[d] <= max_sizes[d]:
                raise ValueError(f"{name}: requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {list(input.shape)[non_spatial:]})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution (N, C_in, H, W) -> (N, C_out, H', W'), weight
    (in_channels, out_channels/groups, KH, KW): the input gradient of the Conv2d with these
    settings, the upsampling layer of DCGAN generators and U-Net decoders.
    H' = (H - 1)*stride - 2*padding + dilation*(KH - 1) + output_padding + 1;
    ``forward(x, output_size=...)`` picks output_padding for a wanted size.

    >>> up = minitorch.nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
    >>> up(minitorch.randn(2, 16, 7, 7)).shape
    minitorch.Size([2, 8, 14, 14])
    """

    _dims = 2

    def forward(self, x, output_size=None):
        output_padding = self._output_padding(x, output_size, self.stride, self.padding, self.kernel_size, 2,
                                              self.dilation)
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution (N, C_in, L) -> (N, C_out, L'), weight (in, out/groups, K)."""

    _dims = 1

    def forward(self, x, output_size=None):
        output_padding = self._output_padding(x, output_size, self.stride, self.padding, self.kernel_size, 1,
                                              self.dilation)
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                  self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution (N, C_in, D, H, W) -> (N, C_out, D', H', W'), weight
    (in_channels, out_channels/groups, KD, KH, KW): the upsampling layer of 3-D U-Nets."""

    _dims = 3

    def forward(self, x, output_size=None):
        output_padding = self._output_padding(x, output_size, self.stride, self.padding, self.kernel_size, 3,
                                              self.dilation)
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                  self.dilation)


class _LazyConvMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is read off its first input (dim 1 of a batched
    input, dim 0 of an unbatched one); then it becomes the eager convolution (nn/lazy.py)."""

    _lazy_size = "in_channels"

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        # _ConvNd checks its arguments with a stand-in in_channels (groups: a valid one), then
        # the parameters wait for the input.
        super().__init__(groups if isinstance(groups, int) and groups > 0 else 1, out_channels, kernel_size, stride,
                         padding, dilation, groups, bias, padding_mode, device, dtype)
        self.in_channels = 0
        self._make_lazy(bias, device, dtype)

    def _read_input_size(self, input) -> None:
        name, n = type(self).__name__, self._dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"{name}: expected {n + 1}D (unbatched) or {n + 2}D (batched) input, but got input of "
                             f"size: {tuple(input.shape)}")
        in_channels = input.shape[1] if input.dim() == n + 2 else input.shape[0]
        if in_channels == 0 or in_channels % self.groups:
            raise ValueError(f"{name}: the input's {in_channels} channels (input of shape {tuple(input.shape)}) must "
                             f"be a positive multiple of groups={self.groups}")
        self.in_channels = in_channels

    def _lazy_shape(self, name: str) -> tuple:
        if name == "bias":
            return (self.out_channels,)
        return (self.out_channels, self.in_channels // self.groups or None, *self.kernel_size)

    def _sizes_from_parameters(self) -> None:
        self.in_channels = self.weight.shape[1] * self.groups


class LazyConv1d(_LazyConvMixin, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` comes from its first input.

    >>> conv = nn.LazyConv2d(8, 3)
    >>> conv(minitorch.randn(1, 3, 5, 5)).shape, conv.weight.shape
    (minitorch.Size([1, 8, 3, 3]), minitorch.Size([8, 3, 3, 3]))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv3d
