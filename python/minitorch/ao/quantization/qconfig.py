"""``QConfig``: which observer (or fake-quantize) to attach to a module's output activation
and which to its weight. ``prepare`` reads ``module.qconfig`` (inherited by children) and
``convert`` uses the observers it made.

A qconfig holds *factories* (``Observer.with_args(...)`` or a class), not observers: every
module gets observers of its own.

    >>> model.qconfig = get_default_qconfig("x86")   # histogram activations, per-channel weights
"""
from __future__ import annotations

from collections import namedtuple

from . import _qtypes as qt
from .fake_quantize import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_per_channel_wt_fake_quant, default_fused_wt_fake_quant,
                            default_per_channel_weight_fake_quant, default_weight_fake_quant)
from .observer import (HistogramObserver, MovingAverageMinMaxObserver, PlaceholderObserver,
                       default_dynamic_quant_observer, default_float_qparams_observer, default_observer,
                       default_per_channel_weight_observer, default_placeholder_observer, default_weight_observer)
from ...nn.module import Module


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """``QConfig(activation=..., weight=...)``: observer factories (classes or ``with_args``
    results), not observer instances."""

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=None, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=None))
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=lambda: _Identity(), weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=lambda: _Identity())

_BACKENDS = ("x86", "fbgemm", "qnnpack", "onednn")


def _check_backend(fn: str, backend: str) -> None:
    if backend not in _BACKENDS:
        raise ValueError(f"{fn}: backend {backend!r} not supported: expected one of {', '.join(map(repr, _BACKENDS))}")


def get_default_qconfig(backend: str = "x86", version: int = 0) -> QConfig:
    """The post-training static qconfig of a backend: x86/fbgemm use a histogram observer with
    ``reduce_range=True`` and per-channel symmetric weights; qnnpack the full range and
    per-tensor weights (ARM kernels have no 16-bit overflow); onednn like x86 without reduce_range."""
    _check_backend("get_default_qconfig", backend)
    if backend in ("x86", "fbgemm"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                   weight=default_per_channel_weight_observer)


def get_default_qat_qconfig(backend: str = "x86", version: int = 1) -> QConfig:
    """The quantization-aware-training qconfig of a backend: moving-average fake-quantize on
    activations and weights (per channel for x86/fbgemm/onednn)."""
    _check_backend("get_default_qat_qconfig", backend)
    fq = FusedMovingAvgObsFakeQuantize if version == 1 else FakeQuantize
    act = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                       reduce_range=backend in ("x86", "fbgemm"))
    if backend == "qnnpack":
        weight = default_fused_wt_fake_quant if version == 1 else default_weight_fake_quant
    else:
        weight = default_fused_per_channel_wt_fake_quant if version == 1 else default_per_channel_weight_fake_quant
    return QConfig(activation=act, weight=weight)


def get_default_qconfig_dict(backend: str = "x86", version: int = 0) -> dict:
    return {"": get_default_qconfig(backend, version)}


def _is_float_dtype(dtype) -> bool:
    return not qt.is_quantized_dtype(dtype)


class _Identity(Module):
    def forward(self, x):
        return x


__all__ = ["QConfig", "default_qconfig", "default_per_channel_qconfig", "default_dynamic_qconfig",
           "per_channel_dynamic_qconfig", "float16_dynamic_qconfig", "float_qparams_weight_only_qconfig",
           "default_qat_qconfig", "default_weight_only_qconfig", "default_activation_only_qconfig",
           "get_default_qconfig", "get_default_qat_qconfig", "get_default_qconfig_dict"]
