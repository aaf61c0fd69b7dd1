"""``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder`` (PyTorch's structure,
submodule names, defaults and state_dict keys).

A layer is self-attention then a two-layer feed-forward block, each wrapped in a
residual connection and a LayerNorm: after the block (``norm_first=False``, the original
paper's "post-norm") or before it (``norm_first=True``, "pre-norm").
"""
from __future__ import annotations

import copy

from . import functional as F
from .activation import Dropout
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Linear
from .module import Module


def _get_activation_fn(activation: str):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention and feed-forward, each with a residual connection and LayerNorm::

        norm_first=False:  x = norm1(x + sa(x));        x = norm2(x + ff(x))
        norm_first=True:   x = x + sa(norm1(x));        x = x + ff(norm2(x))

    with ``ff(x) = linear2(dropout(activation(linear1(x))))``. Input (S, N, d_model), or
    (N, S, d_model) with ``batch_first=True``, or unbatched (S, d_model).

    >>> layer = minitorch.nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True)
    >>> layer(minitorch.randn(2, 5, 16)).shape
    minitorch.Size([2, 5, 16])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        from .normalization import LayerNorm

        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """``src_mask`` (S, S) or (N * nhead, S, S) and ``src_key_padding_mask`` (N, S) follow
        ``nn.MultiheadAttention``: True (or -inf) marks what is not attended."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies: each has its own weights),
    applied in turn, then the optional ``norm``.

    >>> layer = minitorch.nn.TransformerEncoderLayer(d_model=16, nhead=4)
    >>> encoder = minitorch.nn.TransformerEncoder(layer, num_layers=2)
    >>> encoder(minitorch.randn(5, 2, 16)).shape
    minitorch.Size([5, 2, 16])
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 0:
            raise ValueError(f"TransformerEncoder: num_layers must be a non-negative int, got {num_layers!r}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = False  # minitorch has no nested tensors; accepted for PyTorch's signature
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None):
        """``mask`` and ``src_key_padding_mask`` as in ``TransformerEncoderLayer``; ``is_causal``
        is a hint that ``mask`` is the causal mask."""
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if self.norm is not None:
            output = self.norm(output)
        return output
