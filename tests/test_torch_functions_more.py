"""More of torch's names, from existing ops: ``ravel`` / ``Tensor.where``, ``isin``, ``logspace``,
``randint_like``, the spectral windows, ``dist``, ``fill_diagonal_``, the random fills
(``random_``, ``exponential_``, ``geometric_``, ``cauchy_``, ``log_normal_``), the in-place
comparisons, logical and bitwise ops, ``cumsum_`` / ``cumprod_`` / ``tril_`` / ``triu_``,
``sum_to_size``, ``new_empty_strided``, ``is_signed`` / ``is_complex`` / ``is_same_size`` /
``is_inference``, ``positive``, ``prelu``, ``hardshrink``, ``rsub``, the deprecated ``range``,
torch's in-place functions (``minitorch.exp_``...) and torch's forms of nn.functional ops
(``minitorch.conv2d``, ``minitorch.batch_norm``...).

NumPy (and SciPy's windows, when it is installed) is the reference, on every device; the
differentiable ones get a float64 gradcheck; the random draws are checked for their range,
their reproducibility under ``manual_seed`` and their moments on 10^5 draws (fixed seeds);
with PyTorch importable, its results are compared directly.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import TORCH_SKIP_REASON
from minitorch.ops.declarations import INPLACE_FUNCTIONS
from minitorch.testing import gradcheck

N_DRAWS = 100_000


def T(a, device="cpu", dtype=None, grad=False):
    return minitorch.tensor(a, device=device, dtype=dtype, requires_grad=grad)


def npy(t) -> np.ndarray:
    t = t.detach()
    return (t.double() if t.dtype == minitorch.bfloat16 else t).cpu().numpy()


def leaf64(arr, device="cpu"):
    return minitorch.tensor(np.asarray(arr, dtype=np.float64), device=device, requires_grad=True)


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ ravel, Tensor.where ----

def test_ravel_and_tensor_where(device):
    x = np.arange(12.0).reshape(3, 4)
    t = T(x, device)
    r = minitorch.ravel(t)
    np.testing.assert_array_equal(npy(r), x.ravel())
    assert r.data_ptr() == t.data_ptr()  # a view of a contiguous tensor
    np.testing.assert_array_equal(npy(t.t().ravel()), x.T.ravel())  # a copy of a transposed one
    assert T(5.0, device).ravel().shape == (1,) and T(np.zeros((2, 0)), device).ravel().shape == (0,)
    cond = x % 3 == 0
    np.testing.assert_array_equal(npy(t.where(T(cond, device), -1.0)), np.where(cond, x, -1.0))
    y = np.arange(4.0) * 10
    np.testing.assert_array_equal(npy(t.where(T(cond, device), T(y, device))), np.where(cond, x, y))
    assert minitorch.where is minitorch._C.where  # the function stays C++: where(condition, input, other)


def test_where_method_gradient():
    cond = T([[True, False, True]])
    assert gradcheck(lambda a, b: a.where(cond, b), (leaf64([[1.0, 2.0, 3.0]]), leaf64([[4.0], [5.0]])))


# ------------------------------------------------------------------------------- isin ----

@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.int32])
def test_isin_matches_numpy(device, dtype):
    r = rng(1)
    elements = r.integers(-5, 6, (4, 5)).astype(dtype)
    tests = r.integers(-5, 6, (3, 2)).astype(dtype)
    for invert in (False, True):
        got = minitorch.isin(T(elements, device), T(tests, device), invert=invert)
        assert got.dtype == minitorch.bool and got.shape == (4, 5)
        np.testing.assert_array_equal(npy(got), np.isin(elements, tests, invert=invert))
    got = minitorch.isin(T(elements, device), T(tests, device), assume_unique=True)
    np.testing.assert_array_equal(npy(got), np.isin(elements, tests))


def test_isin_scalars_promotion_and_edges(device):
    x = T([1, 2, 3], device)
    np.testing.assert_array_equal(npy(minitorch.isin(x, T([1.0, 3.5], device))), [True, False, False])
    np.testing.assert_array_equal(npy(minitorch.isin(T([1.0, 2.0], device), T([1, 2], device))), [True, True])
    assert minitorch.isin(2, x).item() is True and minitorch.isin(7, x).shape == ()
    np.testing.assert_array_equal(npy(minitorch.isin(x, 2)), [False, True, False])
    np.testing.assert_array_equal(npy(minitorch.isin(x, 2.5)), [False, False, False])
    np.testing.assert_array_equal(npy(minitorch.isin(x, 2, invert=True)), [True, False, True])
    empty = T(np.zeros(0, dtype=np.int64), device)
    np.testing.assert_array_equal(npy(minitorch.isin(x, empty)), [False] * 3)
    np.testing.assert_array_equal(npy(minitorch.isin(x, empty, invert=True)), [True] * 3)
    assert minitorch.isin(empty, x).shape == (0,)
    nan = float("nan")
    np.testing.assert_array_equal(npy(minitorch.isin(T([nan, 2.0], device), T([nan, 2.0], device))), [False, True])
    with pytest.raises(TypeError, match="Bool"):
        minitorch.isin(T([True], device), T([True], device))
    with pytest.raises(TypeError, match="test_elements"):
        minitorch.isin(x, [1, 2])
    with pytest.raises(TypeError):
        minitorch.isin(1, 2)
    assert not hasattr(minitorch.Tensor, "isin")  # a function only, as in PyTorch


# ------------------------------------------------------------------ logspace, randint_like ----

@pytest.mark.parametrize(("start", "end", "steps", "base"), [(0, 2, 3, 10.0), (-1.5, 2.0, 7, 2.0), (1, 1, 4, 10.0),
                                                             (2, -1, 5, 3.0), (0, 1, 1, 10.0), (0, 1, 0, 10.0)])
def test_logspace_matches_numpy(device, start, end, steps, base):
    for dtype, npdt in ((minitorch.float32, np.float32), (minitorch.float64, np.float64)):
        got = minitorch.logspace(start, end, steps, base, dtype=dtype, device=device)
        assert got.dtype == dtype and got.shape == (steps,)
        np.testing.assert_allclose(npy(got), np.logspace(start, end, steps, base=base).astype(npdt), rtol=1e-6)
    assert minitorch.logspace(start, end, steps, base=base, device=device).dtype == minitorch.get_default_dtype()


def test_logspace_integers_negative_base_and_errors(device):
    np.testing.assert_array_equal(npy(minitorch.logspace(0, 2, 3, dtype=minitorch.int64, device=device)), [1, 10, 100])
    # 10 ** 0.5 truncated, as PyTorch's cast to an integer dtype
    np.testing.assert_array_equal(npy(minitorch.logspace(0, 1, 3, dtype=minitorch.int64, device=device)), [1, 3, 10])
    np.testing.assert_array_equal(npy(minitorch.logspace(0, 3, 4, base=-2, device=device)), [1, -2, 4, -8])
    t = minitorch.logspace(0, 1, 3, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        minitorch.logspace(0, 1, -1)
    with pytest.raises(TypeError, match="steps"):
        minitorch.logspace(0, 1, 2.5)


def test_randint_like_both_forms(device):
    x = minitorch.zeros(N_DRAWS, device=device)
    minitorch.manual_seed(3)
    a = minitorch.randint_like(x, 7)
    minitorch.manual_seed(3)
    b = minitorch.randint_like(x, high=7)
    assert a.dtype == minitorch.float32 and a.device == x.device and minitorch.equal(a, b)
    v = npy(a)
    assert set(np.unique(v)) == set(range(7)) and abs(v.mean() - 3.0) < 0.05
    v = npy(minitorch.randint_like(x, -3, 4, dtype=minitorch.int64))
    assert v.dtype == np.int64 and v.min() == -3 and v.max() == 3 and abs(v.mean()) < 0.05
    v = npy(minitorch.randint_like(minitorch.zeros(1000, dtype=minitorch.bool, device=device), 2))
    assert v.dtype == np.bool_ and 0 < v.mean() < 1
    assert minitorch.randint_like(x[:0], 5).shape == (0,)
    g = minitorch.randint_like(minitorch.zeros(3, device=device), 5, requires_grad=True)
    assert g.requires_grad
    with pytest.raises(TypeError, match="high"):
        minitorch.randint_like(x)
    with pytest.raises(RuntimeError, match="'from' to be less than 'to'"):
        minitorch.randint_like(x, 5, 2)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for int8"):
        minitorch.randint_like(minitorch.zeros(3, dtype=minitorch.int8), 300)
    with pytest.raises(RuntimeError, match="floating point"):
        minitorch.randint_like(minitorch.zeros(3, dtype=minitorch.int64), 5, requires_grad=True)


# ------------------------------------------------------------------------------ windows ----

def _symmetric(name, n, **kw):
    """The closed formulas (the symmetric window of length n >= 2)."""
    k = np.arange(n, dtype=np.float64)
    c = np.cos(2 * np.pi * k / (n - 1))
    if name == "hann_window":
        return 0.5 - 0.5 * c
    if name == "hamming_window":
        return kw.get("alpha", 0.54) - kw.get("beta", 0.46) * c
    if name == "blackman_window":
        return 0.42 - 0.5 * c + 0.08 * np.cos(4 * np.pi * k / (n - 1))
    if name == "bartlett_window":
        return 1 - np.abs(2 * k / (n - 1) - 1)
    a = (n - 1) / 2
    return np.i0(kw.get("beta", 12.0) * np.sqrt(1 - ((k - a) / a) ** 2)) / np.i0(kw.get("beta", 12.0))


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 8, 11])
def test_windows_match_their_formulas(device, name, length):
    fn = getattr(minitorch, name)
    for periodic in (True, False):
        got = fn(length, periodic, dtype=minitorch.float64, device=device)
        assert got.shape == (length,) and got.dtype == minitorch.float64 and got.device.type == device
        if length <= 1:
            want = np.ones(length)
        else:
            want = _symmetric(name, length + 1)[:length] if periodic else _symmetric(name, length)
        np.testing.assert_allclose(npy(got), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(npy(fn(length, device=device)), npy(fn(length, True, device=device)))
    assert fn(length).dtype == minitorch.get_default_dtype()


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_symmetric_ones_are_numpys(name):
    numpy_fn = {"hann_window": np.hanning, "hamming_window": np.hamming, "blackman_window": np.blackman,
                "bartlett_window": np.bartlett, "kaiser_window": lambda n: np.kaiser(n, 12.0)}[name]
    for n in (2, 5, 16):
        np.testing.assert_allclose(npy(getattr(minitorch, name)(n, False, dtype=minitorch.float64)), numpy_fn(n),
                                   atol=1e-12)


def test_window_parameters_dtypes_and_errors(device):
    got = minitorch.hamming_window(6, False, 0.5, 0.5, device=device, dtype=minitorch.float64)
    np.testing.assert_allclose(npy(got), np.hanning(6), atol=1e-12)
    got = minitorch.kaiser_window(9, periodic=False, beta=5.0, dtype=minitorch.float64, device=device)
    np.testing.assert_allclose(npy(got), np.kaiser(9, 5.0), atol=1e-12)
    for dtype in (minitorch.float16, minitorch.bfloat16, minitorch.float32):
        got = minitorch.hann_window(7, dtype=dtype, device=device)
        assert got.dtype == dtype
        np.testing.assert_allclose(npy(got), _symmetric("hann_window", 8)[:7], atol=1e-2)
    w = minitorch.blackman_window(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
        minitorch.hann_window(4, dtype=minitorch.int64)
    with pytest.raises(RuntimeError, match="requires non-negative window_length"):
        minitorch.bartlett_window(-1)
    with pytest.raises(TypeError):
        minitorch.kaiser_window(4.0)


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett"])
def test_windows_match_scipy(name):
    signal = pytest.importorskip("scipy.signal")
    for n in (1, 2, 7, 16):
        for periodic in (True, False):
            got = getattr(minitorch, name + "_window")(n, periodic, dtype=minitorch.float64)
            np.testing.assert_allclose(npy(got), signal.get_window(name, n, fftbins=periodic), atol=1e-12)
    got = minitorch.kaiser_window(10, True, 8.0, dtype=minitorch.float64)
    np.testing.assert_allclose(npy(got), signal.get_window(("kaiser", 8.0), 10, fftbins=True), atol=1e-12)


# --------------------------------------------------------------------------------- dist ----

@pytest.mark.parametrize("p", [2, 1, 0, 3.5, 0.5, math.inf, -math.inf, -1.5])
def test_dist_is_the_norm_of_the_broadcast_difference(device, p):
    r = rng(2)
    a, b = r.normal(size=(3, 1, 4)), r.normal(size=(2, 1))
    b[0, 0] = a[0, 0, 0]  # a zero difference (for p = 0 and p < 0 too)
    diff = (a - b).ravel()
    if p == 0:
        want = np.count_nonzero(diff)
    else:
        with np.errstate(divide="ignore"):  # p < 0: |0| ** p is inf, and the norm 0
            want = np.sum(np.abs(diff) ** p) ** (1 / p) if math.isfinite(p) else np.linalg.norm(diff, ord=p)
    for dtype in (minitorch.float32, minitorch.float64):
        got = minitorch.dist(T(a, device, dtype), T(b, device, dtype), p)
        assert got.shape == () and got.dtype == dtype
        np.testing.assert_allclose(npy(got), want, rtol=1e-5)
    np.testing.assert_allclose(npy(T(a, device).dist(T(b, device), p)), want, rtol=1e-5)


def test_dist_gradient_dtypes_and_errors(device):
    r = rng(3)
    for p in (2, 1.5, 3, math.inf):
        assert gradcheck(lambda x, y: minitorch.dist(x, y, p), (leaf64(r.normal(size=(2, 3)), device),
                                                                  leaf64(r.normal(size=(3,)), device)))
    x = leaf64([1.0, 2.0], device)
    minitorch.dist(x, T([1.0, 2.0], device, minitorch.float64)).backward()
    np.testing.assert_array_equal(npy(x.grad), [0.0, 0.0])  # zero difference: a zero gradient
    assert minitorch.dist(T([1.0], device), T([2.0], device, minitorch.float64)).dtype == minitorch.float64
    with pytest.raises(TypeError, match="floating point"):
        minitorch.dist(T([1, 2], device), T([3, 4], device))
    with pytest.raises(TypeError, match="other"):
        minitorch.dist(T([1.0], device), 3.0)


# ------------------------------------------------------------------------ fill_diagonal_ ----

@pytest.mark.parametrize("shape", [(3, 3), (7, 3), (8, 3), (4, 3), (3, 7), (0, 3), (1, 1), (2, 2, 2), (3, 3, 3, 3)])
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_matches_numpy(device, shape, wrap):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    want = x.copy()
    np.fill_diagonal(want, -5.0, wrap=wrap)
    t = T(x, device)
    v = t._version
    assert t.fill_diagonal_(-5.0, wrap) is t and t._version == v + (t.numel() > 0)
    np.testing.assert_array_equal(npy(t), want)


def test_fill_diagonal_values_views_gradient_and_errors(device):
    t = T(np.zeros((3, 3), dtype=np.int64), device)
    np.testing.assert_array_equal(npy(t.fill_diagonal_(2.7)), np.eye(3, dtype=np.int64) * 2)  # truncated
    base = T(np.zeros((4, 6)), device)
    base[:, 1:4].fill_diagonal_(1.0)  # a view: only its diagonal of base is written
    want = np.zeros((4, 6))
    want[[0, 1, 2], [1, 2, 3]] = 1.0
    np.testing.assert_array_equal(npy(base), want)
    a = leaf64(np.ones((3, 3)), device)
    h = a * 2
    h.fill_diagonal_(0.0, wrap=False)
    (h * 3).sum().backward()
    np.testing.assert_array_equal(npy(a.grad), 3 * 2 * (1 - np.eye(3)))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        a.fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        T([1.0, 2.0], device).fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        T(np.zeros((2, 3, 2)), device).fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="more than one element"):
        T([1.0, 2.0], device).expand(2, 2).fill_diagonal_(0.0)


# ------------------------------------------------------------------------- random fills ----

def test_random_fills_are_reproducible(device):
    for fill in (lambda x: x.random_(), lambda x: x.random_(100), lambda x: x.random_(-5, 5),
                 lambda x: x.exponential_(2.0), lambda x: x.geometric_(0.3), lambda x: x.cauchy_(1.0, 2.0),
                 lambda x: x.log_normal_(0.0, 0.5)):
        minitorch.manual_seed(7)
        a = fill(minitorch.empty(1000, device=device))
        minitorch.manual_seed(7)
        b = fill(minitorch.empty(1000, device=device))
        c = fill(minitorch.empty(1000, device=device))
        assert minitorch.equal(a, b) and not minitorch.equal(b, c)
    gen_draws = [minitorch.empty(100, device=device).exponential_(generator=minitorch.Generator(5)) for _ in range(2)]
    assert minitorch.equal(*gen_draws)
    gen_draws = [minitorch.empty(100, device=device).random_(3, 9, generator=minitorch.Generator(5)) for _ in range(2)]
    assert minitorch.equal(*gen_draws) and npy(gen_draws[0]).min() >= 3 and npy(gen_draws[0]).max() <= 8


# (dtype, the default range of random_(): [0, 2**mantissa] for floats, [0, max] for integers)
DEFAULT_RANGES = [(minitorch.float32, 2 ** 24), (minitorch.float64, 2 ** 53), (minitorch.float16, 2 ** 11),
                  (minitorch.bfloat16, 2 ** 8), (minitorch.int64, 2 ** 63 - 1), (minitorch.int32, 2 ** 31 - 1),
                  (minitorch.int16, 2 ** 15 - 1), (minitorch.int8, 127), (minitorch.uint8, 255), (minitorch.bool, 1)]


@pytest.mark.parametrize(("dtype", "top"), DEFAULT_RANGES, ids=lambda v: getattr(v, "name", str(v)))
def test_random_default_ranges_per_dtype(device, dtype, top):
    minitorch.manual_seed(11)
    x = minitorch.zeros(20000, dtype=dtype, device=device)
    assert x.random_() is x and x.dtype == dtype
    v = npy(x).astype(np.float64) if dtype != minitorch.int64 else npy(x)
    assert v.min() >= 0 and v.max() <= top
    if top < 20000:  # small ranges: every value, about equally often
        counts = np.bincount(v.astype(np.int64), minlength=top + 1)
        assert len(counts) == top + 1 and counts.min() > 0
    else:
        assert abs(float(v.mean()) / top - 0.5) < 0.02


def test_random_ranges_and_bounds(device):
    minitorch.manual_seed(0)
    v = npy(minitorch.empty(N_DRAWS, device=device).random_(10))
    assert set(np.unique(v)) == set(range(10)) and abs(v.mean() - 4.5) < 0.05
    v = npy(minitorch.empty(N_DRAWS, dtype=minitorch.int64, device=device).random_(-7, 3))
    assert v.min() == -7 and v.max() == 2 and abs(v.mean() + 2.5) < 0.05
    v = npy(minitorch.empty(N_DRAWS, dtype=minitorch.int64, device=device).random_(to=4))
    assert set(np.unique(v)) == {0, 1, 2, 3}
    v = npy(minitorch.empty(1000, dtype=minitorch.int8, device=device).random_(100, None))
    assert v.min() >= 100 and v.max() <= 127
    big = 2 ** 62
    v = npy(minitorch.empty(1000, dtype=minitorch.int64, device=device).random_(big, None))
    assert v.min() >= big and abs(float(v.astype(np.float64).mean()) / big - 1.5) < 0.05
    full = npy(minitorch.empty(N_DRAWS, dtype=minitorch.int64, device=device).random_(-2 ** 63, None))
    assert (full < 0).mean() == pytest.approx(0.5, abs=0.01) and abs(float(full.astype(np.float64).mean())) < 2 ** 57
    wide = npy(minitorch.empty(N_DRAWS, dtype=minitorch.int64, device=device).random_(-2 ** 60, 2 ** 60))
    assert wide.min() >= -2 ** 60 and wide.max() < 2 ** 60 and abs(float(wide.astype(np.float64).mean())) < 2 ** 55
    assert minitorch.empty(0, device=device).random_().shape == (0,)


def test_random_errors(device):
    x = minitorch.empty(3, device=device)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=2"):
        x.random_(5, 2)
    with pytest.raises(RuntimeError, match="from=0 >= to=-5"):
        x.random_(-5)  # one argument is `to`
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for int8"):
        minitorch.empty(3, dtype=minitorch.int8, device=device).random_(0, 300)
    with pytest.raises(RuntimeError, match="from is out of bounds for uint8"):
        minitorch.empty(3, dtype=minitorch.uint8, device=device).random_(-1, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for bool"):
        minitorch.empty(3, dtype=minitorch.bool, device=device).random_(0, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for float16"):
        minitorch.empty(3, dtype=minitorch.float16, device=device).random_(0, 70000)
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        x.random_(0, 2 ** 25)
    with pytest.raises(TypeError):
        x.random_(2.5)
    with pytest.raises(TypeError):
        x.random_(**{"from": 5})  # `from` alone is none of PyTorch's forms
    with pytest.raises(RuntimeError, match="leaf Variable"):
        minitorch.ones(3, requires_grad=True, device=device).random_()


def test_continuous_fills_moments(device):
    minitorch.manual_seed(1)
    for dtype in (minitorch.float32, minitorch.float64):
        lam = 2.5
        v = npy(minitorch.empty(N_DRAWS, dtype=dtype, device=device).exponential_(lam))
        assert v.min() >= 0 and abs(v.mean() - 1 / lam) < 0.01 and abs(v.std() - 1 / lam) < 0.01
        v = npy(minitorch.empty(N_DRAWS, dtype=dtype, device=device).cauchy_(1.5, 2.0))
        q1, med, q3 = np.percentile(v, [25, 50, 75])
        assert abs(med - 1.5) < 0.05 and abs((q3 - q1) - 4.0) < 0.1  # the quartiles are median -+ sigma
        v = npy(minitorch.empty(N_DRAWS, dtype=dtype, device=device).log_normal_(0.5, 0.25))
        assert v.min() > 0 and abs(np.log(v).mean() - 0.5) < 0.01 and abs(np.log(v).std() - 0.25) < 0.01
        v = npy(minitorch.empty(N_DRAWS, dtype=dtype, device=device).log_normal_())  # mean 1, std 2
        assert abs(np.log(v).mean() - 1.0) < 0.05 and abs(np.log(v).std() - 2.0) < 0.05
    for dtype in (minitorch.float32, minitorch.int64, minitorch.uint8):
        v = npy(minitorch.empty(N_DRAWS, dtype=dtype, device=device).geometric_(0.2)).astype(np.float64)
        assert v.min() >= 1 and np.all(v == np.round(v))
        assert abs(v.mean() - 5.0) < (0.1 if dtype != minitorch.uint8 else 0.2)  # 1 / p
        assert abs((v == 1).mean() - 0.2) < 0.01
    v = npy(minitorch.empty(1000, dtype=minitorch.float16, device=device).exponential_())
    assert np.isfinite(v).all() and v.min() >= 0


def test_continuous_fills_errors_and_graphs(device):
    x = minitorch.empty(3, device=device)
    for call, message in ((lambda: x.exponential_(0.0), "lambda > 0.0"), (lambda: x.exponential_(-1.0), "lambda > 0"),
                          (lambda: x.geometric_(1.0), r"p to be in \(0, 1\)"),
                          (lambda: x.geometric_(0.0), r"p to be in \(0, 1\)"),
                          (lambda: x.cauchy_(0.0, 0.0), "sigma > 0.0"), (lambda: x.log_normal_(1.0, 0.0), "std > 0.0")):
        with pytest.raises(RuntimeError, match=message):
            call()
    ints = minitorch.zeros(3, dtype=minitorch.int64, device=device)
    for fill in (ints.exponential_, ints.cauchy_, ints.log_normal_):
        with pytest.raises(RuntimeError):
            fill()
    with pytest.raises(RuntimeError):
        minitorch.zeros(3, dtype=minitorch.bool, device=device).geometric_(0.5)
    a = leaf64(np.ones(4), device)
    for fill in (lambda h: h.exponential_(), lambda h: h.random_(5), lambda h: h.geometric_(0.5)):
        h = a * 2
        fill(h)
        h.sum().backward()  # the old values get a zero gradient, as in PyTorch
        np.testing.assert_array_equal(npy(a.grad), np.zeros(4))
        a.grad = None
    x = minitorch.empty(4, 5, device=device)
    v = x._version
    x.t().exponential_()  # strided: drawn aside and written in
    assert x._version == v + 1 and (npy(x) >= 0).all()


# --------------------------------------------------------------- in-place comparisons etc. ----

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
               "ge": np.greater_equal}
ALIASES = {"greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_", "less_equal_": "le_", "not_equal_": "ne_"}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8])
def test_comparisons_in_place_write_ones_and_zeros(device, name, dtype):
    r = rng(4)
    a = r.integers(0, 4, (3, 4)).astype(dtype)
    b = r.integers(0, 4, (4,)).astype(dtype)
    want = COMPARISONS[name](a, b).astype(dtype)
    for other in (T(b, device), 2):
        t = T(a, device)
        ptr, v = t.data_ptr(), t._version
        assert getattr(t, name + "_")(other) is t
        assert t.dtype == T(a).dtype and t.data_ptr() == ptr and t._version == v + 1
        expected = want if isinstance(other, minitorch.Tensor) else COMPARISONS[name](a, 2).astype(dtype)
        np.testing.assert_array_equal(npy(t), expected)
    t = T(np.array([1.5, 2.0, 3.0]), device)  # a float operand into an integer tensor: still 0 / 1
    i = T(np.array([1, 2, 3]), device)
    np.testing.assert_array_equal(npy(getattr(i, name + "_")(t)), COMPARISONS[name]([1, 2, 3], [1.5, 2.0, 3.0]))


def test_comparison_aliases_and_errors(device):
    for alias, name in ALIASES.items():
        assert getattr(minitorch.Tensor, alias) is getattr(minitorch.Tensor, name)
    t = T([1.0, 2.0, 3.0], device)
    np.testing.assert_array_equal(npy(t.greater_(1.5)), [0.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match=r"eq_: output with shape \(3,\) doesn't match the broadcast shape"):
        T([1.0, 2.0, 3.0], device).eq_(minitorch.ones(2, 3, device=device))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        minitorch.ones(3, requires_grad=True, device=device).lt_(0)
    with pytest.raises(RuntimeError, match="more than one element"):
        minitorch.ones(3, device=device).expand(2, 3).ge_(0)


def test_comparison_in_place_keeps_a_zero_gradient(device):
    a, b = leaf64([1.0, 2.0, 3.0], device), leaf64([2.0, 2.0, 2.0], device)
    h = a * 1
    h.lt_(b)
    assert h.requires_grad and h.grad_fn is not None
    (h * 5).sum().backward()
    np.testing.assert_array_equal(npy(a.grad), np.zeros(3))
    np.testing.assert_array_equal(npy(b.grad), np.zeros(3))
    h = a * 1
    saved = h * h  # saves h's old values
    h.eq_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.sum().backward()


LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}


@pytest.mark.parametrize("name", sorted(LOGICAL) + sorted(BITWISE))
def test_logical_and_bitwise_in_place(device, name):
    r = rng(5)
    fn = {**LOGICAL, **BITWISE}[name]
    dtypes = [np.int64, np.int32, np.uint8, np.bool_] + ([np.float32, np.float64] if name in LOGICAL else [])
    for dtype in dtypes:
        a = r.integers(0, 4, (2, 5)).astype(dtype)
        b = r.integers(0, 4, (5,)).astype(dtype)
        t = T(a, device)
        assert getattr(t, name + "_")(T(b, device)) is t and t.dtype == T(a).dtype
        np.testing.assert_array_equal(npy(t), fn(a, b).astype(dtype))
    with pytest.raises(RuntimeError, match=r"output with shape \(2,\) doesn't match the broadcast shape \(2, 2\)"):
        getattr(T([True, False], device), name + "_")(minitorch.ones(2, 2, dtype=minitorch.bool, device=device))
    if name in BITWISE:
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type bool"):
            getattr(T([True, False], device), name + "_")(T([1, 3], device))
        with pytest.raises(TypeError):
            getattr(T([1.0], device), name + "_")(T([1.0], device))


def test_scans_and_triangles_in_place(device):
    x = np.arange(1.0, 13.0).reshape(3, 4)
    for name, want in (("cumsum_", np.cumsum(x, 1)), ("cumprod_", np.cumprod(x, 1))):
        t = T(x, device)
        v = t._version
        assert getattr(t, name)(1) is t and t._version == v + 1
        np.testing.assert_allclose(npy(t), want)
        assert getattr(T(x, device), name)(dim=-1) is not None
    i = T(np.array([1, 2, 3], dtype=np.int32), device)
    np.testing.assert_array_equal(npy(i.cumsum_(0)), [1, 3, 6])
    assert i.dtype == minitorch.int32
    with pytest.raises(RuntimeError, match="Bad in-place call"):
        T(x, device, minitorch.float32).cumsum_(0, dtype=minitorch.float64)
    with pytest.raises(RuntimeError):
        T([True, False], device).cumsum_(0)
    for name, fn in (("tril_", np.tril), ("triu_", np.triu)):
        for k in (0, 1, -1):
            t = T(x, device)
            assert getattr(t, name)(k) is t
            np.testing.assert_array_equal(npy(t), fn(x, k))
    a = leaf64(x, device)
    h = a * 2
    h.cumsum_(1)
    h.tril_()
    h.sum().backward()
    want = 2 * np.cumsum(np.tril(np.ones((3, 4)))[:, ::-1], 1)[:, ::-1]  # d/dx of sum(tril(cumsum(2x)))
    np.testing.assert_allclose(npy(a.grad), want)


# ------------------------------------------ sum_to_size, new_empty_strided, is_* questions ----

@pytest.mark.parametrize(("shape", "size"), [((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), (3,)),
                                             ((4, 2, 3), (2, 1)), ((2, 3), (2, 3)), ((2, 3), ()), ((0, 3), (1, 3))])
def test_sum_to_size(device, shape, size):
    x = rng(6).normal(size=shape)
    got = T(x, device).sum_to_size(size if not size else size[0], *size[1:])
    lead = len(shape) - len(size)
    want = x.sum(axis=tuple(range(lead))) if lead else x
    want = want.sum(axis=tuple(k for k, n in enumerate(size) if n == 1 and want.shape[k] != 1), keepdims=True)
    assert got.shape == size
    np.testing.assert_allclose(npy(got), want.reshape(size))
    np.testing.assert_allclose(npy(T(x, device).sum_to_size(size)), want.reshape(size))


def test_sum_to_size_gradient_and_errors():
    assert gradcheck(lambda a: a.sum_to_size(2, 1), (leaf64(rng(7).normal(size=(3, 2, 4))),))
    x = minitorch.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"size \{\[4, 3\]\} is not expandable to size \{\[2, 3\]\}"):
        x.sum_to_size(4, 3)
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(1, 2, 3)
    with pytest.raises(TypeError):
        x.sum_to_size()
    assert not hasattr(minitorch, "sum_to_size")  # a method only, as in PyTorch


def test_new_empty_strided_and_questions(device):
    x = minitorch.ones(2, 3, dtype=minitorch.float64, device=device)
    e = x.new_empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype == minitorch.float64 and e.device == x.device
    e = x.new_empty_strided((4,), (1,), dtype=minitorch.int32, requires_grad=False)
    assert e.dtype == minitorch.int32 and e.shape == (4,)
    assert x.new_empty_strided((3,), (1,), requires_grad=True).requires_grad
    signed = {minitorch.uint8: False, minitorch.bool: False, minitorch.int8: True, minitorch.int64: True,
              minitorch.float16: True, minitorch.bfloat16: True, minitorch.float32: True}
    for dtype, want in signed.items():
        t = minitorch.zeros(2, dtype=dtype, device=device)
        assert t.is_signed() is want and minitorch.is_signed(t) is want
        assert t.is_complex() is False and minitorch.is_complex(t) is False
    assert x.is_same_size(minitorch.zeros(2, 3)) and not minitorch.is_same_size(x, minitorch.zeros(3, 2))
    with minitorch.inference_mode():
        made_inside = minitorch.ones(2, device=device)
    assert made_inside.is_inference() is False and minitorch.is_inference(x) is False
    with pytest.raises(TypeError):
        x.is_same_size([2, 3])


# -------------------------------------------------------- positive, prelu, hardshrink, rsub ----

def test_positive(device):
    x = T([1.0, -2.0], device)
    assert minitorch.positive(x) is x and x.positive() is x
    assert gradcheck(minitorch.positive, (leaf64([1.0, -2.0], device),))
    assert minitorch.positive(T([1, 2], device)).dtype == minitorch.int64
    with pytest.raises(TypeError, match="bool"):
        minitorch.positive(T([True], device))


def test_prelu_and_hardshrink(device):
    x = np.array([[-2.0, -0.3, 0.0, 0.4, 3.0], [1.0, -1.0, 0.6, -0.6, 0.5]]).T  # (5, 2): two channels
    w = np.array([0.25, 0.5])
    got = minitorch.prelu(T(x, device), T(w, device))
    np.testing.assert_allclose(npy(got), np.where(x >= 0, x, x * w))
    np.testing.assert_allclose(npy(T(x, device).prelu(T(w, device))), npy(got))
    for lambd in (0.5, 0.35):
        want = np.where(np.abs(x) > lambd, x, 0.0)
        np.testing.assert_array_equal(npy(minitorch.hardshrink(T(x, device), lambd)), want)
        np.testing.assert_array_equal(npy(T(x, device).hardshrink(lambd)), want)
    np.testing.assert_array_equal(npy(T(x, device).hardshrink()), np.where(np.abs(x) > 0.5, x, 0.0))
    x64 = leaf64(np.array([[-2.0, -0.3, 0.7, 0.4, 3.0], [1.0, -1.0, 0.6, -0.65, 0.55]]).T, device)
    assert gradcheck(lambda a, b: minitorch.prelu(a, b), (x64, leaf64(w, device)))
    assert gradcheck(lambda a: a.hardshrink(0.5), (x64,))


def test_rsub(device):
    a, b = np.array([[1.0, -2.0, 3.0]]), np.array([[0.5], [4.0]])
    np.testing.assert_allclose(npy(minitorch.rsub(T(a, device), T(b, device))), b - a)
    np.testing.assert_allclose(npy(minitorch.rsub(T(a, device), T(b, device), alpha=2.5)), b - 2.5 * a)
    np.testing.assert_array_equal(npy(minitorch.rsub(T([1, 2], device), 5)), [4, 3])
    np.testing.assert_array_equal(npy(minitorch.rsub(T([1, 2], device), 5, alpha=2)), [3, 1])
    assert minitorch.rsub(T([1, 2], device), 5).dtype == minitorch.int64
    np.testing.assert_allclose(npy(minitorch.rsub(T([1, 2], device), 1.5)), [0.5, -0.5])
    assert gradcheck(lambda x, y: minitorch.rsub(x, y, alpha=3), (leaf64(a, device), leaf64(b, device)))
    assert gradcheck(lambda x: minitorch.rsub(x, 2.0), (leaf64(a, device),))
    with pytest.raises(TypeError, match="bool"):
        minitorch.rsub(T([True], device), T([True], device))
    with pytest.raises(TypeError, match="alpha"):
        minitorch.rsub(T([1, 2], device), 5, alpha=0.5)
    assert not hasattr(minitorch.Tensor, "rsub")


def test_alpha_one_is_no_multiply(device):
    """add / sub with alpha=1 compute x + y: the bool refusal holds (it used to pass
    through the int64 product), and no multiply kernel is launched."""
    t, f = T([True, False], device), T([False, False], device)
    for call in (lambda: t.sub(f, alpha=1), lambda: minitorch.sub(t, f, alpha=1), lambda: t.clone().sub_(f, alpha=1)):
        with pytest.raises(TypeError, match="two bool tensors is not supported"):
            call()
    a, b = T([1.0, 2.0], device), T([3.0, 5.0], device)
    np.testing.assert_array_equal(npy(minitorch.add(a, b, alpha=1)), [4, 7])
    np.testing.assert_array_equal(npy(a.sub(b, alpha=1.0)), [-2, -3])
    if device == "cuda":
        from conftest import launches
        assert len(launches(lambda: minitorch.add(a, b, alpha=1))) == 1
        assert len(launches(lambda: minitorch.add(a, b, alpha=2))) == 2


# ------------------------------------------------------------------------------- range ----

def test_range_includes_its_end_and_warns(device):
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        got = minitorch.range(1, 4, device=device)
    assert got.dtype == minitorch.get_default_dtype() and got.device.type == device
    np.testing.assert_array_equal(npy(got), [1.0, 2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        np.testing.assert_allclose(npy(minitorch.range(1, 4, 0.5, device=device)), np.arange(1.0, 4.01, 0.5))
        np.testing.assert_allclose(npy(minitorch.range(4, 1, -1.5, device=device)), [4.0, 2.5, 1.0])
        np.testing.assert_allclose(npy(minitorch.range(0, 1, 0.3, device=device)), [0.0, 0.3, 0.6, 0.9], rtol=1e-6)
        got = minitorch.range(-3, 3, 2, dtype=minitorch.int64, device=device)
        assert got.dtype == minitorch.int64 and got.tolist() == [-3, -1, 1, 3]
        assert minitorch.range(1, 1, device=device).tolist() == [1.0]
        assert minitorch.range(0, 2, dtype=minitorch.float64, requires_grad=True).requires_grad
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            minitorch.range(1, 4, 0)
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
            minitorch.range(4, 1)
        with pytest.raises(TypeError):
            minitorch.range(5)


# ------------------------------------------------------- torch's in-place functions ----

def test_inplace_functions_call_the_methods(device):
    x = T([0.25, 4.0], device)
    assert minitorch.sqrt_(x) is x and npy(x).tolist() == [0.5, 2.0]
    assert minitorch.relu_(T([-1.0, 2.0], device)).tolist() == [0.0, 2.0]
    assert minitorch.clamp_(x, 0.0, 1.0) is x and npy(x).tolist() == [0.5, 1.0]
    assert minitorch.clip_(T([5.0], device), max=1.0).tolist() == [1.0]
    assert minitorch.fill_(T([1.0, 2.0], device), 7).tolist() == [7.0, 7.0]
    assert minitorch.zero_(T([1.0, 2.0], device)).tolist() == [0.0, 0.0]
    np.testing.assert_allclose(npy(minitorch.arccos_(T([1.0, 0.0], device))), [0.0, np.pi / 2], rtol=1e-6)
    np.testing.assert_allclose(npy(minitorch.sigmoid_(T([0.0], device))), [0.5])
    for name in INPLACE_FUNCTIONS:
        assert callable(getattr(minitorch, name)) and hasattr(minitorch.Tensor, name)
    for absent in ("absolute_", "sgn_", "exp", "random_", "eq_"):  # not functions in torch
        assert absent == "exp" or not hasattr(minitorch, absent)


# ----------------------------------------------------- torch's forms of nn.functional ops ----

def _batch(seed=8, shape=(2, 3, 5)):
    return rng(seed).normal(size=shape)


def test_same_argument_forms(device):
    x = T(_batch(), device)
    w = T(rng(9).normal(size=(4, 3, 2)), device)
    b = T(rng(10).normal(size=(4,)), device)
    pairs = [
        (minitorch.conv1d(x, w, b, 1, 1), F.conv1d(x, w, b, 1, 1)),
        (minitorch.conv_transpose1d(x, w.transpose(0, 1), None, 2), F.conv_transpose1d(x, w.transpose(0, 1), None, 2)),
        (minitorch.cosine_similarity(x, x * 2 + 1, 1), F.cosine_similarity(x, x * 2 + 1, 1)),
        (minitorch.pairwise_distance(x[0], x[1]), F.pairwise_distance(x[0], x[1])),
        (minitorch.celu(x, 0.5), F.celu(x, 0.5)), (minitorch.selu(x), F.selu(x)),
        (minitorch.threshold(x, 0.1, -2.0), F.threshold(x, 0.1, -2.0)),
        (minitorch.adaptive_avg_pool1d(x, 2), F.adaptive_avg_pool1d(x, 2)),
        (minitorch.rrelu(x), F.rrelu(x)),
    ]
    x4 = T(rng(11).normal(size=(1, 4, 2, 2)), device)
    pairs += [(minitorch.pixel_shuffle(x4, 2), F.pixel_shuffle(x4, 2)),
              (minitorch.pixel_unshuffle(minitorch.pixel_shuffle(x4, 2), 2), x4),
              (minitorch.channel_shuffle(x4, 2), F.channel_shuffle(x4, 2)),
              (minitorch.conv2d(x4, T(np.ones((2, 4, 1, 1)), device)), F.conv2d(x4, T(np.ones((2, 4, 1, 1)), device)))]
    x5 = T(rng(12).normal(size=(1, 2, 2, 2, 2)), device)
    pairs.append((minitorch.conv3d(x5, T(np.ones((1, 2, 2, 2, 2)), device)),
                  F.conv3d(x5, T(np.ones((1, 2, 2, 2, 2)), device))))
    w5 = T(rng(14).normal(size=(2, 1, 2, 1, 2)), device)
    pairs.append((minitorch.conv_transpose3d(x5, w5, None, 2), F.conv_transpose3d(x5, w5, None, 2)))
    wb = T(rng(13).normal(size=(2, 5, 5)), device)
    pairs.append((minitorch.bilinear(x[0], x[1], wb), F.bilinear(x[0], x[1], wb)))
    for got, want in pairs:
        np.testing.assert_allclose(npy(got), npy(want), rtol=1e-6, atol=1e-6)


def test_inplace_activation_forms(device):
    x = _batch()
    for name, fn in (("selu_", lambda t: F.selu(t)), ("celu_", lambda t: F.celu(t, 1.0)),
                     ("threshold_", lambda t: F.threshold(t, 0.0, 5.0))):
        t = T(x, device)
        args = (0.0, 5.0) if name == "threshold_" else ()
        assert getattr(minitorch, name)(t, *args) is t
        np.testing.assert_allclose(npy(t), npy(fn(T(x, device))), rtol=1e-6)
    t = T(x, device)
    assert minitorch.rrelu_(t) is t
    np.testing.assert_allclose(npy(t), np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2), rtol=1e-6)
    with pytest.raises(TypeError, match="generator"):
        minitorch.rrelu(t, generator=minitorch.Generator(0))


def test_normalization_forms_take_torchs_argument_order(device):
    x = _batch()
    r = rng(14)
    weight, bias = T(r.normal(size=3), device), T(r.normal(size=3), device)
    mean, var = T(r.normal(size=3), device), T(r.uniform(0.5, 2.0, 3), device)
    t = T(x, device)
    got = minitorch.batch_norm(t, weight, bias, mean, var, False, 0.1, 1e-5, True)
    want = F.batch_norm(t, mean, var, weight, bias, False, 0.1, 1e-5)
    np.testing.assert_allclose(npy(got), npy(want), rtol=1e-6)
    m = x.mean(axis=(0, 2))
    rm, rv = T(np.zeros(3), device), T(np.ones(3), device)
    minitorch.batch_norm(t, None, None, rm, rv, True, 0.5, 1e-5, False)  # training updates the running stats
    np.testing.assert_allclose(npy(rm), 0.5 * m, rtol=1e-5)
    got = minitorch.instance_norm(t, weight, bias, None, None, True, 0.1, 1e-5, False)
    want = F.instance_norm(t, None, None, weight, bias, True, 0.1, 1e-5)
    np.testing.assert_allclose(npy(got), npy(want), rtol=1e-6)
    np.testing.assert_allclose(npy(minitorch.layer_norm(t, (5,))), npy(F.layer_norm(t, (5,))), rtol=1e-6)
    np.testing.assert_allclose(npy(minitorch.layer_norm(t, [3, 5], None, None, 1e-3, False)),
                               npy(F.layer_norm(t, [3, 5], eps=1e-3)), rtol=1e-6)
    x6 = T(rng(15).normal(size=(2, 6, 3)), device)
    np.testing.assert_allclose(npy(minitorch.group_norm(x6, 3)), npy(F.group_norm(x6, 3)), rtol=1e-6)
    np.testing.assert_allclose(npy(minitorch.rms_norm(x6, (3,), None, 1e-6)), npy(F.rms_norm(x6, (3,), None, 1e-6)),
                               rtol=1e-6)
    with pytest.raises(TypeError):
        minitorch.batch_norm(t, weight, bias, mean, var)  # every argument is required


def test_embedding_takes_the_weight_first(device):
    weight = T(rng(16).normal(size=(5, 3)), device)
    idx = T([[0, 2], [4, 2]], device)
    np.testing.assert_array_equal(npy(minitorch.embedding(weight, idx)), npy(weight)[npy(idx)])
    w = leaf64(rng(16).normal(size=(5, 3)), device)
    minitorch.embedding(w, idx, 2).sum().backward()
    want = np.zeros((5, 3))
    want[[0, 4]] = 1.0  # index 2 is the padding row: no gradient
    np.testing.assert_array_equal(npy(w.grad), want)
    w.grad = None
    minitorch.embedding(w, idx, -1).sum().backward()  # -1: no padding row
    want[2] = 2.0
    np.testing.assert_array_equal(npy(w.grad), want)
    assert gradcheck(lambda w_: minitorch.embedding(w_, idx), (leaf64(rng(17).normal(size=(5, 3)), device),))


def test_dropout_forms(device):
    x = T(np.ones((4, 3, 200)), device)
    for name in ("dropout", "alpha_dropout", "feature_alpha_dropout", "feature_dropout"):
        fn = getattr(minitorch, name)
        assert minitorch.equal(fn(x, 0.5, False), x) and minitorch.equal(fn(x, 0.0, True), x)
        with pytest.raises(TypeError):
            fn(x, 0.5)  # train is required
        minitorch.manual_seed(0)
        y = npy(fn(x, 0.25, True))
        if name == "dropout":
            assert set(np.unique(y)) <= {0.0, 4 / 3} and abs((y == 0).mean() - 0.25) < 0.03
        if name == "feature_dropout":  # whole channels
            assert set(np.unique(y)) <= {0.0, 4 / 3} and (np.ptp(y, axis=2) == 0).all()
        t = T(np.ones((4, 3, 200)), device)
        assert getattr(minitorch, name + "_")(t, 0.25, True) is t and not minitorch.equal(t, x)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        minitorch.feature_dropout(T([1.0, 2.0], device), 0.5, True)


def test_loss_forms_take_an_int_reduction(device):
    r = rng(18)
    a, b = T(r.normal(size=(4, 3)), device), T(r.normal(size=(4, 3)), device)
    y = T(np.sign(r.normal(size=4)), device)
    ys = T(np.sign(r.normal(size=(4, 3))), device)
    logp = T(np.log(r.dirichlet(np.ones(3), 4)), device)
    q = T(r.dirichlet(np.ones(3), 4), device)
    for k, how in ((0, "none"), (1, "mean"), (2, "sum")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # F.kl_div warns about 'mean'; torch.kl_div does not
            checks = [
                (minitorch.kl_div(logp, q, k), F.kl_div(logp, q, reduction=how)),
                (minitorch.kl_div(logp, q.log(), k, log_target=True), F.kl_div(logp, q.log(), how, True)),
            ]
        checks += [
            (minitorch.hinge_embedding_loss(a, ys, 0.5, k), F.hinge_embedding_loss(a, ys, 0.5, how)),
            (minitorch.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.1, k),
             F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.1, how)),
            (minitorch.triplet_margin_loss(a, b, a * 2, 1.0, 2, 1e-6, True, k),
             F.triplet_margin_loss(a, b, a * 2, 1.0, 2, 1e-6, True, how)),
            (minitorch.cosine_embedding_loss(a, b, y, 0.2, k), F.cosine_embedding_loss(a, b, y, 0.2, how)),
            (minitorch.poisson_nll_loss(a, b.abs(), True, True, 1e-8, k), F.poisson_nll_loss(a, b.abs(), True, True,
                                                                                            1e-8, how)),
            (minitorch.binary_cross_entropy_with_logits(a, q[:, :1].expand(4, 3), None, T([2.0, 1.0, 0.5], device), k),
             F.binary_cross_entropy_with_logits(a, q[:, :1].expand(4, 3), reduction=how,
                                                pos_weight=T([2.0, 1.0, 0.5], device))),
        ]
        log_probs = T(np.log(r.dirichlet(np.ones(4), (6, 2))), device)  # (T, N, C)
        targets, lengths = T([[1, 2, 1], [3, 3, 0]], device), ([6, 5], [3, 2])
        checks.append((minitorch.ctc_loss(log_probs, targets, *lengths, 0, k),
                       F.ctc_loss(log_probs, targets, *lengths, 0, how)))
        for got, want in checks:
            np.testing.assert_allclose(npy(got), npy(want), rtol=1e-5, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the plain mean, without F's warning
        np.testing.assert_allclose(npy(minitorch.kl_div(logp, q)), npy(q * (q.log() - logp)).mean(), rtol=1e-5)
    with pytest.raises(TypeError, match="reduction"):
        minitorch.hinge_embedding_loss(a, ys, 1.0, "mean")
    with pytest.raises(ValueError, match="reduction"):
        minitorch.kl_div(logp, q, 3)
    with pytest.raises(TypeError):
        minitorch.poisson_nll_loss(a, b)  # all six arguments are required
    x, target = leaf64(r.normal(size=(2, 3)), device), T(r.dirichlet(np.ones(3), 2), device, minitorch.float64)
    assert gradcheck(lambda z: minitorch.kl_div(z, target, 1), (x,))


def test_pooling_forms(device):
    x = T(rng(19).normal(size=(2, 3, 9)), device)
    np.testing.assert_allclose(npy(minitorch.avg_pool1d(x, 3)), npy(F.avg_pool1d(x, 3)), rtol=1e-6)
    np.testing.assert_allclose(npy(minitorch.avg_pool1d(x, 3, (), 1, True)), npy(F.avg_pool1d(x, 3, None, 1, True)),
                               rtol=1e-6)
    got = minitorch.max_pool1d(x, 2, 1)
    assert isinstance(got, minitorch.Tensor)
    np.testing.assert_array_equal(npy(got), npy(F.max_pool1d(x, 2, 1)))
    values, indices = minitorch.max_pool1d_with_indices(x, 3)
    want_v, want_i = F.max_pool1d(x, 3, return_indices=True)
    np.testing.assert_array_equal(npy(values), npy(want_v))
    np.testing.assert_array_equal(npy(indices), npy(want_i))
    values, indices = minitorch.adaptive_max_pool1d(x, 4)
    want_v, want_i = F.adaptive_max_pool1d(x, 4, return_indices=True)
    np.testing.assert_array_equal(npy(values), npy(want_v))
    x4 = T(rng(20).normal(size=(1, 2, 6, 6)), device)
    np.testing.assert_array_equal(npy(minitorch.max_pool2d(x4, 2)), npy(F.max_pool2d(x4, 2)))
    np.testing.assert_array_equal(npy(minitorch.max_pool2d(x4, (3, 2), (), 1, 1, True)),
                                  npy(F.max_pool2d(x4, (3, 2), None, 1, 1, True)))
    x5 = T(rng(21).normal(size=(1, 1, 4, 4, 4)), device)
    np.testing.assert_array_equal(npy(minitorch.max_pool3d(x5, 2)), npy(F.max_pool3d(x5, 2)))


# ------------------------------------------------------------------ against PyTorch ----

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


def _t(torch, a):
    return torch.tensor(np.asarray(a))


def test_against_torch_creation_and_windows(torch):
    for name in WINDOWS:
        for n in (0, 1, 2, 5, 12):
            for periodic in (True, False):
                want = getattr(torch, name)(n, periodic, dtype=torch.float64).numpy()
                got = npy(getattr(minitorch, name)(n, periodic, dtype=minitorch.float64))
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    want = torch.hamming_window(7, False, 0.6, 0.3, dtype=torch.float64).numpy()
    np.testing.assert_allclose(npy(minitorch.hamming_window(7, False, 0.6, 0.3, dtype=minitorch.float64)), want)
    want = torch.kaiser_window(9, True, 4.0, dtype=torch.float64).numpy()
    np.testing.assert_allclose(npy(minitorch.kaiser_window(9, True, 4.0, dtype=minitorch.float64)), want, rtol=1e-10)
    for args in ((0, 2, 3), (-1.5, 2.0, 7, 2.0), (0, 3, 4, -2)):
        np.testing.assert_allclose(npy(minitorch.logspace(*args, dtype=minitorch.float64)),
                                   torch.logspace(*args, dtype=torch.float64).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(npy(minitorch.logspace(0, 1, 3, dtype=minitorch.int64)),
                                  torch.logspace(0, 1, 3, dtype=torch.int64).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for args in ((1, 4), (1, 4, 0.5), (4, 1, -1.5), (0, 1, 0.1)):
            np.testing.assert_allclose(npy(minitorch.range(*args, dtype=minitorch.float64)),
                                       torch.range(*args, dtype=torch.float64).numpy(), rtol=1e-12)


def test_against_torch_values(torch):
    r = rng(22)
    a, b = r.integers(-3, 4, (4, 5)), r.integers(-3, 4, (6,))
    np.testing.assert_array_equal(npy(minitorch.isin(T(a), T(b))), torch.isin(_t(torch, a), _t(torch, b)).numpy())
    np.testing.assert_array_equal(npy(minitorch.isin(T(a), 2, invert=True)),
                                  torch.isin(_t(torch, a), 2, invert=True).numpy())
    x, y = r.normal(size=(3, 4)), r.normal(size=(4,))
    for p in (2, 1, 0, 3.0, math.inf, -math.inf):
        np.testing.assert_allclose(npy(minitorch.dist(T(x), T(y), p)), torch.dist(_t(torch, x), _t(torch, y), p),
                                   rtol=1e-10)
    for shape in ((7, 3), (3, 7), (3, 3, 3), (6, 4)):
        for wrap in (False, True):
            want = torch.zeros(shape).fill_diagonal_(2.0, wrap).numpy()
            np.testing.assert_array_equal(npy(minitorch.zeros(*shape).fill_diagonal_(2.0, wrap)), want)
    z = r.normal(size=(4, 2, 3))
    for size in ((2, 1), (1, 3), (1, 1, 1)):
        np.testing.assert_allclose(npy(T(z).sum_to_size(*size)), _t(torch, z).sum_to_size(*size).numpy())
    for name in COMPARISONS:
        want = getattr(_t(torch, x), name + "_")(_t(torch, y)).numpy()
        np.testing.assert_array_equal(npy(getattr(T(x), name + "_")(T(y))), want)
    for name in LOGICAL:
        want = getattr(_t(torch, a), name + "_")(_t(torch, b[:5])).numpy()
        np.testing.assert_array_equal(npy(getattr(T(a), name + "_")(T(b[:5]))), want)
    np.testing.assert_array_equal(npy(minitorch.rsub(T(a), 5, alpha=2)), torch.rsub(_t(torch, a), 5, alpha=2).numpy())
    np.testing.assert_allclose(npy(T(x).hardshrink(0.3)), _t(torch, x).hardshrink(0.3).numpy())
    np.testing.assert_allclose(npy(minitorch.prelu(T(x[None]), T([0.2]))),
                               torch.prelu(_t(torch, x[None]), _t(torch, [0.2])).numpy())
    for dtype, tdtype in ((minitorch.uint8, torch.uint8), (minitorch.int8, torch.int8), (minitorch.bool, torch.bool),
                          (minitorch.float32, torch.float32)):
        assert minitorch.zeros(1, dtype=dtype).is_signed() == torch.zeros(1, dtype=tdtype).is_signed()


def test_against_torch_nn_forms(torch):
    r = rng(23)
    x, w, b = r.normal(size=(2, 3, 8)), r.normal(size=(4, 3, 3)), r.normal(size=4)
    np.testing.assert_allclose(npy(minitorch.conv1d(T(x), T(w), T(b), 2, 1)),
                               torch.conv1d(*map(lambda v: _t(torch, v), (x, w, b)), 2, 1).numpy(), rtol=1e-10)
    g, beta = r.normal(size=3), r.normal(size=3)
    mean, var = r.normal(size=3), r.uniform(0.5, 2, 3)
    want = torch.batch_norm(*(_t(torch, v) for v in (x, g, beta, mean, var)), False, 0.1, 1e-5, False).numpy()
    got = minitorch.batch_norm(*(T(v) for v in (x, g, beta, mean, var)), False, 0.1, 1e-5, False)
    np.testing.assert_allclose(npy(got), want, rtol=1e-10)
    want = torch.instance_norm(*(_t(torch, v) for v in (x, g, beta)), None, None, True, 0.1, 1e-5, False).numpy()
    got = minitorch.instance_norm(*(T(v) for v in (x, g, beta)), None, None, True, 0.1, 1e-5, False)
    np.testing.assert_allclose(npy(got), want, rtol=1e-9)
    np.testing.assert_allclose(npy(minitorch.layer_norm(T(x), (8,), None, None, 1e-5, True)),
                               torch.layer_norm(_t(torch, x), (8,), None, None, 1e-5, True).numpy(), rtol=1e-9)
    weight, idx = r.normal(size=(5, 2)), np.array([[1, 4], [0, 1]])
    np.testing.assert_array_equal(npy(minitorch.embedding(T(weight), T(idx))),
                                  torch.embedding(_t(torch, weight), _t(torch, idx)).numpy())
    logp, q = np.log(r.dirichlet(np.ones(4), 3)), r.dirichlet(np.ones(4), 3)
    for k in (0, 1, 2):
        np.testing.assert_allclose(npy(minitorch.kl_div(T(logp), T(q), k)),
                                   torch.kl_div(_t(torch, logp), _t(torch, q), k).numpy(), rtol=1e-10)
    ys = np.sign(r.normal(size=(3, 4)))
    np.testing.assert_allclose(npy(minitorch.hinge_embedding_loss(T(logp), T(ys), 1.0, 2)),
                               torch.hinge_embedding_loss(_t(torch, logp), _t(torch, ys), 1.0, 2).numpy(), rtol=1e-10)
    lp, targets = np.log(r.dirichlet(np.ones(4), (6, 2))), np.array([[1, 2, 1], [3, 3, 0]])
    for k in (0, 1, 2):
        np.testing.assert_allclose(npy(minitorch.ctc_loss(T(lp), T(targets), [6, 5], [3, 2], 0, k)),
                                   torch.ctc_loss(_t(torch, lp), _t(torch, targets), [6, 5], [3, 2], 0, k).numpy(),
                                   rtol=1e-8)
    np.testing.assert_allclose(npy(minitorch.poisson_nll_loss(T(logp), T(q), True, True, 1e-8, 1)),
                               torch.poisson_nll_loss(_t(torch, logp), _t(torch, q), True, True, 1e-8, 1).numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(npy(minitorch.max_pool1d(T(x), 3, (), 1)),
                               torch.max_pool1d(_t(torch, x), 3, (), 1).numpy())
    np.testing.assert_allclose(npy(minitorch.avg_pool1d(T(x), 3)), torch.avg_pool1d(_t(torch, x), 3).numpy(),
                               rtol=1e-10)
