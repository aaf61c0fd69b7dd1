"""Cauchy (Lorentz) distribution."""
from __future__ import annotations

import math

import minitorch

from .distribution import Distribution
from .utils import LocScaleMixin, standard_uniform

__all__ = ["Cauchy"]


class Cauchy(LocScaleMixin, Distribution):
    """Cauchy(loc, scale): the ratio of two independent normals, shifted and scaled."""


    @property
    def mean(self):
        return minitorch.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        return minitorch.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=minitorch.Size()):
        u = standard_uniform(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).pow(2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
