"""Start N copies of a training program, one per rank, on this machine or several (like ``torchrun``).

    python -m minitorch.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m minitorch.distributed.run --nproc-per-node 2 -m minitorch.examples.mnist --distributed
    python -m minitorch.distributed.run --hosts node1,node2 --nproc-per-node 4 train.py      # MPI, run once
    python -m minitorch.distributed.run --nnodes 2 --node-rank 0 --master-addr node1 train.py  # on each node

Every rank sees RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT in its environment, so ``init_process_group()`` needs no arguments.

How the processes are started (``--launcher``):

- ``mpiexec`` (the default when mpi4py is installed): ``mpiexec -n N`` from the MPICH
  wheel (found beside this Python, else on PATH; ``$MPIEXEC`` overrides). Backend
  "mpi" needs it: MPI ranks can only find each other through their launcher. Backend
  "nccl" works under it too (its id travels over MPI). Under Open MPI as root it passes
  ``--allow-run-as-root`` (containers run as root) and says so; MPICH needs nothing.
- ``spawn``: N plain child processes (no MPI). For backend "nccl" without mpi4py.

Several machines: ``--hosts a,b`` gives mpiexec the host list (one launcher, started
once, starts every machine's ranks); or, torchrun's way, ``--nnodes``, ``--node-rank``,
``--master-addr`` and ``--master-port`` on a launcher started on every machine (spawn:
backend "nccl", whose id travels from rank 0 over TCP).

Each rank runs through ``_worker.py``, which sets the per-rank variables and, when a
rank fails, leaves its exit status where this launcher sees it. The launcher then stops
the other ranks (they would wait forever in their next collective) and exits with the
failing rank's status. Ctrl-C stops every rank.
"""
from __future__ import annotations

import argparse
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")
_POLL_S = 0.05
_GRACE_S = 5.0
_DEFAULT_MULTI_NODE_PORT = 29500  # torchrun's, for launchers on several machines that must agree
# What the launcher sets for every rank (Open MPI sends them to other machines with -x NAME).
_RANK_ENV = ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "MINITORCH_RUN_DIR",
             "MINITORCH_LAUNCHER_PID", "MINITORCH_LAUNCHER_HOST")


def find_mpiexec() -> str | None:
    """``$MPIEXEC``, else the mpiexec installed beside this Python (the MPICH wheel's, the
    MPI that mpi4py loads), else the first on PATH."""
    if os.environ.get("MPIEXEC"):
        return os.environ["MPIEXEC"]
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        path = os.path.join(folder, "mpiexec")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("mpiexec")


def mpi_flavour_of(version_text: str) -> str:
    """"openmpi" or "mpich" (MPICH, Intel MPI, MVAPICH: Hydra's options) from what
    ``mpiexec --version`` prints.

    >>> mpi_flavour_of("mpiexec (Open MPI) 5.0.3")
    'openmpi'
    """
    text = version_text.lower()
    return "openmpi" if any(k in text for k in ("open mpi", "openrte", "open-mpi.org")) else "mpich"


@functools.lru_cache(maxsize=None)
def mpi_flavour(mpiexec: str) -> str:
    """The flavour of the MPI that ``mpiexec`` belongs to, asked once per path. Open MPI
    answers ``--version`` as root too; an mpiexec that does not answer counts as MPICH."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "mpich"
    return mpi_flavour_of(out.stdout + out.stderr)


def mpiexec_command(mpiexec: str, flavour: str, euid: int, nproc_per_node: int, hosts: list[str],
                    worker: list[str], forward: Sequence[str] = ()) -> tuple[list[str], dict[str, str], str | None]:
    """The mpiexec command line that starts every rank, the variables to add to its
    environment, and a line to tell the user (or None).

    ``hosts``: the machines (none: this one), each given ``nproc_per_node`` ranks, in order
    (ranks 0 .. n-1 on the first). ``forward``: variables Open MPI must send to the other
    machines (MPICH sends the whole environment). Open MPI also gets ``--bind-to none``
    (like torchrun, each rank may use several cores) and, on one machine,
    ``--oversubscribe`` (more ranks than cores, as MPICH and spawn allow).

    >>> mpiexec_command("mpiexec", "openmpi", 0, 2, [], ["python", "w.py"])[0]
    ['mpiexec', '--allow-run-as-root', '--bind-to', 'none', '--oversubscribe', '-n', '2', 'python', 'w.py']
    """
    cmd, env, notice = [mpiexec], {}, None
    slots = ",".join(f"{h}:{nproc_per_node}" for h in hosts)
    if flavour == "openmpi":
        if euid == 0:  # Open MPI refuses root unless told; a container runs as root
            cmd.append("--allow-run-as-root")
            env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
            notice = "running as root under Open MPI; passing --allow-run-as-root"
        cmd += ["--bind-to", "none"]
        cmd += ["--host", slots, *(a for name in forward for a in ("-x", name))] if hosts else ["--oversubscribe"]
    elif hosts:
        cmd += ["-hosts", slots]
    return [*cmd, "-n", str(nproc_per_node * max(1, len(hosts))), *worker], env, notice


def _free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m minitorch.distributed.run",
        description="Run a training script as N ranks per machine (minitorch's torchrun).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, dest="nproc_per_node",
                   help="number of ranks to start on each machine (default 1)")
    p.add_argument("--nnodes", type=int, default=None,
                   help="number of machines (default 1, or the number of --hosts); without --hosts, start "
                        "this launcher on every machine, each with its --node-rank")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, dest="node_rank",
                   help="this machine's index, 0 .. nnodes - 1 (default 0); its ranks are "
                        "node_rank * nproc_per_node + 0, 1, ...")
    p.add_argument("--hosts", default=None,
                   help="comma-separated machines for mpiexec (e.g. node1,node2): run the launcher once, "
                        "mpiexec starts --nproc-per-node ranks on each machine")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", dest="master_addr",
                   help="address of the machine of rank 0 (node rank 0), for the NCCL rendezvous "
                        "(default 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", type=int, default=None, dest="master_port",
                   help=f"port of rank 0 for the NCCL rendezvous (default: a free port on one machine, "
                        f"{_DEFAULT_MULTI_NODE_PORT} with --nnodes > 1)")
    p.add_argument("--launcher", choices=["auto", "mpiexec", "spawn"], default="auto",
                   help="how to start the ranks: mpiexec (needed by backend 'mpi'), plain processes (spawn), "
                        "or auto: mpiexec when mpi4py and mpiexec are installed (always with --hosts; spawn with "
                        "--nnodes > 1 and no --hosts)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run TARGET as a module (python -m TARGET), not a script file")
    p.add_argument("target", metavar="TARGET", help="the training script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    args = p.parse_args(argv)
    _check_args(p, args)
    return args


def _check_args(p: argparse.ArgumentParser, args) -> None:
    """Checks the numbers and fills in ``args.hosts`` (a list) and ``args.nnodes``;
    a bad value exits with status 2 and a message naming its option, as argparse does."""
    if args.nproc_per_node < 1:
        p.error(f"--nproc-per-node must be >= 1, got {args.nproc_per_node}")
    hosts = [] if args.hosts is None else [h.strip() for h in args.hosts.split(",")]
    if args.hosts is not None and not all(hosts):
        p.error(f"--hosts takes machine names separated by commas (e.g. node1,node2), got {args.hosts!r}")
    if hosts:
        if args.nnodes is not None and args.nnodes != len(hosts):
            p.error(f"--nnodes {args.nnodes} disagrees with --hosts, which names {len(hosts)} machine(s)")
        if args.node_rank != 0:
            p.error("--node-rank is for a launcher started on every machine; with --hosts, run the launcher "
                    "once and mpiexec starts the ranks on every machine")
        if args.launcher == "spawn":
            p.error("--hosts needs --launcher mpiexec (spawn starts processes on this machine only)")
    args.hosts = hosts
    if args.nnodes is None:
        args.nnodes = max(1, len(hosts))
    if args.nnodes < 1:
        p.error(f"--nnodes must be >= 1, got {args.nnodes}")
    if not 0 <= args.node_rank < args.nnodes:
        p.error(f"--node-rank must be in 0 .. {args.nnodes - 1} (--nnodes {args.nnodes}), got {args.node_rank}")
    if args.master_port is not None and not 1 <= args.master_port <= 65535:
        p.error(f"--master-port must be in 1 .. 65535, got {args.master_port}")
    if args.nnodes > 1 and not hosts and args.launcher == "mpiexec":
        p.error(f"--launcher mpiexec with --nnodes {args.nnodes}: an mpiexec per machine makes separate MPI "
                "worlds that cannot reach each other; give the machines with --hosts (run the launcher once), "
                "or use --launcher spawn (backend 'nccl')")


def _mpi_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def _choose_launcher(choice: str, separate_nodes: bool = False, hosts: bool = False) -> tuple[str, str | None]:
    """("mpiexec", its path) or ("spawn", None). ``separate_nodes``: a launcher runs on
    each machine (--nnodes > 1 without --hosts), where only spawn can work; ``hosts``:
    only mpiexec can start ranks on other machines."""
    if choice == "auto" and (separate_nodes or hosts):
        choice = "spawn" if separate_nodes else "mpiexec"
    mpiexec = find_mpiexec()
    if choice == "spawn":
        return "spawn", None
    if choice == "mpiexec":
        if mpiexec is None:
            raise SystemExit('minitorch.distributed.run: --launcher mpiexec (or --hosts) needs mpiexec, but none was '
                             'found; pip install "minitorch[distributed]" (mpi4py and the MPICH wheel)')
        return "mpiexec", mpiexec
    if mpiexec is not None and _mpi_installed():
        return "mpiexec", mpiexec
    return "spawn", None


def _failures(run_dir: str) -> list[tuple[float, int, int]]:
    """(time, rank, status) of every rank that reported a failure, earliest first."""
    out = []
    for name in os.listdir(run_dir):
        if name.startswith("failed."):
            path = os.path.join(run_dir, name)
            try:
                with open(path) as f:
                    out.append((os.path.getmtime(path), int(name.split(".")[1]), int(f.read().strip() or 1)))
            except (OSError, ValueError):
                continue
    return sorted(out)


def _stop(procs) -> None:
    """SIGTERM, then SIGKILL after a grace period, to every process still running."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + _GRACE_S
    for p in live:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode  # killed by signal N -> 128 + N, like a shell


def _say(msg: str) -> None:
    print(f"minitorch.distributed.run: {msg}", file=sys.stderr, flush=True)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run(args) -> int:
    mode, mpiexec = _choose_launcher(args.launcher, separate_nodes=args.nnodes > 1 and not args.hosts,
                                     hosts=bool(args.hosts))
    n = args.nproc_per_node
    if args.master_port:
        port = args.master_port
    else:
        port = _DEFAULT_MULTI_NODE_PORT if args.nnodes > 1 else _free_port(args.master_addr)
    run_dir = tempfile.mkdtemp(prefix="minitorch-run-")
    env = dict(os.environ, WORLD_SIZE=str(n * args.nnodes), LOCAL_WORLD_SIZE=str(n), MASTER_ADDR=args.master_addr,
               MASTER_PORT=str(port), MINITORCH_RUN_DIR=run_dir, MINITORCH_LAUNCHER_PID=str(os.getpid()),
               MINITORCH_LAUNCHER_HOST=socket.gethostname())
    # SIGTERM / SIGHUP (a job scheduler, a closed terminal, a test's timeout) stop the ranks
    # as Ctrl-C does; after a SIGKILL the ranks notice the launcher is gone (_worker.py).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    worker = [sys.executable, _WORKER, *(["-m"] if args.module else []), args.target, *args.args]
    procs, ranks = [], []
    try:
        if mode == "mpiexec":
            forward = [*_RANK_ENV, *(["PYTHONPATH"] if "PYTHONPATH" in env else [])]
            cmd, extra, notice = mpiexec_command(mpiexec, mpi_flavour(mpiexec), os.geteuid(), n, args.hosts, worker,
                                                 forward)
            if notice:
                _say(notice)
            procs.append(subprocess.Popen(cmd, env=dict(env, **extra)))
        else:
            for local in range(n):
                rank = args.node_rank * n + local
                ranks.append(rank)
                procs.append(subprocess.Popen(worker, env=dict(env, RANK=str(rank), LOCAL_RANK=str(local),
                                                               GROUP_RANK=str(args.node_rank))))
        return _watch(procs, ranks, run_dir)
    except KeyboardInterrupt:
        _say("interrupted: stopping every rank")
        _stop(procs)
        return 130
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _watch(procs, ranks: list[int], run_dir: str) -> int:
    """Waits for the ranks; on the first failure stops the rest and returns its status.
    ``ranks``: the rank of each process (spawn), or empty (one mpiexec)."""
    while True:
        failed = _failures(run_dir)
        for rank, p in zip(ranks, procs):
            if p.poll() not in (None, 0) and not any(r == rank for _, r, _ in failed):
                failed.append((time.time(), rank, _status(p.returncode)))
        if failed:
            _, rank, status = failed[0]
            if any(p.poll() is None for p in procs):
                _say(f"rank {rank} failed (exit status {status}): stopping the other ranks")
                _stop(procs)
            return status
        if all(p.poll() is not None for p in procs):
            return max((_status(p.returncode) for p in procs), default=0)
        time.sleep(_POLL_S)


def main(argv=None) -> None:
    sys.exit(run(parse_args(argv)))


if __name__ == "__main__":
    main()
