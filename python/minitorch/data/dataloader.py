"""``DataLoader``: batches of a dataset, in the main process or in worker processes.

    loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=2)
    for x, y in loader:
        ...

With ``num_workers=0`` every batch is made in the training loop's own process, between
steps. With ``num_workers=N`` N worker processes prepare the next batches while the
model trains on the current one (see ``_multiprocess.py``); the batches and their order
are the same either way.
"""
from __future__ import annotations

import multiprocessing
import os
import warnings

from ._fetch import Fetcher, IterableFetcher
from ._multiprocess import MultiProcessIter
from ._pin_memory import pin, pinning_possible
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .generator import Generator, random_seed
from .sampler import BatchSampler, RandomSampler, SequentialSampler

# Fixed once the loader exists: changing them would desynchronise the samplers built from them.
_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Iterates over ``dataset`` in batches.

    Args:
        batch_size: samples per batch; ``None`` yields single samples (no collation).
        shuffle: a new random order every epoch (from ``generator``, or from
            ``minitorch.manual_seed`` when none is given, so runs are reproducible).
        sampler: the order of indices (instead of ``shuffle``).
        batch_sampler: yields whole lists of indices (instead of ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: worker processes that load batches ahead (0: load in this process).
        collate_fn: merges a list of samples into a batch (default: ``default_collate``).
        pin_memory: page-locked batches for faster copies to a GPU.
        drop_last: skip the last, smaller batch.
        timeout: with workers, the most seconds to wait for one batch (0: forever).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker at start.
        multiprocessing_context: how workers start: "fork", "spawn", "forkserver" or a
            context object (default: the platform's default).
        generator: the random stream for shuffling and for the workers' seeds.
        prefetch_factor: batches in flight per worker (default 2 with workers).
        persistent_workers: keep the workers alive from one epoch to the next.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None, multiprocessing_context=None,
                 generator: Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False):
        if isinstance(num_workers, bool) or not isinstance(num_workers, int):
            raise TypeError(f"num_workers should be an int, but got num_workers={num_workers!r}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. Let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        iterable = isinstance(dataset, IterableDataset)
        if iterable:  # a stream: no order to choose, and (here) no workers
            for option, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {option} option, but "
                                     f"got {option}={value!r}")
            if num_workers > 0:
                raise NotImplementedError("DataLoader: worker processes for an IterableDataset are not supported in "
                                          "minitorch; use num_workers=0")
            sampler = _Unindexed()
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # validates batch_size

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)
        self.persistent_workers = persistent_workers
        self._iterator = None  # the persistent workers' iterator
        self._initialized = True
        self._check_worker_number()

    def __setattr__(self, name, value):
        if getattr(self, "_initialized", False) and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context!r}")
        self._multiprocessing_context = context

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What a pass iterates: lists of indices (batches), or single indices (batch_size=None)."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):  # the stream's length, if it has one, in batches
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return MultiProcessIter(self)
        if self._iterator is None or self._iterator._shut_down:  # first epoch, or its workers failed
            self._iterator = MultiProcessIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def _check_worker_number(self) -> None:
        """Warns when there are more workers than cores: they would only take turns."""
        if self.num_workers == 0:
            return
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cores and self.num_workers > cores:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes, but this machine has "
                          f"{cores} CPU cores available to it; workers beyond that only take turns and may make "
                          f"loading slower. Consider num_workers <= {cores}.",
                          stacklevel=2)


class _SingleProcessIter:
    """One pass with ``num_workers=0``: each batch is made when it is asked for."""

    def __init__(self, loader: DataLoader):
        random_seed(loader.generator)  # the workers' base seed: drawn here too, so the shuffle matches
        self._sampler_iter = iter(loader._index_sampler)
        if isinstance(loader.dataset, IterableDataset):
            self._fetcher = IterableFetcher(loader.dataset, loader.collate_fn, loader._auto_collation, loader.drop_last)
        else:
            self._fetcher = Fetcher(loader.dataset, loader.collate_fn, loader._auto_collation)
        self._pin = loader.pin_memory and pinning_possible()
        self._loader = loader

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self):
        batch = self._fetcher.fetch(next(self._sampler_iter))
        return pin(batch) if self._pin else batch


class _Unindexed:
    """The sampler of an IterableDataset: no indices, only "the next one", forever (the
    stream decides when to stop)."""

    def __iter__(self):
        while True:
            yield None
