"""``minitorch.cuda.get_device_properties`` and the peak FLOP/s and bandwidth they imply.

    >>> p = minitorch.cuda.get_device_properties()
    >>> p.name, p.multi_processor_count, p.total_memory
    >>> p.peak_flops["fp32"] / 1e12, p.peak_bandwidth / 1e9     # TFLOP/s, GB/s

The fields are PyTorch's ``torch.cuda.get_device_properties`` fields (``clock_rate`` and
``memory_clock_rate`` in kHz, ``memory_bus_width`` in bits, sizes in bytes). Two extras
are minitorch's, for the roofline (docs/memory.md):

* ``peak_flops``: a dict of FLOP/s per precision, the clock times the SM count times what
  one SM does per clock (``ARCH_RATES`` below, from NVIDIA's architecture whitepapers),
  times 2 (a fused multiply-add is two floating-point operations):
  ``"fp64"`` and ``"fp32"`` on the CUDA cores, ``"tf32"``, ``"fp16"``, ``"bf16"`` and
  ``"int8"`` (operations per second) on the tensor cores, dense. A precision the
  architecture has no tensor cores for is absent.
* ``peak_bandwidth``: DRAM bytes per second, ``memory_clock_rate x 1000 x
  memory_bus_width / 8 x 2`` (the memory transfers on both clock edges; the clock the
  driver reports for HBM and GDDR is the one this formula expects).

These are upper bounds: ``clock_rate`` is the highest boost clock, which a loaded chip
may not hold (NVIDIA's datasheets often quote a lower one, so their figures are a few
percent lower), and GeForce cards run FP16/BF16 tensor work with FP32 accumulation at
half the rate in the table.

In the emulator the device is a documented fiction, ``"minitorch emulated GPU"``: an
Ampere-class (8.6) card of 28 SMs at 1.777 GHz with a 192-bit bus at 7.5 GHz (about
12.7 TFLOP/s FP32, 360 GB/s) whose memory is the host's RAM. The emulator runs far
slower than that; the numbers give the notebooks a plausible roofline to draw.
"""
from __future__ import annotations

from . import _C

# Per SM and clock: fused multiply-adds (int8: multiply-accumulates), dense, by compute
# capability. Keys: fp64 / fp32 on the CUDA cores; tf32 / fp16 / bf16 / int8 on the tensor
# cores. (Volta 7.0: V100; Turing 7.5: T4, RTX 20; Ampere 8.0: A100, 8.6/8.7: A10, A40,
# RTX 30, Orin; Ada 8.9: L4, L40, RTX 40; Hopper 9.0: H100, H200; Blackwell 10.0: B200,
# 12.0: RTX 50.)
ARCH_RATES = {
    (6, 0): {"fp64": 32, "fp32": 64},
    (6, 1): {"fp64": 4, "fp32": 128},
    (7, 0): {"fp64": 32, "fp32": 64, "fp16": 512},
    (7, 5): {"fp64": 2, "fp32": 64, "fp16": 512, "int8": 1024},
    (8, 0): {"fp64": 32, "fp32": 64, "tf32": 512, "fp16": 1024, "bf16": 1024, "int8": 2048},
    (8, 6): {"fp64": 2, "fp32": 128, "tf32": 256, "fp16": 512, "bf16": 512, "int8": 1024},
    (8, 9): {"fp64": 2, "fp32": 128, "tf32": 256, "fp16": 512, "bf16": 512, "int8": 1024},
    (9, 0): {"fp64": 64, "fp32": 128, "tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096},
    (10, 0): {"fp64": 64, "fp32": 128, "tf32": 2048, "fp16": 4096, "bf16": 4096, "int8": 8192},
    (12, 0): {"fp64": 2, "fp32": 128, "tf32": 256, "fp16": 512, "bf16": 512, "int8": 1024},
}


def arch_rates(major: int, minor: int) -> dict:
    """The row of ``ARCH_RATES`` for compute capability ``major.minor``: the exact one, else
    the nearest lower minor of the same major (8.7 -> 8.6), else the newest row below it."""
    if (major, minor) in ARCH_RATES:
        return ARCH_RATES[(major, minor)]
    same = [k for k in ARCH_RATES if k[0] == major and k[1] <= minor]
    below = same or [k for k in ARCH_RATES if k < (major, minor)]
    return ARCH_RATES[max(below)] if below else {"fp32": 64}


def peak_flops(major: int, minor: int, multi_processor_count: int, clock_rate_khz: int) -> dict:
    """FLOP/s per precision: 2 x rate per SM and clock x SMs x clock (Hz)."""
    hz = clock_rate_khz * 1000.0
    return {k: 2.0 * v * multi_processor_count * hz for k, v in arch_rates(major, minor).items()}


def peak_bandwidth(memory_clock_rate_khz: int, memory_bus_width_bits: int) -> float:
    """DRAM bytes/s: the memory clock (Hz) x the bus width in bytes x 2 (double data rate)."""
    return memory_clock_rate_khz * 1000.0 * (memory_bus_width_bits / 8) * 2


class _CudaDeviceProperties:
    """What :func:`minitorch.cuda.get_device_properties` returns (PyTorch's fields, plus
    ``peak_flops`` and ``peak_bandwidth``)."""

    def __init__(self, fields: dict):
        self.__dict__.update(fields)
        self.peak_flops = peak_flops(self.major, self.minor, self.multi_processor_count, self.clock_rate)
        self.peak_bandwidth = peak_bandwidth(self.memory_clock_rate, self.memory_bus_width)

    def __setattr__(self, name, value):
        if "peak_bandwidth" in self.__dict__:
            raise AttributeError(f"_CudaDeviceProperties.{name} is read-only")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        mb = 1024 * 1024
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // mb}MB, multi_processor_count={self.multi_processor_count}, "
                f"uuid={self.uuid}, pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
                f"pci_domain_id={self.pci_domain_id}, L2_cache_size={self.L2_cache_size // mb}MB)")


def _check_device(device, op: str) -> None:
    """PyTorch accepts None, an int, "cuda", "cuda:0" or a device; minitorch has device 0."""
    if device is None:
        return
    if isinstance(device, bool):
        raise TypeError(f"{op}: expected a device, an int or None, got bool")
    if isinstance(device, int):
        index = device
    else:
        if isinstance(device, str):
            device = _C.device(device)
        if not isinstance(device, _C.device):
            raise TypeError(f"{op}: expected a device, an int or None, got {type(device).__name__}")
        if device.type != "cuda":
            raise ValueError(f"{op}: Expected a cuda device, but got: {device}")
        index = device.index if device.index is not None else 0
    if index != 0:
        raise ValueError(f"{op}: invalid device {index}: minitorch uses one CUDA device, cuda:0")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    """The properties of the CUDA device (see this module's docstring for ``peak_flops``
    and ``peak_bandwidth``). Raises RuntimeError where CUDA is not available."""
    _check_device(device, "get_device_properties")
    return _CudaDeviceProperties(dict(_C._cuda_device_properties()))


def get_device_name(device=None) -> str:
    """The device's name, e.g. ``'NVIDIA H100 80GB HBM3'`` (``'minitorch emulated GPU'`` in
    the emulator)."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    """The compute capability ``(major, minor)``, e.g. ``(9, 0)`` for Hopper."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def mem_get_info(device=None) -> tuple:
    """``(free, total)`` bytes of device memory, as the driver reports them (cudaMemGetInfo;
    other processes' use included, the memory fraction not applied). In the emulator,
    the host's free and total RAM."""
    _check_device(device, "mem_get_info")
    free, total = _C._cuda_mem_get_info()
    return (int(free), int(total))
