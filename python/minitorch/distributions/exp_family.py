"""ExponentialFamily: base class of the distributions of the exponential family."""
from __future__ import annotations

import minitorch

from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Densities p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)). A subclass that
    defines ``_natural_params`` (theta), ``_log_normalizer`` (F) and
    ``_mean_carrier_measure`` (E[k(x)]) gets ``entropy`` from the Bregman divergence of F;
    the distributions here override it with their closed forms."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with minitorch.enable_grad():
            log_norm = self._log_normalizer(*params)
            grads = minitorch.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for p, g in zip(params, grads):
            result = result - sum_rightmost(p * g, len(self.event_shape))
        return result
