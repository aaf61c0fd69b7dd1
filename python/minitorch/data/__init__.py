"""``minitorch.data``: datasets and the DataLoader."""
from .dataloader import DataLoader, Generator, default_collate
from .dataset import Dataset, Subset, TensorDataset, random_split
from .mnist import MNIST, DatasetNotFoundError, DownloadError, FashionMNIST, IDXError, read_idx

__all__ = ["DataLoader", "Dataset", "DatasetNotFoundError", "DownloadError", "FashionMNIST", "Generator",
           "IDXError", "MNIST", "Subset", "TensorDataset", "default_collate", "random_split", "read_idx"]

from .distributed import DistributedSampler  # noqa: E402

__all__.append("DistributedSampler")
