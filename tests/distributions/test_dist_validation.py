"""Validation: invalid parameters and out-of-support values raise ValueError worded as
PyTorch's, validate_args and set_default_validate_args switch it off, and the other errors
(unknown KL pairs, bad shapes, missing probs/logits) are PyTorch's types and words."""
from __future__ import annotations

import re

import numpy as np
import pytest

import minitorch
import minitorch.distributions as D
from minitorch.distributions import constraints


def t(x, device="cpu"):
    return minitorch.tensor(np.asarray(x, dtype=np.float64), dtype=minitorch.float64, device=device)


INVALID_PARAMS = [
    ("Normal scale", lambda d: D.Normal(t(0.0, d), t([1.0, -1.0], d)), "scale", "GreaterThan(lower_bound=0.0)"),
    ("Normal nan loc", lambda d: D.Normal(t([float("nan")], d), t(1.0, d)), "loc", "Real()"),
    ("Bernoulli probs", lambda d: D.Bernoulli(probs=t([0.5, 1.5], d)), "probs",
     "Interval(lower_bound=0.0, upper_bound=1.0)"),
    ("Categorical probs", lambda d: D.Categorical(probs=t([0.5, -0.1, 0.6], d)), "probs", "Simplex()"),
    ("Beta", lambda d: D.Beta(t([1.0], d), t([-2.0], d)), "concentration", "IndependentConstraint"),
    ("Gamma rate", lambda d: D.Gamma(t([1.0], d), t([0.0], d)), "rate", "GreaterThan"),
    ("Dirichlet", lambda d: D.Dirichlet(t([1.0, 0.0], d)), "concentration",
     "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)"),
    ("Poisson", lambda d: D.Poisson(t([-1.0], d)), "rate", "GreaterThanEq(lower_bound=0.0)"),
    ("Binomial count", lambda d: D.Binomial(t([2.5], d), probs=t([0.5], d)), "total_count",
     "IntegerGreaterThan(lower_bound=0)"),
    ("Exponential", lambda d: D.Exponential(t([-1.0], d)), "rate", "GreaterThan"),
    ("MVN covariance", lambda d: D.MultivariateNormal(t([0.0, 0.0], d), t([[1.0, 2.0], [2.0, 1.0]], d)),
     "covariance_matrix", "PositiveDefinite()"),
    ("MVN scale_tril", lambda d: D.MultivariateNormal(t([0.0, 0.0], d), scale_tril=t([[1.0, 0.0], [2.0, -1.0]], d)),
     "scale_tril", "LowerCholesky()"),
    ("StudentT df", lambda d: D.StudentT(t([-1.0], d)), "df", "GreaterThan"),
    ("LogNormal scale", lambda d: D.LogNormal(t([0.0], d), t([0.0], d)), "scale", "GreaterThan"),
    ("HalfNormal", lambda d: D.HalfNormal(t([-1.0], d)), "scale", "GreaterThan"),
    ("Chi2", lambda d: D.Chi2(t([0.0], d)), "df", "GreaterThan"),
]


@pytest.mark.parametrize("name, make, param, constraint", INVALID_PARAMS, ids=[p[0] for p in INVALID_PARAMS])
def test_invalid_parameters_raise(name, make, param, constraint, device):
    with pytest.raises(ValueError, match=rf"^Expected parameter {param} \(Tensor of shape .*to satisfy the "
                                         rf"constraint {re.escape(constraint)}.*but found invalid values:\n"):
        make(device)


def test_validate_args_false_skips_checks(device):
    D.Normal(t(0.0, device), t(-1.0, device), validate_args=False)
    D.Bernoulli(probs=t([1.5], device), validate_args=False)
    try:
        D.Distribution.set_default_validate_args(False)
        dist = D.Normal(t(0.0, device), t(-1.0, device))
        dist.log_prob(t(1.0, device))
        D.Bernoulli(probs=t([0.5], device)).log_prob(t([0.5], device))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(t(0.0, device), t(-1.0, device))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_other_constructor_errors():
    with pytest.raises(ValueError, match=r"Either `probs` or `logits` must be specified, but not both\."):
        D.Bernoulli()
    with pytest.raises(ValueError, match=r"Either `probs` or `logits` must be specified"):
        D.Categorical(probs=t([0.5, 0.5]), logits=t([0.0, 0.0]))
    with pytest.raises(ValueError, match=r"`probs` parameter must be at least one-dimensional\."):
        D.Categorical(probs=t(1.0))
    with pytest.raises(ValueError, match=r"`concentration` parameter must be at least one-dimensional\."):
        D.Dirichlet(t(1.0))
    with pytest.raises(ValueError, match=r"^Uniform is not defined when low>= high$"):
        D.Uniform(t([0.0, 1.0]), t([1.0, 1.0]))
    with pytest.raises(ValueError, match=r"to be positive but found invalid values"):
        D.Geometric(probs=t([0.0, 0.5]))
    with pytest.raises(ValueError, match=r"Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(t([0.0]))
    with pytest.raises(ValueError, match=r"loc must be at least one-dimensional\."):
        D.MultivariateNormal(t(0.0), covariance_matrix=t([[1.0]]))
    with pytest.raises(ValueError, match=r"scale_tril matrix must be at least two-dimensional"):
        D.MultivariateNormal(t([0.0]), scale_tril=t([1.0]))
    with pytest.raises(NotImplementedError, match=r"inhomogeneous total_count is not supported"):
        D.Multinomial(t([3.0]), probs=t([0.5, 0.5]))
    with pytest.raises(ValueError, match=r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\)"
                                         r", actual 2 vs 1"):
        D.Independent(D.Normal(t([0.0]), 1.0), 2)
    with pytest.raises(ValueError, match=r"The Mixture distribution needs to be an instance of"):
        D.MixtureSameFamily(D.Bernoulli(probs=t([0.5])), D.Normal(t([0.0]), 1.0))
    with pytest.raises(ValueError, match=r"`mixture_distribution component` \(3\) does not equal"):
        D.MixtureSameFamily(D.Categorical(probs=t([0.2, 0.3, 0.5])), D.Normal(t([0.0, 1.0]), 1.0))
    with pytest.raises(ValueError, match=r"transforms must be a Transform or a list of Transforms"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform(), "exp"])
    with pytest.raises(ValueError, match=r"Input arguments must all be instances of numbers.Number"):
        D.Normal("0", 1.0)
    with pytest.raises(NotImplementedError, match=r"Inhomogeneous total count not supported by `entropy`"):
        D.Binomial(t([3.0, 4.0]), probs=t([0.5, 0.5])).entropy()
    with pytest.raises(NotImplementedError, match=r"does not implement mode"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [D.SigmoidTransform()]).mode


OUT_OF_SUPPORT = [  # (name, make, value, support's repr starts, distribution named in the message)
    ("Bernoulli", lambda d: D.Bernoulli(probs=t([0.3], d)), [0.5], "Boolean()", "Bernoulli"),
    ("Categorical", lambda d: D.Categorical(probs=t([0.3, 0.7], d)), [2.0],
     "IntegerInterval(lower_bound=0, upper_bound=1)", "Categorical"),
    ("Gamma", lambda d: D.Gamma(t([2.0], d), t([1.0], d)), [-1.0], "GreaterThanEq(lower_bound=0.0)", "Gamma"),
    ("Beta", lambda d: D.Beta(t([2.0], d), t([1.0], d)), [1.5], "Interval(lower_bound=0.0, upper_bound=1.0)", "Beta"),
    ("Dirichlet", lambda d: D.Dirichlet(t([2.0, 1.0], d)), [0.5, 0.6], "Simplex()", "Dirichlet"),
    ("Poisson", lambda d: D.Poisson(t([2.0], d)), [1.5], "IntegerGreaterThan(lower_bound=0)", "Poisson"),
    ("Uniform", lambda d: D.Uniform(t([0.0], d), t([1.0], d)), [2.0], "Interval(lower_bound=tensor", "Uniform"),
    ("Exponential", lambda d: D.Exponential(t([1.0], d)), [-0.5], "GreaterThanEq", "Exponential"),
    ("OneHotCategorical", lambda d: D.OneHotCategorical(probs=t([0.3, 0.7], d)), [1.0, 1.0], "OneHot()",
     "OneHotCategorical"),
    ("Multinomial", lambda d: D.Multinomial(3, probs=t([0.3, 0.7], d)), [3.0, 1.0], "Multinomial()", "Multinomial"),
    ("LogNormal", lambda d: D.LogNormal(t([0.0], d), t([1.0], d)), [0.0], "GreaterThan(lower_bound=0.0)", "LogNormal"),
    ("Binomial", lambda d: D.Binomial(t([3.0], d), probs=t([0.5], d)), [4.0], "IntegerInterval(lower_bound=0",
     "Binomial"),
    # Independent leaves the check to its base distribution, as PyTorch's does
    ("Independent", lambda d: D.Independent(D.Exponential(t([1.0, 2.0], d)), 1), [1.0, -1.0],
     "GreaterThanEq(lower_bound=0.0)", "Exponential"),
    ("Normal nan", lambda d: D.Normal(t([0.0], d), t([1.0], d)), [float("nan")], "Real()", "Normal"),
]


@pytest.mark.parametrize("name, make, value, support, dist_name", OUT_OF_SUPPORT, ids=[p[0] for p in OUT_OF_SUPPORT])
def test_log_prob_outside_support_raises(name, make, value, support, dist_name, device):
    dist = make(device)
    with pytest.raises(ValueError, match=rf"^Expected value argument \(Tensor of shape .*\) to be within the support "
                                         rf"\({re.escape(support)}.*\) of the distribution {dist_name}\("):
        dist.log_prob(t(value, device))


def test_log_prob_shape_errors():
    mvn = D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"The right-most size of value must match event_shape: "
                                         r"minitorch.Size\(\[3\]\) vs minitorch.Size\(\[2\]\)\."):
        mvn.log_prob(t([0.0, 0.0, 0.0]))
    normal = D.Normal(t([0.0, 1.0, 2.0]), 1.0)
    with pytest.raises(ValueError, match=r"Value is not broadcastable with batch_shape\+event_shape: "
                                         r"minitorch.Size\(\[2\]\) vs minitorch.Size\(\[3\]\)\."):
        normal.log_prob(t([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"The value argument to log_prob must be a Tensor"):
        normal.log_prob(0.5)


def test_kl_errors():
    with pytest.raises(NotImplementedError, match=r"No KL\(p \|\| q\) is implemented for p type Normal and q type "
                                                  r"Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(probs=t([0.5, 0.5])))
    with pytest.raises(NotImplementedError, match=r"cross KL-divergence between different exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(probs=t(0.5)))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Independent(D.Normal(t([[0.0]]), 1.0), 1), D.Independent(D.Normal(t([[0.0]]), 1.0), 2))
    with pytest.raises(NotImplementedError, match=r"q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(3, probs=t(0.5)), D.Binomial(4, probs=t(0.5)))
    with pytest.raises(ValueError, match=r"different event shapes cannot be computed"):
        D.kl_divergence(D.MultivariateNormal(t([0.0]), t([[1.0]])), D.MultivariateNormal(t([0.0, 0.0]), t(np.eye(2))))
    with pytest.raises(TypeError, match=r"Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_constraint_checks():
    x = t([-1.0, 0.0, 0.5, 1.0, 2.0, float("nan")])
    checks = {
        constraints.real: [1, 1, 1, 1, 1, 0],
        constraints.positive: [0, 0, 1, 1, 1, 0],
        constraints.nonnegative: [0, 1, 1, 1, 1, 0],
        constraints.unit_interval: [0, 1, 1, 1, 0, 0],
        constraints.boolean: [0, 1, 0, 1, 0, 0],
        constraints.nonnegative_integer: [0, 1, 0, 1, 1, 0],
        constraints.positive_integer: [0, 0, 0, 1, 1, 0],
        constraints.integer_interval(0, 1): [0, 1, 0, 1, 0, 0],
        constraints.greater_than(0.5): [0, 0, 0, 1, 1, 0],
        constraints.greater_than_eq(0.5): [0, 0, 1, 1, 1, 0],
        constraints.less_than(0.5): [1, 1, 0, 0, 0, 0],
        constraints.interval(0.0, 1.0): [0, 1, 1, 1, 0, 0],
        constraints.half_open_interval(0.0, 1.0): [0, 1, 1, 0, 0, 0],
    }
    for c, expected in checks.items():
        assert c.check(x).tolist() == [bool(e) for e in expected], repr(c)
    assert constraints.simplex.check(t([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])).tolist() == [True, False, False]
    assert constraints.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])).tolist() == [True, False]
    assert constraints.real_vector.check(t([[0.0, 1.0], [float("nan"), 1.0]])).tolist() == [True, False]
    assert constraints.lower_cholesky.check(t([[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]]])).tolist() == \
        [True, False]
    assert constraints.positive_definite.check(t([[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]])).tolist() == \
        [True, False]
    assert constraints.multinomial(3).check(t([[1.0, 2.0], [2.0, 2.0]])).tolist() == [True, False]
    assert constraints.is_dependent(constraints.dependent) and not constraints.is_dependent(constraints.real)
    assert constraints.is_dependent(D.Uniform.support) and not constraints.is_dependent(D.Normal.support)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(x)
    assert constraints.independent(constraints.real, 1).event_dim == 1
    assert constraints.simplex.event_dim == 1 and constraints.boolean.is_discrete
    assert repr(constraints.interval(0.0, 1.0)) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert repr(constraints.real_vector) == "IndependentConstraint(Real(), 1)"
