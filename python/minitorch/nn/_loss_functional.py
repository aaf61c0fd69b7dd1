"""The losses of ``nn.functional`` beyond cross-entropy, NLL, MSE, L1 and BCE, as tensor
ops: regression (``smooth_l1_loss``, ``huber_loss``, ``gaussian_nll_loss``,
``poisson_nll_loss``), distributions (``kl_div``), margins and embeddings
(``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss``,
``multilabel_soft_margin_loss``, ``cosine_embedding_loss``, ``triplet_margin_loss``,
``triplet_margin_with_distance_loss``), and the multi-class hinge losses
(``multi_margin_loss``, ``multilabel_margin_loss``).

Each computes PyTorch's per-element formula from existing ops (autograd differentiates
those), then reduces it as ``mse_loss`` does: ``reduction`` is ``'none'``, ``'mean'`` or
``'sum'``.
"""
from __future__ import annotations

import math
import warnings

from .. import _C
from . import functional as F
from ._distance_functional import pairwise_distance


def _check_dims_equal(op: str, **tensors) -> None:
    """PyTorch's check of the margin losses: every tensor has the same number of dims."""
    dims = {name: t.dim() for name, t in tensors.items()}
    if len(set(dims.values())) > 1:
        sizes = ", ".join(f"{name}: {tuple(t.shape)}" for name, t in tensors.items())
        raise ValueError(f"{op}: all input tensors should have the same number of dimensions, but got sizes {sizes}")


def _broadcast_pair(input, target):
    """The regression losses' broadcast of a target of another shape (with mse_loss's warning)."""
    F._warn_if_broadcast(input, target)
    shape = _C.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    return input.expand(shape), target.expand(shape)


def _kl_div_reduction(reduction: str) -> None:
    if reduction not in ("none", "batchmean", "sum", "mean"):
        raise ValueError(f"kl_div: reduction must be 'none', 'batchmean', 'sum' or 'mean', got {reduction!r}")


def kl_div(input, target, reduction: str = "mean", log_target: bool = False):
    """Kullback-Leibler divergence of ``target`` from the distribution whose log-probabilities
    are ``input``, per element: ``target * (log(target) - input)`` (0 where target is 0), or
    ``exp(target) * (target - input)`` when ``log_target`` (target given as log-probabilities).

    ``reduction='batchmean'`` divides the sum by the batch size (``input.shape[0]``): that is
    the KL divergence of each sample averaged over the batch. ``'mean'`` averages over every
    element, as PyTorch still does (with a warning).

    >>> p = minitorch.tensor([[0.5, 0.5]])
    >>> F.kl_div(minitorch.tensor([[0.25, 0.75]]).log(), p, reduction="batchmean")
    tensor(0.1438)
    """
    _kl_div_reduction(reduction)
    if reduction == "mean":
        warnings.warn("kl_div: reduction 'mean' divides the total loss by both the batch size and the support "
                      "size. 'batchmean' divides only by the batch size, and aligns with the KL div math "
                      "definition.", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # target * log(target) with 0 at target == 0 (and no log(0) anywhere, so no NaN gradient)
        safe = _C.where(target > 0, target, 1.0)
        loss = target * safe.log() - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() > 0 else total
    return F._reduce(loss, reduction, "kl_div")


def smooth_l1_loss(input, target, reduction: str = "mean", beta: float = 1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``);
    ``beta = 0`` is the L1 loss.

    >>> F.smooth_l1_loss(minitorch.tensor([0.5, 3.0]), minitorch.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    F._reduction(reduction, "smooth_l1_loss")
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return F._reduce((input - target).abs(), reduction, "smooth_l1_loss")
    # huber_loss with delta = beta, over beta: one kernel each (_huber_loss, op_list.h)
    loss = _C._huber_loss(input - target, float(beta)) * (1.0 / beta)
    return F._reduce(loss, reduction, "smooth_l1_loss")


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0):
    """``0.5 d^2`` where ``|d| <= delta``, else ``delta (|d| - 0.5 delta)``: ``delta`` times
    ``smooth_l1_loss`` with ``beta = delta``.

    >>> F.huber_loss(minitorch.tensor([0.5, 3.0]), minitorch.tensor([0.0, 0.0]), reduction="none", delta=2.0)
    tensor([0.1250, 4.0000])
    """
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    F._reduction(reduction, "huber_loss")
    input, target = _broadcast_pair(input, target)
    # one kernel per element (_huber_loss, op_list.h), backward g * clamp(d, -delta, delta)
    return F._reduce(_C._huber_loss(input - target, float(delta)), reduction, "huber_loss")


def margin_ranking_loss(input1, input2, target, margin: float = 0, reduction: str = "mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ``target = 1`` asks for
    ``input1 > input2`` by ``margin``, ``target = -1`` for the opposite."""
    _check_dims_equal("margin_ranking_loss", input1=input1, input2=input2, target=target)
    F._reduction(reduction, "margin_ranking_loss")
    loss = (-target * (input1 - input2) + margin).clamp(min=0.0)
    return F._reduce(loss, reduction, "margin_ranking_loss")


def soft_margin_loss(input, target, reduction: str = "mean"):
    """Two-class logistic loss of ``target`` in {1, -1}: ``log(1 + exp(-target * input))``."""
    F._reduction(reduction, "soft_margin_loss")
    return F._reduce(F.softplus(-(input * target)), reduction, "soft_margin_loss")


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: str = "mean"):
    """``input`` where ``target = 1``, ``max(0, margin - input)`` where ``target = -1`` (``input``
    is usually a distance between two embeddings)."""
    F._reduction(reduction, "hinge_embedding_loss")
    loss = (_C.where(target != 1, (margin - input).clamp(min=0.0), 0.0)
            + _C.where(target != -1, input, 0.0))
    return F._reduce(loss, reduction, "hinge_embedding_loss")


_COSINE_EMBEDDING_EPS = 1e-12  # added to each squared norm, as PyTorch does


def cosine_embedding_loss(input1, input2, target, margin: float = 0, reduction: str = "mean"):
    """``1 - cos(x1, x2)`` where ``target = 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target = -1``. Inputs (N, D) with target (N,), or (D,) with a 0-d target."""
    op = "cosine_embedding_loss"
    if target.dim() not in (0, 1):
        raise ValueError(f"{op}: 0D or 1D target tensor expected, multi-target not supported (got target of "
                         f"shape {tuple(target.shape)})")
    want = target.dim() + 1
    if input1.dim() != want or input2.dim() != want:
        raise ValueError(f"{op}: {target.dim()}D target tensor expects {want}D input tensors, but found inputs "
                         f"with sizes {tuple(input1.shape)} and {tuple(input2.shape)}")
    F._reduction(reduction, op)
    d = target.dim()
    dot = (input1 * input2).sum(d)
    norms = (((input1 * input1).sum(d) + _COSINE_EMBEDDING_EPS) * ((input2 * input2).sum(d) + _COSINE_EMBEDDING_EPS))
    cos = dot / norms.sqrt()
    loss = _C.where(target == 1, 1 - cos, 0.0) + _C.where(target == -1, (cos - margin).clamp(min=0.0), 0.0)
    return F._reduce(loss, reduction, op)


def _triplet_loss(distance, anchor, positive, negative, margin: float, swap: bool, reduction: str, op: str):
    """``max(0, d(a, p) - d(a, n) + margin)`` for a distance function ``d``, reduced."""
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) > 1:
        raise ValueError(f"{op}: the anchor, positive, and negative tensors are expected to have the same number "
                         f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
                         f"{dims[2]}D inputs")
    F._reduction(reduction, op)
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, distance(positive, negative))
    return F._reduce((d_pos - d_neg + margin).clamp(min=0.0), reduction, op)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: str = "mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``pairwise_distance`` (p-norm);
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance."""
    return _triplet_loss(lambda x1, x2: pairwise_distance(x1, x2, p, eps), anchor, positive, negative, margin, swap,
                         reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean"):
    """``triplet_margin_loss`` with any ``distance_function(x1, x2)`` (a non-negative
    real-valued function, e.g. ``1 - F.cosine_similarity``); None is ``pairwise_distance``.
    ``margin`` must be positive.

    >>> a, p, n = minitorch.tensor([[0.0, 0.0]]), minitorch.tensor([[1.0, 0.0]]), minitorch.tensor([[0.0, 3.0]])
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y: (x - y).abs().sum(-1), margin=3.0)
    tensor(1.)
    """
    op = "triplet_margin_with_distance_loss"
    F._reduction(reduction, op)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet_loss(distance, anchor, positive, negative, margin, swap, reduction, op)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, eps: float = 1e-8,
                     reduction: str = "mean"):
    """Negative log-likelihood of counts ``target`` under Poisson(rate): ``exp(input) - target *
    input`` when ``log_input`` (input is log(rate)), else ``input - target * log(input + eps)``.
    ``full`` adds Stirling's approximation of ``log(target!)`` where ``target > 1``."""
    F._reduction(reduction, "poisson_nll_loss")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = _C.where(target > 1, target, 2.0)  # no log of counts <= 1 (they add 0)
        stirling = safe * safe.log() - safe + 0.5 * (safe * (2 * math.pi)).log()
        loss = loss + _C.where(target > 1, stirling, 0.0)
    return F._reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    """Negative log-likelihood of ``target`` under N(input, var):
    ``0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ ``0.5 log(2 pi)`` when
    ``full``). ``var`` has the input's shape, or lacks its last dim, or has 1 there (one
    variance for a whole row); a float is one variance for all. The clamp at ``eps`` does not
    stop the gradient (as in PyTorch).
    """
    op = "gaussian_nll_loss"
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError(f"{op}: var has negative entry/entries ({var})")
        var = _C._full(tuple(input.shape), float(max(var, eps)), input.dtype, input.device)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() > 0 and var.dim() == input.dim() and tuple(input.shape[:-1]) == tuple(var.shape[:-1])
                  and var.shape[-1] == 1):
            raise ValueError(f"{op}: var of shape {tuple(var.shape)} is of incorrect size for input of shape "
                             f"{tuple(input.shape)}")
    F._reduction(reduction, op)
    if bool((var < 0).any()):
        raise ValueError(f"{op}: var has negative entry/entries")
    var = var + (var.clamp(min=eps) - var).detach()  # the value clamped, the gradient that of var
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return F._reduce(loss, reduction, op)


def multilabel_soft_margin_loss(input, target, weight=None, reduction: str = "mean"):
    """One logistic loss per class of (N, C) ``input`` against 0/1 ``target``, averaged over
    the C classes: ``-(t log(sigmoid(x)) + (1 - t) log(sigmoid(-x)))``, times ``weight`` (C,)
    when given. ``reduction`` then acts on the N per-sample losses."""
    op = "multilabel_soft_margin_loss"
    F._reduction(reduction, op)
    # -log(sigmoid(x)) = softplus(-x), computed stably
    loss = target * F.softplus(-input) + (1 - target) * F.softplus(input)
    if weight is not None:
        loss = loss * weight
    if input.dim() == 0:
        raise ValueError(f"{op}: expected an input of shape (N, C) or (C,), got a 0-d tensor")
    return F._reduce(loss.sum(input.dim() - 1) / input.shape[-1], reduction, op)


def _class_scores(input, target, op: str, per_class_target: bool):
    """The multi-class hinge losses' inputs as rows: (N, C) or (C,) (or 0-d: one class) scores
    and an int64 ``target`` of one class per row (``per_class_target=False``: (N,) or 0-d) or
    of the input's shape (a list of classes per row); returns (scores (R, C), target rows,
    the shape of the per-sample loss)."""
    if not isinstance(input, _C.Tensor) or not isinstance(target, _C.Tensor):
        raise TypeError(f"{op}: input and target must be Tensors, got {type(input).__name__} and "
                        f"{type(target).__name__}")
    nd = input.dim()
    if nd > 2 or (nd > 0 and input.shape[-1] == 0):
        raise ValueError(f"{op}: expected a non-empty vector or matrix (with an optional 0-sized batch), got input "
                         f"of shape {tuple(input.shape)}")
    if target.dtype != _C.dtype.int64:
        raise TypeError(f"{op}: expected a target of dtype int64 (class indices), got {target.dtype}")
    rows, C = (input.shape[0] if nd == 2 else 1), (input.shape[-1] if nd > 0 else 1)
    if per_class_target:
        ok = tuple(target.shape) == tuple(input.shape) if nd == 2 else (target.dim() <= 1 and target.numel() == C)
        lo, shape = -1, ((rows,) if target.dim() == 2 else ())
    else:
        ok, lo, shape = target.dim() <= 1 and target.numel() == rows, 0, ((rows,) if target.dim() == 1 else ())
    if not ok:
        raise ValueError(f"{op}: inconsistent target size: {tuple(target.shape)} for input of shape "
                         f"{tuple(input.shape)}")
    if target.numel() and (bool((target < lo).any()) or bool((target >= C).any())):
        bad = target[(target < lo) | (target >= C)].reshape(-1)[0].item()
        raise _C.InputError(f"{op}: target out of range: got class {bad}, expected values in [{lo}, {C}) for input "
                            f"of shape {tuple(input.shape)}")
    t = target.reshape(rows, C if per_class_target else 1)
    return input.reshape(rows, C), t, shape


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                      reduction: str = "mean"):
    """The multi-class hinge loss of (N, C) scores (or (C,)) at int64 classes ``target`` (N,)
    (or 0-d): per sample, ``sum over i != y of w[y] * max(0, margin - x[y] + x[i]) ** p / C``.
    ``p`` is 1 or 2; ``weight`` (C,) scales each sample by its class's weight (after the
    power, as PyTorch computes it).

    >>> F.multi_margin_loss(minitorch.tensor([[0.1, 0.2, 0.4, 0.8]]), minitorch.tensor([3]))
    tensor(0.3250)
    """
    op = "multi_margin_loss"
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    F._reduction(reduction, op)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 supported, got p={p}")
    if weight is not None and weight.dim() != 1:
        raise ValueError(f"{op}: weight must be one-dimensional, got shape {tuple(weight.shape)}")
    x, t, shape = _class_scores(input, target, op, per_class_target=False)
    C = x.shape[1]
    if weight is not None and weight.numel() != C:
        raise ValueError(f"{op}: inconsistent weight size, expected {C} (the classes of input of shape "
                         f"{tuple(input.shape)}) but got {tuple(weight.shape)}")
    hinge = (x - x.gather(1, t) + margin).relu()  # relu: no gradient where the hinge is exactly 0
    if p == 2:
        hinge = hinge * hinge
    others = t != _C._arange(0, C, 1, _C.dtype.int64, x.device)
    loss = _C.where(others, hinge, 0.0).sum(1) * (1.0 / C)
    if weight is not None:
        loss = loss * weight.to(x.dtype)[t.reshape(-1)]
    return F._reduce(loss.reshape(shape), reduction, op)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """The multi-label hinge loss: each row of int64 ``target`` (the input's shape, (N, C) or
    (C,)) lists a sample's classes, ended by the first -1; per sample, ``sum over listed j and
    unlisted i of max(0, 1 - (x[j] - x[i])) / C``: every listed class should score at least
    1 above every other.

    >>> F.multilabel_margin_loss(minitorch.tensor([[0.1, 0.2, 0.4, 0.8]]), minitorch.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    op = "multilabel_margin_loss"
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    F._reduction(reduction, op)
    x, t, shape = _class_scores(input, target, op, per_class_target=True)
    C = x.shape[1]
    listed = (t < 0).long().cumsum(1) == 0  # (N, C): the entries before the first -1
    safe = _C.where(listed, t, 0)
    classes = _C._arange(0, C, 1, _C.dtype.int64, x.device)
    is_target = ((safe.unsqueeze(2) == classes) & listed.unsqueeze(2)).any(1)  # (N, C): class i is listed
    # (N, j, i): the hinge of listed class t[j] against class i
    hinge = (x.unsqueeze(1) - x.gather(1, safe).unsqueeze(2) + 1.0).relu()
    pairs = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = _C.where(pairs, hinge, 0.0).sum((1, 2)) * (1.0 / C)
    return F._reduce(loss.reshape(shape), reduction, op)
