"""Where a tensor's memory is: ``Tensor.pin_memory`` (a copy in page-locked host memory, which
a copy to the GPU can read while the host goes on: ``to("cuda", non_blocking=True)``,
cuda_streams.py) and ``Tensor.is_pinned``. Tensor methods by ops/declarations.py (attached
by ops/registry.py).
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor


def pin_memory(self, device=None) -> Tensor:
    """A copy of this CPU tensor in page-locked memory (copies from it to the GPU can run
    while the host goes on)."""
    if self.requires_grad and _C.is_grad_enabled():
        raise RuntimeError("pin_memory: the tensor requires grad; pin tensor.detach() (pinning is for data)")
    if _C._is_pinned(self):
        return self
    return _C._pin_memory(self)


def is_pinned(self, device=None) -> bool:
    """True when the tensor's memory is page-locked (made by pin_memory())."""
    return bool(_C._is_pinned(self))
