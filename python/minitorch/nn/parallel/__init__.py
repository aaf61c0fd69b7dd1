"""``minitorch.nn.parallel``: training one model over several processes
(``DistributedDataParallel``; see ``minitorch.distributed``), and PyTorch's single-process
``DataParallel`` wrapper."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
