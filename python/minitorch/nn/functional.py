"""``minitorch.nn.functional`` (usually ``import minitorch.nn.functional as F``):
stateless layers and losses with PyTorch's names and signatures.

The heavy ones (``linear``, ``log_softmax``, ``softmax``, ``cross_entropy``,
``nll_loss``) are fused C++ ops with C++ backward; the rest are compositions of
tensor ops and get their gradients from those.
"""
from __future__ import annotations

from .. import _C

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


def relu(input, inplace: bool = False):
    return input.relu()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def softmax(input, dim: int):
    """``exp(x) / sum(exp(x))`` along ``dim`` (computed stably)."""
    return _C._softmax(input, dim)


def log_softmax(input, dim: int):
    """``x - logsumexp(x)`` along ``dim``: stable for large logits."""
    return _C._log_softmax(input, dim)


def cross_entropy(input, target, reduction: str = "mean", ignore_index: int = -100):
    """Log-softmax + negative log-likelihood of int64 class labels, fused.

    ``input``: (N, C) logits; ``target``: (N,) int64 in [0, C).
    """
    return _C._cross_entropy(input, target, _reduction(reduction, "cross_entropy"), ignore_index)


def nll_loss(input, target, reduction: str = "mean", ignore_index: int = -100):
    """Negative log-likelihood of log-probabilities ``input`` (N, C) at ``target`` (N,)."""
    return _C._nll_loss(input, target, _reduction(reduction, "nll_loss"), ignore_index)


def mse_loss(input, target, reduction: str = "mean"):
    _check_same_shape(input, target, "mse_loss")
    return _reduce((input - target) ** 2, reduction, "mse_loss")


def l1_loss(input, target, reduction: str = "mean"):
    _check_same_shape(input, target, "l1_loss")
    return _reduce((input - target).abs(), reduction, "l1_loss")


def binary_cross_entropy(input, target, reduction: str = "mean"):
    """BCE of probabilities ``input`` in [0, 1]; logs are clamped at -100 like PyTorch."""
    _check_same_shape(input, target, "binary_cross_entropy")
    log_p = input.log().clamp(min=-100.0)
    log_1mp = (1 - input).log().clamp(min=-100.0)
    return _reduce(-(target * log_p + (1 - target) * log_1mp), reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, reduction: str = "mean"):
    """BCE of logits, stable: ``max(x, 0) - x*t + log(1 + exp(-|x|))``."""
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    loss = input.relu() - input * target + (1 + (-input.abs()).exp()).log()
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1/(1-p)``."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = _C._rand(tuple(input.shape), input.dtype, input.device) >= p
    return input * keep * (1.0 / (1.0 - p))


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
