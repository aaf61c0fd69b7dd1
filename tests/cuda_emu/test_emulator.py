"""Tests for the CUDA emulator in cuda/emu: CUDA kernels run on the CPU.

Compiles kernels_under_test.cu and test_emulator.cpp with g++ against
cuda/emu/cuda_emu.h and runs the program under each thread schedule
(MINITORCH_EMU_SCHEDULE), then once more built with AddressSanitizer. The program
prints a PASS/FAIL line per check, and a PLANTED line saying whether a reduction with
a deliberately missing __syncthreads() went wrong under that schedule.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
EMU_DIR = Path(__file__).resolve().parents[2] / "cuda" / "emu"
SOURCES = [HERE / "kernels_under_test.cu", HERE / "test_emulator.cpp"]
GXX = shutil.which("g++")

pytestmark = pytest.mark.skipif(GXX is None, reason="g++ not found: the CUDA emulator tests compile C++ sources")

# Every check test_emulator.cpp makes; each must print PASS under every schedule.
EXPECTED_PASSES = {
    "add",
    "row_sum",
    "row_sum_total",
    "matmul_tiled",
    "block_reverse_dynamic_shared",
    "warp_intrinsics",
    "warp_shuffle_double",
    "atomics",
    "no_reports_for_correct_kernels",
    "invalid_configuration",
    "out_of_memory",
    "device_api",
    "reports_divergent_barrier",
    "reports_exit_before_barrier",
    "reports_deadlock",
    "reports_shuffle_from_inactive_lane",
    "reports_mask_without_caller",
}


def build(out_dir: Path, *flags: str) -> Path:
    """Compiles the test program into out_dir and returns its path."""
    exe = out_dir / "test_emulator"
    cmd = [GXX, "-std=c++20", "-O1", "-Wall", "-Wextra", *flags, "-I", str(EMU_DIR), "-x", "c++",
           *map(str, SOURCES), "-o", str(exe)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if result.returncode != 0 and "-fsanitize=address" in flags and "cannot find" in result.stderr:
        pytest.skip(f"g++ cannot link AddressSanitizer here: {result.stderr.strip()[-200:]}")
    assert result.returncode == 0, f"compiling failed: {' '.join(cmd)}\n{result.stderr}"
    return exe


def run(exe: Path, schedule: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MINITORCH_EMU_SCHEDULE": schedule, **env})


def check_lines(result: subprocess.CompletedProcess) -> tuple[set[str], list[str]]:
    """The names that passed, and the lines that failed."""
    lines = result.stdout.splitlines()
    passed = {line.split()[1] for line in lines if line.startswith("PASS ")}
    failed = [line for line in lines if line.startswith("FAIL ")]
    return passed, failed


def planted_outcome(result: subprocess.CompletedProcess) -> str:
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("PLANTED ")]
    return line.split()[2]  # WRONG or correct


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("cuda_emu"))


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:1", "warps", "warps-reverse"])
def test_kernels_correct_under_every_schedule(program, schedule):
    result = run(program, schedule)
    passed, failed = check_lines(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert EXPECTED_PASSES <= passed, f"missing: {EXPECTED_PASSES - passed}\n{result.stdout}"


def test_missing_barrier_caught_by_reverse_schedule(program):
    # The broken reduction lets the next row overwrite shared memory before warp 0 has
    # read it. In forward order warp 0 (the lowest threads) reads first, so the answer
    # is right; in reverse order the overwrite comes first and the answer is wrong.
    assert planted_outcome(run(program, "reverse")) == "WRONG"
    assert planted_outcome(run(program, "random:1")) == "WRONG"
    assert planted_outcome(run(program, "forward")) == "correct"


def test_bad_schedule_is_reported(program):
    result = run(program, "backwards")
    assert "MINITORCH_EMU_SCHEDULE=backwards not understood" in result.stderr
    assert result.returncode != 0  # the report counts against "no_reports_for_correct_kernels"


@pytest.fixture(scope="module")
def asan_program(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("cuda_emu_asan"), "-g", "-fsanitize=address", "-fno-omit-frame-pointer")


def test_clean_under_address_sanitizer(asan_program):
    result = run(asan_program, "reverse", ASAN_OPTIONS="detect_leaks=1")
    passed, failed = check_lines(result)
    assert "ERROR: AddressSanitizer" not in result.stderr, result.stderr
    assert "ERROR: LeakSanitizer" not in result.stderr, result.stderr
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert EXPECTED_PASSES <= passed


@pytest.mark.parametrize("kind, error", [("heap", "heap-buffer-overflow"), ("stack", "stack-buffer-overflow")])
def test_address_sanitizer_sees_into_kernels(asan_program, kind, error):
    # The off-by-one happens after a __syncthreads(), on a fiber that was switched out
    # and back in: ASan must still know that fiber's stack and red zones.
    result = subprocess.run([str(asan_program), "--plant-out-of-bounds", kind], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})
    assert result.returncode != 0 and f"ERROR: AddressSanitizer: {error}" in result.stderr, result.stderr
    assert "_overflow_kernel" in result.stderr  # the report names the kernel
