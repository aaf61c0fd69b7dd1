"""The CUDA emulator's process-wide settings: its thread order (schedule) and the count
of its reports, for minitorch's own kernels and students' RawKernels together.

The emulator runs the threads of a block one after another until each reaches a
``__syncthreads()`` (or a warp function, or the end); the schedule is the order in which
they take turns: ``"forward"`` (thread 0 first), ``"reverse"`` or ``"random:SEED"``; or
``"warps"`` / ``"warps-reverse"``, where the warps take turns instead, each running
until it waits at ``__syncthreads()`` or ends. A kernel that is missing a barrier gets
different answers under different schedules.

Every RawKernel library has its own copy of the emulator, so a launch first tells it
the schedule in effect (see ``emulated_backend.py``); minitorch's own kernels follow
``_C._cuda_set_emulator_schedule`` where the extension has it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re

from .. import _C

_SPEC = re.compile(r"forward|reverse|random:(\d+)|warps|warps-reverse")
_current: str | None = None  # set by emulator_schedule when _C cannot hold it
_raw_reports = 0  # reports made during RawKernel launches (each library counts its own)


def _check_spec(spec: str) -> str:
    match = _SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if match is None or (match.group(1) is not None and int(match.group(1)) >= 2**64):
        raise ValueError(f"emulator_schedule: expected 'forward', 'reverse', 'random:SEED' "
                         f"(SEED a non-negative integer below 2**64), 'warps' or 'warps-reverse', got {spec!r}")
    return spec


def _require_emulator() -> None:
    if not _C._cuda_is_emulated():
        where = ("this minitorch runs CUDA kernels on a real GPU, which has no thread schedule"
                 if _C._cuda_init() else "the CUDA emulator is off")
        raise RuntimeError(f"emulator_schedule: {where}; the schedule exists only in the emulator "
                           "(switch it on with minitorch.cuda.emulate() when there is no GPU)")


def get_emulator_schedule() -> str | None:
    """The thread order the emulator uses now ("forward", "reverse", "random:SEED", "warps" or
    "warps-reverse").

    None unless the emulator is on (:func:`minitorch.cuda.emulate`). The default comes
    from the environment variable ``MINITORCH_EMU_SCHEDULE`` ("forward" when it is unset
    or not understood).
    """
    if not _C._cuda_is_emulated():
        return None
    if hasattr(_C, "_cuda_get_emulator_schedule"):
        return _C._cuda_get_emulator_schedule()
    if _current is not None:
        return _current
    env = os.environ.get("MINITORCH_EMU_SCHEDULE", "")
    return env if _SPEC.fullmatch(env) else "forward"


def _set(spec: str) -> None:
    global _current
    _current = spec
    if hasattr(_C, "_cuda_set_emulator_schedule"):
        _C._cuda_set_emulator_schedule(spec)


class emulator_schedule(contextlib.ContextDecorator):  # noqa: N801  (used like a function)
    """Runs every emulated kernel launch inside it with the given thread order.

    Covers RawKernels and, where the extension supports it, minitorch's own kernels;
    the previous order comes back on exit. Also works as a decorator.

    Example::

        with minitorch.cuda.emulator_schedule("reverse"):
            kernel((1,), (64,), (x, y))   # threads run 63, 62, ..., 0 between barriers

    Args:
        spec: "forward", "reverse", "random:SEED", "warps" or "warps-reverse".

    Raises:
        ValueError: for any other spec.
        RuntimeError: on entry, when kernels run on a real GPU (there is no schedule).
    """

    def __init__(self, spec: str) -> None:
        self.spec = _check_spec(spec)
        self._saved: list[str] = []  # a stack: the same decorator may be re-entered

    def __enter__(self) -> "emulator_schedule":
        _require_emulator()
        self._saved.append(get_emulator_schedule())
        _set(self.spec)
        return self

    def __exit__(self, *exc) -> None:
        _set(self._saved.pop())


def count_reports(n: int) -> None:
    """Adds the reports one RawKernel launch made (emulated_backend.py)."""
    global _raw_reports
    _raw_reports += n


def emulator_diagnostics() -> int:
    """How many problems the CUDA emulator has reported so far in this process.

    It reports (on stderr) threads of a block waiting at different ``__syncthreads()``,
    a barrier some threads exited before, deadlocks, shuffles from lanes not taking part;
    counted for minitorch's kernels and every RawKernel launch. Always 0 on a real GPU.
    """
    builtin = _C._cuda_emulator_diagnostics() if hasattr(_C, "_cuda_emulator_diagnostics") else 0
    return int(builtin) + _raw_reports


# ------------------------------------------------------------------ counters

COUNTER_FIELDS = ("global_load_requests", "global_store_requests", "global_load_sectors", "global_store_sectors",
                  "global_load_bytes", "global_store_bytes", "shared_load_requests", "shared_store_requests",
                  "shared_bank_conflicts", "divergent_branches", "barriers", "atomics", "atomic_conflicts",
                  "blocks", "warps")  # the order of Totals in cuda/emu/counters_runtime.h


@dataclasses.dataclass(frozen=True)
class KernelCounters:
    """What one RawKernel launch did with memory, counted by the CUDA emulator per warp.

    A warp is 32 consecutive threads of a block (thread index x first, then y, then z).
    One *request* is one warp-level load or store instruction: the lanes of a warp that
    execute the same instruction together. A request to global memory (the tensors the
    kernel gets) moves whole 32-byte *sectors*; a coalesced float load of 32 lanes needs
    4 sectors (128 bytes), a stride-32 one 32 sectors. See docs/raw_kernels.md for the
    rules and what the counts leave out (caches, timing).

    Attributes:
        kernel, grid, block: the launch.
        global_load_requests, global_store_requests: warp-level instructions that read or
            wrote global memory.
        global_load_sectors, global_store_sectors: distinct 32-byte sectors each of those
            touched, added up.
        global_load_bytes, global_store_bytes: the bytes the threads asked for.
        shared_load_requests, shared_store_requests: warp-level shared memory instructions.
        shared_bank_conflicts: extra wavefronts (passes through the 32 banks of 4 bytes)
            that conflicts cost: an n-way conflict (n different words in one bank) costs
            n - 1; lanes reading the same word share it.
        divergent_branches: branch instances after which the lanes of a warp went different
            ways (each warp's n-th pass through the branch counts once).
        barriers: ``__syncthreads()`` passed, added over the blocks.
        atomics: atomic operations (one per thread that called one).
        atomic_conflicts: lanes of a warp-level atomic that hit an address another lane
            of the same instruction hit (the GPU serialises them).
        blocks, warps: how many ran.
    """

    kernel: str
    grid: tuple
    block: tuple
    global_load_requests: int = 0
    global_store_requests: int = 0
    global_load_sectors: int = 0
    global_store_sectors: int = 0
    global_load_bytes: int = 0
    global_store_bytes: int = 0
    shared_load_requests: int = 0
    shared_store_requests: int = 0
    shared_bank_conflicts: int = 0
    divergent_branches: int = 0
    barriers: int = 0
    atomics: int = 0
    atomic_conflicts: int = 0
    blocks: int = 0
    warps: int = 0

    @property
    def global_sectors(self) -> int:
        return self.global_load_sectors + self.global_store_sectors

    @property
    def coalescing_efficiency(self) -> float:
        """Bytes the threads asked for / bytes the sectors moved (1.0: perfectly coalesced;
        above 1 when lanes read the same address, which one sector serves). NaN without
        global accesses."""
        moved = 32 * self.global_sectors
        return (self.global_load_bytes + self.global_store_bytes) / moved if moved else float("nan")

    @property
    def global_bytes_moved(self) -> int:
        """Bytes between DRAM and the chip if no cache helped: 32 per sector."""
        return 32 * self.global_sectors

    def as_dict(self) -> dict:
        """The counts by name, with ``coalescing_efficiency`` (what the profiler's kernel
        records carry as ``counters``)."""
        d = {f: getattr(self, f) for f in COUNTER_FIELDS}
        d["coalescing_efficiency"] = self.coalescing_efficiency
        return d

    def __str__(self) -> str:
        eff = self.coalescing_efficiency
        lines = [f"{self.kernel} grid={self.grid} block={self.block}: {self.blocks} block(s), {self.warps} warp(s)",
                 f"  global loads : {self.global_load_requests} requests, {self.global_load_sectors} sectors, "
                 f"{self.global_load_bytes} bytes asked",
                 f"  global stores: {self.global_store_requests} requests, {self.global_store_sectors} sectors, "
                 f"{self.global_store_bytes} bytes asked",
                 f"  coalescing efficiency: {eff:.1%}" if eff == eff else "  coalescing efficiency: -",
                 f"  shared: {self.shared_load_requests} loads, {self.shared_store_requests} stores, "
                 f"{self.shared_bank_conflicts} bank conflict(s) (extra wavefronts)",
                 f"  divergent branches: {self.divergent_branches}; barriers: {self.barriers}; "
                 f"atomics: {self.atomics} ({self.atomic_conflicts} same-address within a warp)"]
        return "\n".join(lines)


_counting_depth = 0  # open emulator_counters() blocks
_collectors: list[list] = []


def counting_enabled() -> bool:
    """Whether RawKernel launches are counted now: inside :class:`emulator_counters`, or a
    ``minitorch.profiler.profile`` that records CUDA kernels, in the emulator."""
    return _counting_depth > 0 or (bool(_C._profiler_kernels_enabled()) and bool(_C._cuda_is_emulated()))


def record_counters(counters: "KernelCounters") -> None:
    """Hands one launch's counters to every open :class:`emulator_counters` (emulated_backend)."""
    for launches in _collectors:
        launches.append(counters)


class emulator_counters(contextlib.ContextDecorator):  # noqa: N801  (used like a function)
    """Counts what every RawKernel launch inside it does with memory, in the CUDA emulator.

    Inside the block each launch of a students' kernel runs in a *counting* build of its
    library (compiled once more, with every memory access and branch instrumented: slower,
    so off by default). ``launches`` lists a :class:`KernelCounters` per launch; the
    kernel's ``last_counters`` holds its latest. The profiler and ``check_kernel`` switch
    counting on by themselves. minitorch's own kernels are not counted.

    Example::

        with minitorch.cuda.emulator_counters() as counted:
            copy[n // 256, 256](x, y, numpy.int32(n))
        c = counted.launches[0]
        print(c.global_load_requests, c.global_load_sectors, c.coalescing_efficiency)

    Raises:
        RuntimeError: on entry, when kernels run on a real GPU (use Nsight Compute there).
    """

    def __init__(self) -> None:
        self.launches: list[KernelCounters] = []

    def __enter__(self) -> "emulator_counters":
        global _counting_depth
        if not _C._cuda_is_emulated():
            where = ("kernels run on a real GPU here" if _C._cuda_init() else "the CUDA emulator is off")
            raise RuntimeError(f"emulator_counters: {where}; the counters exist only in the emulator (switch it on "
                               "with minitorch.cuda.emulate(); on a GPU, Nsight Compute measures the same things)")
        self.launches = []
        _collectors.append(self.launches)
        _counting_depth += 1
        return self

    def __exit__(self, *exc) -> None:
        global _counting_depth
        _counting_depth -= 1
        for i, launches in enumerate(_collectors):
            if launches is self.launches:
                del _collectors[i]
                break
