"""Helpers shared by the quantized modules: quantizing a float weight with its observer, the
repr that hides packed parameters, and saving numbers (scale, zero_point) as tensors."""
from __future__ import annotations

import minitorch

from ...quantization import _qtypes as qt


def _quantize_weight(float_wt, observer):
    """``float_wt`` quantized with the qparams ``observer`` (which has seen it) chose:
    per tensor, or per channel along the observer's ``ch_axis``."""
    wt_scale, wt_zp = observer.calculate_qparams()
    dtype = observer.dtype
    if qt.dtype_name(dtype) != "qint8" and observer.qscheme != qt.per_channel_affine_float_qparams:
        raise RuntimeError(f"Weight observer must have dtype minitorch.qint8, got {dtype}")
    w = float_wt.detach().to(minitorch.float32)
    if observer.qscheme in qt.PER_TENSOR:
        return minitorch.quantize_per_tensor(w, float(wt_scale.item()), int(wt_zp.item()), minitorch.qint8)
    if observer.qscheme in (qt.per_channel_affine, qt.per_channel_symmetric):
        return minitorch.quantize_per_channel(w, wt_scale.to(minitorch.float64), wt_zp.to(minitorch.int64),
                                              observer.ch_axis, minitorch.qint8)
    raise ValueError(f"Unsupported qscheme for a weight: {observer.qscheme}")


def _check_float_module(cls, mod, float_types: tuple) -> None:
    if type(mod) not in float_types:
        want = ", ".join(t.__name__ for t in float_types)
        raise TypeError(f"nnq.{cls.__name__}.from_float only works for {want}, got {type(mod).__name__}")
    if getattr(mod, "qconfig", None) is None:
        raise RuntimeError("Input float module must have qconfig defined")


def _act_qparams(mod) -> tuple:
    """(scale, zero_point) of a prepared float module's output observer."""
    app = getattr(mod, "activation_post_process", None)
    if app is None:
        raise RuntimeError(f"{type(mod).__name__} has no activation_post_process: call prepare() (and calibrate) "
                           "before convert()")
    scale, zp = app.calculate_qparams()
    return float(scale.item()), int(zp.item())


def _hide_children_repr(mod, hidden: tuple) -> str:
    """PyTorch's repr of a quantized module: its extra_repr and children, minus packed params."""
    lines = []
    extra = mod.extra_repr()
    if extra:
        lines = extra.split("\n")
    for name, m in mod._modules.items():
        if isinstance(m, hidden):
            continue
        lines.append(f"({name}): " + repr(m).replace("\n", "\n  "))
    main = mod._get_name() + "("
    if not lines:
        return main + ")"
    if len(lines) == 1 and all(isinstance(m, hidden) for m in mod._modules.values()):
        return main + lines[0] + ")"
    return main + "\n  " + "\n  ".join(lines) + "\n)"


def _load_number(state_dict, key: str, cast, error_msgs: list, default):
    if key not in state_dict:
        return default
    v = state_dict[key]
    try:
        return cast(v.item() if hasattr(v, "item") else v)
    except (TypeError, ValueError, RuntimeError) as e:
        error_msgs.append(f"While copying {key}: {e}")
        return default
