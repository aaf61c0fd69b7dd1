"""What RawKernel reads in a student's CUDA source, and the one rewrite the emulator needs.

Both work on the text (no C++ parser), which is enough for how kernels are written by
hand: ``__global__`` and the kernel's name spelled out, not produced by macros.
"""
from __future__ import annotations

import re
from typing import NamedTuple

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^()]*\)")
_GLOBAL = re.compile(r"\b__global__\b([^;{}()]*)\(")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class KernelName(NamedTuple):
    name: str
    is_template: bool  # launched by a name with its arguments, e.g. "scale<float>"


def _blank_comments(source: str) -> str:
    """The source with comments replaced by spaces (newlines kept, so offsets hold)."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), source)


def find_kernels(source: str) -> list[KernelName]:
    """The ``__global__`` functions the source defines or declares, in order, once each."""
    text = _LAUNCH_BOUNDS.sub(lambda m: " " * len(m.group()), _blank_comments(source))
    found: dict[str, KernelName] = {}
    for match in _GLOBAL.finditer(text):
        words = _IDENTIFIER.findall(match.group(1))
        if not words:
            continue
        # The declaration began after the previous ';' or '}': a template<...> there owns it.
        start = max(text.rfind(";", 0, match.start()), text.rfind("}", 0, match.start())) + 1
        is_template = re.search(r"\btemplate\s*<", text[start:match.start()]) is not None
        found.setdefault(words[-1], KernelName(words[-1], is_template))
    return list(found.values())


# `extern __shared__ T name[];` — the size comes from the launch. nvcc makes `name` the
# launch's dynamic shared memory; the emulator has no such storage class, so the
# declaration becomes an object that reads as a T* to it (cuda/emu/raw_kernel.h).
_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?"
    r"(?P<type>[A-Za-z_][\w:<>\s]*?[\w>])\s+(?P<name>[A-Za-z_]\w*)\s*\[\s*\]\s*;")


def rewrite_dynamic_shared(source: str) -> str:
    """Rewrites each ``extern __shared__ T name[];`` for the emulator, keeping line numbers.

    ``extern __shared__ float buf[];`` becomes
    ``constexpr ::mt_raw::DynamicShared<float> buf{};`` on the same line, so the
    compiler's messages still point at the student's lines.
    """
    def replace(match: re.Match) -> str:
        newlines = match.group().count("\n")
        return f"constexpr ::mt_raw::DynamicShared<{match['type']}> {match['name']}{{}};" + "\n" * newlines

    return _DYNAMIC_SHARED.sub(replace, source)
