"""minitorch.distributions: probability distributions with sampling, log densities,
entropies and KL divergences, named and behaving as torch.distributions.

Policy gradients::

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -(dist.log_prob(action) * advantage).mean() - beta * dist.entropy().mean()

Reparameterized samples (``rsample``, where ``has_rsample``) carry gradients to the
parameters, e.g. a VAE's ``z = Normal(mu, sigma).rsample()`` and
``kl_divergence(Normal(mu, sigma), Normal(0., 1.))``.

Validation (``validate_args``, on by default as in PyTorch) checks the parameters against
``arg_constraints`` and the values given to log_prob against ``support``, raising
ValueError; ``Distribution.set_default_validate_args(False)`` turns it off.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, PowerTransform,
                         SigmoidTransform, SoftplusTransform, TanhTransform, Transform, identity_transform)
from .uniform import Uniform

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "ExpRelaxedCategorical",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "LogitRelaxedBernoulli",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "SigmoidTransform",
    "SoftplusTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transforms",
]
