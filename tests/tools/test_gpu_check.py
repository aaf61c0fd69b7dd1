"""tools/gpu_check.sh and tools/gpu_check_lib.py, without a GPU: the command line, the refusal
on a machine without one, a whole run against a fake ``nvidia-smi``, and the helpers (notebook
to script, pytest's summary line, the summary table, the error-path checks on the emulator)."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "gpu_check.sh"
STAGES = ["environment", "build", "symbols", "errors", "suite", "memcheck", "racecheck", "bench", "notebooks"]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _load_lib():
    spec = importlib.util.spec_from_file_location("gpu_check_lib", ROOT / "tools" / "gpu_check_lib.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lib = _load_lib()


def _env(**extra) -> dict:
    """This environment, with the folder of the minitorch these tests import first on PYTHONPATH
    (the installed package in CI, python/ of a developer's tree), so the script imports the same."""
    import minitorch

    here = str(Path(minitorch.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHON"] = sys.executable  # the script's Python: this one
    env.pop("OUT", None)
    env.update(extra)
    return env


def _run(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env or _env(),
                          timeout=timeout, cwd=ROOT)


# ---------------------------------------------------------------------------------------
# The shell script
# ---------------------------------------------------------------------------------------


def test_help_exits_0_and_names_every_stage_and_option():
    r = _run("--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: bash tools/gpu_check.sh")
    for word in STAGES + ["--quick", "--no-build", "--skip", "--only", "--logs", "--jobs", "--arch"]:
        assert word in r.stdout, f"--help does not mention {word}"


def test_script_parses_and_passes_shellcheck():
    r = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    r = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_without_nvidia_smi_it_refuses_quickly_and_builds_nothing(tmp_path):
    logs, work = tmp_path / "logs", tmp_path / "work"
    t0 = time.monotonic()
    r = _run("--logs", str(logs), "--work", str(work),
             env=_env(GPU_CHECK_NVIDIA_SMI=str(tmp_path / "no-such-nvidia-smi")))
    assert time.monotonic() - t0 < 10
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "no NVIDIA GPU found (" in r.stderr and "is not on PATH" in r.stderr
    assert r.stdout == ""
    assert not logs.exists() and not work.exists(), "it wrote a log or work folder before finding no GPU"


def test_with_a_failing_nvidia_smi_it_says_what_nvidia_smi_said(tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\n"
                    "exit 9\n")
    fake.chmod(0o755)
    r = _run("--logs", str(tmp_path / "logs"), env=_env(GPU_CHECK_NVIDIA_SMI=str(fake)))
    assert r.returncode == 2
    assert "no NVIDIA GPU found (" in r.stderr and "couldn't communicate with the NVIDIA driver" in r.stderr
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("args, message", [
    (["--skip", "nosuchstage"], "unknown stage 'nosuchstage'"),
    (["--only"], "--only needs at least one stage"),
    (["--jobs", "many"], "--jobs needs a number"),
    (["--frobnicate"], "unknown argument '--frobnicate'"),
])
def test_bad_arguments_exit_2_with_a_message(args, message):
    r = _run(*args)
    assert r.returncode == 2 and message in r.stderr, (r.returncode, r.stderr)


FAKE_SMI = """#!/bin/sh
case "$*" in
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-fake)" ;;
  *compute_cap*) echo "9.0" ;;
  *name,memory.total*) echo "NVIDIA H100 80GB HBM3, 81559 MiB, 580.65.06" ;;
  *) echo "fake nvidia-smi" ;;
esac
"""


def _fake_gpu_run(tmp_path, *args):
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text(FAKE_SMI)
    fake.chmod(0o755)
    logs = tmp_path / "logs"
    r = _run("--no-build", "--logs", str(logs), "--work", str(tmp_path / "work"), *args,
             env=_env(GPU_CHECK_NVIDIA_SMI=str(fake), MINITORCH_EMULATE_CUDA="0", CUDA_VISIBLE_DEVICES=""),
             timeout=300)  # (a real GPU, where these tests run on one, is hidden: the GPU is the fake one)
    rows = lib.read_results((logs / "results.tsv").read_text())
    return r, {name: (status, detail) for name, status, _, detail in rows}, logs


def test_a_run_against_a_fake_gpu_records_every_stage_and_prints_one_summary(tmp_path):
    r, rows, logs = _fake_gpu_run(tmp_path, "--only", "environment", "symbols")
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(rows) == STAGES
    assert rows["environment"][0] == "PASS"
    assert rows["environment"][1].startswith("CUDA archs 90; nvcc ")
    gpu = "NVIDIA H100 80GB HBM3, 81559 MiB, driver 580.65.06, compute capability 9.0"
    assert f"gpu_check: {gpu}\n" in r.stdout and f"== gpu_check summary: {gpu}\n" in r.stdout
    assert rows["build"][0] == "SKIP" and "not built: using " in rows["build"][1]
    assert rows["symbols"] == ("PASS", rows["symbols"][1]) and "exports only PyInit__C" in rows["symbols"][1]
    for stage in ["errors", "suite", "memcheck", "racecheck", "bench", "notebooks"]:
        assert rows[stage][0] == "SKIP", stage
    assert r.stdout.count("== gpu_check summary") == 1
    assert "all 2 stages passed, 7 skipped" in r.stdout and f"logs: {logs}" in r.stdout
    assert (logs / "environment.log").read_text().startswith("## nvidia-smi\nfake nvidia-smi")


def test_a_failing_stage_does_not_stop_the_later_ones_and_makes_the_exit_status_1(tmp_path):
    # Without a real GPU the error-path check fails (no cuda device, or only the emulated one),
    # and bench_cuda.py says it skipped, which on a GPU machine is a failure too.
    r, rows, logs = _fake_gpu_run(tmp_path, "--only", "errors", "bench")
    assert r.returncode == 1, r.stdout + r.stderr
    assert rows["errors"][0] == "FAIL" and "cuda.is_available()" in rows["errors"][1]
    assert rows["bench"][0] == "FAIL" and "bench_cuda: skipped" in rows["bench"][1]
    assert "FAILED: 2 of 9 stages failed (errors, bench)" in r.stdout
    assert (logs / "errors.log").exists() and (logs / "bench_cuda.log").exists()


# ---------------------------------------------------------------------------------------
# Notebooks as scripts
# ---------------------------------------------------------------------------------------


def _nb(*cells) -> dict:
    return {"nbformat": 4, "metadata": {}, "cells": [
        {"cell_type": kind, "metadata": {}, "source": src, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
        for kind, src in cells]}


FAKE_NB = _nb(
    ("markdown", "# A title\nSome prose with a `%` sign."),
    ("code", ["%matplotlib inline\n", "!pip install nothing\n", "import math\n", "x = 2\n"]),
    ("code", "%%time\ny = x * 21\n"),
    ("code", "%%bash\necho this is shell\nls -l\n"),
    ("code", "math.sqrt?\nquestion = 'why?'\ntotal = 0\nfor i in range(3):\n    %timeit i + 1\n    total += i\n"),
    ("code", "?math\nz = y + total  # the end\n"),
)


def test_notebook_to_script_drops_magics_and_keeps_the_code():
    script = lib.notebook_to_script(FAKE_NB, "fake.ipynb")
    code = compile(script, "fake.py", "exec")
    live = [line.split("  # dropped: ")[0] for line in script.splitlines() if not line.lstrip().startswith("#")]
    for magic in ["%matplotlib", "!pip", "%%time", "%%bash", "echo this is shell", "math.sqrt?", "?math", "%timeit"]:
        assert not any(magic in line for line in live), f"{magic!r} survived: {script}"
    for kept in ["import math", "x = 2", "y = x * 21", "question = 'why?'", "total += i", "z = y + total  # the end"]:
        assert kept in live or any(kept in line for line in live), f"{kept!r} was dropped"
    assert "# %% [cell 3] skipped: a non-Python cell magic" in script
    assert "    pass  # dropped: %timeit i + 1" in script
    namespace: dict = {}
    exec(code, namespace)
    assert (namespace["y"], namespace["total"], namespace["z"], namespace["question"]) == (42, 3, 45, "why?")


def test_notebook_to_script_numbers_cells_as_jupyter_does():
    script = lib.notebook_to_script(FAKE_NB, "fake.ipynb")
    headers = [line for line in script.splitlines() if line.startswith("# %% [cell ")]
    assert [h.split("]")[0] for h in headers] == [f"# %% [cell {i}" for i in (1, 2, 3, 4, 5)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_becomes_a_script_that_compiles(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    script = lib.notebook_to_script(nb, path.name)
    compile(script, path.stem + ".py", "exec")
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for line in lib._source(cell).splitlines():
            if not lib._is_magic(line):
                assert line in script, f"{path.name}: line {line!r} is missing from the script"


def test_notebook_01_is_there_and_converts_through_the_command_line(tmp_path):
    nb01 = [p for p in NOTEBOOKS if p.name.startswith("01_")]
    assert nb01, "notebooks/01_*.ipynb is missing"
    out = tmp_path / "01.py"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_check_lib.py"), "nb2py", str(nb01[0]), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    script = out.read_text()
    compile(script, str(out), "exec")
    assert "import minitorch" in script and script.count("# %% [cell ") >= 5


def test_needs_mnist_finds_both_spellings():
    assert lib.needs_mnist(_nb(("code", "train = minitorch.data.MNIST(train=True)")))
    assert lib.needs_mnist(_nb(("code", "from minitorch.data import MNIST\nds = MNIST(train=False)")))
    assert not lib.needs_mnist(_nb(("code", "ds = FashionMNIST(train=False)"), ("markdown", "MNIST(train=True)")))


def test_run_notebook_as_a_script_reports_success_and_the_failing_cell(tmp_path):
    good = tmp_path / "good.ipynb"
    good.write_text(json.dumps(_nb(
        ("code", "%matplotlib inline\nimport os, pathlib\n"),
        ("code", "out = pathlib.Path(os.environ['MINITORCH_NB_OUT'])\n"
                 "(out / 'plot.png').write_bytes(b'\\x89PNG' + bytes(2000))\n"))))
    ok, detail = lib.run_notebook(good, tmp_path / "out_good", timeout=60, mode="script")
    assert ok and detail == "script: 1 PNG(s)", detail
    bad = tmp_path / "bad.ipynb"
    bad.write_text(json.dumps(_nb(("code", "x = 1"), ("code", "raise SystemExit(3)"))))
    ok, detail = lib.run_notebook(bad, tmp_path / "out_bad", timeout=60, mode="script")
    assert not ok and "exit status 3" in detail
    quiet = tmp_path / "quiet.ipynb"
    quiet.write_text(json.dumps(_nb(("code", "x = 1"))))
    ok, detail = lib.run_notebook(quiet, tmp_path / "out_quiet", timeout=60, mode="script")
    assert not ok and "wrote no PNG" in detail


# ---------------------------------------------------------------------------------------
# pytest's summary line
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("line, expected", [
    ("3 failed, 4216 passed, 3642 skipped in 75.2s", {"failed": 3, "passed": 4216, "skipped": 3642, "seconds": 75.2}),
    ("1 passed in 0.1s", {"passed": 1, "seconds": 0.1}),
    ("1 failed, 2 passed, 1 error in 3.40s", {"failed": 1, "passed": 2, "error": 1, "seconds": 3.4}),
    ("2 errors in 0.50s", {"error": 2, "seconds": 0.5}),
    ("=========== 5 passed, 2 xfailed, 3 warnings in 12.03s (0:00:12) ===========",
     {"passed": 5, "xfailed": 2, "warning": 3, "seconds": 12.03}),
    ("\x1b[32m\x1b[1m7 passed\x1b[0m, \x1b[33m1 skipped\x1b[0m\x1b[32m in 1.00s\x1b[0m",
     {"passed": 7, "skipped": 1, "seconds": 1.0}),
    ("no tests ran in 0.01s", {"seconds": 0.01}),
])
def test_pytest_summary_parser(line, expected):
    text = f"............s...F\nFAILED tests/test_x.py::test_y - AssertionError\n{line}\n"
    assert lib.parse_pytest_summary(text) == expected


def test_pytest_summary_parser_takes_the_last_summary_and_none_without_one():
    text = "1 passed in 0.1s\n...\n2 failed, 9 passed in 4.0s\nskipped 12: needs cuda (see conftest)\n"
    assert lib.parse_pytest_summary(text) == {"failed": 2, "passed": 9, "seconds": 4.0}
    assert lib.parse_pytest_summary("Segmentation fault (core dumped)\n") is None
    assert lib.parse_pytest_summary("") is None


def test_describe_pytest_lists_failures_and_judges_the_run():
    log = ("FAILED tests/a.py::test_1[cuda] - AssertionError\nFAILED tests/a.py::test_2[cuda]\n"
           "ERROR tests/b.py::test_3 - RuntimeError\nFAILED tests/c.py::test_4\n"
           "3 failed, 4216 passed, 3642 skipped, 1 error in 75.2s\n")
    ok, detail = lib.describe_pytest(log, rc=1)
    assert not ok
    assert detail == ("3 failed, 1 error, 4216 passed, 3642 skipped in 75.2 s; tests/a.py::test_1[cuda], "
                      "tests/a.py::test_2[cuda], tests/b.py::test_3 and 1 more")
    assert lib.describe_pytest("4216 passed, 3642 skipped in 75.2s\n", rc=0) == (True, "4216 passed, 3642 skipped in 75.2 s")
    ok, detail = lib.describe_pytest("12 skipped in 1.0s\n", rc=0)
    assert not ok and detail.endswith("(nothing passed)")
    ok, detail = lib.describe_pytest("Fatal Python error: Segmentation fault\n", rc=-11)
    assert not ok and "no pytest summary line (exit status -11" in detail
    ok, _ = lib.describe_pytest("5 passed in 1.0s\n", rc=124)  # timed out after the summary: still a failure
    assert not ok


# ---------------------------------------------------------------------------------------
# The summary table
# ---------------------------------------------------------------------------------------


def test_summary_table_aligns_columns_and_gives_a_verdict():
    text = ("environment\tPASS\t0.4\tNVIDIA H100, cc 9.0\n"
            "build\tPASS\t25.3\t25 s for CUDA archs 90\n"
            "memcheck\tSKIP\t\tcompute-sanitizer is not on PATH\n"
            "suite\tFAIL\t75.2\t3 failed, 4216 passed\n"
            "notebooks\tFAIL\t40\t7 passed, 1 failed\n"
            "  01_nb\tPASS\t3.2\tscript: 1 PNG(s)\n"
            "  02_mnist\tFAIL\t9.0\tscript: exit status 1\n")
    rows = lib.read_results(text)
    assert rows[2] == ("memcheck", "SKIP", rows[2][2], "compute-sanitizer is not on PATH") and rows[2][2] != rows[2][2]
    table = lib.format_table(rows).splitlines()
    assert table[0].split() == ["stage", "result", "time", "detail"]
    assert table[1] == "environment  PASS     0.4 s  NVIDIA H100, cc 9.0"
    assert table[2] == "build        PASS      25 s  25 s for CUDA archs 90"
    assert table[3] == "memcheck     SKIP            compute-sanitizer is not on PATH"
    assert table[6] == "  01_nb      PASS     3.2 s  script: 1 PNG(s)"
    assert len({line.index("  ", len("environment")) for line in table[1:8]}) == 1
    assert table[-1] == "FAILED: 2 of 5 stages failed (suite, notebooks)"


def test_summary_table_verdict_when_all_passed_and_long_details_are_cut():
    rows = [("build", "PASS", 1.0, "x" * 500), ("bench", "SKIP", float("nan"), "not selected")]
    table = lib.format_table(rows, width=80).splitlines()
    assert len(table[1]) == 80 and table[1].endswith("...")
    assert table[-1] == "all 1 stages passed, 1 skipped"


def test_table_command_exit_status_follows_the_rows(tmp_path):
    results = tmp_path / "results.tsv"
    cmd = [sys.executable, str(ROOT / "tools" / "gpu_check_lib.py"), "table", str(results)]
    results.write_text("build\tPASS\t1\tok\nbench\tSKIP\t\tno\n")
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    results.write_text("build\tPASS\t1\tok\n  nb\tFAIL\t1\tboom\n")
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 1 and "FAILED" in r.stdout


# ---------------------------------------------------------------------------------------
# The error paths, on the CUDA emulator
# ---------------------------------------------------------------------------------------


def _emulator_compiled() -> bool:
    try:
        import minitorch
    except ImportError:
        return False
    return bool(getattr(minitorch._C, "_emulator_compiled", False))


@pytest.mark.skipif(not _emulator_compiled(), reason="this minitorch was built without the CUDA emulator")
def test_error_paths_pass_on_the_emulator_and_reject_it_without_allow_emulated():
    cmd = [sys.executable, str(ROOT / "tools" / "gpu_check_lib.py"), "error-paths"]
    env = _env(MINITORCH_EMULATE_CUDA="1")
    r = subprocess.run(cmd + ["--allow-emulated"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 6 and all(line.startswith("ok   ") for line in lines), r.stdout
    assert any("shape-mismatch matmul: " in line and "cannot be multiplied" in line for line in lines)
    assert any("out-of-range index: IndexError" in line for line in lines)
    assert any("4 TiB allocation: OutOfMemoryError" in line for line in lines)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "FAIL cuda.is_emulated() is False: True" in r.stdout
