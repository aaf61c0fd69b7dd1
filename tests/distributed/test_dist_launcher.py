"""python -m minitorch.distributed.run: its options and the mpiexec command it makes (Open
MPI as root, host lists); a failing rank's exit status comes back and the other ranks
(stuck in a collective, or just busy) are stopped."""
from __future__ import annotations

import time

import pytest

from minitorch.distributed.run import find_mpiexec, mpi_flavour, mpi_flavour_of, mpiexec_command, parse_args

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


def test_multi_node_options_with_torchruns_spellings():
    a = parse_args(["--nnodes", "2", "--node_rank", "1", "--master_addr", "10.0.0.1", "--master_port", "29400",
                    "train.py"])
    assert (a.nnodes, a.node_rank, a.master_addr, a.master_port, a.hosts) == (2, 1, "10.0.0.1", 29400, [])
    a = parse_args(["--nnodes=2", "--node-rank=0", "--master-addr=n1", "--master-port=1", "train.py"])
    assert (a.nnodes, a.node_rank, a.master_addr, a.master_port) == (2, 0, "n1", 1)
    a = parse_args(["--hosts", "n1, n2", "--nproc-per-node", "4", "train.py"])
    assert (a.hosts, a.nnodes, a.node_rank, a.nproc_per_node) == (["n1", "n2"], 2, 0, 4)
    a = parse_args(["train.py"])
    assert (a.hosts, a.nnodes, a.node_rank, a.master_port) == ([], 1, 0, None)


@pytest.mark.parametrize("argv, message", [
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank must be in 0 .. 1 (--nnodes 2), got 2"),
    (["--node-rank", "1"], "--node-rank must be in 0 .. 0 (--nnodes 1), got 1"),
    (["--nnodes", "2", "--node_rank", "-1"], "--node-rank must be in 0 .. 1 (--nnodes 2), got -1"),
    (["--nnodes", "0"], "--nnodes must be >= 1, got 0"),
    (["--master-port", "0"], "--master-port must be in 1 .. 65535, got 0"),
    (["--master_port", "65536"], "--master-port must be in 1 .. 65535, got 65536"),
    (["--nproc-per-node", "0"], "--nproc-per-node must be >= 1, got 0"),
    (["--hosts", "a,,b"], "--hosts takes machine names separated by commas"),
    (["--hosts", "a,b", "--nnodes", "3"], "--nnodes 3 disagrees with --hosts, which names 2 machine(s)"),
    (["--hosts", "a,b", "--node-rank", "1"], "--node-rank is for a launcher started on every machine"),
    (["--hosts", "a,b", "--launcher", "spawn"], "--hosts needs --launcher mpiexec"),
    (["--nnodes", "2", "--launcher", "mpiexec"], "give the machines with --hosts"),
    (["--nnodes", "two"], "argument --nnodes: invalid int value: 'two'"),
])
def test_bad_launcher_options_exit_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args([*argv, "train.py"])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


WORKER = ["python", "_worker.py", "train.py"]


def test_mpich_command_is_plain_as_root_or_not():
    for euid in (0, 1000):
        assert mpiexec_command("mpiexec", "mpich", euid, 2, [], WORKER) == (["mpiexec", "-n", "2", *WORKER], {},
                                                                            None)


def test_open_mpi_as_root_is_allowed_and_said():
    cmd, env, notice = mpiexec_command("mpiexec", "openmpi", 0, 3, [], WORKER)
    assert cmd == ["mpiexec", "--allow-run-as-root", "--bind-to", "none", "--oversubscribe", "-n", "3", *WORKER]
    assert env == {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    assert notice == "running as root under Open MPI; passing --allow-run-as-root"


def test_open_mpi_as_a_user_is_not_told_about_root():
    cmd, env, notice = mpiexec_command("mpiexec", "openmpi", 1000, 3, [], WORKER)
    assert cmd == ["mpiexec", "--bind-to", "none", "--oversubscribe", "-n", "3", *WORKER]
    assert (env, notice) == ({}, None)


def test_host_lists_in_each_mpis_spelling():
    cmd, _, _ = mpiexec_command("mpiexec", "mpich", 0, 4, ["n1", "n2"], WORKER, ["WORLD_SIZE"])
    assert cmd == ["mpiexec", "-hosts", "n1:4,n2:4", "-n", "8", *WORKER]  # MPICH sends the whole environment
    cmd, _, _ = mpiexec_command("mpiexec", "openmpi", 1000, 4, ["n1", "n2"], WORKER, ["WORLD_SIZE", "PYTHONPATH"])
    assert cmd == ["mpiexec", "--bind-to", "none", "--host", "n1:4,n2:4", "-x", "WORLD_SIZE", "-x", "PYTHONPATH",
                   "-n", "8", *WORKER]


def test_mpi_flavour_from_mpiexec_version():
    assert mpi_flavour_of("mpiexec (OpenRTE) 4.1.2\n\nReport bugs to http://www.open-mpi.org/community/help/") \
        == "openmpi"
    assert mpi_flavour_of("mpiexec (Open MPI) 5.0.3\n\nReport bugs to https://www.open-mpi.org/community/help/") \
        == "openmpi"
    assert mpi_flavour_of("HYDRA build details:\n    Version:  4.2.0") == "mpich"
    assert mpi_flavour(find_mpiexec()) == ("openmpi" if "open mpi" in _library_version().lower() else "mpich")


def _library_version() -> str:
    """The MPI library mpi4py loads (started in a child: importing mpi4py.MPI starts MPI)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", "from mpi4py import MPI; print(MPI.Get_library_version())"],
                          capture_output=True, text=True, timeout=60).stdout
