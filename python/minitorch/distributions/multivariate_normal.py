"""Multivariate normal distribution."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import Distribution
from .utils import LocScaleMixin, lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """bmat @ bvec over broadcast batch dims."""
    return (bmat * bvec.unsqueeze(-2)).sum(-1)


def _tril_inverse(tril):
    """Inverse of lower-triangular matrices, by triangular solves against the identity."""
    eye = minitorch.eye(tril.shape[-1], dtype=tril.dtype, device=tril.device)
    return minitorch.linalg.solve_triangular(tril, eye.expand(tril.shape), upper=False)


def _batch_mahalanobis(tril, x):
    """x^T (L L^T)^-1 x = |L^-1 x|^2 over broadcast batch dims (L inverted once per matrix,
    so that many samples sharing one L cost an elementwise product each)."""
    return _batch_mv(_tril_inverse(tril), x).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor L of precision^-1, from the Cholesky factor of the
    precision with rows and columns reversed (no explicit inverse of the precision)."""
    flipped = minitorch.linalg.cholesky(precision.flip(-2, -1)).flip(-2, -1)
    return _tril_inverse(flipped.mT)


def _half_log_det(tril):
    """log sqrt(det(L L^T)) = sum log diag(L)."""
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _batch_trace_xxt(x):
    """trace(X X^T) of each matrix in the batch."""
    return x.pow(2).sum(-1).sum(-1)


class MultivariateNormal(LocScaleMixin, Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
    scale_tril=None): a Gaussian vector of mean ``loc`` and covariance given by exactly one
    of the covariance, its inverse, or its lower Cholesky factor (the cheapest)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {"covariance_matrix": covariance_matrix, "precision_matrix": precision_matrix,
                 "scale_tril": scale_tril}
        given = {k: v for k, v in given.items() if v is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        (name, matrix), = given.items()
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = minitorch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        Distribution.__init__(self, batch_shape, loc.shape[-1:], validate_args=validate_args)  # not the mixin's
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = minitorch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        n = self.event_shape[0]
        new = self._expand_params(
            MultivariateNormal, batch_shape,
            ("loc", "covariance_matrix", "precision_matrix", "scale_tril"), _instance,
            {"loc": (n,), "covariance_matrix": (n, n), "precision_matrix": (n, n), "scale_tril": (n, n)})
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return minitorch.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def variance(self):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=minitorch.Size()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
