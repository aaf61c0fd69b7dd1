"""Activation layers (``Sigmoid``, ``ReLU``, ``Tanh``, ``GELU``, ``SiLU``, ``LeakyReLU``, ``ELU``,
``Softplus``, ``Softmax``, ``LogSoftmax``; ``Hardtanh``, ``ReLU6``, ``Hardsigmoid``,
``Hardswish``, ``Mish``, ``LogSigmoid``, ``Softsign``, ``Tanhshrink``, ``Threshold``,
``Softshrink``, ``Hardshrink``, ``SELU``, ``CELU``, ``PReLU``, ``GLU``, ``Softmin``, ``RReLU``,
``Softmax2d``) and the dropout layers (``Dropout``, ``Dropout1d``, ``Dropout2d``, ``AlphaDropout``,
``FeatureAlphaDropout``).

``inplace=True`` writes the result into the input, as in PyTorch (inside a graph too:
the input's history becomes the activation's; ops/inplace.py)."""
from __future__ import annotations

import warnings

from .. import _C
from . import functional as F
from .init import constant_
from .module import Module
from .parameter import Parameter


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` — the lectures' activation."""

    def forward(self, x):
        return x.sigmoid()


class ReLU(Module):
    """``max(x, 0)``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.relu(x, inplace=True) if self.inplace else x.relu()

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True)


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
        return F.silu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True)


class LeakyReLU(Module):
    """``x`` for ``x > 0``, ``negative_slope * x`` otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class ELU(Module):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.elu(x, self.alpha, self.inplace)

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


class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``
    while training."""

    def forward(self, x):
        return F.dropout3d(x, self.p, self.training)


# ---- the activations of nn/_activation_functional.py ----

class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]``. ``min_value``/``max_value``: PyTorch's
    deprecated names of the two bounds."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None):
        super().__init__()
        if min_value is not None:
            warnings.warn("Hardtanh: keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("Hardtanh: keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if not max_val > min_val:
            raise ValueError(f"{type(self).__name__}: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True)


class _Pointwise(Module):
    """An activation with no arguments but PyTorch's ``inplace`` (not shown in its repr)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_Pointwise):
    """``relu6(x + 3) / 6``."""

    def forward(self, x):
        return F.hardsigmoid(x, self.inplace)


class Hardswish(_Pointwise):
    """``x * relu6(x + 3) / 6``."""

    def forward(self, x):
        return F.hardswish(x, self.inplace)


class Mish(_Pointwise):
    """``x * tanh(softplus(x))``."""

    def forward(self, x):
        return F.mish(x, self.inplace)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, stable for very negative ``x``."""

    def forward(self, x):
        return F.logsigmoid(x)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, x):
        return F.softsign(x)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, x):
        return F.tanhshrink(x)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x):
        return F.threshold(x, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class _Shrink(Module):
    """An activation with one argument, ``lambd``, which its repr shows alone."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""

    def forward(self, x):
        return F.softshrink(x, self.lambd)


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0."""

    def forward(self, x):
        return F.hardshrink(x, self.lambd)


class SELU(Module):
    """``scale * elu(x, alpha)`` with SELU's fixed constants."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.selu(x, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, first=True)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.celu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class PReLU(Module):
    """``x`` where ``x > 0``, else ``weight * x``, with a learned slope: one shared
    (``num_parameters=1``) or one per channel (dim 1 of the input), each starting at ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be a positive int, got {num_parameters!r}")
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_C._empty((num_parameters,), dtype, device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        constant_(self.weight, self.init)

    def forward(self, x):
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    """``a * sigmoid(b)`` with ``a, b`` the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmin(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class AlphaDropout(Dropout):
    """SELU's dropout while training (``F.alpha_dropout``): a dropped element takes SELU's
    negative saturation, then an affine map keeps the mean and variance; identity in eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p, inplace)
        self.inplace = inplace

    def forward(self, x):
        return F.alpha_dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class FeatureAlphaDropout(AlphaDropout):
    """``AlphaDropout`` of whole channels of (N, C, *) input (``F.feature_alpha_dropout``)."""

    def forward(self, x):
        return F.feature_alpha_dropout(x, self.p, self.training, self.inplace)


class RReLU(Module):
    """The randomized leaky ReLU: while training, each negative element is scaled by its own
    slope drawn from U(``lower``, ``upper``); in eval() by their mean."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x):
        return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Softmax2d(Module):
    """Softmax over the channels of each pixel: dim -3 of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead (input of shape "
                             f"{tuple(input.shape)})")
        return F.softmax(input, -3)
