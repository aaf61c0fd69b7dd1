"""kl_divergence(p, q) and register_kl: closed-form KL divergences, looked up by the
types of p and q (the most specific registered pair of base classes wins)."""
from __future__ import annotations

import functools
import math
import warnings

import minitorch
import minitorch.nn.functional as F

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _batch_trace_xxt, _half_log_det
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import euler_constant, sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> fn
_KL_MEMOIZE: dict = {}  # the dispatch result for each concrete pair of types


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for instances of these types::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q): ...

    Lookup picks the most specific match; register the exact pair to settle ambiguity."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """A registered pair, ordered so that the most specific pair is the least."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the batch shape; raises
    NotImplementedError when no closed form is registered for the pair of types."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _where_inf(mask, value):
    return minitorch.where(mask, float("inf"), value)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = minitorch.where(p.probs == 0, 0.0, _where_inf(q.probs == 0, t1))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = minitorch.where(p.probs == 1, 0.0, _where_inf(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    p1, p0, q1, q0 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    lg, dg = minitorch.lgamma, minitorch.digamma
    sum_p, sum_q = p1 + p0, q1 + q0
    return (lg(q1) + lg(q0) + lg(sum_p) - (lg(p1) + lg(p0) + lg(sum_q))
            + (p1 - q1) * dg(p1) + (p0 - q0) * dg(p0) + (sum_q - sum_p) * dg(sum_p))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _where_inf(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _where_inf((q.probs == 0).expand_as(t), t)
    t = minitorch.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return (((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log())


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    pc, qc = p.concentration, q.concentration
    sum_p = pc.sum(-1)
    t1 = minitorch.lgamma(sum_p) - minitorch.lgamma(qc.sum(-1))
    t2 = (minitorch.lgamma(pc) - minitorch.lgamma(qc)).sum(-1)
    t3 = (pc - qc) * (minitorch.digamma(pc) - minitorch.digamma(sum_p).unsqueeze(-1))
    return t1 - t2 + t3.sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    pc, pr, qc, qr = p.concentration, p.rate, q.concentration, q.rate
    return (qc * (pr / qr).log() + minitorch.lgamma(qc) - minitorch.lgamma(pc)
            + (pc - qc) * minitorch.digamma(pc) + (qr - pr) * (pc / pr))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    dist = (p.loc - q.loc).abs()
    return -ratio.log() + dist / q.scale + ratio * (-dist / p.scale).exp() - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes "
                         "cannot be computed")
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = _half_log_det(q_tril) - _half_log_det(p_tril)
    n = p.event_shape[0]
    batch = minitorch.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_tril.shape[:-2]))
    solved = minitorch.linalg.solve_triangular(q_tril.expand(tuple(batch) + (n, n)),
                                               p_tril.expand(tuple(batch) + (n, n)), upper=False)
    term2 = _batch_trace_xxt(solved)
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _where_inf((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """Bregman divergence of the log normalizer F between the natural parameters:
    F(q) - F(p) - <q - p, grad F(p)>, for two members of one family."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  "be computed using Bregman divergences")
    p_params = [param.detach().requires_grad_() for param in p._natural_params]
    q_params = q._natural_params
    with minitorch.enable_grad():
        log_norm = p._log_normalizer(*p_params)
        grads = minitorch.autograd.grad(log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result


# Pairs across families, as PyTorch has them. Where q's support misses part of p's, the
# divergence is infinite.
def _infinite_like(tensor):
    return minitorch.full_like(tensor, float("inf"))


def _x_log_x(x):
    return minitorch.xlogy(x, x)


def _register_infinite(type_p, types_q, param):
    def infinite(p, q):
        return _infinite_like(getattr(p, param))
    for type_q in types_q:
        register_kl(type_p, type_q)(infinite)


_register_infinite(Exponential, (Beta, Uniform), "rate")
_register_infinite(Gamma, (Beta, Uniform), "concentration")
_register_infinite(Laplace, (Beta, Exponential, Gamma, Uniform), "loc")
_register_infinite(Normal, (Beta, Exponential, Gamma, Uniform), "loc")
_register_infinite(Poisson, (Bernoulli, Binomial), "rate")


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _where_inf((q.low > 0) | (q.high < 1), result)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + minitorch.lgamma(q.concentration) + q.concentration * euler_constant - (1 + euler_constant)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    c1, c0 = p.concentration1, p.concentration0
    e_log_x = minitorch.digamma(c1) - minitorch.digamma(c1 + c0)
    return (-p.entropy() + minitorch.lgamma(q.concentration) - q.concentration * q.rate.log()
            - (q.concentration - 1) * e_log_x + q.rate * p.mean)


def _expected_normal_nll(q, mean, second_moment):
    """E_p[-log q(x)] of a Normal q from p's first two moments."""
    var = q.scale.pow(2)
    return 0.5 * (2 * math.pi * var).log() + (0.5 * second_moment - q.loc * mean + 0.5 * q.loc.pow(2)) / var


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _expected_normal_nll(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _expected_normal_nll(q, p.mean, 2 * p.rate.pow(-2))


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _expected_normal_nll(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _expected_normal_nll(q, p.loc, p.variance + p.loc.pow(2))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return -p.entropy() + _expected_normal_nll(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - b| for x ~ Normal(m, s), d = m - b: s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / (s sqrt 2))
    d = p.loc - q.loc
    ratio = d / p.scale
    e_abs = math.sqrt(2 / math.pi) * p.scale * (-0.5 * ratio.pow(2)).exp() + d * minitorch.erf(ratio / math.sqrt(2))
    return -p.entropy() + (2 * q.scale).log() + e_abs / q.scale


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    e_log_x = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    e_log_1mx = (_x_log_x(1 - p.low) - _x_log_x(1 - p.high) - width) / width
    log_beta = (minitorch.lgamma(q.concentration1) + minitorch.lgamma(q.concentration0)
                - minitorch.lgamma(q.concentration1 + q.concentration0))
    result = (-width.log() - (q.concentration1 - 1) * e_log_x - (q.concentration0 - 1) * e_log_1mx + log_beta)
    return _where_inf((p.high > 1) | (p.low < 0), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _where_inf(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    e_log_x = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = (-width.log() + minitorch.lgamma(q.concentration) - q.concentration * q.rate.log()
              - (q.concentration - 1) * e_log_x + q.rate * (p.high + p.low) / 2)
    return _where_inf(p.low < 0, result)
