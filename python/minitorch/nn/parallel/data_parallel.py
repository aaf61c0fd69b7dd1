"""``DataParallel``: PyTorch's single-process wrapper, for the programs that write
``model = nn.DataParallel(model)``. Its state_dict keys gain the ``module.`` prefix, as in
PyTorch, and without a GPU it calls the module as it is.

On a GPU it runs the module on ``device_ids[0]``, moving the inputs there (PyTorch's
one-device case). PyTorch splits a batch over several GPUs by copying the model to each on
every call; minitorch does not, and says so once: ``DistributedDataParallel`` (one process
per GPU) is the way to use several, in PyTorch too."""
from __future__ import annotations

import warnings

from ... import _C
from ..module import Module


def _device_index(d) -> int:
    if isinstance(d, int):
        return d
    device = _C.device(d) if isinstance(d, str) else d
    return device.index if device.index is not None else 0


def _to(obj, device):
    """obj with every tensor in it (tuples, lists, dicts) moved to device."""
    if isinstance(obj, _C.Tensor) or hasattr(obj, "batch_sizes"):  # a PackedSequence moves itself
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple: fields by position
        return type(obj)(*(_to(o, device) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    return obj


class DataParallel(Module):
    """Wraps ``module``: ``forward`` calls it with the inputs on ``device_ids[0]`` and returns
    the outputs on ``output_device`` (default ``device_ids[0]``).

    >>> model = nn.DataParallel(model.cuda())
    >>> model.module          # the wrapped model, as in PyTorch
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be a Module, got {type(module).__name__}")
        self.module = module
        self.dim = dim
        from ... import cuda
        if not cuda.is_available():
            self.device_ids, self.output_device, self.src_device_obj = [], None, None
            return
        ids = list(range(cuda.device_count())) if device_ids is None else [_device_index(d) for d in device_ids]
        if not ids:
            raise ValueError("DataParallel: device_ids is empty")
        self.device_ids = ids
        self.output_device = _device_index(output_device if output_device is not None else ids[0])
        self.src_device_obj = _C.device(f"cuda:{ids[0]}")
        for t in list(module.parameters()) + list(module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        if len(ids) > 1:
            warnings.warn(f"DataParallel: minitorch runs the module on one device ({self.src_device_obj}), not "
                          f"split over {len(ids)}; use DistributedDataParallel (one process per GPU) to use "
                          "several", stacklevel=2)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        out = self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
        return _to(out, _C.device(f"cuda:{self.output_device}"))
