"""SyncBatchNorm over 2 MPI ranks with unequal shares (scripts/sync_bn.py): outputs, input
gradients, the ranks' weight/bias gradients summed, and running statistics equal one
process's BatchNorm on the whole batch; eval() and float32 too. The one-process behaviour
(BatchNorm, conversion, errors) is tests/nn/test_sync_batchnorm.py."""
from __future__ import annotations

import pytest

pytest.importorskip("mpi4py", reason='mpi4py not installed: pip install "minitorch[distributed]"')

from dist_helpers import SCRIPTS, explain, launch, ranks_ok  # noqa: E402


def test_sync_batchnorm_on_two_ranks_matches_one_process():
    proc = launch(2, str(SCRIPTS / "sync_bn.py"))
    assert proc.returncode == 0, explain(proc)
    assert ranks_ok(proc) == ["rank 0 ok", "rank 1 ok"], explain(proc)
