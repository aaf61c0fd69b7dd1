"""``minitorch.cpu``: the CPU's memory, as ``minitorch.cuda`` reports the GPU's.

CPU storage comes from a caching allocator: freed blocks of 64 KiB and more are kept
and reused by the next tensor of about the same size, so a training step does not map
fresh pages from the operating system for every batch and gradient. At most an eighth of
the machine's memory is kept. ``MINITORCH_CPU_CACHING=0`` (set before the import) turns
the cache off; it is off under AddressSanitizer, which must see every free.

    >>> x = minitorch.empty(1 << 20); del x
    >>> minitorch.cpu.memory_cached() >= 4 << 20
    True
    >>> minitorch.cpu.empty_cache()
"""
from __future__ import annotations

from . import _C


def memory_allocated() -> int:
    """Bytes of CPU memory in blocks held by live tensors (sizes rounded to the block)."""
    return int(_C._cpu_memory_allocated())


def max_memory_allocated() -> int:
    """The peak of :func:`memory_allocated` since the start or :func:`reset_peak_memory_stats`."""
    return int(_C._cpu_max_memory_allocated())


def memory_cached() -> int:
    """Bytes in freed blocks the allocator keeps for reuse."""
    return int(_C._cpu_memory_cached())


def memory_reserved() -> int:
    """Bytes held by the allocator: live tensors plus cached free blocks."""
    return memory_allocated() + memory_cached()


def reset_peak_memory_stats() -> None:
    """Starts :func:`max_memory_allocated` again from the current usage."""
    _C._cpu_reset_peak_memory_stats()


def empty_cache() -> None:
    """Returns every cached free block to the operating system."""
    _C._cpu_empty_cache()


def caching_enabled() -> bool:
    """False when the cache is off (``MINITORCH_CPU_CACHING=0`` or an AddressSanitizer build)."""
    return bool(_C._cpu_caching_enabled())
