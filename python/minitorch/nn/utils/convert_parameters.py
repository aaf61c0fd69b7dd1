"""All of a model's parameters as one flat vector and back (PyTorch's
``parameters_to_vector`` / ``vector_to_parameters``): what evolution strategies, line
searches and second-order methods work on."""
from __future__ import annotations

from ... import _C
from ...ops.join import cat


def _same_device(param, device):
    """The device all parameters must share (the first one's)."""
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported "
                        f"({device} and {param.device})")
    return device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's elements, in order (a copy: ``cat`` of each
    one's ``view(-1)``, recorded for autograd).

    >>> vec = nn.utils.parameters_to_vector(model.parameters())
    """
    device, pieces = None, []
    for p in parameters:
        if not isinstance(p, _C.Tensor):
            raise TypeError(f"parameters_to_vector: expected an iterable of Tensors, got {type(p).__name__}")
        device = _same_device(p, device)
        pieces.append(p.view(-1))
    if not pieces:
        raise ValueError("parameters_to_vector: expected at least one parameter")
    return cat(pieces)


def vector_to_parameters(vec, parameters) -> None:
    """Points each parameter's ``.data`` at its slice of ``vec`` (1-D, as from
    :func:`parameters_to_vector`): the parameters then share ``vec``'s memory, as in PyTorch."""
    if not isinstance(vec, _C.Tensor):
        raise TypeError(f"expected minitorch.Tensor, but got: {type(vec).__name__}")
    if vec.dim() != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-D, got shape {tuple(vec.shape)}")
    params = list(parameters)
    device, need = None, 0
    for p in params:
        device = _same_device(p, device)
        need += p.numel()
    if need != vec.numel():
        # (PyTorch gives a view error partway, having moved the first parameters already)
        raise ValueError(f"vector_to_parameters: the parameters hold {need} elements, vec has {vec.numel()}")
    at = 0
    for p in params:
        n = p.numel()
        p.data = vec[at:at + n].view_as(p).data
        at += n
