"""scatter_reduce / index_reduce / scatter(reduce="multiply"): one scatter kernel per
reduction (cpu/indexing.cpp; cuda/indexing.cu, where values meeting at one place combine
through atomicCAS), checked against NumPy's ufunc.at on random shapes (repeated indices,
non-contiguous inputs, size-0 and 0-dim tensors, every dtype), NaN, the gradients at ties
and zeros, float64 gradcheck and double backward, launch counts and errors, on every device.
tests/opinfo runs the op table's generic checks; tests/golden_ops compares with PyTorch."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, launches
from minitorch.testing import gradcheck

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]
UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}
NP = {"float32": np.float32, "float64": np.float64, "float16": np.float32, "bfloat16": np.float32,
      "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": bool}
needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low = reduce == "amax"
    if dtype == np.bool_:
        return not low
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    info = np.iinfo(dtype)
    return info.min if low else info.max


def np_scatter_reduce(x, dim, index, src, reduce, include_self=True):
    """x with src reduced in at the places index names (np.<ufunc>.at, index order)."""
    out = x.copy()
    src = src[tuple(slice(0, s) for s in index.shape)]
    idx = list(np.indices(index.shape))
    idx[dim] = index
    idx = tuple(idx)
    if not include_self:
        out[idx] = identity(reduce, x.dtype)
    UFUNC[reduce].at(out, idx, src)
    if reduce == "mean":
        count = np.full(x.shape, 1 if include_self else 0, np.int64)
        np.add.at(count, idx, 1)
        count = np.maximum(count, 1)
        out = (out / count).astype(x.dtype) if x.dtype.kind == "f" else (out // count).astype(x.dtype)
    return out


def values(rng, shape, dtype):
    """Values exact in every dtype, whose sums and products of a few stay in range."""
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint8":
        return rng.integers(0, 4, shape).astype(np.uint8)
    if dtype in ("int64", "int32", "int16", "int8"):
        return rng.integers(-3, 4, shape).astype(NP[dtype])
    return (rng.integers(-8, 9, shape) / 4).astype(NP[dtype])  # quarters: exact in bfloat16


def T(a, device, dtype):
    return minitorch.tensor(np.asarray(a), device=device).to(getattr(minitorch, dtype))


def as_np(t):
    if t.dtype in (minitorch.float16, minitorch.bfloat16):
        t = t.float()
    return t.cpu().numpy()


# ---------------------------------------------------------------- values ----

VALUE_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("reduce", "dtype"), [(r, d) for r in REDUCTIONS for d in VALUE_DTYPES
                                               if (r, d) != ("mean", "bool")])  # a TypeError: test_errors
def test_values_against_numpy(reduce, dtype, device):
    rng = np.random.default_rng(zlib.crc32(f"{reduce}-{dtype}".encode()))
    cases = [((4, 5), 0, (7, 5)), ((4, 5), 1, (4, 9)), ((3, 4, 5), -1, (2, 3, 8)), ((6,), 0, (15,)),
             ((3, 1, 4), 1, (3, 3, 2)), ((2, 0, 3), 2, (2, 0, 5)), ((3, 4), 0, (0, 4))]
    for shape, dim, ishape in cases:
        d = dim % len(shape)
        x = values(rng, shape, dtype)
        index = rng.integers(0, shape[d], ishape) if shape[d] else np.zeros(ishape, np.int64)
        src_shape = tuple(s + (1 if k != d else 0) for k, s in enumerate(ishape))  # larger: its corner is used
        src = values(rng, src_shape, dtype)
        for include_self in (True, False):
            want = np_scatter_reduce(x.astype(NP[dtype]), d, index, src, reduce, include_self)
            got = T(x, device, dtype).scatter_reduce(dim, minitorch.tensor(index, device=device), T(src, device, dtype),
                                                     reduce, include_self=include_self)
            assert got.dtype == getattr(minitorch, dtype) and tuple(got.shape) == shape
            np.testing.assert_allclose(as_np(got), want.astype(as_np(got).dtype), rtol=1e-2 if dtype in (
                "float16", "bfloat16") else 1e-6, err_msg=f"{shape} dim {dim} include_self={include_self}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_strided_inputs(reduce, device):
    """self transposed, src a strided slice larger than index, index transposed or
    expanded (stride 0): each read where it lies."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4))
    xt = minitorch.tensor(x, device=device).t()                               # (4, 5), strides (1, 4)
    s = minitorch.tensor(rng.standard_normal((10, 12)), device=device)[::2, ::2]  # (5, 6), strides (24, 2)
    cases = [(0, minitorch.tensor(rng.integers(0, 4, (5, 4)), device=device).t()),
             (1, minitorch.tensor(rng.integers(0, 5, (5, 4)), device=device).t()),
             (1, minitorch.tensor([[2, 0, 3, 0, 1]], device=device).expand(4, 5))]
    for dim, idx in cases:
        for include_self in (True, False):
            want = np_scatter_reduce(x.T.copy(), dim, idx.cpu().numpy(), s.cpu().numpy(), reduce, include_self)
            got = xt.scatter_reduce(dim, idx, s, reduce, include_self=include_self)
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12, err_msg=f"dim {dim}")


@pytest.mark.parametrize("device", DEVICES)
def test_zero_dim_tensors(device):
    x = minitorch.tensor(3.0, device=device)
    got = x.scatter_reduce(0, minitorch.tensor(0, device=device), minitorch.tensor(4.0, device=device), "sum")
    assert got.shape == () and got.item() == 7.0
    got = x.scatter_reduce(0, minitorch.tensor(0, device=device), minitorch.tensor(4.0, device=device), "amin",
                           include_self=False)
    assert got.item() == 4.0
    x = minitorch.tensor(3.0, device=device, requires_grad=True)
    s = minitorch.tensor(4.0, device=device, requires_grad=True)
    x.scatter_reduce(0, minitorch.tensor(0, device=device), s, "prod").backward()
    assert x.grad.shape == () and x.grad.item() == 4.0 and s.grad.item() == 3.0


@pytest.mark.parametrize("device", DEVICES)
def test_nan_wins_amax_and_amin(device):
    nan = float("nan")
    x = minitorch.tensor([1.0, nan, 3.0, 4.0], device=device)
    i = minitorch.tensor([0, 0, 1, 2, 2], device=device)
    s = minitorch.tensor([nan, 2.0, 5.0, 1.0, nan], device=device)
    for reduce in ("amax", "amin"):
        got = x.scatter_reduce(0, i, s, reduce).cpu().numpy()
        assert np.isnan(got[0]) and np.isnan(got[1]) and np.isnan(got[2]) and got[3] == 4.0
        got = x.scatter_reduce(0, i, s, reduce, include_self=False).cpu().numpy()
        assert np.isnan(got[0]) and got[1] == 5.0 and np.isnan(got[2]) and got[3] == 4.0


@pytest.mark.parametrize("device", DEVICES)
def test_many_values_at_one_place(device):
    """Thousands of elements into three places: on a GPU they contend for the same words
    (the atomicCAS loop); max, min and a product of +-1 and powers of two are exact."""
    rng = np.random.default_rng(2)
    n = 3000
    index = rng.integers(0, 3, n)
    src = rng.permutation(n).astype(np.float64) - 1500
    ones = rng.choice([-1.0, 1.0], n)
    ones[rng.choice(n, 6, replace=False)] = 2.0
    x = np.zeros(3)
    i = minitorch.tensor(index, device=device)
    for reduce, s in (("amax", src), ("amin", src), ("prod", ones)):
        for dtype in ("float64", "float32", "int64"):
            xs = T(np.ones(3) if reduce == "prod" else x, device, dtype)
            got = xs.scatter_reduce(0, i, T(s, device, dtype), reduce)
            want = np_scatter_reduce((np.ones(3) if reduce == "prod" else x).astype(NP[dtype]), 0, index,
                                     s.astype(NP[dtype]), reduce)
            np.testing.assert_array_equal(as_np(got), want, err_msg=f"{reduce} {dtype}")
    b = rng.random(n) > 0.01
    for reduce, want in (("amin", [np.all(b[index == k]) for k in range(3)]),
                         ("prod", [np.all(b[index == k]) for k in range(3)]),
                         ("amax", [np.any(b[index == k]) for k in range(3)])):
        got = minitorch.tensor([True, True, False], device=device).scatter_reduce(
            0, i, minitorch.tensor(b, device=device), reduce, include_self=False)
        np.testing.assert_array_equal(got.cpu().numpy(), want, err_msg=f"bool {reduce}")


@pytest.mark.parametrize("device", DEVICES)
def test_integer_mean_rounds_down(device):
    x = minitorch.tensor([-5, 7, 9], device=device)
    i = minitorch.tensor([0, 0, 1], device=device)
    s = minitorch.tensor([-2, 3, 4], device=device)
    assert x.scatter_reduce(0, i, s, "mean").tolist() == [-2, 5, 9]  # -4/3 and 11/2 floored (PyTorch's)
    assert x.scatter_reduce(0, i, s, "mean", include_self=False).tolist() == [0, 4, 9]


@pytest.mark.parametrize("device", DEVICES)
def test_index_reduce_and_scatter_multiply(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5))
    src = rng.standard_normal((3, 4))
    index = np.array([4, 0, 4, 2])
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            got = minitorch.tensor(x, device=device).index_reduce(
                1, minitorch.tensor(index, device=device), minitorch.tensor(src, device=device), reduce,
                include_self=include_self)
            want = np_scatter_reduce(x, 1, np.broadcast_to(index, (3, 4)), src, reduce, include_self)
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12)
    t = minitorch.tensor([1.0, 2.0, 3.0], device=device)
    i = minitorch.tensor([0, 0, 2], device=device)
    assert t.scatter(0, i, minitorch.tensor([3.0, 4.0, 5.0], device=device), reduce="multiply").tolist() == [12, 2, 15]
    assert t.scatter(0, i, 2.0, reduce="multiply").tolist() == [4, 2, 6]
    assert t.scatter(0, i, value=2.0, reduce="multiply").tolist() == [4, 2, 6]
    y = t.clone()
    assert y.scatter_reduce_(0, i, minitorch.tensor([3.0, 4.0, 5.0], device=device), "amax") is y
    assert y.tolist() == [4.0, 2.0, 5.0]
    z = t.clone()
    assert z.index_reduce_(0, i, minitorch.tensor([3.0, 4.0, 5.0], device=device), "amin") is z
    assert z.tolist() == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------- gradients ----

def _inputs(device, seed=4, shape=(4, 5), ishape=(6, 5), dim=0):
    rng = np.random.default_rng(seed)
    x = minitorch.tensor(rng.standard_normal(shape), device=device, requires_grad=True)
    src = minitorch.tensor(rng.standard_normal(ishape), device=device, requires_grad=True)
    index = minitorch.tensor(rng.integers(0, shape[dim], ishape), device=device)
    return x, src, index


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_gradcheck(reduce, include_self, device):
    x, src, index = _inputs(device)
    fn = lambda a, b: a.scatter_reduce(0, index, b, reduce, include_self=include_self)  # noqa: E731
    assert gradcheck(fn, (x, src))
    x, src, index = _inputs(device, seed=5, shape=(3, 4), ishape=(3, 7), dim=1)
    fn = lambda a, b: a.scatter_reduce(1, index, b, reduce, include_self=include_self)  # noqa: E731
    assert gradcheck(fn, (x, src))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("include_self", [True, False])
def test_double_backward(include_self, device):
    """The backward is made of ops, so create_graph differentiates it: prod's gradient
    depends on the inputs (the others' is piecewise constant in them)."""
    x, src, index = _inputs(device, shape=(3, 4), ishape=(5, 4))
    w = minitorch.tensor(np.random.default_rng(6).standard_normal((3, 4)), device=device)

    def grads(a, b):
        with minitorch.enable_grad():  # gradcheck's finite differences run under no_grad
            out = a.scatter_reduce(0, index, b, "prod", include_self=include_self)
            return tuple(minitorch.autograd.grad((out * w).sum(), (a, b), create_graph=True))

    assert gradcheck(grads, (x, src))
    for reduce in ("sum", "mean", "amax", "amin"):
        out = x.scatter_reduce(0, index, src, reduce, include_self=include_self)
        gx, gs = minitorch.autograd.grad((out * w).sum(), (x, src), create_graph=True)
        assert gx.shape == x.shape and gs.shape == src.shape


@pytest.mark.parametrize("device", DEVICES)
def test_amax_ties_share_the_gradient(device):
    """Values equal to the result share its gradient evenly (PyTorch's rule); a self left
    out by include_self=False is no part of the tie, even when it equals the result."""
    x = minitorch.tensor([3.0, 5.0, 1.0], device=device, requires_grad=True)
    s = minitorch.tensor([3.0, 1.0, 3.0, 7.0], device=device, requires_grad=True)
    i = minitorch.tensor([0, 0, 0, 2], device=device)
    x.scatter_reduce(0, i, s, "amax").backward(minitorch.tensor([1.0, 1.0, 1.0], device=device))
    assert x.grad.tolist() == pytest.approx([1 / 3, 1.0, 0.0])
    assert s.grad.tolist() == pytest.approx([1 / 3, 0.0, 1 / 3, 1.0])
    # out[0] = max(3, 1) over src alone: its one maximum takes the whole gradient (PyTorch
    # 2.x gives it 1/2, counting the left-out x[0] = 3 in the tie, then zeroing x's share).
    x.grad = s.grad = None
    s2 = minitorch.tensor([3.0, 1.0], device=device, requires_grad=True)
    x.scatter_reduce(0, minitorch.tensor([0, 0], device=device), s2, "amax", include_self=False).sum().backward()
    assert s2.grad.tolist() == [1.0, 0.0] and x.grad.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("device", DEVICES)
def test_prod_gradient_at_zeros(device):
    """Dividing by a factor fails where it is 0: the derivative is the product of the others."""
    def grads(xv, sv, include_self=True):
        x = minitorch.tensor(xv, device=device, requires_grad=True)
        s = minitorch.tensor(sv, device=device, requires_grad=True)
        i = minitorch.tensor([0] * len(sv), device=device)
        x.scatter_reduce(0, i, s, "prod", include_self=include_self).sum().backward()
        return x.grad.tolist(), s.grad.tolist()

    assert grads([2.0], [3.0, 0.0, 5.0]) == ([0.0], [0.0, 30.0, 0.0])  # one zero: only it has a gradient
    assert grads([2.0], [0.0, 4.0, 0.0]) == ([0.0], [0.0, 0.0, 0.0])   # two zeros: none has
    assert grads([0.0], [3.0, 4.0]) == ([12.0], [0.0, 0.0])            # self the zero
    assert grads([0.0], [3.0, 4.0], include_self=False) == ([0.0], [4.0, 3.0])


@pytest.mark.parametrize("device", DEVICES)
def test_mean_gradient_counts(device):
    x = minitorch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    s = minitorch.tensor([4.0, 5.0, 6.0], device=device, requires_grad=True)
    i = minitorch.tensor([0, 0, 1], device=device)
    x.scatter_reduce(0, i, s, "mean", include_self=False).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]  # places nothing reached pass self through
    assert s.grad.tolist() == [0.5, 0.5, 1.0]


# ---------------------------------------------------------------- structure ----

@needs_cuda
def test_launch_counts():
    d = "cuda"
    x = minitorch.randn(64, 100, device=d)
    idx = minitorch.randint(0, 100, (64, 300), device=d)
    src = minitorch.randn(64, 300, device=d)
    for reduce in ("sum", "prod", "amax", "amin"):
        ks = launches(lambda: x.scatter_reduce(1, idx, src, reduce))
        assert len(ks) == 2 and "scatter_kernel" in ks[1], (reduce, ks)  # the copy of self, one scatter
        ks = launches(lambda: x.scatter_reduce(1, idx, src, reduce, include_self=False))
        assert len(ks) == 4, (reduce, ks)  # + the identity (a fill) written where index points
    ks = launches(lambda: x.scatter_reduce(1, idx, src, "mean"))
    assert len(ks) <= 6, ks  # + the count: fill, scatter-add, at least 1, divide
    h, hs = x.half(), src.half()
    ks = launches(lambda: h.scatter_reduce(1, idx, hs, "amax"))
    # 16-bit: computed in float32 through Widen: self's copy, self and src staged in, one
    # scatter, self converted back (src is only read: not converted back)
    assert len(ks) == 5 and sum("scatter" in k for k in ks) == 1, ks


# ---------------------------------------------------------------- errors ----

@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = minitorch.zeros(3, 4, device=device)
    i = minitorch.zeros(2, 4, dtype=minitorch.int64, device=device)
    s = minitorch.ones(2, 4, device=device)
    with pytest.raises(ValueError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, i, s, "max")
    with pytest.raises(TypeError, match="reduce"):
        x.scatter_reduce(0, i, s, 3)
    with pytest.raises(TypeError, match="same dtype"):
        x.scatter_reduce(0, i, s.double(), "sum")
    with pytest.raises(TypeError, match="int64"):
        x.scatter_reduce(0, i.int(), s, "sum")
    with pytest.raises(TypeError, match="src"):
        x.scatter_reduce(0, i, 1.0, "sum")
    with pytest.raises(ValueError, match="same number of dimensions"):
        x.scatter_reduce(0, i, minitorch.tensor(1.0, device=device), "sum")
    with pytest.raises(ValueError, match="must not exceed"):
        x.scatter_reduce(0, minitorch.zeros(2, 5, dtype=minitorch.int64, device=device), s, "sum")
    with pytest.raises(IndexError):
        x.scatter_reduce(2, i, s, "sum")
    with pytest.raises(TypeError, match="mean"):
        x.bool().scatter_reduce(0, i, s.bool(), "mean")
    with pytest.raises(ValueError, match="prod, mean, amax or amin"):
        x.index_reduce(0, minitorch.tensor([0], device=device), minitorch.ones(1, 4, device=device), "sum")
    with pytest.raises(ValueError, match="source of shape"):
        x.index_reduce(0, minitorch.tensor([0], device=device), minitorch.ones(2, 4, device=device), "amax")
    with pytest.raises(IndexError, match="out of bounds|out of range"):
        bad = minitorch.tensor([[0, 5, 0, 0]], device=device)
        x.scatter_reduce(0, bad, minitorch.ones(1, 4, device=device), "amax")
        minitorch.cuda.synchronize() if device == "cuda" else None
    leaf = minitorch.zeros(3, 4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.scatter_reduce_(0, i, s, "sum")


@needs_cuda
def test_device_mismatch():
    x = minitorch.zeros(3, 4)
    with pytest.raises(RuntimeError, match="device"):
        x.scatter_reduce(0, minitorch.zeros(2, 4, dtype=minitorch.int64, device="cuda"), minitorch.ones(2, 4), "sum")
