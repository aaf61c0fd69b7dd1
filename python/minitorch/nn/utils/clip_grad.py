"""Gradient clipping (PyTorch's names): ``clip_grad_norm_``, which is ``get_total_norm`` of
the gradients followed by ``clip_grads_with_norm_``, and ``clip_grad_value_``."""
from __future__ import annotations

import types
import warnings

from ... import _C
from ...autograd import no_grad
from ...ops.join import stack


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)


def _grads(parameters) -> list:
    return [p.grad for p in _as_list(parameters) if p.grad is not None]


def _one_bucket(grads) -> bool:
    """True when the fused path takes these gradients: one device and floating dtype, contiguous."""
    first = grads[0]
    return first.is_floating_point() and all(
        g.device == first.device and g.dtype == first.dtype and g.is_contiguous() for g in grads)


def _check_finite(total, norm_type: float) -> None:
    if not bool(total.isfinite().item()):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                           "by the non-finite norm anyway, set `error_if_nonfinite=False`")


@no_grad()
def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None):
    """The ``norm_type``-norm of all elements of ``tensors`` together (as if concatenated into
    one vector): the norm of each tensor, then the norm of those norms, on the first tensor's
    device. ``norm_type`` is any order ``linalg.vector_norm`` takes (inf, -inf, 0 too). With
    no tensors: ``tensor(0.)``.

    >>> total = nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _C._full((), 0.0, None, None)
    device = tensors[0].device
    # One fused reduction a tensor; a size-0 one holds nothing to measure (its max norm
    # would be an error), and none at all measure 0.
    norms = [t.norm(norm_type).to(device) for t in tensors if t.numel()]
    if not norms:
        return _C._full((), 0.0, tensors[0].dtype, device)
    total = norms[0] if len(norms) == 1 else stack(norms).norm(norm_type)
    if error_if_nonfinite:
        _check_finite(total, norm_type)
    return total


@no_grad()
def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach: bool | None = None) -> None:
    """Scales every gradient of ``parameters`` in place by ``min(1, max_norm / (total_norm + 1e-6))``
    (``total_norm`` given, e.g. from :func:`get_total_norm` reduced across processes). The
    scale stays on the device: no wait for the GPU."""
    grads = _grads(parameters)
    if not grads:
        return
    if not isinstance(total_norm, _C.Tensor):
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a Tensor, got {type(total_norm).__name__}")
    scale = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.to(g.device, g.dtype))


@no_grad()
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None):
    """Scales all gradients together so that their total ``norm_type``-norm (the norm of the
    vector of all gradient elements) is at most ``max_norm``; returns that total norm
    (measured before clipping) as a 0-d tensor.

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``, as in PyTorch.

    >>> loss.backward()
    >>> nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    was_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)  # a generator is read once, here
    if was_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if grads and foreach is not False and not error_if_nonfinite and norm_type in (2.0, float("inf")) \
            and _one_bucket(grads):
        # PyTorch's foreach path: every gradient measured and scaled together, in three
        # launches on CUDA, the scale never read back to the host.
        return _C._clip_grad_norm_foreach(grads, max_norm, norm_type)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None):
    """Deprecated spelling of :func:`clip_grad_norm_` (a FutureWarning, as in PyTorch)."""
    warnings.warn("`minitorch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`minitorch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamps every gradient element into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)
