"""Categorical distribution over {0, ..., K - 1}."""
from __future__ import annotations

import minitorch

from . import constraints
from .distribution import Distribution
from .utils import ProbsLogitsMixin, enumerate_values, one_of_probs_logits

__all__ = ["Categorical", "CategoricalWrapperMixin"]


class Categorical(ProbsLogitsMixin, Distribution):
    """Categorical(probs=None, logits=None): index i with probability ``probs[..., i]``
    (normalized over the last dim) or ``softmax(logits)[..., i]``. Give exactly one."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of_probs_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else minitorch.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        param_shape = {"probs": (self._num_events,), "logits": (self._num_events,)}
        new = self._expand_probs_logits(Categorical, batch_shape, (), _instance, param_shape)
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return minitorch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=minitorch.Size()):
        sample_shape = minitorch.Size(tuple(sample_shape))
        probs_2d = self.probs.reshape(-1, self._num_events)
        with minitorch.no_grad():
            draws = minitorch.multinomial(probs_2d.detach(), sample_shape.numel(), True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = minitorch.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=minitorch.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        return enumerate_values(self, self._num_events, minitorch.int64, expand)


class CategoricalWrapperMixin:
    """For distributions built on a Categorical ``self._categorical`` (OneHotCategorical,
    Multinomial, ExpRelaxedCategorical): its parameters, and the events of its K
    categories."""

    def _init_categorical(self, probs, logits, validate_args):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def _expand_categorical(self, cls, batch_shape, _instance=None):
        new = self._get_checked_instance(cls, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape
