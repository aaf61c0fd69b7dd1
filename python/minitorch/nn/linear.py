"""``nn.Linear``, ``nn.LazyLinear``, ``nn.Bilinear``, ``nn.Identity``, ``nn.Flatten`` and ``nn.Unflatten``."""
from __future__ import annotations

import math

from .. import _C
from . import functional as F
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter


class Linear(Module):
    """``y = x @ W.T + b`` with W (out_features, in_features), initialised like PyTorch:
    W ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform with a=sqrt(5)), b likewise."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"Linear: {name} must be a non-negative int, got {v!r}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_C._empty((out_features, in_features), dtype, device))
        self.bias = Parameter(_C._empty((out_features,), dtype, device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5)) if self.in_features else init.zeros_(self.weight)
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dim of its first input; after that call
    it *is* a ``Linear`` (its class changes), initialised as one (nn/lazy.py).

    >>> fc = nn.LazyLinear(10)
    >>> fc(minitorch.randn(4, 784)).shape, fc
    (minitorch.Size([4, 10]), Linear(in_features=784, out_features=10, bias=True))
    """

    cls_to_become = Linear
    _lazy_size = "in_features"

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__(0, out_features, False)  # (Linear checks out_features)
        self._make_lazy(bias, device, dtype)

    def _read_input_size(self, input) -> None:
        if input.dim() == 0 or input.shape[-1] == 0:
            raise ValueError(f"LazyLinear: cannot infer in_features from an input of shape {tuple(input.shape)} (its "
                             "last dim must be a positive size)")
        self.in_features = input.shape[-1]

    def _lazy_shape(self, name: str) -> tuple:
        return (self.out_features, self.in_features or None) if name == "weight" else (self.out_features,)

    def _sizes_from_parameters(self) -> None:
        self.in_features = self.weight.shape[1]


class Identity(Module):
    """Returns its input (a placeholder layer)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size`` (a tuple or list of ints, one of them
    may be -1): the inverse of ``Flatten``.

    >>> nn.Unflatten(1, (2, 5))(minitorch.zeros(3, 10)).shape
    minitorch.Size([3, 2, 5])
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("Unflatten: a named dim needs named tensors, which minitorch does not have; "
                            "give dim as an int")
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"Unflatten: invalid argument type for dim parameter: {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, s in enumerate(unflattened_size):
            if isinstance(s, bool) or not isinstance(s, int):
                raise TypeError(f"Unflatten: unflattened_size must be tuple of ints, but found element of type "
                                f"{type(s).__name__} at pos {i}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, x):
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Bilinear(Module):
    """``y = x1^T A x2 + b`` for each output feature: weight (out_features, in1_features,
    in2_features), bias (out_features,), both ~ U(-1/sqrt(in1), 1/sqrt(in1)) as in PyTorch.

    >>> m = nn.Bilinear(3, 4, 2)
    >>> m(minitorch.randn(5, 3), minitorch.randn(5, 4)).shape
    minitorch.Size([5, 2])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        for name, v in (("in1_features", in1_features), ("in2_features", in2_features),
                        ("out_features", out_features)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"Bilinear: {name} must be a non-negative int, got {v!r}")
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_C._empty((out_features, in1_features, in2_features), dtype, device))
        self.bias = Parameter(_C._empty((out_features,), dtype, device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
