"""Spectral windows, as PyTorch defines them: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window``.

Each gives ``window_length`` points: of the symmetric window of that length, or, with
``periodic=True`` (the default, the one spectral analysis wants), the first
``window_length`` points of the symmetric window one point longer. Length 0 gives an empty
tensor and length 1 ``[1.]``, periodic or not. With N the length of the symmetric window and
``n = 0 .. N-1``:

- hamming: ``alpha - beta * cos(2 pi n / (N - 1))`` (hann: ``alpha = beta = 0.5``);
- blackman: ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``;
- bartlett: ``1 - |2 n / (N - 1) - 1|``;
- kaiser: ``I0(beta * sqrt(1 - ((n - a) / a) ** 2)) / I0(beta)``, ``a = (N - 1) / 2``.

The values are computed in float64 on the host (NumPy; ``I0`` is ``numpy.i0``), then made a
tensor of ``dtype`` (a floating one; the default dtype unless given) on ``device``. They are
not differentiable; ``requires_grad=True`` makes the window a leaf. ops/registry.py makes
``minitorch.<name>`` of each, as ops/declarations.py declares.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _C
from .._C import Tensor


def _window(op: str, window_length, periodic, dtype, device, requires_grad: bool, formula) -> Tensor:
    """``formula(n, N)`` (``n`` the float64 positions 0 .. N-1) as PyTorch's window ``op``."""
    from .creation import get_default_dtype, tensor
    if isinstance(window_length, bool) or not isinstance(window_length, numbers.Integral):
        raise TypeError(f"{op}(): argument 'window_length' must be int, not {type(window_length).__name__}")
    if not isinstance(periodic, bool):
        raise TypeError(f"{op}(): argument 'periodic' must be bool, not {type(periodic).__name__}")
    dtype = get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise _C.DTypeError(f"{op} expects floating point dtypes, got: {dtype.name}")
    length = int(window_length)
    if length < 0:
        raise _C.InputError(f"{op} requires non-negative window_length, got window_length={length}")
    if length <= 1:
        values = np.ones(length)
    else:
        n = length + 1 if periodic else length
        values = formula(np.arange(n, dtype=np.float64), n)[:length]
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def _number(op: str, what: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}(): argument '{what}' must be float, not {type(v).__name__}")
    return float(v)


def _cosines(alpha: float, beta: float):
    return lambda n, size: alpha - beta * np.cos(2 * np.pi * n / (size - 1))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """The Hann window: ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (see the module docstring).

    >>> minitorch.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosines(0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window: ``alpha - beta cos(2 pi n / (N - 1))``.

    >>> minitorch.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    alpha, beta = _number("hamming_window", "alpha", alpha), _number("hamming_window", "beta", beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _cosines(alpha, beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window: ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    def formula(n, size):
        phase = 2 * np.pi * n / (size - 1)
        return 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase)

    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, formula)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window: ``1 - |2 n / (N - 1) - 1|``.

    >>> minitorch.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, size: 1 - np.abs(2 * n / (size - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, device=None,
                  requires_grad: bool = False) -> Tensor:
    """The Kaiser window: ``I0(beta sqrt(1 - ((n - a) / a) ** 2)) / I0(beta)``, ``a = (N - 1) / 2``
    (``I0``: the modified Bessel function of the first kind, order 0). ``beta`` sets the
    trade-off between the main lobe's width and the side lobes' height."""
    beta = _number("kaiser_window", "beta", beta)

    def formula(n, size):
        a = (size - 1) / 2
        return np.i0(beta * np.sqrt(np.abs(1 - ((n - a) / a) ** 2))) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, formula)
