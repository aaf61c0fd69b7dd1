"""Backend "nccl": the collectives on CUDA tensors with NVIDIA's NCCL, loaded at run time.

``libnccl.so.2`` comes from the ``nvidia-nccl-cu13`` (or ``-cu12``) wheel or the system;
it is called through ctypes, so minitorch is not linked against it. Each collective is
queued on CUDA's legacy default stream, the stream minitorch's kernels run on, so it
runs after the kernels that wrote the tensor and before those that read it, without
the host waiting: ``Work.wait()`` has nothing left to do.

Rendezvous: NCCL ranks find each other through a 128-byte "unique id" that rank 0
makes and every rank must receive. When the program runs under MPI (the launcher's
default) the id travels over MPI; otherwise rank 0 serves it over TCP at
MASTER_ADDR:MASTER_PORT (or ``init_method="tcp://host:port"``).

Not verified: this file was written without a GPU. It needs a real-GPU CUDA build
(``minitorch.cuda.is_available() and not minitorch.cuda.is_emulated()``).
"""
from __future__ import annotations

import ctypes
import datetime
import glob
import os
import socket
import struct
import time

import numpy as np

from .. import _C, cuda
from ..autograd import no_grad
from .process_group import ReduceOp, Work, _env_int, is_mpi_available

_NCCL_UNIQUE_ID_BYTES = 128
_ncclSuccess = 0
# ncclDataType_t and ncclRedOp_t (nccl.h)
_DTYPES = {"int64": 4, "float32": 7, "float64": 8, "float16": 6, "bfloat16": 9, "bool": 1,  # bool as ncclUint8
           "int32": 2, "int8": 0, "uint8": 1}  # NCCL has no int16
_OPS = {ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MAX: 2, ReduceOp.MIN: 3, ReduceOp.AVG: 4}
_BOOL_OPS = {ReduceOp.SUM: 2, ReduceOp.MAX: 2, ReduceOp.PRODUCT: 3, ReduceOp.MIN: 3}  # or = max, and = min


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * _NCCL_UNIQUE_ID_BYTES)]


def _id_bytes(uid: _UniqueId) -> bytes:
    """The id's 128 bytes. Not ``bytes(uid.internal)``: ctypes reads a ``c_char`` array
    field as a C string, cut at the first NUL, and the id (a socket address) is full of NULs."""
    return ctypes.string_at(ctypes.addressof(uid), _NCCL_UNIQUE_ID_BYTES)


def _id_from_bytes(raw: bytes) -> _UniqueId:
    """The id received from rank 0, all 128 bytes of it."""
    if len(raw) != _NCCL_UNIQUE_ID_BYTES:
        raise RuntimeError(f"init_process_group('nccl'): received a unique id of {len(raw)} bytes from rank 0; "
                           f"NCCL's has {_NCCL_UNIQUE_ID_BYTES}")
    return _UniqueId.from_buffer_copy(raw)


_lib = None
_lib_error = None


def _library_candidates() -> list[str]:
    found = []
    try:  # the nvidia-nccl-cu13 / -cu12 wheels: site-packages/nvidia/nccl/lib/libnccl.so.2
        import nvidia.nccl

        for root in list(getattr(nvidia.nccl, "__path__", [])):
            found += sorted(glob.glob(os.path.join(root, "lib", "libnccl.so*")))
    except ImportError:
        pass
    return found + ["libnccl.so.2"]  # then the system's search path


def _load():
    """libnccl, loaded once; raises RuntimeError saying where it looked."""
    global _lib, _lib_error
    if _lib is not None:
        return _lib
    errors = []
    for path in _library_candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        lib.ncclGetErrorString.restype = ctypes.c_char_p
        lib.ncclGetErrorString.argtypes = [ctypes.c_int]
        lib.ncclGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.ncclGetUniqueId.argtypes = [ctypes.POINTER(_UniqueId)]
        lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, _UniqueId, ctypes.c_int]
        lib.ncclCommDestroy.argtypes = [ctypes.c_void_p]
        ptr, size, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        lib.ncclAllReduce.argtypes = [ptr, ptr, size, i, i, ptr, ptr]
        lib.ncclBroadcast.argtypes = [ptr, ptr, size, i, i, ptr, ptr]
        lib.ncclReduce.argtypes = [ptr, ptr, size, i, i, i, ptr, ptr]
        lib.ncclAllGather.argtypes = [ptr, ptr, size, i, ptr, ptr]
        for fn in ("ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommDestroy", "ncclAllReduce",
                   "ncclBroadcast", "ncclReduce", "ncclAllGather"):
            getattr(lib, fn).restype = ctypes.c_int
        _lib = lib
        return lib
    _lib_error = "; ".join(errors)
    raise RuntimeError("backend 'nccl': could not load libnccl.so.2 (pip install nvidia-nccl-cu13, or install "
                       f"NCCL on the system). Tried: {_lib_error}")


def _real_gpu_problem() -> str | None:
    """Why NCCL cannot run in this process, or None when it can."""
    if not cuda.is_compiled():
        return "this minitorch was built without CUDA"
    if cuda.is_emulated():
        return ("this minitorch is the emulated-CUDA build: its 'cuda' tensors live in host memory, where NCCL "
                "cannot reach them")
    if not cuda.is_available() or cuda.device_count() < 1:
        return "no CUDA GPU is available (minitorch.cuda.is_available() is False)"
    return None


def is_available() -> bool:
    if not cuda.is_compiled() or cuda.is_emulated():
        return False
    try:
        _load()
    except RuntimeError:
        return False
    return True


def _check(lib, code: int, what: str) -> None:
    if code != _ncclSuccess:
        msg = lib.ncclGetErrorString(code).decode(errors="replace")
        raise RuntimeError(f"NCCL error in {what}: {msg} (ncclResult_t {code})")


# ---- rendezvous: rank 0's unique id to every rank ----
def _under_mpi() -> bool:
    return any(k in os.environ for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"))


def _exchange_id(raw: bytes | None, rank: int, world: int, init_method: str | None,
                 timeout: datetime.timedelta) -> bytes:
    """Rank 0's id bytes (``raw`` on rank 0, None elsewhere) on every rank: over MPI when
    the ranks run under mpiexec, else over TCP at MASTER_ADDR:MASTER_PORT or init_method."""
    if _under_mpi() and is_mpi_available() and (init_method is None or init_method.startswith("env://")):
        from mpi4py import MPI

        return MPI.COMM_WORLD.bcast(raw, root=0)
    if init_method is not None and init_method.startswith("tcp://"):
        host, _, port = init_method[len("tcp://"):].rpartition(":")
    else:
        host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if not host or not port:
            raise ValueError("init_process_group('nccl'): set MASTER_ADDR and MASTER_PORT (the launcher "
                             "does) or pass init_method='tcp://host:port'")
    return _share_id_over_tcp(raw, rank, world, host, int(port), timeout)


def _share_id_over_tcp(uid: bytes | None, rank: int, world: int, host: str, port: int,
                       timeout: datetime.timedelta) -> bytes:
    """Rank 0 listens at host:port and sends the id to each of the world - 1 other ranks,
    which connect (retrying while rank 0 is not yet listening). Each client first
    says its rank and the world size it expects, so a mismatch fails loudly."""
    deadline = time.monotonic() + timeout.total_seconds()
    if rank == 0:
        with socket.create_server(("", port), reuse_port=False) as server:
            server.settimeout(timeout.total_seconds())
            for _ in range(world - 1):
                conn, _addr = server.accept()
                with conn:
                    peer_rank, peer_world = struct.unpack("!ii", _recv_exactly(conn, 8))
                    if peer_world != world:
                        raise RuntimeError(f"init_process_group: rank {peer_rank} expects world_size {peer_world}, "
                                           f"rank 0 has {world}")
                    conn.sendall(uid)
        return uid
    while True:
        try:
            with socket.create_connection((host, port), timeout=5) as conn:
                conn.sendall(struct.pack("!ii", rank, world))
                return _recv_exactly(conn, _NCCL_UNIQUE_ID_BYTES)
        except (ConnectionRefusedError, socket.timeout, OSError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"init_process_group: rank {rank} could not reach rank 0 at {host}:{port} "
                                   f"within {timeout}") from None
            time.sleep(0.2)


def _recv_exactly(conn, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise RuntimeError("init_process_group: the rendezvous connection closed early")
        data += chunk
    return data


class NcclBackend:
    name = "nccl"

    def __init__(self, init_method, world_size: int, rank: int, timeout: datetime.timedelta):
        problem = _real_gpu_problem()
        if problem is not None:
            raise RuntimeError(f"init_process_group: backend 'nccl' needs a real CUDA GPU, but {problem}. "
                               "Use backend 'mpi' for CPU tensors.")
        lib = self.lib = _load()
        world = world_size if world_size not in (-1, None) else _env_int("WORLD_SIZE")
        rank = rank if rank not in (-1, None) else _env_int("RANK")
        if world is None or rank is None:
            raise ValueError("init_process_group('nccl'): rank and world_size are unknown: pass them, or set "
                             "RANK and WORLD_SIZE (python -m minitorch.distributed.run does)")
        if not 0 <= rank < world:
            raise ValueError(f"init_process_group('nccl'): rank {rank} is not in 0 .. {world - 1}")
        self.rank, self.size = rank, world

        raw = None
        if rank == 0:
            mine = _UniqueId()
            _check(lib, lib.ncclGetUniqueId(ctypes.byref(mine)), "ncclGetUniqueId")
            raw = _id_bytes(mine)
        uid = _id_from_bytes(_exchange_id(raw, rank, world, init_method, timeout))
        comm = ctypes.c_void_p()
        _check(lib, lib.ncclCommInitRank(ctypes.byref(comm), world, uid, rank), "ncclCommInitRank")
        self.comm = comm
        self.stream = None  # cudaStream_t 0: the legacy default stream, minitorch's

    def destroy(self) -> None:
        cuda.synchronize()
        _check(self.lib, self.lib.ncclCommDestroy(self.comm), "ncclCommDestroy")

    # ---- helpers ----
    @staticmethod
    def _device_tensor(t, fn: str):
        """``t`` itself when NCCL can use its memory; else a contiguous copy to write back."""
        if t.device.type != "cuda":
            raise RuntimeError(f"{fn}: backend 'nccl' works on CUDA tensors; got a tensor on {t.device} "
                               "(move it with .cuda(), or use backend 'mpi' for CPU tensors)")
        if t.dtype.name not in _DTYPES:
            raise TypeError(f"{fn}: backend 'nccl' does not handle {t.dtype}")
        d = t.detach()
        return (d, None) if d.is_contiguous() else (d.contiguous(), d)

    @staticmethod
    def _write_back(buf, target) -> None:
        if target is not None:
            with no_grad():
                target.copy_(buf)

    def _nccl_op(self, op: ReduceOp, dtype) -> int:
        return _BOOL_OPS[op] if dtype == _C.dtype.bool else _OPS[op]

    def _done(self, finish, async_op: bool):
        """The collective is queued on the default stream: later kernels see its result."""
        if async_op:
            return Work(None, None, finish)
        finish()
        return None

    # ---- collectives ----
    def all_reduce(self, t, op: ReduceOp, async_op: bool):
        buf, target = self._device_tensor(t, "all_reduce")
        _check(self.lib, self.lib.ncclAllReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), _DTYPES[buf.dtype.name],
                                                self._nccl_op(op, buf.dtype), self.comm, self.stream),
               "ncclAllReduce")
        return self._done(lambda: self._write_back(buf, target), async_op)

    def broadcast(self, t, src: int, async_op: bool):
        buf, target = self._device_tensor(t, "broadcast")
        _check(self.lib, self.lib.ncclBroadcast(buf.data_ptr(), buf.data_ptr(), buf.numel(), _DTYPES[buf.dtype.name],
                                                src, self.comm, self.stream), "ncclBroadcast")
        return self._done(lambda: self._write_back(buf, target), async_op)

    def reduce(self, t, dst: int, op: ReduceOp, async_op: bool):
        buf, target = self._device_tensor(t, "reduce")
        if self.rank != dst and target is None:
            buf = buf.clone()  # NCCL only reads a non-root's buffer, but keep its tensor as it was anyway
        _check(self.lib, self.lib.ncclReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), _DTYPES[buf.dtype.name],
                                             self._nccl_op(op, buf.dtype), dst, self.comm, self.stream), "ncclReduce")
        return self._done(lambda: self._write_back(buf, target) if self.rank == dst else None, async_op)

    def _gather(self, t, fn: str):
        buf, _ = self._device_tensor(t, fn)
        out = _C._full((self.size, *buf.shape), 0, buf.dtype, buf.device)
        _check(self.lib, self.lib.ncclAllGather(buf.data_ptr(), out.data_ptr(), buf.numel(), _DTYPES[buf.dtype.name],
                                                self.comm, self.stream), "ncclAllGather")
        return out

    def all_gather(self, tensor_list, t, async_op: bool):
        self._check_shapes_agree(t, "all_gather")
        out = self._gather(t, "all_gather")

        def finish():
            with no_grad():
                for i, dst in enumerate(tensor_list):
                    dst.detach().copy_(out[i])

        return self._done(finish, async_op)

    def all_gather_into_tensor(self, output, t, async_op: bool):
        self._check_shapes_agree(t, "all_gather_into_tensor")
        out = self._gather(t, "all_gather_into_tensor")
        return self._done(lambda: self._write_back(out.reshape(tuple(output.shape)), output.detach()), async_op)

    def _check_shapes_agree(self, t, fn: str) -> None:
        """Every rank's dtype and shape (up to 8 dims), gathered and compared, so a
        mismatch raises on every rank instead of NCCL hanging or reading past the end."""
        desc = np.zeros(10, dtype=np.int64)
        desc[0], desc[1] = _DTYPES[t.dtype.name], t.dim()
        desc[2:2 + min(t.dim(), 8)] = tuple(t.shape)[:8]
        mine = _C._from_numpy_copy(desc, _C.dtype.int64, t.device)
        every = _C._full((self.size, 10), 0, _C.dtype.int64, t.device)
        _check(self.lib, self.lib.ncclAllGather(mine.data_ptr(), every.data_ptr(), 10, _DTYPES["int64"], self.comm,
                                                self.stream), "ncclAllGather")
        rows = every.cpu().tolist()
        if any(r != rows[self.rank] for r in rows):
            shapes = ", ".join(f"rank {i}: {tuple(r[2:2 + r[1]])}" for i, r in enumerate(rows))
            raise ValueError(f"{fn}: the ranks' tensors differ ({shapes}, or their dtypes); every rank must pass "
                             "the same shape and dtype")

    def barrier(self, async_op: bool):
        one = _C._full((1,), 1.0, _C.dtype.float32, "cuda")
        self.all_reduce(one, ReduceOp.SUM, False)
        cuda.synchronize()
        return Work() if async_op else None
