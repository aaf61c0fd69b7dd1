"""``nn.PairwiseDistance`` and ``nn.CosineSimilarity``: thin wrappers over ``nn.functional``."""
from __future__ import annotations

from . import functional as F
from .module import Module


class PairwiseDistance(Module):
    """``F.pairwise_distance``: the p-norm of ``x1 - x2 + eps`` along the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """``F.cosine_similarity``: ``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
