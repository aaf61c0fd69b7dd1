"""``minitorch.backends``: choose which kernel implementation runs, for the lectures'
comparisons (the defaults are the fast ones).

    minitorch.backends.cpu.matmul = "naive"     # "naive" | "blocked" | "blas" (default)
    minitorch.backends.cuda.matmul = "tiled"    # "naive" | "tiled" | "cublas" (default on a GPU)
    with minitorch.backends.cpu.use_matmul("blocked"):
        c = a @ b
    minitorch.backends.cpu.get_cpu_capability()  # "AVX2": what the SIMD math runs on
"""
from __future__ import annotations

import contextlib

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
        prev = self.matmul
        self.matmul = name
        try:
            yield
        finally:
            self.matmul = prev


class _CpuBackend(_MatmulChoice):
    def get_cpu_capability(self) -> str:
        """What the SIMD math (exp, log, tanh, sigmoid...) runs on in this process: "AVX2",
        "SSE", "NEON" (AArch64 with glibc >= 2.38) or "DEFAULT" (scalar loops). Chosen from
        the CPU at the first use; ``MINITORCH_CPU_CAPABILITY=default|sse|avx2|neon`` set
        before that overrides it."""
        return _C._cpu_capability()


# "naive" (triple loop), "blocked" (cache tiles, i-k-j) or "blas" (OpenBLAS, default).
cpu = _CpuBackend(_C._get_cpu_matmul, _C._set_cpu_matmul, '"naive", "blocked", "blas"')
# "naive" (a thread per output), "tiled" (shared-memory tiles) or "cublas" (default on a GPU).
cuda = _MatmulChoice(_C._get_cuda_matmul, _C._set_cuda_matmul, '"naive", "tiled", "cublas"')
