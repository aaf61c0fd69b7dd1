"""``minitorch.cuda``: the GPU, when there is one.

    if minitorch.cuda.is_available():
        model.to("cuda"); x = x.cuda()

In a build made with ``MINITORCH_CUDA_EMULATE=ON`` the device "cuda" exists on any
machine and runs minitorch's own CUDA kernels on the CPU (``is_emulated()`` says so;
cuBLAS is replaced by our tiled kernel there).

Your own kernels: ``RawKernel`` / ``RawModule`` (CUDA C source compiled at run time,
see docs/raw_kernels.md), and in the emulated build ``emulator_schedule`` to change the
order in which the threads of a block run.

Streams, events and pinned memory (``Stream``, ``Event``, ``current_stream``,
``stream(...)``; ``Tensor.pin_memory()``, ``x.to("cuda", non_blocking=True)``): see
cuda_streams.py.
"""
from __future__ import annotations

from . import _C
from .cuda_kernels import (  # noqa: F401  (re-exported)
    CompileError,
    RawKernel,
    RawModule,
    emulator_diagnostics,
    emulator_schedule,
    get_emulator_schedule,
)
from .cuda_streams import Event, Stream, current_stream, default_stream, stream  # noqa: F401

OutOfMemoryError = _C.CudaOutOfMemoryError  # a RuntimeError and a MemoryError


def is_compiled() -> bool:
    """True when this build of minitorch contains the CUDA backend (real or emulated)."""
    return bool(_C._cuda_compiled)


def is_emulated() -> bool:
    """True in the emulated build: "cuda" tensors live in host memory, kernels run on the CPU."""
    return bool(_C._cuda_is_emulated())


def is_available() -> bool:
    """True when tensors can be put on ``"cuda"``: a GPU with a working driver, or the emulated build."""
    return bool(_C._cuda_init())


def device_count() -> int:
    """Number of usable CUDA devices (0 without a driver or GPU, or in a CPU-only build)."""
    return int(_C._cuda_device_count())


def synchronize() -> None:
    """Waits until every queued kernel has finished (call it before reading a timer)."""
    _C._cuda_synchronize()


def memory_allocated() -> int:
    """Bytes of GPU memory held by live tensors."""
    return int(_C._cuda_memory_allocated())


def max_memory_allocated() -> int:
    """The peak of :func:`memory_allocated` since the program started."""
    return int(_C._cuda_max_memory_allocated())


def memory_reserved() -> int:
    """Bytes held by the caching allocator (live tensors plus cached free blocks)."""
    return int(_C._cuda_memory_allocated()) + int(_C._cuda_memory_cached())


def empty_cache() -> None:
    """Returns cached, unused GPU memory to the driver."""
    _C._cuda_empty_cache()
