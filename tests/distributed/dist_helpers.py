"""Starting the test scripts of tests/distributed/scripts as ranks, through the launcher."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import minitorch

SCRIPTS = Path(__file__).parent / "scripts"
PYTHON_DIR = str(Path(minitorch.__file__).resolve().parent.parent)  # the folder holding the minitorch package


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a rendezvous)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher_command(nproc: int, target: str, *args: str, module: bool = False, launcher: str = "auto",
                     options: tuple[str, ...] = (), env: dict | None = None) -> tuple[list[str], dict]:
    """The command ``python -m minitorch.distributed.run --nproc-per-node N [OPTIONS] [-m]
    TARGET ARGS`` and its environment."""
    run_env = dict(os.environ, **(env or {}))
    run_env["PYTHONPATH"] = os.pathsep.join(p for p in (PYTHON_DIR, run_env.get("PYTHONPATH")) if p)
    run_env.setdefault("OMP_NUM_THREADS", "1")  # ranks share the cores
    cmd = [sys.executable, "-m", "minitorch.distributed.run", "--nproc-per-node", str(nproc),
           "--launcher", launcher, *options, *(["-m"] if module else []), target, *args]
    return cmd, run_env


def launch(nproc: int, target: str, *args: str, module: bool = False, launcher: str = "auto",
           options: tuple[str, ...] = (), timeout: float = 60, env: dict | None = None,
           cwd: Path = SCRIPTS) -> subprocess.CompletedProcess:
    """Runs :func:`launcher_command`; output captured."""
    cmd, run_env = launcher_command(nproc, target, *args, module=module, launcher=launcher, options=options,
                                    env=env)
    return subprocess.run(cmd, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=timeout)


def explain(proc: subprocess.CompletedProcess) -> str:
    return f"exit status {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"


def ranks_ok(proc: subprocess.CompletedProcess) -> list[str]:
    """The "rank R ok" lines, sorted (ranks share stdout, so lines may interleave)."""
    return sorted(re.findall(r"rank \d+ ok", proc.stdout))
