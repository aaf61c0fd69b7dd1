"""OneHotCategorical: Categorical with one-hot vectors for values."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from . import constraints
from .categorical import CategoricalWrapperMixin
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(CategoricalWrapperMixin, Distribution):
    """OneHotCategorical(probs=None, logits=None): one-hot vectors of length K whose hot
    index is Categorical(probs, logits)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._init_categorical(probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._finish_expand(self._expand_categorical(OneHotCategorical, batch_shape, _instance), batch_shape)

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=minitorch.Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = minitorch.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through the one-hot
    draw: ``sample + (probs - probs.detach())``."""

    has_rsample = True

    def rsample(self, sample_shape=minitorch.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
