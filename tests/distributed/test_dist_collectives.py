"""minitorch.distributed's collectives over real MPI: ranks started by the launcher run
scripts/collectives.py, which checks every collective (float32, float64, int64, float16, bfloat16)."""
from __future__ import annotations

import pytest

pytest.importorskip("mpi4py", reason='mpi4py not installed: pip install "minitorch[distributed]"')

from dist_helpers import SCRIPTS, explain, launch, ranks_ok  # noqa: E402


@pytest.mark.parametrize("world", [2, 3])
def test_collectives_on_every_rank(world):
    # 3 ranks through the -m form (the scripts folder is the working directory).
    if world == 2:
        proc = launch(world, str(SCRIPTS / "collectives.py"), env={"EXPECT_WORLD": "2"})
    else:
        proc = launch(world, "collectives", module=True, env={"EXPECT_WORLD": "3"})
    assert proc.returncode == 0, explain(proc)
    assert ranks_ok(proc) == [f"rank {r} ok" for r in range(world)], explain(proc)
