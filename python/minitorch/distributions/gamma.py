"""Gamma distribution."""
from __future__ import annotations

import minitorch

from . import constraints
from ._sampling import gamma_rsample, gammainc
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^c x^(c-1) e^(-rate x) / Gamma(c).

    rsample is reparameterized: the gradient in ``concentration`` is the implicit one
    (d x / d concentration at fixed CDF value), as PyTorch's."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        return gamma_rsample(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        value = minitorch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return minitorch.xlogy(c, r) + minitorch.xlogy(c - 1, value) - r * value - minitorch.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + minitorch.lgamma(c) + (1.0 - c) * minitorch.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return minitorch.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
