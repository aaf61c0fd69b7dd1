"""RelaxedOneHotCategorical (Concrete / Gumbel-softmax) distribution."""
from __future__ import annotations

import minitorch

from . import constraints
from .categorical import CategoricalWrapperMixin
from .distribution import Distribution
from .relaxed_bernoulli import RelaxedMixin
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs, standard_uniform

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(CategoricalWrapperMixin, Distribution):
    """ExpRelaxedCategorical(temperature, probs=None, logits=None): the log of a
    RelaxedOneHotCategorical draw, log_softmax((logits + Gumbel noise) / temperature)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._init_categorical(probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_categorical(ExpRelaxedCategorical, batch_shape, _instance)
        new.temperature = self.temperature
        return self._finish_expand(new, batch_shape)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(standard_uniform(shape, self.logits.dtype, self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        temperature = minitorch.as_tensor(self.temperature, dtype=value.dtype, device=value.device)
        log_scale = minitorch.full_like(temperature, float(k)).lgamma() - temperature.log() * -(k - 1)
        score = self.logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(RelaxedMixin, TransformedDistribution):
    """RelaxedOneHotCategorical(temperature, probs=None, logits=None): Gumbel-softmax
    relaxation of OneHotCategorical on the simplex, reparameterizable; it tends to
    OneHotCategorical(probs) as temperature -> 0."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedOneHotCategorical, _instance))
