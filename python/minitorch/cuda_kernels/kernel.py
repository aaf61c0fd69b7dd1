"""RawKernel and RawModule: CUDA C source written by a student, compiled at run time and
launched on minitorch's "cuda" tensors.

This file holds what every backend shares: the two launch spellings, the checks of a
launch configuration (done before anything runs, with CUDA's limits), and the checks
of tensor arguments. A backend compiles and launches; see ``Backend`` below.
"""
from __future__ import annotations

import operator
import time
from typing import Any, Callable, Protocol, Sequence

from .. import _C
from .source import find_kernels

Dims = tuple[int, int, int]

# CUDA's limits on every current GPU.
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
MAX_DYNAMIC_SHARED = 48 * 1024  # without cudaFuncSetAttribute, which RawKernel does not offer


class CompileError(RuntimeError):
    """A RawKernel's source did not compile; the message holds the compiler's log.

    Attributes:
        log: the compiler's output alone.
    """

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


class Module(Protocol):
    """What a backend's compiled source offers."""

    def launch(self, name: str, grid: Dims, block: Dims, shared_mem: int, args: tuple) -> None:
        """Runs kernel `name` (one of the names given to compile) and waits for it.

        grid, block and shared_mem have passed ``check_launch``. args are the user's
        values; the module converts them (``tensor_pointer`` for tensors) and raises
        TypeError/ValueError naming the argument for any it cannot pass, RuntimeError
        when the launch fails.
        """


class Backend(Protocol):
    """Compiles CUDA C source into a Module: emulated_backend.py with the host C++ compiler,
    nvrtc_backend.py with NVRTC for a real GPU."""

    def compile(self, source: str, options: tuple[str, ...], names: Sequence[str], filename: str) -> Module:
        """Compiles `source` so that each of `names` (kernel names as the source spells
        them, e.g. "saxpy" or "scale<float>") can be launched. Messages name the file
        `filename`. Raises CompileError with the compiler's log."""


def _backend() -> Backend:
    if _C._cuda_is_emulated():
        from .emulated_backend import EmulatedBackend

        return EmulatedBackend()
    if not _C._cuda_init():
        raise RuntimeError(f"RawKernel: {_C._cuda_unavailable_reason()}")
    from .nvrtc_backend import NvrtcBackend

    return NvrtcBackend()


def _kernel_names_message(source: str) -> str:
    names = [k.name + ("<...>" if k.is_template else "") for k in find_kernels(source)]
    return "it defines: " + ", ".join(names) if names else "it defines no __global__ function"


class RawKernel:
    """A CUDA kernel from source, compiled when created (and cached on disk).

    Launch it CuPy's way, ``k(grid, block, args, shared_mem=0)``, or Numba's,
    ``k[grid, block](*args)`` or ``k[grid, block, 0, shared_mem]``. grid and block are
    an int or a tuple of up to three ints. Tensor arguments must be contiguous "cuda"
    tensors (the kernel gets ``t.data_ptr()``); a Python int is passed as a 64-bit
    integer and a float as a double, as in CuPy, so give a 32-bit parameter a
    ``numpy.int32`` or ``numpy.float32``.

    Example::

        saxpy = minitorch.cuda.RawKernel(r'''
        extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i] + y[i];
        }''', "saxpy")
        saxpy[(n + 255) // 256, 256](numpy.float32(2.0), x, y, numpy.int32(n))

    Args:
        code: CUDA C source defining a ``__global__`` function called `name`.
        name: the kernel's name as the source spells it (with template arguments for a
            template kernel, e.g. ``"scale<float>"``).
        options: compiler options: ``-DNAME=VALUE``, ``-UNAME``, ``-Idir``; GPU code
            generation options (``-arch=...``, ``--use_fast_math``...) are accepted and
            mean nothing in the emulator.

    Raises:
        CompileError: the source does not compile (the message has the compiler's log).
        ValueError: the source has no ``__global__`` function `name`.
    """

    def __init__(self, code: str, name: str, options: Sequence[str] = ()) -> None:
        base = name.split("<")[0].strip()
        if base not in {k.name for k in find_kernels(code)}:
            raise ValueError(f"RawKernel: no __global__ function named '{base}' in the source; "
                             f"{_kernel_names_message(code)}")
        module = _backend().compile(code, tuple(options), [name], f"{base}.cu")
        self._init(code, name, tuple(options), module)

    def _init(self, code: str, name: str, options: tuple[str, ...], module: Module) -> None:
        self.code, self.name, self.options, self._module = code, name, options, module

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], *, shared_mem: int = 0) -> None:
        """Launches the kernel (CuPy's spelling); returns when it has finished."""
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{self.name}: args must be a tuple of the kernel's arguments, "
                            f"got {type(args).__name__} (write (x,) for one argument)")
        self._launch(grid, block, shared_mem, tuple(args))

    def __getitem__(self, config: Any) -> "_ConfiguredKernel":
        """``k[grid, block]`` or ``k[grid, block, stream, shared_mem]`` (Numba's spelling)."""
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError(f"{self.name}: launch as kernel[grid, block] or kernel[grid, block, stream, shared_mem], "
                            f"got kernel[{config!r}]")
        grid, block, stream, shared_mem = (*config, 0, 0)[:4]
        if stream not in (0, None):
            raise ValueError(f"{self.name}: only the default stream (0 or None) is supported, got {stream!r}")
        return _ConfiguredKernel(self, grid, block, shared_mem)

    last_counters = None  # the KernelCounters of the latest launch made with counting on

    def _launch(self, grid: Any, block: Any, shared_mem: Any, args: tuple) -> None:
        grid, block, shared_mem = check_launch(self.name, grid, block, shared_mem)
        from . import emulator

        # Counted (emulator_counters, a profile, check_kernel) only by the emulator's modules.
        count = emulator.counting_enabled() and hasattr(self._module, "counts")

        def run():
            if not count:
                return self._module.launch(self.name, grid, block, shared_mem, args)
            self.last_counters = self._module.launch(self.name, grid, block, shared_mem, args, count=True)
            if self.last_counters is not None:  # None: this compiler cannot build the counting library
                emulator.record_counters(self.last_counters)
            return self.last_counters

        if _C._profiler_kernels_enabled():  # a profile records kernels: this launch is one
            _profiled_launch(run, self.name, grid, block, shared_mem, args)
        else:
            run()

    def __repr__(self) -> str:
        return f"<minitorch.cuda.RawKernel {self.name}>"


class _ConfiguredKernel:
    """``kernel[grid, block]``: call it with the kernel's arguments."""

    def __init__(self, kernel: RawKernel, grid: Any, block: Any, shared_mem: Any) -> None:
        self._kernel, self._config = kernel, (grid, block, shared_mem)

    def __call__(self, *args: Any) -> None:
        self._kernel._launch(*self._config, args)


class RawModule:
    """Several kernels in one CUDA source, compiled once; ``get_function`` picks one.

    Example::

        module = minitorch.cuda.RawModule(code=source)
        scale = module.get_function("scale")

    Args:
        code: CUDA C source.
        options: as for RawKernel.
        name_expressions: instances of template kernels to make launchable, e.g.
            ``("scale<float>",)``; every kernel that is not a template is launchable.
    """

    def __init__(self, code: str, options: Sequence[str] = (), *, name_expressions: Sequence[str] = ()) -> None:
        kernels = find_kernels(code)
        self._names = [k.name for k in kernels if not k.is_template] + list(name_expressions)
        self.code, self.options = code, tuple(options)
        self._module = _backend().compile(code, self.options, self._names, "raw_module.cu")

    def get_function(self, name: str) -> RawKernel:
        """The kernel `name` (a template's as one of ``name_expressions``)."""
        if name not in self._names:
            templates = [k.name for k in find_kernels(self.code) if k.is_template]
            hint = (f" ('{name.split('<')[0]}' is a template: list its instances in name_expressions)"
                    if name.split("<")[0] in templates else "")
            raise ValueError(f"RawModule.get_function: no kernel '{name}'{hint}; "
                             f"launchable: {', '.join(self._names) or 'none'}")
        kernel = RawKernel.__new__(RawKernel)
        kernel._init(self.code, name, self.options, self._module)
        return kernel


def _profiled_launch(run: Callable[[], Any], name: str, grid: Dims, block: Dims, shared_mem: int,
                     args: tuple) -> None:
    """Runs a launch (``run()``) while a profile records kernels: timed (CUDA events on a
    GPU, the host's clock in the emulator, where the kernel runs inside the launch) and
    recorded as a kernel named after it, with its bytes estimated as every tensor argument
    read or written once. When ``run()`` returns the emulator's counters of the launch (a
    dict, or an object with ``as_dict()``), they go on the record as its ``counters``."""
    from ..profiler import _record_raw_launch

    on_gpu = not _C._cuda_is_emulated()
    if on_gpu:
        from ..cuda_streams import Event

        start, end = Event(enable_timing=True), Event(enable_timing=True)
        start.record()
    t0 = time.perf_counter()
    counters = run()
    duration_us = (time.perf_counter() - t0) * 1e6
    if on_gpu:
        end.record()
        end.synchronize()
        duration_us = start.elapsed_time(end) * 1e3
    nbytes = sum(a.numel() * a.element_size() for a in args if isinstance(a, _C.Tensor))
    if counters is not None and not isinstance(counters, dict):
        counters = counters.as_dict() if hasattr(counters, "as_dict") else None
    _record_raw_launch(name, grid, block, shared_mem, duration_us, nbytes, counters)


def _dims(kernel: str, what: str, value: Any, limits: Dims) -> Dims:
    items = value if isinstance(value, (tuple, list)) else (value,)
    try:
        if not 1 <= len(items) <= 3 or any(isinstance(v, bool) for v in items):
            raise TypeError
        dims = [operator.index(v) for v in items]
    except TypeError:
        raise TypeError(f"{kernel}: {what} must be an int or a tuple of up to 3 ints, got {value!r}") from None
    dims += [1] * (3 - len(dims))
    for axis, size, limit in zip("xyz", dims, limits):
        if size < 1:
            raise ValueError(f"{kernel}: {what} {tuple(dims)} has {what}.{axis} = {size}; every dimension must be "
                             f"at least 1 (a launch with no blocks or threads is an error in CUDA)")
        if size > limit:
            raise ValueError(f"{kernel}: {what}.{axis} = {size} is over CUDA's limit of {limit}")
    return dims[0], dims[1], dims[2]


def check_launch(kernel: str, grid: Any, block: Any, shared_mem: Any) -> tuple[Dims, Dims, int]:
    """The launch configuration as three-int tuples, or the error CUDA would give for it."""
    grid = _dims(kernel, "grid", grid, MAX_GRID)
    block = _dims(kernel, "block", block, MAX_BLOCK)
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise ValueError(f"{kernel}: a block of {block[0]}x{block[1]}x{block[2]} = {threads} threads is over "
                         f"CUDA's limit of {MAX_THREADS_PER_BLOCK} threads per block")
    try:
        shared_mem = operator.index(shared_mem)
    except TypeError:
        raise TypeError(f"{kernel}: shared_mem must be an int (bytes), got {shared_mem!r}") from None
    if not 0 <= shared_mem <= MAX_DYNAMIC_SHARED:
        raise ValueError(f"{kernel}: shared_mem = {shared_mem} bytes of dynamic shared memory; a block may have "
                         f"0 to {MAX_DYNAMIC_SHARED} (48 KiB, CUDA's default limit)")
    return grid, block, shared_mem


def tensor_pointer(kernel: str, index: int, tensor: _C.Tensor) -> int:
    """The device address a kernel gets for a tensor argument, which must be a
    contiguous "cuda" tensor (data_ptr() already includes the storage offset)."""
    if tensor.device.type != "cuda":
        raise ValueError(f"{kernel}: argument {index} is a tensor on '{tensor.device}'; kernels read device "
                         f"memory: pass x.cuda()")
    if not tensor.is_contiguous():
        raise ValueError(f"{kernel}: argument {index} is a non-contiguous tensor (a view such as x.T or x[:, ::2]); "
                         f"the kernel would read the wrong elements: pass x.contiguous()")
    return int(tensor.data_ptr())
