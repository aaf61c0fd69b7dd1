"""Laplace (double exponential) distribution."""
from __future__ import annotations

import math

import minitorch

from .distribution import Distribution
from .utils import LocScaleMixin, standard_uniform

__all__ = ["Laplace"]


class Laplace(LocScaleMixin, Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""


    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=minitorch.Size()):
        eps = minitorch.finfo(self.loc.dtype).eps
        u = standard_uniform(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)
        u = u * (2 - eps) + (eps - 1)  # in [eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        return 0.5 - 0.5 * diff.sign() * (-diff.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
