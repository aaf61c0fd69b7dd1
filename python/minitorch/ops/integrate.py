"""Numerical integration of samples by the trapezoidal rule, NumPy's and SciPy's names:
``trapezoid`` (``trapz`` is its older name) and ``cumulative_trapezoid``.

Along ``dim``, each neighbouring pair of samples ``y[i], y[i + 1]`` adds the area
``(y[i] + y[i + 1]) / 2 * spacing_i``, the spacing being ``dx`` (1 by default) or the
differences of the sample points ``x``. Both are sums of slices (``narrow``), ``diff`` and
``sum`` / ``cumsum``, so their gradients and devices are those ops'. Integer samples give
floats; bool samples raise, as in PyTorch. ``minitorch.<name>`` only (attached by ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

import numbers

from .. import _C
from .._C import Tensor
from .._tensor import _wrap
from ._args import check_input


def _areas(op: str, y: Tensor, x, dx, dim) -> tuple:
    """(area of each neighbouring pair along the dim, that dim counted from the end)."""
    check_input(y, op)
    if x is not None and dx is not None:
        raise TypeError(f"{op}(): pass the sample points x or the spacing dx, not both")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    if y.ndim == 0:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap(int(dim), y.ndim, op) - y.ndim  # from the end: right-aligned under broadcasting
    if y.dtype == _C.dtype.bool:
        raise _C.DTypeError(f"{op}: received a bool input for `y`, but bool is not supported")
    if not y.dtype.is_floating_point:
        y = y.to(_C._get_default_dtype())
    n = y.shape[d]
    pairs = max(n - 1, 0)
    sums = y.narrow(d, min(1, n), pairs) + y.narrow(d, 0, pairs)  # y[i + 1] + y[i]
    if x is None:
        if dx is None:
            dx = 1
        if isinstance(dx, bool) or not isinstance(dx, numbers.Real):
            raise TypeError(f"{op}(): argument 'dx' must be a number, not {type(dx).__name__}")
        return sums * (float(dx) / 2), d
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be a Tensor, not {type(x).__name__}")
    if x.ndim == 1:  # the same sample points for every slice along dim
        if x.shape[0] != n:
            raise _C.InputError(f"{op}: There must be one `x` value for each sample point (x has {x.shape[0]}, "
                                f"y has {n} along dim {dim})")
        view = [1] * y.ndim
        view[d] = pairs
        spacing = x.diff().reshape(view)
    else:  # x broadcasts with y; its differences are taken along the same dim
        spacing = x.diff(dim=d)
    return sums * spacing / 2, d


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of the samples ``y`` along ``dim`` by the trapezoidal rule: points ``x``
    (1-D, one per sample along ``dim``, or broadcasting with ``y``) or a constant spacing
    ``dx`` (default 1). Fewer than two samples integrate to 0.

    >>> minitorch.trapezoid(minitorch.tensor([1.0, 2.0, 3.0])).item()
    4.0
    >>> minitorch.trapezoid(minitorch.tensor([1.0, 2.0, 3.0]), minitorch.tensor([0.0, 1.0, 3.0])).item()
    6.5
    """
    areas, d = _areas("trapezoid", y, x, dx, dim)
    return areas.sum(d)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running integral of ``trapezoid``: along ``dim``, element ``i`` is the area up to
    sample ``i + 1``, so that dim is one shorter than ``y``'s (SciPy's default, no initial 0).

    >>> minitorch.cumulative_trapezoid(minitorch.tensor([1.0, 2.0, 3.0])).tolist()
    [1.5, 4.0]
    """
    areas, d = _areas("cumulative_trapezoid", y, x, dx, dim)
    return areas.cumsum(d)
