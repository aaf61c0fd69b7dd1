"""Module fusion: ``fuse_modules(model, [["conv", "bn", "relu"], ...])``.

Each listed group of consecutive modules is replaced by one: the first name gets the fused
module, the others become ``nn.Identity`` (so ``forward`` needs no change). In eval mode a
batch norm after a convolution or linear layer is *folded* into its weight and bias:

    y = gamma * (W x + b - mean) / sqrt(var + eps) + beta
      = (W * s) x + (b - mean) * s + beta,        s = gamma / sqrt(var + eps)

so the quantized model runs one integer convolution instead of a convolution and a batch norm.
``fuse_modules_qat`` keeps the batch norm (``intrinsic.ConvBn2d``): QAT learns through it and
folds it at ``convert``.
"""
from __future__ import annotations

import copy

import minitorch

from ...nn.activation import ReLU
from ...nn.batchnorm import BatchNorm1d, BatchNorm2d
from ...nn.conv import Conv2d
from ...nn.linear import Identity, Linear
from ...nn.parameter import Parameter
from ..nn import intrinsic as nni


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The folded ``(weight, bias)`` of a convolution followed by an eval-mode batch norm."""
    with minitorch.no_grad():
        if conv_b is None:
            conv_b = minitorch.zeros_like(bn_rm)
        if bn_w is None:
            bn_w = minitorch.ones_like(bn_rm)
        if bn_b is None:
            bn_b = minitorch.zeros_like(bn_rm)
        s = bn_w / (bn_rv + bn_eps).sqrt()
        w = conv_w * s.reshape([-1] + [1] * (conv_w.dim() - 1))
        b = (conv_b - bn_rm) * s + bn_b
    return Parameter(w.to(conv_w.dtype), conv_w.requires_grad), Parameter(b.to(conv_w.dtype), conv_w.requires_grad)


def _check_eval(what: str, *mods) -> None:
    if any(m.training for m in mods):
        raise RuntimeError(f"{what}: Fusion only for eval! (call model.eval() before fuse_modules, or use "
                           "fuse_modules_qat for training)")


def fuse_conv_bn_eval(conv, bn):
    """A copy of ``conv`` with ``bn`` (eval mode) folded into its weight and bias."""
    _check_eval("fuse_conv_bn_eval", conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` with ``bn`` (eval mode, over its outputs) folded in."""
    _check_eval("fuse_linear_bn_eval", linear, bn)
    if linear.out_features != bn.num_features:
        raise ValueError(f"fuse_linear_bn_eval: Linear's out_features ({linear.out_features}) must match "
                         f"BatchNorm1d's num_features ({bn.num_features})")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias)
    return fused


def _same_mode(*mods) -> None:
    if len({m.training for m in mods}) != 1:
        raise RuntimeError("Conv and BN both must be in the same mode (train or eval).")


def fuse_conv_bn(is_qat: bool, conv, bn):
    _same_mode(conv, bn)
    return nni.ConvBn2d(conv, bn) if is_qat else fuse_conv_bn_eval(conv, bn)


def fuse_conv_bn_relu(is_qat: bool, conv, bn, relu):
    _same_mode(conv, bn, relu)
    return nni.ConvBnReLU2d(conv, bn, relu) if is_qat else nni.ConvReLU2d(fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat: bool, linear, bn):
    _same_mode(linear, bn)
    return nni.LinearBn1d(linear, bn) if is_qat else fuse_linear_bn_eval(linear, bn)


# (types of the group) -> fuser(is_qat, *modules)
DEFAULT_OP_LIST_TO_FUSER_METHOD = {
    (Conv2d, BatchNorm2d): fuse_conv_bn,
    (Conv2d, BatchNorm2d, ReLU): fuse_conv_bn_relu,
    (Conv2d, ReLU): lambda is_qat, conv, relu: nni.ConvReLU2d(conv, relu),
    (Linear, ReLU): lambda is_qat, linear, relu: nni.LinearReLU(linear, relu),
    (Linear, BatchNorm1d): fuse_linear_bn,
    (BatchNorm2d, ReLU): lambda is_qat, bn, relu: nni.BNReLU2d(bn, relu),
}


def get_fuser_method(op_list: tuple, additional_fuser_method_mapping=None):
    mapping = dict(DEFAULT_OP_LIST_TO_FUSER_METHOD)
    mapping.update(additional_fuser_method_mapping or {})
    fuser = mapping.get(tuple(op_list))
    if fuser is None:
        raise NotImplementedError(f"did not find fuser method for: {tuple(t.__name__ for t in op_list)}")
    return fuser


def fuse_known_modules(mod_list: list, is_qat: bool, additional_fuser_method_mapping=None) -> list:
    """The fused module for ``mod_list`` followed by ``nn.Identity()`` for the others."""
    types = tuple(type(m) for m in mod_list)
    try:
        fuser = get_fuser_method(types, additional_fuser_method_mapping)
    except NotImplementedError:
        raise NotImplementedError(f"Cannot fuse modules: {tuple(t.__name__ for t in types)}; supported groups: "
                                  + ", ".join("(" + ", ".join(t.__name__ for t in k) + ")"
                                              for k in DEFAULT_OP_LIST_TO_FUSER_METHOD)) from None
    fused = fuser(is_qat, *mod_list)
    # forward pre-hooks of the first module and forward hooks of the last run on the fused one
    for h in getattr(mod_list[0], "_forward_pre_hooks", {}).values():
        fused.register_forward_pre_hook(h)
    for h in getattr(mod_list[-1], "_forward_hooks", {}).values():
        fused.register_forward_hook(h)
    out = [fused]
    for m in mod_list[1:]:
        ident = Identity()
        ident.training = mod_list[0].training
        out.append(ident)
    return out


def _get_module(model, name: str):
    mod = model
    for part in name.split("."):
        if part not in mod._modules:
            raise AttributeError(f"fuse_modules: {type(model).__name__} has no submodule {name!r}")
        mod = mod._modules[part]
    return mod


def _set_module(model, name: str, new) -> None:
    *parents, last = name.split(".")
    mod = model
    for part in parents:
        mod = mod._modules[part]
    setattr(mod, last, new)


def _fuse_modules(model, modules_to_fuse, is_qat: bool, inplace: bool, fuser_func, fuse_custom_config_dict):
    if not inplace:
        model = copy.deepcopy(model)
    if not isinstance(modules_to_fuse, (list, tuple)) or not modules_to_fuse:
        raise TypeError("fuse_modules: modules_to_fuse must be a list of module names or a list of such lists")
    groups = [modules_to_fuse] if all(isinstance(n, str) for n in modules_to_fuse) else modules_to_fuse
    extra = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    for group in groups:
        mods = [_get_module(model, n) for n in group]
        fused = fuser_func(mods, is_qat, extra)
        for name, m in zip(group, fused):
            _set_module(model, name, m)
    return model


def fuse_modules(model, modules_to_fuse, inplace: bool = False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuses each group of ``modules_to_fuse`` (dotted names) for post-training quantization
    (eval mode: batch norms are folded). Supported groups: conv-bn, conv-bn-relu, conv-relu,
    linear-relu, linear-bn, bn-relu.

    >>> model.eval()
    >>> fused = fuse_modules(model, [["conv1", "bn1", "relu1"], ["fc1", "relu2"]])
    """
    return _fuse_modules(model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace: bool = False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """``fuse_modules`` for quantization-aware training (train mode: conv-bn stays ``ConvBn2d``)."""
    return _fuse_modules(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)
