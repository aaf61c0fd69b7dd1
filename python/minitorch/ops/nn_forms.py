"""PyTorch's top-level forms of nn.functional ops: ``torch.conv2d``, ``torch.batch_norm``,
``torch.dropout``, ``torch.kl_div``... and ``Tensor.prelu`` / ``Tensor.hardshrink``.

Each calls ``minitorch.nn.functional.<name>`` (looked up at each call, so autocast's wrappers
apply) with the arguments ``torch.<name>`` takes, which are not always F's:

- ``batch_norm`` and ``instance_norm`` take every argument, positionally, weight and bias
  before the running statistics, and a ``cudnn_enabled`` flag (ignored, as is
  ``layer_norm``'s and ``group_norm``'s ``cudnn_enable(d)``);
- ``embedding(weight, indices, padding_idx=-1, ...)``: the weight first; a negative
  ``padding_idx`` means none;
- ``dropout(input, p, train)`` (and ``alpha_dropout``, ``feature_alpha_dropout``,
  ``feature_dropout``): every argument required; the ``*_`` forms write into ``input``;
- the losses take ``reduction`` as PyTorch's int enum: 0 none, 1 mean, 2 sum;
  ``poisson_nll_loss`` takes all six arguments;
- ``max_pool1d/2d/3d`` never return indices (``max_pool1d_with_indices`` and
  ``adaptive_max_pool1d`` return ``(values, indices)``), and a ``stride`` of ``()`` means
  the kernel size.

The rest take F's arguments. ops/registry.py makes ``minitorch.<name>`` of each (and the
methods of ``prelu`` and ``hardshrink``), as ops/declarations.py declares.
"""
from __future__ import annotations

import numbers

from .. import _C
from .._C import Tensor

# at::Reduction: the int a torch.<loss> takes for F's reduction string
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _F():
    from ..nn import functional  # imported late: minitorch.nn is set up after these forms
    return functional


def _reduction(op: str, reduction) -> str:
    if isinstance(reduction, bool) or not isinstance(reduction, numbers.Integral):
        raise TypeError(f"{op}(): argument 'reduction' must be int (0: none, 1: mean, 2: sum), not "
                        f"{type(reduction).__name__}")
    if int(reduction) not in _REDUCTIONS:
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction (0: none, 1: mean, 2: sum)")
    return _REDUCTIONS[int(reduction)]


def _same(name: str, summary: str):
    """``minitorch.<name>``: ``F.<name>`` with the same arguments."""

    def form(*args, **kwargs):
        return getattr(_F(), name)(*args, **kwargs)

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"{summary} ``F.{name}``, with the same arguments."
    return form


conv1d = _same("conv1d", "1-D convolution:")
conv2d = _same("conv2d", "2-D convolution:")
conv3d = _same("conv3d", "3-D convolution:")
conv_transpose1d = _same("conv_transpose1d", "1-D transposed convolution:")
conv_transpose2d = _same("conv_transpose2d", "2-D transposed convolution:")
conv_transpose3d = _same("conv_transpose3d", "3-D transposed convolution:")
pixel_shuffle = _same("pixel_shuffle", "(N, C r^2, H, W) to (N, C, H r, W r):")
pixel_unshuffle = _same("pixel_unshuffle", "(N, C, H r, W r) to (N, C r^2, H, W):")
channel_shuffle = _same("channel_shuffle", "Interleaves the channels of ``groups`` groups:")
cosine_similarity = _same("cosine_similarity", "Cosine similarity along ``dim``:")
pairwise_distance = _same("pairwise_distance", "p-norm distance between rows:")
bilinear = _same("bilinear", "``x1^T A x2 + b``:")
celu = _same("celu", "CELU:")
threshold = _same("threshold", "``value`` where ``input <= threshold``:")
adaptive_avg_pool1d = _same("adaptive_avg_pool1d", "Average pooling to ``output_size``:")
rms_norm = _same("rms_norm", "RMS normalization over the last dims:")


def prelu(self, weight: Tensor) -> Tensor:
    """PReLU: ``max(0, x) + weight * min(0, x)``, ``weight`` one slope or one per channel
    (dim 1): ``F.prelu``."""
    return _F().prelu(self, weight)


def hardshrink(self, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere: ``F.hardshrink``."""
    return _F().hardshrink(self, lambd)


def selu(input):
    """SELU: ``F.selu``."""
    return _F().selu(input)


def selu_(input):
    """SELU written into ``input``: ``F.selu(input, inplace=True)``."""
    return _F().selu(input, inplace=True)


def celu_(input, alpha: float = 1.0):
    """CELU written into ``input``: ``F.celu(input, alpha, inplace=True)``."""
    return _F().celu(input, alpha, inplace=True)


def threshold_(input, threshold: float, value: float):  # noqa: A002
    """``F.threshold(input, threshold, value, inplace=True)``."""
    return _F().threshold(input, threshold, value, inplace=True)


def _no_generator(op: str, generator) -> None:
    if generator is not None:
        raise TypeError(f"{op}(): a generator is not supported; seed the global one with minitorch.manual_seed")


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    """Randomized leaky ReLU: ``F.rrelu`` (slopes drawn in ``[lower, upper]`` while ``training``)."""
    _no_generator("rrelu", generator)
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    """:func:`rrelu` written into ``input``."""
    _no_generator("rrelu_", generator)
    return _F().rrelu(input, lower, upper, training, inplace=True)


# ---- normalizations: torch's argument orders ----

def batch_norm(input, weight, bias, running_mean, running_var, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool):
    """``F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)``:
    every argument required, as in PyTorch (``cudnn_enabled`` is ignored)."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats: bool, momentum: float,
                  eps: float, cudnn_enabled: bool):
    """``F.instance_norm`` with torch's argument order (every argument required)."""
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, cudnn_enable: bool = True):
    """``F.layer_norm`` (``cudnn_enable`` is ignored)."""
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5, cudnn_enabled: bool = True):
    """``F.group_norm`` (``cudnn_enabled`` is ignored)."""
    return _F().group_norm(input, num_groups, weight, bias, eps)


def embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False, sparse: bool = False):
    """The rows of ``weight`` at ``indices``: ``F.embedding(indices, weight, ...)``, the weight
    first; ``padding_idx`` < 0 means no padding row (its gradient stays zero otherwise)."""
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
        raise TypeError(f"embedding(): argument 'padding_idx' must be int, not {type(padding_idx).__name__}")
    return _F().embedding(indices, weight, padding_idx=None if padding_idx < 0 else int(padding_idx),
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# ---- dropout(input, p, train): every argument required; the *_ forms write into input ----

def _in_place(op: str, input, compute):
    from .inplace import write_into
    return write_into(input, op, compute)


def dropout(input, p: float, train: bool):
    """``F.dropout(input, p, train)``."""
    return _F().dropout(input, p, train)


def dropout_(input, p: float, train: bool):
    """:func:`dropout` written into ``input``."""
    return _in_place("dropout_", input, lambda x: dropout(x, p, train))


def alpha_dropout(input, p: float, train: bool):
    """``F.alpha_dropout(input, p, train)``."""
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p: float, train: bool):
    """:func:`alpha_dropout` written into ``input``."""
    return _in_place("alpha_dropout_", input, lambda x: alpha_dropout(x, p, train))


def feature_alpha_dropout(input, p: float, train: bool):
    """``F.feature_alpha_dropout(input, p, train)``."""
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p: float, train: bool):
    """:func:`feature_alpha_dropout` written into ``input``."""
    return _in_place("feature_alpha_dropout_", input, lambda x: feature_alpha_dropout(x, p, train))


def feature_dropout(input, p: float, train: bool):
    """Dropout of whole channels of (N, C, *) input: one keep/drop draw per (sample, channel),
    the kept ones scaled by ``1 / (1 - p)`` (what ``F.dropout2d`` / ``dropout3d`` compute)."""
    if input.dim() < 2:
        raise _C.InputError(f"feature_dropout: feature dropout requires at least 2 dimensions in the input, got "
                            f"shape {tuple(input.shape)}")
    return _F()._feature_dropout(input, p, train)


def feature_dropout_(input, p: float, train: bool):
    """:func:`feature_dropout` written into ``input``."""
    return _in_place("feature_dropout_", input, lambda x: feature_dropout(x, p, train))


# ---- losses: reduction is an int (0 none, 1 mean, 2 sum) ----

def kl_div(input, target, reduction: int = 1, *, log_target: bool = False):
    """``F.kl_div`` per element, averaged over every element (1), summed (2) or kept (0); the
    mean is PyTorch's plain mean (``F.kl_div``'s warning about ``'mean'`` is F's alone)."""
    how = _reduction("kl_div", reduction)
    loss = _F().kl_div(input, target, reduction="none", log_target=log_target)
    return loss if how == "none" else getattr(loss, how)()


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 1):
    """``F.hinge_embedding_loss`` with an int ``reduction``."""
    return _F().hinge_embedding_loss(input, target, margin, _reduction("hinge_embedding_loss", reduction))


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    """``F.margin_ranking_loss`` with an int ``reduction``."""
    return _F().margin_ranking_loss(input1, input2, target, margin, _reduction("margin_ranking_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 1):
    """``F.triplet_margin_loss`` with an int ``reduction``."""
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    _reduction("triplet_margin_loss", reduction))


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    """``F.cosine_embedding_loss`` with an int ``reduction``."""
    return _F().cosine_embedding_loss(input1, input2, target, margin, _reduction("cosine_embedding_loss", reduction))


def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float, reduction: int):
    """``F.poisson_nll_loss``: every argument required, ``reduction`` an int."""
    return _F().poisson_nll_loss(input, target, log_input, full, eps, _reduction("poisson_nll_loss", reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction: int = 1):
    """``F.binary_cross_entropy_with_logits`` with ``pos_weight`` before an int ``reduction``."""
    how = _reduction("binary_cross_entropy_with_logits", reduction)
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=how, pos_weight=pos_weight)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: int = 1,
             zero_infinity: bool = False):
    """``F.ctc_loss`` with an int ``reduction``."""
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction("ctc_loss", reduction),
                         zero_infinity)


# ---- pooling: stride=() means the kernel size; max pools without indices ----

def _stride(stride):
    return None if isinstance(stride, (tuple, list)) and len(stride) == 0 else stride


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    """``F.avg_pool1d``."""
    return _F().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def _max_pool(name: str, indices: bool):
    def form(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
        return getattr(_F(), name)(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                                   return_indices=indices)

    op = name + "_with_indices" if indices else name
    form.__name__ = form.__qualname__ = op
    form.__doc__ = (f"``F.{name}(..., return_indices={indices})``: "
                    + ("``(values, indices)``." if indices else "the pooled values only."))
    return form


max_pool1d = _max_pool("max_pool1d", False)
max_pool2d = _max_pool("max_pool2d", False)
max_pool3d = _max_pool("max_pool3d", False)
max_pool1d_with_indices = _max_pool("max_pool1d", True)


def adaptive_max_pool1d(input, output_size) -> tuple:
    """``(values, indices)`` of the max pooling of (N, C, L) or (C, L) input to ``output_size``."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)

