"""``default_collate``: turns a list of samples into one batch.

Samples are nested containers (tuples, lists, dicts) whose leaves are tensors, NumPy
arrays or numbers; the batch has the same structure, each leaf stacked along a new
first dim::

    [(img0, 3), (img1, 7)]           -> (Tensor[2, ...], Tensor([3, 7]))
    [{"x": img0, "y": 3}, {...}]      -> {"x": Tensor[2, ...], "y": Tensor([3, ...])}
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import _C


def default_collate(samples):
    """Stacks a list of samples: tensors, arrays and numbers into one tensor per field,
    recursing into tuples, lists and dicts; strings stay a list."""
    first = samples[0]
    if isinstance(first, _C.Tensor):
        if first.dtype == _C.dtype.bfloat16:  # NumPy has no bfloat16: stack in minitorch
            import minitorch

            return minitorch.stack([s.detach() for s in samples])
        arr = np.stack([s.detach().cpu().numpy() for s in samples])
        return _C._from_numpy_copy(arr, first.dtype, first.device)
    if isinstance(first, np.ndarray) and first.dtype != object:
        return _C.from_numpy(np.ascontiguousarray(np.stack(samples)))
    if isinstance(first, (bool, int, float, np.number)):
        import minitorch

        if isinstance(first, float) and not isinstance(first, np.floating):
            return minitorch.tensor(samples, dtype=minitorch.float64)  # Python floats are doubles, as in PyTorch
        return minitorch.tensor(samples)
    if isinstance(first, (str, bytes)):
        return list(samples)
    if isinstance(first, Mapping):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return type(first)(*(default_collate(list(field)) for field in zip(*samples)))
    if isinstance(first, Sequence):
        if any(len(s) != len(first) for s in samples):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return tuple(default_collate(list(field)) for field in zip(*samples))
    raise TypeError(f"default_collate: don't know how to batch samples of type {type(first).__name__}")


def default_convert(data):
    """What DataLoader applies to single samples when ``batch_size=None`` turns batching
    off: NumPy arrays become tensors (inside containers too); everything else stays."""
    if isinstance(data, np.ndarray) and data.dtype != object:
        return _C.from_numpy(np.ascontiguousarray(data))
    if isinstance(data, Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return type(data)(default_convert(d) for d in data)
    return data
