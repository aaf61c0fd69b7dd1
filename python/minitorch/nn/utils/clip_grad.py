"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_`` (PyTorch's names)."""
from __future__ import annotations

from ... import _C
from ...autograd import no_grad
from ...ops.join import stack


def _grads(parameters) -> list:
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _one_bucket(grads) -> bool:
    """True when the fused path takes these gradients: one device and floating dtype, contiguous."""
    first = grads[0]
    return first.is_floating_point() and all(
        g.device == first.device and g.dtype == first.dtype and g.is_contiguous() for g in grads)


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
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return _C._full((), 0.0, None, None)
    if not (norm_type > 0):
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    device = grads[0].device
    if foreach is not False and not error_if_nonfinite and norm_type in (2.0, float("inf")) and _one_bucket(grads):
        # PyTorch's foreach path: every gradient measured and scaled together, in three
        # launches on CUDA, the scale never read back to the host.
        return _C._clip_grad_norm_foreach(grads, max_norm, norm_type)
    grads_with_values = [g for g in grads if g.numel()]
    if not grads_with_values:
        return _C._full((), 0.0, grads[0].dtype, device)
    # As PyTorch: the norm of each gradient (one fused reduction each), then the norm of
    # those norms, so the total costs one launch per gradient plus two, not three.
    norms = [g.norm(norm_type).to(device) for g in grads_with_values]
    total = norms[0] if len(norms) == 1 else stack(norms).norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite().item()):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                           "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.to(g.device, g.dtype))
    return total


@no_grad()
def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamps every gradient element into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)
