"""``instance_norm`` (Ulyanov et al., 2016) and ``local_response_norm`` (Krizhevsky et al.,
2012, AlexNet): normalisations of each sample on its own.

``instance_norm`` normalises each (sample, channel) plane over its spatial dims: a group
norm with one channel per group (the fused C++ ``group_norm``). ``local_response_norm``
divides each value by ``(k + alpha * mean of squares over size neighbouring channels) ** beta``.
"""
from __future__ import annotations

import math

from .. import _C
from ..autograd import no_grad


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5):
    """Normalises each channel of each sample of (N, C, *) input over its spatial dims, then
    ``* weight + bias`` per channel.

    ``use_input_stats=True``: the planes' own mean and biased variance; ``running_mean`` and
    ``running_var`` (when given) move toward the batch average of them
    (``r = (1 - momentum) r + momentum stat``, unbiased variance, as PyTorch does).
    ``use_input_stats=False``: the running statistics are used instead.
    """
    op = "instance_norm"
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dim() < 3:
        raise ValueError(f"{op}: expected an input of shape (N, C, *) with at least one spatial dim, got "
                         f"{tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"{op}: {name} should contain {c} elements (the channels of input of shape "
                             f"{tuple(input.shape)}), not {t.numel()} (shape {tuple(t.shape)})")
    count = math.prod(input.shape[2:])
    cshape = (1, c) + (1,) * (input.dim() - 2)
    if use_input_stats:
        if count <= 1:
            raise ValueError(f"{op}: Expected more than 1 spatial element when training, got input size "
                             f"{list(input.shape)}")
        # a group norm with one channel per group: each (sample, channel) plane normalized over
        # its spatial dims, and * weight + bias, in one fused kernel each way. Parameters of
        # another dtype (float32 ones beside a float16 input) are applied after it, with type
        # promotion, as before the fusion.
        affine_apart = any(t is not None and t.dtype != input.dtype for t in (weight, bias))
        out = _C._group_norm(input, c, None if affine_apart else weight, None if affine_apart else bias, float(eps))
        if running_mean is not None or running_var is not None:
            with no_grad():
                planes = input.reshape(n * c, count)
                mean = planes.mean(1)
                var = ((planes - mean.unsqueeze(1)) ** 2).sum(1) * (1.0 / (count - 1))
                if running_mean is not None:
                    stat = mean.reshape(n, c).mean(0).to(running_mean.dtype)
                    running_mean.mul_(1.0 - momentum).add_(stat, alpha=momentum)
                if running_var is not None:
                    stat = var.reshape(n, c).mean(0).to(running_var.dtype)
                    running_var.mul_(1.0 - momentum).add_(stat, alpha=momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: Expected running_mean and running_var to be defined when use_input_stats is "
                             "false")
        out = (input - running_mean.reshape(cshape)) * (running_var.reshape(cshape) + eps).rsqrt()
        affine_apart = True
    if affine_apart and weight is not None:
        out = out * weight.reshape(cshape)
    if affine_apart and bias is not None:
        out = out + bias.reshape(cshape)
    return out


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """``x / (k + alpha / size * sum of x^2 over the size channels around it) ** beta`` on
    (N, C, *) input; the channel window is zero-padded (``size // 2`` before,
    ``(size - 1) // 2`` after), as in AlexNet.
    """
    op = "local_response_norm"
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dim() < 3:
        raise ValueError(f"{op}: Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"{op}: size must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    from .. import cat
    c = input.shape[1]
    sq = input * input
    rest = tuple(input.shape[2:])

    def zeros(m):
        return _C._full((input.shape[0], m) + rest, 0.0, input.dtype, input.device)

    before, after = size // 2, (size - 1) // 2
    padded = cat(([zeros(before)] if before else []) + [sq] + ([zeros(after)] if after else []), 1)
    window = padded[:, 0:c]
    for j in range(1, size):  # sum of the size shifted channel blocks
        window = window + padded[:, j:j + c]
    div = (window * (alpha / size) + k) ** beta
    return input / div
