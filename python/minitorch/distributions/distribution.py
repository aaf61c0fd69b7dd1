"""Distribution: the base class of every probability distribution."""
from __future__ import annotations

import warnings

import minitorch
from minitorch import Tensor

from . import constraints
from .utils import as_size, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class. A distribution has a ``batch_shape`` (independent, differently
    parameterized copies) and an ``event_shape`` (the shape of one draw); samples have
    shape ``sample_shape + batch_shape + event_shape``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument and sample validation on or off by default (on unless python -O)."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=minitorch.Size(), event_shape=minitorch.Size(), validate_args=None):
        self._batch_shape = as_size(batch_shape)
        self._event_shape = as_size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_args()

    def _check_args(self) -> None:
        arg_constraints = self._declared(
            "arg_constraints", f"{self.__class__} does not define `arg_constraints`. Please set "
            "`arg_constraints = {}` or initialize the distribution with `validate_args=False` to turn off validation.")
        for param, constraint in (arg_constraints or {}).items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # not given: computed from another parameter
            value = getattr(self, param)
            if not constraint.check(value).all():
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose parameters are expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    def _expand_params(self, cls, batch_shape, names, _instance=None, event_shapes=None):
        """expand()'s common part: a new instance of ``cls`` holding this one's parameters
        ``names`` (those set on this instance) expanded to ``batch_shape`` (plus each one's
        trailing shape from ``event_shapes``), without validating them again."""
        new = self._get_checked_instance(cls, _instance)
        for name in names:
            if name in self.__dict__:
                trailing = (event_shapes or {}).get(name, ())
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape) + tuple(trailing)))
        return self._finish_expand(new, batch_shape)

    def _finish_expand(self, new, batch_shape, event_shape=None):
        """Sets the shapes of ``new`` (an expand of this distribution) and this one's
        validation flag, without validating again; returns ``new``."""
        event_shape = self._event_shape if event_shape is None else event_shape
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self) -> minitorch.Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> minitorch.Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Constraint of each tensor parameter, for validation."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint of the values the distribution takes."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=minitorch.Size()) -> Tensor:
        """A ``sample_shape`` batch of draws, without gradients."""
        with minitorch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=minitorch.Size()) -> Tensor:
        """A reparameterized ``sample_shape`` batch of draws: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """Deprecated: ``sample((n,))``."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(minitorch.Size((n,)))

    def log_prob(self, value) -> Tensor:
        """Log of the density or mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value) -> Tensor:
        """Cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value) -> Tensor:
        """Inverse of the cumulative distribution function."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution along dim 0, in lock-step over the batch:
        shape ``(cardinality,) + batch_shape + event_shape`` (singleton batch dims when
        ``expand=False``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """Entropy, of shape batch_shape."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return minitorch.exp(self.entropy())

    def _extended_shape(self, sample_shape=minitorch.Size()) -> minitorch.Size:
        """sample_shape + batch_shape + event_shape."""
        return minitorch.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        """Checks that ``value``'s rightmost dims fit batch_shape + event_shape and that it
        lies in the support, raising ValueError otherwise."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.shape} vs {self._event_shape}.")
        actual = tuple(value.shape)
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{minitorch.Size(actual)} vs {minitorch.Size(expected)}.")
        support = self._declared(
            "support", f"{self.__class__} does not define `support` to enable sample validation. Please "
            "initialize the distribution with `validate_args=False` to turn off validation.")
        if support is not None and not support.check(value).all():
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _declared(self, attr, warning):
        """``self.<attr>``, or None with ``warning`` when the class does not define it."""
        try:
            return getattr(self, attr)
        except NotImplementedError:
            warnings.warn(warning)
            return None

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].shape}"
            for p in names)
        return f"{self.__class__.__name__}({args})"
