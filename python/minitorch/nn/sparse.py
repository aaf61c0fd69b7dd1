"""``Embedding``: a lookup table of learnable vectors, one row per index."""
from __future__ import annotations

from .. import _C
from ..autograd import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """``weight[input]``: maps int64 indices of any shape to rows of a
    (num_embeddings, embedding_dim) weight, initialised from N(0, 1).

    With ``padding_idx``, that row starts at zero and receives no gradient, so it stays a
    fixed "padding" vector.

    >>> emb = nn.Embedding(10, 3, padding_idx=0)
    >>> emb(minitorch.tensor([[1, 2, 0]])).shape
    minitorch.Size([1, 3, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight=None, _freeze: bool = False, device=None, dtype=None):
        super().__init__()
        for name, v in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"Embedding: {name} must be a non-negative int, got {v!r}")
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: max_norm, scale_grad_by_freq and sparse are not supported in "
                                      "minitorch")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx must be within num_embeddings ({num_embeddings}), got "
                                 f"{padding_idx}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(_C._empty((num_embeddings, embedding_dim), dtype, device), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: shape of weight {tuple(_weight.shape)} does not match "
                                 f"(num_embeddings, embedding_dim) = ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight shares memory with the 2-D ``embeddings`` (as in PyTorch);
        ``freeze=True`` keeps it out of training (``requires_grad=False``)."""
        if not isinstance(embeddings, _C.Tensor) or embeddings.dim() != 2:
            shape = tuple(embeddings.shape) if isinstance(embeddings, _C.Tensor) else type(embeddings).__name__
            raise ValueError(f"Embedding.from_pretrained: embeddings parameter is expected to be 2-dimensional, "
                             f"got {shape}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)
