"""Start N copies of a training program on this machine, one per rank (like ``torchrun``).

    python -m minitorch.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m minitorch.distributed.run --nproc-per-node 2 -m minitorch.examples.mnist --distributed

Every rank sees RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT in its environment, so ``init_process_group()`` needs no arguments.

How the processes are started (``--launcher``):

- ``mpiexec`` (the default when mpi4py is installed): ``mpiexec -n N`` from the MPICH
  wheel (found beside this Python, else on PATH; ``$MPIEXEC`` overrides). Backend
  "mpi" needs it: MPI ranks can only find each other through their launcher. Backend
  "nccl" works under it too (its id travels over MPI).
- ``spawn``: N plain child processes (no MPI). For backend "nccl" without mpi4py.

Each rank runs through ``_worker.py``, which sets the per-rank variables and, when a
rank fails, leaves its exit status where this launcher sees it. The launcher then stops
the other ranks (they would wait forever in their next collective) and exits with the
failing rank's status. Ctrl-C stops every rank. One machine only (no ``--nnodes``).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")
_POLL_S = 0.05
_GRACE_S = 5.0


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


def _free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m minitorch.distributed.run",
        description="Run a training script as N ranks on this machine (minitorch's torchrun).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, dest="nproc_per_node",
                   help="number of ranks to start (default 1)")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", dest="master_addr",
                   help="address of rank 0 for the NCCL rendezvous (default 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", type=int, default=None, dest="master_port",
                   help="port of rank 0 for the NCCL rendezvous (default: a free port)")
    p.add_argument("--launcher", choices=["auto", "mpiexec", "spawn"], default="auto",
                   help="how to start the ranks: mpiexec (needed by backend 'mpi'), plain processes (spawn), "
                        "or auto: mpiexec when mpi4py and mpiexec are installed")
    p.add_argument("-m", "--module", action="store_true",
                   help="run TARGET as a module (python -m TARGET), not a script file")
    p.add_argument("target", metavar="TARGET", help="the training script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    args = p.parse_args(argv)
    if args.nproc_per_node < 1:
        p.error(f"--nproc-per-node must be >= 1, got {args.nproc_per_node}")
    return args


def _mpi_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def _choose_launcher(choice: str) -> tuple[str, str | None]:
    mpiexec = find_mpiexec()
    if choice == "spawn":
        return "spawn", None
    if choice == "mpiexec":
        if mpiexec is None:
            raise SystemExit('minitorch.distributed.run: --launcher mpiexec, but no mpiexec was found; '
                             'pip install "minitorch[distributed]" (mpi4py and the MPICH wheel)')
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
    mode, mpiexec = _choose_launcher(args.launcher)
    n = args.nproc_per_node
    port = args.master_port or _free_port(args.master_addr)
    run_dir = tempfile.mkdtemp(prefix="minitorch-run-")
    env = dict(os.environ, WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n), MASTER_ADDR=args.master_addr,
               MASTER_PORT=str(port), MINITORCH_RUN_DIR=run_dir, MINITORCH_LAUNCHER_PID=str(os.getpid()))
    # SIGTERM / SIGHUP (a job scheduler, a closed terminal, a test's timeout) stop the ranks
    # as Ctrl-C does; after a SIGKILL the ranks notice the launcher is gone (_worker.py).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    worker = [sys.executable, _WORKER, *(["-m"] if args.module else []), args.target, *args.args]
    procs = []
    try:
        if mode == "mpiexec":
            procs.append(subprocess.Popen([mpiexec, "-n", str(n), *worker], env=env))
        else:
            for rank in range(n):
                procs.append(subprocess.Popen(worker, env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank))))
        return _watch(procs, mode, run_dir)
    except KeyboardInterrupt:
        _say("interrupted: stopping every rank")
        _stop(procs)
        return 130
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _watch(procs, mode: str, run_dir: str) -> int:
    """Waits for the ranks; on the first failure stops the rest and returns its status."""
    while True:
        failed = _failures(run_dir)
        if mode == "spawn":
            for rank, p in enumerate(procs):
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
