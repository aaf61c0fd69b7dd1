"""minitorch.profiler: one event per op call from user code, with the kernels it launched.

On "cuda" (a GPU or the emulator) launches are recorded with grid and block; on
"cpu" events have no kernels. Only counts, names and shapes are asserted, never times.
"""
from __future__ import annotations

import json
import threading

import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import CUDA_SKIP_REASON, DEVICES
from minitorch.profiler import ProfilerActivity, profile, record_function

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
ALL = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def activities_for(device: str) -> list:
    return ALL if device == "cuda" else [ProfilerActivity.CPU]


def names(prof) -> list:
    return [e.name for e in prof.events()]


def launches(prof) -> int:
    return sum(len(e.kernels) for e in prof.events())


def operands(device, *shapes):
    return [minitorch.randn(*s, device=device) for s in shapes]


@pytest.mark.parametrize("device", DEVICES)
def test_one_event_per_op_call(device):
    a, b = operands(device, (4, 5), (4, 5))
    with profile(activities=activities_for(device)) as prof:
        a + b
    (event,) = prof.events()
    assert event.name == "add"
    assert event.count == 1
    assert event.cpu_time_total >= 0
    if device == "cpu":
        assert event.kernels == []
        return
    (k,) = event.kernels
    assert "dense_kernel" in k.name  # contiguous operands: the dense zip
    assert len(k.grid) == 3 and len(k.block) == 3
    assert all(d >= 1 for d in k.grid + k.block)
    assert k.grid[0] * k.block[0] >= 20  # every element has a thread
    assert k.duration >= 0
    assert event.device_time_total == k.duration


@needs_cuda
def test_grid_covers_a_large_elementwise_op():
    n = 1 << 16
    a, b = operands("cuda", (n,), (n,))
    with profile(activities=ALL) as prof:
        a * b
    (k,) = prof.events()[0].kernels
    assert k.block[1:] == (1, 1) and k.grid[1:] == (1, 1)
    # the dense kernel's threads take 4 float32 each (one 16-byte load per operand)
    assert k.grid[0] * k.block[0] * 4 >= n


@pytest.mark.parametrize("device", DEVICES)
def test_names_follow_pytorch(device):
    x = minitorch.randn(3, 4, device=device)
    w = minitorch.randn(2, 4, device=device)
    target = minitorch.tensor([0, 1, 1], device=device)
    with profile(activities=activities_for(device)) as prof:
        x.exp()
        x.sum()
        x.sum(0)
        x.mean()
        x.max()
        x.argmax(1)
        x @ w.T
        F.linear(x, w)
        F.softmax(x, 1)
        F.log_softmax(x, 1)
        F.cross_entropy(x, target)
        minitorch.zeros(2, device=device)
        x.clone()
        x.to(minitorch.float64)
        x.add_(x)
    assert names(prof) == ["exp", "sum", "sum", "mean", "max", "argmax", "matmul", "linear", "softmax",
                           "log_softmax", "cross_entropy", "full", "clone", "to", "add_"]


@pytest.mark.parametrize("device", DEVICES)
def test_numbers_and_conversions_belong_to_their_op(device):
    x = minitorch.randn(3, device=device)
    with profile(activities=activities_for(device), record_shapes=True) as prof:
        x * 2
        2 - x
        x.add_(x, alpha=0.5)
        x.to("cpu", minitorch.float64)
        x.sum().item()
    assert names(prof) == ["mul", "sub", "add_", "to", "sum", "item"]
    mul, sub, add_, *_ = prof.events()
    assert mul.input_shapes == [[3], []] and sub.input_shapes == [[], [3]]
    if device == "cuda":  # the number goes to the kernel as an argument: no fill kernel first
        assert [k.name.split("<")[0] for k in mul.kernels] == ["dense_kernel"]
        assert [k.name.split("<")[0] for k in sub.kernels] == ["dense_kernel"]


@pytest.mark.parametrize("device", DEVICES)
def test_ops_called_inside_an_op_fold_into_it(device):
    # mean(dtype=float64) of float32 is a conversion and the reduction; cross_entropy a
    # log_softmax, a gather and a sum.
    x = minitorch.randn(8, 5, device=device)
    target = minitorch.randint(0, 5, (8,), device=device)
    with profile(activities=activities_for(device)) as prof:
        x.mean(dtype=minitorch.float64)
        F.cross_entropy(x, target)
    assert names(prof) == ["mean", "cross_entropy"]
    if device == "cuda":
        mean, ce = prof.events()
        assert len(mean.kernels) >= 2  # the conversion and the reduction
        assert len(ce.kernels) >= 1


@pytest.mark.parametrize("device", DEVICES)
def test_kernels_of_an_event_are_those_of_its_parts(device):
    a, b = operands(device, (3, 3), (3, 3))
    with profile(activities=activities_for(device)) as parts:
        a + b
        a * b
    with profile(activities=activities_for(device)) as whole:
        with record_function("block"):
            a + b
            a * b
    (event,) = whole.events()
    assert event.name == "block"
    assert [(k.name, k.grid, k.block) for k in event.kernels] == [
        (k.name, k.grid, k.block) for e in parts.events() for k in e.kernels
    ]
    assert len(event.kernels) == (2 if device == "cuda" else 0)


@pytest.mark.parametrize("device", DEVICES)
def test_nothing_is_recorded_outside_the_with_block(device):
    a, b = operands(device, (2, 2), (2, 2))
    a - b
    with profile(activities=activities_for(device)) as first:
        a * b
    a / b
    with profile(activities=activities_for(device)) as second:
        a + b
    a - b
    assert names(first) == ["mul"]
    assert names(second) == ["add"]
    assert not minitorch._C._profiler_enabled()


@pytest.mark.parametrize("device", DEVICES)
def test_an_exception_in_an_op_closes_its_event(device):
    a, b = operands(device, (2, 3), (2, 3))
    bad = minitorch.randn(4, device=device)
    with profile(activities=activities_for(device)) as prof:
        with pytest.raises(ValueError):
            a + bad
        a + b
        with pytest.raises(RuntimeError):
            with record_function("failing block"):
                a * b
                raise RuntimeError("boom")
        a - b
    assert names(prof) == ["add", "add", "failing block", "sub"]
    failed, ok, block, sub = prof.events()
    assert failed.kernels == [] and failed.cpu_time_total >= 0
    if device == "cuda":
        assert len(ok.kernels) == 1 and len(block.kernels) == 1 and len(sub.kernels) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_an_exception_in_the_with_block_stops_the_profile(device):
    a, b = operands(device, (2,), (2,))
    with pytest.raises(KeyError):
        with profile(activities=activities_for(device)) as prof:
            a + b
            raise KeyError("stop")
    assert names(prof) == ["add"]
    assert not minitorch._C._profiler_enabled()


@pytest.mark.parametrize("device", DEVICES)
def test_backward_records_one_event_per_node(device):
    x = minitorch.randn(3, 4, device=device, requires_grad=True)
    w = minitorch.randn(4, 2, device=device, requires_grad=True)
    loss = (x @ w).exp().sum()
    with profile(activities=activities_for(device)) as prof:
        loss.backward()
    recorded = names(prof)
    for node in ["SumBackward0", "ExpBackward0", "MmBackward0", "AccumulateGrad"]:
        assert node in recorded
    assert recorded.count("AccumulateGrad") == 2  # x and w
    assert "matmul" not in recorded  # the matmuls of MmBackward0 belong to it
    if device == "cuda":
        (mm,) = [e for e in prof.events() if e.name == "MmBackward0"]
        assert len(mm.kernels) >= 2  # dx and dw


@pytest.mark.parametrize("device", DEVICES)
def test_custom_function_is_one_event_forward_and_backward(device):
    class Square(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = minitorch.randn(5, device=device, requires_grad=True)
    with profile(activities=activities_for(device)) as prof:
        y = Square.apply(x)
        y.sum().backward()
    recorded = names(prof)
    assert recorded[0] == "Square"
    assert "mul" not in recorded  # forward's and backward's muls belong to their events
    assert "SquareBackward" in recorded
    if device == "cuda":
        assert len(prof.events()[0].kernels) == 1


@needs_cuda
def test_cuda_activity_off_records_no_kernels():
    a, b = operands("cuda", (3,), (3,))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        a + b
        a.sum()
    assert names(prof) == ["add", "sum"]
    assert launches(prof) == 0


@needs_cuda
def test_cpu_activity_off_makes_each_launch_an_event():
    a, b = operands("cuda", (3,), (3,))
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        a + b
    (event,) = prof.events()
    (k,) = event.kernels
    assert event.name == k.name
    assert "dense_kernel" in k.name


@needs_cuda
def test_matmul_launch():
    a, b = operands("cuda", (2, 33, 20), (2, 20, 17))
    with profile(activities=ALL) as prof:
        a @ b
    (event,) = prof.events()
    assert event.name == "matmul"
    (k,) = event.kernels
    if minitorch.cuda.is_emulated():  # the tiled kernel: one 16x16 block per output tile, z = batch
        assert "matmul_tiled_kernel" in k.name
        assert k.grid == (2, 3, 2) and k.block == (16, 16, 1)
    else:  # cuBLAS: one library call, no grid of ours
        assert k.name.startswith("cublas")
        assert k.grid == (0, 0, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_record_shapes(device):
    a, b = operands(device, (2, 3), (3,))
    with profile(activities=activities_for(device), record_shapes=True) as prof:
        a + b
        minitorch.where(a > 0, a, b)
    add, gt, where = prof.events()
    assert add.input_shapes == [[2, 3], [3]]
    assert gt.input_shapes == [[2, 3], []]  # the 0 is a 0-dim wrapped number
    assert where.input_shapes == [[2, 3], [2, 3], [3]]
    with profile(activities=activities_for(device)) as prof:
        a + b
    assert prof.events()[0].input_shapes == []


@pytest.mark.parametrize("device", DEVICES)
def test_key_averages_and_table(device):
    a, b = operands(device, (2, 2), (2, 2))
    with profile(activities=activities_for(device)) as prof:
        for _ in range(3):
            a + b
        a * b
    averages = prof.key_averages()
    by_key = {avg.key: avg for avg in averages}
    assert set(by_key) == {"add", "mul"}
    assert by_key["add"].count == 3 and by_key["mul"].count == 1
    per_launch = 1 if device == "cuda" else 0
    assert by_key["add"].kernel_count == 3 * per_launch
    assert by_key["add"].cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in prof.events()[:3]))
    assert by_key["add"].cpu_time == pytest.approx(by_key["add"].cpu_time_total / 3)

    table = averages.table(sort_by="count", row_limit=100)
    lines = table.splitlines()
    assert "Name" in lines[1] and "# of Calls" in lines[1] and "Kernels" in lines[1]
    rows = [line.split() for line in lines[3:5]]
    assert rows[0][:2] == ["add", "3"] and rows[1][:2] == ["mul", "1"]
    assert rows[0][4] == str(3 * per_launch)
    one_row = averages.table(sort_by="cpu_time_total", row_limit=1)
    assert len(one_row.splitlines()) == len(lines) - 1
    assert prof.events().table() == prof.key_averages().table()
    with pytest.raises(ValueError, match="sort_by"):
        averages.table(sort_by="wall_time")


@pytest.mark.parametrize("device", DEVICES)
def test_key_averages_by_input_shape(device):
    a, b, c = operands(device, (2,), (2,), (3,))
    with profile(activities=activities_for(device), record_shapes=True) as prof:
        a + b
        a + b
        c + c
    groups = prof.key_averages(group_by_input_shape=True)
    assert sorted((g.key, g.count, str(g.input_shapes)) for g in groups) == [
        ("add", 1, "[[3], [3]]"),
        ("add", 2, "[[2], [2]]"),
    ]
    assert "Input Shapes" in groups.table()


@pytest.mark.parametrize("device", DEVICES)
def test_export_chrome_trace(device, tmp_path):
    a, b = operands(device, (4,), (4,))
    with profile(activities=activities_for(device)) as prof:
        a + b
        a.sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    ops = [e for e in complete if e["cat"] == "cpu_op"]
    kernels = [e for e in complete if e["cat"] == "kernel"]
    assert [e["name"] for e in ops] == ["add", "sum"]
    for e in complete:
        assert e["dur"] >= 0 and isinstance(e["ts"], (int, float))
    assert len(kernels) == launches(prof)
    if device == "cuda":
        assert kernels[0]["args"]["op"] == "add" and len(kernels[0]["args"]["grid"]) == 3


def test_record_function_outside_a_profile_does_nothing():
    with record_function("idle"):
        minitorch.ones(2) + 1

    @record_function("decorated")
    def step(x):
        return x * 2

    x = minitorch.ones(2)
    assert step(x).tolist() == [2.0, 2.0]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step(x)
    assert names(prof) == ["decorated"]
    with pytest.raises(TypeError):
        record_function(3)


def test_nested_profile_raises_and_the_outer_one_goes_on():
    a = minitorch.ones(2)
    with profile(activities=[ProfilerActivity.CPU]) as outer:
        with pytest.raises(RuntimeError, match="already running"):
            with profile(activities=[ProfilerActivity.CPU]):
                pass
        a.exp()
    assert names(outer) == ["exp"]


def test_results_only_after_the_profile_stops():
    prof = profile(activities=[ProfilerActivity.CPU])
    with pytest.raises(RuntimeError, match="stopped"):
        prof.events()
    x = minitorch.ones(2)
    prof.start()
    x.exp()
    with pytest.raises(RuntimeError, match="stopped"):
        prof.key_averages()
    prof.stop()
    assert names(prof) == ["exp"]
    with pytest.raises(RuntimeError):
        prof.stop()


def test_default_activities_and_bad_ones():
    prof = profile()
    assert ProfilerActivity.CPU in prof.activities
    assert (ProfilerActivity.CUDA in prof.activities) == minitorch.cuda.is_available()
    with pytest.raises(TypeError):
        profile(activities=["cpu"])


def test_threads_get_their_own_events():
    a = minitorch.ones(3)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        a.exp()
        worker = threading.Thread(target=lambda: a.sin())
        worker.start()
        worker.join()
    exp, sin = prof.events()
    assert (exp.name, sin.name) == ("exp", "sin")
    assert exp.thread != sin.thread
