"""``minitorch.distributed``: several processes training one model, with
``torch.distributed``'s names.

    # train.py — run with: python -m minitorch.distributed.run --nproc-per-node 2 train.py
    import minitorch
    import minitorch.distributed as dist

    dist.init_process_group("mpi")
    t = minitorch.tensor([float(dist.get_rank())])
    dist.all_reduce(t)                  # every rank now holds 0 + 1
    dist.destroy_process_group()

Backends: ``"mpi"`` (CPU tensors, over mpi4py + MPICH: ``pip install "minitorch[distributed]"``)
and ``"nccl"`` (CUDA tensors on a real GPU). ``minitorch.nn.parallel.DistributedDataParallel``
averages gradients over the ranks; ``minitorch.data.DistributedSampler`` gives each rank
its share of a data set. See docs/distributed.md.
"""
from .process_group import (
    Backend,
    DistNotInitializedError,
    GroupMember,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    reduce,
)

__all__ = [
    "Backend", "DistNotInitializedError", "GroupMember", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_reduce", "barrier", "broadcast", "destroy_process_group", "get_backend", "get_rank", "get_world_size",
    "group", "init_process_group", "is_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "reduce",
]
