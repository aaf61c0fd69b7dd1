"""Containers: ``Sequential`` runs modules in order; ``ModuleList`` and ``ModuleDict`` hold
modules, ``ParameterList`` holds parameters, all registered so ``parameters()`` and
``state_dict()`` see them."""
from __future__ import annotations

from collections import OrderedDict

from .. import _C
from .module import Module
from .parameter import Parameter


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
        lines = []
        for i, p in enumerate(self):
            size = "x".join(str(s) for s in p.shape)
            where = f" ({p.device})" if p.device.type != "cpu" else ""
            lines.append(f"  ({i}): Parameter containing: [{p.dtype!r} of size {size}{where}]")
        return "\n".join(lines)
