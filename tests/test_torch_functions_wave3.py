"""PyTorch names written in Python from existing ops: flat positions (take, put, masked_scatter,
unravel_index), stacking and flips, products (inner, vdot, chain_matmul, matrix_power), the
trapezoidal rule, combinations, renorm, frexp / ldexp, gcd / lcm, shifts, pdist, histogram,
narrow_copy, is_nonzero, scalar_tensor, asarray, empty_strided, can_cast; and the settings:
the global generator's seed and state, the deterministic-algorithms flag, print options and
compile. Every dtype, layout and device of the differentiable ones is the OpInfo battery's
(tests/opinfo/op_db.py, ``_flat_index_and_number_ops``); here: NumPy references for what
it does not sample, float64 gradients, PyTorch's argument forms and errors, and a few cheap
values on every device.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import minitorch
from conftest import DEVICES
from minitorch.testing import gradcheck


def rng(seed=0):
    return np.random.default_rng(seed)


def T(a, device="cpu", grad=False, dtype=None):
    return minitorch.tensor(a, device=device, requires_grad=grad, dtype=dtype)


def leaf(shape, seed=0, low=-2.0, high=2.0):
    return T(rng(seed).uniform(low, high, shape), grad=True)


# ------------------------------------------------------------ a few values on every device ----

@pytest.mark.parametrize("device", DEVICES)
def test_flat_positions_on_every_device(device):
    x = np.arange(12.0).reshape(3, 4)
    index = np.array([[0, -1], [5, 11]])
    np.testing.assert_array_equal(T(x, device).take(T(index, device)).cpu().numpy(), np.take(x, index))
    want = x.copy().ravel()
    np.add.at(want, [1, 1, 11], [10.0, 20.0, 30.0])
    got = T(x, device).put(T([1, 1, -1], device), T(np.array([10.0, 20.0, 30.0]), device), accumulate=True)
    np.testing.assert_array_equal(got.cpu().numpy(), want.reshape(3, 4))
    mask = np.array([True, False, True, False])
    got = T(x, device).masked_scatter(T(mask, device), T(np.arange(100.0, 112.0), device))
    want = x.copy()
    want[np.broadcast_to(mask, x.shape)] = np.arange(100.0, 106.0)
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    rows, cols = minitorch.unravel_index(T([0, 5, 7, -1], device), (3, 4))
    np.testing.assert_array_equal(np.stack([rows.cpu().numpy(), cols.cpu().numpy()]),
                                  np.stack(np.unravel_index([0, 5, 7, 11], (3, 4))))


@pytest.mark.parametrize("device", DEVICES)
def test_integer_ops_on_every_device(device):
    a, b = np.array([12, -18, 0, 0, 7, 40]), np.array([18, 12, 5, 0, 3, -6])
    np.testing.assert_array_equal(minitorch.gcd(T(a, device), T(b, device)).cpu().numpy(), np.gcd(a, b))
    np.testing.assert_array_equal(minitorch.lcm(T(a, device), T(b, device)).cpu().numpy(), np.lcm(a, b))
    x, s = np.array([1, -3, 5, 7, -8]), np.array([0, 2, 62, 3, 1])
    np.testing.assert_array_equal((T(x, device) << T(s, device)).cpu().numpy(), np.left_shift(x, s))
    np.testing.assert_array_equal((T(x, device) >> T(s, device)).cpu().numpy(), np.right_shift(x, s))


@pytest.mark.parametrize("device", DEVICES)
def test_frexp_histogram_and_trapezoid_on_every_device(device):
    x = np.array([0.0, -0.0, 1.0, -3.0, 0.1, 5e-324, 1e308, np.inf, -np.inf, np.nan])
    m, e = minitorch.frexp(T(x, device))
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(m.cpu().numpy(), want_m)
    np.testing.assert_array_equal(e.cpu().numpy(), want_e)
    assert e.dtype == minitorch.int32 and np.signbit(m.cpu().numpy()[1])
    v = rng().normal(size=20)
    hist, edges = minitorch.histogram(T(v, device), 5)
    want_hist, want_edges = np.histogram(v, 5)
    np.testing.assert_array_equal(hist.cpu().numpy(), want_hist)
    np.testing.assert_allclose(edges.cpu().numpy(), want_edges, rtol=1e-12)
    y, pts = rng(1).normal(size=(2, 4)), np.array([0.0, 0.5, 2.0, 2.25])
    np.testing.assert_allclose(minitorch.trapezoid(T(y, device), T(pts, device)).cpu().numpy(),
                               np.trapezoid(y, pts), rtol=1e-12)


# --------------------------------------------------------------- take / put / masked_scatter ----

def test_take_put_errors():
    x = minitorch.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match="out of range: tried to access index 6 on a tensor of 6 elements"):
        x.take(T([6]))
    with pytest.raises(IndexError, match="index -7"):
        minitorch.take(x, T([-7]))
    with pytest.raises(TypeError, match="Expected a long tensor for index, but got float32"):
        x.take(T([1.0]))
    with pytest.raises(TypeError, match="'input' must be a Tensor"):
        minitorch.take([1, 2], T([0]))
    with pytest.raises(IndexError, match=r"source.numel\(\) = 1, index.numel\(\) = 2"):
        x.put(T([0, 1]), T([1.0]))
    with pytest.raises(TypeError, match="same dtype"):
        x.put(T([0]), T([1.0], dtype=minitorch.float64))
    with pytest.raises(IndexError, match="index 7"):
        x.clone().put_(T([7]), T([1.0]))


def test_put_in_place_and_gradients():
    x = minitorch.zeros(2, 2)
    assert x.put_(T([0, -1]), T([1.0, 2.0])) is x
    assert x.tolist() == [[1.0, 0.0], [0.0, 2.0]]
    index = T([[2, 0], [-1, 3]])
    assert gradcheck(lambda a, s: a.put(index, s), (leaf((2, 3)), leaf((2, 2), 1)))
    assert gradcheck(lambda a, s: a.put(T([1, 1, 4]), s, accumulate=True), (leaf((5,)), leaf((3,), 1)))
    assert gradcheck(lambda a: a.take(index), (leaf((2, 3)),))


def test_masked_scatter_forms_errors_and_gradients():
    x = minitorch.zeros(2, 3)
    mask = T([True, False, True])
    assert x.masked_scatter_(mask, minitorch.arange(1.0, 7.0)) is x
    assert x.tolist() == [[1.0, 0.0, 2.0], [3.0, 0.0, 4.0]]
    assert minitorch.masked_scatter(T(0.0), T([True, False]), T([5.0, 6.0])).tolist() == [5.0, 0.0]
    with pytest.raises(RuntimeError, match="4 True values but source has only 3"):
        x.masked_scatter(mask, T([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="only supports boolean masks"):
        x.masked_scatter(mask.int(), minitorch.ones(6))
    with pytest.raises(TypeError, match="same dtypes"):
        x.masked_scatter(mask, minitorch.ones(6, dtype=minitorch.float64))
    with pytest.raises(RuntimeError):  # in place, the mask must broadcast to self's shape
        x.masked_scatter_(minitorch.ones(2, 2, 3, dtype=minitorch.bool), minitorch.ones(12))
    assert gradcheck(lambda a, s: a.masked_scatter(mask, s), (leaf((2, 3)), leaf((5,), 1)))


def test_unravel_index_forms_and_errors():
    rows, cols = minitorch.unravel_index(T([[4], [1]]), (3, 2))
    assert rows.tolist() == [[2], [0]] and cols.tolist() == [[0], [1]] and rows.dtype == minitorch.int64
    (only,) = minitorch.unravel_index(T(3, dtype=minitorch.int32), 5)
    assert only.item() == 3 and only.ndim == 0
    assert [t.tolist() for t in minitorch.unravel_index(T([1234, 5678]), minitorch.Size([10, 10, 10, 10]))] == \
        [[1, 5], [2, 6], [3, 7], [4, 8]]
    with pytest.raises(TypeError, match="integer tensor"):
        minitorch.unravel_index(T([1.0]), (2,))
    with pytest.raises(TypeError, match="'indices' to be a Tensor"):
        minitorch.unravel_index([1], (2,))
    with pytest.raises(TypeError, match="'shape' to be an int or a sequence"):
        minitorch.unravel_index(T([1]), (2.0,))
    with pytest.raises(ValueError, match="negative"):
        minitorch.unravel_index(T([1]), (3, -2))


# -------------------------------------------------------------------- stacking and flips ----

def test_stacks_flips_diagflat_and_narrow_copy():
    a, b = np.arange(3), np.arange(3.0, 6.0)
    assert minitorch.dstack([T(a), T(b)]).tolist() == np.dstack([a, b]).tolist()
    assert minitorch.dstack([T(a), T(b)]).dtype == minitorch.float64  # promoted, as cat
    got = minitorch.column_stack([T(1), T(a).reshape(1, 3)[:, :1], T([7])])
    assert got.tolist() == np.column_stack([np.array(1), a.reshape(1, 3)[:, :1], np.array([7])]).tolist()
    assert minitorch.row_stack is minitorch.vstack
    assert minitorch.row_stack([T(a), T(a)]).tolist() == np.vstack([a, a]).tolist()
    for op in (minitorch.dstack, minitorch.column_stack):
        with pytest.raises(RuntimeError, match="expects a non-empty TensorList"):
            op([])
    x = np.arange(6).reshape(2, 3)
    assert T(x).fliplr().tolist() == np.fliplr(x).tolist() and T(x).flipud().tolist() == np.flipud(x).tolist()
    with pytest.raises(RuntimeError, match=r"Input must be >= 2-d"):
        minitorch.fliplr(T([1, 2]))
    with pytest.raises(RuntimeError, match=r"Input must be >= 1-d"):
        minitorch.flipud(T(1))
    assert T(x).diagflat(-1).tolist() == np.diagflat(x, -1).tolist()
    assert minitorch.diagflat(T(3.0)).tolist() == [[3.0]]
    src = T(x)
    part = src.narrow_copy(1, -2, 2)
    assert part.tolist() == x[:, 1:].tolist() and part.is_contiguous()
    part[0, 0] = 99
    assert src.tolist() == x.tolist()  # a copy, not a view
    with pytest.raises(IndexError, match="exceeds dimension size"):
        minitorch.narrow_copy(T(x), 1, 2, 2)


def test_combinations_match_itertools():
    x = T([1.0, 2.0, 3.0, 4.0])
    for r, rep in [(2, False), (3, False), (2, True), (1, False)]:
        pick = itertools.combinations_with_replacement if rep else itertools.combinations
        assert minitorch.combinations(x, r, with_replacement=rep).tolist() == [list(c) for c in pick(x.tolist(), r)]
    assert minitorch.combinations(x, 0).shape == (0,)
    assert minitorch.combinations(T([1, 2]), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        minitorch.combinations(minitorch.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expect a non-negative number, but got -1"):
        minitorch.combinations(x, -1)
    assert gradcheck(lambda v: minitorch.combinations(v, 2, with_replacement=True), (leaf((3,)),))


# ---------------------------------------------------------------------------- products ----

def test_inner_vdot_and_their_errors():
    a, b = rng().normal(size=(2, 3)), rng(1).normal(size=(4, 3))
    np.testing.assert_allclose(minitorch.inner(T(a), T(b)).numpy(), np.inner(a, b), rtol=1e-12)
    np.testing.assert_allclose(T(2.0).inner(T(b)).numpy(), 2.0 * b, rtol=1e-12)
    assert minitorch.vdot(T([1, 2, 3]), T([4, 5, 6])).item() == 32
    with pytest.raises(RuntimeError, match="the last dimension must match"):
        minitorch.inner(minitorch.ones(2, 3), minitorch.ones(4, 2))
    with pytest.raises(TypeError, match="same dtype"):
        minitorch.inner(minitorch.ones(3), minitorch.ones(3, dtype=minitorch.float64))
    with pytest.raises(RuntimeError, match="different lengths"):
        minitorch.vdot(minitorch.ones(3), minitorch.ones(4))
    with pytest.raises(RuntimeError, match="expected 1-D and 1-D"):
        minitorch.vdot(minitorch.ones(3, 1), minitorch.ones(3, 1))
    assert gradcheck(minitorch.inner, (leaf((2, 3)), leaf((4, 3), 1)))


def test_chain_matmul_is_deprecated_multi_dot():
    a, b, c = leaf((2, 3)), leaf((3, 4), 1), leaf((4, 2), 2)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        got = minitorch.chain_matmul(a, b, c)
    np.testing.assert_allclose(got.detach().numpy(), a.detach().numpy() @ b.detach().numpy() @ c.detach().numpy(),
                               rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        single = minitorch.chain_matmul(a)
        assert single.tolist() == a.tolist() and single is not a
        with pytest.raises(RuntimeError, match="Expected one or more matrices"):
            minitorch.chain_matmul()
        with pytest.raises(RuntimeError, match="must be 2-D"):
            minitorch.chain_matmul(a, minitorch.ones(3))
        assert gradcheck(minitorch.chain_matmul, (a, b, c))


def test_matrix_power_forms():
    a = rng().uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(T(a).matrix_power(3).numpy(), np.linalg.matrix_power(a, 3), rtol=1e-12)
    np.testing.assert_allclose(minitorch.matrix_power(T(a), -2).numpy(), np.linalg.matrix_power(a, -2), rtol=1e-10)
    with pytest.raises(RuntimeError, match="square"):
        minitorch.matrix_power(minitorch.ones(2, 3), 2)
    assert gradcheck(lambda m: m.matrix_power(-1), (T(a, grad=True),))


# ------------------------------------------------------------------- trapezoidal rule ----

def test_trapezoid_forms_against_numpy():
    y = rng().normal(size=(3, 4))
    x1, x2 = np.array([0.0, 1.0, 3.0, 3.5]), np.cumsum(rng(1).uniform(0.1, 1, (3, 4)), 0)
    np.testing.assert_allclose(minitorch.trapezoid(T(y)).numpy(), np.trapezoid(y), rtol=1e-12)
    np.testing.assert_allclose(minitorch.trapezoid(T(y), dx=0.5, dim=0).numpy(), np.trapezoid(y, dx=0.5, axis=0),
                               rtol=1e-12)
    np.testing.assert_allclose(minitorch.trapz(T(y), T(x1)).numpy(), np.trapezoid(y, x1), rtol=1e-12)
    np.testing.assert_allclose(minitorch.trapezoid(T(y), T(x2), dim=0).numpy(), np.trapezoid(y, x2, axis=0),
                               rtol=1e-12)
    want = np.cumsum((y[:, 1:] + y[:, :-1]) / 2 * np.diff(x1), -1)  # SciPy's cumulative_trapezoid
    np.testing.assert_allclose(minitorch.cumulative_trapezoid(T(y), T(x1)).numpy(), want, rtol=1e-12)
    assert minitorch.trapezoid(T([1, 2, 3]), dx=2).item() == 8.0  # integers give floats
    assert minitorch.trapezoid(minitorch.ones(2, 1)).tolist() == [0.0, 0.0]
    assert minitorch.cumulative_trapezoid(minitorch.ones(2, 1)).shape == (2, 0)
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        minitorch.trapezoid(minitorch.ones(2, 3), T([0.0, 1.0]))
    with pytest.raises(TypeError, match="not both"):
        minitorch.trapezoid(minitorch.ones(3), T([0.0, 1.0, 2.0]), dx=1.0)
    with pytest.raises(IndexError, match="no dimensions"):
        minitorch.trapezoid(T(1.0))
    with pytest.raises(TypeError, match="bool is not supported"):
        minitorch.cumulative_trapezoid(T([True, False]))
    assert gradcheck(lambda v, p: minitorch.trapezoid(v, p), (leaf((2, 4)), T(x1, grad=True)))
    assert gradcheck(lambda v: minitorch.cumulative_trapezoid(v, dx=0.3, dim=0), (leaf((3, 2)),))


# ------------------------------------------------------------------------ renorm, pdist ----

def _renorm_ref(x, p, dim, maxnorm):
    other = tuple(k for k in range(x.ndim) if k != dim)
    norms = (np.abs(x) ** p).sum(other, keepdims=True) ** (1 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def test_renorm_against_numpy_and_errors():
    x = rng().normal(size=(3, 4))
    for p, dim, maxnorm in [(2, 0, 1.0), (1, 1, 1.5), (3, 0, 10.0)]:
        np.testing.assert_allclose(T(x).renorm(p, dim, maxnorm).numpy(), _renorm_ref(x, p, dim, maxnorm), rtol=1e-12)
    y = T(x)
    assert y.renorm_(2, 0, 1.0) is y and np.allclose(np.linalg.norm(y.numpy(), axis=1).max(), 1.0)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        T(x).renorm(0, 0, 1.0)
    with pytest.raises(RuntimeError, match="maxnorm to be >= 0"):
        T(x).renorm(2, 0, -1.0)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        T([3.0, 4.0]).renorm(2, 0, 1.0)
    with pytest.raises(TypeError, match="floating point"):
        T([[1, 2]]).renorm(2, 0, 1.0)
    assert gradcheck(lambda v: v.renorm(2, 1, 1.0), (leaf((3, 2)),))


def test_pdist_against_numpy_and_errors():
    x = rng().normal(size=(4, 3))
    i, j = np.triu_indices(4, 1)
    for p in (2.0, 1.0, np.inf, 0.5):
        np.testing.assert_allclose(minitorch.pdist(T(x), p).numpy(),
                                   np.linalg.norm(x[i] - x[j], ord=p, axis=-1) if p >= 1 else
                                   (np.abs(x[i] - x[j]) ** p).sum(-1) ** (1 / p), rtol=1e-12)
    assert minitorch.pdist(minitorch.ones(1, 3)).shape == (0,)
    with pytest.raises(RuntimeError, match="only supports 2D tensors, got: 1D"):
        minitorch.pdist(minitorch.ones(3))
    with pytest.raises(RuntimeError, match="non-negative p"):
        minitorch.pdist(T(x), -1)
    with pytest.raises(TypeError, match="floating-point"):
        minitorch.pdist(minitorch.ones(3, 2, dtype=minitorch.int64))
    same = T(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]), grad=True)
    minitorch.pdist(same).sum().backward()
    assert np.isfinite(same.grad.numpy()).all()  # a zero distance has a zero gradient, not NaN
    assert gradcheck(minitorch.pdist, (leaf((3, 2)),))


# -------------------------------------------------------------------- frexp / ldexp ----

def test_frexp_ldexp_round_trip_dtypes_and_gradients():
    # (ldexp computes 2**e in float32 for an int32 e: 2**128, 3e38's, would overflow, as in PyTorch)
    for dtype, x in [(minitorch.float32, [1.5, 1e-45, 3e30, -0.75]), (minitorch.float16, [1.5, 6e-8, 65504.0])]:
        m, e = minitorch.frexp(T(x, dtype=dtype))
        assert m.dtype == dtype and e.dtype == minitorch.int32
        np.testing.assert_array_equal(e.numpy(), np.frexp(T(x, dtype=dtype).float().numpy())[1])
        assert minitorch.ldexp(m, e).tolist() == T(x, dtype=dtype).tolist()
    m, e = T([8.0]).frexp()
    assert (m.item(), e.item()) == (0.5, 4)
    assert minitorch.frexp(T([8.0]))._fields == ("mantissa", "exponent")
    with pytest.raises(TypeError, match="floating-point"):
        minitorch.frexp(T([1, 2]))
    assert minitorch.ldexp(T([1, 2]), T([3, -1])).tolist() == [8.0, 1.0]  # integers give floats
    assert minitorch.ldexp(T([1.0], dtype=minitorch.float64), T([2])).dtype == minitorch.float64
    with pytest.raises(TypeError, match="'other' must be a Tensor"):
        minitorch.ldexp(T([1.0]), 3)
    with pytest.raises(TypeError, match="can't be cast"):
        T([1, 2]).ldexp_(T([1, 1]))
    y = T([1.0, 3.0])
    assert y.ldexp_(T([1, 2])) is y and y.tolist() == [2.0, 12.0]
    assert gradcheck(lambda v: minitorch.frexp(v).mantissa, (leaf((5,), low=-5.0, high=5.0),))
    assert gradcheck(minitorch.ldexp, (leaf((3,)), leaf((3,), 1)))


# -------------------------------------------------------------------------- gcd / lcm / shifts ----

def test_gcd_lcm_dtypes_forms_and_errors():
    a8 = T([12, -18, 9], dtype=minitorch.int8)
    assert minitorch.gcd(a8, T([18, 12, 6], dtype=minitorch.int8)).dtype == minitorch.int8
    assert minitorch.gcd(a8, T([18, 12, 6])).dtype == minitorch.int64  # promoted
    x = T([[4], [6]])
    assert x.lcm(T([6, 10, 0])).tolist() == np.lcm([[4], [6]], [6, 10, 0]).tolist()  # broadcast
    y = T([12, 18])
    assert y.gcd_(T([8, 12])) is y and y.tolist() == [4, 6]
    assert y.lcm_(T([6, 4])) is y and y.tolist() == [12, 12]
    for bad in (T([1.0]), T([True])):
        with pytest.raises(TypeError, match="not implemented"):
            minitorch.gcd(bad, bad)
    with pytest.raises(TypeError, match="'other' must be Tensor"):
        minitorch.gcd(T([4]), 2)
    fib = T([7540113804746346429])  # consecutive Fibonacci numbers: Euclid's slowest case in 64 bits
    assert minitorch.gcd(fib, T([4660046610375530309])).item() == 1


def test_shifts_follow_pytorch_rules():
    x = T([1, -3, 5, 3, -7])
    # a shift by a negative amount or by the width or more: 0 to the left, the sign to the right
    assert minitorch.bitwise_left_shift(x, T([2, 64, -1, 63, 1])).tolist() == [4, 0, 0, -2**63, -14]
    assert minitorch.bitwise_right_shift(x, T([2, 64, -1, 63, 1])).tolist() == [0, -1, 0, 0, -4]
    u = T([200, 3, 5], dtype=minitorch.uint8)
    assert (u >> T([7, 8, 1], dtype=minitorch.uint8)).tolist() == [1, 0, 2]
    assert (T([1, -3, 5], dtype=minitorch.int8) << 7).tolist() == [-128, -128, -128]  # wraps around
    assert (2 << T([1, 2])).tolist() == [4, 8] and (64 >> T([1, 2])).tolist() == [32, 16]
    z = T([1, 2])
    z <<= 2
    assert z.tolist() == [4, 8]
    z >>= T([1, 3])
    assert z.tolist() == [2, 1]
    with pytest.raises(TypeError, match="not implemented for float32"):
        T([1.0]) << 1
    with pytest.raises(TypeError):
        1.5 << T([1])


# ---------------------------------------------------------------------------- histogram ----

def test_histogram_against_numpy():
    v = rng().normal(size=30)
    for bins, kw in [(4, {}), (3, dict(range=(-1.0, 1.0))), (5, dict(density=True))]:
        hist, edges = minitorch.histogram(T(v), bins, **kw)
        want_hist, want_edges = np.histogram(v, bins, **kw)
        np.testing.assert_allclose(hist.numpy(), want_hist, rtol=1e-12)
        np.testing.assert_allclose(edges.numpy(), want_edges, rtol=1e-12)
    w = rng(1).uniform(size=30)
    edges = np.array([-3.0, -1.0, 0.0, 0.5, 3.0])
    hist, got_edges = T(v).histogram(T(edges), weight=T(w), density=True)
    np.testing.assert_allclose(hist.numpy(), np.histogram(v, edges, weights=w, density=True)[0], rtol=1e-12)
    assert got_edges.tolist() == edges.tolist()
    assert minitorch.histogram(T([3.0, 3.0]), 2).bin_edges.tolist() == [2.5, 3.0, 3.5]  # one point: +-0.5
    assert minitorch.histogram(T([1.0, 4.0]), 3).hist.tolist() == [1.0, 0.0, 1.0]  # the last bin holds its edge
    with pytest.raises(TypeError, match="float32 and float64"):
        minitorch.histogram(T([1, 2]), 2)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        minitorch.histogram(T(v), 0)
    with pytest.raises(RuntimeError, match="not finite"):
        minitorch.histogram(T([1.0, np.nan]), 2)
    with pytest.raises(RuntimeError, match="increase monotonically"):
        minitorch.histogram(T(v), T(np.array([1.0, 0.0])))
    with pytest.raises(TypeError, match="same dtype"):
        minitorch.histogram(T(v), T([0.0, 1.0], dtype=minitorch.float32))


# ------------------------------------------------------------- small tensor functions ----

def test_is_nonzero_scalar_tensor_and_can_cast():
    assert T([2]).is_nonzero() and not minitorch.is_nonzero(T([[0.0]])) and T(np.nan).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value"):
        T([1, 2]).is_nonzero()
    with pytest.raises(RuntimeError, match="no values"):
        minitorch.is_nonzero(T([]))
    s = minitorch.scalar_tensor(3)
    assert s.ndim == 0 and s.dtype == minitorch.get_default_dtype() and s.item() == 3.0
    assert minitorch.scalar_tensor(True, dtype=minitorch.int64).item() == 1
    assert minitorch.scalar_tensor(2.5, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="must be Number, not list"):
        minitorch.scalar_tensor([1.0])
    f32, i32, b = minitorch.float32, minitorch.int32, minitorch.bool
    assert [minitorch.can_cast(*p) for p in [(f32, i32), (i32, f32), (i32, b), (b, minitorch.uint8),
                                             (minitorch.float64, minitorch.float16), (minitorch.int64, minitorch.int8),
                                             (f32, b)]] == [False, True, False, True, True, True, False]
    with pytest.raises(TypeError, match="must be minitorch.dtype"):
        minitorch.can_cast(1, b)


def test_asarray_copy_semantics():
    t = minitorch.ones(2, requires_grad=True)
    assert minitorch.asarray(t) is t
    c = minitorch.asarray(t, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr() and not c.requires_grad and c.tolist() == [1.0, 1.0]
    d = minitorch.asarray(t, dtype=minitorch.float64)
    assert d.dtype == minitorch.float64 and d.grad_fn is None
    with pytest.raises(ValueError, match="can't alias a float32 tensor"):
        minitorch.asarray(t, dtype=minitorch.float64, copy=False)
    a = np.zeros(3)
    shared = minitorch.asarray(a, copy=False)
    copied = minitorch.asarray(a, copy=True)
    converted = minitorch.asarray(a, dtype=minitorch.float32)
    a[0] = 5.0
    assert shared.tolist() == [5.0, 0.0, 0.0] and copied.tolist() == [0.0, 0.0, 0.0]
    assert converted.tolist() == [0.0, 0.0, 0.0] and converted.dtype == minitorch.float32
    with pytest.raises(ValueError, match="can't alias a float64 tensor"):
        minitorch.asarray(a, dtype=minitorch.float32, copy=False)
    with pytest.raises(ValueError, match="can't alias a list"):
        minitorch.asarray([1, 2], copy=False)
    assert minitorch.asarray([1.0, 2.0]).dtype == minitorch.get_default_dtype()
    assert minitorch.asarray([[1, 2]], dtype=minitorch.float64).tolist() == [[1.0, 2.0]]
    assert minitorch.asarray(np.float64(2.5)).dtype == minitorch.float64
    assert minitorch.asarray([1.0, 2.0], requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        minitorch.asarray([1, 2], requires_grad=True)


@pytest.mark.parametrize(("size", "stride"), [((2, 3), (1, 2)), ((2, 3), (4, 1)), ((2, 3), (0, 1)),
                                               ((2, 3, 4), (1, 8, 2)), ((3,), (2,)), ((), ())])
def test_empty_strided_makes_the_layout(size, stride):
    t = minitorch.empty_strided(size, stride, dtype=minitorch.float64)
    assert tuple(t.shape) == size and t.stride() == stride and t.dtype == minitorch.float64


def test_empty_strided_errors():
    with pytest.raises(RuntimeError, match="dimensionality of sizes"):
        minitorch.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="non-negative"):
        minitorch.empty_strided((2, 3), (-1, 1))
    with pytest.raises(RuntimeError, match="overlap"):
        minitorch.empty_strided((2, 3), (1, 1))


# --------------------------------------------------------------------------------- settings ----

def test_seed_initial_seed_and_rng_state_round_trip():
    saved = minitorch.get_rng_state()
    try:
        minitorch.manual_seed(123)
        assert minitorch.initial_seed() == 123
        state = minitorch.get_rng_state()
        assert state.dtype == minitorch.uint8 and state.ndim == 1
        first = minitorch.rand(4).tolist()
        minitorch.rand(3)
        minitorch.manual_seed(7)
        minitorch.set_rng_state(state)
        assert minitorch.rand(4).tolist() == first and minitorch.initial_seed() == 123
        minitorch.manual_seed(-1)
        assert minitorch.initial_seed() == 2**64 - 1  # a negative seed wraps around, as in PyTorch
        value = minitorch.seed()
        assert minitorch.initial_seed() == value and 0 <= value < 2**63
        assert minitorch.random.get_rng_state is minitorch.get_rng_state
        with pytest.raises(TypeError, match="uint8 tensor"):
            minitorch.set_rng_state(minitorch.zeros(3))
        broken = state.clone()
        broken[8:] = 65
        with pytest.raises(ValueError, match="not a state"):
            minitorch.set_rng_state(broken)
        with pytest.raises(TypeError, match="must be an int"):
            minitorch.manual_seed(1.5)
        minitorch.manual_seed(minitorch.tensor(5))  # a one-element integer tensor, as before and in PyTorch
        assert minitorch.initial_seed() == 5
    finally:
        minitorch.set_rng_state(saved)


def test_star_import_keeps_pythons_random():
    namespace = {}
    exec("import random\nfrom minitorch import *", namespace)  # noqa: S102
    assert namespace["random"].__name__ == "random" and "manual_seed" in namespace


def test_deterministic_algorithms_flag_is_recorded():
    assert not minitorch.are_deterministic_algorithms_enabled()
    try:
        minitorch.use_deterministic_algorithms(True, warn_only=True)
        assert minitorch.are_deterministic_algorithms_enabled()
        assert minitorch.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(TypeError, match="must be bool"):
            minitorch.use_deterministic_algorithms(1)
    finally:
        minitorch.use_deterministic_algorithms(False)
    assert not minitorch.are_deterministic_algorithms_enabled()


@pytest.fixture
def default_printoptions():
    yield
    minitorch.set_printoptions(profile="default")


def test_set_printoptions_changes_repr(default_printoptions):
    x = T([1.23456, 100.5])
    minitorch.set_printoptions(precision=2)
    assert repr(x) == "tensor([  1.23, 100.50])"
    minitorch.set_printoptions(precision=2, sci_mode=True)
    assert repr(x) == "tensor([1.23e+00, 1.00e+02])"
    minitorch.set_printoptions(sci_mode=False)
    assert repr(T([1e-8, 1.0])) == "tensor([0.00, 1.00])"
    minitorch.set_printoptions(threshold=5, edgeitems=2)
    assert repr(minitorch.arange(10)) == "tensor([0, 1, ..., 8, 9])"
    minitorch.set_printoptions(edgeitems=0)  # no edge items: the '...' alone, not an IndexError
    assert repr(minitorch.arange(10)).startswith("tensor([...")
    minitorch.set_printoptions(profile="full")
    assert "..." not in repr(minitorch.arange(1200))
    minitorch.set_printoptions(profile="default", linewidth=30)
    assert repr(minitorch.arange(12.0)).count("\n") == 2
    minitorch.set_printoptions(profile="short")
    assert repr(x) == "tensor([  1.23, 100.50])" and "..." in repr(minitorch.arange(1001))
    minitorch.set_printoptions(profile="default")
    assert repr(x) == "tensor([  1.2346, 100.5000])"
    with pytest.raises(ValueError, match="profile must be one of"):
        minitorch.set_printoptions(profile="long")
    with pytest.raises(TypeError, match="sci_mode"):
        minitorch.set_printoptions(sci_mode="yes")


def test_compile_returns_the_model_unchanged():
    model = minitorch.nn.Linear(2, 1)
    assert minitorch.compile(model) is model
    assert minitorch.compile(model, fullgraph=True, dynamic=False, backend="eager", options={"x": 1}) is model

    @minitorch.compile(mode="max-autotune")
    def double(t):
        return t * 2

    assert double(T([1.5])).tolist() == [3.0]
    with pytest.raises(RuntimeError, match="either mode or options"):
        minitorch.compile(model, mode="default", options={})
    with pytest.raises(RuntimeError, match="unrecognized mode"):
        minitorch.compile(model, mode="fast")
    with pytest.raises(TypeError):
        minitorch.compile(model, bogus=True)
