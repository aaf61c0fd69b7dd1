"""Fake-quantize modules: an observer plus ``fake_quantize_per_{tensor,channel}_affine``.

In quantization-aware training every weight and activation that will be quantized passes
through a ``FakeQuantize``: it observes the values (updating ``scale``/``zero_point``) and
returns them rounded to the quantization grid but still float, so the loss sees the rounding
error while the straight-through gradient lets the float weights keep learning. ``convert``
later reads the learned ``scale``/``zero_point`` from it.
"""
from __future__ import annotations

import minitorch

from ...nn.module import Module
from . import _qtypes as qt
from .observer import MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, _with_args, load_resizable


class FakeQuantizeBase(Module):
    """The switches every fake-quantize module has: ``fake_quant_enabled`` and
    ``observer_enabled`` (uint8 buffers, as PyTorch's, so they are saved with the model)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", minitorch.tensor([1], dtype=minitorch.uint8))
        self.register_buffer("observer_enabled", minitorch.tensor([1], dtype=minitorch.uint8))
        self.is_dynamic = False

    def enable_fake_quant(self, enabled: bool = True):
        self.fake_quant_enabled = minitorch.tensor([1 if enabled else 0], dtype=minitorch.uint8)
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True):
        self.observer_enabled = minitorch.tensor([1 if enabled else 0], dtype=minitorch.uint8)
        return self

    def disable_observer(self):
        return self.enable_observer(False)

    with_args = classmethod(_with_args)


class FakeQuantize(FakeQuantizeBase):
    """Observe (while ``observer_enabled``), then fake-quantize (while ``fake_quant_enabled``):

        scale, zero_point = observer.calculate_qparams()
        out = (clamp(round(x / scale + zero_point), quant_min, quant_max) - zero_point) * scale

    ``observer`` (``MovingAverageMinMaxObserver``) is made with ``quant_min``, ``quant_max`` and
    the other keyword arguments (``dtype``, ``qscheme``, ``reduce_range``, ``ch_axis``...).
    """

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise ValueError(f"FakeQuantize: quant_min ({quant_min}) must be less than or equal to quant_max "
                                 f"({quant_max})")
            observer_kwargs["quant_min"], observer_kwargs["quant_max"] = quant_min, quant_max
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        self.quant_min, self.quant_max = app.quant_min, app.quant_max
        self.register_buffer("scale", minitorch.tensor([1.0]))
        self.register_buffer("zero_point", minitorch.tensor([0], dtype=minitorch.int32))
        self.dtype = app.dtype
        self.qscheme = app.qscheme
        self.ch_axis = getattr(app, "ch_axis", -1)
        self.is_per_channel = qt.is_per_channel(self.qscheme)
        self.is_dynamic = is_dynamic

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if self.observer_enabled[0].item() == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            self.scale = scale.to(X.device)
            self.zero_point = zero_point.to(minitorch.int32).to(X.device)
        if self.fake_quant_enabled[0].item() == 1:
            if self.is_per_channel:
                X = minitorch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                               self.quant_min, self.quant_max)
            else:
                X = minitorch.fake_quantize_per_tensor_affine(X, self.scale.item(), int(self.zero_point.item()),
                                                              self.quant_min, self.quant_max)
        return X

    def extra_repr(self) -> str:
        return (f"fake_quant_enabled={self.fake_quant_enabled!r}, observer_enabled={self.observer_enabled!r}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}, dtype={self.dtype}, "
                f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale!r}, "
                f"zero_point={self.zero_point!r}")

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        # per-channel scale/zero_point take their channel count from the checkpoint
        load_resizable(self, state_dict, prefix, error_msgs, ("scale", "zero_point"))


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """PyTorch's single-kernel observer + fake-quantize; here the same computation as
    ``FakeQuantize`` with a moving-average observer (the fusion is a CUDA speed-up there)."""


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake-quantizes with fixed ``scale``/``zero_point`` (for outputs of known range: sigmoid
    in [0, 1] gets scale 1/256)."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        self.scale, self.zero_point = self.activation_post_process.calculate_qparams()
        self.disable_observer()


def _is_fake_quant(mod) -> bool:
    return isinstance(mod, FakeQuantizeBase)


def disable_fake_quant(mod):
    """``model.apply(disable_fake_quant)``: fake-quantize modules pass values through unrounded."""
    if _is_fake_quant(mod):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    if _is_fake_quant(mod):
        mod.enable_fake_quant()


def disable_observer(mod):
    """``model.apply(disable_observer)``: freeze the learned scales (late in QAT)."""
    if _is_fake_quant(mod):
        mod.disable_observer()


def enable_observer(mod):
    if _is_fake_quant(mod):
        mod.enable_observer()


# ---- the defaults PyTorch names ----
default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=qt.quint8, qscheme=qt.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=qt.qint8, qscheme=qt.per_tensor_symmetric,
                                                   reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qt.qint8,
    qscheme=qt.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=qt.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qt.qint8,
    qscheme=qt.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qt.qint8,
    qscheme=qt.per_channel_symmetric)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize", "FixedQParamsFakeQuantize",
           "disable_fake_quant", "enable_fake_quant", "disable_observer", "enable_observer",
           "default_fake_quant", "default_weight_fake_quant", "default_per_channel_weight_fake_quant",
           "default_fused_act_fake_quant", "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant"]
