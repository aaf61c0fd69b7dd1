"""The course notebooks in ``notebooks/``: they run top to bottom and are committed clean.

* ``test_notebook_runs`` (slow) executes every notebook with nbclient on a small MNIST
  subset (``MINITORCH_NB_LIMIT=3000``), writing its plots into a temporary folder
  (``MINITORCH_NB_OUT``), and checks that real PNG files came out. Notebooks that
  train on MNIST are skipped when ``MINITORCH_DATA`` is not set, and notebooks that
  launch their own CUDA kernels when minitorch has no "cuda" device (a GPU, or the
  CUDA emulator, which every build has unless made with MINITORCH_EMULATOR=OFF).
* ``test_notebook_is_clean`` (fast) checks that every committed notebook has no
  outputs and null execution counts, so diffs stay readable and nothing stale ships.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

NB_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
EXPECTED = {
    "01_tensors_and_autograd.ipynb",
    "02_mnist_mlp.ipynb",
    "03_mnist_cnn.ipynb",
    "04_performance.ipynb",
    "05_sequences_and_attention.ipynb",
    "06_writing_cuda_kernels.ipynb",
    "07_precision.ipynb",
    "08_feeding_and_scaling.ipynb",
    "09_beyond_mnist.ipynb",
    "10_memory_and_roofline.ipynb",
    "11_quantization_and_pruning.ipynb",
}
CELL_TIMEOUT_S = 300
LIMIT = "3000"
MIN_PNG_BYTES = 1024


def _load(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _code_cells(nb: dict):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def _needs_mnist(path: Path) -> bool:
    return any(re.search(r"\bMNIST\(", _source(c)) for c in _code_cells(_load(path)))


def _needs_cuda_device(path: Path) -> bool:
    return any("RawKernel(" in _source(c) or "RawModule(" in _source(c) for c in _code_cells(_load(path)))


def _has_cuda_device() -> bool:
    import minitorch

    return minitorch.cuda.is_available() or minitorch._C._emulator_compiled


def _ids(paths):
    return [p.stem for p in paths]


def test_expected_notebooks_exist():
    missing = EXPECTED - {p.name for p in NOTEBOOKS}
    assert not missing, f"notebooks missing from {NB_DIR}: {sorted(missing)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_clean(path: Path):
    nb = _load(path)
    assert nb.get("nbformat") == 4, f"{path.name}: nbformat {nb.get('nbformat')}, expected 4"
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name")
    assert kernel == "python3", f"{path.name}: kernelspec {kernel!r}, expected 'python3'"
    dirty = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        if cell.get("outputs"):
            dirty.append(f"cell {i} has {len(cell['outputs'])} output(s)")
        if cell.get("execution_count") is not None:
            dirty.append(f"cell {i} has execution_count {cell['execution_count']}")
    assert not dirty, (f"{path.name} was committed with outputs; clear them (Jupyter: Edit > Clear All Outputs, "
                       f"or `jupyter nbconvert --clear-output --inplace {path.name}`):\n  " + "\n  ".join(dirty))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_writes_plots_where_told(path: Path):
    source = "\n".join(_source(c) for c in _code_cells(_load(path)))
    assert "MINITORCH_NB_OUT" in source, f"{path.name} does not read MINITORCH_NB_OUT"
    assert "savefig" in source, f"{path.name} saves no plot"


def _kernel_env_pythonpath() -> str | None:
    """$PYTHONPATH with every entry made absolute: the kernel starts in notebooks/,
    so a relative entry such as ``python`` would point elsewhere there."""
    value = os.environ.get("PYTHONPATH")
    if not value:
        return None
    return os.pathsep.join(str(Path(p).resolve()) for p in value.split(os.pathsep) if p)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    if _needs_mnist(path) and not os.environ.get("MINITORCH_DATA"):
        pytest.skip(f"{path.name} trains on MNIST: set MINITORCH_DATA to the folder with the MNIST IDX files")
    if _needs_cuda_device(path) and not _has_cuda_device():
        pytest.skip(f"{path.name} launches CUDA kernels: it needs a GPU, or the CUDA emulator (this build was made "
                    "with MINITORCH_EMULATOR=OFF)")

    # The kernel is a child process: it inherits this environment.
    monkeypatch.setenv("MINITORCH_NB_LIMIT", LIMIT)
    monkeypatch.setenv("MINITORCH_NB_OUT", str(tmp_path))
    pythonpath = _kernel_env_pythonpath()
    if pythonpath:
        monkeypatch.setenv("PYTHONPATH", pythonpath)

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(NB_DIR)}})
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError (with the cell and traceback) on any error
    print(f"{path.name}: ran in {time.perf_counter() - t0:.1f} s")

    pngs = sorted(tmp_path.rglob("*.png"))
    assert pngs, f"{path.name} wrote no PNG into MINITORCH_NB_OUT ({tmp_path})"
    small = [f"{p.name} ({p.stat().st_size} bytes)" for p in pngs if p.stat().st_size <= MIN_PNG_BYTES]
    assert not small, f"{path.name} wrote empty-looking PNGs: {small}"
