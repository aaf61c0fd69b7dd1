"""``minitorch.nn.functional`` (usually ``import minitorch.nn.functional as F``):
stateless layers and losses with PyTorch's names and signatures.

The heavy ones (``linear``, ``log_softmax``, ``softmax``, ``cross_entropy``,
``nll_loss``) are fused C++ ops with C++ backward; the rest are compositions of
tensor ops and get their gradients from those.
"""
from __future__ import annotations

import functools
import inspect
import math
import warnings

import numpy as np

from .. import _C
from ..autograd import no_grad
from ..ops._args import numpy_names as _numpy_names
from ..ops.inplace import write_into as _write_into

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction: str, op: str) -> int:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return _REDUCTIONS[reduction]


def _reduce(loss, reduction: str, op: str):
    r = _reduction(reduction, op)
    return loss if r == 0 else (loss.mean() if r == 1 else loss.sum())


def _check_same_shape(input, target, op: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{op}: target size {tuple(target.shape)} must be the same as input size {tuple(input.shape)}")


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``; weight is (out_features, in_features)."""
    return _C._linear(input, weight, bias)


def _inplace_capable(fn=None, *, kernel: str | None = None, param: str | None = None):
    """Makes ``fn(input, ..., inplace=True)`` write its result into ``input``, with PyTorch's
    in-place rules (ops/inplace.py: inside a graph the result's gradient is recorded and
    becomes ``input``'s history), as ``nn.ReLU(inplace=True)`` expects.

    ``kernel``: the C++ elementwise op that computes ``fn`` (``_leaky_relu``); in place it
    runs as ``_C._unary_(input, kernel)``, or ``_C._binary_(input, kernel, <param>)`` with the
    argument named ``param`` (the slope): one kernel writing into ``input``, inside a graph
    too (a copy of ``input`` first where the backward reads it), instead of computing the
    result aside, copying it in and cloning ``input``."""
    if fn is None:
        return lambda f: _inplace_capable(f, kernel=kernel, param=param)
    sig = inspect.signature(fn)
    op = fn.__name__ + "_"

    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):
        if args or kwargs:
            bound = sig.bind(input, *args, **kwargs)
            if bound.arguments.get("inplace"):
                if kernel is not None and isinstance(input, _C.Tensor):
                    if param is None:
                        return _C._unary_(input, kernel)
                    bound.apply_defaults()
                    return _C._binary_(input, kernel, bound.arguments[param])
                bound.arguments["inplace"] = False
                rest_args, rest_kwargs = bound.args[1:], bound.kwargs
                return _write_into(input, op, lambda x: fn(x, *rest_args, **rest_kwargs))
        return fn(input, *args, **kwargs)

    return wrapper


def relu(input, inplace: bool = False):
    # inplace: the C++ relu_ writes into input in one kernel (inside a graph too; its node
    # saves the result), where the generic in-place wrapper would compute, copy and clone.
    return input.relu_() if inplace else input.relu()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def gelu(input, approximate: str = "none"):
    """``x * Phi(x)`` with Phi the standard normal CDF: ``0.5 x (1 + erf(x / sqrt 2))``.
    ``approximate="tanh"``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    One fused kernel forward and one backward (``_gelu`` / ``_gelu_tanh`` of op_list.h)."""
    if approximate == "none":
        return _C._gelu(input)
    if approximate == "tanh":
        return _C._gelu_tanh(input)
    raise ValueError(f"gelu: approximate argument must be either 'none' or 'tanh', got {approximate!r}")


@_inplace_capable(kernel="_silu")
def silu(input, inplace: bool = False):
    """``x * sigmoid(x)`` (also called swish); one fused kernel (``_silu``)."""
    return _C._silu(input)


@_inplace_capable(kernel="_leaky_relu", param="negative_slope")
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where ``x > 0``, else ``negative_slope * x`` (one fused kernel, ``_leaky_relu``)."""
    return _C._leaky_relu(input, negative_slope)


@_inplace_capable(kernel="_elu", param="alpha")
def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (one fused kernel, ``_elu``)."""
    return _C._elu(input, alpha)


def softplus(input, beta: float = 1, threshold: float = 20):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``; with
    the defaults one fused kernel (``_softplus``)."""
    if beta == 1 and threshold == 20:
        return _C._softplus(input)
    bx = input * beta
    soft = bx.clamp(max=threshold).exp().log1p() * (1.0 / beta)  # clamped: no inf in the unused branch
    return _C.where(bx > threshold, input, soft)


@_numpy_names
def softmax(input, dim: int, _stacklevel: int = 3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (computed stably); ``dtype`` casts the input first."""
    return _C._softmax(input if dtype is None else input.to(dtype), dim)


@_numpy_names
def log_softmax(input, dim: int, _stacklevel: int = 3, dtype=None):
    """``x - logsumexp(x)`` along ``dim``: stable for large logits; ``dtype`` casts the input first."""
    return _C._log_softmax(input if dtype is None else input.to(dtype), dim)


# ---- the other activations: nn/_activation_functional.py ----
from ._activation_functional import (  # noqa: E402,F401
    celu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, logsigmoid, mish, prelu, relu6, rrelu, rrelu_, selu,
    softmin, softshrink, softsign, tanhshrink, threshold)


# ---- PyTorch's in-place spellings: F.relu_(x) is F.relu(x, inplace=True) ----

def relu_(input):
    return relu(input, inplace=True)


def elu_(input, alpha: float = 1.0):
    return elu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope: float = 0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha: float = 1.0):
    return celu(input, alpha, inplace=True)


_threshold = threshold  # (threshold_'s argument of that name hides the function)


def threshold_(input, threshold: float, value: float):
    return _threshold(input, threshold, value, inplace=True)


def _warn_if_broadcast(input, target) -> None:
    """PyTorch's regression losses broadcast a target of another shape, with a warning: a
    (4, 1) prediction against a (4,) target gives a (4, 4) loss, rarely what was meant."""
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated ``size_average`` / ``reduce`` flags, when given, override ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{'none' if not reduce else 'mean' if size_average else 'sum'}' instead.", stacklevel=3)
    return "none" if not reduce else ("mean" if size_average else "sum")


def _classes_last(input, target, op: str):
    """(N, C, d1, ...) logits and (N, d1, ...) labels as (N*d1*..., C) and (N*d1*...,), and
    unbatched (C,) with a scalar label as one row; returns them and the shape of the
    per-element loss (for ``reduction="none"``)."""
    if input.dim() == 0:
        raise ValueError(f"{op}: input must have at least 1 dimension (the classes), got a 0-d tensor")
    if input.dim() == 1:
        if target.dim() != 0:
            raise ValueError(f"{op}: for unbatched input of shape {tuple(input.shape)} the target must be a "
                             f"0-d class index, got shape {tuple(target.shape)}")
        return input.unsqueeze(0), target.unsqueeze(0), ()
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(f"{op}: expected target of shape {expected} for input of shape {tuple(input.shape)}, "
                         f"got {tuple(target.shape)}")
    if input.dim() == 2:
        return input, target, expected
    C = input.shape[1]
    return input.movedim(1, -1).reshape(-1, C), target.reshape(-1), expected


def _check_weight(weight, C: int, op: str) -> None:
    if weight is not None and (weight.dim() != 1 or weight.shape[0] != C):
        raise RuntimeError(f"{op}: weight tensor should be defined either for all {C} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")


def _weighted_nll(logp, target, weight, ignore_index: int, reduction: str):
    """NLL of (M, C) log-probabilities with per-class ``weight``: ``-w[t] logp[t]`` per row,
    the mean divides by the sum of the weights of the rows not ignored (PyTorch's rule)."""
    keep = target != ignore_index
    safe = _C.where(keep, target, 0)  # an ignored row still needs an in-range index to gather
    picked = -logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = weight.to(logp.dtype)[safe] * keep.to(logp.dtype)
    loss = picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """Log-softmax + negative log-likelihood, as PyTorch's ``F.cross_entropy``.

    ``input``: (N, C) logits, (N, C, d1, ...) (class dim 1) or unbatched (C,). ``target``:
    int64 class indices (N,) / (N, d1, ...) / (), or class probabilities of ``input``'s
    shape (float). ``weight`` (C,) rescales each class; ``ignore_index`` labels count for
    nothing; ``label_smoothing`` mixes the target with the uniform distribution:
    ``(1 - eps) * target + eps / C``. Class targets are one fused C++ op (weights and
    smoothing included); class probabilities compose log_softmax and a sum.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    if not isinstance(input, _C.Tensor) or not isinstance(target, _C.Tensor):
        raise TypeError(f"cross_entropy: input and target must be Tensors, got {type(input).__name__} and "
                        f"{type(target).__name__}")
    class_dim = 0 if input.dim() == 1 else 1
    C = input.shape[class_dim] if input.dim() > 0 else 0
    _check_weight(weight, C, "cross_entropy")
    if target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):  # class probabilities
        logp = log_softmax(input, class_dim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            prod = prod * weight.to(logp.dtype).reshape((C,) + (1,) * (input.dim() - 1 - class_dim))
        if reduction == "none":
            return -prod.sum(class_dim)
        total = -prod.sum()
        return total if reduction == "sum" else total / (input.numel() // max(C, 1) if input.numel() else float("nan"))
    x, t, loss_shape = _classes_last(input, target, "cross_entropy")
    # One fused C++ op, class weights and label smoothing included (kernels class_loss and
    # class_loss_backward): one kernel for the rows' losses, one for their mean or sum.
    loss = _C._cross_entropy(x, t, _reduction(reduction, "cross_entropy"), ignore_index, weight,
                             float(label_smoothing))
    return loss.reshape(loss_shape) if reduction == "none" else loss


def _cross_entropy_composed(x, t, weight, ignore_index: int, reduction: str, label_smoothing: float):
    """cross_entropy of (M, C) logits in ordinary ops: log_softmax, the weighted NLL and the
    smoothing's share, as PyTorch defines them (the tests' reference for the fused op)."""
    C = x.shape[1]
    logp = log_softmax(x, 1)
    if weight is None:
        loss = _C._nll_loss(logp, t, _reduction(reduction, "cross_entropy"), ignore_index)
    else:
        loss = _weighted_nll(logp, t, weight, ignore_index, reduction)
    if label_smoothing > 0:
        # (1 - eps) * nll + eps / C * smooth, smooth = -sum_c w_c logp_c per row, averaged like
        # the nll (over the weights of the rows kept, or their count).
        keep = (t != ignore_index).to(logp.dtype)
        smooth = -(logp * weight.to(logp.dtype)).sum(1) if weight is not None else -logp.sum(1)
        smooth = smooth * keep
        if reduction == "sum":
            smooth = smooth.sum()
        elif reduction == "mean":
            denom = (weight.to(logp.dtype)[_C.where(t != ignore_index, t, 0)] * keep).sum() \
                if weight is not None else keep.sum()
            smooth = smooth.sum() / denom
        loss = loss * (1 - label_smoothing) + smooth * (label_smoothing / C)
    return loss


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C) / (N, C, d1, ...) /
    (C,) at int64 ``target`` (N,) / (N, d1, ...) / (); ``weight`` and ``ignore_index`` as
    in ``cross_entropy``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _reduction(reduction, "nll_loss")
    if input.dim() > 0:
        _check_weight(weight, input.shape[0 if input.dim() == 1 else 1], "nll_loss")
    x, t, loss_shape = _classes_last(input, target, "nll_loss")
    loss = _C._nll_loss(x, t, _reduction(reduction, "nll_loss"), ignore_index, weight)  # one fused op
    return loss.reshape(loss_shape) if reduction == "none" else loss


def _floating_pair(input, target) -> bool:
    return (isinstance(input, _C.Tensor) and isinstance(target, _C.Tensor) and input.is_floating_point()
            and target.is_floating_point())


def mse_loss(input, target, reduction: str = "mean"):
    """``(input - target)^2``, reduced. One kernel per element (``_mse_loss``, op_list.h)
    and one for the reduction; backward ``g * 2 (input - target)``, one kernel."""
    _warn_if_broadcast(input, target)
    loss = _C._mse_loss(input, target) if _floating_pair(input, target) else (input - target) ** 2
    return _reduce(loss, reduction, "mse_loss")


def l1_loss(input, target, reduction: str = "mean"):
    """``|input - target|``, reduced. One kernel per element (``_l1_loss``, op_list.h)
    and one for the reduction; backward ``g * sign(input - target)``, one kernel."""
    _warn_if_broadcast(input, target)
    loss = _C._l1_loss(input, target) if _floating_pair(input, target) else (input - target).abs()
    return _reduce(loss, reduction, "l1_loss")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
    """BCE of probabilities ``input`` in [0, 1]; logs are clamped at -100 like PyTorch.
    ``weight`` (broadcastable to the input) rescales each element's loss. One kernel per
    element (``_binary_cross_entropy``, op_list.h) and one for the reduction; backward
    ``g * (p - y) / max(p (1 - p), 1e-12)``, one kernel."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_shape(input, target, "binary_cross_entropy")
    loss = _C._binary_cross_entropy(input, target)
    return _reduce(loss if weight is None else loss * weight, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """BCE of logits, stable for large |x|, gradient ``sigmoid(x) - target``. ``weight``
    rescales each element's loss; ``pos_weight`` (per class, broadcast over the last dim)
    rescales the positive term: ``-(pos_weight t log s(x) + (1 - t) log(1 - s(x)))``.

    Each element's loss is one kernel (``_binary_cross_entropy_with_logits``, op_list.h:
    ``max(x, 0) - x t + log(1 + exp(-|x|))``, whose gradient is exact at x = 0 where a
    composition of relu and abs would have a kink), then one for the reduction."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    loss = _C._binary_cross_entropy_with_logits(input, target)
    if pos_weight is not None:
        from .. import ones_like as _ones_like

        # -log s(x) = bce(x, 1): the positive term's share of the loss, scaled by pos_weight - 1 more
        loss = loss + (pos_weight - 1) * target * _C._binary_cross_entropy_with_logits(input, _ones_like(input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1/(1-p)``.

    Floating input: one fused kernel each way (the mask, drawn as ``rand() >= p``, kept as
    bytes for backward). float16 / bfloat16 draw in float32, as PyTorch does, so they get the
    masks a float32 input would get from the same seed."""
    if training and 0.0 < p < 1.0 and isinstance(input, _C.Tensor) and input.dtype.is_floating_point:
        return _C._dropout(input, p)
    return _dropout_mask(input, p, training, tuple(input.shape))


def _feature_dropout(input, p: float, training: bool):
    """Zeroes whole channels: one keep/drop draw per (sample, channel), broadcast over the rest."""
    return _dropout_mask(input, p, training, tuple(input.shape[:2]) + (1,) * (input.dim() - 2))


def _dropout_mask(input, p: float, training: bool, mask_shape: tuple):
    """Dropout with one keep/drop draw per element of ``mask_shape`` (broadcast to the input)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    # The scale goes into the small mask first: one pass over the input forward, and one
    # (g * mask) backward, instead of a multiply by the bool mask and another by the scale.
    if isinstance(input, _C.Tensor) and input.dtype.is_floating_point:
        # The scaled mask (0 or 1 / (1 - p)) is the fused dropout of ones: three launches
        # (ones, dropout, the product) instead of five (rand, >=, to, *, *).
        return input * _C._dropout(_C._full(mask_shape, 1.0, input.dtype, input.device), p)
    keep = _C._rand(mask_shape, input.dtype, input.device) >= p
    return input * (keep.to(input.dtype) * (1.0 / (1.0 - p)))


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability ``p`` and scales
    the rest by ``1/(1-p)``."""
    return _channel_dropout("dropout1d", input, 1, p, training)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels (2-D feature maps) of (N, C, H, W) input with probability ``p``.

    Like PyTorch, a 3-D input is taken as (N, C, L) (channel-wise 1-D dropout) with a warning."""
    if input.dim() not in (3, 4):
        raise ValueError(f"dropout2d: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    if input.dim() == 3:
        warnings.warn("dropout2d: received a 3D input and assuming that channel-wise 1D dropout behavior is "
                      "desired (input taken as (N, C, L)), as PyTorch does; use dropout1d for that", stacklevel=2)
    return _feature_dropout(input, p, training)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels (3-D feature maps) of (N, C, D, H, W) or unbatched (C, D, H, W)
    input with probability ``p`` and scales the rest by ``1/(1-p)``."""
    return _channel_dropout("dropout3d", input, 3, p, training)


def _channel_dropout(op: str, input, spatial: int, p: float, training: bool):
    """dropout1d / dropout3d: (N, C, *spatial) input, or unbatched (C, *spatial)."""
    if input.dim() not in (spatial + 1, spatial + 2):
        raise ValueError(f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, got "
                         f"shape {tuple(input.shape)}")
    if input.dim() == spatial + 1:
        return _feature_dropout(input.unsqueeze(0), p, training).squeeze(0)
    return _feature_dropout(input, p, training)


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    return input.flatten(start_dim, end_dim)


def one_hot(tensor, num_classes: int = -1):
    """(…,) int64 labels -> (…, num_classes) int64 one-hot rows."""
    if tensor.dtype != _C.dtype.int64:
        raise TypeError(f"one_hot: expected an int64 tensor, got {tensor.dtype}")
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    classes = _C._arange(0, num_classes, 1, _C.dtype.int64, tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


# ---- attention: nn/_attention_functional.py ----
from ._attention_functional import scaled_dot_product_attention  # noqa: E402,F401

# ---- more losses, distances and bilinear: nn/_loss_functional.py, nn/_distance_functional.py ----
from ._distance_functional import bilinear, pairwise_distance  # noqa: E402,F401
from ._loss_functional import (  # noqa: E402,F401
    _kl_div_reduction, cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div,
    margin_ranking_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, poisson_nll_loss,
    smooth_l1_loss, soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)


# ---- convolution and pooling (NCHW) ----

def _pair(v, name: str, op: str):
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {v!r}")
        return (int(v[0]), int(v[1]))
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}: {name} must be an int or a pair of ints, got {type(v).__name__}")
    return (v, v)


def _batched(input, rank: int, op: str):
    """(C, ...) -> (1, C, ...) for unbatched input, like PyTorch; returns (x, unbatched)."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dim() == rank - 1:
        return input.unsqueeze(0), True
    if input.dim() != rank:
        raise ValueError(f"{op}: expected a {rank - 1}-D (unbatched) or {rank}-D (batched) input, "
                         f"got shape {tuple(input.shape)}")
    return input, False


def _tuple_n(v, n: int, name: str, op: str):
    """An int or an n-sequence of ints as an n-tuple (PyTorch's _single / _pair)."""
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"{op}: {name} must be an int or a {n}-tuple of ints, got {v!r}")
        return tuple(int(x) for x in v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}: {name} must be an int or a {n}-tuple of ints, got {type(v).__name__}")
    return (v,) * n


def _check_groups(groups, op: str) -> int:
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"{op}: groups must be an int, got {type(groups).__name__}")
    if groups <= 0:
        raise ValueError(f"{op}: groups must be a positive integer, got {groups}")
    return groups


def _same_padding(x, weight, dilation, stride, op: str):
    """PyTorch's padding='same': the total padding per spatial dim is dilation*(k-1), split
    evenly; an odd total puts the extra row/column at the end (right/bottom), which is an
    F.pad of the input before a symmetric convolution. Returns (x, symmetric padding)."""
    n = len(dilation)
    if any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
    totals = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(n)]
    extra = [t % 2 for t in totals]
    if any(extra):
        amounts = []
        for i in reversed(range(n)):  # F.pad lists the last dim first
            amounts += [0, extra[i]]
        x = pad(x, amounts)
    return x, tuple(t // 2 for t in totals)


def _conv_padding(x, weight, padding, stride, dilation, op: str):
    n = len(stride)
    if isinstance(padding, str):
        if padding == "valid":
            return x, (0,) * n
        if padding == "same":
            return _same_padding(x, weight, dilation, stride, op)
        raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a {n}-tuple, got {padding!r}")
    return x, _tuple_n(padding, n, "padding", op)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of (N, C, H, W) input with (O, C/groups, KH, KW)
    weight, computed as im2col + GEMMs in C++ (one GEMM per group). ``padding`` may be an
    int, a pair, or "valid"/"same" (stride 1; an odd total pads one more at the end).

    >>> F.conv2d(minitorch.ones(1, 4, 5, 5), minitorch.ones(4, 1, 3, 3), groups=4).shape
    minitorch.Size([1, 4, 3, 3])
    """
    x, unbatched = _batched(input, 4, "conv2d")
    stride, dilation = _pair(stride, "stride", "conv2d"), _pair(dilation, "dilation", "conv2d")
    groups = _check_groups(groups, "conv2d")
    if not isinstance(weight, _C.Tensor):
        raise TypeError(f"conv2d: weight must be a Tensor, got {type(weight).__name__}")
    if weight.dim() != 4:
        raise ValueError("conv2d: expected a 4-D weight (out_channels, in_channels/groups, KH, KW), got shape "
                         f"{tuple(weight.shape)}")
    x, padding = _conv_padding(x, weight, padding, stride, dilation, "conv2d")
    out = _C._conv2d(x, weight, bias, stride, padding, dilation, groups)
    return out.squeeze(0) if unbatched else out


def _check_conv_shapes(input, x, weight, bias, groups: int, padding: tuple, dilation: tuple, op: str) -> None:
    """The checks of a convolution written from conv2d (conv1d, conv3d), made before it
    reshapes, so that messages name ``op`` and the shapes the caller passed. ``x``: the
    batched (and 'same'-padded) input, ``padding``: the symmetric padding still to apply."""
    if x.shape[1] != weight.shape[1] * groups:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {x.shape[1]} channels, but weight of "
                         f"shape {tuple(weight.shape)} with groups={groups} expects {weight.shape[1] * groups} "
                         "input channels")
    if weight.shape[0] % groups:
        raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} has {weight.shape[0]} output channels, "
                         f"which is not divisible by groups={groups}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} does not match {weight.shape[0]} output channels")
    n = len(padding)
    padded = tuple(x.shape[2 + i] + 2 * padding[i] for i in range(n))
    spans = tuple(dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(n))
    if min(padding) >= 0 and min(dilation) > 0 and any(a < b for a, b in zip(padded, spans)):
        kernel, dil, size = ((weight.shape[2], dilation[0], f"length {padded[0]}") if n == 1 else
                             (tuple(weight.shape[2:]), dilation, f"size {padded}"))
        raise ValueError(f"{op}: kernel of size {kernel} (dilation {dil}) is larger than the padded input "
                         f"of {size} for input shape {tuple(input.shape)}")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C, L) input with (O, C/groups, K) weight: a conv2d with height 1
    (the lectures' sliding window)."""
    x, unbatched = _batched(input, 3, "conv1d")
    (s,), (d,) = _tuple_n(stride, 1, "stride", "conv1d"), _tuple_n(dilation, 1, "dilation", "conv1d")
    groups = _check_groups(groups, "conv1d")
    if not isinstance(weight, _C.Tensor) or weight.dim() != 3:
        shape = tuple(weight.shape) if isinstance(weight, _C.Tensor) else type(weight).__name__
        raise ValueError(f"conv1d: expected a 3-D weight (out_channels, in_channels/groups, K), got {shape}")
    x, (p,) = _conv_padding(x, weight, padding, (s,), (d,), "conv1d")
    _check_conv_shapes(input, x, weight, bias, groups, (p,), (d,), "conv1d")
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), (0, p), (1, d), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of (N, C, D, H, W) input with (O, C/groups, KD, KH, KW)
    weight. ``padding`` may be an int, a triple, or "valid"/"same" (as conv2d's).

    Written as im2col in depth: the KD depth taps of every output depth become channels of a
    2-D image, (N*D_out, KD*C, H, W), and one grouped conv2d with the (O, KD*C/groups, KH, KW)
    weight does the rest. Its gradients are those of the ops it is made of.

    >>> F.conv3d(minitorch.ones(1, 2, 4, 5, 5), minitorch.ones(3, 2, 3, 3, 3), padding=1).shape
    minitorch.Size([1, 3, 4, 5, 5])
    """
    op = "conv3d"
    x, unbatched = _batched(input, 5, op)
    stride, dilation = _tuple_n(stride, 3, "stride", op), _tuple_n(dilation, 3, "dilation", op)
    groups = _check_groups(groups, op)
    if not isinstance(weight, _C.Tensor) or weight.dim() != 5:
        shape = tuple(weight.shape) if isinstance(weight, _C.Tensor) else type(weight).__name__
        raise ValueError(f"{op}: expected a 5-D weight (out_channels, in_channels/groups, KD, KH, KW), got {shape}")
    x, padding = _conv_padding(x, weight, padding, stride, dilation, op)
    _check_conv_shapes(input, x, weight, bias, groups, padding, dilation, op)
    if min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
        raise ValueError(f"{op}: stride and dilation must be positive and padding non-negative, got stride={stride}, "
                         f"padding={padding}, dilation={dilation}")
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = stride, padding, dilation
    out_channels, kd = weight.shape[0], weight.shape[2]
    if pd:
        x = pad(x, (0, 0, 0, 0, pd, pd))  # depth only: conv2d pads H and W itself
    n, c, h, w = x.shape[0], x.shape[1], x.shape[3], x.shape[4]
    # The depth windows as a view, (N, C, D_out, H, W, KD), then channels (group, tap, C/groups)
    # so that each of conv2d's groups sees its own channels at every tap.
    cols = x.unfold(2, dd * (kd - 1) + 1, sd)[..., ::dd]
    d_out = cols.shape[2]
    cols = cols.reshape(n, groups, c // groups, d_out, h, w, kd).permute(0, 3, 1, 6, 2, 4, 5)
    cols = cols.reshape(n * d_out, c * kd, h, w)
    w2 = weight.permute(0, 2, 1, 3, 4).reshape(out_channels, kd * weight.shape[1], weight.shape[3], weight.shape[4])
    out = conv2d(cols, w2, None, (sh, sw), (ph, pw), (dh, dw), groups)
    out = out.reshape(n, d_out, out_channels, out.shape[2], out.shape[3]).permute(0, 2, 1, 3, 4)
    out = out + bias.reshape(out_channels, 1, 1, 1) if bias is not None else out.contiguous()
    return out.squeeze(0) if unbatched else out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution of (N, C, H, W) input with (C, O/groups, KH, KW) weight:
    the input gradient of the conv2d with these settings, run forward (col2im(W^T @ x[n])).
    Output size per dim: (H - 1)*stride - 2*padding + dilation*(KH - 1) + output_padding + 1.

    >>> F.conv_transpose2d(minitorch.ones(1, 2, 4, 4), minitorch.ones(2, 3, 4, 4), stride=2, padding=1).shape
    minitorch.Size([1, 3, 8, 8])
    """
    op = "conv_transpose2d"
    x, unbatched = _batched(input, 4, op)
    if not isinstance(weight, _C.Tensor):
        raise TypeError(f"{op}: weight must be a Tensor, got {type(weight).__name__}")
    out = _C._conv_transpose2d(x, weight, bias, _pair(stride, "stride", op), _pair(padding, "padding", op),
                               _pair(output_padding, "output_padding", op), _check_groups(groups, op),
                               _pair(dilation, "dilation", op))
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution of (N, C, L) input with (C, O/groups, K) weight: a
    conv_transpose2d with height 1."""
    op = "conv_transpose1d"
    x, unbatched = _batched(input, 3, op)
    if not isinstance(weight, _C.Tensor) or weight.dim() != 3:
        shape = tuple(weight.shape) if isinstance(weight, _C.Tensor) else type(weight).__name__
        raise ValueError(f"{op}: expected a 3-D weight (in_channels, out_channels/groups, K), got {shape}")
    (s,), (p,), (op_,), (d,) = (_tuple_n(v, 1, name, op) for v, name in (
        (stride, "stride"), (padding, "padding"), (output_padding, "output_padding"), (dilation, "dilation")))
    groups = _check_groups(groups, op)
    if x.shape[1] != weight.shape[0]:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {x.shape[1]} channels, but weight of shape "
                         f"{tuple(weight.shape)} expects {weight.shape[0]} input channels")
    out = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), (0, p), (0, op_), groups, (1, d))
    out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution of (N, C, D, H, W) input with (C, O/groups, KD, KH, KW)
    weight (3-D U-Net decoders). Output size per dim: (D - 1)*stride - 2*padding +
    dilation*(KD - 1) + output_padding + 1.

    Written from conv_transpose2d: each depth tap kd of the weight spreads every input depth
    d over H and W (one conv_transpose2d over the N*D planes), and its planes land at output
    depth d*stride + kd*dilation (index_add); the depth padding is cropped at the end.

    >>> F.conv_transpose3d(minitorch.ones(1, 2, 3, 4, 4), minitorch.ones(2, 3, 2, 2, 2), stride=2).shape
    minitorch.Size([1, 3, 6, 8, 8])
    """
    op = "conv_transpose3d"
    x, unbatched = _batched(input, 5, op)
    if not isinstance(weight, _C.Tensor) or weight.dim() != 5:
        shape = tuple(weight.shape) if isinstance(weight, _C.Tensor) else type(weight).__name__
        raise ValueError(f"{op}: expected a 5-D weight (in_channels, out_channels/groups, KD, KH, KW), got {shape}")
    (sd, sh, sw), (pd, ph, pw), (od, oh, ow), (dd, dh, dw) = (_tuple_n(v, 3, name, op) for v, name in (
        (stride, "stride"), (padding, "padding"), (output_padding, "output_padding"), (dilation, "dilation")))
    groups = _check_groups(groups, op)
    if x.shape[1] != weight.shape[0]:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {x.shape[1]} channels, but weight of shape "
                         f"{tuple(weight.shape)} expects {weight.shape[0]} input channels")
    if sd <= 0 or dd <= 0 or pd < 0 or not 0 <= od < max(sd, dd):
        raise ValueError(f"{op}: stride and dilation must be positive, padding non-negative and output_padding "
                         f"smaller than stride or dilation, got stride={sd}, padding={pd}, output_padding={od}, "
                         f"dilation={dd} (depth)")
    if bias is not None and (not isinstance(bias, _C.Tensor) or tuple(bias.shape) != (weight.shape[1] * groups,)):
        got = tuple(bias.shape) if isinstance(bias, _C.Tensor) else type(bias).__name__
        raise ValueError(f"{op}: expected bias to be 1-dimensional with {weight.shape[1] * groups} elements, got {got}")
    if 0 in tuple(x.shape[2:]):
        raise ValueError(f"{op}: Only zero batch or zero channel inputs are supported, but got input shape: "
                         f"{tuple(input.shape)}")
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    kd = weight.shape[2]
    full = (depth - 1) * sd + dd * (kd - 1) + 1 + od  # the output depth before the padding is cropped
    out_depth = full - 2 * pd
    if out_depth <= 0:
        raise ValueError(f"{op}: the output depth would be {out_depth} (input depth {depth}, kernel {kd}, "
                         f"stride {sd}, padding {pd})")
    planes = x.transpose(1, 2).reshape(n * depth, c, x.shape[3], x.shape[4])
    positions = _C._arange(0, depth * sd, sd, _C.dtype.int64, x.device)
    out = None
    for tap in range(kd):
        y = conv_transpose2d(planes, weight[:, :, tap], None, (sh, sw), (ph, pw), (oh, ow), groups, (dh, dw))
        y = y.reshape((n, depth) + tuple(y.shape[1:]))
        if out is None:
            out = _C._full((n, full) + tuple(y.shape[2:]), 0.0, y.dtype, y.device)
        out = out.index_add(1, positions + tap * dd, y)
    out = out[:, pd:pd + out_depth].transpose(1, 2)
    out = out + bias.reshape(-1, 1, 1, 1) if bias is not None else out.contiguous()  # (N, O, D, H, W) in order
    return out.squeeze(0) if unbatched else out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a (N, C, H, W) image as columns: (N, C*KH*KW, L), L the number of
    blocks; row (c, kh, kw) holds, for every block, the pixel that tap sees (im2col, the
    layout conv2d multiplies by its weight). Its adjoint is :func:`fold`.

    >>> F.unfold(minitorch.arange(16.0).reshape(1, 1, 4, 4), 2, stride=2).shape
    minitorch.Size([1, 4, 4])
    """
    op = "unfold"
    x, unbatched = _batched(input, 4, op)
    out = _C._im2col(x, _pair(kernel_size, "kernel_size", op), _pair(dilation, "dilation", op),
                     _pair(padding, "padding", op), _pair(stride, "stride", op))
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding blocks (N, C*KH*KW, L) back into a (N, C, *output_size) image (col2im):
    where blocks overlap their values add. ``fold(unfold(x))`` is ``x`` times how many
    blocks cover each pixel."""
    op = "fold"
    x, unbatched = _batched(input, 3, op)
    out = _C._col2im(x, _pair(output_size, "output_size", op), _pair(kernel_size, "kernel_size", op),
                     _pair(dilation, "dilation", op), _pair(padding, "padding", op), _pair(stride, "stride", op))
    return out.squeeze(0) if unbatched else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window; ``stride`` defaults to ``kernel_size``. With ``return_indices``
    also the flat position (ih * W + iw) of each maximum."""
    if getattr(input, "__minitorch_quantized__", False):  # a quantized tensor: pools its values, same qparams
        if not return_indices and input._pools_integers():  # max commutes with q -> (q - zp) * scale
            k = _pair(kernel_size, "kernel_size", "max_pool2d")
            s = k if stride is None or stride == [] else _pair(stride, "stride", "max_pool2d")
            return input._max_pool2d(k, s, _pair(padding, "padding", "max_pool2d"),
                                     _pair(dilation, "dilation", "max_pool2d"), ceil_mode)
        return input._float_op("max_pool2d", lambda x: max_pool2d(x, kernel_size, stride, padding, dilation,
                                                                    ceil_mode, return_indices))
    x, unbatched = _batched(input, 4, "max_pool2d")
    k = _pair(kernel_size, "kernel_size", "max_pool2d")
    s = k if stride is None or stride == [] else _pair(stride, "stride", "max_pool2d")
    out, idx = _C._max_pool2d(x, k, s, _pair(padding, "padding", "max_pool2d"),
                              _pair(dilation, "dilation", "max_pool2d"), ceil_mode)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    """Mean over each window (padding counts as zeros); ``stride`` defaults to ``kernel_size``."""
    if not count_include_pad:
        raise NotImplementedError("avg_pool2d: count_include_pad=False is not supported yet")
    if getattr(input, "__minitorch_quantized__", False):  # a quantized tensor: pools its values, same qparams
        return input._float_op("avg_pool2d", lambda x: avg_pool2d(x, kernel_size, stride, padding, ceil_mode,
                                                                    count_include_pad))
    x, unbatched = _batched(input, 4, "avg_pool2d")
    k = _pair(kernel_size, "kernel_size", "avg_pool2d")
    s = k if stride is None or stride == [] else _pair(stride, "stride", "avg_pool2d")
    out = _C._avg_pool2d(x, k, s, _pair(padding, "padding", "avg_pool2d"), ceil_mode)
    return out.squeeze(0) if unbatched else out


# ---- normalisation ----

def _shape_tuple(shape, name: str, op: str) -> tuple:
    if isinstance(shape, int) and not isinstance(shape, bool):
        return (shape,)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int or a sequence of ints, got {type(shape).__name__}") from None


def _check_param_shape(t, shape: tuple, name: str, op: str, what: str) -> None:
    if t is not None and tuple(t.shape) != shape:
        raise ValueError(f"{op}: expected {name} of shape {shape} ({what}), got {tuple(t.shape)}")


def _normalize_over(x, dims: tuple, eps: float):
    """``(x - mean) / sqrt(var + eps)`` over ``dims``, with the biased variance."""
    centered = x - x.mean(dims, keepdim=True)
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * (var + eps).rsqrt()


def _normalized_shape(input, normalized_shape, op: str) -> tuple:
    """``normalized_shape`` as a tuple, checked to be the trailing dims of ``input``
    (layer_norm's and rms_norm's rule and message)."""
    shape = _shape_tuple(normalized_shape, "normalized_shape", op)
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise ValueError(f"{op}: given normalized_shape={shape}, expected an input of shape (*, "
                         f"{', '.join(map(str, shape))}), but got input of shape {tuple(input.shape)}")
    return shape


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None):
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dims:
    ``x / sqrt(mean(x^2) + eps) * weight`` (no centring, no bias; LLaMA-style models).
    ``eps`` defaults to the machine epsilon of the type it computes in; float16 / bfloat16
    input computes in float32 and is rounded back once, as PyTorch does.

    >>> F.rms_norm(minitorch.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    shape = _normalized_shape(input, normalized_shape, "rms_norm")
    _check_param_shape(weight, shape, "weight", "rms_norm", "normalized_shape")
    if not input.is_floating_point():
        raise TypeError(f"rms_norm: expected a floating point input, got {input.dtype}")
    compute = _C.dtype.float32 if input.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else input.dtype
    if eps is None:
        from .. import finfo
        eps = finfo(compute).eps
    if weight is not None and weight.dtype != input.dtype:
        # As PyTorch 2.11: normalized in the input's computing type, multiplied by the weight
        # in the wider of that and the weight's, rounded once to the input's dtype. Where the
        # weight is no wider (a bfloat16 activation meets a float32 weight under autocast) that
        # is the fused op in the computing type between two casts; the gradients come back in
        # each one's dtype. A wider weight (float64 on float32) takes the composed formula.
        if _C.promote_types(compute, weight.dtype) != compute:
            return _rms_norm_composed(input, shape, weight, float(eps))
        return _C._rms_norm(input.to(compute), math.prod(shape), weight.to(compute), float(eps)).to(input.dtype)
    # One fused C++ op: the layer norm's kernels without the centring, one kernel each way;
    # 16-bit values are computed in float32 inside and rounded once.
    return _C._rms_norm(input, math.prod(shape), weight, float(eps))


def _rms_norm_composed(input, shape: tuple, weight, eps: float):
    """rms_norm in ordinary ops (the readable formula; the tests' reference): 16-bit input
    computes in float32, the weight multiplies before the one rounding to the input's dtype
    (PyTorch 2.11's composite, also for a weight of another dtype)."""
    x = input.float() if input.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else input
    dims = tuple(range(-len(shape), 0))
    out = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt() if shape else x * (x * x + eps).rsqrt()
    out = out * weight if weight is not None else out
    return out.to(input.dtype) if out.dtype != input.dtype else out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalises over the last ``len(normalized_shape)`` dims (mean 0, biased variance 1),
    then ``* weight + bias`` (both of shape ``normalized_shape``).

    >>> F.layer_norm(minitorch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    shape = _normalized_shape(input, normalized_shape, "layer_norm")
    k = len(shape)
    _check_param_shape(weight, shape, "weight", "layer_norm", "normalized_shape")
    _check_param_shape(bias, shape, "bias", "layer_norm", "normalized_shape")
    if k == 0:  # each element on its own: x - mean is 0
        out = (input - input) * (1.0 / math.sqrt(eps))
        if weight is not None:
            out = out * weight
        if bias is not None:
            out = out + bias
        return out
    # One fused C++ op (kernels layer_norm / layer_norm_backward): mean and variance of each
    # row of the last D values, normalised, scaled and shifted in one pass each way.
    return _C._layer_norm(input, math.prod(shape), weight, bias, float(eps))


def _channel_shape(input, c: int) -> tuple:
    """(1, C, 1, ...): a per-channel vector broadcast against (N, C, *)."""
    return (1, c) + (1,) * (input.dim() - 2)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Splits the C channels of (N, C, *) input into ``num_groups`` groups and normalises each
    group of each sample, then applies a per-channel ``weight`` and ``bias``."""
    if input.dim() < 2:
        raise ValueError(f"group_norm: expected an input of shape (N, C, *), got {tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise ValueError(f"group_norm: the {c} channels of input of shape {tuple(input.shape)} cannot be split "
                         f"into {num_groups} groups")
    _check_param_shape(weight, (c,), "weight", "group_norm", "one value per channel")
    _check_param_shape(bias, (c,), "bias", "group_norm", "one value per channel")
    per_group = input.numel() // max(n * num_groups, 1)
    if per_group != 0 and input.dtype.is_floating_point:
        # One fused C++ op (kernels group_norm / group_norm_backward): each (sample, group)'s
        # statistics, the normalization and the per-channel weight and bias in one kernel,
        # and backward in a few (as instance_norm, whose groups are single channels).
        return _C._group_norm(input, num_groups, weight, bias, float(eps))
    out = _normalize_over(input.reshape(n, num_groups, per_group), (2,), eps).reshape(tuple(input.shape))
    if weight is not None:
        out = out * weight.reshape(_channel_shape(input, c))
    if bias is not None:
        out = out + bias.reshape(_channel_shape(input, c))
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5, *, _num_batches_tracked=None):
    """Normalises each channel of (N, C, *) input over the batch and spatial dims.

    ``training=True``: uses the batch's mean and biased variance, and (when given) updates
    ``running_mean``/``running_var`` in place: ``r = (1 - momentum) * r + momentum * stat``,
    with the *unbiased* variance, as PyTorch does. ``training=False``: uses the running
    statistics. Then ``* weight + bias`` per channel.

    (``_num_batches_tracked``, not PyTorch's: BatchNorm's counter, which the statistics
    kernel adds 1 to while training, instead of a launch of its own.)
    """
    if input.dim() < 2:
        raise ValueError(f"batch_norm: expected an input of shape (N, C, *), got {tuple(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"batch_norm: {name} should contain {c} elements (the channels of input of shape "
                             f"{tuple(input.shape)}), not {t.numel()} (shape {tuple(t.shape)})")
    if training:
        count = input.numel() // c if c else 0
        if count <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input of "
                             f"shape {tuple(input.shape)}")
    elif running_mean is None or running_var is None:
        raise ValueError("batch_norm: running_mean and running_var must be given when training=False")
    # One fused C++ op (kernels batch_norm / batch_norm_backward): the statistics in one pass,
    # the running statistics updated in place in the same kernel, then one normalizing pass.
    return _C._batch_norm(input, running_mean, running_var, weight, bias, bool(training), float(momentum),
                          float(eps), _num_batches_tracked)


# ---- embeddings ----

def embedding(input, weight, padding_idx: int | None = None, max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by int64 ``input`` of any
    shape: the result has shape ``input.shape + (embedding_dim,)``.

    Rows picked at ``padding_idx`` get no gradient (their values are whatever the row holds).

    >>> w = minitorch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> F.embedding(minitorch.tensor([2, 1]), w)
    tensor([[3., 4.],
            [1., 2.]])
    """
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported in minitorch")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not supported in minitorch")
    if not isinstance(input, _C.Tensor) or input.dtype != _C.dtype.int64:
        got = input.dtype if isinstance(input, _C.Tensor) else type(input).__name__
        raise TypeError(f"embedding: expected indices of dtype int64, got {got}")
    # One kernel launch, which also checks the indices: unlike index_select, a negative one
    # is an IndexError (as PyTorch's embedding), raised at once on the CPU and at the next
    # synchronization on a GPU (no wait for the GPU here). Rows picked at padding_idx keep
    # their values; the backward adds nothing into that row.
    return _C._embedding_rows(weight, input, padding_idx)


# ---- padding and similarity ----

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_dim(x, dim: int, left: int, right: int, mode: str, value):
    """Pads (or, with negative amounts, crops) one dim in mode reflect, replicate or circular:
    a gather along the dim with index_select, positions -left .. n+right-1 mapped back into
    the input."""
    n = x.shape[dim]
    if left < 0 or right < 0:
        start, stop = max(-left, 0), n - max(-right, 0)
        if stop < start:
            raise ValueError(f"pad: cropping ({left}, {right}) from dimension {dim} of size {n} leaves a "
                             "negative size")
        x = x[(slice(None),) * dim + (slice(start, stop),)]
        n, left, right = stop - start, max(left, 0), max(right, 0)
    if left == 0 and right == 0:
        return x
    if mode == "reflect" and (left >= n or right >= n):
        raise ValueError(f"pad: reflect padding ({left}, {right}) must be less than the size {n} of dimension {dim}")
    if n == 0:
        raise ValueError(f"pad: {mode} padding of dimension {dim} of size 0")
    if mode == "circular" and (left > n or right > n):
        raise ValueError(f"pad: circular padding ({left}, {right}) must be at most the size {n} of dimension {dim}")
    pos = np.arange(-left, n + right)
    if mode == "reflect":
        idx = np.abs(pos)
        idx = np.where(idx > n - 1, 2 * (n - 1) - idx, idx)
    elif mode == "replicate":
        idx = np.clip(pos, 0, n - 1)
    else:
        idx = pos % n
    return x.index_select(dim, _C._from_numpy_copy(idx.astype(np.int64), _C.dtype.int64, x.device))


def pad(input, pad, mode: str = "constant", value: float | None = None):
    """Pads the last ``len(pad) // 2`` dims: ``pad = (left, right)`` for the last dim,
    ``(left, right, top, bottom)`` for the last two, and so on. Negative amounts crop.

    ``mode``: ``"constant"`` (fill with ``value``, default 0), ``"reflect"`` (mirror without
    repeating the edge), ``"replicate"`` (repeat the edge) or ``"circular"`` (wrap around).

    >>> F.pad(minitorch.tensor([[1.0, 2.0]]), (1, 2), value=9.0)
    tensor([[9., 1., 2., 9., 9.]])
    """
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"pad: input must be a Tensor, got {type(input).__name__}")
    try:
        amounts = tuple(int(p) for p in pad)
    except TypeError:
        raise TypeError(f"pad: pad must be a sequence of ints, got {type(pad).__name__}") from None
    if len(amounts) % 2:
        raise ValueError(f"pad: padding length must be divisible by 2, got {len(amounts)} ({amounts})")
    if len(amounts) // 2 > input.dim():
        raise ValueError(f"pad: padding length too large: {len(amounts)} values pad {len(amounts) // 2} dims, but "
                         f"input of shape {tuple(input.shape)} has {input.dim()}")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(map(repr, _PAD_MODES))}, got {mode!r}")
    if mode != "constant" and value not in (None, 0, 0.0):
        raise ValueError(f"pad: padding mode {mode!r} doesn't take a value argument")
    value = 0 if value is None else value
    if mode == "constant":  # one remap pass for every padded dim (C++ constant_pad_nd)
        for i in range(len(amounts) // 2):
            d, left, right = input.dim() - 1 - i, amounts[2 * i], amounts[2 * i + 1]
            if input.shape[d] + min(left, 0) + min(right, 0) < 0:
                raise ValueError(f"pad: cropping ({left}, {right}) from dimension {d} of size {input.shape[d]} "
                                 "leaves a negative size")
        return _C._constant_pad_nd(input, list(amounts), value)
    out = input
    for i in range(len(amounts) // 2):
        out = _pad_dim(out, input.dim() - 1 - i, amounts[2 * i], amounts[2 * i + 1], mode, value)
    return out


def _norm_along(x, dim, eps: float, p: float = 2.0, keepdim: bool = True):
    """``max(||x||_p, eps)`` along ``dim``, as PyTorch composes it: the fused vector norm (one
    reduction kernel; its backward gives a zero vector a zero gradient, not 0 * inf), then the
    clamp, below which no gradient flows."""
    if p <= 0:
        raise ValueError(f"normalize: p must be positive, got {p}")
    return x.norm(p, dim, keepdim=keepdim).clamp(min=eps)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``: unit vectors.

    >>> F.normalize(minitorch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported in minitorch")
    return input / _norm_along(input, dim, eps, float(p))


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` of their broadcast shape."""
    shape = _C.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    return (x1 * x2).sum(dim) / (_norm_along(x1, dim, eps, keepdim=False) * _norm_along(x2, dim, eps, keepdim=False))


# ---- resampling, more pooling, pixel shuffle, instance/local response norm, embedding_bag,
# gumbel_softmax: nn/_sampling_functional.py, _pooling_functional.py, _shuffle_functional.py,
# _instancenorm_functional.py, _embedding_bag_functional.py, _gumbel_functional.py ----
from ._pooling_functional import (  # noqa: E402,F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
    adaptive_max_pool3d, avg_pool1d, avg_pool3d, lp_pool1d, lp_pool2d, max_pool1d, max_pool3d, max_unpool1d,
    max_unpool2d)


# PyTorch's names of the pools that always return (values, indices)
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices: bool = False):
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices: bool = False):
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices: bool = False):
    return adaptive_max_pool3d(input, output_size, return_indices=True)


from ..ops.linalg import pdist  # noqa: E402,F401  (F.pdist is torch.pdist)
from ._sampling_functional import (  # noqa: E402,F401
    affine_grid, grid_sample, interpolate, upsample, upsample_bilinear, upsample_nearest)
from ._shuffle_functional import channel_shuffle, pixel_shuffle, pixel_unshuffle  # noqa: E402,F401
from ._instancenorm_functional import instance_norm, local_response_norm  # noqa: E402,F401
from ._embedding_bag_functional import embedding_bag  # noqa: E402,F401
from ._gumbel_functional import gumbel_softmax  # noqa: E402,F401
from ._ctc_functional import ctc_loss  # noqa: E402,F401
# ---- SELU's dropout: nn/_dropout_functional.py ----
from ._dropout_functional import alpha_dropout, feature_alpha_dropout  # noqa: E402,F401
