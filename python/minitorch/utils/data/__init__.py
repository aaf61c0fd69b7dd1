"""``minitorch.utils.data``: the import path PyTorch users type for :mod:`minitorch.data`.

    from minitorch.utils.data import DataLoader, Dataset, TensorDataset
    from minitorch.utils.data.distributed import DistributedSampler

Every name here is the same object as in ``minitorch.data``.
"""
from ...data import *  # noqa: F401,F403
from ...data import __all__  # noqa: F401
from . import distributed  # noqa: E402,F401
