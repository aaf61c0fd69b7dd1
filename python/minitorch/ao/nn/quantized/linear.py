"""The quantized ``Linear`` (``torch.ao.nn.quantized.Linear``): quint8 input, qint8 weight (per
tensor or per output channel), float bias, quint8 output with the ``scale``/``zero_point`` its
observer chose; the integer GEMM is ``minitorch.ops.quantized.linear``."""
from __future__ import annotations

import minitorch

from ....nn.linear import Linear as FloatLinear
from ....nn.module import Module
from .utils import _act_qparams, _check_float_module, _hide_children_repr, _load_number, _quantize_weight


class LinearPackedParams(Module):
    """Holds the quantized weight and the float bias (PyTorch packs them for fbgemm; here
    they are kept as they are). State: ``dtype`` and ``_packed_params`` = ``(weight, bias)``."""

    def __init__(self, dtype=None):
        super().__init__()
        self.dtype = minitorch.qint8 if dtype is None else dtype
        wq = minitorch.quantize_per_tensor(minitorch.zeros(1, 1), 1.0, 0, minitorch.qint8)
        self.set_weight_bias(wq, None)

    def set_weight_bias(self, weight, bias) -> None:
        if not getattr(weight, "is_quantized", False) or weight.dtype is not minitorch.qint8:
            raise RuntimeError(f"LinearPackedParams: expected a qint8 quantized weight, got "
                               f"{getattr(weight, 'dtype', type(weight).__name__)}")
        self._weight = weight
        self._bias = None if bias is None else bias.detach().to(minitorch.float32)

    def _weight_bias(self) -> tuple:
        return self._weight, self._bias

    def _to_device(self, device) -> None:
        """Module.to(device) moves the quantized weight and the bias here (not Tensors'
        parameters: they are plain attributes)."""
        self._weight = self._weight.to(device)
        self._bias = None if self._bias is None else self._bias.to(device)

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix):
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        if prefix + "dtype" in state_dict:
            self.dtype = state_dict[prefix + "dtype"]
        if prefix + "_packed_params" in state_dict:
            w, b = state_dict[prefix + "_packed_params"]
            self.set_weight_bias(w, b)

    def __repr__(self) -> str:
        return repr(self._weight_bias())


class Linear(Module):
    """``y = x @ W.T + b`` on quantized tensors (PyTorch's ``QuantizedLinear``); made from a
    prepared float ``nn.Linear`` by ``convert`` (``from_float``)."""

    _FLOAT_MODULE = (FloatLinear,)
    _NAME = "QuantizedLinear"

    def __init__(self, in_features: int, out_features: int, bias_: bool = True, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        dtype = minitorch.qint8 if dtype is None else dtype
        if dtype is not minitorch.qint8:
            raise RuntimeError(f"Unsupported dtype specified for quantized Linear: {dtype}")
        wq = minitorch.quantize_per_tensor(minitorch.zeros(out_features, in_features), 1.0, 0, minitorch.qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(wq, minitorch.zeros(out_features) if bias_ else None)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self) -> str:
        return self._NAME

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}")

    def __repr__(self) -> str:
        return _hide_children_repr(self, (LinearPackedParams,))

    def forward(self, x):
        w, b = self._weight_bias()
        return minitorch.ops.quantized.linear(x, w, b, self.scale, self.zero_point)

    # ---- weight access (PyTorch's names) ----
    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b) -> None:
        self._packed_params.set_weight_bias(w, b)

    # ---- state ----
    def _save_to_state_dict(self, destination, prefix):
        destination[prefix + "scale"] = minitorch.tensor(self.scale)
        destination[prefix + "zero_point"] = minitorch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, error_msgs):
        self.scale = _load_number(state_dict, prefix + "scale", float, error_msgs, self.scale)
        self.zero_point = _load_number(state_dict, prefix + "zero_point", int, error_msgs, self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False):
        """The quantized form of a prepared ``nn.Linear`` (or fused ``LinearReLU``, or QAT
        module): its weight quantized with the qconfig's weight observer (the QAT module's
        ``weight_fake_quant``), its output qparams from its ``activation_post_process``."""
        weight = bias = None
        if hasattr(mod, "weight_fake_quant"):  # a QAT module: its fake-quantize modules hold the qparams
            weight_post_process = mod.weight_fake_quant
            float_mod = mod
            if hasattr(mod, "bn"):  # LinearBn1d: fold the batch norm's running statistics
                from ...quantization.fuse_modules import fuse_conv_bn_weights

                bn = mod.bn
                weight, bias = fuse_conv_bn_weights(mod.weight, mod.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias)
        else:
            _check_float_module(cls, mod, cls._FLOAT_MODULE)
            float_mod = mod[0] if isinstance(mod, minitorch.nn.Sequential) else mod
            weight_post_process = mod.qconfig.weight()
        if weight is None:
            weight, bias = float_mod.weight, float_mod.bias
        scale, zero_point = _act_qparams(mod)
        weight_post_process(weight)
        qweight = _quantize_weight(weight, weight_post_process)
        q = cls(float_mod.in_features, float_mod.out_features, dtype=minitorch.qint8)
        q.set_weight_bias(qweight, bias)
        q.scale, q.zero_point = scale, zero_point
        return q

    @classmethod
    def from_reference(cls, ref_qlinear, output_scale: float, output_zero_point: int):
        raise NotImplementedError("reference quantized modules are not provided in minitorch")

