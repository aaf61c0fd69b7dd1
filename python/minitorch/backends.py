"""``minitorch.backends``: choose which kernel implementation runs, for the lectures'
comparisons (the defaults are the fast ones).

    minitorch.backends.cpu.matmul = "naive"     # "naive" | "blocked" | "blas" (default)
    minitorch.backends.cuda.matmul = "tiled"    # "naive" | "tiled" | "cublas" (default on a GPU)
    with minitorch.backends.cpu.use_matmul("blocked"):
        c = a @ b
"""
from __future__ import annotations

import contextlib

from . import _C


class _CPU:
    """CPU kernel choices."""

    @property
    def matmul(self) -> str:
        """"naive" (triple loop), "blocked" (cache tiles, i-k-j) or "blas" (OpenBLAS)."""
        return _C._get_cpu_matmul()

    @matmul.setter
    def matmul(self, name: str) -> None:
        _C._set_cpu_matmul(name)

    @contextlib.contextmanager
    def use_matmul(self, name: str):
        prev = self.matmul
        self.matmul = name
        try:
            yield
        finally:
            self.matmul = prev


class _CUDA:
    """GPU kernel choices (need a CUDA build)."""

    @property
    def matmul(self) -> str:
        """"naive" (a thread per output), "tiled" (shared-memory tiles) or "cublas" (default on a GPU)."""
        return _C._get_cuda_matmul()

    @matmul.setter
    def matmul(self, name: str) -> None:
        _C._set_cuda_matmul(name)

    @contextlib.contextmanager
    def use_matmul(self, name: str):
        prev = self.matmul
        self.matmul = name
        try:
            yield
        finally:
            self.matmul = prev


cpu = _CPU()
cuda = _CUDA()
