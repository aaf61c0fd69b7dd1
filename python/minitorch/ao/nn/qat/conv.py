"""QAT ``Conv2d`` (``torch.ao.nn.qat.Conv2d``): ``nn.Conv2d`` with its weight fake-quantized in
every forward."""
from __future__ import annotations

from ....nn.container import Sequential
from ....nn.conv import Conv2d as FloatConv2d
from .linear import _check_qat_source


def _conv_args(conv) -> dict:
    return dict(stride=conv.stride, padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                bias=conv.bias is not None, padding_mode=conv.padding_mode)


class Conv2d(FloatConv2d):
    """``conv2d(x, weight_fake_quant(weight), bias)``; shares the float module's parameters."""

    _FLOAT_MODULE = (FloatConv2d,)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", qconfig=None, device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)
        if not qconfig:
            raise ValueError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight().to(self.weight.device)

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        _check_qat_source(cls, mod, cls._FLOAT_MODULE)
        conv = mod[0] if isinstance(mod, Sequential) else mod
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, qconfig=mod.qconfig, **_conv_args(conv))
        q.weight, q.bias = conv.weight, conv.bias
        q.weight_fake_quant.to(conv.weight.device)
        return q

    def to_float(self):
        conv = FloatConv2d(self.in_channels, self.out_channels, self.kernel_size, **_conv_args(self))
        conv.weight, conv.bias = self.weight, self.bias
        conv.train(self.training)
        return conv
