"""``Fetcher``: one batch of a dataset from a list of indices, the same in the main
process and in every worker process."""
from __future__ import annotations

import itertools

import numpy as np

from .. import _C
from .collate import default_collate


def can_take_whole_batches(dataset, collate_fn) -> bool:
    """Whether a batch can come from ``dataset.get_batch(indices)``: one C++ gather instead
    of ``batch_size`` Python calls. Only when nothing runs per sample (no custom collate,
    no transforms), since get_batch skips both."""
    return (collate_fn is default_collate and hasattr(dataset, "get_batch")
            and getattr(dataset, "transform", None) is None
            and getattr(dataset, "target_transform", None) is None)


class Fetcher:
    """``fetch(indices)`` -> a batch (``auto_collation``), or ``fetch(index)`` -> one sample
    (``batch_size=None``)."""

    def __init__(self, dataset, collate_fn, auto_collation: bool):
        self.dataset = dataset
        self.collate_fn = collate_fn
        self.auto_collation = auto_collation
        self.whole_batches = auto_collation and can_take_whole_batches(dataset, collate_fn)

    def fetch(self, indices):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[indices])
        if self.whole_batches:
            return self.dataset.get_batch(_C.from_numpy(np.asarray(indices, dtype=np.int64).reshape(-1)))
        return self.collate_fn([self.dataset[i] for i in indices])


class IterableFetcher:
    """``fetch(batch)`` for an IterableDataset: the next ``len(batch)`` samples of the
    dataset's stream, collated (a last, shorter batch unless ``drop_last``), or the next
    sample (``batch_size=None``); StopIteration once the stream ends."""

    def __init__(self, dataset, collate_fn, auto_collation: bool, drop_last: bool):
        self.stream = iter(dataset)
        self.collate_fn = collate_fn
        self.auto_collation = auto_collation
        self.drop_last = drop_last

    def fetch(self, batch):
        if not self.auto_collation:
            return self.collate_fn(next(self.stream))
        samples = list(itertools.islice(self.stream, len(batch)))
        if not samples or (self.drop_last and len(samples) < len(batch)):
            raise StopIteration
        return self.collate_fn(samples)
