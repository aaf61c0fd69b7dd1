"""``minitorch.cuda``'s memory functions, PyTorch's ``torch.cuda`` memory API.

GPU memory comes from a caching allocator (cuda/allocator.cu): a request is rounded up to
a multiple of 512 bytes (at least 512), handed a cached block of that size if one is
free, else a new block from ``cudaMalloc``; a freed block goes back to the cache, not to
CUDA. So

* ``memory_allocated()``: bytes of blocks held by tensors (rounded sizes: a float32
  tensor of 100 elements holds 512 bytes);
* ``memory_reserved()``: those plus the cached blocks (what the process took from CUDA);
* ``max_memory_allocated()`` / ``max_memory_reserved()``: their peaks since the start or
  ``reset_peak_memory_stats()``;
* ``memory_stats()``: every counter under PyTorch's keys (``"allocated_bytes.all.peak"``,
  ``"num_ooms"``, ...); ``memory_summary()`` prints them as a table;
* ``set_per_process_memory_fraction(f)``: the reserved bytes may not pass ``f`` times the
  device's total memory; past it, the cache is given back and the request retried, then
  :class:`minitorch.cuda.OutOfMemoryError` is raised. The allocator stays consistent:
  free tensors and the next allocation succeeds. (In the emulator, this is how to meet
  an out-of-memory on purpose.)

minitorch has one CUDA device: ``device`` may be None, 0, "cuda", "cuda:0" or that device.
"""
from __future__ import annotations

from . import _C
from . import _memory_api as _m
from .cuda_device import _check_device


def memory_stats(device=None):
    """The allocator's counters as an ordered dict under PyTorch's keys: for ``active``,
    ``active_bytes``, ``allocated_bytes``, ``allocation``, ``requested_bytes``,
    ``reserved_bytes``, ``segment`` (and the always-0 ``inactive_split*``, ``oversize_*``)
    the ``.all`` / ``.large_pool`` / ``.small_pool`` ``.current`` / ``.peak`` /
    ``.allocated`` / ``.freed`` values; and ``num_alloc_retries``, ``num_ooms``,
    ``num_device_alloc``, ``num_device_free``. Empty where CUDA is not available."""
    _check_device(device, "memory_stats")
    return _m.memory_stats("cuda")


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory held by tensors (each rounded up to its block: a multiple of 512)."""
    _check_device(device, "memory_allocated")
    return _m.memory_allocated("cuda")


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` since the start or :func:`reset_peak_memory_stats`."""
    _check_device(device, "max_memory_allocated")
    return _m.max_memory_allocated("cuda")


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds: blocks in tensors plus cached free blocks."""
    _check_device(device, "memory_reserved")
    return _m.memory_reserved("cuda")


def max_memory_reserved(device=None) -> int:
    """The peak of :func:`memory_reserved` since the start or :func:`reset_peak_memory_stats`."""
    _check_device(device, "max_memory_reserved")
    return _m.max_memory_reserved("cuda")


def reset_peak_memory_stats(device=None) -> None:
    """Starts every peak (``max_memory_allocated``, ``max_memory_reserved``, the ``.peak``
    values of :func:`memory_stats`) again from the current values."""
    _check_device(device, "reset_peak_memory_stats")
    _m.reset_peak_memory_stats("cuda")


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated in PyTorch: calls :func:`reset_peak_memory_stats` (with a FutureWarning)."""
    _check_device(device, "reset_max_memory_allocated")
    _m.reset_max_memory_allocated("cuda", "cuda")


def reset_accumulated_memory_stats(device=None) -> None:
    """Zeroes the ``.allocated`` / ``.freed`` totals and the event counts of :func:`memory_stats`."""
    _check_device(device, "reset_accumulated_memory_stats")
    _m.reset_accumulated_memory_stats("cuda")


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """Limits this process to ``fraction`` (a float in [0, 1]) of the device's total memory
    (``get_device_properties().total_memory``): an allocation that would take the reserved
    bytes past it raises :class:`OutOfMemoryError`. 1.0 lifts the limit.

    Raises:
        TypeError: ``fraction`` is not a float.
        ValueError: it is outside [0, 1].
    """
    _check_device(device, "set_per_process_memory_fraction")
    _m.set_per_process_memory_fraction("cuda", fraction, "cuda")


def get_per_process_memory_fraction(device=None) -> float:
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0 by default)."""
    _check_device(device, "get_per_process_memory_fraction")
    return _m.get_per_process_memory_fraction("cuda")


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """The allocator's counters as a table, like ``torch.cuda.memory_summary()``."""
    _check_device(device, "memory_summary")
    return _m.memory_summary("cuda", "minitorch CUDA memory summary, device ID 0", abbreviated)


def empty_cache() -> None:
    """Returns the cached, unused blocks to CUDA (``memory_reserved`` drops to
    ``memory_allocated``)."""
    _C._cuda_empty_cache()
