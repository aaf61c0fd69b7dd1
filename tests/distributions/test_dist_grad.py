"""Gradients: reparameterized samples (rsample) carry d sample / d parameter, log_prob,
entropy and kl_divergence are differentiable (float64 gradcheck against finite
differences), and a VAE's ELBO and a REINFORCE step run end to end."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.distributions as D
from minitorch.distributions._sampling import gammainc, standard_gamma_grad
from minitorch.testing import gradcheck


def t(x, device, grad=False):
    return minitorch.tensor(np.asarray(x, dtype=np.float64), dtype=minitorch.float64, device=device,
                            requires_grad=grad)


def test_normal_rsample_gradient(device):
    loc, scale = t([0.5, -1.0], device, True), t([2.0, 0.3], device, True)
    minitorch.manual_seed(0)
    z = D.Normal(loc, scale).rsample((1000,))
    z.mean(0).sum().backward()
    np.testing.assert_allclose(loc.grad.cpu().numpy(), [1.0, 1.0], rtol=1e-12)
    eps = (z.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.cpu().numpy(), eps.mean(0).cpu().numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["uniform", "exponential", "laplace", "cauchy", "lognormal", "halfnormal", "mvn",
                                  "relaxed_bernoulli", "relaxed_onehot", "independent", "studentt"])
def test_rsample_reaches_every_parameter(name, device):
    """The pathwise gradient of a fixed-seed rsample, against finite differences."""
    build = {
        "uniform": (lambda a, b: D.Uniform(a, a + b.exp()), [[0.0, 1.0], [0.0, 0.5]]),
        "exponential": (lambda r: D.Exponential(r.exp()), [[0.3, -0.5]]),
        "laplace": (lambda a, b: D.Laplace(a, b.exp()), [[0.0, 1.0], [0.2, -0.3]]),
        "cauchy": (lambda a, b: D.Cauchy(a, b.exp()), [[0.0, 1.0], [0.2, -0.3]]),
        "lognormal": (lambda a, b: D.LogNormal(a, b.exp()), [[0.0, 1.0], [0.2, -0.3]]),
        "halfnormal": (lambda b: D.HalfNormal(b.exp()), [[0.2, -0.3]]),
        "mvn": (lambda a, l: D.MultivariateNormal(a, scale_tril=l.tril() + 2 * minitorch.eye(2, dtype=l.dtype,
                                                                                          device=l.device)),
                [[0.0, 1.0], [[0.5, 0.0], [0.3, -0.2]]]),
        "relaxed_bernoulli": (lambda lg: D.RelaxedBernoulli(t(0.7, device), logits=lg), [[0.3, -1.0]]),
        "relaxed_onehot": (lambda lg: D.RelaxedOneHotCategorical(t(0.7, device), logits=lg), [[0.3, -1.0, 0.5]]),
        "independent": (lambda a, b: D.Independent(D.Normal(a, b.exp()), 1), [[0.0, 1.0], [0.2, -0.3]]),
        "studentt": (lambda a, b: D.StudentT(t([4.0, 9.0], device), a, b.exp()), [[0.0, 1.0], [0.2, -0.3]]),
    }[name]
    make, params = build

    def draw(*args):
        minitorch.manual_seed(42)
        return make(*args).rsample((3,))

    assert make(*[t(p, device) for p in params]).has_rsample
    assert gradcheck(draw, tuple(t(p, device, True) for p in params), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gamma_implicit_gradient_keeps_the_cdf(device):
    """Moving alpha by h and the draw by h * dx/dalpha leaves P(alpha, x) unchanged to
    first order (the definition of the implicit gradient)."""
    alpha = t([0.05, 0.4, 1.0, 3.0, 25.0, 400.0], device)
    x = t([1e-8, 0.2, 1.7, 2.0, 30.0, 380.0], device)
    g = standard_gamma_grad(x, alpha)
    h = 1e-5
    moved = gammainc(alpha + h, x + h * g) - gammainc(alpha - h, x - h * g)
    np.testing.assert_allclose(moved.cpu().numpy(), 0.0, atol=2e-9)


def test_gammainc_known_values(device):
    a = t([0.5, 1.0, 2.0, 10.0, 10.0], device)
    x = t([0.3, 1.0, 5.0, 3.0, 20.0], device)
    # P(1, x) = 1 - e^-x; P(1/2, x) = erf(sqrt x); P(2, x) = 1 - (1 + x) e^-x
    expected = [0.5614219739190003, 1 - np.exp(-1.0), 1 - 6 * np.exp(-5.0), 0.0011024881301154345,
                0.9950045876916924]
    np.testing.assert_allclose(gammainc(a, x).cpu().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["gamma", "beta", "dirichlet", "chi2"])
def test_implicit_rsample_gradient_of_the_mean(name, device):
    """d E[x] / d parameter, averaged over 10^4 draws, against the closed form."""
    conc = t([0.3, 2.0, 7.0], device, True)
    minitorch.manual_seed(9)
    if name == "gamma":
        x, expected = D.Gamma(conc, t(2.0, device)).rsample((10000,)), np.full(3, 0.5)
    elif name == "chi2":
        x, expected = D.Chi2(conc).rsample((10000,)), np.full(3, 1.0)
    elif name == "beta":
        c0 = 1.5
        c = conc.detach().cpu().numpy()
        x, expected = D.Beta(conc, t(c0, device)).rsample((10000,)), c0 / (c + c0) ** 2
    else:
        c = conc.detach().cpu().numpy()
        x = D.Dirichlet(conc).rsample((10000,))[..., 0]
        expected = np.array([(c.sum() - c[0]) / c.sum() ** 2, -c[0] / c.sum() ** 2, -c[0] / c.sum() ** 2])
    x.mean(0).sum().backward()
    np.testing.assert_allclose(conc.grad.cpu().numpy(), expected, rtol=0.05, atol=2e-3)


def _params(device, *arrays):
    return tuple(t(a, device, True) for a in arrays)


LOG_PROB_GRADS = {
    "normal": (lambda loc, s, x: D.Normal(loc, s.exp()).log_prob(x), ([0.0, 1.0], [0.1, -0.4], [0.3, 2.0])),
    "gamma": (lambda c, r, x: D.Gamma(c.exp(), r.exp()).log_prob(x.exp()), ([0.1, 1.0], [0.0, -0.5], [0.3, 1.2])),
    "beta": (lambda a, b, x: D.Beta(a.exp(), b.exp()).log_prob(x.sigmoid()), ([0.1, 1.0], [0.0, -0.5], [0.3, -1.2])),
    "dirichlet": (lambda c, x: D.Dirichlet(c.exp()).log_prob(x.softmax(-1)), ([0.1, 1.0, -0.3], [0.3, -1.2, 0.0])),
    "categorical": (lambda lg: D.Categorical(logits=lg).log_prob(t([2.0, 0.0], lg.device)),
                    ([[0.1, 1.0, -0.3], [0.3, -1.2, 0.0]],)),
    "bernoulli": (lambda lg: D.Bernoulli(logits=lg).log_prob(t([1.0, 0.0], lg.device)), ([0.4, -2.0],)),
    "binomial": (lambda lg: D.Binomial(t([7.0, 3.0], lg.device), logits=lg).log_prob(t([2.0, 3.0], lg.device)),
                 ([0.4, -2.0],)),
    "poisson": (lambda r: D.Poisson(r.exp()).log_prob(t([2.0, 0.0], r.device)), ([0.4, -2.0],)),
    "geometric": (lambda p: D.Geometric(probs=p.sigmoid()).log_prob(t([2.0, 0.0], p.device)), ([0.4, -2.0],)),
    "laplace": (lambda loc, s, x: D.Laplace(loc, s.exp()).log_prob(x), ([0.0, 1.0], [0.1, -0.4], [0.3, 2.0])),
    "studentt": (lambda df, loc, x: D.StudentT(df.exp(), loc, 1.5).log_prob(x),
                 ([0.5, 2.0], [0.1, -0.4], [0.3, 2.0])),
    "mvn": (lambda loc, l, x: D.MultivariateNormal(loc, scale_tril=l.tril() + 2 * minitorch.eye(2, dtype=l.dtype,
                                                                                            device=l.device)
                                                   ).log_prob(x),
            ([0.0, 1.0], [[0.5, 0.0], [0.3, -0.2]], [[0.3, 2.0], [-1.0, 0.0]])),
    "mvn_covariance": (lambda loc, a, x: D.MultivariateNormal(loc, covariance_matrix=a @ a.mT + minitorch.eye(
        2, dtype=a.dtype, device=a.device)).log_prob(x), ([0.0, 1.0], [[0.5, 0.1], [0.3, -0.2]], [0.3, 2.0])),
    "mixture": (lambda lg, loc, x: D.MixtureSameFamily(D.Categorical(logits=lg), D.Normal(loc, 1.0)).log_prob(x),
                ([0.3, -0.5], [-1.0, 2.0], [0.0, 1.5])),
    "lognormal": (lambda loc, s, x: D.LogNormal(loc, s.exp()).log_prob(x.exp()), ([0.0, 1.0], [0.1, -0.4], [0.3, 2.0])),
}


@pytest.mark.parametrize("name", sorted(LOG_PROB_GRADS))
def test_log_prob_gradcheck(name, device):
    fn, arrays = LOG_PROB_GRADS[name]
    assert gradcheck(fn, _params(device, *arrays), eps=1e-6, atol=1e-6, rtol=1e-5)


ENTROPY_KL_GRADS = {
    "normal_entropy": (lambda s: D.Normal(0.0, s.exp()).entropy(), ([0.1, -0.4],)),
    "gamma_entropy": (lambda c, r: D.Gamma(c.exp(), r.exp()).entropy(), ([0.1, 1.0], [0.0, -0.5])),
    "categorical_entropy": (lambda lg: D.Categorical(logits=lg).entropy(), ([[0.1, 1.0, -0.3]],)),
    "bernoulli_entropy": (lambda lg: D.Bernoulli(logits=lg).entropy(), ([0.4, -2.0],)),
    "dirichlet_entropy": (lambda c: D.Dirichlet(c.exp()).entropy(), ([0.1, 1.0, -0.3],)),
    "kl_normal": (lambda m, s: D.kl_divergence(D.Normal(m, s.exp()), D.Normal(0.0, 1.0)), ([0.3, -1.0], [0.1, -0.4])),
    "kl_categorical": (lambda a, b: D.kl_divergence(D.Categorical(logits=a), D.Categorical(logits=b)),
                       ([0.1, 1.0, -0.3], [0.5, 0.0, 0.2])),
    "kl_beta": (lambda a, b: D.kl_divergence(D.Beta(a.exp(), b.exp()), D.Beta(1.0, 2.0)), ([0.1, 1.0], [0.0, -0.5])),
    "kl_mvn": (lambda m, l: D.kl_divergence(
        D.MultivariateNormal(m, scale_tril=l.tril() + 2 * minitorch.eye(2, dtype=l.dtype, device=l.device)),
        D.MultivariateNormal(m * 0, covariance_matrix=minitorch.eye(2, dtype=l.dtype, device=l.device))),
        ([0.0, 1.0], [[0.5, 0.0], [0.3, -0.2]])),
}


@pytest.mark.parametrize("name", sorted(ENTROPY_KL_GRADS))
def test_entropy_and_kl_gradcheck(name, device):
    fn, arrays = ENTROPY_KL_GRADS[name]
    assert gradcheck(fn, _params(device, *arrays), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_vae_elbo_gradient(device):
    """A VAE step: z = Normal(mu, sigma).rsample(), decoder likelihood minus
    KL(q || N(0, 1)); the fixed-seed ELBO's gradient against finite differences."""
    x = t([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]], device)
    w = t([[0.3, -0.2, 0.5], [1.0, 0.4, -0.7]], device)

    def elbo(enc, log_sigma):
        minitorch.manual_seed(1)
        mu = x @ enc  # (2, 2)
        q = D.Normal(mu, log_sigma.exp())
        z = q.rsample((4,))  # (4, 2, 2)
        recon = D.Independent(D.Normal(z @ w, 1.0), 1).log_prob(x).mean(0)
        kl = D.kl_divergence(q, D.Normal(minitorch.zeros_like(mu), minitorch.ones_like(mu))).sum(-1)
        return (recon - kl).sum()

    enc = t([[0.1, 0.2], [0.0, -0.3], [0.5, 0.1]], device, True)
    log_sigma = t([[0.1, -0.2], [0.0, 0.3]], device, True)
    assert gradcheck(elbo, (enc, log_sigma), eps=1e-6, atol=1e-6, rtol=1e-5)
    loss = -elbo(enc, log_sigma)
    loss.backward()
    assert enc.grad is not None and bool(minitorch.isfinite(enc.grad).all())


def test_reinforce_step(device):
    """Policy gradient: the score function's gradient is onehot(a) - softmax(logits), and
    an SGD step on -log_prob(a) * reward makes the rewarded action more likely."""
    minitorch.manual_seed(0)
    policy = minitorch.nn.Linear(4, 3).to(device).double()
    opt = minitorch.optim.SGD(policy.parameters(), lr=0.5)
    state = t([[0.5, -0.2, 0.1, 1.0]], device)
    logits = policy(state)
    dist = D.Categorical(logits=logits)
    action = dist.sample()
    assert action.dtype == minitorch.int64 and tuple(action.shape) == (1,)
    logits.retain_grad()
    loss = -(dist.log_prob(action) * 1.0).sum() - 0.01 * dist.entropy().sum()
    loss.backward()
    probs = logits.softmax(-1).detach().cpu().numpy()[0]
    onehot = np.eye(3)[action.item()]
    p_log_p = probs * np.log(probs)
    entropy_grad = -probs * (np.log(probs) + 1) + probs * (1 + p_log_p.sum())  # d H / d logits
    np.testing.assert_allclose(logits.grad.cpu().numpy()[0], -(onehot - probs) - 0.01 * entropy_grad, rtol=1e-8)
    before = dist.probs[0, action.item()].item()
    opt.step()
    after = D.Categorical(logits=policy(state)).probs[0, action.item()].item()
    assert after > before


def test_dirichlet_small_concentrations(device):
    """Concentrations far below 1 draw gammas that underflow: Dirichlet normalizes their
    logs, so draws still pile up near a vertex (not at the centre) and the gradient holds."""
    minitorch.manual_seed(4)
    x = D.Dirichlet(minitorch.tensor([0.01, 0.01, 0.02], device=device)).sample((1000,))
    assert bool((x.max(-1).values > 0.9).float().mean() > 0.9)
    np.testing.assert_allclose(x.sum(-1).cpu().numpy(), 1.0, rtol=1e-5)
    conc = t([0.05, 0.05, 0.1], device, True)
    D.Dirichlet(conc).rsample((20000,))[..., 0].mean().backward()
    c = conc.detach().cpu().numpy()
    expected = np.array([c[1] + c[2], -c[0], -c[0]]) / c.sum() ** 2
    np.testing.assert_allclose(conc.grad.cpu().numpy(), expected, rtol=0.08)
