"""One rank of ``python -m minitorch.distributed.run``: sets the rank's environment, then
runs the user's script (or ``-m module``) in this process, as ``python`` would.

    python .../minitorch/distributed/_worker.py [-m] TARGET [ARGS...]

Started by file path, not ``-m``, on purpose: nothing of minitorch is imported before
CUDA_VISIBLE_DEVICES is set (importing minitorch starts CUDA on device 0).

Environment set here: RANK and LOCAL_RANK (under mpiexec, from MPI's PMI_RANK and
MPI_LOCALRANKID; the launcher sets them itself otherwise), and, when the machine has
NVIDIA GPUs and CUDA_VISIBLE_DEVICES is unset, CUDA_VISIBLE_DEVICES=LOCAL_RANK modulo
the number of GPUs (minitorch uses device 0, so each rank gets its own GPU).

When the target fails (an exception, or exit with a non-zero status) this writes the
status to $MINITORCH_RUN_DIR/failed.RANK, where the launcher looks for it to stop the
other ranks (mpiexec itself waits for them, which would hang in a collective).
"""
import glob
import os
import runpy
import socket
import sys
import threading
import time
import traceback


def _first_env(*names):
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return value
    return None


def _set_rank_environment() -> str:
    rank = _first_env("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "RANK") or "0"
    local = _first_env("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK") or rank
    os.environ["RANK"], os.environ["LOCAL_RANK"] = rank, local
    size = _first_env("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
    if size is not None:
        os.environ["WORLD_SIZE"] = size
    gpus = glob.glob("/dev/nvidia[0-9]*")
    if gpus and "CUDA_VISIBLE_DEVICES" not in os.environ:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(int(local) % len(gpus))
    return rank


def _record_failure(rank: str, code: int) -> None:
    run_dir = os.environ.get("MINITORCH_RUN_DIR")
    if not run_dir:
        return
    tmp = os.path.join(run_dir, f".failed.{rank}.tmp")
    try:
        with open(tmp, "w") as f:
            f.write(str(code))
        os.replace(tmp, os.path.join(run_dir, f"failed.{rank}"))
    except OSError:
        pass


def _exit_status(code) -> int:
    """The status ``sys.exit(code)`` ends a process with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    return 1  # sys.exit("message") prints the message and exits 1


def _exit_with_the_launcher() -> None:
    """Ends this rank if the launcher disappears (killed with SIGKILL, it cannot stop the
    ranks itself): a rank left alone would wait in a collective forever."""
    pid = int(os.environ.get("MINITORCH_LAUNCHER_PID", "0"))
    host = os.environ.get("MINITORCH_LAUNCHER_HOST")
    if pid <= 0 or (host is not None and host != socket.gethostname()):
        return  # no launcher, or one on another machine (mpiexec --hosts), whose pid means nothing here

    def watch():
        while True:
            time.sleep(1.0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # alive, owned by someone else
                pass

    threading.Thread(target=watch, name="minitorch-launcher-watch", daemon=True).start()


def main() -> None:
    args = sys.argv[1:]
    as_module = bool(args) and args[0] == "-m"
    if as_module:
        args = args[1:]
    if not args:
        raise SystemExit("_worker.py: no script or module to run")
    target, rest = args[0], args[1:]
    rank = _set_rank_environment()
    _exit_with_the_launcher()
    sys.argv = [target, *rest]
    # What `python script.py` / `python -m module` would put first on the path.
    sys.path[0] = os.getcwd() if as_module else os.path.dirname(os.path.abspath(target))
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        status = _exit_status(e.code)
        if status != 0:
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)  # what Python would print for sys.exit("message")
            _fail(rank, status)
        raise
    except BaseException as e:
        # Report before the launcher is told: it stops every rank, this one included.
        traceback.print_exc()
        _fail(rank, 130 if isinstance(e, KeyboardInterrupt) else 1)


def _fail(rank: str, status: int) -> None:
    """Flushes what this rank wrote, tells the launcher, and exits with ``status``."""
    sys.stdout.flush()
    sys.stderr.flush()
    _record_failure(rank, status)
    raise SystemExit(status)


if __name__ == "__main__":
    main()
