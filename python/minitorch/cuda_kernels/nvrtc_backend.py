"""RawKernel on a real GPU: NVRTC compiles the student's source into a cubin for this GPU,
the CUDA runtime loads it and launches it on minitorch's stream (cuda/raw_kernel.cu).

A GPU tells us only the size of each kernel parameter (cudaFuncGetParamInfo), not its C
type, so arguments are packed as CuPy packs them: a tensor as its device address, a
NumPy scalar as its own bytes, a Python int as a 64-bit integer, a float as a double,
and an argument whose size differs from its parameter's is refused, naming both.

Cubins are cached on disk beside the emulator's libraries, under a hash of the source,
options, kernel names, the GPU's compute capability and the NVRTC library used.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import _C
from .emulated_backend import cache_dir, replace_atomically
from .kernel import MAX_DYNAMIC_SHARED, CompileError, Dims, tensor_pointer

CACHE_FORMAT = 1


def nvrtc_library() -> str:
    """NVRTC from the ``nvidia-cuda-nvrtc`` wheel when one is installed ("" otherwise:
    the C++ side then tries the system's libnvrtc.so.13 / .12 / libnvrtc.so)."""
    try:
        import nvidia  # the namespace package of NVIDIA's CUDA wheels
    except ImportError:
        return ""
    for root in getattr(nvidia, "__path__", []):
        for pattern in ("cu13/lib/libnvrtc.so.*", "cuda_nvrtc/lib/libnvrtc.so.*", "*/lib/libnvrtc.so.*"):
            found = sorted(p for p in glob.glob(os.path.join(root, pattern)) if "builtins" not in p)
            if found:
                return found[-1]
    return ""


class NvrtcBackend:
    """Compiles with NVRTC; see kernel.Backend."""

    def compile(self, source: str, options: tuple[str, ...], names: Sequence[str], filename: str) -> "GpuModule":
        library = nvrtc_library()
        key = hashlib.sha256(json.dumps([CACHE_FORMAT, source, list(options), list(names), filename,
                                         _C._cuda_compute_capability(), library]).encode()).hexdigest()
        if key in _loaded:  # one loaded library per source: kernels rebuilt in a loop load nothing new
            return _loaded[key]
        path = cache_dir() / f"{key[:32]}.cubin.json"
        if path.exists():
            entry = json.loads(path.read_text())
            cubin, lowered = bytes.fromhex(entry["cubin"]), entry["lowered"]
        else:
            ok, log, cubin, lowered, _version = _C._nvrtc_compile(source, filename, list(names), list(options),
                                                                  library)
            if not ok:
                log = compiler_style_locations(log)
                raise CompileError(f"{filename}: NVRTC could not compile the kernel:\n{log.strip()}", log)
            _write_atomically(path, json.dumps({"cubin": cubin.hex(), "lowered": lowered}))
        _loaded[key] = GpuModule(cubin, dict(zip(names, lowered)))
        return _loaded[key]


_loaded: dict[str, "GpuModule"] = {}

# NVRTC writes a source location as "saxpy.cu(7): error: ..."; the host compiler, and so the
# emulator's messages, as "saxpy.cu:7: error: ...". Students (and graders' patterns) see the second on both.
_NVRTC_LOCATION = re.compile(r"^(?P<file>[^\s():][^():]*)\((?P<line>\d+)\): ", re.MULTILINE)


def compiler_style_locations(log: str) -> str:
    """NVRTC's log with each ``file(line): `` written ``file:line: `` as g++ and clang write it."""
    return _NVRTC_LOCATION.sub(lambda m: f"{m['file']}:{m['line']}: ", log)


def _write_atomically(path: Path, text: str) -> None:
    with replace_atomically(path) as temporary:
        Path(temporary).write_text(text)


class GpuModule:
    """A loaded cubin and its kernels: (handle, parameter sizes, thread limit, static shared bytes)."""

    def __init__(self, cubin: bytes, lowered: dict[str, str]) -> None:
        self._library = _C._raw_load(cubin)
        self._kernels = {name: _C._raw_get_kernel(self._library, low) for name, low in lowered.items()}

    def launch(self, name: str, grid: Dims, block: Dims, shared_mem: int, args: tuple) -> None:
        handle, sizes, max_threads, static_shared = self._kernels[name]
        threads = block[0] * block[1] * block[2]
        if threads > max_threads:
            raise ValueError(f"{name}: a block of {threads} threads is over this kernel's limit of {max_threads} "
                             f"(its registers per thread leave room for no more); use smaller blocks")
        if static_shared + shared_mem > MAX_DYNAMIC_SHARED:
            raise ValueError(f"{name}: {static_shared} bytes of __shared__ arrays plus shared_mem = {shared_mem} is "
                             f"over the {MAX_DYNAMIC_SHARED} bytes a block may have")
        if len(args) != len(sizes):
            raise TypeError(f"{name} takes {len(sizes)} argument(s), {len(args)} given")
        packed = [_pack(name, i, size, arg) for i, (size, arg) in enumerate(zip(sizes, args))]
        _C._raw_launch(handle, list(grid), list(block), shared_mem, packed)
        _C._cuda_synchronize()  # a fault inside the kernel is reported here, by this launch


def _pack(name: str, i: int, size: int, arg: Any) -> bytes:
    """The bytes of one argument, or the TypeError naming it when its size is not the parameter's."""
    where = f"{name}: argument {i} (a {size}-byte parameter)"
    if isinstance(arg, _C.Tensor):
        value = np.array(tensor_pointer(name, i, arg), dtype=np.uintp)
    elif isinstance(arg, np.generic):
        value = np.array(arg)
    elif isinstance(arg, bool):
        value = np.array(arg, dtype=np.bool_)
    elif isinstance(arg, (int, float)):  # as CuPy: int -> 64-bit integer, float -> double
        value = np.array(arg, dtype=np.int64 if isinstance(arg, int) else np.float64)
        if value.itemsize != size:
            fix = {4: "numpy.int32" if isinstance(arg, int) else "numpy.float32", 2: "numpy.int16",
                   1: "numpy.int8"}.get(size, "a NumPy scalar of that size")
            raise TypeError(f"{where} got a Python {type(arg).__name__}, passed as 8 bytes (as in CuPy): pass "
                            f"{fix}({arg!r})")
    else:
        raise TypeError(f"{where}: cannot pass a {type(arg).__name__}; pass a cuda tensor or a number")
    if value.itemsize != size:
        raise TypeError(f"{where} got a {value.itemsize}-byte {value.dtype.name}")
    return value.tobytes()
