"""Attention as tensor ops: ``F.scaled_dot_product_attention`` and the helper that
``nn.MultiheadAttention`` shares with it.

``softmax(Q K^T * scale + mask) V`` is two batched matmuls around the fused C++ softmax;
autograd differentiates it through those ops. This composed version is the readable
reference and the fallback: on CUDA, ``scaled_dot_product_attention`` takes the fused op
(``_C._scaled_dot_product_attention``: tiled kernels with an online softmax, cuda/attention.cu)
where it applies (see ``_fused``). Masked scores become ``-inf`` before the
softmax, so a row whose every key is masked gives NaN, as in PyTorch's reference formula.
"""
from __future__ import annotations

import math

from .. import _C
from ..ops.creation import arange
from ..profiler import record_function
from . import functional as F

_NEG_INF = float("-inf")


def _causal_mask(L: int, S: int, device):
    """(L, S) bool, True where key j <= query i: the lower triangle, aligned at the top left."""
    return arange(L, device=device).unsqueeze(1) >= arange(S, device=device)


def _attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False, scale=None):
    """``softmax(query @ key^T * scale + mask) @ value``; returns (output, weights).

    ``attn_mask``: bool (True = take part) or float (added to the scores), broadcast to
    (..., L, S). The weights are those after dropout, as ``nn.MultiheadAttention`` returns them.
    """
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        scores = _C.where(_causal_mask(query.shape[-2], key.shape[-2], query.device), scores, _NEG_INF)
    if attn_mask is not None:
        scores = _C.where(attn_mask, scores, _NEG_INF) if attn_mask.dtype == _C.dtype.bool else scores + attn_mask
    weights = F.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, True)
    return weights @ value, weights


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None):
    """Attention of ``query`` (..., L, E) over ``key`` (..., S, E) and ``value`` (..., S, Ev):
    ``softmax(query @ key^T * scale + mask) @ value``, shape (..., L, Ev).

    Args:
        attn_mask: broadcastable to (..., L, S); bool (True = this query may attend to
            this key) or float (added to the scores, e.g. ``-inf`` to block).
        dropout_p: dropout on the attention weights (always applied when > 0; pass 0.0 in eval).
        is_causal: query i attends to keys 0..i only (cannot be combined with ``attn_mask``).
        scale: multiplies the scores; default ``1 / sqrt(E)``.

    >>> q = k = v = minitorch.randn(2, 4, 5, 8)          # (N, heads, L, E)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    minitorch.Size([2, 4, 5, 8])
    """
    op = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.dim() < 2:
            raise _C.InputError(f"{op}: {name} must have at least 2 dims (..., length, features), "
                                f"got shape {tuple(t.shape)}")
    if query.shape[-1] != key.shape[-1]:
        raise _C.InputError(f"{op}: query of shape {tuple(query.shape)} and key of shape {tuple(key.shape)} must have "
                            f"the same last dim ({query.shape[-1]} != {key.shape[-1]})")
    if key.shape[-2] != value.shape[-2]:
        raise _C.InputError(f"{op}: key of shape {tuple(key.shape)} and value of shape {tuple(value.shape)} must "
                            f"have the same length (dim -2: {key.shape[-2]} != {value.shape[-2]})")
    if attn_mask is not None:
        if is_causal:
            raise _C.InputError(f"{op}: Explicit attn_mask should not be set when is_causal=True")
        if not isinstance(attn_mask, _C.Tensor):
            raise TypeError(f"{op}: attn_mask must be a Tensor, got {type(attn_mask).__name__}")
        if attn_mask.dtype != _C.dtype.bool and not attn_mask.dtype.is_floating_point:
            raise _C.DTypeError(f"{op}: Expected attn_mask dtype to be bool or float, but got {attn_mask.dtype}")
        scores_shape = tuple(query.shape[:-1]) + (key.shape[-2],)
        try:
            _C.broadcast_shapes(tuple(attn_mask.shape), scores_shape)
        except ValueError:
            raise _C.InputError(f"{op}: attn_mask of shape {tuple(attn_mask.shape)} cannot be broadcast to the "
                                f"attention scores' shape {scores_shape} (..., L, S)") from None
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if _fused(query, key, value, attn_mask, dropout_p):
        scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
        seed = offset = 0
        if dropout_p > 0.0:
            seed, offset = _take_counters(query, key)
        return _C._scaled_dot_product_attention(query, key, value, attn_mask, is_causal, scale, dropout_p, seed,
                                                offset)
    with record_function(op):  # one profiler event, with the FLOPs of its GEMMs and softmax
        return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale)[0]


_FUSED_DTYPES = (_C.dtype.float32, _C.dtype.float16, _C.dtype.bfloat16)


def _take_counters(query, key) -> tuple[int, int]:
    """The (seed, offset) for the fused dropout's mask, from the "cuda" generator, which then
    moves past the B * L * S counters the mask uses (as a dropout of the weights would), so
    the next call draws another mask and ``minitorch.manual_seed`` replays this one."""
    seed, offset = _C._cuda_rng_state()
    n = math.prod(query.shape[:-1]) * key.shape[-2]
    _C._cuda_set_rng_state(seed, (offset + n) % 2**64)
    return seed, offset


def _fused(query, key, value, attn_mask, dropout_p: float) -> bool:
    """Whether the fused kernels (cpp/src/ops/attention.cpp, cuda/attention.cu: an online
    softmax, no (L, S) matrix) take this call: on CUDA, head dims up to 128, one floating
    dtype and one batch shape for query, key and value, dropout_p below 1, and a mask that
    needs no gradient. Everything else composes matmul, softmax (dropout) and matmul.

    With dropout the kernels keep each weight with probability ``1 - dropout_p``, their mask
    a hash of the generator's (seed, offset) and the weight's position, drawn again by the
    backward instead of stored (``_C._attention_dropout_mask`` rebuilds it); the composed path
    draws its mask with ``F.dropout``, so the two paths give different masks for one seed."""
    from .. import backends

    if query.device.type != "cuda" or not backends.cuda.flash_sdp_enabled() or dropout_p >= 1.0:
        return False
    if query.dtype not in _FUSED_DTYPES or key.dtype != query.dtype or value.dtype != query.dtype:
        return False
    if key.device != query.device or value.device != query.device:
        return False
    batch = tuple(query.shape[:-2])
    if query.dim() != key.dim() or tuple(key.shape[:-2]) != batch or tuple(value.shape[:-2]) != batch:
        return False
    if query.shape[-1] > 128 or value.shape[-1] > 128:
        return False
    return attn_mask is None or (attn_mask.device == query.device and not attn_mask.requires_grad
                                 and attn_mask.dim() <= query.dim())
