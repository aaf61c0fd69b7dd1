"""The fixed cases that make_golden_distributions.py evaluates with PyTorch and
test_dist_golden.py with minitorch: distributions built the same way in both libraries.

A case's ``make(D, t)`` builds the distribution from a distributions module ``D``
(torch.distributions or minitorch.distributions) and ``t`` (nested lists -> float64 tensor
on the test's device). ``values`` are scored by log_prob (and cdf where listed),
``probs`` by icdf; ``props`` are the attributes and methods compared."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

MOMENTS = ("mean", "variance", "stddev")


def tensor_maker(device):
    """The ``t`` of minitorch's cases: nested lists -> float64 tensor on ``device``."""
    import minitorch
    import numpy as np

    def t(x):
        return minitorch.tensor(np.asarray(x, dtype=np.float64), dtype=minitorch.float64, device=device)
    return t


@dataclass
class Case:
    name: str
    make: Callable
    values: list | None = None
    props: tuple = ()
    cdf: bool = False
    probs: list | None = None  # icdf inputs
    extra: dict = field(default_factory=dict)  # name -> fn(dist, t) of other quantities


U3 = [[0.05, 0.5, 0.97], [0.3, 0.01, 0.6]]  # icdf inputs

CASES = [
    Case("normal", lambda D, t: D.Normal(t([-1.0, 0.0, 2.5]), t([0.5, 1.0, 3.0])),
         values=[[-1.2, 0.3, 7.0], [0.0, -2.5, 2.5]], props=MOMENTS + ("mode", "entropy"), cdf=True, probs=U3),
    Case("normal_scalar_loc", lambda D, t: D.Normal(0.5, t([[1.0], [2.0]])),
         values=[[0.1, 3.0, -1.0]], props=MOMENTS + ("entropy",), cdf=True),
    Case("bernoulli_probs", lambda D, t: D.Bernoulli(probs=t([0.1, 0.5, 0.9, 1.0])),
         values=[[0.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0]], props=MOMENTS + ("entropy", "logits", "mode")),
    Case("bernoulli_logits", lambda D, t: D.Bernoulli(logits=t([-30.0, -2.0, 0.3, 4.0])),
         values=[[0.0, 1.0, 1.0, 0.0]], props=MOMENTS + ("entropy", "probs", "mode")),
    Case("categorical_probs", lambda D, t: D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.1, 0.0, 0.9]])),
         values=[[0.0, 2.0], [2.0, 0.0], [1.0, 2.0]], props=("entropy", "logits", "probs", "mode")),
    Case("categorical_logits", lambda D, t: D.Categorical(logits=t([[1.0, -2.0, 0.5, 3.0]])),
         values=[[0.0], [3.0], [1.0]], props=("entropy", "logits", "probs", "mode"),
         extra={"enumerate_support": lambda d, t: d.enumerate_support()}),
    Case("onehot_categorical", lambda D, t: D.OneHotCategorical(probs=t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
         values=[[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]],
         props=MOMENTS + ("entropy", "mode")),
    Case("uniform", lambda D, t: D.Uniform(t([0.0, -1.0]), t([1.0, 3.0])),
         values=[[0.5, 2.9], [0.0, -1.0]], props=MOMENTS + ("entropy",), cdf=True, probs=[[0.1, 0.9]]),
    Case("beta", lambda D, t: D.Beta(t([0.5, 2.0, 5.0]), t([0.7, 3.0, 1.5])),
         values=[[0.1, 0.5, 0.93], [0.999, 0.02, 0.4]], props=MOMENTS + ("entropy",),
         extra={"mode": lambda d, t: d.mode[1:]}),
    Case("gamma", lambda D, t: D.Gamma(t([0.5, 2.0, 9.0]), t([1.0, 0.5, 3.0])),
         values=[[0.1, 4.0, 3.0], [2.5, 0.3, 1.0]], props=MOMENTS + ("entropy", "mode"), cdf=True),
    Case("chi2", lambda D, t: D.Chi2(t([1.0, 3.5, 10.0])),
         values=[[0.2, 3.0, 12.0]], props=MOMENTS + ("entropy",), cdf=True),
    Case("exponential", lambda D, t: D.Exponential(t([0.5, 2.0])),
         values=[[0.1, 3.0], [0.0, 0.7]], props=MOMENTS + ("entropy", "mode"), cdf=True, probs=[[0.2, 0.99]]),
    Case("laplace", lambda D, t: D.Laplace(t([0.0, -2.0]), t([1.0, 0.3])),
         values=[[0.5, -2.1], [-3.0, 1.0]], props=MOMENTS + ("entropy", "mode"), cdf=True,
         probs=[[0.2, 0.7], [0.5, 0.001]]),
    Case("poisson", lambda D, t: D.Poisson(t([0.5, 3.0, 20.0])),
         values=[[0.0, 2.0, 25.0], [3.0, 0.0, 15.0]], props=MOMENTS + ("mode",)),
    Case("binomial_probs", lambda D, t: D.Binomial(10, probs=t([0.2, 0.7, 0.0])),
         values=[[0.0, 7.0, 0.0], [10.0, 3.0, 0.0]], props=MOMENTS + ("entropy", "mode"),
         extra={"enumerate_support": lambda d, t: d.enumerate_support()}),
    Case("binomial_logits", lambda D, t: D.Binomial(t([5.0, 12.0]), logits=t([-1.0, 2.5])),
         values=[[2.0, 12.0], [5.0, 0.0]], props=MOMENTS + ("probs",)),
    Case("geometric_probs", lambda D, t: D.Geometric(probs=t([0.2, 0.7, 1.0])),
         values=[[0.0, 3.0, 0.0], [10.0, 1.0, 0.0]], props=MOMENTS + ("entropy", "mode", "logits")),
    Case("geometric_logits", lambda D, t: D.Geometric(logits=t([-1.5, 0.4])),
         values=[[2.0, 0.0]], props=MOMENTS + ("entropy", "probs")),
    Case("multinomial", lambda D, t: D.Multinomial(6, probs=t([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])),
         values=[[[1.0, 2.0, 3.0], [0.0, 3.0, 3.0]], [[6.0, 0.0, 0.0], [0.0, 0.0, 6.0]]],
         props=("mean", "variance", "entropy")),
    Case("dirichlet", lambda D, t: D.Dirichlet(t([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])),
         values=[[[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], [[0.01, 0.01, 0.98], [0.3, 0.3, 0.4]]],
         props=("mean", "variance", "entropy", "mode")),
    Case("mvn_covariance",
         lambda D, t: D.MultivariateNormal(t([[0.0, 1.0, -1.0], [0.5, 0.5, 0.5]]),
                                           covariance_matrix=t([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])),
         values=[[[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]], [[2.0, 2.0, 2.0], [0.5, 0.5, 0.5]]],
         props=("mean", "variance", "entropy", "mode", "scale_tril", "precision_matrix", "covariance_matrix")),
    Case("mvn_scale_tril",
         lambda D, t: D.MultivariateNormal(t([1.0, -1.0]),
                                           scale_tril=t([[[1.5, 0.0], [0.4, 0.7]], [[0.3, 0.0], [-1.0, 2.0]]])),
         values=[[[0.0, 0.0], [0.0, 0.0]], [[1.0, -1.0], [3.0, 0.5]]],
         props=("mean", "variance", "entropy", "covariance_matrix", "precision_matrix")),
    Case("mvn_precision",
         lambda D, t: D.MultivariateNormal(t([0.0, 0.0, 0.0]),
                                           precision_matrix=t([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])),
         values=[[0.3, -0.2, 1.0]], props=("variance", "entropy", "scale_tril", "covariance_matrix")),
    Case("lognormal", lambda D, t: D.LogNormal(t([0.0, 1.0]), t([0.5, 1.2])),
         values=[[0.3, 2.0], [1.0, 10.0]], props=MOMENTS + ("entropy", "mode"), cdf=True, probs=[[0.25, 0.9]]),
    Case("halfnormal", lambda D, t: D.HalfNormal(t([0.5, 2.0])),
         values=[[0.3, 2.0], [0.0, 5.0]], props=MOMENTS + ("entropy",), cdf=True, probs=[[0.25, 0.9]]),
    Case("studentt", lambda D, t: D.StudentT(t([0.8, 1.5, 5.0]), t([0.0, 1.0, -1.0]), t([1.0, 2.0, 0.5])),
         values=[[0.3, 2.0, -1.5], [-4.0, 1.0, 8.0]], props=("mean", "variance", "entropy", "mode")),
    Case("cauchy", lambda D, t: D.Cauchy(t([0.0, 2.0]), t([1.0, 0.3])),
         values=[[0.5, 2.1], [-30.0, 1.0]], props=("entropy", "mode"), cdf=True, probs=[[0.2, 0.7]]),
    Case("relaxed_bernoulli", lambda D, t: D.RelaxedBernoulli(t(0.5), probs=t([0.2, 0.7])),
         values=[[0.1, 0.95], [0.5, 0.5]], props=("probs", "logits")),
    Case("relaxed_onehot", lambda D, t: D.RelaxedOneHotCategorical(t(0.7), probs=t([0.2, 0.3, 0.5])),
         values=[[0.1, 0.2, 0.7], [0.98, 0.01, 0.01]], props=("probs",)),
    Case("independent_normal", lambda D, t: D.Independent(D.Normal(t([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]),
                                                                   t([[1.0, 2.0, 0.5], [1.0, 1.0, 3.0]])), 1),
         values=[[[0.0, 0.0, 0.0], [0.0, 0.5, 0.0]], [[1.0, 1.0, 1.0], [2.0, 4.0, 6.0]]], props=MOMENTS + ("entropy",)),
    Case("mixture_normal",
         lambda D, t: D.MixtureSameFamily(D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
                                          D.Normal(t([[-2.0, 0.0, 3.0], [1.0, 1.5, 2.0]]),
                                                   t([[0.5, 1.0, 2.0], [1.0, 0.2, 0.3]]))),
         values=[[0.0, 1.0], [-2.0, 5.0], [3.0, 1.4]], props=("mean", "variance"), cdf=True),
    Case("mixture_independent",
         lambda D, t: D.MixtureSameFamily(D.Categorical(logits=t([0.0, 1.0])),
                                          D.Independent(D.Normal(t([[0.0, 1.0], [2.0, -1.0]]),
                                                                 t([[1.0, 0.5], [2.0, 1.0]])), 1)),
         values=[[0.0, 0.0], [1.0, 2.0], [2.0, -1.0]], props=("mean", "variance")),
    Case("transformed_affine_sigmoid",
         lambda D, t: D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])),
                                                [D.transforms.AffineTransform(1.0, 2.0),
                                                 D.transforms.SigmoidTransform()]),
         values=[[0.3, 0.9], [0.5, 0.5]], cdf=True, probs=[[0.3, 0.6]]),
    Case("transformed_tanh",
         lambda D, t: D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])),
                                                [D.transforms.TanhTransform()]),
         values=[[0.3, 0.9], [-0.5, 0.5]]),
    Case("transformed_negative_affine",
         lambda D, t: D.TransformedDistribution(D.Exponential(t([1.0, 2.0])),
                                                [D.transforms.AffineTransform(t([1.0, 0.0]), t([-2.0, -1.0]))]),
         values=[[0.5, -1.0]], cdf=True, probs=[[0.3, 0.6]]),
]


# KL pairs: (name, make_p, make_q)
KL_CASES = [
    ("normal", lambda D, t: D.Normal(t([0.0, 1.0, -2.0]), t([1.0, 0.5, 3.0])),
     lambda D, t: D.Normal(t([0.5, 1.0, 0.0]), t([2.0, 0.5, 1.0]))),
    ("bernoulli", lambda D, t: D.Bernoulli(probs=t([0.1, 0.5, 0.0, 1.0, 0.3])),
     lambda D, t: D.Bernoulli(probs=t([0.3, 0.5, 0.2, 0.0, 1.0]))),
    ("categorical", lambda D, t: D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [0.5, 0.5, 0.0]])),
     lambda D, t: D.Categorical(logits=t([[0.0, 1.0, -1.0], [2.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))),
    ("categorical_zero_q", lambda D, t: D.Categorical(probs=t([[0.2, 0.8], [1.0, 0.0]])),
     lambda D, t: D.Categorical(probs=t([[0.0, 1.0], [0.5, 0.5]]))),
    ("onehot", lambda D, t: D.OneHotCategorical(probs=t([0.2, 0.3, 0.5])),
     lambda D, t: D.OneHotCategorical(probs=t([0.4, 0.4, 0.2]))),
    ("beta", lambda D, t: D.Beta(t([0.5, 2.0]), t([1.5, 3.0])), lambda D, t: D.Beta(t([1.0, 4.0]), t([1.0, 0.7]))),
    ("gamma", lambda D, t: D.Gamma(t([0.5, 3.0]), t([1.0, 2.0])), lambda D, t: D.Gamma(t([2.0, 3.0]), t([0.5, 0.7]))),
    ("dirichlet", lambda D, t: D.Dirichlet(t([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])),
     lambda D, t: D.Dirichlet(t([1.0, 1.0, 1.0]))),
    ("exponential", lambda D, t: D.Exponential(t([0.5, 2.0])), lambda D, t: D.Exponential(t([1.0, 0.1]))),
    ("uniform", lambda D, t: D.Uniform(t([0.0, 0.0, -1.0]), t([1.0, 2.0, 1.0])),
     lambda D, t: D.Uniform(t([-1.0, 0.5, -2.0]), t([2.0, 3.0, 0.5]))),
    ("mvn", lambda D, t: D.MultivariateNormal(t([[0.0, 1.0], [1.0, -1.0]]),
                                              covariance_matrix=t([[2.0, 0.3], [0.3, 1.0]])),
     lambda D, t: D.MultivariateNormal(t([0.5, 0.5]),
                                       scale_tril=t([[[1.0, 0.0], [0.5, 2.0]], [[0.3, 0.0], [0.1, 0.4]]]))),
    ("independent", lambda D, t: D.Independent(D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), t([[1.0, 2.0], [0.5, 1.0]])), 1),
     lambda D, t: D.Independent(D.Normal(t([[1.0, 1.0], [0.0, 0.0]]), t([[1.0, 1.0], [2.0, 2.0]])), 1)),
    ("laplace", lambda D, t: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])),
     lambda D, t: D.Laplace(t([0.5, -1.0]), t([2.0, 0.3]))),
    ("poisson", lambda D, t: D.Poisson(t([0.5, 3.0])), lambda D, t: D.Poisson(t([1.0, 10.0]))),
    ("geometric", lambda D, t: D.Geometric(probs=t([0.2, 0.7])), lambda D, t: D.Geometric(probs=t([0.5, 0.1]))),
    ("binomial", lambda D, t: D.Binomial(10, probs=t([0.2, 0.7])), lambda D, t: D.Binomial(10, probs=t([0.5, 0.1]))),
    ("lognormal", lambda D, t: D.LogNormal(t([0.0, 1.0]), t([0.5, 1.2])),
     lambda D, t: D.LogNormal(t([1.0, 1.0]), t([1.0, 0.3]))),
    ("halfnormal", lambda D, t: D.HalfNormal(t([0.5, 2.0])), lambda D, t: D.HalfNormal(t([1.0, 1.0]))),
    ("beta_uniform", lambda D, t: D.Beta(t([0.5, 2.0]), t([1.5, 3.0])),
     lambda D, t: D.Uniform(t([0.0, -1.0]), t([1.0, 0.5]))),
    ("gamma_exponential", lambda D, t: D.Gamma(t([0.5, 3.0]), t([1.0, 2.0])),
     lambda D, t: D.Exponential(t([2.0, 0.3]))),
    ("exponential_gamma", lambda D, t: D.Exponential(t([2.0, 0.3])),
     lambda D, t: D.Gamma(t([0.5, 3.0]), t([1.0, 2.0]))),
    ("bernoulli_poisson", lambda D, t: D.Bernoulli(probs=t([0.2, 0.9])), lambda D, t: D.Poisson(t([0.5, 3.0]))),
    ("poisson_bernoulli", lambda D, t: D.Poisson(t([0.5, 3.0])), lambda D, t: D.Bernoulli(probs=t([0.2, 0.9]))),
    ("beta_exponential", lambda D, t: D.Beta(t([0.5, 2.0]), t([1.5, 3.0])), lambda D, t: D.Exponential(t([2.0, 0.3]))),
    ("beta_gamma", lambda D, t: D.Beta(t([0.5, 2.0]), t([1.5, 3.0])),
     lambda D, t: D.Gamma(t([0.5, 3.0]), t([1.0, 2.0]))),
    ("beta_normal", lambda D, t: D.Beta(t([0.5, 2.0]), t([1.5, 3.0])),
     lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 0.3]))),
    ("exponential_normal", lambda D, t: D.Exponential(t([2.0, 0.3])),
     lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 0.3]))),
    ("gamma_normal", lambda D, t: D.Gamma(t([0.5, 3.0]), t([1.0, 2.0])),
     lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 0.3]))),
    ("laplace_normal", lambda D, t: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])),
     lambda D, t: D.Normal(t([0.5, -1.0]), t([2.0, 0.3]))),
    ("uniform_normal", lambda D, t: D.Uniform(t([0.0, -1.0]), t([1.0, 0.5])),
     lambda D, t: D.Normal(t([0.5, -1.0]), t([2.0, 0.3]))),
    ("normal_laplace", lambda D, t: D.Normal(t([0.0, 1.0, -2.0]), t([1.0, 0.5, 3.0])),
     lambda D, t: D.Laplace(t([0.5, 1.0, 0.0]), t([2.0, 0.5, 1.0]))),
    ("uniform_beta", lambda D, t: D.Uniform(t([0.1, 0.3, 0.5]), t([0.9, 0.4, 1.5])),
     lambda D, t: D.Beta(t([0.5, 2.0, 1.0]), t([1.5, 3.0, 1.0]))),
    ("uniform_exponential", lambda D, t: D.Uniform(t([0.1, -1.0]), t([0.9, 2.0])),
     lambda D, t: D.Exponential(t([2.0, 0.3]))),
    ("uniform_gamma", lambda D, t: D.Uniform(t([0.1, 2.0, -1.0]), t([0.9, 5.0, 1.0])),
     lambda D, t: D.Gamma(t([0.5, 3.0, 2.0]), t([1.0, 2.0, 1.0]))),
    ("normal_uniform", lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda D, t: D.Uniform(t([0.0, -1.0]), t([1.0, 0.5]))),
    ("gamma_beta", lambda D, t: D.Gamma(t([0.5, 3.0]), t([1.0, 2.0])),
     lambda D, t: D.Beta(t([0.5, 2.0]), t([1.5, 3.0]))),
    ("laplace_exponential", lambda D, t: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])),
     lambda D, t: D.Exponential(t([2.0, 0.3]))),
]
