"""Shared test machinery: devices, hypothesis strategies, NumPy <-> minitorch helpers.

Every tensor test runs once per device (``cpu`` always; ``cuda`` is skipped, with a
reason, when minitorch cannot use a GPU) and compares against NumPy.

Test modules import the helpers directly: ``from conftest import DEVICES, shapes``.

A run ends with a few lines that count the skipped tests by what they need (a CUDA
device, PyTorch, a data set...) and say how to run them; ``-rs`` lists every reason.
"""
from __future__ import annotations

import collections
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch

# A modest default so the whole suite runs in well under a minute on two cores.
settings.register_profile(
    "minitorch",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("minitorch")

# The suite compares float32 results with NumPy at float32 tolerances: convolutions on a
# GPU would otherwise use TF32 (10 mantissa bits), PyTorch's default and minitorch's.
# tests/test_precision_switches.py tests the switches themselves.
minitorch.backends.cudnn.allow_tf32 = False

# Skip reasons: one wording each for what a machine may lack, so that -rs and the summary
# below group them (write `reason=CUDA_SKIP_REASON` or `pytest.importorskip("torch",
# reason=TORCH_SKIP_REASON)` in tests; other wordings of the same thing are mapped here too).
CUDA_SKIP_REASON = "needs a CUDA device: a GPU, or the CUDA emulator (MINITORCH_EMULATE_CUDA=1)"
TORCH_SKIP_REASON = "needs PyTorch to compare with (pip install torch)"
EMULATOR_SKIP_REASON = "tests the CUDA emulator itself: run with MINITORCH_EMULATE_CUDA=1"

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON),
    ),
]

# What a skip needed, from its reason (first match wins): (how the summary says it, the
# pattern of reasons, the one reason -rs shows for the whole kind or None to keep each).
SKIP_KINDS = [
    ("need a real CUDA GPU (cuBLAS, cuDNN, NVRTC): run them on a machine with one",
     re.compile(r"runs only on a real GPU|needs a (real )?(CUDA )?GPU(?!, or)|GPU build of|cuBLAS|cuDNN|NVRTC", re.I),
     None),
    ("need a CUDA device: run them on a GPU, or on the CPU with the CUDA emulator "
     "(MINITORCH_EMULATE_CUDA=1 python -m pytest ...)",
     re.compile(r"cuda device|CUDA not available|second device \(CUDA\)|GPU, or the CUDA emulator", re.I),
     CUDA_SKIP_REASON),
    ("need PyTorch, to compare with it: pip install torch",
     re.compile(r"needs PyTorch|PyTorch (is )?not installed|import '(safetensors\.)?torch'", re.I), TORCH_SKIP_REASON),
    ("need a data set: MINITORCH_DATA=DIR for MNIST; apt-get install dataset-fashion-mnist",
     re.compile(r"MINITORCH_DATA|is absent", re.I), None),
    ("need an optional package or tool",
     re.compile(r"could not import|not installed|not found|pip install|apt-get install|no host C\+\+ compiler", re.I),
     None),
    ("test the CUDA emulator itself: MINITORCH_EMULATE_CUDA=1 python -m pytest ...",
     re.compile(r"emulat", re.I), EMULATOR_SKIP_REASON),
]
OTHER_SKIPS = "skipped for other reasons"


def launches(fn) -> list:
    """The kernels fn launches (the profiler's kernel records), as the source names them,
    without spaces (the emulated build's names of kernel<T, true> have none, nvcc's keep the
    source's). Tests count launches instead of timing."""
    from minitorch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.replace(" ", "") for e in prof.events() for k in e.kernels]


def _skip_reason(report) -> str | None:
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return None


def _skip_kind(reason: str):
    return next((kind for kind in SKIP_KINDS if kind[1].search(reason)), None)


def _group_skip(report) -> None:
    """Files a skip for want of a CUDA device, the emulator or PyTorch under one place and
    one wording, so ``-rs`` prints each as a single line with a count instead of one line
    per test function and wording."""
    reason = _skip_reason(report)
    kind = _skip_kind(reason) if reason is not None else None
    if kind is not None and kind[2] is not None:
        report.longrepr = (__file__, _REASON_LINES[kind[2]], f"Skipped: {kind[2]}")


def pytest_collection_modifyitems(config, items):
    """A test skipped for want of a CUDA device (a skipif whose reason names CUDA, such as
    CUDA_SKIP_REASON) gets the marker ``needs_cuda``, so that ``-k "cuda or devices"`` (the
    emulated runs of .ci/run) selects it even when "cuda" is in none of its names.

    Tests marked ``switches_emulator_on`` (check_kernel switches the CUDA emulator on in its
    process, and it cannot be switched off) go last. Before, the tests that check for CUDA when
    they run (``if not minitorch.cuda.is_available(): pytest.skip(...)``) ran or skipped by
    whether their pytest-xdist worker had run a check_kernel test before them: the README's
    command passed a different number of tests from one run to the next. Last in the order,
    they are also last in each worker (xdist hands the tests out in this order)."""
    for item in items:
        if any("cuda" in str(m.kwargs.get("reason", "")).lower() for m in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.needs_cuda)
    items.sort(key=lambda item: item.get_closest_marker("switches_emulator_on") is not None)  # stable


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _group_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped when it is imported (``pytest.importorskip``)."""
    outcome = yield
    _group_skip(outcome.get_result())


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """A few lines on what the skipped tests need and how to run them, by kind; ``-rs``
    lists every reason."""
    reasons = [r for r in map(_skip_reason, terminalreporter.stats.get("skipped", [])) if r is not None]
    if not reasons:
        return
    counts = collections.Counter(kind[0] if kind else OTHER_SKIPS for kind in map(_skip_kind, reasons))
    ran = sum(len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "error", "xfailed", "xpassed"))
    terminalreporter.write_sep("-", "skipped tests")
    terminalreporter.write_line(f"{len(reasons)} of {ran + len(reasons)} tests skipped, as expected where a machine "
                                "lacks what they need (python -m pytest -rs lists every reason):")
    width = len(str(max(counts.values())))
    for text, n in counts.most_common():
        terminalreporter.write_line(f"  {n:>{width}} {text}")


# The lines -rs shows for the grouped skips: where their reasons are defined.
with open(__file__, encoding="utf-8") as _f:
    _LINES = _f.read().splitlines()
_REASON_LINES = {reason: next(i for i, line in enumerate(_LINES, 1) if line.startswith(f"{name} ="))
                 for name, reason in (("CUDA_SKIP_REASON", CUDA_SKIP_REASON), ("TORCH_SKIP_REASON", TORCH_SKIP_REASON),
                                      ("EMULATOR_SKIP_REASON", EMULATOR_SKIP_REASON))}


@pytest.fixture(autouse=True)
def _no_emulator_reports():
    """In the emulated CUDA build, a kernel that misuses barriers or shuffles makes the
    emulator print a report (it may still compute the right numbers): fail the test."""
    before = minitorch._C._cuda_emulator_diagnostics()
    yield
    after = minitorch._C._cuda_emulator_diagnostics()
    assert after == before, f"the CUDA emulator reported {after - before} kernel problem(s); see stderr"


@pytest.fixture(params=DEVICES, scope="session")
def device(request) -> str:
    """The device a test runs on; session-scoped so hypothesis tests may use it too."""
    return request.param


# ---------------------------------------------------------------- strategies ----

MAX_SIDE = 5


def shapes(min_dims: int = 1, max_dims: int = 4, min_side: int = 0, max_side: int = MAX_SIDE):
    """Shapes of 1-4 dims with sizes 0..5 (so size-0 and size-1 dims both appear)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def nonempty_shapes(min_dims: int = 1, max_dims: int = 4, max_side: int = MAX_SIDE):
    return shapes(min_dims, max_dims, min_side=1, max_side=max_side)


def broadcastable_pairs(min_dims: int = 1, max_dims: int = 4, min_side: int = 0, max_side: int = MAX_SIDE):
    """Pairs of shapes that broadcast together (NumPy's rule), e.g. ((3, 1, 4), (2, 1))."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    ).map(lambda b: b.input_shapes)


seeds = st.integers(0, 2**32 - 1)

LAYOUTS = ["contiguous", "step", "transpose"]


# ------------------------------------------------------------------ helpers ----

def random_array(seed: int, shape, dtype, low: float = -10.0, high: float = 10.0) -> np.ndarray:
    """Reproducible random values of ``dtype`` in [low, high)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def to_numpy(t: minitorch.Tensor) -> np.ndarray:
    """A NumPy copy of a tensor on any device."""
    return np.array(t.detach().cpu().numpy(), copy=True)


def noncontiguous(arr: np.ndarray, device: str = "cpu", how: str = "step") -> minitorch.Tensor:
    """A minitorch tensor holding ``arr``'s values that is a NON-contiguous view.

    how="step": the values sit at odd positions of a bigger tensor and we take
    ``big[1::2, 1::2, ...]`` (strides of 2 and a storage offset).
    how="transpose": a reversed-dims copy, permuted back (``.T``-style strides).
    """
    arr = np.asarray(arr)
    if how == "step":
        big_shape = tuple(2 * s + 1 for s in arr.shape)
        sentinel = True if arr.dtype == np.bool_ else 77
        big = np.full(big_shape, sentinel, dtype=arr.dtype)
        idx = tuple(slice(1, None, 2) for _ in arr.shape)
        big[idx] = arr
        t = minitorch.tensor(big, device=device)[idx]
    elif how == "transpose":
        rev = tuple(range(arr.ndim))[::-1]
        t = minitorch.tensor(np.ascontiguousarray(arr.transpose(rev)), device=device).permute(*rev)
    else:
        raise ValueError(how)
    assert tuple(t.shape) == arr.shape
    # A tensor with <= 1 element, or only one non-1 dim under a transpose, is contiguous
    # by definition; anything bigger must really be strided.
    non1 = sum(s != 1 for s in arr.shape)
    if arr.size >= 2 and (how == "step" or non1 >= 2):
        assert not t.is_contiguous(), (how, arr.shape, t.stride())
    np.testing.assert_array_equal(to_numpy(t), arr)
    return t


def make_tensor(arr: np.ndarray, layout: str = "contiguous", device: str = "cpu") -> minitorch.Tensor:
    """``arr`` as a minitorch tensor in the given layout (see ``LAYOUTS``)."""
    if layout == "contiguous":
        t = minitorch.tensor(np.asarray(arr), device=device)
        assert t.is_contiguous()
        return t
    return noncontiguous(arr, device, layout)


MT_DTYPES = {
    np.dtype(np.float32): minitorch.float32,
    np.dtype(np.float64): minitorch.float64,
    np.dtype(np.int64): minitorch.int64,
    np.dtype(np.bool_): minitorch.bool,
}


def assert_tensor_equal(t: minitorch.Tensor, expected, *, rtol: float = 0.0, atol: float = 0.0, dtype=None):
    """Shape, dtype (that of ``expected`` unless given) and values of ``t``.

    NaNs compare equal to NaNs.
    """
    expected = np.asarray(expected)
    want_dtype = MT_DTYPES[np.dtype(dtype)] if dtype is not None else MT_DTYPES[expected.dtype]
    assert isinstance(t, minitorch.Tensor), type(t)
    assert t.dtype == want_dtype, f"dtype {t.dtype} != {want_dtype}"
    got = to_numpy(t)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


# Tolerances per dtype for results computed by different but correct algorithms.
TOL = {
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-6),
    np.dtype(np.float64): dict(rtol=1e-12, atol=1e-12),
    np.dtype(np.int64): dict(),
    np.dtype(np.bool_): dict(),
}
