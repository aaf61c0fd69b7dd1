"""The built extension exports PyInit__C and nothing else.

A module that exports more (for instance the libstdc++ a toolchain linked in
statically) can capture the process's own C++ runtime symbols, and then any C++
exception crashes Python. Found on a GPU machine whose GCC links libstdc++ statically.
"""
import shutil
import subprocess
import sys

import pytest

import minitorch


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol tables: Linux only")
@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) not installed")
def test_extension_exports_only_its_init_function():
    out = subprocess.run(["nm", "-D", "--defined-only", minitorch._C.__file__], capture_output=True, text=True,
                         check=True).stdout
    names = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    assert names == {"PyInit__C"}, f"unexpected exported symbols: {sorted(names - {'PyInit__C'})[:20]}"


def test_a_cpp_exception_reaches_python_as_an_error():
    # In a fresh process, so a crash is a failed test rather than a dead test run.
    code = ("import minitorch\n"
            "try:\n    minitorch.ones(3, 4) @ minitorch.ones(5, 6)\n"
            "except ValueError as e:\n    print('caught:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "caught: matmul" in r.stdout
