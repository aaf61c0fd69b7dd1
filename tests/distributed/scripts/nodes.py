"""One rank of a run over several machines (here: several launchers, or mpiexec hosts,
on this one). Prints "rank R ok local L world W" at the end.

    nodes.py mpi    backend "mpi": rank and world size agree with the launcher's, and an all_reduce
    nodes.py nccl   backend "nccl" on a fake libnccl (fake_nccl.py): rank 0's unique id reaches
                    every rank whole (over TCP under spawn, over MPI under mpiexec)
"""
import os
import sys

import minitorch
import minitorch.distributed as dist

mode = sys.argv[1]
r, w, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
per_node = int(os.environ["LOCAL_WORLD_SIZE"])
assert w == int(os.environ["EXPECT_WORLD"]) and local < per_node, (w, local, per_node)
if mode == "mpi":
    dist.init_process_group("mpi")
    assert (dist.get_rank(), dist.get_world_size()) == (r, w)
    t = minitorch.tensor([float(r + 1)])
    dist.all_reduce(t)
    assert t.tolist() == [w * (w + 1) / 2], t.tolist()
    dist.destroy_process_group()
else:
    import fake_nccl

    lib = fake_nccl.install()
    dist.init_process_group("nccl")
    assert lib.received == (fake_nccl.UNIQUE_ID, w, r), lib.received
print(f"rank {r} ok local {local} world {w}", flush=True)
