"""Helpers shared by the distributions: argument broadcasting, probs <-> logits, cached
properties, and the standard random draws on the parameters' device."""
from __future__ import annotations

import math
import numbers

import minitorch
import minitorch.nn.functional as F
from minitorch import Tensor

from . import constraints

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values):
    """Broadcasts numbers and tensors to one shape. Numbers become tensors of the first
    tensor's dtype and device (of the default dtype on the CPU when all are numbers)."""
    options = {"dtype": minitorch.get_default_dtype()}
    for value in values:
        if not isinstance(value, (Tensor, numbers.Number)):
            raise ValueError(
                "Input arguments must all be instances of numbers.Number, minitorch.Tensor or "
                "objects implementing __torch_function__.")
    for value in values:
        if isinstance(value, Tensor):
            options = {"dtype": value.dtype, "device": value.device}
            break
    tensors = [v if isinstance(v, Tensor) else minitorch.tensor(float(v), **options) for v in values]
    return minitorch.broadcast_tensors(*tensors)


def as_size(shape) -> minitorch.Size:
    return shape if isinstance(shape, minitorch.Size) else minitorch.Size(tuple(shape))


def standard_normal(shape, dtype, device) -> Tensor:
    return minitorch.randn(as_size(shape), dtype=dtype, device=device)


def standard_uniform(shape, dtype, device) -> Tensor:
    """Draws in [0, 1)."""
    return minitorch.rand(as_size(shape), dtype=dtype, device=device)


def sum_rightmost(value, dim: int):
    """Sums out the ``dim`` rightmost dimensions of ``value`` (numbers pass through)."""
    if dim == 0 or not isinstance(value, Tensor):
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Sigmoid of binary logits, softmax over the last dim otherwise."""
    return minitorch.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps into [eps, 1 - eps] of the dtype, keeping logs finite."""
    eps = minitorch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Log-odds of binary probabilities, log-probabilities otherwise."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def clamp_by_zero(x):
    """(x.clamp(min=0) + x - x.clamp(max=0)) / 2: max(x, 0) with gradient 1/2 at 0."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class lazy_property:
    """A property computed once per instance, on first access, and then cached in the
    instance's __dict__ (computed with gradients enabled, as a parameter may be)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with minitorch.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value



def one_of_probs_logits(probs, logits) -> None:
    """Raises PyTorch's ValueError unless exactly one of probs and logits is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def log_abs(value):
    """log|value| of a number (as a float) or of a tensor."""
    if isinstance(value, Tensor):
        return value.abs().log()
    return math.log(abs(value))


def enumerate_values(dist, count: int, dtype, expand: bool):
    """0, 1, ..., count - 1 along a new dim 0, over ``dist``'s batch dims (singleton ones
    unless ``expand``): the values of enumerate_support."""
    values = minitorch.arange(count, dtype=dtype, device=dist._param.device)
    values = values.reshape((-1,) + (1,) * len(dist._batch_shape))
    return values.expand((-1,) + tuple(dist._batch_shape)) if expand else values


class LocScaleMixin:
    """For families on the real line parameterized by ``loc`` and ``scale`` (broadcast
    together): the constructor, expand, the constraints, and ``loc`` as mean and mode (a
    class overrides what differs)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        family = next(c for c in type(self).__mro__ if LocScaleMixin in c.__bases__)
        return self._expand_params(family, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class ProbsLogitsMixin:
    """For distributions given by ``probs`` or ``logits`` (exactly one; the other is
    computed when first used): binary ones (sigmoid) unless ``_binary`` is False
    (softmax over the last dim). ``_param`` is the one given."""

    _binary = True

    def _set_probs_or_logits(self, probs, logits, *others):
        """Broadcasts the given one of probs/logits with ``others`` (returned)."""
        one_of_probs_logits(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        param, *others = broadcast_all(value, *others)
        setattr(self, name, param)
        self._param = param
        return others

    def _expand_probs_logits(self, cls, batch_shape, names, _instance=None, event_shapes=None):
        new = self._expand_params(cls, batch_shape, ("probs", "logits") + tuple(names), _instance, event_shapes)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)

    @property
    def param_shape(self):
        return self._param.shape

