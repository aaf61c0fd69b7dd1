"""Samplers: which dataset indices a DataLoader visits, and in which order.

A sampler yields indices (``SequentialSampler``: 0, 1, 2, ...; ``RandomSampler``: a
shuffle); a ``BatchSampler`` groups them into lists, one list per batch. DataLoader
builds these for you from ``shuffle``, ``batch_size`` and ``drop_last``; pass your own
``sampler=`` or ``batch_sampler=`` to choose the order yourself.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .. import _C
from .generator import Generator, random_seed


class Sampler:
    """Base class: subclasses define ``__iter__`` (the indices) and usually ``__len__``."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices of ``data_source``: a new shuffle each time it is iterated.

    Args:
        replacement: draw each index independently (repeats possible) instead of shuffling.
        num_samples: how many indices to yield (default ``len(data_source)``); without
            replacement, more than ``len(data_source)`` chains several shuffles.
        generator: the random stream; without one, every iteration draws a seed from
            minitorch's global generator, so ``minitorch.manual_seed`` makes it reproducible.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        n = self.num_samples
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={n}")

    @property
    def num_samples(self) -> int:
        # Read len(data_source) each time: the dataset may change size after the sampler is made.
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        # The seed is drawn when iteration starts, not when the sampler is made (as in PyTorch).
        gen = self.generator if self.generator is not None else Generator(random_seed(None))
        if self.replacement:
            yield from gen.integers(n, self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from gen.permutation(n).tolist()
        yield from gen.permutation(n)[:self.num_samples % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order each pass (e.g. a validation split of one
    dataset: ``SubsetRandomSampler(range(50000, 60000))``)."""

    def __init__(self, indices, generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator:
        gen = self.generator if self.generator is not None else Generator(random_seed(None))
        for i in gen.permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``range(len(weights))``, index i drawn with probability
    proportional to ``weights[i]`` (with ``replacement``, independently; without, each at
    most once): how to oversample rare classes of an imbalanced dataset.

    >>> class_weight = 1.0 / class_counts
    >>> sampler = WeightedRandomSampler(class_weight[labels], num_samples=len(labels))
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights.detach().cpu().numpy() if isinstance(weights, _C.Tensor) else np.asarray(weights)
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, non-negative and not all "
                               "zero)")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                               f"({num_samples} > {np.count_nonzero(w)} non-zero weights)")
        self.weights = _C.from_numpy(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        gen = self.generator if self.generator is not None else Generator(random_seed(None))
        yield from gen.choice(self.weights.numpy(), self.num_samples, self.replacement).tolist()

    def __len__(self) -> int:
        return self.num_samples
