"""Activation layers: ``Sigmoid``, ``ReLU``, ``Tanh``, ``Softmax``, ``LogSoftmax``, ``Dropout``."""
from __future__ import annotations

from . import functional as F
from .module import Module


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` — the lectures' activation."""

    def forward(self, x):
        return x.sigmoid()


class ReLU(Module):
    """``max(x, 0)``."""

    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x):
        return x.relu()


class Tanh(Module):
    def forward(self, x):
        return x.tanh()


class Softmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, -1 if self.dim is None else self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.log_softmax(x, -1 if self.dim is None else self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Dropout(Module):
    """Randomly zeroes elements with probability ``p`` while training; identity in eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace=False"
