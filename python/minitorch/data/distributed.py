"""``DistributedSampler``: each rank's share of a data set's indices.

    sampler = DistributedSampler(train_set)              # rank and count from minitorch.distributed
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)                         # a new order every epoch
        for x, y in loader: ...

Rules (PyTorch's): the index list (shuffled when ``shuffle``) is made a multiple of
``num_replicas`` long, by repeating indices from its start (``drop_last=False``) or by
cutting its tail (``drop_last=True``); rank ``r`` takes positions ``r, r + num_replicas,
r + 2 * num_replicas, ...``. So the ranks' shares are disjoint slices of that list and
equally long (every rank runs the same number of steps, which DDP needs). The order
depends only on ``seed + epoch``: every rank computes the same list without talking.
The shuffle is NumPy's, so the orders differ from PyTorch's for the same seed.

Needs only ``len(dataset)``; works with any loader that takes an iterable of indices.
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np


class DistributedSampler:
    """Yields this rank's indices of ``dataset`` for one epoch.

    Args:
        dataset: anything with ``len()``.
        num_replicas: the number of ranks (default: ``minitorch.distributed.get_world_size()``).
        rank: this rank (default: ``minitorch.distributed.get_rank()``).
        shuffle: a new random order every epoch (call :meth:`set_epoch`).
        seed: the shuffle's seed; must be the same on every rank.
        drop_last: cut the list to a multiple of ``num_replicas`` instead of padding it.
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from .. import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: pass num_replicas and rank, or call "
                                   "minitorch.distributed.init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(f"num_replicas should be a positive integer, got {num_replicas!r}")
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas, self.rank = num_replicas, rank
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        n = len(dataset)
        if self.drop_last and n % num_replicas != 0:
            self.num_samples = n // num_replicas  # the tail that would make shares unequal is dropped
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Chooses the epoch's order (with ``shuffle``); call it before each epoch, on every rank."""
        self.epoch = int(epoch)

    def _all_indices(self) -> np.ndarray:
        """The epoch's whole list, padded or cut to ``total_size``: the same on every rank."""
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n)
        else:
            order = np.arange(n)
        if self.total_size <= n:
            return order[:self.total_size]
        if n == 0:
            return order
        repeats = math.ceil(self.total_size / n)  # more padding than the list is long: repeat it whole
        return np.tile(order, repeats)[:self.total_size]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all_indices()[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples
