"""Single notebook cells whose logic matters on machines CI does not have: each cell is
run here on its own, with the situation of such a machine faked."""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys
from pathlib import Path

import pytest

NB06 = Path(__file__).resolve().parents[2] / "notebooks" / "06_writing_cuda_kernels.ipynb"


def _cell_with(path: Path, marker: str) -> str:
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    sources = ["".join(c["source"]) for c in cells]
    found = [s for s in sources if marker in s]
    assert len(found) == 1, f"{path.name}: expected one code cell containing {marker!r}, found {len(found)}"
    return found[0]


class _BrokenNumba(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Makes `import numba` fail inside the package's own code, as an installed numba-cuda does
    when it does not support the installed NumPy (seen on a GPU machine: an AttributeError)."""

    def find_spec(self, name, path=None, target=None):
        if name == "numba" or name.startswith("numba."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise AttributeError("module 'numpy' has no attribute 'long'")


@pytest.mark.parametrize("emulated", [False, True])
def test_nb06_numba_cell_reads_a_broken_numba_as_not_available(monkeypatch, capsys, emulated):
    for name in [n for n in sys.modules if n == "numba" or n.startswith("numba.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_BrokenNumba(), *sys.meta_path])
    source = _cell_with(NB06, "from numba import cuda")
    exec(compile(source, "06 numba cell", "exec"), {"EMULATED": emulated})  # must not raise
    out = capsys.readouterr().out
    if emulated:
        assert out.startswith("skipped: the emulator's 'cuda' tensors")
    else:
        assert "skipped: numba is installed but cannot be used here (AttributeError: module 'numpy' has no " \
               "attribute 'long')" in out


def test_nb06_switches_the_emulator_on_without_a_gpu():
    source = _cell_with(NB06, "EMULATED = minitorch.cuda.is_emulated()")
    assert "minitorch.cuda.emulate()" in source and "raise RuntimeError" not in source
