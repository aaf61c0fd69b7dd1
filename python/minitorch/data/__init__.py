"""``minitorch.data``: datasets and the DataLoader."""
from .dataloader import DataLoader, Generator, default_collate
from .dataset import Dataset, TensorDataset
from .mnist import MNIST, DatasetNotFoundError, DownloadError, FashionMNIST, IDXError, read_idx

__all__ = ["DataLoader", "Dataset", "DatasetNotFoundError", "DownloadError", "FashionMNIST", "Generator",
           "IDXError", "MNIST", "TensorDataset", "default_collate", "read_idx"]
