"""A forked child (a DataLoader worker: fork is Linux's default start method) must not hang
in a parallel loop. fork() copies only the calling thread, and GNU OpenMP's thread pool does
not survive it: before the fix, a child whose parent had run a parallel region waited forever
at its first one. Each check runs in a fresh interpreter with a deadline, so a regression
fails here instead of hanging the suite.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")


def run(code: str) -> str:
    try:
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                             timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("a forked child hung (the parent's OpenMP pool was used after fork)")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_forked_child_runs_parallel_loops_on_one_thread():
    out = run("""
        import os
        import minitorch
        minitorch.set_num_threads(2)
        x = minitorch.linspace(-1, 1, 1_000_000)  # big enough to be split across threads
        want = float((x.exp() * 2).sum())          # the parent's pool is running now
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            got = float((x.exp() * 2).sum())
            os.write(w, f"{minitorch.get_num_threads()} {got}".encode())
            os._exit(0)
        os.waitpid(pid, 0)
        threads, got = os.read(r, 100).decode().split()
        print(threads, abs(float(got) - want) <= 1e-3 * abs(want), minitorch.get_num_threads())
    """)
    assert out.split() == ["1", "True", "2"]


def test_multiprocessing_pool_of_forked_processes():
    """What a student writes to preprocess in parallel (DataLoader workers set one thread
    themselves; a plain multiprocessing pool does not)."""
    out = run("""
        import multiprocessing
        import minitorch
        minitorch.set_num_threads(2)
        x = minitorch.linspace(0, 1, 1_000_000)
        float(x.sum())  # the parent's pool is running now

        def work(scale):
            return float((x * scale).sum())  # split across threads, were the child to try

        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = pool.map(work, [1.0, 2.0, 3.0])
        want = [float((x * s).sum()) for s in (1.0, 2.0, 3.0)]
        print(all(abs(g - w) <= 1e-3 * w for g, w in zip(got, want)))
    """)
    assert out.split() == ["True"]
