"""The emulator's "warps" and "warps-reverse" schedules: a block's warps run one at a
time, so a warp reading shared memory another warp wrote, with only a __syncwarp()
between them (no __syncthreads()), goes wrong, which the in-step schedules cannot show.

Compiles warp_schedule_test.cpp with g++ against cuda/emu and runs it under each schedule.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from minitorch.cuda_kernels.emulator import _check_spec

HERE = Path(__file__).resolve().parent
EMU_DIR = HERE.parents[1] / "cuda" / "emu"
GXX = shutil.which("g++")

SCHEDULES = ["forward", "reverse", "random:1", "warps", "warps-reverse"]


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    if GXX is None:
        pytest.skip("g++ not found: the CUDA emulator tests compile C++ sources")
    exe = tmp_path_factory.mktemp("warp_schedule") / "warp_schedule_test"
    cmd = [GXX, "-std=c++20", "-O1", "-Wall", "-Wextra", "-I", str(EMU_DIR), "-x", "c++",
           str(HERE / "warp_schedule_test.cpp"), "-o", str(exe)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"compiling failed: {' '.join(cmd)}\n{result.stderr}"
    return exe


def outcomes(exe: Path, schedule: str) -> dict[str, str]:
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "MINITORCH_EMU_SCHEDULE": schedule})
    assert result.returncode == 0 and not result.stderr, result.stdout + result.stderr
    return dict(line.split() for line in result.stdout.splitlines())


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedule_names_parse(program, schedule):
    assert outcomes(program, schedule)["parse"] == "ok"


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:1", "warps"])
def test_missing_block_barrier_hidden_when_the_writer_warp_runs_first(program, schedule):
    # The blind spot of the in-step schedules: warp 0 writes before the __syncwarp() that
    # warp 1 waits at too, so warp 1 always reads after the write.
    assert outcomes(program, schedule)["handoff_syncwarp_only"] == "correct"


def test_missing_block_barrier_caught_by_warps_reverse(program):
    # Warp 1 runs to its end before warp 0 starts, so it reads the buffer unwritten.
    assert outcomes(program, "warps-reverse")["handoff_syncwarp_only"] == "WRONG"


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_block_barrier_right_under_every_schedule(program, schedule):
    result = outcomes(program, schedule)
    assert result["handoff_syncthreads"] == "correct"
    assert result["reports"] == "0"


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_shuffle_reduction_right_under_every_schedule(program, schedule):
    # Full-warp and half-warp (mask 0xffff) shuffles complete within one warp's turn.
    assert outcomes(program, schedule)["shuffle_sum"] == "correct"


@pytest.mark.parametrize("spec", ["warps", "warps-reverse"])
def test_python_accepts_warp_schedules(spec):
    assert _check_spec(spec) == spec


@pytest.mark.parametrize("spec", ["warp", "warps-backwards", "reverse-warps"])
def test_python_rejects_other_names(spec):
    with pytest.raises(ValueError, match="warps-reverse"):
        _check_spec(spec)
