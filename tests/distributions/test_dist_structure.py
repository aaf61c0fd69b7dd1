"""Shapes and composition: expand, Independent reinterpreting batch dims,
MixtureSameFamily against a manual logsumexp, enumerate_support, transforms and
TransformedDistribution, the KL registry, and the flags and attributes of each class."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minitorch
import minitorch.distributions as D
from minitorch.distributions import constraints

from dist_cases import CASES, tensor_maker


def t(x, device="cpu", grad=False):
    return minitorch.tensor(np.asarray(x, dtype=np.float64), dtype=minitorch.float64, device=device,
                            requires_grad=grad)


def npy(x):
    return x.detach().cpu().numpy()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_expand(case, device):
    """expand() to a new leading batch dim: shapes, and the same log_prob broadcast."""
    dist = case.make(D, tensor_maker(device))
    new_batch = (2,) + tuple(dist.batch_shape)
    big = dist.expand(new_batch)
    assert type(big) is type(dist)
    assert tuple(big.batch_shape) == new_batch and big.event_shape == dist.event_shape
    assert tuple(big.sample((3,)).shape) == (3,) + new_batch + tuple(dist.event_shape)
    if case.values is not None:
        value = tensor_maker(device)(case.values)
        expected = npy(dist.log_prob(value))
        # a singleton dim in front of the value's batch dims, against the new batch dim
        at = value.dim() - len(dist.batch_shape) - len(dist.event_shape)
        if at >= 0:
            got = npy(big.log_prob(value.unsqueeze(at)))
            np.testing.assert_allclose(got, np.broadcast_to(np.expand_dims(expected, at), got.shape), rtol=1e-12)


def test_independent_reinterprets_batch_dims(device):
    loc, scale = t(np.arange(6.0).reshape(2, 3), device), t(np.full((2, 3), 2.0), device)
    base = D.Normal(loc, scale)
    ind = D.Independent(base, 1)
    assert ind.batch_shape == (2,) and ind.event_shape == (3,)
    value = t(np.ones((4, 2, 3)), device)
    np.testing.assert_allclose(npy(ind.log_prob(value)), npy(base.log_prob(value)).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(npy(ind.entropy()), npy(base.entropy()).sum(-1), rtol=1e-12)
    both = D.Independent(base, 2)
    assert both.batch_shape == () and both.event_shape == (2, 3)
    np.testing.assert_allclose(npy(both.log_prob(value)), npy(base.log_prob(value)).sum((-1, -2)), rtol=1e-12)
    assert ind.has_rsample and repr(ind.support) == "IndependentConstraint(Real(), 1)"
    assert not D.Independent(D.Bernoulli(probs=t([[0.5]], device)), 1).has_enumerate_support
    assert D.Independent(D.Bernoulli(probs=t([[0.5]], device)), 0).has_enumerate_support
    assert repr(D.Independent(D.Normal(t([0.0]), 1.0), 1)).startswith("Independent(Normal(")
    # the diagonal Gaussian of a VAE is the MultivariateNormal with a diagonal covariance
    mvn = D.MultivariateNormal(loc, scale_tril=minitorch.diag_embed(scale))
    np.testing.assert_allclose(npy(ind.log_prob(value)), npy(mvn.log_prob(value)), rtol=1e-12)
    np.testing.assert_allclose(npy(D.kl_divergence(ind, D.Independent(D.Normal(0.0 * loc, 1.0 + 0.0 * scale), 1))),
                               npy(D.kl_divergence(base, D.Normal(0.0, 1.0))).sum(-1), rtol=1e-12)


def test_mixture_log_prob_is_a_logsumexp(device):
    rng = np.random.default_rng(0)
    logits, locs, scales = rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), rng.uniform(0.5, 2, size=(2, 4))
    mix = D.MixtureSameFamily(D.Categorical(logits=t(logits, device)), D.Normal(t(locs, device), t(scales, device)))
    assert mix.batch_shape == (2,) and mix.event_shape == () and not mix.has_rsample
    x = rng.normal(size=(5, 2))
    log_w = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    log_comp = -0.5 * ((x[..., None] - locs) / scales) ** 2 - np.log(scales) - 0.5 * np.log(2 * np.pi)
    a = log_w + log_comp
    manual = a.max(-1) + np.log(np.exp(a - a.max(-1, keepdims=True)).sum(-1))
    np.testing.assert_allclose(npy(mix.log_prob(t(x, device))), manual, rtol=1e-12)
    probs = np.exp(log_w)
    np.testing.assert_allclose(npy(mix.mean), (probs * locs).sum(-1), rtol=1e-12)
    assert mix.mixture_distribution.probs.shape == (2, 4) and mix.component_distribution.batch_shape == (2, 4)
    # a mixture weight shared by the batch
    shared = D.MixtureSameFamily(D.Categorical(logits=t(logits[0], device)),
                                 D.Normal(t(locs, device), t(scales, device)))
    assert shared.batch_shape == (2,)
    assert tuple(shared.sample((3,)).shape) == (3, 2)
    assert npy(shared.log_prob(t(x, device))).shape == (5, 2)


def test_enumerate_support(device):
    bern = D.Bernoulli(probs=t([0.2, 0.7, 0.5], device))
    assert npy(bern.enumerate_support()).tolist() == [[0, 0, 0], [1, 1, 1]]
    assert tuple(bern.enumerate_support(expand=False).shape) == (2, 1)
    cat = D.Categorical(probs=t([[0.2, 0.8], [0.5, 0.5]], device))
    assert cat.enumerate_support().dtype == minitorch.int64
    assert npy(cat.enumerate_support()).tolist() == [[0, 0], [1, 1]]
    onehot = D.OneHotCategorical(probs=t([0.2, 0.3, 0.5], device))
    assert npy(onehot.enumerate_support()).tolist() == np.eye(3).tolist()
    binom = D.Binomial(3, probs=t([0.2, 0.9], device))
    values = binom.enumerate_support()
    assert tuple(values.shape) == (4, 2)
    np.testing.assert_allclose(npy(binom.log_prob(values).exp().sum(0)), [1.0, 1.0], rtol=1e-12)
    for dist in (bern, cat, onehot, binom):
        assert dist.has_enumerate_support


def test_transforms(device):
    x = t([-1.0, 0.0, 0.5, 2.0], device)
    for tr in (D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform(), D.SoftplusTransform(),
               D.AffineTransform(1.0, -3.0), D.ComposeTransform([D.AffineTransform(0.5, 2.0), D.ExpTransform()])):
        y = tr(x)
        np.testing.assert_allclose(npy(tr.inv(y)), npy(x), rtol=1e-10, atol=1e-12)
        # log|dy/dx| against a central difference
        h = 1e-6
        numeric = np.log(np.abs(npy(tr(x + h) - tr(x - h)) / (2 * h)))
        np.testing.assert_allclose(npy(tr.log_abs_det_jacobian(x, y)), numeric, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(npy(tr.inv.log_abs_det_jacobian(y, x)), -numeric, rtol=1e-6, atol=1e-6)
        assert tr.inv.inv is tr
    assert D.AffineTransform(1.0, -3.0).sign == -1 and D.ExpTransform().sign == 1
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(t([1.0, 2.0]), 2.0) == D.AffineTransform(t([1.0, 2.0]), 2.0)
    cached = D.ExpTransform().with_cache()
    y = cached(x)
    assert cached.inv(y) is x
    vec = D.AffineTransform(t([1.0, 2.0], device), t([2.0, 3.0], device), event_dim=1)
    np.testing.assert_allclose(npy(vec.log_abs_det_jacobian(t([[0.0, 0.0]], device), None)), [math.log(6.0)],
                               rtol=1e-12)
    assert D.identity_transform(x) is x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


def test_tanh_squashed_gaussian_policy(device):
    """SAC's policy: a = tanh(u), u ~ Normal; log_prob by change of variables."""
    loc, scale = t([0.3, -0.5], device, True), t([0.8, 1.2], device)
    dist = D.TransformedDistribution(D.Normal(loc, scale), [D.TanhTransform()])
    assert dist.has_rsample and repr(dist.support) == "Interval(lower_bound=-1.0, upper_bound=1.0)"
    minitorch.manual_seed(0)
    a = dist.rsample((5,))
    u = a.detach().atanh()
    manual = npy(D.Normal(loc, scale).log_prob(u)) - np.log(1 - npy(a) ** 2)
    np.testing.assert_allclose(npy(dist.log_prob(a)), manual, rtol=1e-7)
    a.sum().backward()
    assert loc.grad is not None


def test_affine_transformed_normal_is_normal(device):
    base = D.Normal(t([0.0, 1.0], device), t([1.0, 2.0], device))
    dist = D.TransformedDistribution(base, [D.AffineTransform(t(3.0, device), t(-2.0, device))])
    same = D.Normal(t([3.0, 1.0], device), t([2.0, 4.0], device))
    x = t([[0.5, -1.0], [4.0, 2.0]], device)
    np.testing.assert_allclose(npy(dist.log_prob(x)), npy(same.log_prob(x)), rtol=1e-12)
    np.testing.assert_allclose(npy(dist.cdf(x)), npy(same.cdf(x)), rtol=1e-12)
    np.testing.assert_allclose(npy(dist.icdf(t([0.2, 0.9], device))), npy(same.icdf(t([0.2, 0.9], device))),
                               rtol=1e-12)


def test_register_kl_and_dispatch():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(t(0.0), t(1.0)), D.Normal(t(1.0), t(2.0))
    np.testing.assert_allclose(npy(D.kl_divergence(p, q)), npy(D.kl_divergence(D.Normal(t(0.0), t(1.0)), q)))

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return minitorch.tensor(42.0)

    try:
        assert D.kl_divergence(p, q).item() == 42.0
        assert D.kl_divergence(q, p).item() != 42.0
    finally:
        from minitorch.distributions import kl
        del kl._KL_REGISTRY[MyNormal, D.Normal]
        kl._KL_MEMOIZE.clear()


def test_cauchy_kl_by_quadrature():
    """PyTorch 2's Cauchy-Cauchy closed form, against a numerical integral."""
    p, q = D.Cauchy(t(0.5), t(1.5)), D.Cauchy(t(-1.0), t(0.4))
    x = np.tan(np.linspace(-np.pi / 2, np.pi / 2, 400001)[1:-1])  # a grid dense in the tails
    lp, lq = npy(p.log_prob(t(x))), npy(q.log_prob(t(x)))
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    integral = trapezoid(np.exp(lp) * (lp - lq), x)
    np.testing.assert_allclose(D.kl_divergence(p, q).item(), integral, rtol=1e-4)


RSAMPLE = {  # has_rsample as in PyTorch
    "Normal": True, "Bernoulli": False, "Categorical": False, "OneHotCategorical": False, "Uniform": True,
    "Beta": True, "Gamma": True, "Chi2": True, "Exponential": True, "Laplace": True, "Poisson": False,
    "Binomial": False, "Geometric": False, "Multinomial": False, "Dirichlet": True, "MultivariateNormal": True,
    "LogNormal": True, "HalfNormal": True, "StudentT": True, "Cauchy": True, "RelaxedBernoulli": True,
    "RelaxedOneHotCategorical": True, "MixtureSameFamily": False, "OneHotCategoricalStraightThrough": True,
}


@pytest.mark.parametrize("name", sorted(RSAMPLE))
def test_has_rsample(name):
    assert getattr(D, name).has_rsample is RSAMPLE[name]


def test_lazy_probs_and_logits():
    dist = D.Bernoulli(logits=t([0.0, 2.0]))
    assert "probs" not in dist.__dict__
    probs = dist.probs
    assert dist.__dict__["probs"] is probs and dist.probs is probs
    np.testing.assert_allclose(npy(probs), [0.5, 1 / (1 + math.exp(-2))], rtol=1e-12)
    cat = D.Categorical(probs=t([2.0, 6.0]))  # normalized
    np.testing.assert_allclose(npy(cat.probs), [0.25, 0.75], rtol=1e-12)
    np.testing.assert_allclose(npy(cat.logits), np.log([0.25, 0.75]), rtol=1e-12)
    assert isinstance(D.Bernoulli.probs, D.utils.lazy_property)


def test_misc_api():
    normal = D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))
    np.testing.assert_allclose(npy(normal.perplexity()), np.exp(npy(normal.entropy())), rtol=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tuple(normal.sample_n(3).shape) == (3, 2)
    assert any(issubclass(w.category, FutureWarning) for w in caught)
    assert repr(normal) == "Normal(loc: minitorch.Size([2]), scale: minitorch.Size([2]))"
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert D.Normal.arg_constraints == {"loc": constraints.real, "scale": constraints.positive}
    assert normal.stddev is normal.scale and normal.mode is normal.loc
    assert D.Normal(0.0, 1.0).batch_shape == () and D.Normal(0.0, 1.0).sample().shape == ()
    assert D.Normal(0.0, 1.0).sample().dtype == minitorch.get_default_dtype()
    assert isinstance(D.Gamma(1.0, 1.0), D.ExponentialFamily)
    assert D.Categorical(probs=t([0.5, 0.5])).support.upper_bound == 1
    mvn = D.MultivariateNormal(t([0.0, 0.0]), precision_matrix=t([[2.0, 0.5], [0.5, 1.0]]))
    np.testing.assert_allclose(npy(mvn.covariance_matrix @ mvn.precision_matrix), np.eye(2), atol=1e-12)
    st = D.OneHotCategoricalStraightThrough(logits=t([0.0, 1.0], grad=True))
    sample = st.rsample()
    sample.sum().backward()
    assert sample.requires_grad


def test_exponential_family_entropy_from_log_normalizer():
    """ExponentialFamily.entropy (Bregman divergence of the log normalizer) agrees with the
    closed forms of the subclasses."""
    for dist in (D.Normal(t([0.0, 1.0]), t([0.5, 2.0])), D.Gamma(t([0.5, 3.0]), t([2.0, 1.0])),
                 D.Exponential(t([0.5, 3.0])), D.Bernoulli(probs=t([0.2, 0.6]))):
        np.testing.assert_allclose(npy(D.ExponentialFamily.entropy(dist)), npy(dist.entropy()), rtol=1e-10)


def test_exponential_family_kl_from_log_normalizer():
    """The generic Bregman KL of two members of one family agrees with the closed forms,
    and refuses two different families."""
    from minitorch.distributions.kl import _kl_expfamily_expfamily

    pairs = [(D.Normal(t([0.0, 1.0]), t([0.5, 2.0])), D.Normal(t([1.0, 0.0]), t([1.0, 1.5]))),
             (D.Gamma(t([0.5, 3.0]), t([2.0, 1.0])), D.Gamma(t([1.5, 2.0]), t([1.0, 0.5]))),
             (D.Poisson(t([0.5, 3.0])), D.Poisson(t([2.0, 1.0]))),
             (D.Dirichlet(t([0.5, 3.0, 1.0])), D.Dirichlet(t([1.0, 1.0, 2.0])))]
    for p, q in pairs:
        np.testing.assert_allclose(npy(_kl_expfamily_expfamily(p, q)), npy(D.kl_divergence(p, q)), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Beta(t(1.0), t(2.0)), D.Dirichlet(t([1.0, 2.0])))
