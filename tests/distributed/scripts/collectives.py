"""Every collective on every rank, checked against the values each rank can compute
alone. Run by tests/distributed/test_collectives.py under the launcher; prints
"rank R ok" at the end (an AssertionError otherwise fails the run)."""
import math
import os
import sys
import time

import numpy as np

import minitorch
import minitorch.distributed as dist

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"
assert os.environ["RANK"] == str(r) and os.environ["LOCAL_RANK"] == str(r)
assert os.environ["WORLD_SIZE"] == str(w) == os.environ["LOCAL_WORLD_SIZE"]
assert os.environ["MASTER_ADDR"] and int(os.environ["MASTER_PORT"]) > 0
assert w == int(os.environ["EXPECT_WORLD"]), (w, os.environ["EXPECT_WORLD"])
Op = dist.ReduceOp


def full(value, dtype, shape=(3,)):
    return minitorch.full(shape, value, dtype=dtype)


# float16 and bfloat16 travel as float32 (MPI has no 16-bit floats); these values are exact.
for dtype in (minitorch.float32, minitorch.float64, minitorch.int64, minitorch.float16, minitorch.bfloat16):
    v = r + 1  # rank r holds r + 1
    for op, want in ((Op.SUM, w * (w + 1) // 2), (Op.MAX, w), (Op.MIN, 1), (Op.PRODUCT, math.factorial(w))):
        t = full(v, dtype)
        ptr = t.data_ptr()
        assert dist.all_reduce(t, op=op) is None
        assert t.dtype == dtype and t.data_ptr() == ptr, "all_reduce works in place"
        assert t.tolist() == [want] * 3, (dtype, op, t.tolist(), want)
    if dtype.is_floating_point:
        t = full(v, dtype)
        dist.all_reduce(t, op=Op.AVG)
        assert t.tolist() == [(w + 1) / 2] * 3, t.tolist()
    else:
        try:
            dist.all_reduce(full(v, dtype), op=Op.AVG)
            raise AssertionError("AVG on int64 must raise")
        except TypeError as e:
            assert "floating-point" in str(e)

    # broadcast from the last rank
    t = full(10 * r, dtype, (2, 2))
    dist.broadcast(t, src=w - 1)
    assert t.tolist() == [[10 * (w - 1)] * 2] * 2, t.tolist()

    # all_gather: tensor_list[i] is rank i's tensor
    outs = [full(-1, dtype, (2,)) for _ in range(w)]
    dist.all_gather(outs, minitorch.tensor([r, 100 + r], dtype=dtype))
    assert [o.tolist() for o in outs] == [[i, 100 + i] for i in range(w)], [o.tolist() for o in outs]

    # all_gather_into_tensor: concatenated, or stacked
    cat = full(-1, dtype, (2 * w,))
    dist.all_gather_into_tensor(cat, minitorch.tensor([r, -r], dtype=dtype))
    assert cat.tolist() == [x for i in range(w) for x in (i, -i)], cat.tolist()
    stacked = full(-1, dtype, (w, 2))
    dist.all_gather_into_tensor(stacked, minitorch.tensor([r, -r], dtype=dtype))
    assert stacked.tolist() == [[i, -i] for i in range(w)]

    # reduce: only dst gets the sum
    t = full(v, dtype)
    dist.reduce(t, dst=0)
    assert t.tolist() == ([w * (w + 1) // 2] * 3 if r == 0 else [v] * 3), t.tolist()

# A non-contiguous tensor (a transpose) is reduced through a copy written back into it.
x = (minitorch.arange(6, dtype=minitorch.float64) * (r + 1)).reshape(2, 3).t()
assert not x.is_contiguous()
dist.all_reduce(x)
np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3).T * (w * (w + 1) // 2))
# So is a strided slice, and only the slice changes.
base = minitorch.zeros(6)
view = base[::2]
view.fill_(1.0)
dist.all_reduce(view)
assert base.tolist() == [w, 0, w, 0, w, 0], base.tolist()

# 0-d tensors, bool (SUM = or, MIN = and), a parameter that requires grad.
s = minitorch.tensor(float(r))
dist.all_reduce(s, op=Op.MAX)
assert s.item() == w - 1
b = minitorch.tensor([r == 0, True, False])
dist.all_reduce(b)
assert b.tolist() == [True, True, False]
b = minitorch.tensor([r == 0, True, False])
dist.all_reduce(b, op=Op.MIN)
assert b.tolist() == [w == 1, True, False]
p = minitorch.nn.Parameter(minitorch.full((2,), float(r)))
dist.all_reduce(p)
assert p.tolist() == [w * (w - 1) / 2] * 2 and p.requires_grad and p.grad is None

# "cuda" tensors (host memory in the emulator) go through a host copy.
if minitorch.cuda.is_available() and minitorch.cuda.is_emulated():
    c = minitorch.full((4,), float(r + 1), device="cuda")
    dist.all_reduce(c, op=Op.AVG)
    assert c.device.type == "cuda" and c.tolist() == [(w + 1) / 2] * 4
    lst = [minitorch.zeros(1, device="cuda") for _ in range(w)]
    dist.all_gather(lst, minitorch.full((1,), float(r), device="cuda"))
    assert [t.item() for t in lst] == list(range(w))

# async_op: a Work whose wait() finishes the job (AVG's division included)
t = full(float(r + 1), minitorch.float32)
work = dist.all_reduce(t, op=Op.AVG, async_op=True)
assert isinstance(work, dist.Work)
assert work.wait() is True and work.is_completed()
assert t.tolist() == [(w + 1) / 2] * 3
works = [dist.broadcast(full(float(r), minitorch.float64), src=0, async_op=True) for _ in range(3)]
for wk in works:
    wk.wait()
outs = [minitorch.zeros(1) for _ in range(w)]
dist.all_gather(outs, minitorch.full((1,), float(r)), async_op=True).wait()
assert [o.item() for o in outs] == list(range(w))

# barrier: nobody leaves before the slowest rank arrives
if r == 0:
    time.sleep(0.3)
t0 = time.perf_counter()
dist.barrier()
waited = time.perf_counter() - t0
if r != 0:
    assert waited > 0.2, waited

# Errors: the same on every rank, so no rank is left waiting.
try:
    dist.all_gather([minitorch.zeros(2 + (r == 0)) for _ in range(w)], minitorch.zeros(2 + (r == 0)))
    raise AssertionError("mismatched all_gather shapes must raise")
except ValueError as e:
    assert "differ" in str(e) and "rank 0: (3,)" in str(e), str(e)
for bad, exc, words in (
    (lambda: dist.all_gather([minitorch.zeros(2)] * (w + 1), minitorch.zeros(2)), ValueError, "ranks"),
    (lambda: dist.all_gather([minitorch.zeros(3)] * w, minitorch.zeros(2)), ValueError, "shape"),
    (lambda: dist.broadcast(minitorch.zeros(2), src=w), ValueError, "not a rank"),
    (lambda: dist.all_reduce(minitorch.zeros(2), op="sum"), ValueError, "ReduceOp"),
    (lambda: dist.all_reduce([1.0]), TypeError, "minitorch.Tensor"),
    (lambda: dist.all_reduce(minitorch.zeros(2), group="g"), ValueError, "default group"),
    (lambda: dist.init_process_group("mpi"), ValueError, "twice"),
):
    try:
        bad()
        raise AssertionError(f"expected {exc.__name__} with {words!r}")
    except exc as e:
        assert words in str(e), str(e)

dist.destroy_process_group()
assert not dist.is_initialized()
try:
    dist.get_rank()
    raise AssertionError("get_rank after destroy must raise")
except RuntimeError as e:
    assert "init_process_group" in str(e)
sys.stdout.write(f"rank {r} ok\n")
