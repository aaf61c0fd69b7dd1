"""``pin_memory=True``: batches in page-locked host memory, so copies to the GPU can be
asynchronous. Only meaningful with a real GPU and a ``Tensor.pin_memory()`` method."""
from __future__ import annotations

import warnings

from .. import _C

NO_ACCELERATOR = ("'pin_memory' argument is set as true but no accelerator is found, "
                  "then device pinned memory won't be used.")


def pinning_possible() -> bool:
    """True when pinning can do anything; warns (as PyTorch does) when there is no GPU."""
    import minitorch

    if not minitorch.cuda.is_available() or minitorch.cuda.is_emulated():
        warnings.warn(NO_ACCELERATOR, stacklevel=3)
        return False
    # Tensor.pin_memory may not exist yet: then there is nothing to call.
    return hasattr(_C.Tensor, "pin_memory")


def pin(batch):
    """``batch`` with every tensor replaced by its pinned copy."""
    if isinstance(batch, _C.Tensor):
        return batch.pin_memory()
    if isinstance(batch, dict):
        return type(batch)((k, pin(v)) for k, v in batch.items())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(pin(v) for v in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(pin(v) for v in batch)
    return batch
