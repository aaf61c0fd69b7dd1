"""Rank 1 fails; rank 0 would wait forever. argv[1]: "mpiexec" (rank 0 blocks in an
all_reduce), "spawn" (rank 0 sleeps), "raise" (rank 1 raises, rank 0 sleeps)."""
import sys
import time

import minitorch

mode = sys.argv[1]
if mode == "mpiexec":
    import minitorch.distributed as dist

    dist.init_process_group("mpi")
    rank = dist.get_rank()
else:
    import os

    rank = int(os.environ["RANK"])
if rank == 1:
    if mode == "raise":
        1 / 0
    sys.exit(7)
if mode == "mpiexec":
    dist.all_reduce(minitorch.ones(1))  # rank 1 never comes
else:
    time.sleep(120)
print("rank 0 got past", flush=True)
