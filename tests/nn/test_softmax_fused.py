"""The fused softmax / log_softmax / cross_entropy / nll_loss kernels against NumPy on
every device: each of the CUDA kernels' row mappings (one warp per row for C <= 1024,
one block per row above, one thread per row when the dim is not the last), layouts,
size-0 and size-1 dims, -inf / NaN / huge values, forward and backward, float64
gradcheck for every reduction and ignore_index, empty batches and bad targets."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import LAYOUTS, TOL, make_tensor, shapes, to_numpy
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch.nn import functional as F
from minitorch.testing import gradcheck
from test_nn_losses import np_nll  # NumPy's negative log-likelihood, with ignore_index

REDUCTIONS = ["none", "sum", "mean"]
# Row lengths around the CUDA kernels' switches: a warp's 32 lanes, and 1024 (warp per
# row up to it, block per row above; 2049 is four passes of a 512-thread block, plus one).
CLASSES = [1, 31, 32, 33, 1000, 2049]


def rand(shape, seed=0, low=-5.0, high=5.0, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def np_log_softmax(x, axis):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_softmax(x, axis):
    return np.exp(np_log_softmax(x, axis))


def np_softmax_backward(g, y, axis, log):
    if log:  # y = log_softmax(x)
        return g - np.exp(y) * g.sum(axis=axis, keepdims=True)
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


def np_nll_grad(shape, t, reduction, g, ignore_index=-100):
    """d loss / d logp: -onehot(t) * w_row (w_row = g[n], g, or g / count; 0 if ignored)."""
    keep = t != ignore_index
    if reduction == "none":
        w = np.asarray(g, np.float64) * keep
    elif reduction == "sum":
        w = g * keep
    else:
        w = g * keep / max(keep.sum(), 1)
    grad = np.zeros(shape)
    grad[np.arange(len(t))[keep], t[keep]] = -1.0
    return grad * w[:, None]


def tol(dtype):
    return TOL[np.dtype(dtype)]


def row_layout(c, where):
    """(shape, dim) with rows of c elements: the last dim (CUDA: a warp or block per row),
    a middle or the first one (a thread per row; 33 rows side by side, one more than the
    CPU kernel's block of neighbouring rows)."""
    return {"last": ((3, c), -1), "middle": ((2, c, 3), 1), "first": ((c, 33), 0)}[where]


FNS = {"softmax": (F.softmax, np_softmax), "log_softmax": (F.log_softmax, np_log_softmax)}


# ---------------------------------------------------------------- softmax forward ----

@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("where", ["last", "middle", "first"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_every_row_mapping(device, name, c, where, dtype):
    fn, ref = FNS[name]
    shape, dim = row_layout(c, where)
    x = rand(shape, c, -8, 8, dtype)
    y = fn(minitorch.tensor(x, device=device), dim)
    assert y.dtype == minitorch.tensor(x).dtype and y.device.type == device and tuple(y.shape) == shape
    np.testing.assert_allclose(to_numpy(y), ref(x, dim), **tol(dtype))


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("layout", LAYOUTS)
@given(shape=shapes(1, 4), seed=st.integers(0, 2**31), data=st.data())
def test_softmax_random_shapes_and_layouts(device, name, layout, shape, seed, data):
    fn, ref = FNS[name]
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(shape, seed, -10, 10)
    y = fn(make_tensor(x, layout, device), dim)
    assert tuple(y.shape) == shape
    np.testing.assert_allclose(to_numpy(y), ref(x, dim), **tol(np.float64))


@pytest.mark.parametrize("name", list(FNS))
def test_softmax_of_a_0dim_tensor(device, name):
    fn, _ = FNS[name]
    y = fn(minitorch.tensor(3.5, device=device), 0)
    assert y.shape == () and to_numpy(y) == (1.0 if name == "softmax" else 0.0)


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("c", [5, 40, 1100])
@pytest.mark.parametrize("nan_at", [0, 1, -1])
def test_softmax_minus_inf_entries_and_rows(device, name, c, nan_at):
    fn, ref = FNS[name]
    x = rand((4, c), 1)
    x[0, ::2] = -np.inf       # some -inf entries, the first one among them: they get 0 (or -inf)
    x[1, :-1] = -np.inf       # only the last entry is finite: probability 1
    x[2, :] = -np.inf         # the whole row -inf: NaN, as in PyTorch (0 / 0)
    x[3, nan_at] = np.nan     # a NaN makes its whole row NaN
    with np.errstate(invalid="ignore"):
        expected = ref(x, 1)
    got = to_numpy(fn(minitorch.tensor(x, device=device), 1))
    np.testing.assert_allclose(got[:2], expected[:2], rtol=1e-12, atol=1e-12)
    assert np.isnan(got[2]).all() and np.isnan(got[3]).all()
    if name == "softmax":
        assert (got[0, ::2] == 0).all() and got[1, -1] == 1.0


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("c", [3, 1000, 2049])
def test_softmax_huge_logits_are_stable(device, name, c):
    fn, ref = FNS[name]
    x = rand((3, c), 2, -1, 1, np.float32)
    x[0] += 1e4
    x[1] -= 1e4
    x[2, 0] = 1e4  # one entry dominates
    got = to_numpy(fn(minitorch.tensor(x, device=device), -1))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, ref(x, -1), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- softmax backward ----

@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("where", ["last", "middle", "first"])
def test_softmax_backward_every_row_mapping(device, name, c, where):
    fn, ref = FNS[name]
    shape, dim = row_layout(c, where)
    x, g = rand(shape, c), rand(shape, c + 1, -1, 1)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    fn(xt, dim).backward(minitorch.tensor(g, device=device))
    assert xt.grad.dtype == minitorch.float64 and xt.grad.device.type == device
    expected = np_softmax_backward(g, ref(x, dim), dim, name == "log_softmax")
    np.testing.assert_allclose(to_numpy(xt.grad), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("g_layout", LAYOUTS)
def test_softmax_backward_strided_input_and_gradient(device, name, g_layout):
    fn, ref = FNS[name]
    x, g = rand((4, 6), 3), rand((4, 6), 4, -1, 1)
    base = minitorch.tensor(np.ascontiguousarray(x.T), device=device, requires_grad=True)
    y = fn(base.T, 0)  # a transposed (strided) input: softmax down its columns
    np.testing.assert_allclose(to_numpy(y), ref(x, 0), rtol=1e-12)
    y.backward(make_tensor(g, g_layout, device))  # the incoming gradient in any layout
    expected = np_softmax_backward(g, ref(x, 0), 0, name == "log_softmax")
    np.testing.assert_allclose(to_numpy(base.grad), expected.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(FNS))
def test_softmax_backward_of_sum_expanded_gradient(device, name):
    fn, ref = FNS[name]
    x = rand((3, 5), 5)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    fn(xt, 1).sum().backward()  # the gradient reaching the node is an expanded scalar
    expected = np_softmax_backward(np.ones_like(x), ref(x, 1), 1, name == "log_softmax")
    np.testing.assert_allclose(to_numpy(xt.grad), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (2, 0, 3), (1, 1), (1, 7), (7, 1)])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_size_0_and_1_dims_forward_and_backward(device, name, shape, dim):
    fn, ref = FNS[name]
    x = rand(shape, 6)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    y = fn(xt, dim)
    assert tuple(y.shape) == shape
    np.testing.assert_allclose(to_numpy(y), ref(x, dim), rtol=1e-12)
    y.sum().backward()
    assert tuple(xt.grad.shape) == shape
    expected = np_softmax_backward(np.ones(shape), ref(x, dim), dim, name == "log_softmax")
    np.testing.assert_allclose(to_numpy(xt.grad), expected, atol=1e-12)


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((5, 3), 0), ((2, 3, 2), 1), ((1, 4), -1), ((4,), 0)])
def test_softmax_gradcheck(device, name, shape, dim):
    fn, _ = FNS[name]
    x = minitorch.tensor(rand(shape, 7, -2, 2), device=device, requires_grad=True)
    assert gradcheck(lambda a: fn(a, dim), (x,))


# ---------------------------------------------------------------- class losses ----

LOSSES = {
    "cross_entropy": (F.cross_entropy, lambda x: np_log_softmax(x, 1)),
    "nll_loss": (F.nll_loss, lambda x: x.astype(np.float64)),
}


def targets(n, c, seed, ignore_index=None):
    t = np.random.default_rng(seed).integers(0, c, size=n).astype(np.int64)
    if ignore_index is not None and n:
        t[::3] = ignore_index
    return t


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_class_loss_forward_and_backward(device, loss, c, reduction, dtype):
    fn, to_logp = LOSSES[loss]
    x, t = rand((5, c), c, -6, 6, dtype), targets(5, c, c, ignore_index=-100)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    out = fn(xt, minitorch.tensor(t, device=device), reduction=reduction)
    expected = np_nll(to_logp(x), t, reduction)
    assert out.dtype == xt.dtype and out.device.type == device and tuple(out.shape) == np.shape(expected)
    np.testing.assert_allclose(to_numpy(out), expected, **tol(dtype))
    g = rand(5, 8, -1, 1) if reduction == "none" else 0.75
    out.backward(minitorch.tensor(np.asarray(g, dtype), device=device))
    expected_grad = np_nll_grad((5, c), t, reduction, g)
    if loss == "cross_entropy":  # (softmax - onehot) * w = softmax * w + the nll part
        w = -expected_grad.sum(1, keepdims=True)
        expected_grad = expected_grad + np.exp(to_logp(x)) * w
    np.testing.assert_allclose(to_numpy(xt.grad), expected_grad, **tol(dtype))


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("ignore_index", [-100, 0, 2])
def test_class_loss_ignore_index_anywhere(device, loss, ignore_index):
    # ignore_index may be a real class: rows with it count for nothing, gradient included
    fn, to_logp = LOSSES[loss]
    x, t = rand((6, 4), 9), np.array([0, 2, 1, 2, 3, 0], np.int64)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    out = fn(xt, minitorch.tensor(t, device=device), ignore_index=ignore_index)
    np.testing.assert_allclose(to_numpy(out), np_nll(to_logp(x), t, "mean", ignore_index), rtol=1e-12)
    out.backward()
    ignored = t == ignore_index
    assert (to_numpy(xt.grad)[ignored] == 0).all()
    assert (to_numpy(xt.grad)[~ignored] != 0).any()


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore", [False, True])
def test_class_loss_gradcheck(device, loss, reduction, ignore):
    fn, _ = LOSSES[loss]
    t = minitorch.tensor(np.array([2, -100, 0, 1] if ignore else [2, 3, 0, 1], np.int64), device=device)
    x = minitorch.tensor(rand((4, 4), 10, -2, 2), device=device, requires_grad=True)
    assert gradcheck(lambda a: fn(a, t, reduction=reduction), (x,))


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_class_loss_of_an_empty_batch(device, loss, reduction):
    fn, _ = LOSSES[loss]
    xt = minitorch.zeros(0, 5, device=device, requires_grad=True)
    out = fn(xt, minitorch.zeros(0, dtype=minitorch.int64, device=device), reduction=reduction)
    got = to_numpy(out)
    if reduction == "none":
        assert got.shape == (0,)
    else:  # PyTorch: the sum of nothing is 0, the mean NaN
        assert got.shape == () and (np.isnan(got) if reduction == "mean" else got == 0)
    out.sum().backward()
    assert tuple(xt.grad.shape) == (0, 5)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_class_loss_all_rows_ignored(device, loss, reduction):
    fn, _ = LOSSES[loss]
    xt = minitorch.tensor(rand((3, 4), 11), device=device, requires_grad=True)
    out = fn(xt, minitorch.tensor(np.full(3, -100, np.int64), device=device), reduction=reduction)
    got = to_numpy(out)
    assert np.isnan(got) if reduction == "mean" else (got == 0).all()
    out.sum().backward()
    np.testing.assert_array_equal(to_numpy(xt.grad), np.zeros((3, 4)))  # no NaN from 0 / 0


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("c", [3, 1000, 2049])
@pytest.mark.parametrize("bad", [-1, "c", 10**12])
def test_class_loss_target_out_of_range_is_index_error(device, loss, c, bad):
    fn, _ = LOSSES[loss]
    bad = c if bad == "c" else bad
    x = minitorch.tensor(rand((3, c), 12, dtype=np.float32), device=device)
    t = minitorch.tensor(np.array([0, bad, 1 % c], np.int64), device=device)
    # On a GPU the kernel records the bad target; the error comes at the next sync.
    with pytest.raises(IndexError, match=rf"{loss}.*target {bad} is out of bounds for {c} classes"):
        fn(x, t, reduction="none").sum().item()
    # the device stays usable, and the error is reported once
    ok = fn(x, minitorch.tensor(np.array([0, 0, 0], np.int64), device=device))
    assert np.isfinite(ok.item())


def test_class_loss_index_error_before_backward_does_not_crash(device):
    # On a GPU the IndexError waits for a sync: a backward before it must stay in bounds.
    x = minitorch.tensor(rand((2, 3)), device=device, requires_grad=True)
    with pytest.raises(IndexError, match="cross_entropy: target 5"):
        loss = F.cross_entropy(x, minitorch.tensor(np.array([5, 1], np.int64), device=device))
        loss.backward()
        loss.item()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_huge_logits_precise(device, dtype):
    # The saved logsumexp keeps its precision: the target far below the max in a row
    # around 5e3 (a float32 logsumexp would be 2.4e-4 off, and with it the gradient).
    x = np.array([[5e3, 5e3, -5e3], [1e4, 0.0, -1e4], [-1e4, -1e4, -1e4]], dtype)
    t = np.array([2, 1, 0], np.int64)
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    out = F.cross_entropy(xt, minitorch.tensor(t, device=device), reduction="none")
    np.testing.assert_allclose(to_numpy(out), [1e4 + np.log(2), 1e4, np.log(3)], rtol=1e-6)
    out.sum().backward()
    expected = np_softmax(x, 1) - np.eye(3)[t]
    np.testing.assert_allclose(to_numpy(xt.grad), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss", list(LOSSES))
def test_class_loss_strided_input_target_and_gradient(device, loss):
    fn, to_logp = LOSSES[loss]
    x, t = rand((5, 4), 13), np.array([3, 0, 2, 2, 1], np.int64)
    xt = make_tensor(x, "transpose", device)
    tt = make_tensor(t, "step", device)
    out = fn(xt, tt, reduction="none")
    np.testing.assert_allclose(to_numpy(out), np_nll(to_logp(x), t, "none"), rtol=1e-12)
    leaf = minitorch.tensor(x, device=device, requires_grad=True)
    g = rand(5, 14, -1, 1)
    fn(leaf.T.contiguous().T, tt, reduction="none").backward(make_tensor(g, "step", device))
    expected = np_nll_grad((5, 4), t, "none", g)
    if loss == "cross_entropy":
        expected = expected + np.exp(to_logp(x)) * -expected.sum(1, keepdims=True)
    np.testing.assert_allclose(to_numpy(leaf.grad), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", list(LOSSES))
def test_class_loss_node_names(device, loss):
    fn, _ = LOSSES[loss]
    x = minitorch.tensor(rand((2, 3)), device=device, requires_grad=True)
    out = fn(x, minitorch.tensor(np.array([0, 2], np.int64), device=device))
    assert out.grad_fn.name() == {"cross_entropy": "CrossEntropyLossBackward0", "nll_loss": "NllLossBackward0"}[loss]
    assert F.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("c", [2, 9, 1000])
def test_softmax_rows_with_plus_inf(device, name, c):
    # A +inf entry: inf - inf is NaN there, and the other entries get 0 (or -inf), as in
    # PyTorch; the SIMD row path hands such rows to the online merge.
    fn, _ = FNS[name]
    x = rand((2, c), 3)
    x[0, c // 2] = np.inf
    x[1, :] = np.inf
    got = to_numpy(fn(minitorch.tensor(x, device=device), 1))
    assert np.isnan(got[0, c // 2]) and np.isnan(got[1]).all()
    others = np.delete(got[0], c // 2)
    assert (others == (0.0 if name == "softmax" else -np.inf)).all()
