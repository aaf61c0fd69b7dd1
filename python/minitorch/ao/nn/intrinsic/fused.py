"""Fused float modules (``torch.ao.nn.intrinsic``): a ``Sequential`` of modules that the
quantization workflows treat as one: ``convert`` replaces ``ConvReLU2d`` by one quantized
convolution with the ReLU applied before requantizing (no round trip through a separate
ReLU), and QAT's ``ConvBn2d`` learns with the batch norm folded into the weight.

``fuse_modules`` builds them; they run as the float modules they hold.
"""
from __future__ import annotations

from ....nn.activation import ReLU
from ....nn.batchnorm import BatchNorm1d, BatchNorm2d
from ....nn.container import Sequential
from ....nn.conv import Conv2d
from ....nn.linear import Linear


class _FusedModule(Sequential):
    _types: tuple = ()

    def __init__(self, *mods):
        for m, t in zip(mods, self._types):
            if type(m) is not t:
                names = ", ".join(type(x).__name__ for x in mods)
                want = ", ".join(x.__name__ for x in self._types)
                raise TypeError(f"Incorrect types for input modules for {type(self).__name__}: expected ({want}), "
                                f"got ({names})")
        super().__init__(*mods)


class ConvReLU2d(_FusedModule):
    """Conv2d then ReLU."""
    _types = (Conv2d, ReLU)

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvBn2d(_FusedModule):
    """Conv2d then BatchNorm2d (for QAT; eval-mode fusion folds them into one Conv2d)."""
    _types = (Conv2d, BatchNorm2d)

    def __init__(self, conv, bn):
        super().__init__(conv, bn)


class ConvBnReLU2d(_FusedModule):
    """Conv2d, BatchNorm2d, ReLU (for QAT)."""
    _types = (Conv2d, BatchNorm2d, ReLU)

    def __init__(self, conv, bn, relu):
        super().__init__(conv, bn, relu)


class LinearReLU(_FusedModule):
    """Linear then ReLU."""
    _types = (Linear, ReLU)

    def __init__(self, linear, relu):
        super().__init__(linear, relu)


class LinearBn1d(_FusedModule):
    """Linear then BatchNorm1d (for QAT)."""
    _types = (Linear, BatchNorm1d)

    def __init__(self, linear, bn):
        super().__init__(linear, bn)


class BNReLU2d(_FusedModule):
    """BatchNorm2d then ReLU."""
    _types = (BatchNorm2d, ReLU)

    def __init__(self, batch_norm, relu):
        super().__init__(batch_norm, relu)
