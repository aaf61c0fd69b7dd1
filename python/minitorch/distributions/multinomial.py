"""Multinomial distribution."""
from __future__ import annotations

import minitorch

from . import constraints
from .binomial import Binomial
from .categorical import CategoricalWrapperMixin
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(CategoricalWrapperMixin, Distribution):
    """Multinomial(total_count=1, probs=None, logits=None): counts of each of K categories
    in ``total_count`` (one int for the whole batch) Categorical(probs, logits) draws."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._init_categorical(probs, logits, validate_args)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_categorical(Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=minitorch.Size()):
        sample_shape = minitorch.Size(tuple(sample_shape))
        draws = self._categorical.sample(minitorch.Size((self.total_count,)) + sample_shape)
        draws = draws.movedim(0, -1)  # sample_shape + batch_shape + (total_count,)
        counts = minitorch.zeros(self._extended_shape(sample_shape), dtype=minitorch.int64, device=draws.device)
        counts.scatter_add_(-1, draws, minitorch.ones_like(draws))
        return counts.to(self.probs.dtype)

    def entropy(self):
        n = minitorch.tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        term1 = n * self._categorical.entropy() - minitorch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * minitorch.lgamma(support + 1)).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = minitorch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = minitorch.lgamma(value + 1).sum(-1)
        # a zero count of an impossible category contributes 0, not 0 * -inf
        logits = minitorch.where((value == 0) & (logits == float("-inf")), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
