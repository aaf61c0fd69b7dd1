"""Activation layers (``Sigmoid``, ``ReLU``, ``Tanh``, ``GELU``, ``SiLU``, ``LeakyReLU``, ``ELU``,
``Softplus``, ``Softmax``, ``LogSoftmax``) and the dropout layers (``Dropout``, ``Dropout1d``,
``Dropout2d``).

``inplace=True`` is accepted for PyTorch compatibility and shown in the repr; minitorch
still returns a new tensor."""
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


def _inplace_str(inplace: bool, first: bool = False) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class GELU(Module):
    """``x * Phi(x)`` (Phi: standard normal CDF); ``approximate="tanh"`` uses the tanh formula."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate argument must be either 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.silu(x)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True)


class LeakyReLU(Module):
    """``x`` for ``x > 0``, ``negative_slope * x`` otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class ELU(Module):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``."""

    def __init__(self, beta: float = 1, threshold: float = 20):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability ``p`` while training."""

    def forward(self, x):
        return F.dropout1d(x, self.p, self.training)


class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) input with probability ``p`` while training."""

    def forward(self, x):
        return F.dropout2d(x, self.p, self.training)
