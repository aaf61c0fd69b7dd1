"""Loss layers: thin wrappers over ``nn.functional``."""
from __future__ import annotations

from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        F._reduction(reduction, type(self).__name__)
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    """Fused log-softmax + NLL on (N, C) logits and (N,) int64 labels."""

    def __init__(self, reduction: str = "mean", ignore_index: int = -100):
        super().__init__(reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.reduction, self.ignore_index)


class NLLLoss(_Loss):
    def __init__(self, reduction: str = "mean", ignore_index: int = -100):
        super().__init__(reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.reduction, self.ignore_index)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class BCELoss(_Loss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.reduction)
