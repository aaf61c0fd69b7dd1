"""``minitorch.backends``: which kernels run and in what precision.

Kernel choices, for the lectures' comparisons (the defaults are the fast ones):

    minitorch.backends.cpu.matmul = "naive"            # "naive" | "blocked" | "blas" (default)
    minitorch.backends.cuda.matmul.kernel = "tiled"    # "naive" | "tiled" | "cublas" (default on a GPU)
    with minitorch.backends.cuda.use_matmul("naive"):  # the same, for one block
        c = a @ b
    minitorch.backends.cpu.get_cpu_capability()        # "AVX2": what the SIMD math runs on
    minitorch.backends.cpu.conv_algorithm = "im2col"   # "auto" (default) | "direct" | "im2col"
    with minitorch.backends.cpu.use_conv_algorithm("direct"): ...

TF32 on the GPU's tensor cores, PyTorch's switches and defaults:

    minitorch.backends.cuda.matmul.allow_tf32 = True   # matmul, Linear, bmm (default False)
    minitorch.backends.cudnn.allow_tf32 = False        # convolutions (default True)
    minitorch.set_float32_matmul_precision("high")     # the same as matmul.allow_tf32 = True

TF32 keeps float32's range but rounds the GEMM's inputs to 10 mantissa bits (float32 has
23); the sums stay float32. Only cuBLAS on a GPU uses it: the CPU, the teaching kernels
("naive", "tiled") and the emulator always compute in full float32.
"""
from __future__ import annotations

import contextlib
import glob
import os

from . import _C


class _MatmulChoice:
    """One device's matmul choice: the ``matmul`` property and ``use_matmul(name)``."""

    def __init__(self, get, set_, names: str):
        self._get, self._set = get, set_
        self.__doc__ = f"Kernel choices; matmul is one of {names}."

    @property
    def matmul(self) -> str:
        return self._get()

    @matmul.setter
    def matmul(self, name: str) -> None:
        self._set(name)

    @contextlib.contextmanager
    def use_matmul(self, name: str):
        """Runs the block with ``name`` as the matmul, then restores the previous choice."""
        prev = self._get()
        self._set(name)
        try:
            yield
        finally:
            self._set(prev)


class _CpuBackend(_MatmulChoice):
    def get_cpu_capability(self) -> str:
        """What the SIMD math (exp, log, tanh, sigmoid...) runs on in this process: "AVX2",
        "SSE", "NEON" (AArch64 with glibc >= 2.38) or "DEFAULT" (scalar loops). Chosen from
        the CPU at the first use; ``MINITORCH_CPU_CAPABILITY=default|sse|avx2|neon`` set
        before that overrides it."""
        return _C._cpu_capability()

    @property
    def conv_algorithm(self) -> str:
        """How conv2d (and conv1d, conv_transpose2d, their gradients) run on the CPU:
        "im2col" (the columns of every window, then GEMMs: the lectures' path), "direct"
        (vectorised loops over the outputs, for stride 1 and padding up to the kernel's
        reach; im2col for the rest) or "auto" (the default: direct for narrow layers,
        at most 144 multiply-adds per output (16 channels of 3x3), where it was measured faster; im2col
        otherwise). See docs/ARCHITECTURE.md, "CPU convolutions"."""
        return _C._get_cpu_conv_algorithm()

    @conv_algorithm.setter
    def conv_algorithm(self, name: str) -> None:
        _C._set_cpu_conv_algorithm(name)

    @contextlib.contextmanager
    def use_conv_algorithm(self, name: str):
        """Runs the block with ``name`` ("auto", "direct", "im2col") as the CPU convolution."""
        prev = self.conv_algorithm
        self.conv_algorithm = name
        try:
            yield
        finally:
            self.conv_algorithm = prev


class _Switches:
    """An object whose attributes are fixed: a misspelt switch is an AttributeError, not a
    new attribute that silently does nothing (``backends.cudnn.alow_tf32 = False``)."""

    _names: tuple = ()

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f"{type(self)._title} has no setting '{name}' (it has: {', '.join(self._names)})")
        super().__setattr__(name, value)

    def __repr__(self) -> str:
        return f"<{type(self)._title}: " + ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names) + ">"


def _switch(owner: str, name: str, get, set_, doc: str, after=None) -> property:
    """A bool property over a C++ getter/setter pair; ``after()`` runs once it is set."""

    def getter(self) -> bool:
        return get()

    def setter(self, value) -> None:
        if not isinstance(value, int):  # bool is an int
            raise TypeError(f"{owner}.{name} must be a bool, got {type(value).__name__}")
        set_(bool(value))
        if after is not None:
            after()

    return property(getter, setter, doc=doc)


def _tf32_flag(owner: str, which: str, doc: str) -> property:
    """``allow_tf32`` of ``backends.cuda.matmul`` (which="matmul") or ``backends.cudnn`` ("conv")."""
    return _switch(
        owner,
        "allow_tf32",
        lambda: _C._get_allow_tf32(which),
        lambda on: _C._set_allow_tf32(which, on),
        doc,
        after=lambda: _precision_follows_flag(which),
    )


class _CudaMatmul(_Switches):
    """``minitorch.backends.cuda.matmul`` (PyTorch's object) plus minitorch's kernel choice."""

    _title = "minitorch.backends.cuda.matmul"
    _names = ("allow_tf32", "kernel")
    allow_tf32 = _tf32_flag(
        "backends.cuda.matmul",
        "matmul",
        "float32 matmul / Linear / bmm on cuBLAS may use TF32 tensor cores (default False).",
    )

    @property
    def kernel(self) -> str:
        """Which GPU matmul runs: "naive" (a thread per output), "tiled" (shared-memory tiles)
        or "cublas" (the default on a GPU; the emulator has no cuBLAS and runs "tiled")."""
        return _C._get_cuda_matmul()

    @kernel.setter
    def kernel(self, name: str) -> None:
        _C._set_cuda_matmul(name)


class _CudaBackend(_Switches):
    """``minitorch.backends.cuda``: ``matmul`` (its ``allow_tf32`` and ``kernel``) and
    ``use_matmul(name)``, a block run with another kernel."""

    _title = "minitorch.backends.cuda"
    _names = ("matmul",)

    def __init__(self):
        object.__setattr__(self, "_matmul", _CudaMatmul())
        object.__setattr__(self, "_flash_sdp", True)

    def enable_flash_sdp(self, enabled: bool) -> None:
        """Whether ``F.scaled_dot_product_attention`` on CUDA may take the fused kernels
        (cuda/attention.cu); off, it always composes matmul, softmax and matmul."""
        object.__setattr__(self, "_flash_sdp", bool(enabled))

    def flash_sdp_enabled(self) -> bool:
        return self._flash_sdp

    @property
    def matmul(self) -> _CudaMatmul:
        return self._matmul

    @matmul.setter
    def matmul(self, name: str) -> None:
        # The spelling of earlier minitorch versions: backends.cuda.matmul = "tiled".
        if not isinstance(name, str):
            raise TypeError(
                "backends.cuda.matmul is an object: set backends.cuda.matmul.allow_tf32 or "
                f'backends.cuda.matmul.kernel = "naive" | "tiled" | "cublas", not a {type(name).__name__}'
            )
        self._matmul.kernel = name

    @contextlib.contextmanager
    def use_matmul(self, name: str):
        """Runs the block with ``name`` ("naive", "tiled", "cublas") as the GPU matmul kernel."""
        prev = self._matmul.kernel
        self._matmul.kernel = name
        try:
            yield
        finally:
            self._matmul.kernel = prev


def _cudnn_switch(which: str, doc: str) -> property:
    return _switch(
        "backends.cudnn", which, lambda: _C._get_cudnn_switch(which), lambda on: _C._set_cudnn_switch(which, on), doc
    )


class _CudnnBackend(_Switches):
    """``minitorch.backends.cudnn``: convolutions on NVIDIA's cuDNN library, PyTorch's switches
    and defaults. On a GPU, conv2d (and conv1d, and their gradients) run cuDNN's algorithms
    where its library loads; otherwise, with ``enabled = False``, or for a case cuDNN does not
    take, they run the im2col + GEMM path of minitorch's own (the one the lectures read).

        minitorch.backends.cudnn.is_available()    # True where libcudnn.so.9 loads
        minitorch.backends.cudnn.version()         # e.g. 91900 (9.19.0), None without it
        minitorch.backends.cudnn.enabled = False   # im2col + GEMMs, for comparison
        minitorch.backends.cudnn.benchmark = True  # time every algorithm once per shape
        minitorch.backends.cudnn.deterministic = True  # same bits every run
        minitorch.backends.cudnn.allow_tf32 = False    # full float32 (default True)
        with minitorch.backends.cudnn.flags(enabled=False): ...

    The emulated CUDA build has no cuDNN: there it is never available."""

    _title = "minitorch.backends.cudnn"
    _names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    allow_tf32 = _tf32_flag(
        "backends.cudnn", "conv", "float32 convolutions on a GPU may use TF32 tensor cores (default True, as PyTorch)."
    )
    enabled = _cudnn_switch("enabled", "Convolutions use cuDNN where it is available (default True).")
    benchmark = _cudnn_switch(
        "benchmark", "Time every cuDNN algorithm at a shape's first convolution and keep the fastest (default False)."
    )
    deterministic = _cudnn_switch(
        "deterministic", "Only cuDNN algorithms that give the same bits on every run (default False)."
    )

    def is_available(self) -> bool:
        """Whether cuDNN can be used: a GPU build of minitorch and a libcudnn.so.9 that loads
        (the CUDA toolkit's, one on LD_LIBRARY_PATH, or the ``nvidia-cudnn-cu13`` wheel's)."""
        return _C._cudnn_version() > 0

    def version(self) -> int | None:
        """cuDNN's version as one number (major * 10000 + minor * 100 + patch), or None."""
        v = _C._cudnn_version()
        return v if v > 0 else None

    def unavailable_reason(self) -> str:
        """Why cuDNN is not used ("" when it is): a minitorch extra, for error reports."""
        return _C._cudnn_unavailable_reason()

    @contextlib.contextmanager
    def flags(self, enabled=None, benchmark=None, deterministic=None, allow_tf32=None):
        """Runs the block with the given switches (None: unchanged), then restores them all."""
        prev = {n: getattr(self, n) for n in self._names}
        try:
            wanted = dict(enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=allow_tf32)
            for n, v in wanted.items():
                if v is not None:
                    setattr(self, n, v)
            yield
        finally:
            for n, v in prev.items():
                setattr(self, n, v)


def _cudnn_wheel_library() -> str:
    """libcudnn.so.9 from the ``nvidia-cudnn-cu13`` wheel when one is installed, else ""."""
    try:
        import nvidia  # the namespace package of NVIDIA's CUDA wheels
    except ImportError:
        return ""
    for root in getattr(nvidia, "__path__", []):
        for pattern in ("cudnn/lib/libcudnn.so.9", "cu13/lib/libcudnn.so.9", "*/lib/libcudnn.so.9"):
            found = sorted(glob.glob(os.path.join(root, pattern)))
            if found:
                return found[-1]
    return ""


# ---- set_float32_matmul_precision ---------------------------------------------------------
# PyTorch's rule: "highest" turns matmul TF32 off, "high" and "medium" turn it on; setting
# backends.cuda.matmul.allow_tf32 makes the precision "high" (True) or "highest" (False).
# minitorch has no bfloat16 GEMM for "medium" to use, so it runs as "high" (TF32), as
# PyTorch's cuBLAS path does.
_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def _precision_follows_flag(which: str) -> None:
    global _precision
    if which == "matmul":
        _precision = "high" if _C._get_allow_tf32("matmul") else "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """"highest": float32 GEMMs in full float32; "high" / "medium": TF32 tensor cores where a
    GPU has them (sets ``backends.cuda.matmul.allow_tf32``)."""
    global _precision
    if precision not in _PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got {precision!r}")
    _C._set_allow_tf32("matmul", precision != "highest")
    _precision = precision


def get_float32_matmul_precision() -> str:
    """The current setting: "highest" (the default), "high" or "medium"."""
    return _precision if _C._get_allow_tf32("matmul") else "highest"


# ---- minitorch.use_deterministic_algorithms: recorded, consulted by no kernel ----
_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records whether the program asks for deterministic algorithms (PyTorch's switch).

    What it does in minitorch: it records the request, which
    :func:`are_deterministic_algorithms_enabled` and
    :func:`is_deterministic_algorithms_warn_only_enabled` report, and nothing else. The CPU
    kernels give the same bits on every run with the same thread count anyway. On a GPU,
    the ops that add many values into one place with atomics (``index_add``,
    ``scatter_add``, ``index_put(accumulate=True)``, ``histc``, the backward of
    ``index_select`` / ``gather`` / ``embedding``...) may differ in their last bits from run
    to run: minitorch neither swaps them for other algorithms nor raises, as PyTorch does
    when this is on. For cuDNN's convolutions set ``backends.cudnn.deterministic = True``."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _deterministic.update(mode=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was last called with ``True``."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was last called with ``warn_only=True``."""
    return _deterministic["warn_only"]


# "naive" (triple loop), "blocked" (cache tiles, i-k-j) or "blas" (OpenBLAS, default).
cpu = _CpuBackend(_C._get_cpu_matmul, _C._set_cpu_matmul, '"naive", "blocked", "blas"')
cuda = _CudaBackend()
cudnn = _CudnnBackend()
if _C._cuda_compiled and not _C._cuda_is_emulated():  # the GPU backend serves "cuda"
    _C._cudnn_set_library_path(_cudnn_wheel_library())
