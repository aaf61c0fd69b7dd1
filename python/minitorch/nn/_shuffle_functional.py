"""``pixel_shuffle`` and ``pixel_unshuffle`` (Shi et al., 2016, sub-pixel convolution):
moving ``r * r`` channels into an ``r x r`` block of pixels and back; ``channel_shuffle``
(ShuffleNet, Zhang et al., 2017): interleaving the channels of ``g`` groups. Each is one
reshape, one permute and one reshape, so the gradient is a permutation too.
"""
from __future__ import annotations

from .. import _C


def _check(input, factor, op: str, what: str) -> None:
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if isinstance(factor, bool) or not isinstance(factor, int):
        raise TypeError(f"{op}: {what} must be an int, got {type(factor).__name__}")
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           "dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor: int):
    """(*, C r^2, H, W) -> (*, C, H r, W r): output pixel ``(h r + i, w r + j)`` of channel
    ``c`` is input channel ``c r^2 + i r + j`` at ``(h, w)``.

    >>> F.pixel_shuffle(minitorch.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    _check(input, upscale_factor, "pixel_shuffle", "upscale_factor")
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of ``pixel_shuffle``."""
    _check(input, downscale_factor, "pixel_unshuffle", "downscale_factor")
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    k = len(lead)
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H/r, W/r)
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups: int):
    """(N, C, *) -> (N, C, *) with the C channels, seen as ``groups`` groups of C / groups,
    interleaved: output channel ``j * groups + i`` is input channel ``i * (C / groups) + j``
    (a (groups, C / groups) transpose), so the next grouped convolution sees every group.

    >>> F.channel_shuffle(minitorch.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    _check(input, groups, "channel_shuffle", "groups")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"channel_shuffle: number of channels must be divisible by groups, got {c} channels "
                           f"(input of shape {tuple(input.shape)}) and {groups} groups")
    x = input.reshape((n, groups, c // groups) + tuple(rest))
    return x.transpose(1, 2).reshape(tuple(input.shape))
