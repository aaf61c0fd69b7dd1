"""``Dataset`` and ``TensorDataset``."""
from __future__ import annotations

from .. import _C


class Dataset:
    """Anything with ``__getitem__(i)`` and ``__len__``. A dataset that can also return a
    whole batch at once defines ``get_batch(indices)`` (an int64 tensor); DataLoader
    then slices in C++ instead of assembling samples one by one in Python."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples are rows of tensors that share their first dim: ``TensorDataset(x, y)``."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].dim() else None
        for t in tensors:
            if not isinstance(t, _C.Tensor):
                raise TypeError(f"TensorDataset: expected Tensors, got {type(t).__name__}")
            if t.dim() == 0 or t.shape[0] != n:
                raise ValueError("TensorDataset: size mismatch between tensors (first dims "
                                 f"{[tuple(x.shape)[:1] for x in tensors]})")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def get_batch(self, indices):
        return tuple(_C.index_select(t, 0, indices) for t in self.tensors)
