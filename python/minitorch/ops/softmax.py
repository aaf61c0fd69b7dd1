"""``Tensor.softmax`` and ``Tensor.log_softmax`` along a dim: C++ ops (``cpp/src/ops/nn.cpp``)
with their own kernels and backward; ``minitorch.nn.functional`` has their function forms.
Tensor methods by ops/declarations.py (attached by ops/registry.py).
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor
from ._args import int_arg, numpy_names


@numpy_names
def softmax(self, dim: int, dtype=None) -> Tensor:
    """``softmax`` along ``dim`` (as ``minitorch.nn.functional.softmax``)."""
    x = self if dtype is None else self.to(dtype)
    return _C._softmax(x, int_arg("softmax", "dim", dim))


@numpy_names
def log_softmax(self, dim: int, dtype=None) -> Tensor:
    """``log_softmax`` along ``dim``."""
    x = self if dtype is None else self.to(dtype)
    return _C._log_softmax(x, int_arg("log_softmax", "dim", dim))
