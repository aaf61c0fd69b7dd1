"""minitorch.cuda.Stream / Event, Tensor.pin_memory and non_blocking copies (run on the
emulator's "cuda" too, where every launch has finished when it returns)."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def test_events_time_work_between_them():
    a = minitorch.randn(64, 64, device="cuda")
    start, end = minitorch.cuda.Event(enable_timing=True), minitorch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        a = a @ a / 64
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0


def test_event_errors_are_pytorchs():
    untimed, timed = minitorch.cuda.Event(), minitorch.cuda.Event(enable_timing=True)
    untimed.record()
    timed.record()
    with pytest.raises(RuntimeError, match="created with argument 'enable_timing=True'"):
        untimed.elapsed_time(timed)
    with pytest.raises(RuntimeError, match="must be recorded before calculating elapsed time"):
        timed.elapsed_time(minitorch.cuda.Event(enable_timing=True))


def test_streams_and_the_current_stream():
    default = minitorch.cuda.default_stream()
    assert minitorch.cuda.current_stream() == default and default.cuda_stream == 0
    s = minitorch.cuda.Stream()
    assert s != default
    with minitorch.cuda.stream(s):
        assert minitorch.cuda.current_stream() == s
        event = minitorch.cuda.Event()
        event.record()  # on s
        default.wait_event(event)
        s.wait_stream(default)
    assert minitorch.cuda.current_stream() == default
    s.synchronize()
    assert s.query() and event.query()
    with minitorch.cuda.stream(None):  # None changes nothing, as in PyTorch
        assert minitorch.cuda.current_stream() == default


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_pin_memory_copies_into_page_locked_memory(layout):
    x = minitorch.arange(12, dtype=minitorch.float32).reshape(3, 4)
    if layout == "transposed":
        x = x.t()
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.is_contiguous() and p.device.type == "cpu"
    assert p.tolist() == x.tolist() and p.data_ptr() != x.data_ptr()
    assert p.pin_memory() is p  # already pinned: no new copy
    assert p[1:].is_pinned()  # a view shares the pinned memory


def test_pin_memory_errors():
    with pytest.raises(RuntimeError, match="only CPU tensors can be pinned"):
        minitorch.ones(2, device="cuda").pin_memory()
    with pytest.raises(RuntimeError, match="requires grad; pin tensor.detach"):
        minitorch.ones(2, requires_grad=True).pin_memory()


@pytest.mark.parametrize("spelling", ["to", "cuda"])
def test_non_blocking_copy_from_pinned_memory(spelling):
    x_np = np.random.default_rng(0).standard_normal((256, 33)).astype(np.float32)
    p = minitorch.tensor(x_np).pin_memory()
    y = p.to("cuda", non_blocking=True) if spelling == "to" else p.cuda(non_blocking=True)
    del p  # the pinned source must outlive the queued copy: minitorch keeps it until done
    gc.collect()
    minitorch.cuda.synchronize()
    assert y.device.type == "cuda"
    np.testing.assert_array_equal(y.cpu().numpy(), x_np)


def test_non_blocking_falls_back_to_an_ordinary_copy():
    x = minitorch.arange(6).reshape(2, 3)
    for src in (x, x.t(), x.pin_memory().t()):  # pageable; non-contiguous; pinned but strided
        y = src.to("cuda", non_blocking=True)
        assert y.device.type == "cuda" and y.tolist() == src.tolist()
    w = minitorch.ones(3, requires_grad=True)
    z = w.to("cuda", non_blocking=True)  # autograd needs the recorded copy
    z.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
