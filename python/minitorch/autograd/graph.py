"""``minitorch.autograd.graph``: hooks on the tensors a graph saves for backward.

Every op that needs a tensor in its backward (``exp`` its output, ``mul`` its inputs,
``matmul`` both matrices) saves it on its graph node. Inside
``with saved_tensors_hooks(pack_hook, unpack_hook):`` each such tensor is passed to
``pack_hook`` when it is saved, and the node keeps only what ``pack_hook`` returned;
backward passes that to ``unpack_hook`` to get the tensor back. That is how activations
can be moved to the CPU (``save_on_cpu``), compressed, or dropped and recomputed
(``minitorch.utils.checkpoint``).

    >>> def pack(t): return t.numpy().copy()
    >>> def unpack(a): return minitorch.tensor(a)
    >>> with minitorch.autograd.graph.saved_tensors_hooks(pack, unpack):
    ...     y = x.exp()           # exp's node keeps a NumPy array instead of y
    >>> y.sum().backward()        # unpack turns it back into a tensor
"""
from __future__ import annotations

from typing import Any, Callable

from .. import _C


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> Any`` runs on each tensor saved for backward
    inside it, ``unpack_hook(packed) -> Tensor`` when backward needs it (which must give a
    tensor of the same shape, dtype and device). Nested contexts: the innermost applies."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc) -> None:
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Keeps the tensors saved for backward in CPU memory (optionally pinned, so the copy
    back runs asynchronously) and moves them back to their device in backward: GPU memory
    for activations traded for transfers."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(t):
            if t.device.type == "cpu":
                return (t.device, t)
            packed = t.to("cpu")
            if pin_memory:
                packed = packed.pin_memory()
            return (t.device, packed)

        def unpack(packed):
            device, t = packed
            return t if t.device == device else t.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


__all__ = ["save_on_cpu", "saved_tensors_hooks"]
