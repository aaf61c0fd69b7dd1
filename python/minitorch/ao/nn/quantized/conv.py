"""The quantized ``Conv2d`` (``torch.ao.nn.quantized.Conv2d``): quint8 input (N, C, H, W), qint8
weight per tensor or per output channel, float bias; the integer convolution is
``minitorch.ops.quantized.conv2d`` (zero padding only, as PyTorch's)."""
from __future__ import annotations

import minitorch

from ....nn.conv import Conv2d as FloatConv2d
from ....nn.module import Module
from .utils import _act_qparams, _check_float_module, _load_number, _quantize_weight


def _pair(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(Module):
    """2-D convolution on quantized tensors (PyTorch's ``QuantizedConv2d``)."""

    _FLOAT_MODULE = (FloatConv2d,)
    _NAME = "QuantizedConv2d"
    _RELU = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"{self._NAME}: padding_mode={padding_mode!r} is not supported (only 'zeros')")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{self._NAME}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.groups, self.padding_mode = groups, padding_mode
        w = minitorch.zeros(out_channels, in_channels // groups, *self.kernel_size)
        self.set_weight_bias(minitorch.quantize_per_tensor(w, 1.0, 0, minitorch.qint8),
                             minitorch.zeros(out_channels) if bias else None)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self) -> str:
        return self._NAME

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, " \
            f"scale={self.scale}, zero_point={self.zero_point}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self._bias is None:
            s += ", bias=False"
        return s

    def __repr__(self) -> str:
        return f"{self._get_name()}({self.extra_repr()})"

    def forward(self, input):
        if getattr(input, "dim", None) is not None and input.dim() != 4:
            raise ValueError(f"{self._NAME}: Input shape must be `(N, C, H, W)`!, got {tuple(input.shape)}")
        op = minitorch.ops.quantized.conv2d_relu if self._RELU else minitorch.ops.quantized.conv2d
        return op(input, self._weight, self._bias, self.stride, self.padding, self.dilation, self.groups,
                  self.scale, self.zero_point)

    def set_weight_bias(self, w, b) -> None:
        if not getattr(w, "is_quantized", False) or w.dtype is not minitorch.qint8:
            raise RuntimeError(f"{self._NAME}: expected a qint8 quantized weight, got "
                               f"{getattr(w, 'dtype', type(w).__name__)}")
        self._weight = w
        self._bias = None if b is None else b.detach().to(minitorch.float32)

    def _weight_bias(self):
        return self._weight, self._bias

    def _to_device(self, device) -> None:
        """Module.to(device) moves the quantized weight and the bias here (not Tensors'
        parameters: they are plain attributes)."""
        self._weight = self._weight.to(device)
        self._bias = None if self._bias is None else self._bias.to(device)

    def weight(self):
        return self._weight

    def bias(self):
        return self._bias

    def _save_to_state_dict(self, destination, prefix):
        destination[prefix + "weight"] = self._weight
        destination[prefix + "bias"] = self._bias
        destination[prefix + "scale"] = minitorch.tensor(self.scale)
        destination[prefix + "zero_point"] = minitorch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        if prefix + "weight" in state_dict:
            self.set_weight_bias(state_dict[prefix + "weight"], state_dict.get(prefix + "bias"))
        self.scale = _load_number(state_dict, prefix + "scale", float, error_msgs, self.scale)
        self.zero_point = _load_number(state_dict, prefix + "zero_point", int, error_msgs, self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        """The quantized form of a prepared ``nn.Conv2d`` / ``ConvReLU2d``, or of a QAT conv (a
        QAT ``ConvBn2d`` has its batch norm folded into the weight first)."""
        from ...quantization.fuse_modules import fuse_conv_bn_weights

        if hasattr(mod, "weight_fake_quant"):  # QAT
            weight_post_process = mod.weight_fake_quant
            conv = mod
            weight, bias = mod.weight, mod.bias
            if hasattr(mod, "bn"):  # ConvBn2d / ConvBnReLU2d: fold the batch norm's running statistics
                bn = mod.bn
                weight, bias = fuse_conv_bn_weights(weight, bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias)
        else:
            _check_float_module(cls, mod, cls._FLOAT_MODULE)
            conv = mod[0] if isinstance(mod, minitorch.nn.Sequential) else mod
            weight_post_process = mod.qconfig.weight()
            weight, bias = conv.weight, conv.bias
        if conv.padding_mode != "zeros":
            raise NotImplementedError(f"{cls._NAME}: padding_mode={conv.padding_mode!r} is not supported")
        if isinstance(conv.padding, str):
            raise NotImplementedError(f"{cls._NAME}: padding={conv.padding!r} is not supported; give the amounts")
        scale, zero_point = _act_qparams(mod)
        weight_post_process(weight)
        qweight = _quantize_weight(weight, weight_post_process)
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                conv.groups, bias is not None)
        q.set_weight_bias(qweight, bias)
        q.scale, q.zero_point = scale, zero_point
        return q
