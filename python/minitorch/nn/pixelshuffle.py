"""``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``: ``F.pixel_shuffle``,
``F.pixel_unshuffle`` and ``F.channel_shuffle`` as layers."""
from __future__ import annotations

from . import functional as F
from .module import Module


class _Shuffle(Module):
    """A layer calling ``F.<functional>(input, <its one int argument>)``; the argument's name
    is ``arg`` (an attribute of that name, shown by the repr)."""

    functional = ""
    arg = ""

    def __init__(self, value: int):
        super().__init__()
        setattr(self, self.arg, value)

    def forward(self, input):
        return getattr(F, self.functional)(input, getattr(self, self.arg))

    def extra_repr(self) -> str:
        return f"{self.arg}={getattr(self, self.arg)}"


class PixelShuffle(_Shuffle):
    """(*, C r^2, H, W) -> (*, C, H r, W r), r = ``upscale_factor`` (sub-pixel upsampling)."""

    functional, arg = "pixel_shuffle", "upscale_factor"

    def __init__(self, upscale_factor: int):
        super().__init__(upscale_factor)


class PixelUnshuffle(_Shuffle):
    """(*, C, H r, W r) -> (*, C r^2, H, W), r = ``downscale_factor``."""

    functional, arg = "pixel_unshuffle", "downscale_factor"

    def __init__(self, downscale_factor: int):
        super().__init__(downscale_factor)


class ChannelShuffle(_Shuffle):
    """Interleaves the channels of ``groups`` groups of (N, C, *) input (ShuffleNet), so that
    a grouped convolution after it sees channels of every group."""

    functional, arg = "channel_shuffle", "groups"

    def __init__(self, groups: int):
        super().__init__(groups)
