"""MixtureSameFamily: a mixture of components of one distribution family."""
from __future__ import annotations

import minitorch
import minitorch.nn.functional as F

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """MixtureSameFamily(mixture_distribution, component_distribution): pick a component
    with the Categorical ``mixture_distribution``, then draw from that component: the
    rightmost batch dim of ``component_distribution`` indexes the components (e.g. a
    Gaussian mixture from Categorical(logits) and Normal(locs, scales))."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an instance of minitorch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "minitorch.distributions.Distribution")
        mix_batch = mixture_distribution.batch_shape
        comp_batch = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mix_batch), reversed(comp_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({comp_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._finish_expand(new, batch_shape, new._component_distribution.event_shape)

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad_mixture(self, x):
        """Mixture weights (..., K) -> (..., K, 1 per event dim), to broadcast with the
        components' (..., K, *event) moments."""
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    def _pad(self, x):
        """A value (..., *event) -> (..., 1, *event), against the K components."""
        return x.unsqueeze(-1 - self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        comp = self.component_distribution
        mean_cond_var = (probs * comp.variance).sum(dim)
        var_cond_mean = (probs * (comp.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix = F.log_softmax(self.mixture_distribution.logits, dim=-1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            event_shape = tuple(self.event_shape)
            mixture = self.mixture_distribution
            if mixture.batch_shape != self.batch_shape:  # draw one index per batch element
                mixture = mixture.expand(self.batch_shape)
            mix_sample = mixture.sample(sample_shape)  # sample + batch
            comp_samples = self.component_distribution.sample(sample_shape)  # sample + batch + (K,) + event
            index = mix_sample.reshape(tuple(mix_sample.shape) + (1,) * (len(event_shape) + 1))
            index = index.expand(tuple(mix_sample.shape) + (1,) + event_shape)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})")
