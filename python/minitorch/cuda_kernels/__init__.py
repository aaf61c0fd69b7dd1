"""Students' own CUDA kernels on minitorch tensors (``minitorch.cuda.RawKernel``).

- ``kernel.py``: RawKernel and RawModule, launch checks, the backend interface;
- ``emulated_backend.py``: the emulator's backend (host C++ compiler + cuda/emu);
- ``emulator.py``: the emulator's thread schedule, report count and memory counters;
- ``source.py``: what is read from, and rewritten in, the student's source.

See docs/raw_kernels.md.
"""
from .emulator import (KernelCounters, emulator_counters, emulator_diagnostics, emulator_schedule,
                       get_emulator_schedule)
from .kernel import CompileError, RawKernel, RawModule

__all__ = ["CompileError", "RawKernel", "RawModule", "emulator_diagnostics", "emulator_schedule",
           "get_emulator_schedule", "KernelCounters", "emulator_counters"]
