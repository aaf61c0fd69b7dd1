"""Folding an eval-mode BatchNorm into the convolution or Linear before it (PyTorch's
``fuse_conv_bn_eval`` / ``fuse_linear_bn_eval``): for inference, y = BN(W x + b) is one
layer with W' = W * s and b' = (b - mean) * s + beta, s = gamma / sqrt(var + eps)."""
from __future__ import annotations

import copy

from ...autograd import no_grad
from ..parameter import Parameter


def _eval_only(layer, bn) -> None:
    # PyTorch asserts these (AssertionError), as MultiheadAttention's shape checks
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _scale(bn_rv, bn_eps, bn_w):
    """gamma / sqrt(var + eps), the per-channel factor (gamma 1 without affine)."""
    s = (bn_rv + bn_eps).rsqrt()
    return s if bn_w is None else bn_w * s


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b, transpose: bool = False):
    """The folded (weight, bias) Parameters of a convolution followed by BatchNorm, in the
    convolution's dtypes. ``transpose``: a ConvTranspose weight (in, out, ...), whose output
    channels are its dim 1."""
    with no_grad():
        w_dtype = conv_w.dtype
        b_dtype = conv_b.dtype if conv_b is not None else w_dtype
        s = _scale(bn_rv, bn_eps, bn_w)
        shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
        w = (conv_w * s.reshape(shape)).to(dtype=w_dtype)
        b = (0 - bn_rm if conv_b is None else conv_b - bn_rm) * s
        b = (b if bn_b is None else b + bn_b).to(dtype=b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad if conv_b is not None else False)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A new convolution computing ``bn(conv(x))`` of the eval-mode pair (conv is deep-copied;
    the originals are untouched).

    >>> fused = nn.utils.fuse_conv_bn_eval(model.conv1.eval(), model.bn1.eval())
    """
    _eval_only(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b):
    """The folded (weight, bias) Parameters of a Linear followed by BatchNorm1d, in the
    Linear's dtypes."""
    with no_grad():
        w_dtype = linear_w.dtype
        b_dtype = linear_b.dtype if linear_b is not None else w_dtype
        s = _scale(bn_rv, bn_eps, bn_w)
        w = linear_w * s.unsqueeze(-1).to(dtype=w_dtype)
        b = (0 - bn_rm if linear_b is None else linear_b - bn_rm) * s
        b = (b if bn_b is None else b + bn_b).to(dtype=b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad if linear_b is not None else False)


def fuse_linear_bn_eval(linear, bn):
    """A new Linear computing ``bn(linear(x))`` of the eval-mode pair; bn has
    ``linear.out_features`` features, or 1."""
    _eval_only(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
