"""``minitorch.utils.data.distributed``: PyTorch's import path for
:class:`minitorch.data.DistributedSampler` (the same object)."""
from ...data.distributed import DistributedSampler

__all__ = ["DistributedSampler"]
