"""The losses of ``nn.functional`` beyond cross-entropy, NLL, MSE, L1 and BCE, as tensor
ops: regression (``smooth_l1_loss``, ``huber_loss``, ``gaussian_nll_loss``,
``poisson_nll_loss``), distributions (``kl_div``), margins and embeddings
(``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss``,
``multilabel_soft_margin_loss``, ``cosine_embedding_loss``, ``triplet_margin_loss``).

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


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: str = "mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``pairwise_distance`` (p-norm);
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance."""
    op = "triplet_margin_loss"
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) > 1:
        raise ValueError(f"{op}: the anchor, positive, and negative tensors are expected to have the same number "
                         f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
                         f"{dims[2]}D inputs")
    F._reduction(reduction, op)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return F._reduce((d_pos - d_neg + margin).clamp(min=0.0), reduction, op)


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
