"""Several machines, played on this one: launchers started once per "machine" with
torchrun's --nnodes/--node-rank/--master-addr/--master-port, and one launcher giving
mpiexec a host list (--hosts)."""
from __future__ import annotations

import re
import subprocess

import pytest

from minitorch.distributed.run import find_mpiexec, mpi_flavour

pytest.importorskip("mpi4py", reason='mpi4py not installed: pip install "minitorch[distributed]"')

from dist_helpers import SCRIPTS, explain, free_port, launch, launcher_command  # noqa: E402


def _oks(out: str) -> list[str]:
    return sorted(re.findall(r"rank \d+ ok local \d+ world \d+", out))


def _run_nodes(mode: str, nnodes: int = 2, nproc: int = 2) -> list[subprocess.CompletedProcess]:
    """One launcher per node, started together (node 0 last: the others wait for it)."""
    port = str(free_port())
    procs = {}
    for node in reversed(range(nnodes)):
        cmd, env = launcher_command(nproc, str(SCRIPTS / "nodes.py"), mode, options=(
            "--nnodes", str(nnodes), "--node-rank", str(node), "--master-addr", "127.0.0.1", "--master-port", port),
            env={"EXPECT_WORLD": str(nnodes * nproc)})
        procs[node] = subprocess.Popen(cmd, cwd=SCRIPTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
    done = []
    for node in range(nnodes):
        try:
            out, err = procs[node].communicate(timeout=60)
        except subprocess.TimeoutExpired:
            for p in procs.values():
                p.kill()
            raise
        done.append(subprocess.CompletedProcess(procs[node].args, procs[node].returncode, out, err))
    return done


def test_two_nodes_get_their_ranks_and_rank0s_whole_nccl_id():
    # nodes.py nccl: the fake libnccl's id (full of NULs) travels over TCP to every rank.
    node0, node1 = _run_nodes("nccl")
    assert node0.returncode == 0, explain(node0)
    assert node1.returncode == 0, explain(node1)
    assert _oks(node0.stdout) == ["rank 0 ok local 0 world 4", "rank 1 ok local 1 world 4"], explain(node0)
    assert _oks(node1.stdout) == ["rank 2 ok local 0 world 4", "rank 3 ok local 1 world 4"], explain(node1)


def test_backend_mpi_over_separate_launchers_says_to_use_hosts():
    for proc in _run_nodes("mpi", nproc=1):
        assert proc.returncode == 1, explain(proc)
        assert "run it once with --hosts node1,node2" in proc.stderr, explain(proc)


@pytest.mark.skipif(mpi_flavour(find_mpiexec() or "mpiexec") != "mpich",
                    reason="needs MPICH's mpiexec, which starts local host names (127.0.0.1, localhost) as two "
                           "machines without ssh")
@pytest.mark.parametrize("mode", ["mpi", "nccl"])
def test_hosts_start_each_machines_ranks_through_mpiexec(mode):
    proc = launch(2, str(SCRIPTS / "nodes.py"), mode, options=("--hosts", "127.0.0.1,localhost"),
                  env={"EXPECT_WORLD": "4"})
    assert proc.returncode == 0, explain(proc)
    assert _oks(proc.stdout) == ["rank 0 ok local 0 world 4", "rank 1 ok local 1 world 4",
                                 "rank 2 ok local 0 world 4", "rank 3 ok local 1 world 4"], explain(proc)
