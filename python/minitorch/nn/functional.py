"""``minitorch.nn.functional`` (usually ``import minitorch.nn.functional as F``):
stateless layers and losses with PyTorch's names and signatures.

The heavy ones (``linear``, ``log_softmax``, ``softmax``, ``cross_entropy``,
``nll_loss``) are fused C++ ops with C++ backward; the rest are compositions of
tensor ops and get their gradients from those.
"""
from __future__ import annotations

from .. import _C
from ..autograd.function import Function

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


# derivative of binary_cross_entropy_with_logits (per element), input x: g * (sigmoid(x) - t)
# derivative of binary_cross_entropy_with_logits (per element), input t: g * (-x)
class _BCEWithLogits(Function):
    """Per-element BCE of logits with the exact gradient ``sigmoid(x) - t``.

    Forward is the stable ``max(x, 0) - x*t + log(1 + exp(-|x|))``; composing it from
    relu/abs would give a wrong gradient at x = 0 (both kinks have derivative 0 there).
    """

    @staticmethod
    def forward(ctx, x, t):
        ctx.save_for_backward(x, t)
        return x.relu() - x * t + (1 + (-x.abs()).exp()).log()

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        gx = g * (x.sigmoid() - t) if ctx.needs_input_grad[0] else None
        gt = g * (-x) if ctx.needs_input_grad[1] else None
        return gx, gt


def binary_cross_entropy_with_logits(input, target, reduction: str = "mean"):
    """BCE of logits, stable for large |x|, gradient ``sigmoid(x) - target``."""
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    return _reduce(_BCEWithLogits.apply(input, target), reduction, "binary_cross_entropy_with_logits")


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


# ---- attention: nn/_attention_functional.py ----
from ._attention_functional import scaled_dot_product_attention  # noqa: E402,F401


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


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1):
    """2-D convolution (cross-correlation) of (N, C, H, W) input with (O, C, KH, KW) weight,
    computed as im2col + one GEMM in C++. ``padding`` may be an int, a pair, or "valid"/"same"
    (stride 1)."""
    x, unbatched = _batched(input, 4, "conv2d")
    stride, dilation = _pair(stride, "stride", "conv2d"), _pair(dilation, "dilation", "conv2d")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("conv2d: padding='same' is not supported for strided convolutions")
            # 'same' needs a total padding of dilation*(k-1) per side pair; an odd total
            # would need one extra row/column on one side only.
            totals = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(2)]
            if totals[0] % 2 or totals[1] % 2:
                raise NotImplementedError("conv2d: padding='same' with an even effective kernel size is not "
                                          "supported yet; use an odd kernel or explicit padding")
            padding = (totals[0] // 2, totals[1] // 2)
        else:
            raise ValueError(f"conv2d: padding must be 'valid', 'same', an int or a pair, got {padding!r}")
    else:
        padding = _pair(padding, "padding", "conv2d")
    out = _C._conv2d(x, weight, bias, stride, padding, dilation)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1):
    """1-D convolution of (N, C, L) input with (O, C, K) weight: a conv2d with height 1
    (the lectures' sliding window)."""
    x, unbatched = _batched(input, 3, "conv1d")

    def one(v, name):
        if isinstance(v, (tuple, list)):
            if len(v) != 1:
                raise ValueError(f"conv1d: {name} must be an int or a 1-tuple, got {v!r}")
            v = v[0]
        return v

    s, d, p = one(stride, "stride"), one(dilation, "dilation"), one(padding, "padding")
    if not isinstance(weight, _C.Tensor) or weight.dim() != 3:
        shape = tuple(weight.shape) if isinstance(weight, _C.Tensor) else type(weight).__name__
        raise ValueError(f"conv1d: expected a 3-D weight (out_channels, in_channels, K), got {shape}")
    if isinstance(p, str):
        if p == "valid":
            p = 0
        elif p == "same":
            if s != 1:
                raise ValueError("conv1d: padding='same' is not supported for strided convolutions")
            total = d * (weight.shape[2] - 1)
            if total % 2:
                raise NotImplementedError("conv1d: padding='same' with an even effective kernel is not supported yet")
            p = total // 2
        else:
            raise ValueError(f"conv1d: padding must be 'valid', 'same' or an int, got {p!r}")
    # Check here so messages name conv1d and the 3-D shapes the caller passed.
    if x.shape[1] != weight.shape[1]:
        raise ValueError(f"conv1d: input of shape {tuple(input.shape)} has {x.shape[1]} channels, but weight of "
                         f"shape {tuple(weight.shape)} expects {weight.shape[1]} input channels")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise ValueError(f"conv1d: bias of shape {tuple(bias.shape)} does not match {weight.shape[0]} output channels")
    if isinstance(p, int) and isinstance(d, int) and p >= 0 and d > 0 and x.shape[2] + 2 * p < d * (weight.shape[2] - 1) + 1:
        raise ValueError(f"conv1d: kernel of size {weight.shape[2]} (dilation {d}) is larger than the padded input "
                         f"of length {x.shape[2] + 2 * p} for input shape {tuple(input.shape)}")
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), (0, p), (1, d)).squeeze(2)
    return out.squeeze(0) if unbatched else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window; ``stride`` defaults to ``kernel_size``. With ``return_indices``
    also the flat position (ih * W + iw) of each maximum."""
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
    x, unbatched = _batched(input, 4, "avg_pool2d")
    k = _pair(kernel_size, "kernel_size", "avg_pool2d")
    s = k if stride is None or stride == [] else _pair(stride, "stride", "avg_pool2d")
    out = _C._avg_pool2d(x, k, s, _pair(padding, "padding", "avg_pool2d"), ceil_mode)
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size. Supported when the input size is a multiple
    of the output size (then it is avg_pool2d with kernel = stride = H/oh, W/ow)."""
    x, unbatched = _batched(input, 4, "adaptive_avg_pool2d")
    oh, ow = _pair(output_size, "output_size", "adaptive_avg_pool2d")
    h, w = x.shape[2], x.shape[3]
    if oh <= 0 or ow <= 0 or h % oh or w % ow:
        raise NotImplementedError(f"adaptive_avg_pool2d: input size ({h}, {w}) must be a multiple of the output "
                                  f"size ({oh}, {ow}) in minitorch")
    out = _C._avg_pool2d(x, (h // oh, w // ow), (h // oh, w // ow), (0, 0), False)
    return out.squeeze(0) if unbatched else out
