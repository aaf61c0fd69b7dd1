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

The same accounting as ``minitorch.cuda`` (PyTorch's names): ``memory_allocated`` /
``max_memory_allocated`` count blocks at their size class (below 64 KiB a multiple of 64
bytes, above it one of four classes per power of two, at most 25% over the request),
``memory_reserved`` adds the cached blocks, ``reset_peak_memory_stats``, ``memory_stats``,
``memory_summary``; ``set_per_process_memory_fraction(f)`` caps the reserved bytes at
``f`` x the machine's RAM, past which an allocation raises
:class:`minitorch.OutOfMemoryError`, so an out-of-memory can be shown on any machine.
``get_device_properties()`` describes the processor, with an estimated peak FLOP/s and a
measured memory bandwidth (docs/memory.md).
"""
from __future__ import annotations

import os
import re
import time

from . import _C
from . import _memory_api as _m


def memory_allocated() -> int:
    """Bytes of CPU memory in blocks held by live tensors (sizes rounded to the block)."""
    return int(_C._cpu_memory_allocated())


def max_memory_allocated() -> int:
    """The peak of :func:`memory_allocated` since the start or :func:`reset_peak_memory_stats`."""
    return int(_C._cpu_max_memory_allocated())


def max_memory_reserved() -> int:
    """The peak of :func:`memory_reserved` since the start or :func:`reset_peak_memory_stats`."""
    return _m.max_memory_reserved("cpu")


def memory_cached() -> int:
    """Bytes in freed blocks the allocator keeps for reuse."""
    return int(_C._cpu_memory_cached())


def memory_reserved() -> int:
    """Bytes held by the allocator: live tensors plus cached free blocks."""
    return memory_allocated() + memory_cached()


def reset_peak_memory_stats() -> None:
    """Starts every peak (:func:`max_memory_allocated`, :func:`max_memory_reserved`, the
    ``.peak`` values of :func:`memory_stats`) again from the current values."""
    _C._cpu_reset_peak_memory_stats()


def reset_max_memory_allocated() -> None:
    """As ``torch.cuda``'s: calls :func:`reset_peak_memory_stats` (with a FutureWarning)."""
    _m.reset_max_memory_allocated("cpu", "cpu")


def reset_accumulated_memory_stats() -> None:
    """Zeroes the ``.allocated`` / ``.freed`` totals and the event counts of :func:`memory_stats`."""
    _m.reset_accumulated_memory_stats("cpu")


def memory_stats():
    """The CPU allocator's counters under the keys of ``torch.cuda.memory_stats()``
    (``"allocated_bytes.all.peak"``, ``"reserved_bytes.all.current"``, ``"num_ooms"`` ...)."""
    return _m.memory_stats("cpu")


def memory_summary(abbreviated: bool = False) -> str:
    """:func:`memory_stats` as a table, like ``torch.cuda.memory_summary()``."""
    return _m.memory_summary("cpu", "minitorch CPU memory summary", abbreviated)


def set_per_process_memory_fraction(fraction) -> None:
    """Limits minitorch's CPU tensors to ``fraction`` (a float in [0, 1]) of the machine's
    RAM (``get_device_properties().total_memory``): an allocation that would take the
    reserved bytes past it raises :class:`minitorch.OutOfMemoryError` (a RuntimeError and
    a MemoryError). Free tensors and allocations succeed again. 1.0 lifts the limit.

    Raises:
        TypeError: ``fraction`` is not a float.
        ValueError: it is outside [0, 1].
    """
    _m.set_per_process_memory_fraction("cpu", fraction, "cpu")


def get_per_process_memory_fraction() -> float:
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0 by default)."""
    return _m.get_per_process_memory_fraction("cpu")


def empty_cache() -> None:
    """Returns every cached free block to the operating system."""
    _C._cpu_empty_cache()


def caching_enabled() -> bool:
    """False when the cache is off (``MINITORCH_CPU_CACHING=0`` or an AddressSanitizer build)."""
    return bool(_C._cpu_caching_enabled())


# ---------------------------------------------------------------- the processor

def _cpuinfo() -> dict:
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = line.split(":", 1)
                    info.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return info


def _clock_khz(info: dict) -> int:
    """The highest clock: cpufreq's maximum, else the "@ 2.50GHz" of the model name, else
    the current "cpu MHz"."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        pass
    m = re.search(r"@\s*([\d.]+)\s*GHz", info.get("model name", ""))
    if m:
        return int(float(m.group(1)) * 1e6)
    try:
        return int(float(info.get("cpu MHz", "0")) * 1000)
    except ValueError:
        return 0


class _CpuDeviceProperties:
    """What :func:`get_device_properties` returns.

    Fields: ``name``; ``total_memory`` (bytes of RAM); ``core_count`` (logical CPUs this
    process may run on); ``clock_rate`` (kHz, the highest the system reports);
    ``simd_width`` (bits of the widest vector unit: 512 with AVX-512, 256 with AVX2, else
    128); ``fma`` (fused multiply-add in hardware); ``cpu_capability`` (the vector code
    minitorch's own kernels use, e.g. "AVX2"; BLAS may use wider).

    ``peak_flops`` (an estimate): per precision, ``core_count x clock x lanes x 2 (an FMA
    is two operations) x 2 (two FMA units per core, as on current x86 and Arm server cores)``;
    lanes = ``simd_width / 32`` for "fp32", ``/ 64`` for "fp64". Hyperthreads share their
    core's units, so with SMT on the true peak is about half. ``peak_bandwidth`` is
    measured on first use: the best of a few copies of a 64 MiB tensor (bytes read plus
    written per second), with minitorch's threads.
    """

    def __init__(self):
        info = _cpuinfo()
        self.name = info.get("model name") or info.get("Hardware") or "CPU"
        self.total_memory = _ram()
        self.core_count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.clock_rate = _clock_khz(info)
        flags = set((info.get("flags") or info.get("Features") or "").split())
        self.simd_width = 512 if "avx512f" in flags else 256 if "avx2" in flags or "avx" in flags else 128
        self.fma = bool(flags & {"fma", "asimd", "fphp"}) or not flags
        self.cpu_capability = str(_C._cpu_capability())
        ops = 2 * (2 if self.fma else 1) * self.core_count * self.clock_rate * 1000.0
        self.peak_flops = {"fp64": ops * self.simd_width / 64, "fp32": ops * self.simd_width / 32}
        self._bandwidth = None

    @property
    def peak_bandwidth(self) -> float:
        if self._bandwidth is None:
            self._bandwidth = measure_bandwidth()
        return self._bandwidth

    def __repr__(self) -> str:
        return (f"_CpuDeviceProperties(name='{self.name}', core_count={self.core_count}, "
                f"clock_rate={self.clock_rate}, simd_width={self.simd_width}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB)")


def _ram() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0


def measure_bandwidth(nbytes: int = 64 << 20, repeat: int = 5) -> float:
    """Bytes per second of a copy between two CPU tensors of ``nbytes`` (read plus
    written), the best of ``repeat`` runs. A STREAM-like copy: about the memory bandwidth
    minitorch's elementwise kernels can reach here."""
    from . import empty

    n = nbytes // 4
    src, dst = empty(n), empty(n)
    src.fill_(1.0)
    dst.copy_(src)  # touch the pages first
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n * 4 / best


_properties = None


def get_device_properties(device=None) -> _CpuDeviceProperties:
    """The processor: name, cores, clock, vector width, RAM, and an estimated
    ``peak_flops`` / measured ``peak_bandwidth`` for the roofline (see
    :class:`_CpuDeviceProperties`)."""
    global _properties
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise ValueError(f"get_device_properties: expected the cpu device, got {device}")
    if _properties is None:
        _properties = _CpuDeviceProperties()
    return _properties
