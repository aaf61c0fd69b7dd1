"""``minitorch.cuda``: is there a GPU minitorch can use?"""
from __future__ import annotations

from . import _C


def is_compiled() -> bool:
    """True when this build of minitorch contains the CUDA backend."""
    return bool(_C._cuda_compiled)


def device_count() -> int:
    """Number of usable CUDA GPUs (0 without a driver or GPU, or in a CPU-only build)."""
    return int(_C._cuda_device_count())


def is_available() -> bool:
    """True when tensors can be put on ``"cuda"``.

    The kernels of the CUDA backend arrive with the CUDA issue; until then this is
    False even where a GPU is present.
    """
    return False
