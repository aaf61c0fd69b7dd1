"""QAT convolutions fused with batch norm and ReLU (``torch.ao.nn.intrinsic.qat``).

``ConvBn2d`` trains the convolution as it will run once quantized, with the batch norm folded
into its weight: the weight is scaled by ``gamma / running_std`` and fake-quantized, the
convolution's output is divided back by that factor and then batch-normalized as usual (with
batch statistics in training). So the weight the fake-quantizer sees is the folded weight that
``convert`` will quantize, while batch norm still normalizes with the batch's statistics
(PyTorch's ``_forward_approximate``)."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from .....nn.batchnorm import BatchNorm2d
from ...qat.conv import Conv2d, _conv_args
from ...qat.linear import _check_qat_source
from ..fused import ConvBn2d as FusedConvBn2d
from ..fused import ConvBnReLU2d as FusedConvBnReLU2d
from ..fused import ConvReLU2d as FusedConvReLU2d


class ConvReLU2d(Conv2d):
    """``relu(conv2d(x, weight_fake_quant(weight), bias))``."""

    _FLOAT_MODULE = (FusedConvReLU2d,)

    def forward(self, input):
        return F.relu(super().forward(input))

    def to_float(self):
        return FusedConvReLU2d(super().to_float(), minitorch.nn.ReLU())


class ConvBn2d(Conv2d):
    """Conv2d + BatchNorm2d for QAT; ``freeze_bn_stats()`` stops updating the running
    statistics (late in training), ``update_bn_stats()`` resumes."""

    _FLOAT_MODULE = (FusedConvBn2d,)
    _RELU = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bool(bias), padding_mode=padding_mode, qconfig=qconfig)
        self.bn = BatchNorm2d(out_channels, eps, momentum, True, True)
        self.freeze_bn = freeze_bn if self.training else True

    def reset_running_stats(self):
        self.bn.reset_running_stats()

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def train(self, mode: bool = True):
        super().train(mode)
        if self.freeze_bn:  # frozen statistics stay frozen in training
            self.bn.training = False
        return self

    def _forward_approximate(self, input):
        running_std = (self.bn.running_var + self.bn.eps).sqrt()
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(-1, 1, 1, 1))
        conv = self._conv_forward(input, scaled_weight, None)
        conv_orig = conv / scale_factor.reshape(1, -1, 1, 1)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(1, -1, 1, 1)
        return self.bn(conv_orig)

    def forward(self, input):
        out = self._forward_approximate(input)
        return F.relu(out) if self._RELU else out

    def extra_repr(self) -> str:
        return super().extra_repr()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        _check_qat_source(cls, mod, cls._FLOAT_MODULE)
        conv, bn = mod[0], mod[1]
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, eps=bn.eps, momentum=bn.momentum,
                freeze_bn=False, qconfig=mod.qconfig, **_conv_args(conv))
        q.weight_fake_quant.to(conv.weight.device)
        q.bn.to(conv.weight.device)
        q.weight, q.bias = conv.weight, conv.bias
        q.bn.weight, q.bn.bias = bn.weight, bn.bias
        with minitorch.no_grad():
            q.bn.running_mean.copy_(bn.running_mean)
            q.bn.running_var.copy_(bn.running_var)
            if getattr(bn, "num_batches_tracked", None) is not None and \
                    getattr(q.bn, "num_batches_tracked", None) is not None:
                q.bn.num_batches_tracked.copy_(bn.num_batches_tracked)
        return q

    def to_float(self):
        """The float Conv2d (+ ReLU) with the batch norm folded in (eval-mode semantics)."""
        from ....quantization.fuse_modules import fuse_conv_bn_weights

        conv = minitorch.nn.Conv2d(self.in_channels, self.out_channels, self.kernel_size, **{
            **_conv_args(self), "bias": True})
        conv.weight, conv.bias = fuse_conv_bn_weights(self.weight, self.bias, self.bn.running_mean,
                                                      self.bn.running_var, self.bn.eps, self.bn.weight, self.bn.bias)
        return FusedConvReLU2d(conv, minitorch.nn.ReLU()) if self._RELU else conv


class ConvBnReLU2d(ConvBn2d):
    """Conv2d + BatchNorm2d + ReLU for QAT."""

    _FLOAT_MODULE = (FusedConvBnReLU2d,)
    _RELU = True
