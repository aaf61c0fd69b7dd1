"""RawKernel in the emulator: the student's CUDA source is compiled by the host
C++ compiler against the emulator (cuda/emu) into a shared library, loaded with ctypes.

The library gets, after the student's source, one ``MT_RAW_KERNEL(i, name)`` line per
kernel: cuda/emu/raw_kernel.h turns it into C functions that describe the kernel's
parameters and launch it. Knowing the parameter types, we check every argument before
a launch (CuPy cannot, and passes garbage for a mismatch).

Libraries are cached in ``$MINITORCH_CACHE_DIR/kernels`` (default
``~/.cache/minitorch/kernels``) under a hash of everything the compiler sees.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from .. import _C
from . import emulator
from .emulator import COUNTER_FIELDS, KernelCounters
from .kernel import CompileError, Dims, tensor_pointer
from .source import rewrite_dynamic_shared

CACHE_FORMAT = 1  # bump when the generated code or the flags change meaning
FLAGS = ("-x", "c++", "-std=c++20", "-O1", "-fPIC", "-shared", "-fvisibility=hidden")
# The counting build (emulator.emulator_counters): the kernel's translation unit unoptimised,
# with every load, store and basic block instrumented (cuda/emu/counters.h), linked with the
# counters' runtime (cuda/emu/counters_runtime.h, compiled without instrumentation).
COUNTING_FLAGS = ("-x", "c++", "-std=c++20", "-O0", "-fPIC", "-fvisibility=hidden", "-fsanitize=thread",
                  "-fsanitize-coverage=trace-pc", "-DMT_EMU_COUNTERS=1")
RUNTIME_FLAGS = ("-x", "c++", "-std=c++20", "-O2", "-fPIC", "-fvisibility=hidden")
LAUNCHERS_FILE = "minitorch_launchers"  # the file name compiler messages give our generated lines

# One launch at a time in the whole process: a launch swaps the C stderr to collect the
# emulator's reports (raw_kernel.h), and the emulator's __shared__ arrays are statics.
_launch_lock = threading.Lock()


# ------------------------------------------------------------- the toolchain

def include_dir() -> Path:
    """Where raw_kernel.h and the emulator's headers are: installed beside the package
    (minitorch/include, see CMakeLists.txt), else the source tree's cuda/emu."""
    here = Path(__file__).resolve().parent
    candidates = (here.parent / "include", here.parents[2] / "cuda" / "emu")
    for directory in candidates:
        if (directory / "raw_kernel.h").is_file():
            return directory
    raise RuntimeError("RawKernel: cannot find the CUDA emulator's headers (raw_kernel.h, cuda_emu.h) in "
                       f"{' or '.join(map(str, candidates))}; reinstall minitorch")


def find_compiler() -> list[str]:
    """The host C++ compiler: $CXX, else the first of c++, g++, clang++ on PATH."""
    if os.environ.get("CXX"):
        command = shlex.split(os.environ["CXX"])
        if shutil.which(command[0]) is None:
            raise RuntimeError(f"RawKernel: $CXX is {os.environ['CXX']!r}, which is not a program on PATH")
        return command
    for name in ("c++", "g++", "clang++"):
        if path := shutil.which(name):
            return [path]
    raise RuntimeError("RawKernel: the CUDA emulator compiles kernels with the host C++ compiler, and none was "
                       "found (looked for $CXX, then c++, g++ and clang++ on PATH); install g++ or clang++, "
                       "or set CXX")


@functools.lru_cache(maxsize=None)
def _compiler_identity(command: tuple[str, ...]) -> str:
    result = subprocess.run([*command, "--version"], capture_output=True, text=True)
    return f"{shutil.which(command[0])}: {result.stdout.strip()}"


@functools.lru_cache(maxsize=None)
def _boost_context(command: tuple[str, ...]) -> bool:
    """Whether Boost.Context can be used: over ten times faster fiber switches than
    ucontext (cuda/emu/README.md), so kernels with many barriers run much faster."""
    if ctypes.util.find_library("boost_context") is None:
        return False
    probe = subprocess.run([*command, "-x", "c++", "-E", "-o", os.devnull, "-"], capture_output=True,
                           input="#include <boost/context/fiber.hpp>\n", text=True)
    return probe.returncode == 0


# nvcc/NVRTC options that choose GPU code generation: nothing to do on the CPU.
_GPU_ONLY = ("-arch", "--gpu-architecture", "-std", "--std", "-use_fast_math", "--use_fast_math", "-lineinfo",
             "--generate-line-info", "-ftz", "--ftz", "-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt",
             "-fmad", "--fmad", "-maxrregcount", "--maxrregcount", "-default-device",
             "--device-as-default-execution-space", "-rdc", "--relocatable-device-code", "-restrict", "--restrict",
             "-dopt", "--dopt")
_LONG_FORMS = {"--define-macro=": "-D", "--undefine-macro=": "-U", "--include-path=": "-I"}


def host_options(options: Sequence[str]) -> list[str]:
    """RawKernel's options (NVRTC's spelling) as host compiler options."""
    out = []
    for option in options:
        long = next((prefix for prefix in _LONG_FORMS if option.startswith(prefix)), None)
        if long:
            out.append(_LONG_FORMS[long] + option[len(long):])
        elif option[:2] in ("-D", "-U", "-I") and len(option) > 2:
            out.append(option)
        elif option in ("-G", "--device-debug"):
            out.append("-g")
        elif option == "-w":
            out.append("-w")
        elif not any(option == gpu or option.startswith(gpu + "=") for gpu in _GPU_ONLY):
            raise ValueError(f"RawKernel: option {option!r} is not understood by the emulator; it takes "
                             "-DNAME[=VALUE], -UNAME, -Idir, -G and -w, and ignores GPU code generation options "
                             "(-arch=..., --use_fast_math, ...)")
    return out


def cache_dir() -> Path:
    base = os.environ.get("MINITORCH_CACHE_DIR") or Path.home() / ".cache" / "minitorch"
    return Path(base) / "kernels"


@contextlib.contextmanager
def replace_atomically(path: Path):
    """Yields a temporary file name beside `path` to write; renames it to `path` when the
    block succeeds and removes it when it fails. A rename is atomic, so another process
    sees no file or a whole one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def generated_source(source: str, names: Sequence[str], filename: str) -> str:
    """The text the compiler reads: the student's source, with its messages naming
    `filename` and its own line numbers, then a launcher for each kernel in `names`."""
    launchers = "".join(f"MT_RAW_KERNEL({i}, {name})\n" for i, name in enumerate(names))
    return (f'#line 1 "{filename}"\n{rewrite_dynamic_shared(source)}\n'
            f'#line 1 "{LAUNCHERS_FILE}"\n{launchers}')


# --------------------------------------------------------------- compiling

class EmulatedBackend:
    """Compiles with the host C++ compiler; see kernel.Backend."""

    def compile(self, source: str, options: tuple[str, ...], names: Sequence[str], filename: str) -> "EmulatedModule":
        compiler = find_compiler()
        include = include_dir()
        boost = _boost_context(tuple(compiler))
        command = [*compiler, *FLAGS, "-I", str(include), "-include", "raw_kernel.h", *host_options(options),
                   *(["-DEMU_BOOST_CONTEXT=1"] if boost else [])]
        libraries = ["-lboost_context"] if boost else []
        text = generated_source(source, names, filename)
        headers = {p.name: p.read_text() for p in sorted(include.glob("*.h"))}
        key = hashlib.sha256(json.dumps([CACHE_FORMAT, _compiler_identity(tuple(compiler)), command, libraries,
                                         headers, text]).encode()).hexdigest()
        path = cache_dir() / f"{key[:32]}.so"
        if not path.exists():
            _build(command, libraries, text, path, filename)
        module = _load(path, tuple(names))

        def counting_build() -> "EmulatedModule":
            # Clang's ThreadSanitizer leaves out a load that a store to the same place follows
            # (x[i] += 1): ask for every load.
            clang = ["-mllvm", "-tsan-instrument-read-before-write=1"] if "clang" in _compiler_identity(
                tuple(compiler)) else []
            counting = [*compiler, *COUNTING_FLAGS, *clang, "-I", str(include), "-include", "raw_kernel.h",
                        *host_options(options), *(["-DEMU_BOOST_CONTEXT=1"] if boost else [])]
            ckey = hashlib.sha256(json.dumps([CACHE_FORMAT, "counting", _compiler_identity(tuple(compiler)),
                                              counting, libraries, headers, text]).encode()).hexdigest()
            cpath = cache_dir() / f"{ckey[:32]}.so"
            if not cpath.exists():
                _build_counting(compiler, counting, libraries, text, cpath, filename, include)
            return _load(cpath, tuple(names))

        module._counting_build = counting_build
        return module


def _build(command: list[str], libraries: list[str], text: str, path: Path, filename: str) -> None:
    """Compiles into a temporary file beside `path`, then renames it (replace_atomically)."""
    with replace_atomically(path) as temporary:
        result = subprocess.run([*command, "-o", temporary, "-", *libraries], input=text, capture_output=True,
                                text=True)
        if result.returncode != 0:
            log = result.stderr.strip() or result.stdout.strip()
            hint = ""
            if LAUNCHERS_FILE in log:
                hint = ("\n(the error is in the launcher minitorch adds for each kernel: is the kernel overloaded, "
                        "or a template named without its <arguments>?)")
            raise CompileError(f"{filename}: compiling the kernel failed ({shlex.join(command[:1])}):\n{log}{hint}",
                               log)


def _build_counting(compiler: list[str], command: list[str], libraries: list[str], text: str, path: Path,
                    filename: str, include: Path) -> None:
    """The counting build: the instrumented kernel and the uninstrumented runtime, compiled
    apart (a sanitizer flag at the link would pull in the real sanitizer's runtime)."""
    with tempfile.TemporaryDirectory() as tmp:
        kernel_o, runtime_o = os.path.join(tmp, "kernel.o"), os.path.join(tmp, "runtime.o")
        steps = [([*command, "-c", "-o", kernel_o, "-"], text),
                 ([*compiler, *RUNTIME_FLAGS, "-c", "-o", runtime_o, str(include / "counters_runtime.h")], None)]
        for step, stdin in steps:
            result = subprocess.run(step, input=stdin, capture_output=True, text=True)
            if result.returncode != 0:
                log = result.stderr.strip() or result.stdout.strip()
                raise CompileError(f"{filename}: compiling the kernel for the emulator's counters failed "
                                   f"({shlex.join(step[:1])}):\n{log}", log)
        with replace_atomically(path) as temporary:
            # The runtime first: where both objects hold the same inline function, the
            # linker keeps the first, uninstrumented copy.
            result = subprocess.run([*compiler, "-shared", "-fPIC", "-o", temporary, runtime_o, kernel_o, *libraries],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                log = result.stderr.strip() or result.stdout.strip()
                raise CompileError(f"{filename}: linking the emulator's counting build failed:\n{log}", log)


# ---------------------------------------------------------------- launching

class Param(NamedTuple):
    """One kernel parameter, as raw_kernel.h describes it."""
    kind: str  # p pointer, i signed, u unsigned, f floating point, b bool, o other
    size: int
    pointee_kind: str  # for pointers: as kind, or v for bytes (void, char); else "-"
    pointee_size: int
    ctype: str  # the compiler's spelling, e.g. "const float*"

    def numpy_dtype(self) -> np.dtype | None:
        """The NumPy type with this parameter's layout (None for kind o)."""
        if self.kind == "p":
            return np.dtype(np.uintp)
        try:
            return np.dtype(f"{self.kind}{self.size}") if self.kind in "iufb" else None
        except TypeError:  # e.g. a 16-byte integer
            return None


def _fits(param: Param, dtype: np.dtype) -> bool:
    """Whether a value of `dtype` has the layout of the parameter (signedness aside)."""
    if param.kind in "iu":
        return dtype.kind in "iu" and dtype.itemsize == param.size
    return dtype.kind == param.kind and dtype.itemsize == param.size


_SUGGESTED_CTYPE = {"float32": "float*", "float64": "double*", "int64": "long long*", "bool": "bool*",
                    "int32": "int*", "int16": "short*", "int8": "signed char*", "uint8": "unsigned char*",
                    "float16": "__half*", "bfloat16": "__nv_bfloat16*"}


class EmulatedModule:
    """A loaded library: its kernels, and its own copy of the emulator's state."""

    def __init__(self, library: ctypes.CDLL, names: tuple[str, ...]) -> None:
        self._library = library
        library.mt_set_schedule.argtypes = [ctypes.c_char_p]
        library.mt_set_schedule.restype = ctypes.c_int
        library.mt_diagnostic_count.restype = ctypes.c_long
        if hasattr(library, "mt_count_begin"):
            library.mt_count_begin.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint]
            library.mt_count_begin.restype = None
            library.mt_count_totals.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint]
            library.mt_count_totals.restype = None
        self._schedule: str | None = None  # as last told to this library
        self._counting_build = None  # () -> the counting build of the same source (EmulatedBackend)
        self._counting: EmulatedModule | None | bool = None  # False: the counting build failed
        self.counts = hasattr(library, "mt_count_begin")  # this is a counting build
        self._kernels = {}
        for i, name in enumerate(names):
            describe = getattr(library, f"mt_params_{i}")
            describe.restype = ctypes.c_char_p
            launch = getattr(library, f"mt_launch_{i}")
            launch.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                               ctypes.c_char_p, ctypes.c_size_t]
            launch.restype = ctypes.c_int
            params = [line.split(" ", 4) for line in describe().decode().splitlines()]
            self._kernels[name] = (launch, [Param(k, int(s), pk, int(ps), t) for k, s, pk, ps, t in params])

    def params(self, name: str) -> list[Param]:
        return self._kernels[name][1]

    def launch(self, name: str, grid: Dims, block: Dims, shared_mem: int, args: tuple,
               count: bool = False) -> KernelCounters | None:
        """Runs the kernel; with count=True in the counting build, and returns its counters."""
        if count and not self.counts:
            if self._counting is None:
                try:
                    self._counting = self._counting_build()
                except CompileError as err:  # e.g. a compiler without -fsanitize=thread: run uncounted
                    self._counting = False
                    warnings.warn(f"{name}: the CUDA emulator cannot count this kernel's memory accesses with this "
                                  f"compiler (the counting build needs GCC or Clang on Linux); it runs uncounted:\n"
                                  f"{err}", RuntimeWarning, stacklevel=4)
            if self._counting:
                return self._counting.launch(name, grid, block, shared_mem, args, count=True)
            count = False
        launch, params = self._kernels[name]
        values = self._pack(name, params, args)  # kept alive until the launch returns
        if count:  # global memory = the tensor arguments' bytes
            tensors = [a for a in args if isinstance(a, _C.Tensor)]
            ranges = (ctypes.c_uint64 * max(2 * len(tensors), 1))(
                *(v for t in tensors for v in (int(t.data_ptr()), t.numel() * t.element_size())))
        dims = (ctypes.c_uint * 6)(*grid, *block)
        pointers = (ctypes.c_void_p * max(len(values), 1))(*(v.ctypes.data for v in values))
        message = ctypes.create_string_buffer(16384)
        with _launch_lock:
            schedule = emulator.get_emulator_schedule()
            if schedule != self._schedule:
                self._library.mt_set_schedule(schedule.encode())
                self._schedule = schedule
            before = self._library.mt_diagnostic_count()
            if count:
                self._library.mt_count_begin(ranges, len(tensors))
            error = launch(dims, shared_mem, pointers, message, len(message))
            reports = self._library.mt_diagnostic_count() - before
            if count:
                totals = (ctypes.c_uint64 * len(COUNTER_FIELDS))()
                self._library.mt_count_totals(totals, len(COUNTER_FIELDS))
        emulator.count_reports(reports)
        text = message.value.decode(errors="replace").strip()
        if error:
            reason, _, details = text.partition("\n")
            raise RuntimeError(f"{name}: the launch failed in the CUDA emulator ({reason})"
                               + (f":\n{details}" if details else ""))
        if reports:
            warnings.warn(f"{name}: the CUDA emulator reported {reports} problem(s) in this launch "
                          f"(schedule {schedule}):\n{text}", RuntimeWarning, stacklevel=4 + count)
        if count:
            return KernelCounters(name, tuple(grid), tuple(block), **dict(zip(COUNTER_FIELDS, map(int, totals))))
        return None

    def _pack(self, name: str, params: list[Param], args: tuple) -> list[np.ndarray]:
        """Each argument as a 0-d array with its parameter's layout, or the TypeError or
        ValueError that says which argument is wrong and how to fix it."""
        if len(args) != len(params):
            signature = ", ".join(p.ctype for p in params)
            raise TypeError(f"{name}({signature}) takes {len(params)} argument(s), {len(args)} given")
        return [self._pack_one(name, i, param, arg) for i, (param, arg) in enumerate(zip(params, args))]

    @staticmethod
    def _pack_one(name: str, i: int, param: Param, arg: Any) -> np.ndarray:
        dtype = param.numpy_dtype()
        where = f"{name}: argument {i} (parameter `{param.ctype}`)"
        if dtype is None:
            raise TypeError(f"{where}: RawKernel passes only pointers, integers, floating point numbers and bool")
        if param.kind == "p":
            if not isinstance(arg, _C.Tensor):
                raise TypeError(f"{where} must be a cuda tensor, got {type(arg).__name__}")
            pointer = tensor_pointer(name, i, arg)
            elements = np.dtype(arg.dtype.name)
            if param.pointee_kind in "iufb" and not _fits(Param(param.pointee_kind, param.pointee_size, "-", 0, ""),
                                                          elements):
                raise TypeError(f"{where} points at {param.pointee_size}-byte elements, but the tensor is "
                                f"{arg.dtype.name}: declare the parameter `{_SUGGESTED_CTYPE[arg.dtype.name]}` "
                                f"or convert the tensor")
            return np.array(pointer, dtype=dtype)
        if isinstance(arg, _C.Tensor):
            raise TypeError(f"{where} takes a number, got a tensor (pass x.item() for a one-element tensor)")
        if isinstance(arg, np.generic):  # first: numpy.float64 is a Python float too
            value = np.array(arg)
        elif isinstance(arg, bool):
            value = np.array(arg, dtype=np.bool_)
        elif isinstance(arg, (int, float)):  # as CuPy: int -> 64-bit integer, float -> double
            value = np.array(arg, dtype=np.int64 if isinstance(arg, int) else np.float64)
            if not _fits(param, value.dtype):
                kind = "int, passed as a 64-bit integer" if isinstance(arg, int) else "float, passed as a double"
                raise TypeError(f"{where} is {param.size} bytes, but got a Python {kind} (as in CuPy): "
                                f"pass numpy.{dtype.name}({arg!r})")
            return value.view(dtype)
        else:
            raise TypeError(f"{where}: cannot pass a {type(arg).__name__}")
        if not _fits(param, value.dtype):
            raise TypeError(f"{where} does not take a numpy.{value.dtype.name}: pass numpy.{dtype.name}(...)")
        return value.view(dtype)


_modules: dict[tuple[Path, tuple[str, ...]], EmulatedModule] = {}


def _load(path: Path, names: tuple[str, ...]) -> EmulatedModule:
    # One EmulatedModule per library: it remembers the schedule that library was told.
    if (path, names) not in _modules:
        _modules[path, names] = EmulatedModule(ctypes.CDLL(str(path)), names)
    return _modules[path, names]
