"""``nn.MultiheadAttention`` with PyTorch's parameters, state_dict keys, masks and shapes.

The heads are a (N, heads, L, head_dim) view of the projected queries, keys and values,
so every head is attended in one batched matmul (``F.scaled_dot_product_attention``'s
helper); the heads are then joined back and go through ``out_proj``.
"""
from __future__ import annotations

import math

from .. import _C
from . import functional as F
from . import init
from ._attention_functional import _attention
from .linear import Linear
from .module import Module
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """A plain ``Linear``; the name is PyTorch's for ``MultiheadAttention.out_proj``, kept so
    reprs match."""


def _check(cond: bool, message: str) -> None:
    """PyTorch checks the shapes given to MultiheadAttention with asserts: an AssertionError."""
    if not cond:
        raise AssertionError(message)


def _additive(mask, dtype, name: str):
    """A bool mask (True = masked out) as 0 / -inf of ``dtype``; a float mask as it is."""
    if mask is None:
        return None
    if not isinstance(mask, _C.Tensor):
        raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(mask).__name__}")
    if mask.dtype == _C.dtype.bool:
        return _C.where(mask, _C._full((), float("-inf"), dtype, mask.device), 0.0)
    _check(mask.dtype.is_floating_point, f"only bool and floating types of {name} are supported")
    return mask


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads of size ``embed_dim // num_heads`` each:
    ``out_proj(concat_h softmax(Q_h K_h^T / sqrt(head_dim) + mask) V_h)`` with
    ``Q = query W_q^T + b_q`` and likewise K and V.

    Shapes (``batch_first=False``): query (L, N, E), key (S, N, kdim), value (S, N, vdim);
    (N, L, E)... with ``batch_first=True``; unbatched (L, E). ``key_padding_mask`` (N, S)
    and a bool ``attn_mask`` (L, S) or (N * num_heads, L, S) mark with True what is
    *not* attended (the opposite of ``F.scaled_dot_product_attention``); float masks are added.
    Returns ``(attn_output, attn_weights)``, the weights averaged over heads (N, L, S) unless
    ``average_attn_weights=False`` (N, num_heads, L, S), or None with ``need_weights=False``.

    >>> mha = minitorch.nn.MultiheadAttention(16, 4, batch_first=True)
    >>> x = minitorch.randn(2, 5, 16)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (minitorch.Size([2, 5, 16]), minitorch.Size([2, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported in minitorch")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout}")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        _check(self.head_dim * num_heads == embed_dim, "embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_C._empty((3 * embed_dim, embed_dim), dtype, device))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_C._empty((embed_dim, embed_dim), dtype, device))
            self.k_proj_weight = Parameter(_C._empty((embed_dim, self.kdim), dtype, device))
            self.v_proj_weight = Parameter(_C._empty((embed_dim, self.vdim), dtype, device))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C._empty((3 * embed_dim,), dtype, device))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's: xavier_uniform_ projections, zero biases (out_proj.weight keeps Linear's init)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _project(self, query, key, value, same_qk: bool, same_kv: bool):
        """Q, K, V, with as few GEMMs as the inputs allow: one for self-attention (query is key
        is value), two when key is value (a decoder's cross-attention on its memory), as
        PyTorch does. The packed weight and bias are split, not sliced three times: backward
        joins the parts' gradients with one cat."""
        E = self.embed_dim
        w, b = self.in_proj_weight, self.in_proj_bias

        def split_bias(sizes):
            return (None,) * len(sizes) if b is None else b.split(sizes)
        if not self._qkv_same_embed_dim:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        elif same_qk and same_kv:
            return F.linear(query, w, b).split(E, -1)
        elif same_kv:
            (wq, wkv), (bq, bkv) = w.split([E, 2 * E]), split_bias([E, 2 * E])
            return (F.linear(query, wq, bq),) + F.linear(key, wkv, bkv).split(E, -1)
        else:
            wq, wk, wv = w.split(E)
        bq, bk, bv = split_bias([E, E, E])
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def _check_shapes(self, query, key, value, key_padding_mask, attn_mask) -> bool:
        """PyTorch's shape rules (and its AssertionErrors); returns whether the input is batched."""
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, _C.Tensor):
                raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(t).__name__}")
        d = query.dim()
        _check(d in (2, 3), f"query should be unbatched 2D or batched 3D tensor but received {d}-D query tensor")
        kind = "batched (3-D)" if d == 3 else "unbatched (2-D)"
        _check(key.dim() == d and value.dim() == d, f"For {kind} `query`, expected `key` and `value` to be {d}-D but "
               f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            _check(key_padding_mask.dim() == d - 1, f"For {kind} `query`, expected `key_padding_mask` to be `None` "
                   f"or {d - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            _check(attn_mask.dim() in (2, 3), f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                   f"but found {attn_mask.dim()}-D tensor instead")
        _check(query.shape[-1] == self.embed_dim,
               f"was expecting embedding dimension of {self.embed_dim}, but got {query.shape[-1]}")
        _check(key.shape[-1] == self.kdim, f"was expecting key embedding dimension of {self.kdim}, "
               f"but got {key.shape[-1]}")
        _check(value.shape[-1] == self.vdim, f"was expecting value embedding dimension of {self.vdim}, "
               f"but got {value.shape[-1]}")
        _check(tuple(key.shape[:-1]) == tuple(value.shape[:-1]),
               f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        return d == 3

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """See the class docstring. ``is_causal`` is a hint that ``attn_mask`` is the causal
        mask (as in PyTorch, the mask must then be given)."""
        batched = self._check_shapes(query, key, value, key_padding_mask, attn_mask)
        same_qk, same_kv = query is key, key is value  # (asked before the transposes make three views)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                               "method `generate_square_subsequent_mask` to create this mask.")
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        # The inputs stay as they are laid out, (N, L, E) with batch_first, else (L, N, E): the
        # projections run on them in place, and the heads are split and joined by views, which
        # the fused attention reads and writes as they lie (no transposed copy either way).
        first = batched and self.batch_first
        b_dim, s_dim = (0, 1) if first else (1, 0)
        N, L, E = query.shape[b_dim], query.shape[s_dim], query.shape[2]
        S, H, hd = key.shape[s_dim], self.num_heads, self.head_dim
        _check(key.shape[b_dim] == N, f"key's batch size {key.shape[b_dim]} does not match query's {N}")

        # One additive mask broadcastable to the scores (N, H, L, S).
        mask = _additive(attn_mask, query.dtype, "attn_mask")
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (L, S):
                    raise _C.InputError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be {(L, S)}.")
            else:
                if tuple(mask.shape) != (N * H, L, S):
                    raise _C.InputError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                        f"{(N * H, L, S)}.")
                mask = mask.reshape(N, H, L, S)
        kpm = _additive(key_padding_mask, query.dtype, "key_padding_mask")
        if kpm is not None:
            _check(tuple(kpm.shape) == (N, S), f"expecting key_padding_mask shape of {(N, S)}, but got "
                   f"{tuple(key_padding_mask.shape)}")
            kpm = kpm.reshape(N, 1, 1, S)
            mask = kpm if mask is None else mask + kpm

        def heads(t, T):  # (N, H, T, hd)
            return t.reshape(N, T, H, hd).transpose(1, 2) if first else t.reshape(T, N, H, hd).permute(1, 2, 0, 3)

        q, k, v = self._project(query, key, value, same_qk, same_kv)
        q, k, v = heads(q, L), heads(k, S), heads(v, S)
        dropout = self.dropout if self.training else 0.0
        if need_weights:
            out, weights = _attention(q, k, v, mask, dropout)
        else:  # as PyTorch: without weights, F.scaled_dot_product_attention (the fused kernels on CUDA)
            out, weights = F.scaled_dot_product_attention(q, k, v, mask, dropout), None
        # heads joined: (N, L, E) with batch_first, else (L, N, E)
        out = self.out_proj(out.transpose(1, 2).reshape(N, L, E) if first else out.permute(2, 0, 1, 3).reshape(L, N, E))
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        return out, (weights if batched else weights.squeeze(0))
