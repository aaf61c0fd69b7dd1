"""The SIMD math of cpp/src/cpu/vector_math.cpp (glibc's libmvec) against NumPy in float64.

Each transcendental op is checked on every path this machine has ("AVX2", "SSE" or "NEON",
and the scalar "DEFAULT" loops, chosen with MINITORCH_CPU_CAPABILITY in a fresh process):
results within 4 ulp of the correctly rounded value, special values (0, -0, inf, nan, huge,
tiny) exactly as the scalar formula gives them, every length of tail, strided inputs.
(tools/check_aarch64_simd.sh checks the NEON path under QEMU, by hand.)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch

MAX_ULP = 4


def _erf(x):
    from math import erf
    return np.vectorize(erf, otypes=[np.float64])(x)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


# op -> (reference in float64, range of ordinary inputs)
OPS = {
    "exp": (np.exp, (-80, 80)),
    "expm1": (np.expm1, (-20, 20)),
    "log": (np.log, (1e-30, 1e30)),
    "log1p": (np.log1p, (-0.99, 1e6)),
    "log2": (np.log2, (1e-30, 1e30)),
    "tanh": (np.tanh, (-12, 12)),
    "sigmoid": (_sigmoid, (-90, 90)),
    "sin": (np.sin, (-100, 100)),
    "cos": (np.cos, (-100, 100)),
    "tan": (np.tan, (-1.5, 1.5)),
    "erf": (_erf, (-5, 5)),
}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e-6, -1e-6, 88.7, -88.7, 1e30, -1e30, 1.0, -1.0]


def inputs(op: str, dtype) -> np.ndarray:
    lo, hi = OPS[op][1]
    rng = np.random.default_rng(len(op))
    if lo > 0:  # log-uniform over a wide positive range
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 4000))
    else:
        x = rng.uniform(lo, hi, 4000)
    return np.concatenate([x, np.array(SPECIAL)]).astype(dtype)


def ulp_error(got: np.ndarray, x: np.ndarray, op: str) -> float:
    """Largest error in units of the last place of the reference, over finite references;
    non-finite references must be matched exactly."""
    with np.errstate(all="ignore"):
        ref = OPS[op][0](x.astype(np.float64))
    ref_t = ref.astype(got.dtype)
    special = ~np.isfinite(ref_t)
    assert np.array_equal(got[special], ref_t[special], equal_nan=True), (op, x[special], got[special])
    finite = ~special
    err = np.abs(got[finite].astype(np.float64) - ref[finite]) / np.spacing(np.abs(ref_t[finite])).astype(np.float64)
    return float(err.max()) if err.size else 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_accuracy_in_this_process(op, dtype):
    x = inputs(op, dtype)
    got = getattr(minitorch, op)(minitorch.tensor(x)).numpy()
    assert ulp_error(got, x, op) <= MAX_ULP


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "log"])
def test_every_tail_length_and_strided_inputs(op):
    x = inputs(op, np.float32)[:64]
    full = getattr(minitorch, op)(minitorch.tensor(x)).numpy()
    for n in range(1, 20):  # lengths that end in every possible partial vector
        part = getattr(minitorch, op)(minitorch.tensor(x[:n])).numpy()
        np.testing.assert_array_equal(part, full[:n])
    t = minitorch.tensor(x.reshape(8, 8))
    np.testing.assert_array_equal(getattr(t.t(), op)().numpy(), full.reshape(8, 8).T)  # strided: scalar path
    assert ulp_error(getattr(t[:, ::3], op)().numpy(), x.reshape(8, 8)[:, ::3], op) <= MAX_ULP


def test_gradients_use_the_same_values():
    x = minitorch.tensor(np.linspace(-4, 4, 37), requires_grad=True)
    (x.sigmoid().sum() + x.tanh().sum()).backward()
    s, t = _sigmoid(np.linspace(-4, 4, 37)), np.tanh(np.linspace(-4, 4, 37))
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s) + (1 - t * t), rtol=1e-12)


def test_capability_names_a_path():
    assert minitorch.backends.cpu.get_cpu_capability() in ("AVX2", "SSE", "NEON", "DEFAULT")


_SCRIPT = """
import json, sys
import numpy as np
sys.path[:0] = json.loads(sys.argv[1])
import minitorch, test_vector_math as t
out = {"capability": minitorch.backends.cpu.get_cpu_capability(), "ulp": {}}
for op in t.OPS:
    for dt in (np.float32, np.float64):
        x = t.inputs(op, dt)
        got = getattr(minitorch, op)(minitorch.tensor(x)).numpy()
        out["ulp"][op + "-" + np.dtype(dt).name] = t.ulp_error(got, x, op)
print(json.dumps(out))
"""


def _has_avx2() -> bool:
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return " avx2" in flags and " fma" in flags


def _glibc_version() -> tuple[int, ...]:
    try:
        name = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.41"; not glibc: an error or None
    except (AttributeError, ValueError, OSError):
        return ()
    if not name or not name.startswith("glibc "):
        return ()
    return tuple(int(p) for p in name.split()[1].split(".")[:2])


def _skip_reason(capability: str) -> str | None:
    """Why this machine lacks a path, or None when it has it."""
    machine = os.uname().machine if hasattr(os, "uname") else ""
    if capability in ("sse", "avx2") and not (sys.platform == "linux" and machine == "x86_64"):
        return "the SSE/AVX2 libmvec paths exist on x86-64 Linux only"
    if capability == "avx2" and not _has_avx2():
        return "this CPU has no AVX2"
    if capability == "neon" and not (sys.platform == "linux" and machine == "aarch64" and _glibc_version() >= (2, 38)):
        return "the NEON libmvec path needs AArch64 Linux with glibc >= 2.38"
    return None


@pytest.mark.parametrize("capability", ["default", "sse", "avx2", "neon"])
def test_every_path(capability):
    reason = _skip_reason(capability)
    if reason:
        pytest.skip(reason)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, MINITORCH_CPU_CAPABILITY=capability)
    r = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps([here] + sys.path)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["capability"] == capability.upper()
    worst = {k: v for k, v in out["ulp"].items() if v > MAX_ULP}
    assert not worst, worst
