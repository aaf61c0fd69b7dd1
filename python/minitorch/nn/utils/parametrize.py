"""``nn.utils.parametrize``: computing a module's tensor from other tensors on every access.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` into
``module.parametrizations.weight.original`` (or ``original0``, ``original1``... when
``p.right_inverse`` splits it into several tensors) and makes ``module.weight`` a
property that returns ``p(original)``: gradients reach the originals through ``p``.
The module's class is swapped for a generated subclass ("ParametrizedLinear"...) that
carries the property, as in PyTorch, so the state_dict keys match PyTorch's:
``parametrizations.weight.original0`` and the parametrization's own buffers
(``parametrizations.weight.0._u``).
"""
from __future__ import annotations

import contextlib

from ... import _C
from ...autograd import no_grad
from ..container import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, at its first use,
    and reused (e.g. a weight used at every step of an RNN)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, with the original tensor(s)
    they read: ``original`` or ``original0``, ``original1``... (what the first one's
    ``right_inverse`` returned)."""

    def __init__(self, modules, original, unsafe: bool = False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = tuple(original.shape), original.dtype
        # Apply the right inverses from last to first: what is stored is what the first
        # parametrization takes.
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        self.is_tensor = isinstance(new, _C.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        as_param = isinstance(original, Parameter)
        if self.is_tensor:
            if not isinstance(new, _C.Tensor):
                raise ValueError(f"'right_inverse' must return a Tensor or a sequence of tensors, got "
                                 f"{type(new).__name__}")
            if as_param:
                # The original Parameter object is kept (optimizers built before still see it).
                with no_grad():
                    if tuple(new.shape) == original_shape and new.dtype == original_dtype:
                        if new is not original:
                            original.copy_(new)
                        self.original = original
                    else:
                        self.original = Parameter(new.detach(), requires_grad=original.requires_grad)
            else:
                self.register_buffer("original", new)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, _C.Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a sequence of tensors, got an "
                                     f"element of type {type(t).__name__} at index {i}")
                if as_param:
                    setattr(self, f"original{i}", Parameter(t.detach().clone(), requires_grad=original.requires_grad))
                else:
                    self.register_buffer(f"original{i}", t)
        if not unsafe:
            z = self()
            if not isinstance(z, _C.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if tuple(z.shape) != original_shape or z.dtype != original_dtype:
                raise ValueError(f"Registering a parametrization may not change the shape or dtype of the tensor, "
                                 f"unless `unsafe` flag is enabled.\nunparametrized shape: {original_shape}, dtype: "
                                 f"{original_dtype}\nparametrized shape: {tuple(z.shape)}, dtype: {z.dtype}")

    def originals(self):
        return (self.original,) if self.is_tensor else tuple(getattr(self, f"original{i}")
                                                             for i in range(self.ntensors))

    def right_inverse(self, value) -> None:
        """``module.weight = value``: stores ``right_inverse(value)`` in the originals."""
        with no_grad():
            for module in reversed(list(self)[1:]):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            first = self[0]
            value = first.right_inverse(value) if hasattr(first, "right_inverse") else value
            if self.is_tensor:
                self.original.copy_(value)
            else:
                if not isinstance(value, (list, tuple)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of {self.ntensors} tensors")
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        x = self[0](*self.originals())
        for module in list(self)[1:]:
            x = module(x)
        return x


def _parametrized_property(name: str):
    def get(self):
        plist = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)

    return property(get, set_)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False):
    """Makes ``module.<tensor_name>`` be ``parametrization(original)`` (see the module
    docstring). Registering again on the same tensor appends to its list: the second
    parametrization reads the first's output. Returns ``module``.

    >>> class Symmetric(minitorch.nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).transpose(-1, -2)
    >>> layer = minitorch.nn.Linear(3, 3)
    >>> _ = register_parametrization(layer, "weight", Symmetric())
    >>> bool((layer.weight == layer.weight.T).all())
    True
    """
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be an nn.Module, got "
                        f"{type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, _C.Tensor) or tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the shape or dtype of the tensor, "
                                 "unless `unsafe` flag is enabled.")
        plist.append(parametrization)
        plist.unsafe = plist.unsafe or unsafe
        return module
    params, buffers = module._parameters, module._buffers
    if tensor_name in params and params[tensor_name] is not None:
        original = params.pop(tensor_name)
    elif tensor_name in buffers and buffers[tensor_name] is not None:
        original = buffers.pop(tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    try:
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    except Exception:
        (params if isinstance(original, Parameter) else buffers)[tensor_name] = original
        raise
    if not is_parametrized(module):
        cls = module.__class__
        new_cls = type(f"Parametrized{cls.__name__}", (cls,), {"_original_class": cls})
        module.__class__ = new_cls
        module.parametrizations = ModuleDict()
    setattr(module.__class__, tensor_name, _parametrized_property(tensor_name))
    module.parametrizations[tensor_name] = plist
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given)."""
    plists = module._modules.get("parametrizations") if isinstance(module, Module) else None
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    """The module's class before ``register_parametrization`` swapped it."""
    return module.__class__._original_class if is_parametrized(module) else type(module)


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undoes ``register_parametrization``: ``module.<tensor_name>`` becomes a plain
    Parameter again, holding the parametrized value (``leave_parametrized=True``) or the
    original (which needs a single original tensor)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    originals = plist.originals()
    with no_grad():
        if leave_parametrized:
            value = plist()
        elif plist.is_tensor:
            value = plist.original
        else:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
    first = originals[0]
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(first, Parameter):
        if leave_parametrized and plist.is_tensor and tuple(value.shape) == tuple(first.shape):
            with no_grad():
                first.copy_(value)
            new = first
        else:
            new = first if value is first else Parameter(value.detach(), requires_grad=first.requires_grad)
        module.register_parameter(tensor_name, new)
    else:
        module.register_buffer(tensor_name, value.detach())
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = module.__class__._original_class
    return module
