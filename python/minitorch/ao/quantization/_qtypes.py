"""The quantized dtypes and quantization schemes the workflows name (``minitorch.quint8``,
``minitorch.per_tensor_affine``...), with the facts about them the observers need: the bit
width and default integer range of a dtype, and the kind of a scheme."""
from __future__ import annotations

from ..._quantized import (per_channel_affine, per_channel_affine_float_qparams,  # noqa: F401
                          per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qint8, qint32, quint8)

PER_TENSOR = (per_tensor_affine, per_tensor_symmetric)
PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)
SYMMETRIC = (per_tensor_symmetric, per_channel_symmetric)

# dtype -> (bits, default quant_min, default quant_max); the float dtypes are "not quantized"
_RANGES = {"quint8": (8, 0, 255), "qint8": (8, -128, 127), "qint32": (32, -2 ** 31, 2 ** 31 - 1),
           "uint8": (8, 0, 255), "int8": (8, -128, 127), "int32": (32, -2 ** 31, 2 ** 31 - 1)}


def dtype_name(dtype) -> str:
    return getattr(dtype, "name", str(dtype))


def is_quantized_dtype(dtype) -> bool:
    return dtype_name(dtype) in _RANGES


def qrange(dtype) -> tuple:
    """(bits, quant_min, quant_max) of an integer (quantized) dtype."""
    return _RANGES[dtype_name(dtype)]


def is_per_channel(qscheme) -> bool:
    return qscheme in PER_CHANNEL
