"""The cheapest elementwise ops (+ - * / relu neg abs) on every CPU path, bit for bit.

Contiguous float/double runs of these ops go through cpu/zip_loops.h, compiled twice: with
16-byte vectors (SSE2) and with 32-byte vectors (elementwise_avx2.cpp, used where the CPU
has AVX2). Each lane computes its own element, so every path must give NumPy's bits,
including -0.0, infinities, NaN (and its sign under abs), a broadcast value on either side,
in-place updates, and lengths that leave a tail shorter than a vector.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch

_SCRIPT = r"""
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
import numpy as np
import minitorch

SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40, -3.5, 2.0**100]
rng = np.random.default_rng(0)
failures = []

def bits(v):
    v = np.ascontiguousarray(v)
    return v.view(np.uint32 if v.dtype == np.float32 else np.uint64)

def check(name, got, want):
    got = got.numpy() if hasattr(got, "numpy") else got
    if got.shape != want.shape or not np.array_equal(bits(got), bits(want.astype(got.dtype))):
        failures.append(name)

for dtype in (np.float32, np.float64):
    for n in (0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000, 4099):
        x = rng.standard_normal(n).astype(dtype)
        y = rng.standard_normal(n).astype(dtype)
        if n >= len(SPECIAL):  # the special values against each other and at the tail
            x[:len(SPECIAL)] = SPECIAL
            y[:len(SPECIAL)] = SPECIAL[::-1]
            x[-len(SPECIAL):] = SPECIAL[::-1]
        a, b = minitorch.tensor(x), minitorch.tensor(y)
        tag = f"{np.dtype(dtype).name}[{n}]"
        for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
            with np.errstate(all="ignore"):
                check(f"{op} {tag}", getattr(minitorch, op)(a, b), f(x, y))
                for s in (2.5, -0.0, 0.0):
                    check(f"{op} {tag} scalar right {s}", getattr(minitorch, op)(a, s), f(x, dtype(s)))
                    check(f"{op} {tag} scalar left {s}", getattr(minitorch, op)(minitorch.tensor(np.array(s, dtype)).expand(n), a), f(dtype(s), x))
                c = minitorch.tensor(x)
                getattr(c, op + "_")(b)
                check(f"{op}_ {tag} in place", c, f(x, y))
        check(f"relu {tag}", a.relu(), np.where(x < 0, dtype(0), x))
        check(f"neg {tag}", -a, -x)
        check(f"abs {tag}", a.abs(), np.abs(x))
        # a strided view takes the element-by-element loop: the same bits
        check(f"add {tag} strided", a[::2] + b[::2], x[::2] + y[::2])
        check(f"relu {tag} strided", a[::2].relu(), np.where(x[::2] < 0, dtype(0), x[::2]))
print(json.dumps([minitorch.backends.cpu.get_cpu_capability(), failures]))
"""


def _has_avx2() -> bool:
    if not os.path.exists("/proc/cpuinfo"):
        return False
    with open("/proc/cpuinfo") as f:
        return " avx2" in f.read()


@pytest.mark.parametrize("cap", ["avx2", "sse", "default"])
def test_cheap_elementwise_ops_give_numpys_bits_on_every_path(cap):
    if cap == "avx2" and not _has_avx2():
        pytest.skip("needs an x86-64 CPU with AVX2 (Linux)")
    if cap != "default" and minitorch.backends.cpu.get_cpu_capability() == "NEON":
        pytest.skip("x86-64 paths")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps([here] + sys.path)],
                       env=dict(os.environ, MINITORCH_CPU_CAPABILITY=cap), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got_cap, failures = json.loads(r.stdout)
    assert got_cap == cap.upper()
    assert failures == []


def test_the_loops_take_scalars_on_either_side_and_keep_negative_zero():
    x = np.array([1.0, -2.0, 0.0, -0.0, 3.0], np.float32)
    a = minitorch.tensor(x)
    np.testing.assert_array_equal(np.signbit((a * -0.0).numpy()), np.signbit(x * np.float32(-0.0)))
    np.testing.assert_array_equal((1.0 - a).numpy(), 1.0 - x)
    np.testing.assert_array_equal((2.0 / a[:2]).numpy(), 2.0 / x[:2])
