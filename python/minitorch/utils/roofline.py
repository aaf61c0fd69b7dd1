"""``minitorch.utils.roofline``: ops and kernels of a profile against a device's roofline.

The roofline model (Williams, Waterman and Patterson, 2009) says how fast a piece of work
can run at best: it computes ``flops`` and moves ``bytes``, so its *arithmetic intensity*
is ``flops / bytes`` (FLOP per byte), and it cannot run faster than

    attainable FLOP/s = min(peak FLOP/s, intensity * peak bandwidth)

Below the ridge point (``peak FLOP/s / peak bandwidth``) the memory slope is the lower roof:
the work is *memory bound* (elementwise ops, reductions, softmax, norms, small matmuls);
above it, the compute ceiling: *compute bound* (large matmuls and convolutions). How close
a point comes to its roof is how well the code uses the machine::

    from minitorch.profiler import profile
    from minitorch.utils.roofline import roofline, roofline_table

    with profile(with_flops=True) as prof:
        model(x).sum().backward()
    for row in roofline_table(prof):
        print(row.name, row.intensity, row.achieved / 1e9, row.bound, row.percent_of_roof)
    ax = roofline(prof)               # matplotlib Axes: the roofs and one point per op
    ax.figure.savefig("roofline.png")

FLOPs and bytes come from the profiler (``cpp/src/kernel_work.cpp``; bytes are an estimate,
the compulsory traffic). The time of a point is its device time where kernels were timed
(a GPU; RawKernels in the emulator) and its CPU time otherwise (the CPU). The emulator's
built-in kernels are not timed: their points show how fast the emulation ran, and their
intensities, which are the GPU's, are what to read.

Peaks: ``peak_flops`` (FLOP/s, a number or a dict of one per precision such as
``{"fp32": 19.5e12, "fp16": 312e12}``) and ``peak_bandwidth`` (bytes/s) when given; else
``minitorch.cuda.get_device_properties(device)`` (or ``minitorch.cpu``'s)
``.peak_flops`` / ``.peak_bandwidth`` where those exist; else the defaults of
:func:`device_peaks`.
"""
from __future__ import annotations

import math
import os
from typing import Any, NamedTuple, Optional, Union

__all__ = ["RooflineRow", "device_peaks", "roofline", "roofline_table"]

# Used when the device cannot say (documented in docs/profiling.md): a GPU of the T4 class
# (float32 8.1 TFLOP/s, float16 tensor cores 65 TFLOP/s, 320 GB/s), and for the CPU a core
# estimate (cores * clock * FLOPs per cycle, AVX2 with two FMA units) and dual-channel DDR4.
DEFAULT_GPU_PEAK_FLOPS = {"float32": 8.1e12, "float16": 65e12}
DEFAULT_GPU_PEAK_BANDWIDTH = 320e9
DEFAULT_CPU_CLOCK_HZ = 2.5e9
CPU_FLOPS_PER_CYCLE = {"float32": 32, "float64": 16}  # 2 FMA units x (8 or 4 lanes) x 2 FLOPs
DEFAULT_CPU_PEAK_BANDWIDTH = 25.6e9


class RooflineRow(NamedTuple):
    """One point of a roofline: an op (or kernel) and where it lands.

    ``intensity`` is FLOP per byte, ``achieved`` FLOP/s, ``bandwidth`` bytes/s, ``roof``
    the attainable FLOP/s at this intensity (the lower of the compute ceiling and the
    memory slope), ``bound`` which of the two that is (``"memory"`` or ``"compute"``),
    ``percent_of_roof`` 100 * achieved / roof (NaN where there is no time).
    """

    name: str
    count: int
    flops: int
    bytes: int
    time_us: float
    intensity: float
    achieved: float
    bandwidth: float
    bound: str
    roof: float
    percent_of_roof: float


def _cpu_clock_hz() -> float:
    """The highest clock /proc/cpuinfo reports (Linux), else DEFAULT_CPU_CLOCK_HZ."""
    try:
        with open("/proc/cpuinfo") as f:
            mhz = [float(line.split(":")[1]) for line in f if line.lower().startswith("cpu mhz")]
        if mhz:
            return max(mhz) * 1e6
    except (OSError, ValueError, IndexError):
        pass
    return DEFAULT_CPU_CLOCK_HZ


def _device_type(device: Any) -> str:
    if device is None:
        return "cpu"
    if isinstance(device, int):
        return "cuda"
    return str(getattr(device, "type", device)).split(":")[0]


def device_peaks(device: Any = None) -> tuple[dict, float, str]:
    """The device's peak FLOP/s per precision (a dict), its peak bandwidth (bytes/s) and
    where they came from (a short text for the plot's title).

    Asks ``minitorch.cuda.get_device_properties(device)`` (``minitorch.cpu``'s for the
    CPU) for ``peak_flops`` and ``peak_bandwidth``; where those do not exist, the module's
    defaults: a T4-class GPU, or ``os.cpu_count()`` cores at the clock /proc/cpuinfo
    reports times 32 float32 (16 float64) FLOPs per cycle, and 25.6 GB/s.
    """
    import minitorch

    kind = _device_type(device)
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"roofline: device must be a cpu or cuda device, got {device!r}")
    props_fn = getattr(getattr(minitorch, kind), "get_device_properties", None)
    if props_fn is not None:
        try:
            props = props_fn(None if kind == "cpu" else device)
        except Exception:  # no such device, or no properties to give: the defaults
            props = None
        flops = getattr(props, "peak_flops", None)
        bandwidth = getattr(props, "peak_bandwidth", None) if flops else None
        if flops and bandwidth:
            return _as_ceilings(flops), float(bandwidth), str(getattr(props, "name", kind))
    if kind == "cuda":
        return dict(DEFAULT_GPU_PEAK_FLOPS), DEFAULT_GPU_PEAK_BANDWIDTH, "GPU defaults (T4 class)"
    cores = os.cpu_count() or 1
    clock = _cpu_clock_hz()
    flops = {p: cores * clock * per_cycle for p, per_cycle in CPU_FLOPS_PER_CYCLE.items()}
    return flops, DEFAULT_CPU_PEAK_BANDWIDTH, f"CPU estimate ({cores} cores at {clock / 1e9:.1f} GHz)"


def _as_ceilings(peak_flops: Union[float, dict]) -> dict:
    """FLOP/s ceilings by precision name (integer precisions, which are not FLOPs, left out)."""
    if isinstance(peak_flops, dict):
        ceilings = {str(k).replace("minitorch.", ""): float(v) for k, v in peak_flops.items()
                    if v and not str(k).replace("minitorch.", "").startswith(("int", "uint"))}
        if not ceilings:
            raise ValueError("roofline: peak_flops is an empty dict; give at least one precision's FLOP/s")
        return ceilings
    value = float(peak_flops)
    if not value > 0:
        raise ValueError(f"roofline: peak_flops must be positive (FLOP/s), got {peak_flops!r}")
    return {"peak": value}


def _main_ceiling(ceilings: dict) -> float:
    """The ceiling points are judged against: float32's ("float32" or "fp32") where given,
    else the lowest."""
    for key in ("float32", "fp32"):
        if key in ceilings:
            return ceilings[key]
    return min(ceilings.values())


def _entries(prof_or_events: Any, by: str) -> list:
    """(name, count, flops, bytes, time_us) of each op or kernel of a profile or event list."""
    from ..profiler import EventList, FunctionEvent, FunctionEventAvg, Kernel, profile

    if by not in ("op", "event", "kernel"):
        raise ValueError(f"roofline: by must be 'op', 'event' or 'kernel', got {by!r}")
    if isinstance(prof_or_events, profile):
        events = prof_or_events.events()
    elif isinstance(prof_or_events, (list, tuple)):
        events = prof_or_events
    else:
        raise TypeError(f"roofline: expected a minitorch.profiler.profile or a list of its events, "
                        f"got {type(prof_or_events).__name__}")
    items = list(events)
    if items and all(isinstance(e, Kernel) for e in items):
        return [(k.name, 1, k.flops, k.bytes, k.duration) for k in items]
    if items and all(isinstance(e, FunctionEventAvg) for e in items):
        return [(r.key, r.count, r.flops, r.bytes, r.time_for_rates) for r in items]
    if not all(isinstance(e, FunctionEvent) for e in items):
        raise TypeError("roofline: the list must hold profiler events (FunctionEvent), their averages "
                        "(key_averages()) or kernel records (Kernel)")
    events = EventList(items)
    if by == "kernel":
        rows = events.kernel_averages()
    elif by == "op":
        rows = events.key_averages()
    else:
        return [(e.name, 1, e.flops, e.bytes, e.time_for_rates) for e in events]
    return [(r.key, r.count, r.flops, r.bytes, r.time_for_rates) for r in rows]


def roofline_table(prof_or_events: Any, device: Any = None, peak_flops: Optional[Union[float, dict]] = None,
                   peak_bandwidth: Optional[float] = None, *, by: str = "op") -> list[RooflineRow]:
    """One :class:`RooflineRow` per op (``by="op"``: the profile's ``key_averages()``), per
    event (``"event"``) or per kernel name (``"kernel"``), for those with FLOPs and bytes
    (copies and fills have no FLOPs: a roofline has no place for them). Profile with
    ``with_flops=True``.

    Args:
        prof_or_events: a stopped :class:`minitorch.profiler.profile`, or a list of its
            events, of ``key_averages()`` rows, or of :class:`Kernel` records.
        device: whose peaks ("cpu", "cuda", "cuda:1"...); None: "cuda" when the profile
            recorded kernels, else "cpu".
        peak_flops, peak_bandwidth: the peaks to use instead (FLOP/s, a number or a dict per
            precision; bytes/s).
    """
    entries = _entries(prof_or_events, by)
    ceilings, bandwidth, _ = _resolve_peaks(prof_or_events, device, peak_flops, peak_bandwidth)
    peak = _main_ceiling(ceilings)
    rows = []
    for name, count, flops, nbytes, us in entries:
        if flops <= 0 or nbytes <= 0:
            continue
        intensity = flops / nbytes
        roof = min(peak, intensity * bandwidth)
        achieved = flops / (us * 1e-6) if us > 0 else math.nan
        rows.append(RooflineRow(
            name=name, count=count, flops=int(flops), bytes=int(nbytes), time_us=us, intensity=intensity,
            achieved=achieved, bandwidth=nbytes / (us * 1e-6) if us > 0 else math.nan,
            bound="memory" if intensity * bandwidth < peak else "compute", roof=roof,
            percent_of_roof=100.0 * achieved / roof if us > 0 else math.nan))
    return rows


def _resolve_peaks(prof_or_events: Any, device: Any, peak_flops: Any, peak_bandwidth: Any) -> tuple[dict, float, str]:
    if peak_bandwidth is not None and not float(peak_bandwidth) > 0:
        raise ValueError(f"roofline: peak_bandwidth must be positive (bytes/s), got {peak_bandwidth!r}")
    if peak_flops is not None and peak_bandwidth is not None:
        return _as_ceilings(peak_flops), float(peak_bandwidth), "given peaks"
    if device is None:
        device = "cuda" if _has_kernels(prof_or_events) else "cpu"
    ceilings, bandwidth, source = device_peaks(device)
    if peak_flops is not None:
        ceilings = _as_ceilings(peak_flops)
    if peak_bandwidth is not None:
        bandwidth = float(peak_bandwidth)
    return ceilings, bandwidth, source


def _has_kernels(prof_or_events: Any) -> bool:
    from ..profiler import Kernel, profile

    events = prof_or_events.events() if isinstance(prof_or_events, profile) else prof_or_events
    return any(isinstance(e, Kernel) or getattr(e, "kernel_count", 0) > 0 for e in events)


def roofline(prof_or_events: Any, device: Any = None, ax: Any = None, peak_flops: Optional[Union[float, dict]] = None,
             peak_bandwidth: Optional[float] = None, *, by: str = "op", annotate: bool = True) -> Any:
    """Plots the points of :func:`roofline_table` (intensity, achieved FLOP/s; log-log)
    under the device's roofline: the memory slope ``intensity * peak_bandwidth`` and one
    compute ceiling per precision. Returns the matplotlib ``Axes`` (one is made when `ax`
    is None); each point is labelled with its name when `annotate`.

    Needs matplotlib (``pip install matplotlib``), imported only here.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("roofline: plotting needs matplotlib, which is not installed (pip install matplotlib); "
                          "roofline_table() gives the same numbers without it") from None
    rows = roofline_table(prof_or_events, device, peak_flops, peak_bandwidth, by=by)
    ceilings, bandwidth, source = _resolve_peaks(prof_or_events, device, peak_flops, peak_bandwidth)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5))
    timed = [r for r in rows if r.achieved > 0]
    xs = [r.intensity for r in rows] + [top / bandwidth for top in ceilings.values()]
    lo = min([0.01] + [x / 4 for x in xs])
    hi = max([100.0] + [x * 4 for x in xs])
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(grid, [min(x * bandwidth, max(ceilings.values())) for x in grid], color="black", linewidth=1.5,
            label=f"memory {bandwidth / 1e9:.0f} GB/s")
    for precision, top in sorted(ceilings.items(), key=lambda kv: kv[1]):
        ax.plot([top / bandwidth, hi], [top, top], linestyle="--", linewidth=1,
                label=f"{precision} {top / 1e12:.3g} TFLOP/s")
    if timed:
        ax.scatter([r.intensity for r in timed], [r.achieved for r in timed], zorder=3, label=by + "s")
        if annotate:
            for r in timed:
                ax.annotate(r.name, (r.intensity, r.achieved), textcoords="offset points", xytext=(4, 4),
                            fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(f"roofline: {source}")
    ax.legend(fontsize=8, loc="lower right")
    return ax
