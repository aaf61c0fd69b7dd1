"""The device and memory API (PyTorch's torch.cuda names) on cpu and (emulated) cuda:
allocator counters against tensor sizes, memory_stats keys, out-of-memory under a memory
fraction with the process usable after, device properties and their peak formulas."""
import math
import warnings

import pytest

import minitorch
from minitorch import cuda_device
from conftest import CUDA_SKIP_REASON


def _mem(device):
    return minitorch.cpu if device == "cpu" else minitorch.cuda


def _block(device, nbytes):
    """The block the allocator gives a request of nbytes (docs/memory.md)."""
    if device == "cuda":  # multiples of 512, at least 512
        return max(512, -(-nbytes // 512) * 512)
    if nbytes < 64 << 10:  # multiples of 64
        return -(-nbytes // 64) * 64
    step = 1 << (nbytes.bit_length() - 1 - 2)  # four classes per power of two
    return -(-nbytes // step) * step


def test_allocated_peak_and_reset_follow_tensor_sizes(device):
    m = _mem(device)
    base = m.memory_allocated()
    a = minitorch.empty(100, device=device)          # 400 bytes
    assert m.memory_allocated() == base + _block(device, 400)
    b = minitorch.empty(300_000, device=device)      # 1,200,000 bytes
    both = base + _block(device, 400) + _block(device, 1_200_000)
    assert m.memory_allocated() == both
    assert m.max_memory_allocated() >= both
    stats = m.memory_stats()
    assert stats["allocated_bytes.all.current"] == both
    assert stats["active_bytes.all.current"] == both
    assert stats["requested_bytes.all.current"] - stats["allocated_bytes.all.current"] <= 0
    assert stats["reserved_bytes.all.current"] == m.memory_reserved() >= both
    assert stats["allocated_bytes.large_pool.current"] + stats["allocated_bytes.small_pool.current"] == both
    del b
    assert m.memory_allocated() == base + _block(device, 400)
    assert m.max_memory_allocated() >= both
    m.reset_peak_memory_stats()
    assert m.max_memory_allocated() == m.memory_allocated()
    assert m.max_memory_reserved() == m.memory_reserved()
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        m.reset_max_memory_allocated()
    freed = m.memory_stats()["allocated_bytes.all.freed"]
    del a
    assert m.memory_stats()["allocated_bytes.all.freed"] == freed + _block(device, 400)
    m.reset_accumulated_memory_stats()
    assert m.memory_stats()["allocated_bytes.all.freed"] == 0


def test_memory_stats_keys_and_summary(device):
    m = _mem(device)
    stats = m.memory_stats()
    assert list(stats) == sorted(stats)
    for stat in ("active", "active_bytes", "allocated_bytes", "allocation", "requested_bytes", "reserved_bytes",
                 "segment", "inactive_split", "inactive_split_bytes"):
        for pool in ("all", "large_pool", "small_pool"):
            for f in ("current", "peak", "allocated", "freed"):
                assert isinstance(stats[f"{stat}.{pool}.{f}"], int)
    for k in ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free", "max_split_size"):
        assert k in stats
    text = m.memory_summary()
    assert "Allocated memory" in text and "Peak Usage" in text and "from small pool" in text
    assert "from small pool" not in m.memory_summary(abbreviated=True)


def test_memory_fraction_raises_out_of_memory_and_the_process_stays_usable(device):
    m = _mem(device)
    total = m.get_device_properties().total_memory
    m.empty_cache()
    limit = m.memory_reserved() + (8 << 20)
    stats0 = m.memory_stats()
    m.set_per_process_memory_fraction(limit / total)
    try:
        assert m.get_per_process_memory_fraction() == limit / total
        keep = minitorch.empty(1 << 20, device=device)  # 4 MiB: fits
        with pytest.raises(minitorch.OutOfMemoryError, match=r"out of memory\. Tried to allocate 16\.00 MiB") as info:
            minitorch.empty(4 << 20, device=device)  # 16 MiB: past the limit
        assert isinstance(info.value, RuntimeError) and isinstance(info.value, MemoryError)
        assert "allowed" in str(info.value)
        assert m.memory_stats()["num_ooms"] == stats0["num_ooms"] + 1
        assert m.memory_allocated() == stats0["allocated_bytes.all.current"] + (4 << 20)
        del keep
        again = minitorch.ones(3 << 19, device=device)  # 6 MiB fits once the 4 MiB are free
        assert again.sum().item() == 3 << 19
        del again
    finally:
        m.set_per_process_memory_fraction(1.0)
    big = minitorch.empty(4 << 20, device=device)  # no limit any more
    del big
    assert minitorch.cuda.OutOfMemoryError is minitorch.OutOfMemoryError


def test_memory_fraction_arguments(device):
    m = _mem(device)
    with pytest.raises(TypeError, match="must be `float`"):
        m.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        m.set_per_process_memory_fraction(1.5)
    assert m.get_per_process_memory_fraction() == 1.0


def test_peak_formulas_match_datasheets():
    a100 = cuda_device.peak_flops(8, 0, 108, 1_410_000)
    assert a100["fp16"] == pytest.approx(312e12, rel=0.01)
    assert a100["tf32"] == pytest.approx(156e12, rel=0.01)
    assert a100["fp32"] == pytest.approx(19.5e12, rel=0.01)
    assert a100["fp64"] == pytest.approx(9.7e12, rel=0.01)
    assert a100["int8"] == pytest.approx(624e12, rel=0.01)
    assert cuda_device.peak_bandwidth(1_215_000, 5120) == pytest.approx(1.555e12, rel=0.01)
    h100 = cuda_device.peak_flops(9, 0, 132, 1_830_000)  # NVIDIA's datasheet clock
    assert h100["bf16"] == pytest.approx(989e12, rel=0.01)
    assert cuda_device.peak_bandwidth(2_619_000, 5120) == pytest.approx(3.35e12, rel=0.01)
    assert cuda_device.arch_rates(8, 7) == cuda_device.ARCH_RATES[(8, 6)]  # nearest lower minor
    assert "fp16" not in cuda_device.peak_flops(6, 0, 56, 1_480_000)  # no tensor cores


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_cuda_device_properties():
    p = minitorch.cuda.get_device_properties()
    for f in ("name", "total_memory", "multi_processor_count", "major", "minor", "clock_rate", "memory_clock_rate",
              "memory_bus_width", "L2_cache_size", "warp_size", "max_threads_per_multi_processor",
              "regs_per_multiprocessor", "shared_memory_per_block", "shared_memory_per_block_optin",
              "shared_memory_per_multiprocessor", "max_threads_per_block", "uuid"):
        assert hasattr(p, f), f
    assert p.warp_size == 32 and p.total_memory > 0
    assert p.peak_flops["fp32"] == 2 * cuda_device.arch_rates(p.major, p.minor)["fp32"] * p.multi_processor_count \
        * p.clock_rate * 1000
    assert p.peak_bandwidth == p.memory_clock_rate * 1000 * p.memory_bus_width / 8 * 2
    assert repr(p).startswith(f"_CudaDeviceProperties(name='{p.name}', major={p.major}")
    assert minitorch.cuda.get_device_name() == p.name == minitorch.cuda.get_device_name("cuda:0")
    assert minitorch.cuda.get_device_capability(0) == (p.major, p.minor)
    free, total = minitorch.cuda.mem_get_info()
    assert 0 <= free <= total == p.total_memory
    with pytest.raises(ValueError, match="one CUDA device"):
        minitorch.cuda.get_device_properties(1)
    if minitorch.cuda.is_emulated():  # the documented fictional device
        assert p.name == "minitorch emulated GPU" and (p.major, p.minor) == (8, 6)
        assert p.peak_flops["fp32"] == pytest.approx(12.74e12, rel=0.01)
        assert p.peak_bandwidth == pytest.approx(360e9, rel=0.01)


def test_cuda_device_properties_without_cuda():
    if minitorch.cuda.is_available():  # asked now: an earlier test may have switched the emulator on
        pytest.skip("checks the error without CUDA")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        minitorch.cuda.get_device_properties()
    assert minitorch.cuda.memory_allocated() == 0 and minitorch.cuda.memory_stats() == {}


def test_cpu_device_properties():
    p = minitorch.cpu.get_device_properties()
    assert p.core_count >= 1 and p.total_memory > 0 and p.simd_width in (128, 256, 512)
    assert p.peak_flops["fp32"] == 2 * p.peak_flops["fp64"]
    if p.clock_rate:
        lanes = p.simd_width // 32
        assert p.peak_flops["fp32"] == p.core_count * p.clock_rate * 1000 * lanes * 2 * (2 if p.fma else 1)
    assert minitorch.cpu.measure_bandwidth(1 << 20, repeat=1) > 0
    assert not math.isnan(minitorch.cpu.measure_bandwidth(1 << 20, repeat=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        repr(p)
