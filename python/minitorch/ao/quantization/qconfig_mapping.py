"""``QConfigMapping`` (lite): which qconfig each part of a model gets, by module type or by
submodule name over a global default (PyTorch's FX-mode config object; here it feeds the eager
workflows: ``propagate_qconfig_(model, mapping.to_dict())`` or ``quantize_dynamic(model, mapping)``).

    >>> mapping = (QConfigMapping().set_global(get_default_qconfig("x86"))
    ...            .set_object_type(nn.LSTM, None)             # keep LSTMs float
    ...            .set_module_name("classifier", default_qconfig))
"""
from __future__ import annotations

from collections import OrderedDict

from .qconfig import get_default_qat_qconfig, get_default_qconfig


class QConfigMapping:
    """Global qconfig, then per module type, then per submodule name (later wins)."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()

    def set_global(self, global_qconfig) -> "QConfigMapping":
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig) -> "QConfigMapping":
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name(self, module_name: str, qconfig) -> "QConfigMapping":
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def to_dict(self) -> dict:
        """The eager-mode ``qconfig_dict``: ``""`` the global, types and dotted names the others."""
        out = {"": self.global_qconfig}
        out.update(self.object_type_qconfigs)
        out.update(self.module_name_qconfigs)
        return out

    def __repr__(self) -> str:
        return (f"QConfigMapping (\n global_qconfig\n  {self.global_qconfig}\n object_type_qconfigs\n  "
                f"{dict(self.object_type_qconfigs)}\n module_name_qconfigs\n  {dict(self.module_name_qconfigs)}\n)")


def get_default_qconfig_mapping(backend: str = "x86", version: int = 0) -> QConfigMapping:
    return QConfigMapping().set_global(get_default_qconfig(backend, version))


def get_default_qat_qconfig_mapping(backend: str = "x86", version: int = 1) -> QConfigMapping:
    return QConfigMapping().set_global(get_default_qat_qconfig(backend, version))
