"""Linear algebra from ``matmul``: ``mm``, ``mv`` and ``dot``, with PyTorch's checks of the
operands' dimensions (``matmul`` itself broadcasts; these do not).
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor


def _shapes_of(op: str, a: Tensor, b, dims: tuple) -> tuple:
    """Checks that ``b`` is a tensor and that ``(a.ndim, b.ndim) == dims``; returns both shapes."""
    if not isinstance(b, Tensor):
        raise TypeError(f"{op}(): second argument must be a Tensor, not {type(b).__name__}")
    sa, sb = tuple(a.shape), tuple(b.shape)
    if (a.ndim, b.ndim) != dims:
        raise _C.InputError(f"{op}: expected {dims[0]}-D and {dims[1]}-D tensors, got shapes {sa} and {sb}")
    return sa, sb


def mm(self, mat2: Tensor) -> Tensor:
    """Matrix product of two matrices: ``(n, k) @ (k, m) -> (n, m)``."""
    sa, sb = _shapes_of("mm", self, mat2, (2, 2))
    if sa[1] != sb[0]:
        raise _C.InputError(f"mm: shapes {sa} and {sb} cannot be multiplied ({sa[1]} != {sb[0]})")
    return self.matmul(mat2)


def mv(self, vec: Tensor) -> Tensor:
    """Matrix times vector: ``(n, k) @ (k,) -> (n,)``."""
    sa, sb = _shapes_of("mv", self, vec, (2, 1))
    if sa[1] != sb[0]:
        raise _C.InputError(f"mv: shapes {sa} and {sb} cannot be multiplied ({sa[1]} != {sb[0]})")
    return self.matmul(vec)


def dot(self, other: Tensor) -> Tensor:
    """Dot product of two vectors of the same length, as a 0-dim tensor."""
    sa, sb = _shapes_of("dot", self, other, (1, 1))
    if sa != sb:
        raise _C.InputError(f"dot: the vectors have different lengths ({sa[0]} != {sb[0]})")
    return self.matmul(other)
