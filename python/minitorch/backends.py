"""``minitorch.backends``: choose which kernel implementation runs, for the lectures'
comparisons (the defaults are the fast ones).

    minitorch.backends.cpu.matmul = "naive"     # "naive" | "blocked" | "blas" (default)
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


cpu = _CPU()
