"""``intrinsic.qat.LinearBn1d``: Linear + BatchNorm1d for QAT, trained with the batch norm folded
into the fake-quantized weight as ``ConvBn2d`` does (see conv_fused.py)."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from .....nn.batchnorm import BatchNorm1d
from ...qat.linear import Linear, _check_qat_source
from ..fused import LinearBn1d as FusedLinearBn1d


class LinearBn1d(Linear):
    """``bn((x @ fq(W * s).T) / s + b)`` with ``s = gamma / running_std``: in eval mode exactly the
    folded Linear that ``convert`` quantizes."""

    _FLOAT_MODULE = (FusedLinearBn1d,)

    def __init__(self, in_features: int, out_features: int, bias: bool = True, eps: float = 1e-05,
                 momentum: float = 0.1, freeze_bn: bool = False, qconfig=None):
        super().__init__(in_features, out_features, bias, qconfig=qconfig)
        self.bn = BatchNorm1d(out_features, eps, momentum, True, True)
        self.freeze_bn = freeze_bn if self.training else True

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def train(self, mode: bool = True):
        super().train(mode)
        if self.freeze_bn:
            self.bn.training = False
        return self

    def forward(self, input):
        running_std = (self.bn.running_var + self.bn.eps).sqrt()
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(-1, 1))
        out = F.linear(input, scaled_weight) / scale_factor
        if self.bias is not None:
            out = out + self.bias
        return self.bn(out)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        _check_qat_source(cls, mod, cls._FLOAT_MODULE)
        linear, bn = mod[0], mod[1]
        q = cls(linear.in_features, linear.out_features, linear.bias is not None, bn.eps, bn.momentum,
                qconfig=mod.qconfig)
        q.weight_fake_quant.to(linear.weight.device)
        q.bn.to(linear.weight.device)
        q.weight, q.bias = linear.weight, linear.bias
        q.bn.weight, q.bn.bias = bn.weight, bn.bias
        with minitorch.no_grad():
            q.bn.running_mean.copy_(bn.running_mean)
            q.bn.running_var.copy_(bn.running_var)
        return q

    def to_float(self):
        from ....quantization.fuse_modules import fuse_conv_bn_weights

        lin = minitorch.nn.Linear(self.in_features, self.out_features)
        lin.weight, lin.bias = fuse_conv_bn_weights(self.weight, self.bias, self.bn.running_mean,
                                                    self.bn.running_var, self.bn.eps, self.bn.weight, self.bn.bias)
        return lin
