"""RelaxedBernoulli (binary Concrete / Gumbel-sigmoid) distribution."""
from __future__ import annotations

import minitorch

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import ProbsLogitsMixin, broadcast_all, clamp_probs, standard_uniform

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(ProbsLogitsMixin, Distribution):
    """LogitRelaxedBernoulli(temperature, probs=None, logits=None): the logit of a
    RelaxedBernoulli draw, (logistic noise + logits) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_probs_logits(LogitRelaxedBernoulli, batch_shape, (), _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(standard_uniform(shape, probs.dtype, probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return minitorch.as_tensor(self.temperature, dtype=diff.dtype, device=diff.device).log() + diff \
            - 2 * diff.exp().log1p()


class RelaxedMixin:
    """The parameters of a relaxed distribution, those of its base distribution."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(RelaxedMixin, TransformedDistribution):
    """RelaxedBernoulli(temperature, probs=None, logits=None): a reparameterizable
    relaxation of Bernoulli on (0, 1), sigmoid of a LogitRelaxedBernoulli; it tends to
    Bernoulli(probs) as temperature -> 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))
