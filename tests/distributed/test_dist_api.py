"""minitorch.distributed in this process: errors before init, argument checks, and the
NCCL backend's parts that run without a GPU (its refusal, its TCP rendezvous)."""
from __future__ import annotations

import datetime
import sys
import threading

import pytest

import minitorch
import minitorch.distributed as dist
from dist_helpers import SCRIPTS, free_port


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(minitorch.ones(2)),
    lambda: dist.broadcast(minitorch.ones(2), 0),
    lambda: dist.all_gather([minitorch.ones(2)], minitorch.ones(2)),
    lambda: dist.barrier(),
    lambda: dist.get_rank(),
    lambda: dist.get_world_size(),
    lambda: dist.destroy_process_group(),
])
def test_collective_before_init_names_init_process_group(call):
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="Default process group has not been initialized, please make sure to "
                                           "call init_process_group"):
        call()
    with pytest.raises(ValueError):  # PyTorch 2's type: the error is both
        call()


def test_ddp_and_sampler_before_init():
    with pytest.raises(RuntimeError, match="init_process_group"):
        minitorch.nn.parallel.DistributedDataParallel(minitorch.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="init_process_group"):
        minitorch.data.DistributedSampler(range(4))


def test_init_argument_errors():
    with pytest.raises(ValueError, match="Invalid backend: 'gloo'"):
        dist.init_process_group("gloo")
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("mpi", timeout=30)
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group("mpi", init_method="file:///tmp/x")
    assert not dist.is_initialized()


def test_reduce_op_names():
    assert [op.name for op in dist.ReduceOp] == ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
    assert dist.is_available() and dist.Backend.MPI == "mpi" and dist.Backend.NCCL == "nccl"


def test_nccl_is_honest_and_refuses_without_a_real_gpu():
    real_gpu = minitorch.cuda.is_compiled() and not minitorch.cuda.is_emulated() and minitorch.cuda.is_available()
    if real_gpu:
        pytest.skip("a real GPU is here: the no-GPU error cannot be provoked")
    if not minitorch.cuda.is_compiled() or minitorch.cuda.is_emulated():
        assert dist.is_nccl_available() is False  # NCCL could never run in this build
    with pytest.raises(RuntimeError, match="backend 'nccl' needs a real CUDA GPU"):
        dist.init_process_group("nccl", world_size=1, rank=0)
    assert not dist.is_initialized()


def test_nccl_refuses_cpu_tensors():
    from minitorch.distributed._nccl import NcclBackend

    with pytest.raises(RuntimeError, match="backend 'nccl' works on CUDA tensors; got a tensor on cpu"):
        NcclBackend._device_tensor(minitorch.ones(2), "all_reduce")


def test_nccl_tcp_rendezvous_hands_rank0s_id_to_everyone():
    from minitorch.distributed._nccl import _share_id_over_tcp

    port = free_port()
    uid, got = bytes(range(128)), {}
    timeout = datetime.timedelta(seconds=20)

    def rank(r):
        got[r] = _share_id_over_tcp(uid if r == 0 else None, r, 3, "127.0.0.1", port, timeout)

    threads = [threading.Thread(target=rank, args=(r,)) for r in (1, 2, 0)]  # clients first: they retry
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert got == {0: uid, 1: uid, 2: uid}


def test_mpi_missing_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if mpi4py were not installed
    assert dist.is_mpi_available() is False
    with pytest.raises(RuntimeError, match=r'backend "mpi" needs mpi4py .*pip install "minitorch\[distributed\]"'):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_nccl_unique_id_reaches_ncclCommInitRank_whole(monkeypatch):
    # The id is a socket address full of NUL bytes: read as a C string (bytes(uid.internal))
    # it was cut at the first NUL, and ncclCommInitRank got a corrupted id (issue 28).
    from minitorch.distributed import _nccl

    monkeypatch.syspath_prepend(str(SCRIPTS))
    import fake_nccl

    lib = fake_nccl.install(monkeypatch.setattr)
    port = free_port()
    _nccl.NcclBackend(f"tcp://127.0.0.1:{port}", 1, 0, datetime.timedelta(seconds=10))
    assert lib.received == (fake_nccl.UNIQUE_ID, 1, 0)


def test_nccl_unique_id_bytes_round_trip():
    from minitorch.distributed._nccl import _id_bytes, _id_from_bytes

    raw = bytes([0, 2, 0, 0]) * 32  # NULs first, last, and between
    assert _id_bytes(_id_from_bytes(raw)) == raw
    with pytest.raises(RuntimeError, match="unique id of 3 bytes from rank 0; NCCL's has 128"):
        _id_from_bytes(b"\x02\x00\x01")
