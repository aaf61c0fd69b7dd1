"""``embedding_bag``: the sum, mean or max of the embedding rows of each bag of indices,
without materialising the per-index embeddings as an (N, L, D) output (PyTorch's fused
op for bag-of-words models and recommendation systems).

Here the bags are laid out on the host (NumPy) as a padded (B, L) table of positions with
a mask: a bag of fewer than L indices is padded, and padding_idx entries are masked out.
The rows are picked with ``index_select`` and reduced along L, so the gradient is that
of index_select (rows picked twice get both gradients).
"""
from __future__ import annotations

import numpy as np

from .. import _C

_MODES = ("sum", "mean", "max")


def _int64(t, name: str):
    if not isinstance(t, _C.Tensor) or t.dtype != _C.dtype.int64:
        got = t.dtype if isinstance(t, _C.Tensor) else type(t).__name__
        raise TypeError(f"embedding_bag: expected {name} of dtype int64, got {got}")
    return t.detach().cpu().numpy().astype(np.int64)


def embedding_bag(input, weight, offsets=None, max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False, padding_idx: int | None = None):
    """Reduces the rows of ``weight`` (num_embeddings, D) picked by each bag of ``input``:

    - 2-D ``input`` (B, L): B bags of L indices each (``offsets`` must be None);
    - 1-D ``input`` (N,) with ``offsets`` (B,): bag b is ``input[offsets[b]:offsets[b + 1]]``
      (with ``include_last_offset``, ``offsets`` has B + 1 entries, the last being N).

    ``mode``: ``"sum"``, ``"mean"`` or ``"max"``; an empty bag gives zeros. ``per_sample_weights``
    (same shape as ``input``, ``mode="sum"`` only) scales each row; ``padding_idx`` entries are
    left out of their bag (and out of the mean's count). Returns (B, D).

    >>> w = minitorch.tensor([[1.0, 1.0], [2.0, 4.0], [3.0, 0.0]])
    >>> F.embedding_bag(minitorch.tensor([0, 1, 2]), w, minitorch.tensor([0, 2]), mode="sum")
    tensor([[3., 5.],
            [3., 0.]])
    """
    op = "embedding_bag"
    if isinstance(weight, _C.Tensor) and weight.dtype == _C.dtype.int64 and isinstance(input, _C.Tensor) \
            and input.dtype.is_floating_point:
        raise TypeError("embedding_bag: Argument order of nn.functional.embedding_bag was changed: it is "
                        "embedding_bag(input, weight, ...), not embedding_bag(weight, input, ...)")
    idx = _int64(input, "indices (input)")
    if not isinstance(weight, _C.Tensor) or weight.dim() != 2:
        shape = tuple(weight.shape) if isinstance(weight, _C.Tensor) else type(weight).__name__
        raise ValueError(f"{op}: weight must be 2-D (num_embeddings, embedding_dim), got {shape}")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({tuple(input.shape)})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as input is treated is a "
                             "mini-batch of fixed length sequences. However, found offsets of type "
                             f"{type(offsets).__name__}")
        b, length = idx.shape
        pos = np.arange(b * length).reshape(b, length)
        mask = np.ones((b, length), bool)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None")
        if not isinstance(offsets, _C.Tensor) or offsets.dim() != 1:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor")
        offs = _int64(offsets, "offsets")
        n = idx.shape[0]
        if offs.size and offs[0] != 0:
            raise ValueError(f"embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                             f"has to start from position 0. However, got {int(offs[0])}")
        if offs.size and (offs[-1] > n or np.any(np.diff(offs) < 0)):
            raise ValueError(f"embedding_bag: offsets must be non-decreasing and at most the input's length {n}, "
                             f"got {offs.tolist()}")
        if include_last_offset:
            if offs.size == 0:
                raise ValueError("embedding_bag: include_last_offset needs at least one offset")
            starts, ends = offs[:-1], offs[1:]
        else:
            starts, ends = offs, np.append(offs[1:], n).astype(np.int64)
        lens = ends - starts
        length = int(lens.max()) if lens.size else 0
        steps = np.arange(length)
        mask = steps[None, :] < lens[:, None]
        pos = np.where(mask, starts[:, None] + steps[None, :], 0)
    else:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _MODES:
        raise ValueError("embedding_bag: mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("embedding_bag: max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("embedding_bag: max mode does not support sparse weights")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: max_norm, scale_grad_by_freq and sparse are not supported in "
                                  "minitorch")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding_bag: padding_idx must be within num_embeddings ({num}), got {padding_idx}")
        padding_idx %= num
    flat = idx.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= num):
        bad = int(flat.min()) if flat.min() < 0 else int(flat.max())
        raise IndexError(f"embedding_bag: index {bad} is out of range for {num} embeddings")
    ids = flat[pos] if flat.size else np.zeros(pos.shape, np.int64)
    if padding_idx is not None:
        mask = mask & (ids != padding_idx)
    ids = np.where(mask, ids, 0)
    nbags = pos.shape[0]
    device = weight.device
    rows = weight.index_select(0, _C._from_numpy_copy(ids.reshape(-1), _C.dtype.int64, device))
    rows = rows.reshape(nbags, length, dim)
    keep = _C._from_numpy_copy(mask.astype(np.float64)[:, :, None], weight.dtype, device)
    if mode == "max":
        # masked entries cannot win; an empty bag's -inf becomes 0
        filled = _C.where(keep > 0, rows, _C._full((), float("-inf"), weight.dtype, device))
        best = filled.max(1).values if length else _C._full((nbags, dim), 0.0, weight.dtype, device)
        nonempty = _C._from_numpy_copy(mask.any(1)[:, None], _C.dtype.bool, device)
        return _C.where(nonempty, best, _C._full((), 0.0, weight.dtype, device))
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)
        picked = psw.index_select(0, _C._from_numpy_copy(pos.reshape(-1), _C.dtype.int64, device)) if flat.size \
            else _C._full((pos.size,), 0.0, weight.dtype, device)
        keep = keep * picked.reshape(nbags, length, 1)
    out = (rows * keep).sum(1)
    if mode == "mean":
        count = np.maximum(mask.sum(1), 1).astype(np.float64)[:, None]
        out = out / _C._from_numpy_copy(count, weight.dtype, device)
    return out
