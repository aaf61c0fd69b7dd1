"""Grader for Exercise 6: a sliding average as a CUDA kernel with shared memory.

Grades ``kernel_exercise.py`` beside this file, or the file named by the
``STUDENT_KERNEL`` environment variable:

    STUDENT_KERNEL=submissions/alice_kernel.py python -m pytest tests/examples/test_grade_kernels.py -q

Every check runs the student's kernel with ``minitorch.testing.check_kernel``: against
NumPy, under every emulator schedule (thread 0 first, last thread first, two random
orders), with fresh inputs each time. The last section runs the checks against
``kernel_exercise_buggy.py`` (no ``__syncthreads()``) and against mutants of the
reference, and asserts that they FAIL with the message a student needs.

docs/grading.md, "Grading a CUDA kernel exercise", explains the choices.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch.testing import DEFAULT_SCHEDULES, check_kernel

HERE = Path(__file__).resolve().parent
BLOCK = 64

_HAS_COMPILER = bool(os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++"))
# Without a GPU, check_kernel runs the kernels in the CUDA emulator (it switches it on).
ON_GPU = minitorch.cuda.is_available() and not minitorch.cuda.is_emulated()
pytestmark = [
    pytest.mark.switches_emulator_on,  # (check_kernel switches the emulator on: tests/conftest.py runs these last)
    pytest.mark.skipif(not (ON_GPU or minitorch._C._emulator_compiled),
                       reason="grading CUDA kernels needs a CUDA device, real or emulated"),
    pytest.mark.skipif(not ON_GPU and not _HAS_COMPILER,
                       reason="no host C++ compiler to build kernels with in the emulator"),
]
# On a GPU the hardware picks the thread order, so a missing barrier may or may not show.
emulator_only = pytest.mark.skipif(ON_GPU, reason="the self-tests rely on the emulator's schedules and reports")

POINTS = {
    "test_kernel_runs": 1,
    "test_full_blocks": 3,
    "test_ragged_sizes": 2,
}


# ------------------------------------------------------------ loading a solution ----

def load_solution(path, name: str = "submission") -> types.ModuleType:
    """Imports a Python file as a module without touching ``sys.path``."""
    path = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STUDENT_PATH = Path(os.environ.get("STUDENT_KERNEL") or HERE / "kernel_exercise.py")


@pytest.fixture(scope="module")
def student() -> types.ModuleType:
    return load_solution(STUDENT_PATH, "graded_kernel_submission")


# ------------------------------------------------------------------- the checks ----

def sliding_average(x: np.ndarray) -> np.ndarray:
    """The reference, in float64: (x[i-2] + x[i-1] + x[i]) / 3 with zeros before x[0]."""
    padded = np.concatenate([np.zeros(2), x.astype(np.float64)])
    return (padded[:-2] + padded[1:-1] + padded[2:]) / 3


def check_sizes(m, sizes, trials: int = 1, schedules=DEFAULT_SCHEDULES) -> None:
    """The kernel against NumPy for each n in `sizes`, under every schedule. x is
    checked too, first, expected unchanged: a kernel must not scribble on its input."""
    for n in sizes:
        try:
            check_kernel(
                m.make_kernel,  # built inside the check: a compile error fails it with the log
                launch=((n + BLOCK - 1) // BLOCK, BLOCK),
                make_inputs=lambda rng, n=n: {"x": rng.uniform(-4, 4, n).astype(np.float32),
                                              "out": np.full(n, np.nan, np.float32),  # unwritten shows as nan
                                              "n": np.int32(n)},
                reference=lambda x, out, n: {"x": x, "out": sliding_average(x)},
                outputs=("x", "out"),
                trials=trials,
                schedules=schedules,
            )
        except AssertionError as err:  # which size, for the student
            raise AssertionError(f"n = {n} ({(n + BLOCK - 1) // BLOCK} block(s) of {BLOCK}): {err}") from None


def check_runs(m) -> None:
    # It compiles, and one thread gets x[0] / 3 right: the smallest case, thread order aside.
    check_sizes(m, [1], schedules=["forward"])


def check_full_blocks(m) -> None:
    check_sizes(m, [4 * BLOCK], trials=2)


def check_ragged_sizes(m) -> None:
    # A last block that sticks out, a single partial block, and fewer elements than the window.
    check_sizes(m, [BLOCK + 1, 5 * BLOCK - 7, BLOCK - 1, 2, 1])


# -------------------------------------------------- the tests (the score sheet) ----

def test_kernel_runs(student):
    check_runs(student)


def test_full_blocks(student):
    check_full_blocks(student)


def test_ragged_sizes(student):
    check_ragged_sizes(student)


def test_points_cover_every_test():
    tests = {name for name in globals() if name.startswith("test_")} - _GRADER_SELF_TESTS
    assert tests == set(POINTS), f"tests without points: {sorted(tests - set(POINTS))}"


# ------------------------------------------------ the grader can fail (self-test) ----

_GRADER_SELF_TESTS = {"test_points_cover_every_test", "test_grader_fails_buggy_kernel",
                      "test_grader_gives_buggy_kernel_partial_credit", "test_grader_fails_mutant"}


@pytest.fixture(scope="module")
def buggy() -> types.ModuleType:
    return load_solution(HERE / "kernel_exercise_buggy.py", "buggy_kernel_submission")


@emulator_only
@pytest.mark.parametrize("check", [check_full_blocks, check_ragged_sizes], ids=lambda f: f.__name__)
def test_grader_fails_buggy_kernel(buggy, check):
    with pytest.raises(AssertionError) as info:
        check(buggy)
    message = str(info.value)
    # Thread 0 fetches the halo and runs last under "reverse": element 0 is right, and
    # element 1 is the first that read a neighbour's slot before it was written.
    assert "): sliding_average: output 'out' is wrong under schedule 'reverse'" in message, message
    assert "First wrong element at flat index 1: expected" in message
    assert "It was right under 'forward'" in message and "missing __syncthreads()" in message


def test_grader_gives_buggy_kernel_partial_credit(buggy):
    check_runs(buggy)  # it compiles and runs: one bug must not cost every point


def _mutant(old: str, new: str) -> types.ModuleType:
    """The reference solution with one edit to its CUDA source."""
    module = load_solution(HERE / "kernel_exercise.py", "reference_kernel")
    assert old in module.SOURCE, f"the mutant's edit does not apply: {old!r}"
    module.SOURCE = module.SOURCE.replace(old, new)
    return module


BARRIER = "    __syncthreads();\n"
MUTANTS = {
    # The lectures' mistake: the barrier inside `if (i < n)`, which the threads past n skip.
    # The values stay right; only the emulator's report gives it away, and only when n
    # is not a multiple of the block: the reason for the ragged sizes.
    "barrier_in_branch": (lambda: _mutant("    if (i < n) {\n        float sum",
                                          "    if (i < n) {\n        __syncthreads();\n        float sum"),
                          [(check_ragged_sizes, "threads exited before reaching __syncthreads()")],
                          [check_full_blocks]),
    "no_halo": (lambda: _mutant("tile[k] = j >= 0 ? x[j] : 0.0f;", "tile[k] = 0.0f;"),
                [(check_full_blocks, "First wrong element at flat index 64:"),
                 (check_ragged_sizes, "First wrong element at flat index 64:")], []),
    "last_element_unwritten": (lambda: _mutant("if (i < n) {", "if (i < n - 1) {"),
                               [(check_full_blocks, "1 of 256 elements differ"),
                                (check_ragged_sizes, "First wrong element at flat index 64: expected")], []),
    "writes_its_input": (lambda: _mutant("out[i] = sum / WINDOW;", "out[i] = sum / WINDOW;\n        "
                                         "((float*)x)[i] = 0.0f;"),
                         [(check_full_blocks, "output 'x' is wrong")], []),
    "syntax_error": (lambda: _mutant("float sum = 0.0f;", "float sum = 0.0f"),
                     [(check_runs, "the kernel did not compile:\nsliding_average.cu")], []),
}
_NEEDS_EMULATOR = {"barrier_in_branch"}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_grader_fails_mutant(name):
    if name in _NEEDS_EMULATOR and ON_GPU:
        pytest.skip("only the emulator reports a barrier that some threads skip")
    make, failing, passing = MUTANTS[name]
    module = make()
    for check, fragment in failing:
        with pytest.raises(AssertionError) as info:
            check(module)
        assert fragment in str(info.value), f"{check.__name__}: {info.value}"
    for check in passing:
        check(module)  # documents which check catches it, and which does not
