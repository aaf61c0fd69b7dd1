"""python -m minitorch.distributed.run: a failing rank's exit status comes back and the
other ranks (stuck in a collective, or just busy) are stopped."""
from __future__ import annotations

import time

import pytest

from minitorch.distributed.run import parse_args

pytest.importorskip("mpi4py", reason='mpi4py not installed: pip install "minitorch[distributed]"')

from dist_helpers import SCRIPTS, explain, launch  # noqa: E402


def test_arguments_after_the_target_belong_to_the_script():
    a = parse_args(["--nproc-per-node", "2", "-m", "pkg.mod", "--model", "cnn", "--nproc-per-node", "9"])
    assert (a.nproc_per_node, a.module, a.target, a.args) == (2, True, "pkg.mod", ["--model", "cnn",
                                                                                  "--nproc-per-node", "9"])
    a = parse_args(["--nproc_per_node=3", "train.py"])
    assert (a.nproc_per_node, a.module, a.target, a.args, a.launcher) == (3, False, "train.py", [], "auto")


@pytest.mark.parametrize("launcher", ["mpiexec", "spawn"])
def test_failing_rank_status_is_returned_and_the_others_stopped(launcher):
    # Under mpiexec rank 0 waits in an all_reduce rank 1 never joins; under spawn it sleeps.
    t0 = time.perf_counter()
    proc = launch(2, str(SCRIPTS / "fail.py"), launcher, launcher=launcher, timeout=60)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 7, explain(proc)
    assert "rank 1 failed (exit status 7): stopping the other ranks" in proc.stderr, explain(proc)
    assert "rank 0 got past" not in proc.stdout
    assert elapsed < 30, elapsed


def test_exception_in_a_rank_gives_status_1():
    proc = launch(2, str(SCRIPTS / "fail.py"), "raise", launcher="spawn", timeout=60)
    assert proc.returncode == 1 and "ZeroDivisionError" in proc.stderr, explain(proc)


def test_mpi_backend_without_mpiexec_says_how_to_launch():
    proc = launch(2, str(SCRIPTS / "collectives.py"), launcher="spawn", env={"EXPECT_WORLD": "2"})
    assert proc.returncode == 1, explain(proc)
    assert "WORLD_SIZE=2 in the environment, but MPI has 1 process" in proc.stderr, explain(proc)
