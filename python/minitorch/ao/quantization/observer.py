"""Observers: modules that watch the values flowing through a point of the network during
calibration and then choose its quantization parameters (``scale``, ``zero_point``).

An observer's ``forward`` returns its input unchanged and records statistics (a running
min/max, a histogram); ``calculate_qparams()`` turns them into ``(scale, zero_point)`` with
PyTorch's formulas (``torch.ao.quantization.observer``). With ``[qmin, qmax]`` the integer
range and ``min_neg = min(min_val, 0)``, ``max_pos = max(max_val, 0)`` (zero must be exactly
representable, so the range always contains it):

- affine: ``scale = max(eps, (max_pos - min_neg) / (qmax - qmin))``,
  ``zero_point = clamp(qmin - round(min_neg / scale), qmin, qmax)``;
- symmetric: ``scale = max(eps, max(-min_neg, max_pos) / ((qmax - qmin) / 2))`` and
  ``zero_point`` 0 for qint8, 128 for quint8 (the middle of a custom range if one was given).

``reduce_range=True`` halves the range (0..127 for quint8, -64..63 for qint8): x86's
int8 dot-product instructions can overflow their 16-bit intermediate sums on the full range.

    >>> obs = MinMaxObserver()
    >>> _ = obs(minitorch.tensor([-1.0, 3.0]))
    >>> obs.calculate_qparams()
    (tensor([0.0157]), tensor([64], dtype=minitorch.int32))
"""
from __future__ import annotations

import math
import warnings
from functools import partial

import numpy as np

import minitorch

from ...nn.module import Module
from . import _qtypes as qt

_EPS32 = float(np.finfo(np.float32).eps)


class _PartialWrapper:
    """What ``Observer.with_args(...)`` returns: a factory that makes the observer with those
    arguments (a qconfig holds factories, so each observed module gets its own observer)."""

    def __init__(self, p):
        self.p = p

    def __call__(self, *args, **kwargs):
        return self.p(*args, **kwargs)

    def __repr__(self) -> str:
        return self.p.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


class ObserverBase(Module):
    """Base of every observer: ``forward`` records, ``calculate_qparams`` decides."""

    def __init__(self, dtype, is_dynamic: bool = False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    with_args = classmethod(_with_args)


def _check_qmin_qmax(quant_min: int, quant_max: int) -> None:
    if not quant_min <= 0 <= quant_max:
        raise ValueError(f"Used-specified quantization range must include 0 (got quant_min={quant_min}, "
                         f"quant_max={quant_max})")
    if not quant_min < quant_max:
        raise ValueError(f"qmin must be strictly less than qmax for user-specified quantization range (got "
                         f"quant_min={quant_min}, quant_max={quant_max})")


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange: bool, dtype, reduce_range: bool) -> tuple:
    """The integer range an observer quantizes to: the dtype's full range, or the one given,
    halved (``// 2``) with ``reduce_range``."""
    bits, lo, hi = qt.qrange(dtype)
    if has_customized_qrange:
        length = quant_max - quant_min + 1
        if not 0 < length <= 2 ** bits:
            raise ValueError(f"quantization range should be positive and not exceed the maximum bit range "
                             f"(={2 ** bits}), got quant_min={quant_min}, quant_max={quant_max}")
        lo, hi = quant_min, quant_max
    elif reduce_range:
        return lo // 2, hi // 2
    if reduce_range:
        lo, hi = lo // 2, hi // 2
    return lo, hi


class UniformQuantizationObserverBase(ObserverBase):
    """The observers that pick an affine or symmetric ``(scale, zero_point)`` from a range:
    dtype, qscheme, integer range and ``eps`` (the smallest scale) checks and formulas."""

    def __init__(self, dtype=None, qscheme=None, reduce_range: bool = False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps: float = _EPS32, is_dynamic: bool = False, **kwargs):
        dtype = qt.quint8 if dtype is None else dtype
        qscheme = qt.per_tensor_affine if qscheme is None else qscheme
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        name = type(self).__name__
        if qscheme not in qt.PER_TENSOR + qt.PER_CHANNEL:
            raise ValueError(f"{name}: Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                             f"per_channel_affine, per_channel_symmetric and per_channel_float_qparams quantization "
                             f"scheme, got {qscheme}")
        if not qt.is_quantized_dtype(dtype):
            raise ValueError(f"{name}: Default Observer only works for qint8, quint8, qint32 (and int8, uint8, int32) "
                             f"data types, got {dtype}")
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.register_buffer("eps", minitorch.tensor([eps]))
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            _check_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             dtype, reduce_range)

    def _validate_range(self, min_val, max_val) -> bool:
        if min_val.numel() == 0 or max_val.numel() == 0:
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.")
            return False
        if min_val.dim() == 0:
            if min_val.item() == math.inf and max_val.item() == -math.inf:
                warnings.warn("must run observer before calling calculate_qparams. Returning default values.")
                return False
        if not bool((min_val <= max_val).all().item()):
            raise ValueError(f"{type(self).__name__}: min {min_val} should be less than max {max_val}")
        return True

    def _calculate_qparams(self, min_val, max_val) -> tuple:
        """``(scale, zero_point)`` for the range ``[min_val, max_val]`` (0-dim: one pair, as 1-element
        tensors; 1-D: one per channel). The formulas of the module docstring, in float32."""
        i32 = minitorch.int32
        if not self._validate_range(min_val, max_val):
            return minitorch.tensor([1.0]), minitorch.tensor([0], dtype=i32)
        qmin, qmax = self.quant_min, self.quant_max
        zeros = minitorch.zeros_like(min_val)
        min_neg = minitorch.minimum(min_val, zeros)
        max_pos = minitorch.maximum(max_val, zeros)
        eps = self.eps.to(min_val.device)
        if self.qscheme in qt.SYMMETRIC:
            max_pos = minitorch.maximum(-min_neg, max_pos)
            scale = minitorch.maximum(max_pos / (float(qmax - qmin) / 2), eps)
            if qt.dtype_name(self.dtype) in ("quint8", "uint8"):
                zp = (qmin + qmax) // 2 if self.has_customized_qrange else 128
            else:
                zp = 0
            zero_point = minitorch.full(tuple(scale.shape), zp, dtype=i32)
        elif self.qscheme == qt.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = minitorch.where(scale > eps, scale, minitorch.ones_like(scale))
            zero_point = -1 * min_val / scale  # float zero points (embedding tables)
        else:
            scale = minitorch.maximum((max_pos - min_neg) / float(qmax - qmin), eps)
            zero_point = qmin - (min_neg / scale).round().to(i32)
            zero_point = zero_point.clamp(qmin, qmax)
        if scale.dim() == 0 or (min_val.dim() == 0 and scale.numel() == 1):
            scale = scale.reshape(1)
            zero_point = zero_point.reshape(1)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError


class MinMaxObserver(UniformQuantizationObserverBase):
    """Records the running minimum and maximum of everything it sees (per tensor).

    Args: ``dtype`` (``quint8``), ``qscheme`` (``per_tensor_affine``), ``reduce_range``,
    ``quant_min``/``quant_max`` (a custom range), ``eps``.
    """

    def __init__(self, dtype=None, qscheme=None, reduce_range: bool = False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps: float = _EPS32, is_dynamic: bool = False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic, **kwargs)
        if self.qscheme == qt.per_tensor_symmetric and self.reduce_range and self.dtype == qt.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")
        if qt.is_per_channel(self.qscheme) and type(self) in (MinMaxObserver, MovingAverageMinMaxObserver):
            raise ValueError(f"{type(self).__name__} is a per-tensor observer, got qscheme={self.qscheme} (use "
                             "PerChannelMinMaxObserver)")
        self.register_buffer("min_val", minitorch.tensor(math.inf))
        self.register_buffer("max_val", minitorch.tensor(-math.inf))

    def _minmax(self, x):
        return x.amin(), x.amax()

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = self._minmax(x)
        self.min_val = minitorch.minimum(lo, self.min_val)
        self.max_val = minitorch.maximum(hi, self.max_val)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={_fmt(self.min_val)}, max_val={_fmt(self.max_val)}"

    def reset_min_max_vals(self):
        self.min_val = minitorch.tensor(math.inf)
        self.max_val = minitorch.tensor(-math.inf)


def _fmt(t) -> str:
    """A 0-dim tensor as PyTorch's f-string shows it (its value), others as tensors."""
    return str(t.item()) if t.dim() == 0 else repr(t)


class MovingAverageMinMaxObserver(MinMaxObserver):
    """The min and max as exponential moving averages over batches:
    ``min = min + averaging_constant * (batch_min - min)`` (the first batch sets them). Less
    sensitive to one outlier batch than ``MinMaxObserver``; the default activation observer
    of quantization-aware training."""

    def __init__(self, averaging_constant: float = 0.01, dtype=None, qscheme=None, reduce_range: bool = False,
                 quant_min=None, quant_max=None, eps: float = _EPS32, is_dynamic: bool = False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = self._minmax(x)
        if self.min_val.item() == math.inf and self.max_val.item() == -math.inf:
            self.min_val, self.max_val = lo, hi
        else:
            c = self.averaging_constant
            self.min_val = self.min_val + c * (lo - self.min_val)
            self.max_val = self.max_val + c * (hi - self.max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """A running min and max per index of dimension ``ch_axis`` (per output channel of a
    weight): one ``(scale, zero_point)`` per channel. The default weight observer of the x86
    and fbgemm backends (``per_channel_symmetric``, ``qint8``)."""

    def __init__(self, ch_axis: int = 0, dtype=None, qscheme=None, reduce_range: bool = False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps: float = _EPS32, is_dynamic: bool = False, **kwargs):
        qscheme = qt.per_channel_affine if qscheme is None else qscheme
        if not qt.is_per_channel(qscheme):
            raise NotImplementedError(f"{type(self).__name__}: only per-channel qschemes are supported, got {qscheme}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic, **kwargs)
        if self.qscheme == qt.per_channel_symmetric and self.reduce_range and self.dtype == qt.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")
        self.ch_axis = ch_axis
        self.register_buffer("min_val", minitorch.tensor([]))
        self.register_buffer("max_val", minitorch.tensor([]))

    def _channel_minmax(self, x):
        if not -x.dim() <= self.ch_axis < x.dim():
            raise IndexError(f"{type(self).__name__}: ch_axis {self.ch_axis} is out of range for an input of "
                             f"{x.dim()} dimensions")
        y = x.movedim(self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
        return y.amin(1), y.amax(1)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = self._channel_minmax(x)
        if self.min_val.numel() == 0:
            self.min_val, self.max_val = lo, hi
        else:
            self._update(lo, hi)
        return x_orig

    def _update(self, lo, hi):
        self.min_val = minitorch.minimum(lo, self.min_val)
        self.max_val = minitorch.maximum(hi, self.max_val)

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val!r}, max_val={self.max_val!r}"

    def reset_min_max_vals(self):
        self.min_val = minitorch.tensor([])
        self.max_val = minitorch.tensor([])

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        # the channel count is known only once data (or a checkpoint) has been seen
        load_resizable(self, state_dict, prefix, error_msgs, ("min_val", "max_val"))


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel min and max as moving averages (see ``MovingAverageMinMaxObserver``)."""

    def __init__(self, averaging_constant: float = 0.01, ch_axis: int = 0, dtype=None, qscheme=None,
                 reduce_range: bool = False, quant_min=None, quant_max=None, eps: float = _EPS32,
                 is_dynamic: bool = False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def _update(self, lo, hi):
        c = self.averaging_constant
        self.min_val = self.min_val + c * (lo - self.min_val)
        self.max_val = self.max_val + c * (hi - self.max_val)


class HistogramObserver(UniformQuantizationObserverBase):
    """Keeps a histogram (``bins`` bins over the running min..max) and picks the sub-range
    whose quantization minimizes the L2 error of the histogram's values, PyTorch's search:
    starting from the whole range, it repeatedly trims whichever tail holds less mass (in steps
    of 1e-5 of the total) and stops when the error estimate stops falling. The clipped
    outliers cost less than the resolution a wide range would waste on them.

    When a batch widens the range, the old histogram is re-binned onto the new range
    (``_upscale_histogram``, PyTorch 2's method). Simplification: the search runs in Python
    with NumPy over up to ``1 / 1e-5`` steps, so ``calculate_qparams`` can take a moment.
    """

    def __init__(self, bins: int = 2048, upsample_rate: int = 128, dtype=None, qscheme=None,
                 reduce_range: bool = False, quant_min=None, quant_max=None, factory_kwargs=None, eps: float = _EPS32,
                 is_dynamic: bool = False, **kwargs):
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic)
        if qt.is_per_channel(self.qscheme):
            raise ValueError(f"HistogramObserver is a per-tensor observer, got qscheme={self.qscheme}")
        self.bins = bins
        self.upsample_rate = upsample_rate
        self.register_buffer("histogram", minitorch.zeros(bins))
        self.register_buffer("min_val", minitorch.tensor(math.inf))
        self.register_buffer("max_val", minitorch.tensor(-math.inf))
        self.dst_nbins = 2 ** qt.qrange(self.dtype)[0]

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x_np = x_orig.detach().to(minitorch.float32).cpu().numpy().ravel()
        x_np = x_np[np.abs(x_np) != np.inf]  # an infinite value must not make the range infinite
        if x_np.size == 0:
            return x_orig
        lo, hi = np.float32(x_np.min()), np.float32(x_np.max())
        cur_lo, cur_hi = np.float32(self.min_val.item()), np.float32(self.max_val.item())
        if cur_lo == np.inf or cur_hi == -np.inf:
            hist, new_lo, new_hi = self._histc(x_np, lo, hi), lo, hi
        else:
            new_lo, new_hi = min(lo, cur_lo), max(hi, cur_hi)
            hist = self._histc(x_np, new_lo, new_hi)
            old = self.histogram.cpu().numpy().astype(np.float64)
            if (new_lo, new_hi) == (cur_lo, cur_hi):
                hist = hist + old
            elif cur_lo == cur_hi:  # the old histogram is one value: put all its count in that bin
                hist = hist + self._histc(np.array([cur_lo], np.float32), new_lo, new_hi) * old.sum()
            else:
                hist = hist + self._upscale_histogram(old, float(cur_lo), float(cur_hi), float(new_lo),
                                                      float(new_hi))
        self.histogram = minitorch.tensor(hist.astype(np.float32))
        self.min_val = minitorch.tensor(float(new_lo))
        self.max_val = minitorch.tensor(float(new_hi))
        return x_orig

    def _upscale_histogram(self, hist: np.ndarray, lo: float, hi: float, new_lo: float, new_hi: float) -> np.ndarray:
        """``hist`` (over [lo, hi]) re-binned over the wider [new_lo, new_hi], PyTorch's way: each bin
        split into ``upsample_rate`` equal parts, each part's count put in the new bin holding its
        midpoint (finer parts, smaller re-binning error)."""
        r = self.upsample_rate
        fine = np.repeat(hist, r) / r
        width = (hi - lo) / (self.bins * r)
        mids = np.linspace(lo, hi, self.bins * r + 1)[:-1] + 0.5 * width
        edges = np.linspace(new_lo, new_hi, self.bins + 1)
        idx = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, self.bins - 1)
        return np.bincount(idx, weights=fine, minlength=self.bins)

    def _histc(self, x: np.ndarray, lo, hi) -> np.ndarray:
        """torch.histc: ``bins`` equal bins over [lo, hi] (the last bin closed); lo == hi widens by 1."""
        lo, hi = float(lo), float(hi)
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        idx = np.floor((x.astype(np.float64) - lo) * self.bins / (hi - lo)).astype(np.int64)
        idx = np.clip(idx, 0, self.bins - 1)
        return np.bincount(idx, minlength=self.bins).astype(np.float64)

    def _get_norm(self, delta_begin, delta_end, density):
        """The L2 error of values spread with ``density`` over [delta_begin, delta_end] around a
        quantized value: the integral of delta^2."""
        return density * (delta_end ** 3 - delta_begin ** 3) / 3

    def _compute_quantization_error(self, next_start_bin: int, next_end_bin: int) -> float:
        """The L2 error of quantizing the histogram to ``dst_nbins`` levels spread over bins
        ``next_start_bin..next_end_bin`` (values outside are clamped to its ends)."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = np.arange(self.bins, dtype=np.float64)
        src_begin = (src_bin - next_start_bin) * bin_width
        src_end = src_begin + bin_width
        dst_of_begin = np.clip(np.floor(src_begin / dst_bin_width), 0, self.dst_nbins - 1)
        dst_of_begin_center = (dst_of_begin + 0.5) * dst_bin_width
        dst_of_end = np.clip(np.floor(src_end / dst_bin_width), 0, self.dst_nbins - 1)
        density = self._hist_np / bin_width
        half = dst_bin_width / 2
        norm = self._get_norm(src_begin - dst_of_begin_center, np.full(self.bins, half), density)
        norm += (dst_of_end - dst_of_begin - 1) * self._get_norm(-half, half, density)
        dst_of_end_center = dst_of_end * dst_bin_width + half
        norm += self._get_norm(-half, src_end - dst_of_end_center, density)
        return float(norm.sum())

    def _non_linear_param_search(self) -> tuple:
        """The (min, max) the L2 search settles on (see the class docstring)."""
        self._hist_np = self.histogram.cpu().numpy().astype(np.float64)
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        total = float(self._hist_np.sum())
        csum = np.cumsum(self._hist_np)
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = math.inf
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < next_alpha * total:
                left += 1
            while right > start_bin and csum[right] > next_beta * total:
                right -= 1
            next_start, next_end = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):  # trim the lighter tail
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._compute_quantization_error(next_start, next_end)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start, next_end
        lo = self.min_val + bin_width * start_bin
        hi = self.min_val + bin_width * (end_bin + 1)
        return lo, hi

    def calculate_qparams(self):
        if self.min_val.item() == math.inf and self.max_val.item() == -math.inf:
            warnings.warn("must run observer before calling calculate_qparams. Returning default scale and "
                          "zero point ")
            return minitorch.tensor([1.0]), minitorch.tensor([0], dtype=minitorch.int32)
        lo, hi = self._non_linear_param_search()
        return self._calculate_qparams(lo, hi)

    def extra_repr(self) -> str:
        return f"min_val={_fmt(self.min_val)}, max_val={_fmt(self.max_val)}"

    def reset_min_max_vals(self):
        self.min_val = minitorch.tensor(math.inf)
        self.max_val = minitorch.tensor(-math.inf)
        self.histogram = minitorch.zeros(self.bins)


class PlaceholderObserver(ObserverBase):
    """Observes nothing: carries a dtype (and for dynamic quantization ``is_dynamic=True``:
    the activation's qparams are computed from each batch at run time)."""

    def __init__(self, dtype=None, custom_op_name: str = "", compute_dtype=None, quant_min=None, quant_max=None,
                 qscheme=None, eps=None, is_dynamic: bool = False):
        super().__init__(dtype=minitorch.float32 if dtype is None else dtype, is_dynamic=is_dynamic)
        self.qscheme = qt.per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max, self.eps = quant_min, quant_max, eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise RuntimeError("calculate_qparams should not be called for PlaceholderObserver")

    def extra_repr(self) -> str:
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"


class NoopObserver(ObserverBase):
    """Observes nothing and carries a (float) dtype: the weight "observer" of float16 modes."""

    def __init__(self, dtype=None, custom_op_name: str = ""):
        super().__init__(dtype=minitorch.float16 if dtype is None else dtype)
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise RuntimeError("calculate_qparams should not be called for NoopObserver")


# ---- the defaults PyTorch names ----
default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = MinMaxObserver  # PyTorch's RecordingObserver is not provided
default_weight_observer = MinMaxObserver.with_args(dtype=qt.qint8, qscheme=qt.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(
    dtype=qt.qint8, qscheme=qt.per_tensor_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=qt.qint8,
                                                                         qscheme=qt.per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=qt.quint8, quant_min=0, quant_max=255,
                                                              is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=qt.quint8, qscheme=qt.per_channel_affine_float_qparams, ch_axis=0)


def load_resizable(module, state_dict, prefix: str, error_msgs: list, resizable: tuple) -> None:
    """Loads a module's buffers from ``state_dict``, taking the shape of the saved value for the
    ``resizable`` ones (per-channel statistics and qparams: their size comes from the data)."""
    for key, v in module._buffers.items():
        if v is None or prefix + key not in state_dict:
            continue
        new = state_dict[prefix + key]
        if key in resizable:
            setattr(module, key, new.detach().clone().to(v.dtype).to(v.device))
        elif tuple(new.shape) != tuple(v.shape):
            error_msgs.append(f"size mismatch for {prefix + key}: copying a param with shape {tuple(new.shape)} "
                              f"from checkpoint, the shape in current model is {tuple(v.shape)}.")
        else:
            v.copy_(new.to(v.device))


def get_observer_state_dict(mod) -> dict:
    """The observer (and fake-quantize) entries of ``mod.state_dict()``."""
    return {k: v for k, v in mod.state_dict().items() if "activation_post_process" in k or "observer" in k}
