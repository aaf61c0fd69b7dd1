"""Bernoulli distribution."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from . import constraints
from .exp_family import ExponentialFamily
from .utils import ProbsLogitsMixin, broadcast_all, enumerate_values

__all__ = ["Bernoulli"]


class Bernoulli(ProbsLogitsMixin, ExponentialFamily):
    """Bernoulli(probs=None, logits=None): 1 with probability ``probs`` (or
    ``sigmoid(logits)``), else 0. Give exactly one of the two."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_logits(Bernoulli, batch_shape, (), _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return minitorch.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            return minitorch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        return enumerate_values(self, 2, self._param.dtype, expand)

    @property
    def _natural_params(self):
        return (minitorch.logit(self.probs),)

    def _log_normalizer(self, x):
        return minitorch.log1p(minitorch.exp(x))

