"""Student's t distribution."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all, standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc=0.0, scale=1.0): loc + scale * Z / sqrt(V / df) for Z ~ Normal(0, 1)
    and V ~ Chi2(df). rsample is reparameterized in all three (df through Chi2's implicit
    gradient)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return minitorch.where(self.df > 1, self.loc, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / minitorch.where(df > 2, df - 2, 1.0)
        infinite = minitorch.where(df > 1, float("inf"), float("nan"))
        return minitorch.where(df > 2, finite, infinite)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        z = standard_normal(shape, self.df.dtype, self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * (v / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
             + minitorch.lgamma(0.5 * df) - minitorch.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - z

    def entropy(self):
        df = self.df
        lbeta = minitorch.lgamma(0.5 * df) + math.lgamma(0.5) - minitorch.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (minitorch.digamma(0.5 * (df + 1)) - minitorch.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
