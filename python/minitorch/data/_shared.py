"""Batches from worker processes to the main process through shared memory.

Pickling a batch would copy every byte into a pipe and out again. Instead a worker puts
all the arrays of one batch into one POSIX shared-memory segment (a file in /dev/shm on
Linux) and sends only a small ``SharedBatch``: the segment's name and, for each array,
where it sits (offset, dtype, shape). The main process maps the segment and unlinks its
name at once, so a finished batch never leaves a file behind.

Costs, per batch: one copy in the worker (collated tensor -> segment) and, by default,
one in the main process (segment -> a minitorch tensor), after which the segment is
unmapped. ``unpack(batch, copy=False)`` skips the second copy: the tensors then use the
mapped memory directly, and the mapping lives until the last tensor of the batch is
freed. Measured (benchmarks/bench_loader.py) that saves little for MNIST-sized batches
and about a third of the main process's time for 37 MB ones; but each live mapping
holds two open file descriptors (Python < 3.13 cannot let go of them), so a program
that keeps an epoch of batches, ``list(loader)``, would run out of descriptors (often
1024 per process). Hence the copy by default.
"""
from __future__ import annotations

import secrets
import weakref
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np

from .. import _C
from ..ops.creation import empty

_ALIGN = 64  # each array starts on a cache line (and suits any dtype's alignment)
_DTYPES = {np.dtype(np.float32): _C.dtype.float32, np.dtype(np.float64): _C.dtype.float64,
           np.dtype(np.float16): _C.dtype.float16, np.dtype(np.int64): _C.dtype.int64,
           np.dtype(np.int32): _C.dtype.int32, np.dtype(np.int16): _C.dtype.int16,
           np.dtype(np.int8): _C.dtype.int8, np.dtype(np.uint8): _C.dtype.uint8,
           np.dtype(np.bool_): _C.dtype.bool}
# NumPy has no bfloat16: such a tensor travels as its bits (uint16) under this dtype name.
_BF16 = "bfloat16"


@dataclass(frozen=True)
class _Slot:
    """Where one array of the batch lives in the segment."""
    offset: int
    dtype: str
    shape: tuple
    is_tensor: bool  # rebuild a minitorch tensor (else a NumPy array)


@dataclass
class SharedBatch:
    """What a worker sends for one batch: ``tree`` is the batch with each array replaced
    by a ``_Slot``; ``name`` is the segment (None when the batch holds no arrays)."""
    name: str | None
    tree: object


def _map_tree(obj, leaf):
    """``obj`` rebuilt with ``leaf(x)`` applied to each tensor and array in it."""
    if isinstance(obj, (_C.Tensor, np.ndarray, _Slot)):
        return leaf(obj)
    if isinstance(obj, dict):
        return type(obj)((k, _map_tree(v, leaf)) for k, v in obj.items())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_map_tree(v, leaf) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_map_tree(v, leaf) for v in obj)
    return obj  # numbers, strings...: pickled with the tree


def _padded(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


def pack(batch, prefix: str) -> SharedBatch:
    """Copies the arrays of ``batch`` into a new segment named ``prefix`` + random hex."""
    arrays, size = [], 0  # (offset, array) of each array, and the bytes needed so far

    def plan(x):
        nonlocal size
        is_tensor = isinstance(x, _C.Tensor)
        bf16 = is_tensor and x.dtype == _C.dtype.bfloat16
        if bf16:
            arr = np.asarray(_C._numpy_bits(x.detach().cpu()))
        else:
            arr = np.asarray(x.detach().cpu().numpy() if is_tensor else x)
        if arr.dtype == object:
            raise TypeError("DataLoader: a batch from a worker holds a NumPy array of Python objects, "
                            "which cannot travel through shared memory")
        slot = _Slot(size, _BF16 if bf16 else arr.dtype.str, arr.shape, is_tensor)
        arrays.append((size, arr))
        size += _padded(arr.nbytes)
        return slot

    tree = _map_tree(batch, plan)
    if not arrays:
        return SharedBatch(None, tree)
    shm = shared_memory.SharedMemory(name=prefix + secrets.token_hex(6), create=True, size=max(size, 1))
    try:
        for offset, arr in arrays:
            np.ndarray(arr.shape, arr.dtype, buffer=shm.buf, offset=offset)[...] = arr
    except BaseException:
        shm.close()
        shm.unlink()
        raise
    shm.close()  # the worker is done with it; the main process unlinks it after reading
    return SharedBatch(shm.name, tree)


def unpack(batch: SharedBatch, copy: bool = True):
    """The batch as tensors (see the module docstring for ``copy``); unlinks the segment."""
    if batch.name is None:
        return batch.tree
    shm = shared_memory.SharedMemory(name=batch.name)
    shm.unlink()  # the name goes now; the memory stays until the mapping is closed
    # One uint8 view of the whole segment; every array is a view of it. NumPy holds no
    # lock on the mapping, so nothing may close it while a view is alive.
    whole = np.ndarray((shm.size,), np.uint8, buffer=shm.buf)

    def build(slot: _Slot):
        bf16 = slot.dtype == _BF16
        dtype = np.dtype(np.uint16 if bf16 else slot.dtype)
        nbytes = dtype.itemsize * int(np.prod(slot.shape))
        arr = whole[slot.offset:slot.offset + nbytes].view(dtype).reshape(slot.shape)
        if not slot.is_tensor:
            return np.array(arr) if copy else arr
        if bf16 and not copy:
            return _C._from_numpy_bits(arr, _C.dtype.bfloat16)  # a copy: NumPy cannot hold bfloat16
        if not copy:
            return _C.from_numpy(arr)
        # Into memory from minitorch's allocator: a freed batch's block is reused for the
        # next one, so the copy does not page-fault its way through fresh memory each time.
        t = empty(slot.shape, dtype=_C.dtype.bfloat16 if bf16 else _DTYPES[dtype])
        np.copyto(_C._numpy_bits(t) if bf16 else t.numpy(), arr)
        return t

    try:
        out = _map_tree(batch.tree, build)
    except BaseException:
        del whole
        shm.close()
        raise
    if copy:
        del whole
        shm.close()
    else:
        # Close the mapping when the last view of it is gone: every array (and every
        # tensor made by from_numpy, which keeps its array) refers to ``whole``.
        weakref.finalize(whole, shm.close)
    return out


def free(batch) -> None:
    """Unlinks the segment of a batch that will never be unpacked (shutdown, stale epoch)."""
    if isinstance(batch, SharedBatch) and batch.name is not None:
        try:
            shm = shared_memory.SharedMemory(name=batch.name)
        except FileNotFoundError:
            return
        shm.close()
        shm.unlink()
