"""``minitorch.data``: datasets, samplers and the DataLoader (also importable as ``minitorch.utils.data``)."""
from ._worker import get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .distributed import DistributedSampler
from .generator import Generator
from .mnist import MNIST, DatasetNotFoundError, DownloadError, FashionMNIST, IDXError, read_idx
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "IterableDataset", "SubsetRandomSampler",
           "WeightedRandomSampler", "DataLoader", "Dataset", "DatasetNotFoundError", "DistributedSampler", "DownloadError",
           "FashionMNIST", "Generator", "IDXError", "MNIST", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
           "TensorDataset", "default_collate", "default_convert", "get_worker_info", "random_split", "read_idx"]
