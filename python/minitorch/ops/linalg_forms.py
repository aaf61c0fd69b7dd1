"""The older top-level forms of minitorch.linalg's ops, with PyTorch's arguments:
``minitorch.det``/``Tensor.det``, ``logdet``, ``slogdet``, ``inverse``, ``cholesky``,
``qr(some=True)``, ``svd(some=True, compute_uv=True)`` (V, not Vh), ``pinverse(rcond)``,
``cholesky_solve``/``cholesky_inverse`` (from a Cholesky factor) and ``matrix_power``.
Each calls minitorch.linalg (python/minitorch/linalg/), where gradients and errors live.
"""
from __future__ import annotations

import collections

from .. import _C
from .._C import Tensor

_SlogdetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])
_QRResult = collections.namedtuple("qr", ["Q", "R"])
_SVDResult = collections.namedtuple("svd", ["U", "S", "V"])


def _la():
    from .. import linalg  # imported late: minitorch.linalg is set up after these forms
    return linalg


def det(self) -> Tensor:
    """The determinant (``minitorch.linalg.det``)."""
    return _la().det(self)


def logdet(self) -> Tensor:
    """``log(det(A))``: nan where the determinant is negative, -inf where it is zero."""
    sign, logabsdet = _la().slogdet(self)
    return _C.where(sign < 0, _C._full((), float("nan"), logabsdet.dtype, logabsdet.device), logabsdet)


def slogdet(self) -> tuple:
    """``(sign, logabsdet)`` (``minitorch.linalg.slogdet``)."""
    return _SlogdetResult(*_la().slogdet(self))


def inverse(self) -> Tensor:
    """The inverse of a square matrix (``minitorch.linalg.inv``)."""
    return _la().inv(self)


def cholesky(self, upper: bool = False) -> Tensor:
    """The Cholesky factor (``minitorch.linalg.cholesky``)."""
    return _la().cholesky(self, upper=upper)


def qr(self, some: bool = True) -> tuple:
    """``(Q, R)``: reduced when ``some`` (``minitorch.linalg.qr(mode='reduced')``), else complete."""
    return _QRResult(*_la().qr(self, mode="reduced" if some else "complete"))


def svd(self, some: bool = True, compute_uv: bool = True) -> tuple:
    """``(U, S, V)`` with ``A = U diag(S) V^T`` -- V, where ``linalg.svd`` returns Vh = V^T;
    ``some=True`` gives the reduced factors. With ``compute_uv=False`` U and V are zero
    matrices (m, m) and (n, n), as in PyTorch."""
    la = _la()
    if not compute_uv:
        s = la.svdvals(self)
        m, n = self.shape[-2], self.shape[-1]
        batch = tuple(self.shape[:-2])
        return _SVDResult(self.new_zeros((*batch, m, m)), s, self.new_zeros((*batch, n, n)))
    u, s, vh = la.svd(self, full_matrices=not some)
    return _SVDResult(u, s, vh.mT)


def pinverse(self, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, singular values below ``rcond * max`` counting as zero."""
    return _la().pinv(self, rtol=rcond)


def cholesky_solve(self, input2: Tensor, upper: bool = False) -> Tensor:
    """X with ``A X = B`` where ``A = L L^T`` (``U^T U`` when ``upper``), from its Cholesky
    factor ``input2``; ``self`` is B (..., n, k). Two triangular solves."""
    la = _la()
    if upper:
        y = la.solve_triangular(input2.mT, self, upper=False)
        return la.solve_triangular(input2, y, upper=True)
    y = la.solve_triangular(input2, self, upper=False)
    return la.solve_triangular(input2.mT, y, upper=True)


def cholesky_inverse(self, upper: bool = False) -> Tensor:
    """The inverse of ``A = L L^T`` (``U^T U`` when ``upper``) from its Cholesky factor ``self``."""
    n = self.shape[-1]
    eye = _C._eye(n, n, self.dtype, self.device).expand(*self.shape)
    return cholesky_solve(eye, self, upper)


def matrix_power(self, n: int) -> Tensor:
    """``self`` (square matrices (..., n, n)) to the integer power ``n`` by repeated squaring:
    ``n = 0`` gives the identity, ``n < 0`` the power of the inverse
    (``minitorch.linalg.matrix_power``)."""
    return _la().matrix_power(self, n)
