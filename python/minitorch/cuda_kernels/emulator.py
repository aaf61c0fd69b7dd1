"""The CUDA emulator's process-wide settings: its thread order (schedule) and the count
of its reports, for minitorch's own kernels and students' RawKernels together.

The emulator runs the threads of a block one after another until each reaches a
``__syncthreads()`` (or a warp function, or the end); the schedule is the order in which
they take turns: ``"forward"`` (thread 0 first), ``"reverse"`` or ``"random:SEED"``. A
kernel that is missing a barrier gets different answers under different schedules.

Every RawKernel library has its own copy of the emulator, so a launch first tells it
the schedule in effect (see ``emulated_backend.py``); minitorch's own kernels follow
``_C._cuda_set_emulator_schedule`` where the extension has it.
"""
from __future__ import annotations

import contextlib
import os
import re

from .. import _C

_SPEC = re.compile(r"forward|reverse|random:(\d+)")
_current: str | None = None  # set by emulator_schedule when _C cannot hold it
_raw_reports = 0  # reports made during RawKernel launches (each library counts its own)


def _check_spec(spec: str) -> str:
    match = _SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if match is None or (match.group(1) is not None and int(match.group(1)) >= 2**64):
        raise ValueError(f"emulator_schedule: expected 'forward', 'reverse' or 'random:SEED' "
                         f"(SEED a non-negative integer below 2**64), got {spec!r}")
    return spec


def _require_emulator() -> None:
    if not _C._cuda_is_emulated():
        where = ("this minitorch runs CUDA kernels on a real GPU, which has no thread schedule"
                 if _C._cuda_init() else "the CUDA emulator is off")
        raise RuntimeError(f"emulator_schedule: {where}; the schedule exists only in the emulator "
                           "(switch it on with minitorch.cuda.emulate() when there is no GPU)")


def get_emulator_schedule() -> str | None:
    """The thread order the emulator uses now ("forward", "reverse" or "random:SEED").

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
        spec: "forward", "reverse" or "random:SEED".

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
