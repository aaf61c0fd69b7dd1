"""The parts of ``tools/gpu_check.sh`` that need no GPU, so CI can test them.

``gpu_check.sh`` calls this file as a command (``python3 tools/gpu_check_lib.py SUB ...``);
the tests in ``tests/tools/test_gpu_check.py`` import it. Subcommands:

* ``pytest-summary LOG``: counts from pytest's last summary line ("3 failed, 4216 passed,
  3642 skipped in 75.2s") and the first FAILED/ERROR lines, as one line of detail;
  exit status 1 when the log has no summary line.
* ``error-paths [--allow-emulated]``: a shape-mismatch matmul, an out-of-range index and a
  4 TiB allocation on ``cuda`` must raise Python exceptions; ``cuda.is_available()`` must
  be True and ``cuda.is_emulated()`` False (``--allow-emulated`` lets CI run it on the
  CUDA emulator). Exit status 1 when a check fails.
* ``nb2py NOTEBOOK [OUT]``: the notebook's code cells as a script, IPython magics
  (``%``, ``%%``, ``!``, ``?``) dropped.
* ``run-notebook NOTEBOOK --out DIR [--timeout S] [--mode auto|nbclient|script]``: runs it
  with nbclient when nbclient, nbformat and ipykernel import, else as the script of ``nb2py``; then checks that it
  wrote PNG files into DIR (as ``tests/notebooks/test_notebooks.py`` does).
* ``table RESULTS``: the summary table of a results file (one stage a line:
  ``name<TAB>PASS|FAIL|SKIP<TAB>seconds<TAB>detail``); exit status 1 when a row is FAIL.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# ---------------------------------------------------------------------------------------
# pytest's summary line
# ---------------------------------------------------------------------------------------

# "3 failed, 4216 passed, 3642 skipped, 2 warnings in 75.20s (0:01:15)", possibly between
# "=" rules (without -q), possibly coloured; "no tests ran in 0.01s".
_SUMMARY = re.compile(r"^[=\s]*((?:\d+ [a-z]+(?:, )?)+|no tests ran) in ([0-9.]+)s\b")
_COUNT = re.compile(r"(\d+) ([a-z]+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# pytest says "1 error" / "2 errors", "1 warning" / "2 warnings": one key for each.
_PLURALS = {"errors": "error", "warnings": "warning"}


def parse_pytest_summary(text: str) -> dict[str, float] | None:
    """The counts of the last pytest summary line in ``text``, or None when there is none.

    >>> parse_pytest_summary("3 failed, 4216 passed, 3642 skipped in 75.2s")
    {'failed': 3, 'passed': 4216, 'skipped': 3642, 'seconds': 75.2}
    """
    for line in reversed(text.splitlines()):
        m = _SUMMARY.match(_ANSI.sub("", line))
        if not m:
            continue
        counts: dict[str, float] = {}
        if m.group(1) != "no tests ran":
            for n, word in _COUNT.findall(m.group(1)):
                counts[_PLURALS.get(word, word)] = int(n)
        counts["seconds"] = float(m.group(2))
        return counts
    return None


def failed_tests(text: str) -> list[str]:
    """The test ids of the ``FAILED``/``ERROR`` lines of pytest's short summary (-rfE)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^(FAILED|ERROR) (\S+)", _ANSI.sub("", line))
        if m:
            out.append(m.group(2))
    return out


def describe_pytest(text: str, rc: int, show: int = 3) -> tuple[bool, str]:
    """(ok, one line of detail) for a pytest run's output and exit status."""
    counts = parse_pytest_summary(text)
    if counts is None:
        return False, f"no pytest summary line (exit status {rc}: crashed or timed out?)"
    order = ["failed", "error", "passed", "skipped", "xfailed", "xpassed", "deselected"]
    parts = [f"{int(counts[k])} {k}" for k in order if counts.get(k)]
    detail = (", ".join(parts) or "no tests ran") + f" in {counts['seconds']:.1f} s"
    bad = failed_tests(text)
    if bad:
        detail += "; " + ", ".join(bad[:show]) + (f" and {len(bad) - show} more" if len(bad) > show else "")
    ok = rc == 0 and not counts.get("failed") and not counts.get("error") and counts.get("passed", 0) > 0
    if rc == 0 and not counts.get("passed"):
        detail += " (nothing passed)"
    return ok, detail


# ---------------------------------------------------------------------------------------
# Notebooks as scripts
# ---------------------------------------------------------------------------------------

# Cell magics whose body is plain Python: the body is kept, the magic line dropped.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
_PRELUDE = """\
# Generated from {name} by tools/gpu_check_lib.py: its code cells, IPython magics dropped.
try:
    from IPython.display import display
except ImportError:  # not IPython: print what a notebook would show
    display = print
"""


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


# "%timeit f()", "%%time", "!pip install x", "minitorch.tensor?", "?minitorch.tensor", "f??"
_HELP = re.compile(r"^\s*(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$")


def _is_magic(line: str) -> bool:
    return line.lstrip().startswith(("%", "!")) or bool(_HELP.match(line))


def cell_to_python(source: str) -> str | None:
    """A code cell's source with IPython's syntax removed, or None when the whole cell is a
    non-Python cell magic (``%%bash``, ``%%html``...). A dropped line inside a block becomes
    ``pass`` at its indentation, so the block stays valid."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in _PYTHON_CELL_MAGICS:
            return None
        lines = [f"# dropped: {lines[0].strip()}"] + lines[1:]
    out = []
    for line in lines:
        if _is_magic(line):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}pass  # dropped: {line.strip()}" if indent else f"# dropped: {line.strip()}")
        else:
            out.append(line)
    return "\n".join(out)


def notebook_to_script(nb: dict, name: str = "notebook") -> str:
    """A notebook's code cells as one script, each under a ``# %% [cell N]`` line (N counts
    every cell, markdown too, from 0, as Jupyter's cell list does)."""
    parts = [_PRELUDE.format(name=name)]
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        body = cell_to_python(_source(cell))
        if body is None:
            parts.append(f"# %% [cell {i}] skipped: a non-Python cell magic\n")
        else:
            parts.append(f"# %% [cell {i}]\n{body}\n")
    return "\n".join(parts)


def needs_mnist(nb: dict) -> bool:
    """Whether a notebook loads MNIST (``data.MNIST(`` or ``MNIST(`` imported by name, as 07 does)."""
    return any(re.search(r"\bMNIST\(", _source(c)) for c in nb.get("cells", []) if c.get("cell_type") == "code")


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def run_notebook(path: Path, out: Path, timeout: float, mode: str = "auto") -> tuple[bool, str]:
    """Runs a notebook in its own folder with MINITORCH_NB_OUT=out; (ok, one line of detail).
    ``mode``: "nbclient", "script", or "auto" (nbclient when it can run here)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MINITORCH_NB_OUT=str(out.resolve()), MPLBACKEND="Agg")
    env.setdefault("MINITORCH_NB_LIMIT", "3000")
    if env.get("PYTHONPATH"):  # the kernel / script starts in notebooks/: make entries absolute
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    if env.get("MINITORCH_DATA"):
        env["MINITORCH_DATA"] = str(Path(env["MINITORCH_DATA"]).resolve())
    if mode == "auto":
        mode = "nbclient" if _have("nbclient", "nbformat", "ipykernel") else "script"
    if mode == "nbclient":
        code = ("import sys, nbformat, nbclient\n"
                "nb = nbformat.read(sys.argv[1], as_version=4)\n"
                "nbclient.NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name='python3',\n"
                "    resources={'metadata': {'path': sys.argv[3]}}).execute()\n")
        cmd = [sys.executable, "-c", code, str(path), str(int(timeout)), str(path.parent)]
    else:
        script = out / (path.stem + ".py")
        script.write_text(notebook_to_script(nb, path.name), encoding="utf-8")
        cmd = [sys.executable, str(script.resolve())]
    print(f"{path.name}: running as {mode}: {' '.join(cmd[:2])} ...", flush=True)
    try:
        rc = subprocess.run(cmd, cwd=path.parent, env=env, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return False, f"{mode}: timed out after {timeout:.0f} s"
    if rc != 0:
        return False, f"{mode}: exit status {rc} (see its log)"
    pngs = [p for p in out.rglob("*.png") if p.stat().st_size > 1024]
    if not pngs:
        return False, f"{mode}: ran, but wrote no PNG into {out}"
    return True, f"{mode}: {len(pngs)} PNG(s)"


# ---------------------------------------------------------------------------------------
# Error paths on a real GPU
# ---------------------------------------------------------------------------------------


def error_paths(allow_emulated: bool = False) -> list[tuple[str, bool, str]]:
    """(check, ok, detail) for each error path of minitorch on ``cuda``."""
    import minitorch

    results = []
    avail, emu = minitorch.cuda.is_available(), minitorch.cuda.is_emulated()
    results.append(("cuda.is_available()", bool(avail), str(avail)))
    results.append(("cuda.is_emulated() is False", allow_emulated or not emu, str(emu)))
    if not avail:
        return results

    def expect(name, exc_types, fn):
        try:
            fn()
        except exc_types as e:
            results.append((name, True, f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"))
        except Exception as e:  # noqa: BLE001 - any other Python exception is still reported
            results.append((name, False, f"raised {type(e).__name__}, expected {exc_types}: {e}"))
        else:
            results.append((name, False, "raised nothing"))

    def bad_matmul():
        minitorch.ones(3, 4, device="cuda") @ minitorch.ones(5, 6, device="cuda")

    def bad_index():
        x = minitorch.arange(6.0, device="cuda").reshape(3, 2)
        x[minitorch.tensor([0, 5], device="cuda")].cpu()  # raised at the copy back at the latest

    def huge():
        minitorch.empty(2**40, device="cuda")  # 4 TiB of float32

    expect("shape-mismatch matmul", ValueError, bad_matmul)
    expect("out-of-range index", IndexError, bad_index)
    expect("4 TiB allocation", minitorch.cuda.OutOfMemoryError, huge)
    try:
        value = minitorch.ones(3, device="cuda").sum().item()
        minitorch.cuda.synchronize()
        results.append(("still usable afterwards", value == 3.0, f"ones(3).sum() = {value}"))
    except Exception as e:  # noqa: BLE001
        results.append(("still usable afterwards", False, f"{type(e).__name__}: {e}"))
    return results


# ---------------------------------------------------------------------------------------
# The summary table
# ---------------------------------------------------------------------------------------


def read_results(text: str) -> list[tuple[str, str, float, str]]:
    """Rows ``name<TAB>status<TAB>seconds<TAB>detail`` of a results file."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, status, secs, detail = (line.split("\t", 3) + ["", "", ""])[:4]
        try:
            seconds = float(secs)
        except ValueError:
            seconds = float("nan")
        rows.append((name, status, seconds, detail))
    return rows


def format_table(rows: list[tuple[str, str, float, str]], width: int = 150) -> str:
    """The summary table, then one verdict line.

    >>> print(format_table([("build", "PASS", 25.0, "gcc 13")]))  # doctest: +NORMALIZE_WHITESPACE
    stage   result  time  detail
    build   PASS    25 s  gcc 13
    all 1 stages passed
    """
    name_w = max([len("stage")] + [len(r[0]) for r in rows])
    lines = [f"{'stage':<{name_w}}  result  {'time':>6}  detail"]
    for name, status, seconds, detail in rows:
        t = "" if seconds != seconds else (f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s")
        line = f"{name:<{name_w}}  {status:<6}  {t:>6}  {detail}"
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    stages = [r for r in rows if not r[0][:1].isspace()]  # indented rows belong to the stage above
    failed = [r[0] for r in stages if r[1] == "FAIL"]
    skipped = sum(r[1] == "SKIP" for r in stages)
    if failed or any(r[1] == "FAIL" for r in rows):
        verdict = f"FAILED: {len(failed)} of {len(stages)} stages failed ({', '.join(failed)})"
    else:
        verdict = f"all {len(stages) - skipped} stages passed" + (f", {skipped} skipped" if skipped else "")
    return "\n".join(lines + [verdict])


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("pytest-summary")
    s.add_argument("log", type=Path)
    s.add_argument("--rc", type=int, default=0, help="pytest's exit status")
    s = sub.add_parser("error-paths")
    s.add_argument("--allow-emulated", action="store_true")
    s = sub.add_parser("nb2py")
    s.add_argument("notebook", type=Path)
    s.add_argument("out", type=Path, nargs="?")
    s = sub.add_parser("needs-mnist")
    s.add_argument("notebook", type=Path)
    s = sub.add_parser("run-notebook")
    s.add_argument("notebook", type=Path)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--timeout", type=float, default=900)
    s.add_argument("--mode", choices=["auto", "nbclient", "script"], default="auto")
    s.add_argument("--detail-file", type=Path, help="write the one line of detail here too")
    s = sub.add_parser("table")
    s.add_argument("results", type=Path)
    a = p.parse_args(argv)

    if a.cmd == "pytest-summary":
        ok, detail = describe_pytest(a.log.read_text(encoding="utf-8", errors="replace"), a.rc)
        print(detail)
        return 0 if ok else 1
    if a.cmd == "error-paths":
        results = error_paths(a.allow_emulated)
        for name, ok, detail in results:
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
        return 0 if all(ok for _, ok, _ in results) else 1
    if a.cmd == "nb2py":
        script = notebook_to_script(json.loads(a.notebook.read_text(encoding="utf-8")), a.notebook.name)
        if a.out:
            a.out.write_text(script, encoding="utf-8")
        else:
            sys.stdout.write(script)
        return 0
    if a.cmd == "needs-mnist":
        return 0 if needs_mnist(json.loads(a.notebook.read_text(encoding="utf-8"))) else 1
    if a.cmd == "run-notebook":
        ok, detail = run_notebook(a.notebook, a.out, a.timeout, a.mode)
        print(detail)
        if a.detail_file:
            a.detail_file.write_text(detail + "\n", encoding="utf-8")
        return 0 if ok else 1
    if a.cmd == "table":
        rows = read_results(a.results.read_text(encoding="utf-8"))
        print(format_table(rows))
        return 1 if any(r[1] == "FAIL" for r in rows) else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
