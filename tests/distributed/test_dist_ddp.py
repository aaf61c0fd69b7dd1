"""DistributedDataParallel over 2 MPI ranks (scripts/ddp.py): the same weights as one
process trained on whole batches, no_sync accumulation, unused parameters, buffers,
and buckets sent while backward runs."""
from __future__ import annotations

import pytest

import minitorch

pytest.importorskip("mpi4py", reason='mpi4py not installed: pip install "minitorch[distributed]"')

from dist_helpers import SCRIPTS, explain, launch, ranks_ok  # noqa: E402


@pytest.mark.skipif(not hasattr(minitorch.Tensor, "register_post_accumulate_grad_hook"),
                    reason="this extension lacks Tensor.register_post_accumulate_grad_hook")
def test_ddp_on_two_ranks_matches_one_process():
    proc = launch(2, str(SCRIPTS / "ddp.py"))
    assert proc.returncode == 0, explain(proc)
    assert ranks_ok(proc) == ["rank 0 ok", "rank 1 ok"], explain(proc)
