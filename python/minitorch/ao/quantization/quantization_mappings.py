"""Which module ``convert`` swaps each module type for, per workflow (PyTorch's
``get_default_static_quant_module_mappings`` and friends)."""
from __future__ import annotations

from ...nn.activation import ReLU6
from ...nn.conv import Conv2d
from ...nn.linear import Linear
from ...nn.rnn import LSTM
from ..nn import intrinsic as nni
from ..nn import qat as nnqat
from ..nn import quantized as nnq
from ..nn.intrinsic import qat as nniqat
from ..nn.intrinsic import quantized as nniq
from ..nn.quantized import dynamic as nnqd
from .stubs import DeQuantStub, QuantStub

DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: nnq.Quantize,
    DeQuantStub: nnq.DeQuantize,
    Linear: nnq.Linear,
    Conv2d: nnq.Conv2d,
    ReLU6: nnq.ReLU6,
    nnq.FloatFunctional: nnq.QFunctional,
    nni.ConvReLU2d: nniq.ConvReLU2d,
    nni.LinearReLU: nniq.LinearReLU,
    nnqat.Linear: nnq.Linear,
    nnqat.Conv2d: nnq.Conv2d,
    nniqat.ConvBn2d: nnq.Conv2d,
    nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
    nniqat.ConvReLU2d: nniq.ConvReLU2d,
    nniqat.LinearReLU: nniq.LinearReLU,
    nniqat.LinearBn1d: nnq.Linear,
}

DEFAULT_QAT_MODULE_MAPPINGS = {
    Conv2d: nnqat.Conv2d,
    Linear: nnqat.Linear,
    nni.ConvBn2d: nniqat.ConvBn2d,
    nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    nni.ConvReLU2d: nniqat.ConvReLU2d,
    nni.LinearReLU: nniqat.LinearReLU,
    nni.LinearBn1d: nniqat.LinearBn1d,
}

DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS = {
    Linear: nnqd.Linear,
    LSTM: nnqd.LSTM,
}

# module types that never get an output observer (their output is float, or keeps its input's qparams)
_NO_OBSERVER = (DeQuantStub, nnq.FloatFunctional)


def get_default_static_quant_module_mappings() -> dict:
    return dict(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)


def get_default_qat_module_mappings() -> dict:
    return dict(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_dynamic_quant_module_mappings() -> dict:
    return dict(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)


def get_default_qconfig_propagation_list() -> set:
    """The module types ``prepare`` attaches observers to (those ``convert`` can swap)."""
    return (set(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS) | set(DEFAULT_QAT_MODULE_MAPPINGS)
            | set(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS))
