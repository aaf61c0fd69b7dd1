"""What a CUDA kernel compiles to, read without a GPU: registers and the machine code (SASS).

A memory-bound kernel is fast when many loads are in flight at once: a warp that issues
32 loads and then waits once pays one memory latency; a warp that loads a value, uses it,
then loads the next pays 32. Which of the two a kernel does is decided by the compiler, not
by the source's loops, and it shows in the SASS. This tool compiles a file of cuda/ with
nvcc for one architecture, disassembles it (cuobjdump, from the CUDA toolkit or the
`nvidia-cuda-cuobjdump` and `nvidia-cuda-nvdisasm` wheels) and prints, per kernel:

* registers per thread (ptxas; with 128 threads a block, 65536 registers an SM hold
  65536 / (128 * registers) blocks: the occupancy), spill bytes;
* instruction counts (global loads LDG, LDGSTS: cp.async's global-to-shared copies, stores
  STG, shared-memory loads LDS and LDSM: ldmatrix's, MUFU: exp/rcp/..., BRA, CALL, SHFL);
* load batches: the global loads issued before the first instruction that reads what one of
  them loaded, walking the code in order ([32] for a softmax row of 32 loads at once;
  [1, 1, 1, ...] when each load waits for the previous one's value).

    python tools/sass.py cuda/softmax.cu --kernel softmax_rows_kernel [--arch 90]

tests/tools/test_sass.py tests the parser on fixed text, and the structure of chosen
kernels where nvcc and cuobjdump are present.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# One SASS line: /*0a70*/  @!P2 LDG.E R58, desc[UR6][R4.64+0x300] ;
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_REGISTER = re.compile(r"\bR(\d+)(\.64)?\b")
# Instructions whose first operand is read, not written.
_NO_DEST = ("ST", "STG", "STS", "STL", "RED", "BRA", "EXIT", "RET", "CALL", "BAR", "MEMBAR", "NOP", "BSSY", "BSYNC",
            "WARPSYNC", "YIELD")


@dataclass
class Kernel:
    name: str
    instructions: list = field(default_factory=list)  # (opcode, operand text)
    registers: int | None = None
    spill_bytes: int = 0

    def count(self, opcode: str) -> int:
        """How many instructions have this opcode (its first dot-separated part: LDG, MUFU, ...)."""
        return sum(1 for op, _ in self.instructions if op.split(".")[0] == opcode)

    def load_batches(self) -> list[int]:
        """Global loads issued together: a batch ends at the first instruction that reads a
        register one of its loads writes (a 64-bit load writes two, a 128-bit one four)."""
        batches, pending, size = [], set(), 0
        for op, args in self.instructions:
            base = op.split(".")[0]
            operands = [a.strip() for a in args.split(",")] if args.strip() else []
            dest_regs: list[int] = []
            if operands and base not in _NO_DEST and re.fullmatch(r"R\d+(\.\w+)?", operands[0]):
                dest_regs = [int(operands[0][1:].split(".")[0])]
                operands = operands[1:]
            reads = set()
            for text in operands:
                for number, wide in _REGISTER.findall(text):
                    reads.add(int(number))
                    if wide:
                        reads.add(int(number) + 1)
            if pending & reads:
                batches.append(size)
                pending, size = set(), 0
            if base == "LDG" and dest_regs:
                width = 4 if ".128" in op else 2 if ".64" in op else 1
                pending.update(dest_regs[0] + i for i in range(width))
                size += 1
        if size:
            batches.append(size)
        return batches


def parse_sass(text: str) -> dict[str, Kernel]:
    """cuobjdump -sass output -> {mangled kernel name: Kernel with its instructions}."""
    kernels = {}
    for part in re.split(r"\n\s*Function : ", text)[1:]:
        name, body = part.split("\n", 1) if "\n" in part else (part, "")
        kernel = Kernel(name.strip())
        kernel.instructions = [(m.group(1), m.group(2)) for m in _INSTRUCTION.finditer(body)]
        kernels[kernel.name] = kernel
    return kernels


def parse_ptxas(text: str, kernels: dict[str, Kernel]) -> None:
    """Registers and spill bytes from nvcc -Xptxas=-v output, onto the parsed kernels."""
    current = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            current = kernels.setdefault(m.group(1), Kernel(m.group(1)))
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes spill stores", line)
        if m:
            current.spill_bytes = int(m.group(1))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current.registers = int(m.group(1))


def short_name(mangled: str) -> str:
    """A mangled kernel name without its namespace prefix, cut to 100 characters."""
    name = re.sub(r"^_ZN9minitorch4cuda(\d+_GLOBAL__N__\w+?_\d+_\w+?cu_[0-9a-f]{8})?", "", mangled)
    return re.sub(r"^\d+", "", name)[:100]


def find_cuobjdump() -> tuple[str, dict] | None:
    """cuobjdump and the environment it needs to find nvdisasm, or None where neither the
    toolkit nor the NVIDIA wheels provide both."""
    env = dict(os.environ)
    tool = shutil.which("cuobjdump")
    if tool and shutil.which("nvdisasm"):
        return tool, env
    try:
        import nvidia
        for root in nvidia.__path__:
            for bin_dir in Path(root).glob("cu*/bin"):
                if (bin_dir / "cuobjdump").exists() and (bin_dir / "nvdisasm").exists():
                    env["NVDISASM_PATH"] = str(bin_dir)
                    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
                    return str(bin_dir / "cuobjdump"), env
    except ImportError:
        pass
    return None


def unavailable_reason() -> str | None:
    """Why this tool cannot run here, or None when it can."""
    if not shutil.which("nvcc"):
        return "nvcc is not on PATH"
    if find_cuobjdump() is None:
        return "cuobjdump and nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)"
    return None


def compile_kernels(source: str | Path, arch: str = "90") -> dict[str, Kernel]:
    """Compiles one file of cuda/ as the build does (C++17, the CUDA backend on, Release: -O3
    -DNDEBUG) for sm_<arch>
    and returns its kernels with registers, spills and SASS."""
    found = find_cuobjdump()
    if found is None or not shutil.which("nvcc"):
        raise RuntimeError(f"tools/sass.py: {unavailable_reason()}")
    cuobjdump, env = found
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "kernels.o"
        cmd = ["nvcc", "-std=c++17", f"-I{ROOT / 'cpp' / 'include'}", f"-I{ROOT / 'cuda'}", f"-arch=sm_{arch}",
               "-DMINITORCH_WITH_CUDA=1", "-O3", "-DNDEBUG", "-Xptxas=-v", "-c", str(source), "-o", str(obj)]
        built = subprocess.run(cmd, capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"nvcc failed on {source}:\n{built.stderr[-3000:]}")
        sass = subprocess.run([cuobjdump, "-sass", str(obj)], capture_output=True, text=True, env=env)
        if sass.returncode != 0:
            raise RuntimeError(f"cuobjdump failed:\n{sass.stderr[-2000:]}")
    kernels = parse_sass(sass.stdout)
    parse_ptxas(built.stderr + built.stdout, kernels)
    return kernels


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="a .cu file, e.g. cuda/softmax.cu")
    p.add_argument("--kernel", default="", help="only kernels whose mangled name matches this regular expression")
    p.add_argument("--arch", default="90", help="compute capability to compile for (default 90: H100/H200)")
    args = p.parse_args(argv)
    why = unavailable_reason()
    if why:
        print(f"tools/sass.py: {why}", file=sys.stderr)
        return 2
    kernels = compile_kernels(args.source, args.arch)
    pattern = re.compile(args.kernel)
    for name, k in sorted(kernels.items()):
        if not pattern.search(name):
            continue
        ops = ("LDG", "LDGSTS", "STG", "LDS", "LDSM", "MUFU", "BRA", "CALL", "SHFL")
        counts = " ".join(f"{op}={k.count(op)}" for op in ops)
        print(f"{short_name(name)}\n   registers={k.registers} spill={k.spill_bytes} B  "
              f"instructions={len(k.instructions)} {counts}\n   load batches: {k.load_batches()[:24]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
