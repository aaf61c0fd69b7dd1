"""``minitorch.cuda``: the GPU, when there is one.

    if minitorch.cuda.is_available():
        model.to("cuda"); x = x.cuda()

Without a GPU, every build has the CUDA emulator: switched on (``emulate()``, or the
environment variable ``MINITORCH_EMULATE_CUDA=1`` before Python starts), the device
"cuda" exists on any machine and runs minitorch's own CUDA kernels on the CPU
(``is_emulated()`` says so; cuBLAS is replaced by our tiled kernel there). It is off by
default, so that ``is_available()`` is False without a GPU and nobody trains on it by
accident: it is meant for learning and testing kernels, and it is slow.

Your own kernels: ``RawKernel`` / ``RawModule`` (CUDA C source compiled at run time,
see docs/raw_kernels.md), and with the emulator ``emulator_schedule`` to change the
order in which the threads of a block run, and ``emulator_counters`` to count what they
do with memory (requests, sectors, bank conflicts, divergent branches).

The device and its memory (PyTorch's names): ``get_device_properties`` (with minitorch's
``peak_flops`` and ``peak_bandwidth``), ``get_device_name``, ``get_device_capability``,
``mem_get_info``, ``memory_allocated`` / ``max_memory_allocated`` / ``memory_reserved`` /
``reset_peak_memory_stats`` / ``memory_stats`` / ``memory_summary``, and
``set_per_process_memory_fraction`` (a smaller GPU, to meet out-of-memory on purpose):
see cuda_device.py, cuda_memory.py and docs/memory.md.

Streams, events and pinned memory (``Stream``, ``Event``, ``current_stream``,
``stream(...)``; ``Tensor.pin_memory()``, ``x.to("cuda", non_blocking=True)``): see
cuda_streams.py.
"""
from __future__ import annotations

import os

from . import _C
from .cuda_kernels import (  # noqa: F401  (re-exported)
    CompileError,
    RawKernel,
    RawModule,
    emulator_diagnostics,
    emulator_schedule,
    get_emulator_schedule,
    KernelCounters,
    emulator_counters,
)
from .cuda_streams import Event, Stream, current_stream, default_stream, stream  # noqa: F401

from .cuda_device import get_device_capability, get_device_name, get_device_properties, mem_get_info  # noqa: F401
from .cuda_memory import (  # noqa: F401
    empty_cache,
    get_per_process_memory_fraction,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)

# minitorch.OutOfMemoryError, as torch.cuda.OutOfMemoryError is torch.OutOfMemoryError:
# a RuntimeError and a MemoryError.
OutOfMemoryError = _C.OutOfMemoryError


def is_compiled() -> bool:
    """True when this build of minitorch contains the GPU backend (nvcc was found when it
    was built). The emulator (:func:`emulate`) is in every build."""
    return bool(_C._cuda_compiled)


def is_emulated() -> bool:
    """True while the emulator serves "cuda": its tensors live in host memory and its
    kernels run on the CPU (see :func:`emulate`)."""
    return bool(_C._cuda_is_emulated())


def is_available() -> bool:
    """True when tensors can be put on ``"cuda"``: a GPU with a working driver, or the
    emulator once switched on (:func:`emulate`)."""
    return bool(_C._cuda_init())


def emulate(enabled: bool = True) -> None:
    """Switches the CUDA emulator on (or off): the device "cuda" then runs minitorch's own
    CUDA kernels, and your ``RawKernel`` kernels, on the CPU of any machine.

    Meant for learning and testing CUDA kernels without a GPU (``minitorch.testing.check_kernel``
    and notebook 06 switch it on when there is no GPU); it is far slower than the CPU
    device, so do not train on it. The same as starting Python with the environment
    variable ``MINITORCH_EMULATE_CUDA=1``.

    A process has one "cuda": switch the emulator on before the first "cuda" tensor.
    Once it has been on, it stays on.

    Raises:
        TypeError: `enabled` is not a bool.
        RuntimeError: "cuda" already runs on a GPU in this process; or switching off an
            emulator that has been on; or a build without the emulator.
    """
    if not isinstance(enabled, bool):
        raise TypeError(f"emulate: enabled must be a bool, got {type(enabled).__name__}")
    _C._cuda_set_emulated(enabled)


def _emulate_from_environment() -> None:
    value = os.environ.get("MINITORCH_EMULATE_CUDA", "").strip().lower()
    if value in ("", "0", "false", "off", "no"):
        return
    if value not in ("1", "true", "on", "yes"):
        import warnings

        warnings.warn(f"MINITORCH_EMULATE_CUDA={value!r} is not understood (use 1 or 0); the CUDA emulator stays off",
                      RuntimeWarning, stacklevel=3)
        return
    emulate(True)


_emulate_from_environment()


def device_count() -> int:
    """Number of usable CUDA devices: 0 without a driver or GPU (or in a build without the GPU
    backend), 1 with the emulator on."""
    return int(_C._cuda_device_count())


def synchronize() -> None:
    """Waits until every queued kernel has finished (call it before reading a timer)."""
    _C._cuda_synchronize()


def get_rng_state(device="cuda"):
    """The state of the "cuda" generator as a uint8 tensor (16 bytes: its seed and how far
    fills have used its stream, little-endian), for :func:`set_rng_state`."""
    import numpy as np

    state = _C._cuda_rng_state()
    if state is None:
        raise RuntimeError(f"get_rng_state: CUDA is not available ({_C._cuda_unavailable_reason()})")
    return _C._from_numpy_copy(np.array(state, dtype="<u8").view(np.uint8), _C.dtype.uint8, None)


def set_rng_state(new_state, device="cuda") -> None:
    """Puts the "cuda" generator back at a state from :func:`get_rng_state`."""
    import numpy as np

    if not isinstance(new_state, _C.Tensor) or new_state.dtype != _C.dtype.uint8 or tuple(new_state.shape) != (16,):
        raise TypeError("set_rng_state: expected the uint8 tensor of 16 bytes that get_rng_state returns")
    if _C._cuda_rng_state() is None:
        raise RuntimeError(f"set_rng_state: CUDA is not available ({_C._cuda_unavailable_reason()})")
    seed, offset = (int(v) for v in np.frombuffer(new_state.cpu().numpy().tobytes(), dtype="<u8"))
    _C._cuda_set_rng_state(seed, offset)


# ---- the device and generator calls scripts make (PyTorch's names) ----
# minitorch drives one CUDA device, cuda:0: the calls that choose a device accept it (and
# refuse others, naming why); the generator calls act on the "cuda" generator alone, and
# are silently ignored where there is no CUDA, as PyTorch's are.

def _require(op: str) -> None:
    if not is_available():
        raise RuntimeError(f"{op}: {_C._cuda_unavailable_reason()}")


def init() -> None:
    """Initializes CUDA now rather than at the first "cuda" tensor (RuntimeError without it)."""
    _require("init")


def is_initialized() -> bool:
    """Whether CUDA has been initialized (here: whether it is usable)."""
    return is_available()


def current_device() -> int:
    """The index of the current device: 0, minitorch's one CUDA device."""
    _require("current_device")
    return 0


def set_device(device) -> None:
    """Makes ``device`` current: cuda:0 (or a negative index: no change) is accepted; minitorch
    uses one CUDA device, so another index is a ValueError."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    from .cuda_device import _check_device
    _check_device(device, "set_device")


class device:
    """``with minitorch.cuda.device(0): ...``: runs the block with that device current
    (cuda:0, the one minitorch uses; None does nothing)."""

    def __init__(self, device) -> None:
        if device is not None:
            set_device(device)
        self.idx = -1 if device is None else 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


class device_of(device):
    """``device(obj.device)`` for a CUDA tensor; does nothing for a CPU one."""

    def __init__(self, obj) -> None:
        super().__init__(obj.device if obj.device.type == "cuda" else None)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 runs natively: compute capability 8.0 or newer (and the emulator,
    which computes it in software exactly)."""
    if not is_available():
        return False
    return is_emulated() or get_device_capability()[0] >= 8


def manual_seed(seed: int) -> None:
    """Seeds the "cuda" generator (ignored without CUDA). ``minitorch.manual_seed`` seeds every
    device's generator at once."""
    from .data.generator import _check_seed
    seed = _check_seed(int(seed))
    if is_available():
        _C._cuda_set_rng_state(seed, 0)


def manual_seed_all(seed: int) -> None:
    """Seeds the generator of every CUDA device: here the one, as :func:`manual_seed`."""
    manual_seed(seed)


def seed() -> None:
    """Seeds the "cuda" generator from the operating system's entropy (ignored without CUDA)."""
    manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)


def seed_all() -> None:
    seed()


def initial_seed() -> int:
    """The seed the "cuda" generator was last seeded with."""
    _require("initial_seed")
    return int(_C._cuda_rng_state()[0])


def get_rng_state_all() -> list:
    """One state per CUDA device (:func:`get_rng_state`): a list of one here, empty without CUDA."""
    return [get_rng_state()] if is_available() else []


def set_rng_state_all(new_states) -> None:
    """Restores the states of :func:`get_rng_state_all`."""
    for state in new_states:
        set_rng_state(state)


def memory_cached(device=None) -> int:
    """Deprecated name of :func:`memory_reserved` (a FutureWarning, as PyTorch)."""
    import warnings
    warnings.warn("torch.cuda.memory_cached has been renamed to torch.cuda.memory_reserved", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of :func:`max_memory_reserved`."""
    import warnings
    warnings.warn("torch.cuda.max_memory_cached has been renamed to torch.cuda.max_memory_reserved", FutureWarning,
                  stacklevel=2)
    return max_memory_reserved(device)


def ipc_collect() -> None:
    """Frees memory that other processes were sent through IPC: minitorch shares none."""
