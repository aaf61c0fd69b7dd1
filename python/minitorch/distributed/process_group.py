"""The default process group and the collectives, with ``torch.distributed``'s names.

One process group per program (PyTorch's "default group", ``group=None``): made by
:func:`init_process_group`, used by every collective, ended by
:func:`destroy_process_group`. The collectives check their arguments here, the same
way for every backend, then hand the tensors to the backend (``_mpi.py``, ``_nccl.py``),
which moves the bytes.

Every collective changes its tensors in place, as in PyTorch, and must be called by
every rank, in the same order, with tensors of the same shape and dtype.
"""
from __future__ import annotations

import datetime
import enum
import importlib.util
import os

from .. import _C


class DistNotInitializedError(ValueError, RuntimeError):
    """A collective (or ``get_rank``...) was called before :func:`init_process_group`.

    PyTorch 2.x raises ValueError here (1.x raised RuntimeError): this error is both."""


_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class ReduceOp(enum.IntEnum):
    """How :func:`all_reduce` and :func:`reduce` combine the ranks' tensors, element by element.

    ``AVG`` is the mean over ranks; it needs a floating-point tensor. On a bool tensor
    ``SUM``/``MAX`` are a logical or and ``PRODUCT``/``MIN`` a logical and (as NCCL does).
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4


class Backend:
    """The names :func:`init_process_group` accepts (``Backend.MPI == "mpi"``)."""

    MPI = "mpi"
    NCCL = "nccl"


class _WorldGroup:
    """The group of every rank: the only group minitorch has (``group.WORLD``)."""

    def __repr__(self) -> str:
        return "<minitorch.distributed.group.WORLD>"


class group:  # noqa: N801  (PyTorch's spelling: dist.group.WORLD)
    WORLD = _WorldGroup()


GroupMember = group


class Work:
    """The handle an ``async_op=True`` collective returns: ``wait()`` blocks until the
    result is in the tensor; ``is_completed()`` asks without blocking.

    A backend gives ``wait_fn`` (blocks) and ``test_fn`` (True when done); ``finish``
    runs once, after completion (the division of ``AVG``, a copy back from a staging
    buffer)."""

    def __init__(self, wait_fn=None, test_fn=None, finish=None):
        self._wait_fn, self._test_fn, self._finish = wait_fn, test_fn, finish
        self._done = False

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        if not self._done:
            if self._wait_fn is not None:
                self._wait_fn()
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done and (self._test_fn is None or self._test_fn()):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()


_backend = None  # the live backend object, or None before init / after destroy


def is_available() -> bool:
    """True: this build has ``minitorch.distributed`` (whether a backend works is asked
    with :func:`is_mpi_available` and :func:`is_nccl_available`)."""
    return True


def is_mpi_available() -> bool:
    """True when mpi4py is installed (``pip install "minitorch[distributed]"``).

    Only looks for the package: importing ``mpi4py.MPI`` would start MPI."""
    try:
        return importlib.util.find_spec("mpi4py") is not None
    except (ImportError, ValueError):
        return False


def is_nccl_available() -> bool:
    """True when this is a real-GPU CUDA build of minitorch and ``libnccl.so.2`` loads
    (from the ``nvidia-nccl-cu13``/``-cu12`` wheel or the system). False in a CPU-only
    or emulated-CUDA build, where NCCL could not run."""
    from . import _nccl

    return _nccl.is_available()


def is_initialized() -> bool:
    """True between :func:`init_process_group` and :func:`destroy_process_group`."""
    return _backend is not None


def _default():
    if _backend is None:
        raise DistNotInitializedError(_NOT_INITIALIZED)
    return _backend


def _check_group(group_arg, fn: str) -> None:
    if group_arg is not None and group_arg is not group.WORLD:
        raise ValueError(f"{fn}: minitorch has only the default group (group=None or group.WORLD); "
                         f"got {group_arg!r}")


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Joins this process to the group of all ranks; every rank must call it.

    Args:
        backend: ``"mpi"`` (CPU tensors, over MPI: start the program with
            ``python -m minitorch.distributed.run`` or ``mpiexec``; rank and world size
            come from MPI) or ``"nccl"`` (CUDA tensors on a real GPU; rank and world
            size from the arguments or RANK/WORLD_SIZE, the rendezvous at
            MASTER_ADDR:MASTER_PORT or ``init_method="tcp://host:port"``). None picks
            ``"mpi"`` when mpi4py is installed, else ``"nccl"``.
        init_method: ``"env://"`` (the default: read the environment) or
            ``"tcp://host:port"`` (NCCL's rendezvous address).
        timeout: how long NCCL's rendezvous waits for the other ranks (default 30 min).
            MPI has its own (none).
        world_size, rank: -1 reads WORLD_SIZE / RANK (NCCL) or asks MPI; with "mpi" a
            value that disagrees with MPI's is an error.
        store, group_name, pg_options, device_id: PyTorch's; minitorch has no stores
            (``store`` must be None) and one GPU per process (the others are ignored).

    >>> import minitorch.distributed as dist
    >>> dist.init_process_group("mpi")          # under: python -m minitorch.distributed.run ...
    >>> dist.get_rank(), dist.get_world_size()
    (0, 2)
    """
    global _backend
    if store is not None:
        raise NotImplementedError("init_process_group: store= is not supported by minitorch (use init_method)")
    if _backend is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is None:
        backend = Backend.MPI if is_mpi_available() or not is_nccl_available() else Backend.NCCL
    name = str(backend).lower()
    if name not in (Backend.MPI, Backend.NCCL):
        raise ValueError(f"Invalid backend: '{backend}' (minitorch.distributed has 'mpi' for CPU tensors and "
                         "'nccl' for CUDA tensors)")
    if timeout is None:
        timeout = datetime.timedelta(minutes=30)
    elif not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"init_process_group: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    if init_method is not None and not (init_method.startswith("env://") or init_method.startswith("tcp://")):
        raise ValueError(f"init_process_group: init_method {init_method!r} is not supported "
                         "(use 'env://' or 'tcp://host:port')")
    if name == Backend.MPI:
        from ._mpi import MpiBackend

        _backend = MpiBackend(world_size, rank)
    else:
        from ._nccl import NcclBackend

        _backend = NcclBackend(init_method, world_size, rank, timeout)


def destroy_process_group(group=None) -> None:
    """Leaves the group: frees the communicator. ``init_process_group`` may be called again."""
    global _backend
    _check_group(group, "destroy_process_group")
    backend, _backend = _default(), None
    backend.destroy()


def get_rank(group=None) -> int:
    """This process's rank, 0 .. world_size - 1."""
    _check_group(group, "get_rank")
    return _default().rank


def get_world_size(group=None) -> int:
    """The number of processes in the group."""
    _check_group(group, "get_world_size")
    return _default().size


def get_backend(group=None) -> str:
    """``"mpi"`` or ``"nccl"``."""
    _check_group(group, "get_backend")
    return _default().name


# ---- argument checks shared by every backend ----
def _check_tensor(t, fn: str, name: str = "tensor") -> None:
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"{fn}: {name} must be a minitorch.Tensor, got {type(t).__name__}")


def _check_op(op, t, fn: str) -> ReduceOp:
    try:
        op = ReduceOp(op)
    except ValueError:
        raise ValueError(f"{fn}: op must be a ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), got {op!r}") from None
    if op == ReduceOp.AVG and not t.dtype.is_floating_point:
        raise TypeError(f"{fn}: ReduceOp.AVG needs a floating-point tensor, got {t.dtype} (use SUM and divide)")
    return op


def _check_rank(r, size: int, fn: str, what: str) -> int:
    if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < size:
        raise ValueError(f"{fn}: {what}={r!r} is not a rank of this group (0 .. {size - 1})")
    return r


def _check_same(a, b, fn: str, what: str) -> None:
    if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype or a.device != b.device:
        raise ValueError(f"{fn}: {what} has shape {tuple(b.shape)}, {b.dtype} on {b.device}; expected "
                         f"{tuple(a.shape)}, {a.dtype} on {a.device} like the input tensor")


# ---- the collectives ----
def all_reduce(tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Combines ``tensor`` over all ranks with ``op``; every rank gets the result, in place.

    >>> t = minitorch.tensor([float(dist.get_rank() + 1)])
    >>> dist.all_reduce(t)                      # 2 ranks: 1 + 2
    >>> t
    tensor([3.])
    """
    _check_group(group, "all_reduce")
    be = _default()
    _check_tensor(tensor, "all_reduce")
    return be.all_reduce(tensor, _check_op(op, tensor, "all_reduce"), bool(async_op))


def broadcast(tensor, src: int, group=None, async_op: bool = False):
    """Copies rank ``src``'s ``tensor`` into ``tensor`` on every other rank."""
    _check_group(group, "broadcast")
    be = _default()
    _check_tensor(tensor, "broadcast")
    return be.broadcast(tensor, _check_rank(src, be.size, "broadcast", "src"), bool(async_op))


def reduce(tensor, dst: int, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Like :func:`all_reduce`, but only rank ``dst`` receives the result (the other
    ranks' tensors are left as they were)."""
    _check_group(group, "reduce")
    be = _default()
    _check_tensor(tensor, "reduce")
    return be.reduce(tensor, _check_rank(dst, be.size, "reduce", "dst"), _check_op(op, tensor, "reduce"),
                     bool(async_op))


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank.

    ``tensor_list`` holds ``world_size`` tensors shaped like ``tensor``; every rank
    must pass the same shape and dtype (checked: a mismatch raises on every rank)."""
    _check_group(group, "all_gather")
    be = _default()
    _check_tensor(tensor, "all_gather")
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"all_gather: tensor_list must be a list of tensors, got {type(tensor_list).__name__}")
    if len(tensor_list) != be.size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors; the group has {be.size} ranks")
    for i, t in enumerate(tensor_list):
        _check_tensor(t, "all_gather", f"tensor_list[{i}]")
        _check_same(tensor, t, "all_gather", f"tensor_list[{i}]")
    return be.all_gather(list(tensor_list), tensor, bool(async_op))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Every rank's ``input_tensor`` concatenated (rank order) into ``output_tensor``,
    shaped ``(world_size * n, ...)`` or ``(world_size, n, ...)``."""
    _check_group(group, "all_gather_into_tensor")
    be = _default()
    _check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    if (output_tensor.dtype != input_tensor.dtype or output_tensor.device != input_tensor.device
            or output_tensor.numel() != be.size * input_tensor.numel()):
        raise ValueError(f"all_gather_into_tensor: output_tensor {tuple(output_tensor.shape)} "
                         f"{output_tensor.dtype} on {output_tensor.device} must hold world_size ({be.size}) x "
                         f"the input {tuple(input_tensor.shape)} {input_tensor.dtype} on {input_tensor.device}")
    return be.all_gather_into_tensor(output_tensor, input_tensor, bool(async_op))


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Returns when every rank has called it."""
    _check_group(group, "barrier")
    return _default().barrier(bool(async_op))
