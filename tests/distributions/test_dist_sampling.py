"""Sampling: shapes (sample_shape + batch_shape + event_shape), values in the support,
moments of 10^5 draws against mean/variance, the empirical CDF or pmf of the samplers
written for minitorch (Gamma, Poisson, Binomial), and reproducibility under manual_seed.
Every draw is seeded, so the tolerances are met or not once and for all per device."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
import minitorch.distributions as D

from dist_cases import CASES, tensor_maker

N = 100_000


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("sample_shape", [(), (4,), (2, 3)], ids=["scalar", "4", "2x3"])
def test_sample_shape_and_support(case, sample_shape, device):
    minitorch.manual_seed(0)
    dist = case.make(D, tensor_maker(device))
    expected = tuple(sample_shape) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    draws = [dist.sample(sample_shape)]
    if dist.has_rsample:
        draws.append(dist.rsample(sample_shape))
    for x in draws:
        assert tuple(x.shape) == expected
        assert x.device.type == device
        assert bool(dist.support.check(x).all()), f"{case.name} drew values outside {dist.support}"
    assert not draws[0].requires_grad


def _t(x, device):
    return minitorch.tensor(np.asarray(x, dtype=np.float64), dtype=minitorch.float64, device=device)


# name -> (builder(t), tolerance on the variance, relative)
MOMENT_CASES = {
    "normal": (lambda t: D.Normal(t([-1.0, 3.0]), t([0.5, 2.0])), 0.03),
    "bernoulli": (lambda t: D.Bernoulli(probs=t([0.1, 0.5, 0.97])), 0.05),
    "categorical": (lambda t: D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.7, 0.0, 0.3]])), 0.03),
    "onehot": (lambda t: D.OneHotCategorical(logits=t([0.0, 1.0, -1.0])), 0.03),
    "uniform": (lambda t: D.Uniform(t([0.0, -2.0]), t([1.0, 5.0])), 0.03),
    "beta": (lambda t: D.Beta(t([0.3, 5.0]), t([0.5, 1.0])), 0.04),
    "gamma": (lambda t: D.Gamma(t([0.05, 0.7, 1.0, 4.0, 150.0]), t([1.0, 2.0, 0.5, 1.0, 3.0])), 0.06),
    "chi2": (lambda t: D.Chi2(t([1.0, 7.0])), 0.05),
    "exponential": (lambda t: D.Exponential(t([0.5, 4.0])), 0.05),
    "laplace": (lambda t: D.Laplace(t([1.0, -2.0]), t([0.5, 2.0])), 0.05),
    "poisson": (lambda t: D.Poisson(t([0.0, 0.3, 9.99, 10.0, 3000.0])), 0.05),
    "binomial": (lambda t: D.Binomial(t([0.0, 5.0, 200.0, 1000.0]), probs=t([0.5, 0.3, 0.97, 0.4])), 0.05),
    "geometric": (lambda t: D.Geometric(probs=t([0.1, 0.6, 1.0])), 0.06),
    "multinomial": (lambda t: D.Multinomial(7, probs=t([0.2, 0.5, 0.3])), 0.03),
    "dirichlet": (lambda t: D.Dirichlet(t([0.4, 1.0, 20.0])), 0.04),
    "mvn": (lambda t: D.MultivariateNormal(t([1.0, -1.0]), covariance_matrix=t([[2.0, 0.6], [0.6, 0.5]])), 0.03),
    "lognormal": (lambda t: D.LogNormal(t([0.0, 1.0]), t([0.2, 0.4])), 0.05),
    "halfnormal": (lambda t: D.HalfNormal(t([0.5, 3.0])), 0.03),
    "studentt": (lambda t: D.StudentT(t([9.0, 30.0]), t([1.0, 0.0]), t([2.0, 0.5])), 0.08),
    "independent": (lambda t: D.Independent(D.Normal(t([[0.0, 1.0]]), t([[1.0, 3.0]])), 1), 0.03),
    "mixture": (lambda t: D.MixtureSameFamily(D.Categorical(probs=t([0.3, 0.7])),
                                              D.Normal(t([-2.0, 2.0]), t([1.0, 0.5]))), 0.03),
}


@pytest.mark.parametrize("name", sorted(MOMENT_CASES))
def test_sample_moments(name, device):
    build, var_rtol = MOMENT_CASES[name]
    dist = build(lambda x: _t(x, device))
    minitorch.manual_seed(1234)
    x = dist.sample((N,)).double().cpu().numpy()
    if name == "categorical":  # moments of the index (Categorical's own are NaN, as PyTorch's)
        probs = dist.probs.cpu().numpy()
        k = np.arange(probs.shape[-1])
        mean = (probs * k).sum(-1)
        var = (probs * k**2).sum(-1) - mean**2
    else:
        mean = dist.mean.detach().cpu().numpy()
        var = dist.variance.detach().cpu().numpy()
    se = np.sqrt(var / N)
    # six standard errors (plus rounding), and the variance within var_rtol
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 6 * se + 1e-12)
    np.testing.assert_allclose(x.var(0), var, rtol=var_rtol, atol=1e-12)
    if name == "mvn":
        cov = np.cov(x.T)
        np.testing.assert_allclose(cov, dist.covariance_matrix.cpu().numpy(), rtol=0.03, atol=0.01)


def _ks_distance(samples, cdf_at_points, points):
    empirical = np.searchsorted(np.sort(samples), points, side="right") / len(samples)
    return np.max(np.abs(empirical - cdf_at_points))


@pytest.mark.parametrize("alpha", [0.02, 0.4, 1.0, 2.5, 40.0])
def test_gamma_sampler_cdf(alpha, device):
    """The Marsaglia-Tsang draws against Gamma.cdf (the incomplete gamma function)."""
    dist = D.Gamma(_t(alpha, device), _t(1.0, device))
    minitorch.manual_seed(7)
    x = dist.sample((N,))
    points = np.quantile(x.cpu().numpy(), np.linspace(0.02, 0.98, 25))
    cdf = dist.cdf(_t(points, device)).cpu().numpy()
    assert _ks_distance(x.cpu().numpy(), cdf, points) < 0.01


@pytest.mark.parametrize("dist_name", ["poisson_small", "poisson_large", "binomial_small", "binomial_large"])
def test_discrete_sampler_pmf(dist_name, device):
    """Frequencies of the inversion and transformed-rejection samplers against the pmf."""
    t = lambda x: _t(x, device)  # noqa: E731
    dist = {
        "poisson_small": lambda: D.Poisson(t(3.5)),
        "poisson_large": lambda: D.Poisson(t(40.0)),
        "binomial_small": lambda: D.Binomial(t(12.0), probs=t(0.3)),
        "binomial_large": lambda: D.Binomial(t(300.0), probs=t(0.8)),
    }[dist_name]()
    minitorch.manual_seed(11)
    x = dist.sample((N,)).cpu().numpy()
    ks = np.arange(x.min(), x.max() + 1)
    freq = np.array([(x == k).mean() for k in ks])
    pmf = dist.log_prob(t(ks)).exp().cpu().numpy()
    # binomial standard error of each frequency, five of them
    assert np.all(np.abs(freq - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / N) + 2e-4)


REPRO = {
    "normal": lambda t: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
    "categorical": lambda t: D.Categorical(logits=t([[0.0, 1.0, 2.0]])),
    "bernoulli": lambda t: D.Bernoulli(probs=t([0.3, 0.6])),
    "gamma": lambda t: D.Gamma(t([0.3, 5.0]), t([1.0, 1.0])),
    "dirichlet": lambda t: D.Dirichlet(t([0.5, 2.0, 1.0])),
    "poisson": lambda t: D.Poisson(t([2.0, 30.0])),
    "binomial": lambda t: D.Binomial(t([10.0, 100.0]), probs=t([0.3, 0.5])),
    "mvn": lambda t: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [0.5, 1.0]])),
    "mixture": lambda t: D.MixtureSameFamily(D.Categorical(probs=t([0.5, 0.5])),
                                             D.Laplace(t([0.0, 4.0]), t([1.0, 1.0]))),
}


@pytest.mark.parametrize("name", sorted(REPRO))
def test_manual_seed_reproduces_samples(name, device):
    dist = REPRO[name](lambda x: _t(x, device))
    minitorch.manual_seed(2024)
    a = dist.sample((50,))
    b = dist.sample((50,))
    minitorch.manual_seed(2024)
    c = dist.sample((50,))
    assert bool((a == c).all())
    assert not bool((a == b).all())


def test_reparameterized_sample_draws_same_values_as_sample(device):
    loc, scale = _t([0.5, -1.0], device), _t([2.0, 0.1], device)
    minitorch.manual_seed(3)
    a = D.Normal(loc, scale).sample((5,))
    minitorch.manual_seed(3)
    b = D.Normal(loc.requires_grad_(), scale).rsample((5,))
    assert b.requires_grad
    np.testing.assert_array_equal(a.cpu().numpy(), b.detach().cpu().numpy())


def test_float32_parameters_sample_float32(device):
    loc = minitorch.tensor([0.0, 1.0], device=device)
    for dist in (D.Normal(loc, 1.0), D.Gamma(loc + 1, 1.0), D.Beta(loc + 1, loc + 2), D.Poisson(loc + 1)):
        assert dist.sample((3,)).dtype == minitorch.float32
    assert D.Categorical(logits=loc).sample((3,)).dtype == minitorch.int64


def test_mixture_sample_uses_one_component_per_draw(device):
    """Two far-apart components: every draw lies near one of them, in the mixing ratio."""
    t = lambda x: _t(x, device)  # noqa: E731
    mix = D.MixtureSameFamily(D.Categorical(probs=t([0.25, 0.75])), D.Normal(t([-100.0, 100.0]), t([1.0, 1.0])))
    minitorch.manual_seed(5)
    x = mix.sample((20_000,)).cpu().numpy()
    assert np.all(np.abs(np.abs(x) - 100) < 8)
    assert math.isclose((x > 0).mean(), 0.75, abs_tol=0.015)
