"""Geometric distribution: failures before the first success."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from . import constraints
from .distribution import Distribution
from .utils import ProbsLogitsMixin, broadcast_all, standard_uniform

__all__ = ["Geometric"]


class Geometric(ProbsLogitsMixin, Distribution):
    """Geometric(probs=None, logits=None): the number k >= 0 of failures before the first
    success of Bernoulli(probs) trials, P(k) = (1 - p)^k p."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to be positive but found invalid values:\n{value[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_logits(Geometric, batch_shape, (), _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return minitorch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = minitorch.finfo(self.probs.dtype).tiny
        with minitorch.no_grad():
            u = standard_uniform(shape, self.probs.dtype, self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: 0 * log(0) counts as 0
        probs = minitorch.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
