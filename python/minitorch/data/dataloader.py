"""``DataLoader``: batches of a dataset, optionally shuffled with a seedable generator."""
from __future__ import annotations

import numpy as np

from .. import _C


class Generator:
    """A seedable source of shuffles: ``DataLoader(ds, shuffle=True, generator=Generator().manual_seed(0))``."""

    def __init__(self, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def manual_seed(self, seed: int) -> "Generator":
        self._rng = np.random.default_rng(seed)
        return self

    def permutation(self, n: int) -> np.ndarray:
        return self._rng.permutation(n)


def default_collate(samples):
    """Stacks a list of samples: tuples per field, tensors/numbers into one tensor."""
    first = samples[0]
    if isinstance(first, (tuple, list)):
        return tuple(default_collate([s[i] for s in samples]) for i in range(len(first)))
    if isinstance(first, _C.Tensor):
        arr = np.stack([s.detach().cpu().numpy() for s in samples])
        return _C._from_numpy_copy(arr, first.dtype, first.device)
    if isinstance(first, (bool, int, float, np.number)):
        import minitorch

        return minitorch.tensor(samples)
    raise TypeError(f"default_collate: don't know how to batch samples of type {type(first).__name__}")


class DataLoader:
    """Iterates over ``dataset`` in batches.

    Args:
        batch_size: samples per batch.
        shuffle: a new random order every epoch (from ``generator``, or from
            ``minitorch.manual_seed`` when none is given, so runs are reproducible).
        drop_last: skip the last, smaller batch.
    """

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 generator: Generator | None = None, collate_fn=None):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size!r}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.generator = generator
        self.collate_fn = collate_fn or default_collate

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self) -> np.ndarray:
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n, dtype=np.int64)
        gen = self.generator
        if gen is None:  # draw a seed from minitorch's generator: manual_seed makes it reproducible
            seed = int(_C._randint(0, 2**62, (), None, None).item())
            gen = Generator(seed)
        return gen.permutation(n).astype(np.int64)

    def __iter__(self):
        order = self._order()
        ds = self.dataset
        # Whole batches in one C++ gather when the dataset can (and no per-sample transform runs).
        fast = (hasattr(ds, "get_batch") and self.collate_fn is default_collate
                and getattr(ds, "transform", None) is None and getattr(ds, "target_transform", None) is None)
        for b in range(len(self)):
            idx = order[b * self.batch_size:(b + 1) * self.batch_size]
            if fast:
                yield self.dataset.get_batch(_C.from_numpy(idx))
            else:
                yield self.collate_fn([self.dataset[int(i)] for i in idx])
