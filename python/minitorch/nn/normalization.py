"""``LayerNorm``, ``RMSNorm`` and ``GroupNorm``: normalise each sample over its own features."""
from __future__ import annotations

from .. import _C
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """Normalises over the last dims (those of ``normalized_shape``) of each sample, then
    applies an elementwise ``weight`` (ones) and ``bias`` (zeros) of that shape.

    >>> ln = nn.LayerNorm(4)            # x: (batch, ..., 4)
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = F._shape_tuple(normalized_shape, "normalized_shape", "LayerNorm")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.register_parameter("weight", Parameter(_C._empty(self.normalized_shape, dtype, device))
                                if elementwise_affine else None)
        self.register_parameter("bias", Parameter(_C._empty(self.normalized_shape, dtype, device))
                                if elementwise_affine and bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the last dims (those of ``normalized_shape``) of
    each sample, then an elementwise ``weight`` (ones) of that shape; no bias (PyTorch's
    ``nn.RMSNorm``). ``eps=None``: the machine epsilon of the type it computes in.

    >>> norm = nn.RMSNorm(4)            # x: (batch, ..., 4)
    """

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = F._shape_tuple(normalized_shape, "normalized_shape", "RMSNorm")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.register_parameter("weight", Parameter(_C._empty(self.normalized_shape, dtype, device))
                                if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Splits the channels of (N, C, *) input into ``num_groups`` groups and normalises each
    group of each sample; per-channel ``weight`` (ones) and ``bias`` (zeros) when ``affine``."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        for name in ("weight", "bias"):
            self.register_parameter(name, Parameter(_C._empty((num_channels,), dtype, device)) if affine else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, x):
        if x.dim() >= 2 and x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: expected input with {self.num_channels} channels, got input of shape "
                             f"{tuple(x.shape)}")
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class LocalResponseNorm(Module):
    """AlexNet's normalisation across ``size`` neighbouring channels (``F.local_response_norm``)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
