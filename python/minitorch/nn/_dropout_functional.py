"""``alpha_dropout`` and ``feature_alpha_dropout``: the dropout of self-normalizing networks
(SELU; Klambauer et al., 2017).

Plain dropout's zeros would shift the mean and variance that SELU keeps at 0 and 1. Alpha
dropout instead sets a dropped value to SELU's negative saturation ``-alpha'`` (``alpha' =
scale * alpha``, about 1.7581), then maps every value through ``a * v + b``, with ``a`` and
``b`` chosen so that an input of mean 0 and variance 1 keeps them (p: the drop probability):

    a = ((1 - p) * (1 + p * alpha'^2)) ** -0.5        b = a * alpha' * p

With ``keep`` the 0/1 mask, ``out = x * (keep * a) + (keep - 1 + p) * a * alpha'``: two
mask-shaped factors, so the gradient is ``keep * a``. The feature form draws one keep/drop
per (dim 0, dim 1) entry (a sample's channel) and broadcasts it over the rest.
"""
from __future__ import annotations

import math

from .. import _C
from . import functional as F

# SELU's scale * alpha: the value a dropped element takes before the affine map (as PyTorch has it).
_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(input, p: float, training: bool, inplace: bool, op: str, feature: bool):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if not input.is_floating_point():
        raise TypeError(f"{op}: expected a floating point input, got {input.dtype}")
    if p < 1.0 and feature and input.dim() < 2:
        raise _C.InputError(f"{op}: feature dropout requires at least 2 dimensions in the input, got input of "
                            f"shape {tuple(input.shape)}")

    def compute(x):
        if p == 1.0:  # everything dropped: PyTorch's zeros (the formula would divide by 0)
            return x * 0.0
        a = 1.0 / math.sqrt((1.0 - p) * (1.0 + p * _ALPHA_PRIME ** 2))
        shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2) if feature else tuple(x.shape)
        # Drawn in float32 whatever the input's float type (16-bit draws would bias p).
        keep = (_C._rand(shape, _C.dtype.float32, x.device) >= p).to(x.dtype)
        return x * (keep * a) + (keep + (p - 1.0)) * (a * _ALPHA_PRIME)

    return F._write_into(input, op + "_", compute) if inplace else compute(input)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """While ``training``, each element is dropped with probability ``p`` the SELU way (see the
    module docstring): the mean and variance of a standardized input are kept. Otherwise (the
    default, as in PyTorch) it returns ``input``.

    >>> x = minitorch.randn(10000)
    >>> y = F.alpha_dropout(x, 0.2, training=True)
    >>> round(y.mean().item(), 1), round(y.std().item(), 1)
    (0.0, 1.0)
    """
    return _alpha_dropout(input, p, training, inplace, "alpha_dropout", feature=False)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels: one keep/drop draw per entry of the first two dims of
    (N, C, *) input, broadcast over the rest; identity unless ``training``."""
    return _alpha_dropout(input, p, training, inplace, "feature_alpha_dropout", feature=True)
