"""Binomial distribution."""
from __future__ import annotations

import minitorch

from . import constraints
from ._sampling import binomial
from .distribution import Distribution
from .utils import ProbsLogitsMixin, clamp_by_zero, enumerate_values

__all__ = ["Binomial"]


class Binomial(ProbsLogitsMixin, Distribution):
    """Binomial(total_count=1, probs=None, logits=None): successes in ``total_count``
    independent Bernoulli(probs) trials. Give exactly one of probs and logits."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_logits(Binomial, batch_shape, ("total_count",), _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_binom = minitorch.lgamma(n + 1) - minitorch.lgamma(value + 1) - minitorch.lgamma(n - value + 1)
        # n * log(1 + e^logits), kept finite for large |logits|
        log_normalizer = n * clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
        return value * logits - log_normalizer + log_binom

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max())
        if not bool((self.total_count.min() == count).all()):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        count = self._homogeneous_count("entropy")
        log_prob = self.log_prob(enumerate_values(self, count + 1, self._param.dtype, False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        return enumerate_values(self, count + 1, self._param.dtype, expand)
