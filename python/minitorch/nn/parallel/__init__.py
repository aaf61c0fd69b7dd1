"""``minitorch.nn.parallel``: training one model over several processes
(``DistributedDataParallel``; see ``minitorch.distributed``)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
