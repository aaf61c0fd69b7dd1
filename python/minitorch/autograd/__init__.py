"""``minitorch.autograd``: reverse-mode automatic differentiation.

The graph, the engine and every built-in backward formula are C++ (see
``cpp/include/minitorch/autograd.h``); this package exposes them with PyTorch's names.
"""
from __future__ import annotations

from .. import _C
from .function import Function, FunctionCtx
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)


def backward(tensors, grad_tensors=None, retain_graph: bool = False) -> None:
    """Accumulates gradients of ``tensors`` into the leaves' ``.grad``."""
    tensors = [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)
    if grad_tensors is not None:
        grad_tensors = [grad_tensors] if isinstance(grad_tensors, _C.Tensor) else list(grad_tensors)
    _C._run_backward(tensors, grad_tensors, bool(retain_graph), None, False)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool = False, allow_unused: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    >>> x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    >>> minitorch.autograd.grad((x * x).sum(), x)
    (tensor([2., 4.]),)
    """
    outputs = [outputs] if isinstance(outputs, _C.Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, _C.Tensor) else list(inputs)
    if grad_outputs is not None:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, _C.Tensor) else list(grad_outputs)
    return _C._run_backward(outputs, grad_outputs, bool(retain_graph), inputs, bool(allow_unused))


__all__ = ["Function", "FunctionCtx", "backward", "enable_grad", "grad", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "no_grad", "set_grad_enabled"]
