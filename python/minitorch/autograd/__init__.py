"""``minitorch.autograd``: reverse-mode automatic differentiation.

The graph, the engine and every built-in backward formula are C++ (see
``cpp/include/minitorch/autograd.h``); this package exposes them with PyTorch's names.
"""
from __future__ import annotations

from .. import _C
from . import functional, graph
from .function import Function, FunctionCtx
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)


def _as_list(x):
    return [x] if isinstance(x, _C.Tensor) else list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Accumulates gradients of ``tensors`` into the leaves' ``.grad``.

    With ``create_graph=True`` the backward pass is itself recorded, so the ``.grad``
    it leaves can be differentiated again; ``retain_graph`` then defaults to True.
    """
    tensors = _as_list(tensors)
    if grad_tensors is not None:
        grad_tensors = _as_list(grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is not None:
        # Only these leaves' .grad are updated, as PyTorch's backward(inputs=...).
        inputs = _as_list(inputs)
        grads = _C._run_backward(tensors, grad_tensors, bool(retain), inputs, True, bool(create_graph))
        for t, g in zip(inputs, grads):
            if g is not None:
                t.grad = g if t.grad is None else t.grad + g
        return
    _C._run_backward(tensors, grad_tensors, bool(retain), None, False, bool(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused=None, is_grads_batched: bool = False, materialize_grads: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    With ``create_graph=True`` the gradients have a graph of their own, so they can be
    differentiated again (second derivatives, Hessian-vector products, gradient
    penalties); ``retain_graph`` then defaults to True.

    >>> x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    >>> minitorch.autograd.grad((x * x).sum(), x)
    (tensor([2., 4.]),)
    >>> (gx,) = minitorch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    >>> minitorch.autograd.grad(gx.sum(), x)  # d2/dx2 x^3 = 6x
    (tensor([ 6., 12.]),)
    """
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched=True is not supported")
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    if grad_outputs is not None:
        grad_outputs = _as_list(grad_outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    retain = create_graph if retain_graph is None else retain_graph
    result = _C._run_backward(outputs, grad_outputs, bool(retain), inputs, bool(allow_unused), bool(create_graph))
    if materialize_grads:
        from .. import zeros_like
        result = tuple(zeros_like(t) if g is None else g for t, g in zip(inputs, result))
    return result


__all__ = ["Function", "FunctionCtx", "backward", "enable_grad", "grad", "graph", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "no_grad", "set_grad_enabled"]


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **kwargs) -> bool:
    """``torch.autograd.gradcheck``: :func:`minitorch.testing.gradcheck` (backward against
    central finite differences, float64 inputs)."""
    from ..testing import gradcheck as check
    return check(func, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **kwargs) -> bool:
    """Second derivatives against finite differences: gradcheck of the function that maps
    (inputs, grad_outputs) to the gradients of ``sum(func(inputs) * grad_outputs)``, built
    with ``create_graph``. Without ``grad_outputs``, random float64 ones are drawn (and
    checked as inputs too, as PyTorch's)."""
    ins = (inputs,) if isinstance(inputs, _C.Tensor) else tuple(inputs)
    wrt = [x for x in ins if isinstance(x, _C.Tensor) and x.requires_grad]
    with enable_grad():
        first = func(*ins)
    outs = _as_list(first)
    if grad_outputs is None:
        from .. import randn
        grad_outputs = [randn(tuple(o.shape), dtype=o.dtype, device=o.device).requires_grad_() for o in outs]
    grad_outputs = _as_list(grad_outputs)

    def first_derivatives(*args):
        xs, gs = args[:len(ins)], args[len(ins):]
        with enable_grad():
            ys = _as_list(func(*xs))
            leaves = [x for x in xs if isinstance(x, _C.Tensor) and x.requires_grad]
            return tuple(g for g in grad(ys, leaves, list(gs), create_graph=True, allow_unused=True)
                         if g is not None)

    if not wrt:
        raise ValueError("gradgradcheck: no input has requires_grad=True")
    return gradcheck(first_derivatives, tuple(ins) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
