"""Dirichlet distribution."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from . import constraints
from ._sampling import log_gamma_rsample
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): distributions on the simplex of the last dim.

    rsample normalizes Gamma(concentration, 1) draws; its gradient comes from theirs
    (implicit reparameterization)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, ("concentration",), _instance,
                                   {"concentration": self.event_shape})

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        # normalized in log space: the gammas of small concentrations underflow
        return F.softmax(log_gamma_rsample(self.concentration.expand(shape)), dim=-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (minitorch.xlogy(c - 1.0, value).sum(-1) + minitorch.lgamma(c.sum(-1))
                - minitorch.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = self.concentration
        above = (c - 1).clamp(min=0)
        mode = above / above.sum(-1, keepdim=True)
        # all concentrations below 1: the mass piles up at the vertex of the largest one
        vertex = F.one_hot(mode.argmax(-1), c.shape[-1]).to(mode.dtype)
        return minitorch.where((c < 1).all(-1, keepdim=True), vertex, mode)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return (minitorch.lgamma(c).sum(-1) - minitorch.lgamma(total) - (k - total) * minitorch.digamma(total)
                - ((c - 1.0) * minitorch.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - minitorch.lgamma(x.sum(-1))
