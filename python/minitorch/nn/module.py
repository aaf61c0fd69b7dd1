"""``nn.Module``: the base class of every layer and model, with PyTorch's semantics.

Assigning a :class:`Parameter` or a Module to an attribute registers it; then
``parameters()``, ``state_dict()``, ``to()``, ``train()``/``eval()`` and ``repr`` see it.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Iterator

from .. import _C
from ..autograd import no_grad
from .parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns, as in PyTorch: ``(missing_keys, unexpected_keys)``,
    printed ``<All keys matched successfully>`` when both are empty."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _load_error(key: str, value, current) -> str | None:
    """Why ``load_state_dict`` cannot copy ``value`` into the tensor ``current`` (None if it can)."""
    if not isinstance(value, _C.Tensor):
        return f'While copying the parameter named "{key}", expected a Tensor, got {type(value).__name__}.'
    if tuple(value.shape) != tuple(current.shape):
        return (f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from checkpoint, "
                f"the shape in current model is {tuple(current.shape)}.")
    return None


def _to_args(*args, **kwargs):
    """``Module.to``'s arguments (those of ``Tensor.to``) as ``(device, dtype)``, either None."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _C.Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (str, _C.device)):
            device = a
        else:
            raise TypeError(f"to() received an invalid argument {a!r}: expected a dtype, a device or a Tensor")
    return device, dtype


class Module:
    """Base class for layers and models: subclass it and define ``forward``.

    >>> class MLP(minitorch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = minitorch.nn.Linear(784, 10)
    ...     def forward(self, x):
    ...         return self.fc(x)
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration ----
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError("cannot assign to a Module before Module.__init__() is called "
                                 "(call super().__init__() first in your __init__)")

        def forget(*places):
            for p in places:
                p.pop(name, None)

        params, modules, buffers = d["_parameters"], d["_modules"], d["_buffers"]
        if isinstance(value, Parameter):
            forget(d, modules, buffers)
            params[name] = value
        elif name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            forget(d, params, buffers)
            modules[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(nn.Module or None expected)")
            modules[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for d in (self._parameters, self._buffers, self._modules):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' as parameter '{name}' (nn.Parameter or None expected)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor) -> None:
        """A tensor that is state but not learnable (saved in state_dict, moved by to())."""
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' as buffer '{name}' (Tensor or None expected)")
        self._buffers[name] = tensor

    def add_module(self, name: str, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    # ---- calling ----
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        pre_hooks = self.__dict__.get("_forward_pre_hooks")
        if pre_hooks:
            for hook in list(pre_hooks.values()):
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        out = self.forward(*args, **kwargs)
        hooks = self.__dict__.get("_forward_hooks")
        if hooks:
            for hook in list(hooks.values()):
                result = hook(self, args, out)
                if result is not None:
                    out = result
        return out

    def register_forward_hook(self, hook):
        """Calls ``hook(module, inputs, output)`` after every forward; returns a handle
        whose ``remove()`` unregisters it (how ``minitorch.utils.summary`` measures layers)."""
        return self._add_hook("_forward_hooks", hook)

    def register_forward_pre_hook(self, hook):
        """Calls ``hook(module, inputs)`` before every forward (a non-None result replaces
        the inputs); returns a handle whose ``remove()`` unregisters it."""
        return self._add_hook("_forward_pre_hooks", hook)

    def _add_hook(self, table: str, hook):
        """Adds ``hook`` to the dict ``self.<table>``; the handle's ``remove()`` takes it out."""
        hooks = self.__dict__.setdefault(table, {})
        key = object()
        hooks[key] = hook

        class _Handle:
            def remove(_self):
                hooks.pop(key, None)

        return _Handle()

    # ---- traversal ----
    def named_modules(self, memo=None, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr: str, prefix: str, recurse: bool):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, v in getattr(m, attr).items():
                if v is None or id(v) in seen:
                    continue
                seen.add(id(v))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        yield from self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ----
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad.zero_()

    # ---- devices and dtypes ----
    def to(self, *args, **kwargs) -> "Module":
        """Moves (or casts) every parameter and buffer in place: ``model.to("cuda")``.

        Like PyTorch, a dtype applies to floating-point tensors only: an int64 buffer
        (BatchNorm's ``num_batches_tracked``) stays int64 under ``model.double()``."""
        device, dtype = _to_args(*args, **kwargs)

        def move(t):
            if dtype is not None and t.dtype.is_floating_point:
                return t.to(device, dtype) if device is not None else t.to(dtype)
            return t.to(device) if device is not None else t

        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is None:
                        continue
                    p.data = move(p.data)
                    if p.grad is not None:
                        p.grad = move(p.grad)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = move(b)
                # State that is neither a parameter nor a buffer (the quantized modules'
                # int8 weights, which are not Tensors) moves through the module's own hook.
                if device is not None and hasattr(m, "_to_device"):
                    m._to_device(device)
        return self

    def cpu(self) -> "Module":
        return self.to("cpu")

    def cuda(self, device=None) -> "Module":
        return self.to("cuda" if device is None else device)

    def float(self) -> "Module":
        return self.to(_C.dtype.float32)

    def double(self) -> "Module":
        return self.to(_C.dtype.float64)

    def half(self) -> "Module":
        return self.to(_C.dtype.float16)

    def bfloat16(self) -> "Module":
        return self.to(_C.dtype.bfloat16)

    # ---- state ----
    def state_dict(self, prefix: str = "") -> "OrderedDict[str, _C.Tensor]":
        """Every parameter and buffer by dotted name (detached tensors sharing memory)."""
        out = OrderedDict()
        for name, m in self.named_modules(prefix=prefix.rstrip(".")):
            m._save_to_state_dict(out, f"{name}." if name else "")
        return out

    def _save_to_state_dict(self, destination, prefix: str) -> None:
        """Puts this module's own entries (not its children's) into ``destination``. A module
        whose state is not plain parameters and buffers (a quantized layer's packed weight,
        its scale as a number) overrides this and ``_load_from_state_dict``, as in PyTorch."""
        for key, v in list(self._parameters.items()) + list(self._buffers.items()):
            if v is not None:
                destination[prefix + key] = v.detach()

    def _load_from_state_dict(self, state_dict, prefix: str, error_msgs: list) -> None:
        """Reads this module's own entries (the keys its ``_save_to_state_dict`` writes) from
        ``state_dict``; appends to ``error_msgs`` what it cannot load. The default (parameters and
        buffers, shapes checked) is done by ``load_state_dict`` itself."""

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copies values into the parameters and buffers. With ``strict``, the keys must
        match exactly; shapes must always match. Returns ``(missing_keys, unexpected_keys)``, a
        named tuple that prints ``<All keys matched successfully>`` when both lists are empty."""
        own, keys, custom = OrderedDict(), [], []
        for name, m in self.named_modules():
            p = f"{name}." if name else ""
            if type(m)._load_from_state_dict is not Module._load_from_state_dict:
                mine = OrderedDict()
                m._save_to_state_dict(mine, p)
                keys += list(mine)
                custom.append((p, m))
                continue
            for key, v in list(m._parameters.items()) + list(m._buffers.items()):
                if v is not None:
                    own[p + key] = v
                    keys.append(p + key)
        missing = [k for k in keys if k not in state_dict]
        known = set(keys)
        unexpected = [k for k in state_dict if k not in known]
        errors = []
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        if strict and missing:
            errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        for k, v in state_dict.items():
            error = _load_error(k, v, own[k]) if k in own else None
            if error:
                errors.append(error)
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        with no_grad():
            for k, v in state_dict.items():
                if k in own:
                    own[k].copy_(v.to(own[k].device))
            for p, m in custom:
                m._load_from_state_dict(state_dict, p, errors)
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing ----
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            mod = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {mod}")
        main = type(self).__name__ + "("
        if not lines:
            return main + ")"
        if len(lines) == 1 and not self._modules:
            return main + lines[0] + ")"
        return main + "\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules) | set(self._buffers))
