"""``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``ChainDataset`` and ``random_split``."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings

import numpy as np

from .. import _C
from .generator import Generator, random_seed


class Dataset:
    """Anything with ``__getitem__(i)`` and ``__len__``. A dataset that can also return a
    whole batch at once defines ``get_batch(indices)`` (an int64 tensor); DataLoader
    then slices in C++ instead of assembling samples one by one in Python."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __add__(self, other) -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples (``__iter__``) instead of indexed ones: lines of files too big to
    hold, generated data. DataLoader batches it as it comes (``shuffle`` and samplers do not
    apply). ``a + b`` chains two streams."""

    def __iter__(self):
        raise NotImplementedError

    def __getitem__(self, index):
        raise TypeError(f"{type(self).__name__} is an IterableDataset: iterate over it; it has no __getitem__")

    def __len__(self) -> int:
        # a TypeError, as len() of an object without one (list() and tqdm then just go on)
        raise TypeError(f"object of type '{type(self).__name__}' has no len()")

    def __add__(self, other) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are rows of tensors that share their first dim: ``TensorDataset(x, y)``.

    Only tensors are accepted, as in PyTorch: NumPy arrays raise a TypeError that says to
    wrap them, ``TensorDataset(minitorch.from_numpy(x), minitorch.from_numpy(y))``.
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, _C.Tensor):
                raise TypeError(f"TensorDataset: expected Tensors, got {type(t).__name__} (argument {i}); "
                                "wrap arrays with minitorch.from_numpy(a) or minitorch.tensor(a)")
        n = tensors[0].shape[0] if tensors[0].dim() else None
        for t in tensors:
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


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order: ``Subset(ds, [0, 5, 7])[1]``
    is ``ds[5]``.

    When ``dataset`` can return whole batches (``get_batch``), so can the Subset, so a
    DataLoader over it still gathers each batch in one C++ call."""

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices
        self._index_tensor = None

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)

    # The dataset's transforms, so that DataLoader sees them (and then does not take whole batches).
    @property
    def transform(self):
        return getattr(self.dataset, "transform", None)

    @property
    def target_transform(self):
        return getattr(self.dataset, "target_transform", None)

    @property
    def get_batch(self):
        """``dataset.get_batch`` of the mapped indices; an AttributeError (so ``hasattr`` is
        False) when the dataset has no ``get_batch``."""
        inner = self.dataset.get_batch  # AttributeError when the dataset cannot batch
        if self._index_tensor is None:
            idx = self.indices
            arr = idx.detach().cpu().numpy() if isinstance(idx, _C.Tensor) else np.asarray(list(idx))
            self._index_tensor = _C.from_numpy(np.ascontiguousarray(arr, dtype=np.int64).reshape(-1))

        def get_batch(indices):
            return inner(_C.index_select(self._index_tensor, 0, indices))

        return get_batch


class ConcatDataset(Dataset):
    """Several datasets one after another: index ``i`` falls in the first dataset whose
    cumulative size exceeds it (``cumulative_sizes``), negative indices count from the end."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} is out of range for {len(self)} samples")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Several IterableDatasets one after another, as one stream."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


def random_split(dataset, lengths, generator: Generator | None = None) -> list:
    """Splits ``dataset`` at random into non-overlapping :class:`Subset` s of the given
    ``lengths``, or of the given fractions of ``len(dataset)`` when they sum to 1 (any
    remainder goes one by one to the first splits, as in PyTorch).

    >>> train, val = random_split(ds, [0.9, 0.1], generator=Generator(0))
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1 (got {frac})")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0. This might result in an empty "
                              "dataset.", stacklevel=2)
        lengths = sizes
    for i, size in enumerate(lengths):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"random_split: lengths must be non-negative ints or fractions that sum to 1, got "
                             f"{size!r} at index {i}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: sum of input lengths ({sum(lengths)}) does not equal the length of the input "
                         f"dataset ({n})")
    if generator is None:  # a seed from minitorch's generator: manual_seed makes the split reproducible
        generator = Generator(random_seed(None))
    order = generator.permutation(n).tolist()
    out, start = [], 0
    for size in lengths:
        out.append(Subset(dataset, order[start:start + int(size)]))
        start += int(size)
    return out
