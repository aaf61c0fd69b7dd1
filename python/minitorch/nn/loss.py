"""Loss layers: thin wrappers over ``nn.functional``."""
from __future__ import annotations

from . import functional as F
from .distance import PairwiseDistance
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        F._reduction(reduction, type(self).__name__)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class ``weight``, kept as a buffer (in the state_dict) as PyTorch does."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """``F.cross_entropy``: log-softmax + NLL of logits (N, C) / (N, C, d1, ...) against
    class indices or class probabilities, with ``weight``, ``ignore_index`` and
    ``label_smoothing``."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class CTCLoss(_Loss):
    """``F.ctc_loss``: the CTC loss of (T, N, C) log-probabilities against unaligned label
    sequences, for speech and handwriting models (``blank``: the class index of "no label")."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class KLDivLoss(_Loss):
    """``F.kl_div``: ``input`` log-probabilities, ``target`` probabilities (log-probabilities
    when ``log_target``). Use ``reduction='batchmean'`` for the KL divergence per sample."""

    def __init__(self, *, reduction: str = "mean", log_target: bool = False):
        Module.__init__(self)
        F._kl_div_reduction(reduction)
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """``F.smooth_l1_loss``: quadratic below ``beta``, linear above."""

    def __init__(self, *, reduction: str = "mean", beta: float = 1.0):
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``F.huber_loss``: quadratic up to ``delta``, linear (slope ``delta``) above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    """``F.soft_margin_loss``: logistic loss of +-1 targets."""

    def __init__(self, *, reduction: str = "mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class _MarginLoss(_Loss):
    """A loss with a margin (``default_margin`` when none is given): ``forward`` calls
    ``F.<functional>(*inputs, margin=, reduction=)``."""

    functional = ""
    default_margin = 0.0

    def __init__(self, margin: float | None = None, *, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = self.default_margin if margin is None else margin

    def forward(self, *inputs):
        return getattr(F, self.functional)(*inputs, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    """``F.margin_ranking_loss`` of ``(input1, input2, target)``, margin 0 by default."""

    functional = "margin_ranking_loss"


class HingeEmbeddingLoss(_MarginLoss):
    """``F.hinge_embedding_loss`` of ``(input, target)``: ``input`` where target is 1,
    ``max(0, margin - input)`` where it is -1; margin 1 by default."""

    functional = "hinge_embedding_loss"
    default_margin = 1.0


class CosineEmbeddingLoss(_MarginLoss):
    """``F.cosine_embedding_loss`` of ``(input1, input2, target)``, margin 0 by default."""

    functional = "cosine_embedding_loss"


class TripletMarginLoss(_Loss):
    """``F.triplet_margin_loss``: the anchor nearer the positive than the negative by ``margin``."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False, *,
                 reduction: str = "mean"):
        super().__init__(reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """``F.poisson_nll_loss``: counts ``target`` under a Poisson of rate ``exp(input)`` (or ``input``)."""

    def __init__(self, log_input: bool = True, full: bool = False, *, eps: float = 1e-8, reduction: str = "mean"):
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """``F.gaussian_nll_loss``: ``target`` under N(input, var); called as ``loss(input, target, var)``."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """``F.multilabel_soft_margin_loss``: one logistic loss per class, averaged over classes.
    ``weight`` (C,) is a buffer (in the state_dict, moved by ``to()``), as in PyTorch."""

    def __init__(self, weight=None, *, reduction: str = "mean"):
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """``F.multi_margin_loss``: the multi-class hinge loss of (N, C) scores at class indices,
    ``p`` 1 or 2, with an optional per-class ``weight`` (a buffer, as in PyTorch)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean"):
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got p={p}")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """``F.multilabel_margin_loss``: every class a row of ``target`` lists (up to its first
    -1) should score at least 1 above every class it does not."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``F.triplet_margin_with_distance_loss``: the triplet loss with any distance function
    (by default an ``nn.PairwiseDistance()``, then a child module, as in PyTorch)."""

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
        super().__init__(reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)
