"""``gumbel_softmax`` (Jang et al., 2017; Maddison et al., 2017): a differentiable sample
from a categorical distribution given by ``logits``."""
from __future__ import annotations

import warnings

from .. import _C


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1):
    """``softmax((logits + g) / tau)`` along ``dim``, with g independent Gumbel(0, 1) noise
    (``-log(E)``, E exponential). ``hard=True`` returns the one-hot of the sample's argmax
    with the soft sample's gradient (straight-through: ``y_hard - y.detach() + y``).

    Lower ``tau`` gives samples closer to one-hot (and noisier gradients).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if not isinstance(logits, _C.Tensor):
        raise TypeError(f"gumbel_softmax: logits must be a Tensor, got {type(logits).__name__}")
    if not logits.dtype.is_floating_point:
        raise TypeError(f"gumbel_softmax: expected floating-point logits, got {logits.dtype}")
    u = _C._rand(tuple(logits.shape), logits.dtype, logits.device)
    # E = -log(1 - u) ~ Exp(1), kept away from 0 so that -log(E) stays finite
    tiny = 1e-20 if logits.dtype == _C.dtype.float64 else 1e-7
    expo = (u * -1.0).log1p().neg().clamp(min=tiny)
    gumbels = expo.log().neg()
    y = ((logits + gumbels) * (1.0 / tau)).softmax(dim)
    if not hard:
        return y
    index = y.max(dim, keepdim=True).indices
    y_hard = (y.detach() * 0.0).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y
