"""Every kernel of the device interface (the MT_KERNELS list of kernels.h) is defined in files
with the same stem on both devices: cpp/src/cpu/<family>.cpp and cuda/<family>.cu, so a
student who reads one device's kernel finds the other's beside the same name."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kernel_names() -> list[str]:
    text = (ROOT / "cpp/include/minitorch/kernels.h").read_text()
    body = re.search(r"#define MT_KERNELS\(X\)(.*?)\n\n", text, re.S)
    assert body, "no MT_KERNELS list in kernels.h"
    return re.findall(r"\bX\((\w+),", body.group(1))


def defined_in(folder: str, pattern: str, names: list[str]) -> dict[str, list[str]]:
    """kernel name -> stems of the files in `folder` that define it (a function at file scope)."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / folder).glob(pattern)):
        text = path.read_text()
        for name in names:
            if re.search(rf"^(?:void|bool)\s+{name}\s*\(", text, re.M):
                out.setdefault(name, []).append(path.stem)
    return out


def test_each_kernel_lives_in_same_stem_files_on_both_devices():
    names = kernel_names()
    assert len(names) > 30 and "copy" in names and "matmul" in names
    cpu = defined_in("cpp/src/cpu", "*.cpp", names)
    cuda = defined_in("cuda", "*.cu", names)
    problems = [f"{n}: cpu {cpu.get(n)}, cuda {cuda.get(n)}" for n in names
                if len(cpu.get(n, [])) != 1 or cpu.get(n) != cuda.get(n)]
    assert not problems, "kernels not defined once in same-stem files on both devices:\n  " + "\n  ".join(problems)
