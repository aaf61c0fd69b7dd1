"""The older ``nn.utils.weight_norm`` / ``remove_weight_norm`` (PyTorch keeps them,
deprecated in favour of ``nn.utils.parametrizations.weight_norm``): parameters
``weight_g`` and ``weight_v``, and ``module.weight`` recomputed before every forward by a
forward pre-hook."""
from __future__ import annotations

from ..module import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["remove_weight_norm", "weight_norm"]


class _WeightNormHook:
    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name> = g * v / ||v||`` (norm over every dim but ``dim``; the whole tensor
    with ``dim=None``), with the parameters ``<name>_g`` and ``<name>_v``."""
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    if any(isinstance(h, _WeightNormHook) and h.name == name for h in hooks.values()):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter '{name}'")
    dim = -1 if dim is None else (dim + weight.dim() if dim < -1 else dim)
    hook = _WeightNormHook(name, dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Turns ``<name>_g`` and ``<name>_v`` back into the plain parameter ``<name>``."""
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for key, hook in list(hooks.items()):
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            weight = hook.compute_weight(module)
            del hooks[key]
            del module._parameters[name + "_g"]
            del module._parameters[name + "_v"]
            module.__dict__.pop(name, None)
            module.register_parameter(name, Parameter(weight.detach()))
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
