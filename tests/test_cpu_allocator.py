"""The CPU caching allocator (cpp/src/cpu/allocator.cpp, ``minitorch.cpu``).

Freed blocks of 64 KiB and more are kept per size class and reused; smaller ones go
back to malloc. The counts are checked, not timings.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch

caching = pytest.mark.skipif(not minitorch.cpu.caching_enabled(),
                             reason="the CPU cache is off (AddressSanitizer build or MINITORCH_CPU_CACHING=0)")

MiB = 1 << 20


@caching
def test_freed_block_is_reused_by_the_next_tensor_of_its_size():
    minitorch.cpu.empty_cache()
    x = minitorch.empty(MiB // 4)  # 1 MiB of float32
    ptr = x.data_ptr()
    before = minitorch.cpu.memory_allocated()
    assert before >= MiB
    del x
    assert minitorch.cpu.memory_allocated() == before - MiB
    assert minitorch.cpu.memory_cached() == MiB
    y = minitorch.empty(MiB // 4 - 100)  # a slightly smaller request: same size class
    assert y.data_ptr() == ptr
    assert minitorch.cpu.memory_cached() == 0
    del y
    minitorch.cpu.empty_cache()
    assert minitorch.cpu.memory_cached() == 0


@caching
def test_reused_memory_holds_the_new_values():
    a = minitorch.full((512, 512), 7.0)
    del a
    z = minitorch.zeros(512, 512)
    assert float(z.abs().sum()) == 0.0
    r = minitorch.tensor(np.arange(512 * 512, dtype=np.float32).reshape(512, 512)) * 1.0
    np.testing.assert_array_equal(r.numpy(), np.arange(512 * 512, dtype=np.float32).reshape(512, 512))


@caching
def test_small_blocks_are_not_cached():
    minitorch.cpu.empty_cache()
    x = minitorch.empty(1000)
    del x
    assert minitorch.cpu.memory_cached() == 0


@caching
def test_size_classes_bound_the_waste():
    minitorch.cpu.empty_cache()
    base = minitorch.cpu.memory_allocated()
    for n in (65 * 1024, 100_000, 3 * MiB + 1, 10 * MiB + 12345):
        x = minitorch.empty(n, dtype=minitorch.bool)  # n bytes
        block = minitorch.cpu.memory_allocated() - base
        assert n <= block <= 1.25 * n, (n, block)
        del x


@caching
def test_peak_and_reserved():
    minitorch.cpu.empty_cache()
    minitorch.cpu.reset_peak_memory_stats()
    start = minitorch.cpu.memory_allocated()
    x = minitorch.empty(4 * MiB // 4)
    assert minitorch.cpu.max_memory_allocated() >= start + 4 * MiB
    del x
    assert minitorch.cpu.max_memory_allocated() >= start + 4 * MiB
    assert minitorch.cpu.memory_reserved() == minitorch.cpu.memory_allocated() + minitorch.cpu.memory_cached()
    minitorch.cpu.reset_peak_memory_stats()
    assert minitorch.cpu.max_memory_allocated() == minitorch.cpu.memory_allocated()


@caching
def test_training_steps_reach_a_steady_state():
    """After the first step, a step takes its buffers from the cache: nothing new is reserved."""
    minitorch.manual_seed(0)
    model = minitorch.nn.Sequential(minitorch.nn.Linear(784, 128), minitorch.nn.Sigmoid(),
                                    minitorch.nn.Linear(128, 10))
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
    x, y = minitorch.randn(64, 784), minitorch.randint(0, 10, (64,))

    def step():
        loss = minitorch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()
    step()
    reserved = minitorch.cpu.memory_reserved()
    for _ in range(3):
        step()
        assert minitorch.cpu.memory_reserved() == reserved


def test_cache_can_be_turned_off():
    code = ("import minitorch; x = minitorch.empty(1 << 20); del x; "
            "print(minitorch.cpu.caching_enabled(), minitorch.cpu.memory_cached())")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, MINITORCH_CPU_CACHING="0"),
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "0"]
