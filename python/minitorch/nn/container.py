"""Containers: ``Sequential`` runs modules in order; ``ModuleList`` and ``ModuleDict`` hold
modules, ``ParameterList`` and ``ParameterDict`` hold parameters, all registered so
``parameters()`` and ``state_dict()`` see them."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping

from .. import _C
from .module import Module
from .parameter import Parameter, UninitializedParameter


def _entry_repr(key, value) -> str:
    """One line of ``ParameterList``'s / ``ParameterDict``'s repr, PyTorch's wording."""
    if isinstance(value, UninitializedParameter):
        what = "<UninitializedParameter>"
    elif isinstance(value, _C.Tensor):
        size = "x".join(str(s) for s in value.shape)
        where = f" ({value.device})" if value.device.type != "cpu" else ""
        what = f"Parameter containing: [{value.dtype!r} of size {size}{where}]"
    else:
        what = f"Object of type: {type(value).__name__}"
    return f"  ({key}): {what}"


class Sequential(Module):
    """Runs its modules one after another: ``Sequential(Linear(784, 128), ReLU(), Linear(128, 10))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # keeps the original names, like PyTorch
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[idx]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters are registered (a plain list's are not)."""

    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(mods[idx])
        return mods[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[idx]
        self.add_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __repr__(self) -> str:
        """PyTorch 2's repr: a run of consecutive modules that print the same is one entry,
        ``(0-5): 6 x TransformerEncoderLayer(...)``; a module unlike its neighbours is ``(i): ...``."""
        runs: list[list] = []  # [first index, last index, repr]
        for i, m in enumerate(self):
            text = repr(m)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return type(self).__name__ + "()"
        lines = [(f"({first}): " if first == last else f"({first}-{last}): {last - first + 1} x ")
                 + text.replace("\n", "\n  ") for first, last, text in runs]
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules by name whose parameters are registered (a plain dict's are not).

    >>> heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "reg": nn.Linear(8, 1)})
    >>> heads["cls"]
    Linear(in_features=8, out_features=10, bias=True)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict: keys must be strings, got {type(key).__name__}")
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Adds (or replaces) modules from a mapping or an iterable of (name, module) pairs."""
        if isinstance(modules, (dict, ModuleDict)):
            pairs = modules.items()
        else:
            pairs = []
            for i, kv in enumerate(modules):
                if not isinstance(kv, (tuple, list)) or len(kv) != 2:
                    raise ValueError(f"ModuleDict.update: element #{i} should be a (name, module) pair, got {kv!r}")
                pairs.append(kv)
        for k, m in pairs:
            self[k] = m


class ParameterList(Module):
    """A list of parameters, registered as ``"0"``, ``"1"``... (a plain list's are not).
    Tensors that are not Parameters are wrapped in one, as in PyTorch.

    >>> ws = nn.ParameterList([nn.Parameter(minitorch.randn(3, 3)) for _ in range(2)])
    >>> list(ws.state_dict())
    ['0', '1']
    """

    def __init__(self, values=None):
        super().__init__()
        for p in values or []:
            self.append(p)

    @staticmethod
    def _as_parameter(value):
        if isinstance(value, Parameter):
            return value
        if isinstance(value, _C.Tensor):
            return Parameter(value)
        raise TypeError(f"ParameterList: expected a Parameter or a Tensor, got {type(value).__name__}")

    def _index(self, idx: int) -> int:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self._parameters.values())[idx])
        return self._parameters[str(self._index(idx))]

    def __setitem__(self, idx: int, value) -> None:
        self._parameters[str(self._index(idx))] = self._as_parameter(value)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, values) -> "ParameterList":
        return self.extend(values)

    def append(self, value) -> "ParameterList":
        self.register_parameter(str(len(self)), self._as_parameter(value))
        return self

    def extend(self, values) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(i, p) for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of parameters by string key, each registered under its key (so the state_dict
    keys are the dict's keys). A Tensor that is not a Parameter is wrapped in one; other
    values (numbers, None...) are kept as they are, not registered, as in PyTorch.

    A plain dict given to the constructor or ``update`` is added in sorted key order (PyTorch's
    rule); an OrderedDict, a ParameterDict or a sequence of (key, value) pairs in its own order.

    >>> pd = nn.ParameterDict({"scale": minitorch.ones(3), "shift": minitorch.zeros(3)})
    >>> list(pd.state_dict())
    ['scale', 'shift']
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}     # every key, in insertion order
        self._objects: dict = {}  # the values that are neither Parameters nor None
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _check_key(key) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict: keys must be strings, got {key!r} of type {type(key).__name__}")

    def __getitem__(self, key: str):
        self._check_key(key)
        if key in self._parameters:
            return self._parameters[key]
        if key in self._objects:
            return self._objects[key]
        raise KeyError(key)

    def __setitem__(self, key: str, value) -> None:
        self._check_key(key)
        if isinstance(value, _C.Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        self._parameters.pop(key, None)
        self._objects.pop(key, None)
        if value is None or isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            self._objects[key] = value
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        self[key]  # noqa: B018  (a KeyError / TypeError for a key it does not hold)
        del self._keys[key]
        self._parameters.pop(key, None)
        self._objects.pop(key, None)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def setdefault(self, key: str, default=None):
        """``self[key]``, after setting it to ``default`` if the key is new."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Removes and returns the last (key, value) pair."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same parameters (not copies of them)."""
        return ParameterDict(OrderedDict(self.items()))

    @classmethod
    def fromkeys(cls, keys, default=None) -> "ParameterDict":
        """A ParameterDict with ``default`` (one object, shared) under every key."""
        return cls((k, default) for k in keys)

    def update(self, parameters) -> None:
        """Adds (or replaces) entries from a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(f"ParameterDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = []
            for i, kv in enumerate(parameters):
                if not isinstance(kv, Iterable) or isinstance(kv, str):
                    raise TypeError(f"ParameterDict update sequence element #{i} should be Iterable; is "
                                    f"{type(kv).__name__}")
                kv = tuple(kv)
                if len(kv) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{i} has length {len(kv)}; 2 is required")
                pairs.append(kv)
        for key, value in pairs:
            self[key] = value

    def __or__(self, other) -> "ParameterDict":
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()  # a dict | ParameterDict is a dict, as in PyTorch
        merged.update(self)
        return merged

    def __ior__(self, other) -> "ParameterDict":
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(k, v) for k, v in self.items())
