"""The CUDA emulator is part of every build and off until switched on: minitorch.cuda.emulate()
or MINITORCH_EMULATE_CUDA=1. Each case runs in a fresh interpreter, since a process has one
"cuda" and the switch cannot be undone once the emulator serves it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import minitorch

ON_GPU = minitorch.cuda.is_available() and not minitorch.cuda.is_emulated()
pytestmark = [
    pytest.mark.skipif(ON_GPU, reason="checks a machine without a GPU"),
    pytest.mark.skipif(not minitorch._C._emulator_compiled, reason="this build was made with MINITORCH_EMULATOR=OFF"),
]


def run(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "MINITORCH_EMULATE_CUDA"}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=environ, timeout=300)


def test_off_by_default_and_the_error_says_why_and_how():
    r = run("""
        import minitorch
        assert not minitorch.cuda.is_available() and not minitorch.cuda.is_emulated()
        assert minitorch.cuda.device_count() == 0
        try:
            minitorch.ones(2).to("cuda")
        except RuntimeError as e:
            print(e)
        """)
    assert r.returncode == 0, r.stderr
    message = r.stdout
    assert "cannot allocate on device 'cuda:0': CUDA is not available: " in message
    if minitorch.cuda.is_compiled():  # nvcc built the GPU backend: it is the GPU that is missing
        assert "no NVIDIA GPU with a working driver was found" in message and "built without" not in message
    else:
        assert "built without the GPU backend" in message and "no NVIDIA GPU" not in message
    assert "minitorch.cuda.emulate(), or MINITORCH_EMULATE_CUDA=1" in message


def test_emulate_switches_cuda_on_for_good():
    r = run("""
        import minitorch
        minitorch.cuda.emulate()
        assert minitorch.cuda.is_available() and minitorch.cuda.is_emulated()
        assert minitorch.cuda.device_count() == 1
        x = minitorch.arange(6, dtype=minitorch.float32).to("cuda")
        print((x * 2).sum().item(), x.device)
        minitorch.cuda.emulate(True)  # again: nothing changes
        try:
            minitorch.cuda.emulate(False)
        except RuntimeError as e:
            print("off:", e)
        try:
            minitorch.cuda.emulate("yes")
        except TypeError as e:
            print("type:", e)
        """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "30.0 cuda:0"
    assert lines[1].startswith("off: emulate(False): the emulator already serves 'cuda' in this process")
    assert lines[2] == "type: emulate: enabled must be a bool, got str"


def test_environment_variable_switches_it_on_at_import():
    r = run("import minitorch; print(minitorch.cuda.is_available(), minitorch.cuda.is_emulated())",
            MINITORCH_EMULATE_CUDA="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]
    r = run("import minitorch; print(minitorch.cuda.is_available())", MINITORCH_EMULATE_CUDA="0")
    assert r.stdout.split() == ["False"]


def test_a_misspelt_environment_variable_warns_and_stays_off():
    r = run("import minitorch; print(minitorch.cuda.is_available())", MINITORCH_EMULATE_CUDA="maybe")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False"]
    assert "RuntimeWarning: MINITORCH_EMULATE_CUDA='maybe' is not understood" in r.stderr


def test_raw_kernels_and_schedules_say_how_to_switch_it_on():
    r = run("""
        import minitorch
        for f in (lambda: minitorch.cuda.RawKernel('__global__ void k() {}', 'k'),
                  lambda: minitorch.cuda.emulator_schedule('reverse').__enter__()):
            try:
                f()
            except RuntimeError as e:
                print(e)
        print(minitorch.cuda.get_emulator_schedule())
        """)
    assert r.returncode == 0, r.stderr
    raw, schedule, current = r.stdout.splitlines()
    assert raw.startswith("RawKernel: CUDA is not available: ") and "minitorch.cuda.emulate()" in raw
    assert schedule.startswith("emulator_schedule: the CUDA emulator is off") and "minitorch.cuda.emulate()" in schedule
    assert current == "None"
