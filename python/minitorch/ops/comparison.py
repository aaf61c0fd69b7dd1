"""Questions about a whole tensor: ``all``/``any``, ``isclose``/``allclose``, ``equal``, ``is_nonzero``,
and about its kind: ``is_signed``, ``is_complex``, ``is_same_size``, ``is_inference``.

Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py).

Each is built from comparisons and ``sum``, so it runs on every device. None is
differentiable: the answers are bool tensors or Python bools.
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor
from .._tensor import dim_tuple
from ..autograd import no_grad
from ._args import numpy_names


def _some(t: Tensor, nonzero: bool, dim, keepdim: bool, op: str) -> Tensor:
    """True where some element of ``t`` over ``dim`` is nonzero (or, with ``nonzero=False``,
    zero): a bool sum (``sum(dtype=bool)``, True where any value is), one reduce launch on
    a bool tensor, after one comparison on any other."""
    dims = None if dim is None else dim_tuple(dim, t.ndim, op)
    if t.dtype == _C.dtype.bool:
        flags = t if nonzero else t.logical_not()
    else:
        flags = (t != 0) if nonzero else (t == 0)
    return flags.sum(dims, keepdim, dtype=_C.dtype.bool)


@numpy_names
def all(self, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element over ``dim`` (an int, a tuple, or None for all) is nonzero.

    The result is a bool tensor; an empty reduction gives True.

    >>> minitorch.tensor([[1, 0], [2, 3]]).all(dim=1)
    tensor([False,  True])
    """
    return _some(self, False, dim, keepdim, "all").logical_not()


@numpy_names
def any(self, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element over ``dim`` (an int, a tuple, or None for all) is nonzero.

    The result is a bool tensor; an empty reduction gives False.

    >>> minitorch.tensor([[1, 0], [0, 0]]).any(dim=1)
    tensor([ True, False])
    """
    return _some(self, True, dim, keepdim, "any")


def _check_pair(a: Tensor, b, op: str, *, same_dtype: bool) -> None:
    if not isinstance(b, Tensor):
        raise TypeError(f"{op}(): argument 'other' must be a Tensor, not {type(b).__name__}")
    if a.device != b.device:
        raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found {a.device} and {b.device}")
    if same_dtype and a.dtype != b.dtype:
        raise _C.DTypeError(f"{op}: expected both tensors to have the same dtype, got {a.dtype.name} and {b.dtype.name}")


def _close(a: Tensor, b, rtol: float, atol: float, equal_nan: bool, op: str) -> Tensor:
    _check_pair(a, b, op, same_dtype=True)
    if rtol < 0 or atol < 0:
        raise _C.InputError(f"{op}: rtol and atol must be greater than or equal to zero, got rtol={rtol}, atol={atol}")
    try:
        _C.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise _C.InputError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be broadcast together") from None
    with no_grad():
        close = a == b
        if equal_nan and a.dtype.is_floating_point:
            close = close | (a.isnan() & b.isnan())
        if rtol == 0 and atol == 0:
            return close
        if a.dtype == _C.dtype.bool:
            a, b = a.float(), b.float()
        error = (a - b).abs()
        return close | (error.isfinite() & (error <= atol + rtol * b.abs()))


def isclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """True where ``|self - other| <= atol + rtol * |other|`` (or the two are equal, which
    covers matching infinities); NaNs are close to each other only with ``equal_nan``.

    Broadcasts; both tensors must have the same dtype. Returns a bool tensor.

    >>> minitorch.tensor([1.0, 2.0]).isclose(minitorch.tensor([1.0 + 1e-9, 2.1]))
    tensor([ True, False])
    """
    return _close(self, other, rtol, atol, equal_nan, "isclose")


def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True (a Python bool) when every element of :meth:`isclose` is True."""
    return bool(all(_close(self, other, rtol, atol, equal_nan, "allclose")))


def equal(self, other: Tensor) -> bool:
    """True (a Python bool) when both tensors have the same shape and the same values.

    No broadcasting: different shapes give False. NaN equals nothing, itself included.
    """
    _check_pair(self, other, "equal", same_dtype=False)
    if self.shape != other.shape:
        return False
    return bool(all(self == other))


def is_nonzero(self) -> bool:
    """Whether the single element of ``self`` is not zero (``bool(x)`` for a one-element
    tensor; NaN counts as non-zero). RuntimeError for an empty tensor or more than one element.

    >>> minitorch.tensor([0.0]).is_nonzero()
    False
    """
    n = self.numel()
    if n != 1:
        which = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {which} is ambiguous (shape "
                           f"{tuple(self.shape)})")
    return bool(self.item())


def is_signed(self) -> bool:
    """Whether ``self``'s dtype holds negative values: True for the floating dtypes and
    int8/16/32/64, False for uint8 and bool."""
    return self.dtype not in (_C.dtype.uint8, _C.dtype.bool)


def is_complex(self) -> bool:
    """Whether ``self``'s dtype is complex: always False, minitorch has no complex dtypes."""
    return False


def is_same_size(self, other: Tensor) -> bool:
    """Whether ``other`` has ``self``'s shape (``self.shape == other.shape``)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' must be Tensor, not {type(other).__name__}")
    return tuple(self.shape) == tuple(other.shape)


def is_inference(self) -> bool:
    """Whether ``self`` is an inference tensor: always False, minitorch keeps no inference flag
    on tensors (a tensor made inside ``inference_mode()`` is an ordinary one, as under
    ``no_grad``)."""
    return False
