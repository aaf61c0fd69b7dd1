"""The suite's own skip reporting (tests/conftest.py): every wording of "no CUDA device" or
"no PyTorch" is filed under one reason, and the end of a run sums the skips up by kind."""
from __future__ import annotations

import types

import pytest

import conftest

# Reasons the suite gives (or pytest gives for it), and the kind each must be counted as.
REASONS = [
    (conftest.CUDA_SKIP_REASON, "need a CUDA device"),
    ("CUDA not available (minitorch.cuda.is_available() is False)", "need a CUDA device"),
    ("needs a cuda device", "need a CUDA device"),
    ("needs the cuda device (GPU or emulated)", "need a CUDA device"),
    ("needs a second device (CUDA)", "need a CUDA device"),
    ("check_kernel needs a CUDA device, real or emulated", "need a CUDA device"),
    ("06.ipynb launches CUDA kernels: it needs a GPU, or the CUDA emulator (this build was made without it)",
     "need a CUDA device"),
    (conftest.TORCH_SKIP_REASON, "need PyTorch"),
    ("could not import 'torch': No module named 'torch'", "need PyTorch"),
    ("PyTorch is not installed; the PyTorch comparison is optional", "need PyTorch"),
    ("PyTorch not installed", "need PyTorch"),
    ("could not import 'safetensors.torch': No module named 'torch'", "need PyTorch"),
    ("cuBLAS runs only on a real GPU", "need a real CUDA GPU"),
    ("needs a CUDA GPU", "need a real CUDA GPU"),
    ("needs a GPU and cuDNN (the emulator has no cuDNN)", "need a real CUDA GPU"),
    ("NVRTC is the GPU build's compiler", "need a real CUDA GPU"),
    ("RawKernel tests for the emulated CUDA build", "test the CUDA emulator itself"),
    ("MINITORCH_DATA is not set (point it at a folder with the MNIST IDX files)", "need a data set"),
    ("/usr/share/datasets/fashion-mnist is absent (apt-get install dataset-fashion-mnist)", "need a data set"),
    ("g++ not found: the CUDA emulator tests compile C++ sources", "need an optional package or tool"),
    ("no host C++ compiler to build kernels with in the emulator", "need an optional package or tool"),
    ('mpi4py not installed: pip install "minitorch[distributed]"', "need an optional package or tool"),
    ("a real GPU is present", None),
    ("this PyTorch has no torch.amp.GradScaler('cpu')", None),
    ("MNIST is installed under /usr/share/datasets, so it is found", None),
]


@pytest.mark.parametrize("reason,kind", REASONS, ids=[r for r, _ in REASONS])
def test_each_skip_reason_is_counted_as_what_it_needs(reason, kind):
    found = conftest._skip_kind(reason)
    assert found[0].startswith(kind) if kind else found is None, found


def skipped(reason: str, where=("tests/test_x.py", 7)):
    return types.SimpleNamespace(skipped=True, longrepr=(*where, f"Skipped: {reason}"))


def test_cuda_and_pytorch_skips_are_filed_under_one_place_and_wording():
    for reason, canonical in [("needs a cuda device", conftest.CUDA_SKIP_REASON),
                              ("could not import 'torch': No module named 'torch'", conftest.TORCH_SKIP_REASON)]:
        report = skipped(reason)
        conftest._group_skip(report)
        path, line, text = report.longrepr
        assert path == conftest.__file__ and text == f"Skipped: {canonical}"
        assert conftest._LINES[line - 1].endswith(f'"{canonical}"')  # -rs points at the definition
    report = skipped("cuBLAS runs only on a real GPU")  # the specific reasons stay as they are
    conftest._group_skip(report)
    assert report.longrepr == ("tests/test_x.py", 7, "Skipped: cuBLAS runs only on a real GPU")


def test_the_summary_is_a_few_lines_by_kind():
    reasons = ["needs a cuda device"] * 30 + [conftest.CUDA_SKIP_REASON] * 5 + ["PyTorch not installed"] * 4 + \
        ["a real GPU is present"]
    lines = []
    reporter = types.SimpleNamespace(
        stats={"skipped": [skipped(r) for r in reasons], "passed": [object()] * 60},
        write_sep=lambda sep, title: lines.append(f"--- {title}"), write_line=lines.append)
    conftest.pytest_terminal_summary(reporter, 0, None)
    assert lines[:2] == ["--- skipped tests",
                         "40 of 100 tests skipped, as expected where a machine lacks what they need "
                         "(python -m pytest -rs lists every reason):"]
    assert lines[2].startswith("  35 need a CUDA device: run them on a GPU, or on the CPU with the CUDA emulator")
    assert lines[3].startswith("   4 need PyTorch, to compare with it: pip install torch")
    assert lines[4:] == ["   1 skipped for other reasons"]
    lines.clear()
    conftest.pytest_terminal_summary(types.SimpleNamespace(stats={"passed": [1]}), 0, None)
    assert lines == []  # nothing skipped: nothing said


class _Item:
    """What pytest_collection_modifyitems reads of a collected test."""

    def __init__(self, name, marks=(), skipif_reason=None):
        self.name, self.marks = name, set(marks)
        self.skipif = [types.SimpleNamespace(kwargs={"reason": skipif_reason})] if skipif_reason else []

    def iter_markers(self, name):
        return iter(self.skipif if name == "skipif" else [])

    def get_closest_marker(self, name):
        return name if name in self.marks else None

    def add_marker(self, mark):
        self.marks.add(mark.name)


def test_tests_that_switch_the_emulator_on_run_last_in_their_order():
    """check_kernel switches the CUDA emulator on in its process for good: its tests go after
    every other (keeping the order within each group), so that no test that checks for CUDA
    when it runs sees it on in one run and off in the next."""
    items = [_Item("a"), _Item("grade", ["switches_emulator_on"]), _Item("b", skipif_reason=conftest.CUDA_SKIP_REASON),
             _Item("check", ["switches_emulator_on"]), _Item("c")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.name for i in items] == ["a", "b", "c", "grade", "check"]
    assert "needs_cuda" in items[1].marks and "needs_cuda" not in items[0].marks


def test_the_check_kernel_files_are_marked_to_run_last():
    import test_check_kernel
    from examples import test_grade_kernels

    for module in (test_check_kernel, test_grade_kernels):
        assert any(m.name == "switches_emulator_on" for m in module.pytestmark), module.__name__
