"""Lets tensors cross into "spawn" and "forkserver" worker processes.

A forked worker inherits the dataset in its memory. A spawned worker starts a fresh
interpreter and receives the dataset pickled by multiprocessing's ``ForkingPickler``; a
minitorch tensor cannot be pickled by itself, so this registers, for that pickler only,
how to send one: its values as a NumPy array, its dtype, device and ``requires_grad``.
(A big dataset is copied into each spawned worker this way; ``fork`` shares it instead.)
"""
from __future__ import annotations

import numpy as np
from multiprocessing.reduction import ForkingPickler

from .. import _C


def _rebuild_tensor(array: np.ndarray, device: str, requires_grad: bool):
    t = _C.from_numpy(array)
    if device != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    array = np.array(t.detach().cpu().numpy(), copy=True)  # 0-dim stays 0-dim
    return _rebuild_tensor, (array, str(t.device), bool(t.requires_grad))


ForkingPickler.register(_C.Tensor, _reduce_tensor)
