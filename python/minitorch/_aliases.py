"""PyTorch's other names for ops minitorch already has: ``clip`` is ``clamp``,
``greater`` is ``gt``, ``swapaxes`` is ``transpose``...

An alias is the very same function as the op it names, as a Tensor method and at
the top level, so its behaviour (and its error messages) are the op's.
"""
from __future__ import annotations

from . import _C, _composite, _functions, _inplace  # noqa: F401  (they define the ops named here)
from ._C import Tensor
from ._tensor import add_methods

# alias -> the op it names; each is a Tensor method and (below) a top-level function.
ALIASES = {
    "absolute": "abs",
    "negative": "neg",
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "true_divide": "div",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
    "clip": "clamp",
    "swapaxes": "transpose",
    "swapdims": "transpose",
    "moveaxis": "movedim",
}

# Method-only aliases (PyTorch has no top-level function for these).
_METHOD_ALIASES = {
    **ALIASES,
    "absolute_": "abs_",
    "negative_": "neg_",
    "clip_": "clamp_",
    "nelement": "numel",
    "ndimension": "dim",
}

add_methods({alias: getattr(Tensor, op) for alias, op in _METHOD_ALIASES.items()})

# Top level: the op's own module-level function where there is one (minitorch.mul
# also takes a number first), else the function made from the method.
absolute = _C.abs
negative = _C.neg
multiply = _C.mul
subtract = _C.sub
divide = _C.div
true_divide = _C.div
greater = _C.gt
greater_equal = _C.ge
less = _C.lt
less_equal = _C.le
not_equal = _C.ne
clip = _functions.clamp
swapaxes = _functions.transpose
swapdims = _functions.transpose
moveaxis = _composite.movedim
