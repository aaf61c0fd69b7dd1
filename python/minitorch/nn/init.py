"""``minitorch.nn.init``: in-place initialisation of parameters (PyTorch's formulas)."""
from __future__ import annotations

import math

from .. import _C
from ..autograd import no_grad


def _fans(t):
    if t.dim() < 2:
        raise ValueError(f"fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
                         f"(shape {tuple(t.shape)})")
    receptive = 1
    for s in tuple(t.shape)[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def calculate_gain(nonlinearity: str, param=None) -> float:
    if nonlinearity in ("linear", "conv1d", "conv2d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    with no_grad():
        r = _C._rand(tuple(tensor.shape), tensor.dtype, tensor.device)
        return tensor.copy_(r * (b - a) + a)


def normal_(tensor, mean: float = 0.0, std: float = 1.0):
    with no_grad():
        r = _C._randn(tuple(tensor.shape), tensor.dtype, tensor.device)
        return tensor.copy_(r * std + mean)


def constant_(tensor, val: float):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain: float = 1.0):
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain: float = 1.0):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))
