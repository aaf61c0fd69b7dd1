"""Backend "mpi": the collectives over MPI, through mpi4py (``pip install "minitorch[distributed]"``
installs mpi4py and the MPICH library as wheels).

MPI reads and writes the tensor's own memory: a contiguous CPU tensor is handed to
MPI as a NumPy view of its storage (``Tensor.numpy()`` shares memory), so nothing is
copied. Any other tensor goes through a contiguous host copy that is written back
when the collective completes:

- a non-contiguous CPU tensor (a transpose, a strided slice);
- a ``"cuda"`` tensor: in the emulated-CUDA build it lives in host memory anyway; on a
  real GPU this is a device -> host -> device round trip per collective (correct, slow:
  use backend "nccl" there).

Rank and world size are MPI's: start the program under ``mpiexec`` (which
``python -m minitorch.distributed.run`` does). Asynchronous collectives
(``async_op=True``) are MPI's nonblocking ones (``MPI_Iallreduce``...). MPICH moves
their data while some MPI call runs; :meth:`MpiBackend.progress` is such a call (DDP
makes it between gradients).
"""
from __future__ import annotations

import os

import numpy as np

from .. import _C
from ..autograd import no_grad
from .process_group import ReduceOp, Work


class _Staged:
    """A tensor as a NumPy array MPI can use: its own memory when it is a contiguous
    CPU tensor, else a contiguous host copy that :meth:`write_back` copies into it.
    MPI has no 16-bit float types: float16 and bfloat16 travel and are reduced as float32
    (exact for the values themselves; a sum is rounded to 16 bits once, at write_back)."""

    def __init__(self, t, read: bool = True):
        self.t = t
        d = t.detach()
        if d.dtype in (_C.dtype.float16, _C.dtype.bfloat16):
            self.copy = d.cpu().float() if read else _C._full(tuple(d.shape), 0, _C.dtype.float32, None)
            self.array = self.copy.numpy()
        elif d.device.type == "cpu" and d.is_contiguous():
            self.copy = None
            self.array = d.numpy()
        else:
            self.copy = d.cpu().contiguous() if read else _C._full(tuple(d.shape), 0, d.dtype, None)
            if self.copy.data_ptr() == d.data_ptr():  # .cpu() / .contiguous() gave the same memory back
                self.copy = self.copy.clone()
            self.array = self.copy.numpy()

    def write_back(self) -> None:
        if self.copy is not None:
            with no_grad():
                self.t.detach().copy_(self.copy.to(self.t.device))


class MpiBackend:
    name = "mpi"

    def __init__(self, world_size: int = -1, rank: int = -1):
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError('init_process_group: backend "mpi" needs mpi4py and an MPI library; install them '
                               'with: pip install "minitorch[distributed]"  (' + str(e) + ")") from None
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()  # our own communicator: a program's own MPI calls cannot cross ours
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        env_size = os.environ.get("WORLD_SIZE")
        if env_size not in (None, "") and env_size != str(self.size):
            self.comm.Free()
            hint = (" The ranks were not started by mpiexec, so MPI cannot connect them: launch with "
                    "python -m minitorch.distributed.run --nproc-per-node N script.py (its default launcher "
                    "is mpiexec; --launcher spawn starts ranks without MPI, for backend 'nccl'; on several machines, "
                    "run it once with --hosts node1,node2 rather than once per machine)"
                    if self.size == 1 else "")
            raise RuntimeError(f'init_process_group("mpi"): WORLD_SIZE={env_size} in the environment, but MPI '
                               f"has {self.size} process(es).{hint}")
        for what, given, actual in (("world_size", world_size, self.size), ("rank", rank, self.rank)):
            if given not in (-1, None) and given != actual:
                self.comm.Free()
                raise ValueError(f'init_process_group("mpi"): {what}={given}, but MPI says {actual} (with MPI '
                                 "the rank and world size are MPI's; leave them out)")
        self._ops = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
                     ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}
        self._bool_ops = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.PRODUCT: MPI.LAND,
                          ReduceOp.MIN: MPI.LAND}
        self._outstanding = []  # nonblocking requests not yet known to be complete

    def destroy(self) -> None:
        for req in self._outstanding:
            req.Wait()
        self._outstanding.clear()
        self.comm.Free()

    # ---- helpers ----
    def _op(self, op: ReduceOp, dtype):
        return self._bool_ops[op] if dtype == _C.dtype.bool else self._ops[op]

    def _run(self, start_blocking, start_async, finish, async_op: bool):
        """Runs a collective: blocking, then ``finish()``; or nonblocking, returning a
        Work whose wait() completes it and then runs ``finish()``."""
        if not async_op:
            start_blocking()
            finish()
            return None
        req = start_async()
        self._outstanding.append(req)

        def wait():
            req.Wait()
            self._forget(req)

        def test():
            done = req.Test()
            if done:
                self._forget(req)
            return done

        return Work(wait, test, finish)

    def _forget(self, req) -> None:
        try:
            self._outstanding.remove(req)
        except ValueError:
            pass

    def progress(self) -> None:
        """Lets MPI advance outstanding nonblocking collectives (MPICH moves their data
        only inside MPI calls, unless MPIR_CVAR_ASYNC_PROGRESS=1)."""
        if self._outstanding:
            self.MPI.Request.Testall(list(self._outstanding))

    def _check_shapes_agree(self, t, fn: str) -> None:
        """Every rank must gather the same shape and dtype: compared on every rank, so
        every rank raises the same error instead of MPI hanging or truncating."""
        mine = (tuple(t.shape), t.dtype.name)
        every = self.comm.allgather(mine)
        if any(x != mine for x in every):
            desc = ", ".join(f"rank {r}: {s} {d}" for r, (s, d) in enumerate(every))
            raise ValueError(f"{fn}: the ranks' tensors differ ({desc}); every rank must pass the same shape "
                             "and dtype")

    # ---- collectives ----
    def all_reduce(self, t, op: ReduceOp, async_op: bool):
        s, MPI = _Staged(t), self.MPI
        mop = self._op(op, t.dtype)

        def finish():
            if op == ReduceOp.AVG:
                np.divide(s.array, self.size, out=s.array)
            s.write_back()

        return self._run(lambda: self.comm.Allreduce(MPI.IN_PLACE, s.array, mop),
                         lambda: self.comm.Iallreduce(MPI.IN_PLACE, s.array, mop), finish, async_op)

    def broadcast(self, t, src: int, async_op: bool):
        s = _Staged(t, read=self.rank == src)
        return self._run(lambda: self.comm.Bcast(s.array, root=src),
                         lambda: self.comm.Ibcast(s.array, root=src), s.write_back, async_op)

    def reduce(self, t, dst: int, op: ReduceOp, async_op: bool):
        s, MPI = _Staged(t), self.MPI
        mop = self._op(op, t.dtype)
        root = self.rank == dst
        send, recv = (MPI.IN_PLACE, s.array) if root else (s.array, None)

        def finish():
            if root:  # the other ranks' tensors stay as they were
                if op == ReduceOp.AVG:
                    np.divide(s.array, self.size, out=s.array)
                s.write_back()

        return self._run(lambda: self.comm.Reduce(send, recv, mop, root=dst),
                         lambda: self.comm.Ireduce(send, recv, mop, root=dst), finish, async_op)

    def all_gather(self, tensor_list, t, async_op: bool):
        self._check_shapes_agree(t, "all_gather")
        s = _Staged(t)
        gathered = np.empty((self.size, *s.array.shape), dtype=s.array.dtype)

        def finish():
            with no_grad():
                for i, out in enumerate(tensor_list):
                    out.detach().copy_(_C._from_numpy_copy(gathered[i], out.dtype, out.device))

        return self._run(lambda: self.comm.Allgather(s.array, gathered),
                         lambda: self.comm.Iallgather(s.array, gathered), finish, async_op)

    def all_gather_into_tensor(self, out, t, async_op: bool):
        self._check_shapes_agree(t, "all_gather_into_tensor")
        s, o = _Staged(t), _Staged(out, read=False)
        return self._run(lambda: self.comm.Allgather(s.array, o.array),
                         lambda: self.comm.Iallgather(s.array, o.array), o.write_back, async_op)

    def barrier(self, async_op: bool):
        return self._run(self.comm.Barrier, self.comm.Ibarrier, lambda: None, async_op)
