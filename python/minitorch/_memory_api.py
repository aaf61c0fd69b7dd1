"""The memory functions ``minitorch.cuda`` and ``minitorch.cpu`` share (PyTorch's
``torch.cuda`` memory API), over the counters of each device's caching allocator
(cpp/include/minitorch/memory_stats.h; docs/memory.md).

Every function takes the device type ("cpu" or "cuda") first; cuda.py and cpu.py bind it.
"""
from __future__ import annotations

import collections
import warnings

from . import _C


def memory_stats(dev: str) -> "collections.OrderedDict[str, int]":
    stats = _C._memory_stats(dev)
    return collections.OrderedDict(sorted((k, int(v)) for k, v in stats.items()))


def _stat(dev: str, key: str) -> int:
    return int(_C._memory_stats(dev).get(key, 0))


def memory_allocated(dev: str) -> int:
    return _stat(dev, "allocated_bytes.all.current")


def max_memory_allocated(dev: str) -> int:
    return _stat(dev, "allocated_bytes.all.peak")


def memory_reserved(dev: str) -> int:
    return _stat(dev, "reserved_bytes.all.current")


def max_memory_reserved(dev: str) -> int:
    return _stat(dev, "reserved_bytes.all.peak")


def reset_peak_memory_stats(dev: str) -> None:
    _C._memory_reset_peak(dev)


def reset_accumulated_memory_stats(dev: str) -> None:
    _C._memory_reset_accumulated(dev)


def reset_max_memory_allocated(dev: str, module: str) -> None:
    warnings.warn(f"minitorch.{module}.reset_max_memory_allocated now calls minitorch.{module}.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=3)
    reset_peak_memory_stats(dev)


def set_per_process_memory_fraction(dev: str, fraction, module: str) -> None:
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._memory_set_fraction(dev, fraction)


def get_per_process_memory_fraction(dev: str) -> float:
    return float(_C._memory_get_fraction(dev))


def _format_size(n: int, peak: int) -> str:
    """memory_summary's units, chosen by the row's peak so a row shares one unit."""
    unit = "B  "
    for bigger in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if peak < 768 * 1024:
            break
        unit, n, peak = bigger, n // 1024, peak / 1024
    return f"{n:6d} {unit}"


def _format_count(n: int, peak: int) -> str:
    unit = " "
    for bigger in ("K", "M"):
        if peak < 750 * 1000:
            break
        unit, n, peak = bigger, n // 1000, peak / 1000
    return f"{n:7d} {unit} "


def memory_summary(dev: str, title: str, abbreviated: bool = False) -> str:
    """A table like ``torch.cuda.memory_summary()``: for each statistic its current value,
    peak, total allocated and total freed, for all blocks and (unless ``abbreviated``) the
    large and small pools."""
    stats = _C._memory_stats(dev)
    width = 75
    rows = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", f"{'GPU' if dev == 'cuda' else 'CPU'} reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", f"{'GPU' if dev == 'cuda' else 'CPU'} reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    line = "|" + "-" * width + "|"
    double = "|" + "=" * width + "|"
    lines = [double, "|" + title.center(width) + "|", line]
    ooms = f"{'CUDA' if dev == 'cuda' else 'CPU'} OOMs: {int(stats.get('num_ooms', 0))}"
    retries = f"{'cudaMalloc' if dev == 'cuda' else 'malloc'} retries: {int(stats.get('num_alloc_retries', 0))}"
    lines.append("|" + ooms.center(36) + "|" + retries.center(38) + "|")
    lines += [double, "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |", line]
    pools = [("all", "")] if abbreviated else [("all", ""), ("large_pool", "      from large pool"),
                                               ("small_pool", "      from small pool")]
    for key, label, fmt in rows:
        for pool, pool_label in pools:
            values = [int(stats.get(f"{key}.{pool}.{f}", 0)) for f in ("current", "peak", "allocated", "freed")]
            name = label if pool == "all" else pool_label
            lines.append(f"| {name:<21} | " + " | ".join(fmt(v, values[1]) for v in values) + " |")
        lines.append(line)
    lines[-1] = double
    return "\n".join(lines) + "\n"
