"""Padding layers: ``nn.ZeroPad2d``, ``nn.ConstantPad2d``, ``nn.ReflectionPad2d``,
``nn.ReplicationPad2d``, ``nn.CircularPad2d`` and their 1-d and 3-d forms, each a module
around ``F.pad`` with one mode (PyTorch's names, arguments and reprs).

``padding`` is one int (every side) or a tuple of 2 (1-d: left, right), 4 (2-d: left,
right, top, bottom) or 6 (3-d: ..., front, back) ints, in F.pad's order: last dim first.

    >>> nn.ZeroPad2d((1, 1, 2, 0))(minitorch.ones(1, 1, 2, 2)).shape
    minitorch.Size([1, 1, 4, 4])
"""
from __future__ import annotations

from . import functional as F
from .module import Module


class _PadNd(Module):
    _mode = "constant"
    _dims = 2

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        n = 2 * self._dims
        if isinstance(padding, bool) or not isinstance(padding, (int, tuple, list)):
            raise TypeError(f"{type(self).__name__}: padding must be an int or a tuple of {n} ints, "
                            f"got {type(padding).__name__}")
        if isinstance(padding, int):
            padding = (padding,) * n
        padding = tuple(padding)
        if len(padding) != n or not all(isinstance(p, int) and not isinstance(p, bool) for p in padding):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of {n} ints, got {padding}")
        self.padding = padding
        self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad_class(name: str, mode: str, dims: int, doc: str):
    cls = type(name, (_PadNd,), {"_mode": mode, "_dims": dims, "__doc__": doc, "__module__": __name__})
    if not name.startswith("Constant"):  # only ConstantPad takes a value (ZeroPad's is 0)
        def __init__(self, padding):
            _PadNd.__init__(self, padding)
        cls.__init__ = __init__
    return cls


_DOCS = {"Zero": "Pads with zeros.", "Constant": "Pads with a constant ``value``.",
         "Reflection": "Pads with the reflection of the input (the edge not repeated).",
         "Replication": "Pads by repeating the edge values.", "Circular": "Pads by wrapping around."}
_MODES = {"Zero": "constant", "Constant": "constant", "Reflection": "reflect", "Replication": "replicate",
          "Circular": "circular"}

ZeroPad1d = _pad_class("ZeroPad1d", "constant", 1, _DOCS["Zero"])
ZeroPad2d = _pad_class("ZeroPad2d", "constant", 2, _DOCS["Zero"])
ZeroPad3d = _pad_class("ZeroPad3d", "constant", 3, _DOCS["Zero"])
ConstantPad1d = _pad_class("ConstantPad1d", "constant", 1, _DOCS["Constant"])
ConstantPad2d = _pad_class("ConstantPad2d", "constant", 2, _DOCS["Constant"])
ConstantPad3d = _pad_class("ConstantPad3d", "constant", 3, _DOCS["Constant"])
ReflectionPad1d = _pad_class("ReflectionPad1d", "reflect", 1, _DOCS["Reflection"])
ReflectionPad2d = _pad_class("ReflectionPad2d", "reflect", 2, _DOCS["Reflection"])
ReflectionPad3d = _pad_class("ReflectionPad3d", "reflect", 3, _DOCS["Reflection"])
ReplicationPad1d = _pad_class("ReplicationPad1d", "replicate", 1, _DOCS["Replication"])
ReplicationPad2d = _pad_class("ReplicationPad2d", "replicate", 2, _DOCS["Replication"])
ReplicationPad3d = _pad_class("ReplicationPad3d", "replicate", 3, _DOCS["Replication"])
CircularPad1d = _pad_class("CircularPad1d", "circular", 1, _DOCS["Circular"])
CircularPad2d = _pad_class("CircularPad2d", "circular", 2, _DOCS["Circular"])
CircularPad3d = _pad_class("CircularPad3d", "circular", 3, _DOCS["Circular"])

__all__ = [f"{kind}Pad{d}d" for kind in _DOCS for d in (1, 2, 3)]
