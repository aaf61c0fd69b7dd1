"""``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder``, ``nn.TransformerDecoderLayer``,
``nn.TransformerDecoder`` and ``nn.Transformer`` (PyTorch's structure, submodule names,
defaults and state_dict keys).

An encoder layer is self-attention then a two-layer feed-forward block, each wrapped in a
residual connection and a LayerNorm: after the block (``norm_first=False``, the original
paper's "post-norm") or before it (``norm_first=True``, "pre-norm"). A decoder layer has a
third block between the two: attention from the target to the encoder's output ("memory").
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


def _activation(activation):
    """A name ("relu"/"gelu") or any callable (``F.relu``, ``nn.GELU()``...), as PyTorch takes."""
    if isinstance(activation, str):
        return _get_activation_fn(activation)
    if not callable(activation):
        raise TypeError(f"activation must be 'relu', 'gelu' or a callable, got {type(activation).__name__}")
    return activation


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
        self.activation = _activation(activation)

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


class TransformerDecoderLayer(Module):
    """Self-attention on the target, attention from the target to ``memory`` (the encoder's
    output), and feed-forward, each with a residual connection and LayerNorm::

        norm_first=False:  x = norm1(x + sa(x));  x = norm2(x + mha(x, memory));  x = norm3(x + ff(x))
        norm_first=True:   x = x + sa(norm1(x));  x = x + mha(norm2(x), memory);  x = x + ff(norm3(x))

    Shapes as ``TransformerEncoderLayer``: tgt (T, N, d_model) and memory (S, N, d_model),
    batch first with ``batch_first=True``, or unbatched.

    >>> layer = minitorch.nn.TransformerDecoderLayer(d_model=16, nhead=4, batch_first=True)
    >>> layer(minitorch.randn(2, 3, 16), minitorch.randn(2, 5, 16)).shape
    minitorch.Size([2, 3, 16])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation=F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        from .normalization import LayerNorm

        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        """Masks as ``nn.MultiheadAttention``'s: ``tgt_mask`` (T, T) for the self-attention
        (``Transformer.generate_square_subsequent_mask(T)`` hides the future), ``memory_mask``
        (T, S), padding masks (N, T) and (N, S); True (or -inf) marks what is not attended."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=bool(is_causal))[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=bool(is_causal))[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn (each also reading
    ``memory``), then the optional ``norm``.

    >>> layer = minitorch.nn.TransformerDecoderLayer(d_model=16, nhead=4)
    >>> decoder = minitorch.nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(minitorch.randn(3, 2, 16), minitorch.randn(5, 2, 16)).shape
    minitorch.Size([3, 2, 16])
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 0:
            raise ValueError(f"TransformerDecoder: num_layers must be a non-negative int, got {num_layers!r}")
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        """Arguments as ``TransformerDecoderLayer.forward``; ``tgt_is_causal`` is a hint that
        ``tgt_mask`` is the causal mask."""
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder transformer of "Attention Is All You Need": ``encoder`` (a
    ``TransformerEncoder`` of ``num_encoder_layers`` layers and a final LayerNorm) reads
    ``src``; ``decoder`` (likewise) reads ``tgt`` and the encoder's output. Embeddings,
    positional encodings and the output projection are left to the caller, as in PyTorch.
    Every weight matrix (``dim() > 1``) starts Xavier-uniform.

    >>> model = minitorch.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
    ...                                  dim_feedforward=32, batch_first=True)
    >>> src, tgt = minitorch.randn(2, 5, 16), minitorch.randn(2, 3, 16)
    >>> mask = minitorch.nn.Transformer.generate_square_subsequent_mask(3)
    >>> model(src, tgt, tgt_mask=mask).shape
    minitorch.Size([2, 3, 16])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        from .normalization import LayerNorm

        factory = dict(device=device, dtype=dtype)
        layer_args = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                          layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias,
                          **factory)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, **layer_args)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, **layer_args)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        from . import init

        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        """``src`` (S, N, E) and ``tgt`` (T, N, E) ((N, S, E) and (N, T, E) batch first;
        unbatched (S, E) and (T, E)); masks as ``TransformerEncoder`` and ``TransformerDecoder``
        take them. Returns (T, N, E)."""
        batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(f"the batch number of src and tgt must be equal, got src {tuple(src.shape)} and "
                               f"tgt {tuple(tgt.shape)}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model ({self.d_model}), got "
                               f"src {tuple(src.shape)} and tgt {tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """The causal mask for a sequence of ``sz``: a float (sz, sz) tensor, 0 on and below
        the diagonal and -inf above it (position i attends to positions 0..i only)."""
        from .. import full, triu

        return triu(full((sz, sz), float("-inf"), device=device, dtype=dtype), diagonal=1)
