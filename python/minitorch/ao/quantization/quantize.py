"""Eager-mode quantization workflows (``torch.ao.quantization.quantize``).

Post-training static quantization::

    model.eval()
    model = fuse_modules(model, [["conv", "relu"], ["fc1", "relu1"]])
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)                 # observers after every quantizable module
    for x, _ in calibration_batches:          # calibrate: observers record ranges
        prepared(x)
    qmodel = convert(prepared)                # modules swapped for quantized ones

The model must mark where quantized values start and end (``QuantStub`` / ``DeQuantStub``, or
wrap it in ``QuantWrapper``). Quantization-aware training is ``prepare_qat`` (fake-quantize
modules, train as usual) then ``convert``; dynamic quantization is ``quantize_dynamic``
(weights only: no calibration).
"""
from __future__ import annotations

import copy
import itertools
import warnings

import minitorch

from ...nn.module import Module
from ..nn import intrinsic as nni
from ..nn import quantized as nnq
from .qconfig import default_dynamic_qconfig, float_qparams_weight_only_qconfig
from .qconfig_mapping import QConfigMapping
from .quantization_mappings import (_NO_OBSERVER, get_default_dynamic_quant_module_mappings,
                                    get_default_qat_module_mappings, get_default_static_quant_module_mappings)
from .stubs import QuantWrapper


def _check_model(fn: str, model) -> None:
    if not isinstance(model, Module):
        raise TypeError(f"{fn}: expected an nn.Module, got {type(model).__name__}")


def _propagate_qconfig_helper(module, qconfig_dict: dict, qconfig_parent=None, prefix: str = "") -> None:
    """Each module's ``qconfig``: its own if it has one (``None`` included), else its name's entry
    of ``qconfig_dict``, else its type's, else its parent's."""
    qconfig = qconfig_dict.get(type(module), qconfig_parent)
    qconfig = qconfig_dict.get(prefix, qconfig)  # "" (the whole model) is the global entry
    if "qconfig" in module.__dict__:  # its own, even None (None keeps it and its children float)
        qconfig = module.qconfig
    if qconfig is not None:
        _check_qconfig(qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate_qconfig_helper(child, qconfig_dict, qconfig, f"{prefix}.{name}" if prefix else name)


def _check_qconfig(qconfig) -> None:
    from .qconfig import QConfig

    if not isinstance(qconfig, QConfig):
        raise TypeError(f"qconfig must be a QConfig(activation=..., weight=...), got {type(qconfig).__name__}")
    for what in ("activation", "weight"):
        if not callable(getattr(qconfig, what)):
            raise TypeError(f"QConfig.{what} must be an observer class or a with_args(...) factory, got "
                            f"{type(getattr(qconfig, what)).__name__}")


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None) -> None:
    """Sets ``qconfig`` on every submodule (inherited from its parent unless overridden);
    ``qconfig_dict`` (or a ``QConfigMapping``) gives qconfigs by module type and by dotted name."""
    if isinstance(qconfig_dict, QConfigMapping):
        qconfig_dict = qconfig_dict.to_dict()
    _propagate_qconfig_helper(module, qconfig_dict or {})


def _observer_forward_hook(self, input, output):
    """Forward hook that runs the module's output through its observer."""
    return self.activation_post_process(output)


def _has_qconfig(m) -> bool:
    return getattr(m, "qconfig", None) is not None


def _add_observer(module, propagation_list: set, non_leaf: set) -> None:
    """Gives each quantizable leaf module (and fused module) with a qconfig an output observer
    ``activation_post_process`` run by a forward hook; ``FloatFunctional`` gets one it calls itself."""
    for name, child in module.named_children():
        if isinstance(child, nnq.FloatFunctional):
            if _has_qconfig(child):
                child.activation_post_process = child.qconfig.activation()
        elif isinstance(child, nni._FusedModule) or type(child) in non_leaf:
            if _has_qconfig(child):
                _insert_observer(child)
        elif type(child) in propagation_list and not child._modules and _has_qconfig(child) \
                and not isinstance(child, _NO_OBSERVER):
            _insert_observer(child)
        elif _has_qconfig(child) and type(child) in propagation_list and hasattr(child, "weight_fake_quant"):
            _insert_observer(child)  # QAT modules own a weight_fake_quant child but are leaves
        else:
            _add_observer(child, propagation_list, non_leaf)


def _module_device(module):
    """The device of a module's parameters and buffers (None if it has none)."""
    for t in itertools.chain(module.parameters(), module.buffers()):
        return t.device
    return None


def _insert_observer(module) -> None:
    act = module.qconfig.activation()
    if getattr(act, "dtype", None) is not None and not _quantizes(act):
        return  # a float "observer" (dynamic or weight-only configs): nothing to record
    device = _module_device(module)
    if device is not None:
        act.to(device)  # observe where the module computes (a model moved to cuda before prepare)
    module.add_module("activation_post_process", act)
    module.register_forward_hook(_observer_forward_hook)


def _quantizes(observer) -> bool:
    from . import _qtypes as qt

    return qt.is_quantized_dtype(observer.dtype) and not getattr(observer, "is_dynamic", False)


def prepare(model, inplace: bool = False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """A copy of ``model`` (or ``model`` itself with ``inplace``) with observers attached to the
    output of every module that has a ``qconfig`` and that ``convert`` can quantize. Run
    calibration data through it, then ``convert``."""
    _check_model("prepare", model)
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    if not any(_has_qconfig(m) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules")
    if allow_list is not None:
        propagation_list = set(allow_list)
    else:  # the static and QAT types (an LSTM's output is a tuple: it has no static quantized form)
        propagation_list = set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings())
    _add_observer(model, propagation_list, set(observer_non_leaf_module_list or ()))
    return model


def _remove_activation_post_process(module) -> None:
    if "activation_post_process" in module._modules and not isinstance(module, (nnq.FloatFunctional,
                                                                                nnq.QFunctional)):
        del module._modules["activation_post_process"]
    hooks = module.__dict__.get("_forward_hooks", {})
    for key in [k for k, h in hooks.items() if h is _observer_forward_hook]:
        del hooks[key]


def _remove_qconfig(module) -> None:
    for child in module.children():
        _remove_qconfig(child)
    module.__dict__.pop("qconfig", None)
    _remove_activation_post_process(module)


def swap_module(mod, mapping: dict, custom_module_class_mapping=None):
    """``mapping[type(mod)].from_float(mod)`` when ``mod`` has a qconfig and a mapping, else ``mod``;
    the module's own forward hooks and pre-hooks (not the observer's) carry over."""
    if not _has_qconfig(mod) or type(mod) not in mapping:
        return mod
    new_mod = mapping[type(mod)].from_float(mod)
    for h in mod.__dict__.get("_forward_pre_hooks", {}).values():
        new_mod.register_forward_pre_hook(h)
    for h in mod.__dict__.get("_forward_hooks", {}).values():
        if h is not _observer_forward_hook:
            new_mod.register_forward_hook(h)
    return new_mod


def _convert(module, mapping: dict) -> None:
    for name, child in list(module.named_children()):
        if not isinstance(child, nni._FusedModule) and type(child) not in mapping:
            _convert(child, mapping)
        new = swap_module(child, mapping)
        if new is not child:
            setattr(module, name, new)


def convert(module, mapping=None, inplace: bool = False, remove_qconfig: bool = True, is_reference: bool = False,
            convert_custom_config_dict=None, use_precomputed_fake_quant: bool = False):
    """Swaps every prepared module for its quantized form (``mapping``: float type -> quantized
    type, by default the static mappings): weights are quantized with their qconfig's weight
    observer, outputs get the qparams their observer chose."""
    _check_model("convert", module)
    if is_reference:
        raise NotImplementedError("convert: reference quantized modules (is_reference=True) are not provided")
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def quantize(model, run_fn, run_args, mapping=None, inplace: bool = False):
    """Post-training static quantization in one call: ``eval``, ``prepare``, ``run_fn(model,
    *run_args)`` (calibration), ``convert``."""
    _check_model("quantize", model)
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


def prepare_qat(model, mapping=None, inplace: bool = False):
    """Prepares a model in training mode for quantization-aware training: swaps modules for
    their QAT forms (weights fake-quantized) and attaches fake-quantize modules to outputs."""
    _check_model("prepare_qat", model)
    if not model.training:
        raise RuntimeError("prepare_qat only works on models in training mode (call model.train())")
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


def quantize_qat(model, run_fn, run_args, inplace: bool = False):
    """QAT in one call: ``train``, ``prepare_qat``, ``run_fn(model, *run_args)`` (training),
    ``eval``, ``convert``."""
    _check_model("quantize_qat", model)
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    model.eval()
    convert(model, inplace=True)
    return model


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace: bool = False):
    """Dynamic quantization: the listed module types (``qconfig_spec``: a set of types/names, or a
    dict of them to qconfigs; by default ``nn.Linear`` and ``nn.LSTM``) get int8 weights and
    quantize their activations per batch at run time. No calibration.

    >>> qmodel = quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=minitorch.qint8)
    """
    _check_model("quantize_dynamic", model)
    from ...nn.linear import Linear
    from ...nn.rnn import LSTM

    dtype = minitorch.qint8 if dtype is None else dtype
    if qconfig_spec is None:
        if dtype is not minitorch.qint8:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig "
                             "please")
        qconfig_spec = {Linear: default_dynamic_qconfig, LSTM: default_dynamic_qconfig}
    elif isinstance(qconfig_spec, (set, list, tuple)):
        if dtype is minitorch.qint8:
            default = default_dynamic_qconfig
        elif dtype is minitorch.quint8:
            default = float_qparams_weight_only_qconfig
            raise NotImplementedError("quantize_dynamic: quint8 weight-only (embedding) quantization is not provided")
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig "
                             "please")
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default)))
    elif isinstance(qconfig_spec, QConfigMapping):
        qconfig_spec = qconfig_spec.to_dict()
    elif not isinstance(qconfig_spec, dict):
        raise TypeError(f"quantize_dynamic: qconfig_spec must be a set or a dict, got {type(qconfig_spec).__name__}")
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    unsupported = [k.__name__ for k, v in qconfig_spec.items() if isinstance(k, type) and k not in mapping
                   and v is not None]
    if unsupported:
        raise NotImplementedError(f"quantize_dynamic: no dynamic quantized module for {', '.join(unsupported)} in "
                                  f"minitorch (supported: {', '.join(t.__name__ for t in mapping)})")
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def default_eval_fn(model, calib_data) -> None:
    """The simplest calibration ``run_fn`` for ``quantize``: the model on each ``(data, target)``."""
    for data, _target in calib_data:
        model(data)


def add_quant_dequant(module):
    """Wraps every leaf module that has a qconfig in a ``QuantWrapper`` (so each is quantized on
    its own); returns the (changed) module."""
    if not module._modules and _has_qconfig(module):
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


__all__ = ["propagate_qconfig_", "prepare", "convert", "quantize", "prepare_qat", "quantize_qat", "quantize_dynamic",
           "swap_module", "add_quant_dequant", "default_eval_fn"]
