"""Creating tensors, reading them back, NumPy interop (shared memory), repr, threads."""
from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from conftest import DEVICES, assert_tensor_equal, random_array, seeds, shapes, to_numpy

F32, F64, I64, BOOL = minitorch.float32, minitorch.float64, minitorch.int64, minitorch.bool


# ----------------------------------------------------------------- tensor() ----

@pytest.mark.parametrize("device", DEVICES)
def test_tensor_from_nested_lists(device):
    t = minitorch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    assert tuple(t.shape) == (2, 3) and t.dtype == F32
    assert_tensor_equal(t, np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    assert_tensor_equal(minitorch.tensor([[[1], [2]]], device=device), np.array([[[1], [2]]], np.int64))
    assert_tensor_equal(minitorch.tensor([], device=device), np.zeros(0, np.float32))
    assert_tensor_equal(minitorch.tensor([[], []], device=device), np.zeros((2, 0), np.float32))
    assert_tensor_equal(minitorch.tensor(([1, 2], (3, 4)), device=device), np.array([[1, 2], [3, 4]]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("value", "dtype"),
    [(3, I64), (2.5, F32), (True, BOOL), (np.float64(1.25), F64), (np.int64(-4), I64), (np.float32(0.5), F32)],
    ids=repr,
)
def test_tensor_from_a_scalar_is_zero_dim(device, value, dtype):
    t = minitorch.tensor(value, device=device)
    assert t.dtype == dtype
    assert tuple(t.shape) == () and t.dim() == 0 and t.numel() == 1
    assert t.item() == value
    assert t.tolist() == value


@pytest.mark.parametrize("device", DEVICES)
@given(shape=shapes(), seed=seeds, dtype=st.sampled_from([np.float32, np.float64, np.int64, np.bool_]))
def test_tensor_from_numpy_copies(device, shape, seed, dtype):
    a = random_array(seed, shape, dtype)
    t = minitorch.tensor(a, device=device)
    assert_tensor_equal(t, a)
    if a.size:
        before = a.copy()
        a.flat[0] = not a.flat[0] if dtype == np.bool_ else a.flat[0] + 1
        assert_tensor_equal(t, before)  # tensor() copies
    # a non-contiguous source array works too
    if a.ndim >= 2:
        assert_tensor_equal(minitorch.tensor(a.T, device=device), a.T)


# ---------------------------------------------------------------- factories ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["zeros", "ones"])
@given(shape=shapes(min_dims=0))
def test_zeros_ones(device, name, shape):
    ref = getattr(np, name)
    t = getattr(minitorch, name)(*shape, device=device)
    assert_tensor_equal(t, ref(shape, np.float32))
    assert_tensor_equal(getattr(minitorch, name)(shape, device=device), ref(shape, np.float32))
    assert_tensor_equal(getattr(minitorch, name)(list(shape), dtype=F64, device=device), ref(shape, np.float64))
    assert_tensor_equal(getattr(minitorch, name)(shape, dtype=I64, device=device), ref(shape, np.int64))
    assert_tensor_equal(getattr(minitorch, name)(shape, dtype=BOOL, device=device), ref(shape, np.bool_))


@pytest.mark.parametrize("device", DEVICES)
def test_full_infers_dtype_from_the_value(device):
    assert_tensor_equal(minitorch.full((2, 3), 1.5, device=device), np.full((2, 3), 1.5, np.float32))
    assert_tensor_equal(minitorch.full((2,), 7, device=device), np.full(2, 7, np.int64))
    assert_tensor_equal(minitorch.full((2,), True, device=device), np.full(2, True))
    assert_tensor_equal(minitorch.full((2,), 7, dtype=F64, device=device), np.full(2, 7.0))
    assert_tensor_equal(minitorch.full([3], -2.0, device=device), np.full(3, -2.0, np.float32))
    z = minitorch.full((), 4, device=device)
    assert z.dim() == 0 and z.item() == 4


@pytest.mark.parametrize("device", DEVICES)
def test_empty_has_shape_and_dtype(device):
    e = minitorch.empty(2, 3, device=device)
    assert tuple(e.shape) == (2, 3) and e.dtype == F32 and e.is_contiguous()
    e = minitorch.empty((4,), dtype=I64, device=device)
    assert tuple(e.shape) == (4,) and e.dtype == I64
    assert minitorch.empty(0, device=device).numel() == 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "args",
    [(5,), (2, 7), (1, 2, 0.25), (5, 0, -1), (0, 1, 0.1), (-2.5, 2.5), (3.0,), (0,), (2, 2), (10, 1, -3)],
    ids=repr,
)
def test_arange(device, args):
    t = minitorch.arange(*args, device=device)
    ref = np.arange(*args)
    want = np.float32 if ref.dtype.kind == "f" else np.int64
    assert_tensor_equal(t, ref.astype(want), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_arange_dtype(device):
    assert_tensor_equal(minitorch.arange(4, dtype=F64, device=device), np.arange(4.0))
    assert_tensor_equal(minitorch.arange(0, 1, 0.25, dtype=F64, device=device), np.arange(0, 1, 0.25))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("args", [(0, 1, 5), (-3, 7, 11), (2, 3, 1), (0, 1, 0), (1, 0, 4), (0, 1, 7)], ids=repr)
def test_linspace(device, args):
    t = minitorch.linspace(*args, device=device)
    assert_tensor_equal(t, np.linspace(*args, dtype=np.float32), rtol=1e-6, atol=1e-6)
    assert_tensor_equal(minitorch.linspace(*args, dtype=F64, device=device), np.linspace(*args), rtol=1e-12)
    if args[2] > 1:
        assert t.cpu().numpy()[-1] == np.float32(args[1])  # the end point is exact


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("n", "m"), [(3, None), (2, 4), (4, 2), (0, None), (1, 1), (0, 3)])
def test_eye(device, n, m):
    t = minitorch.eye(n, m, device=device)
    assert_tensor_equal(t, np.eye(n, m, dtype=np.float32))
    assert_tensor_equal(minitorch.eye(n, m, dtype=I64, device=device), np.eye(n, m, dtype=np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [None, F64, I64, BOOL])
def test_like_forms(device, dtype):
    x = minitorch.tensor(random_array(0, (2, 3), np.float64), device=device)
    want = x.dtype if dtype is None else dtype
    np_want = {F32: np.float32, F64: np.float64, I64: np.int64, BOOL: np.bool_}[want]
    assert_tensor_equal(minitorch.zeros_like(x, dtype=dtype), np.zeros((2, 3), np_want))
    assert_tensor_equal(minitorch.ones_like(x, dtype=dtype), np.ones((2, 3), np_want))
    assert_tensor_equal(minitorch.full_like(x, 1, dtype=dtype), np.full((2, 3), 1, np_want))
    e = minitorch.empty_like(x, dtype=dtype)
    assert tuple(e.shape) == (2, 3) and e.dtype == want
    if dtype in (None, F64):
        r = minitorch.rand_like(x, dtype=dtype)
        assert r.dtype == want and tuple(r.shape) == (2, 3)
        assert ((r >= 0) * (r < 1)).cpu().numpy().all()
        assert minitorch.randn_like(x, dtype=dtype).dtype == want


# ------------------------------------------------------------------ random ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "make",
    [
        lambda d: minitorch.rand(50, device=d),
        lambda d: minitorch.rand(5, 10, dtype=F64, device=d),
        lambda d: minitorch.randn(4, 25, device=d),
        lambda d: minitorch.randint(0, 1000, (50,), device=d),
    ],
    ids=["rand", "rand64", "randn", "randint"],
)
def test_random_is_reproducible_after_manual_seed(device, make):
    minitorch.manual_seed(1234)
    a = to_numpy(make(device))
    b = to_numpy(make(device))
    minitorch.manual_seed(1234)
    c = to_numpy(make(device))
    minitorch.manual_seed(4321)
    d = to_numpy(make(device))
    np.testing.assert_array_equal(a, c)  # same seed -> same values
    assert not np.array_equal(a, b)  # the generator moves on
    assert not np.array_equal(a, d)  # another seed -> other values


@pytest.mark.parametrize("device", DEVICES)
def test_random_distributions(device):
    minitorch.manual_seed(0)
    u = to_numpy(minitorch.rand(100_000, device=device))
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.std() - np.sqrt(1 / 12)) < 0.01
    n = to_numpy(minitorch.randn(100_000, dtype=F64, device=device))
    assert n.dtype == np.float64 and abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02
    r = to_numpy(minitorch.randint(-3, 4, (10_000,), device=device))
    assert r.dtype == np.int64
    assert set(np.unique(r).tolist()) == set(range(-3, 4))  # [low, high): all hit, high never
    r = to_numpy(minitorch.randint(5, (1000,), device=device))
    assert r.min() == 0 and r.max() == 4
    assert tuple(minitorch.randint(0, 2, (2, 3), device=device).shape) == (2, 3)


# ---------------------------------------------------------- NumPy interop ----

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_from_numpy_shares_memory_both_ways(dtype):
    a = np.zeros((3, 4), dtype=dtype)
    t = minitorch.from_numpy(a)
    assert t.dtype == {np.float32: F32, np.float64: F64, np.int64: I64, np.bool_: BOOL}[dtype]
    assert t.data_ptr() == a.ctypes.data
    t[1, 2] = 1  # tensor -> array
    assert a[1, 2] == 1
    a[2, 3] = 1  # array -> tensor
    assert t[2, 3].item() == 1
    assert np.shares_memory(t.cpu().numpy(), a)


def test_from_numpy_of_strided_arrays_keeps_the_strides():
    base = np.arange(24.0).reshape(4, 6)
    for a in (base.T, base[1:, ::2], base[:, 3]):
        t = minitorch.from_numpy(a)
        np.testing.assert_array_equal(t.cpu().numpy(), a)
        assert t.stride() == tuple(s // 8 for s in a.strides)
        t.fill_(-1.0)
        assert (a == -1).all()
        base[...] = np.arange(24.0).reshape(4, 6)


def test_from_numpy_keeps_the_array_alive():
    t = minitorch.from_numpy(np.arange(5.0) * 2)
    gc.collect()
    np.testing.assert_array_equal(t.cpu().numpy(), [0, 2, 4, 6, 8])


@pytest.mark.parametrize("dtype", [F32, F64, I64, BOOL])
def test_numpy_shares_memory_with_the_tensor(dtype):
    t = minitorch.zeros(2, 3, dtype=dtype)
    n = t.cpu().numpy()
    assert n.dtype == {F32: np.float32, F64: np.float64, I64: np.int64, BOOL: np.bool_}[dtype]
    assert np.shares_memory(n, t.cpu().numpy())
    assert n.ctypes.data == t.data_ptr()
    n[0, 1] = 1
    assert t[0, 1].item() == 1
    t[1, 2] = 1
    assert n[1, 2] == 1


def test_numpy_of_a_view_has_its_strides_and_offset():
    t = minitorch.tensor(np.arange(12.0).reshape(3, 4))
    v = t.T[1:, ::2]
    n = v.cpu().numpy()
    np.testing.assert_array_equal(n, np.arange(12.0).reshape(3, 4).T[1:, ::2])
    assert n.ctypes.data == v.data_ptr()
    n[0, 0] = 100
    assert t[0, 1].item() == 100


def test_numpy_outlives_the_tensor():
    n = minitorch.arange(4).cpu().numpy()
    gc.collect()
    np.testing.assert_array_equal(n, [0, 1, 2, 3])


def test_np_asarray():
    t = minitorch.tensor([[1.5, 2.5]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (1, 2)
    np.testing.assert_array_equal(a, [[1.5, 2.5]])
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [[1.5, 2.5]])
    assert np.asarray(minitorch.tensor([1, 2])).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(t.T), [[1.5], [2.5]])


# ------------------------------------------------------ reading back values ----

@pytest.mark.parametrize("device", DEVICES)
def test_item(device):
    x = minitorch.tensor([[0.1]], device=device)
    assert isinstance(x.item(), float) and x.item() == float(np.float32(0.1))
    i = minitorch.tensor([[7]], device=device)
    assert isinstance(i.item(), int) and i.item() == 7
    b = minitorch.tensor([True], device=device)
    assert b.item() is True
    big = minitorch.tensor(np.array([2**62 + 1]), device=device)
    assert big.item() == 2**62 + 1  # exact, no trip through double
    assert minitorch.tensor(np.arange(6.0).reshape(2, 3), device=device)[1, 2].item() == 5.0
    assert float(minitorch.tensor([2.5], device=device)) == 2.5 and int(i) == 7 and bool(b)


@pytest.mark.parametrize("device", DEVICES)
def test_tolist(device):
    assert minitorch.tensor([[1, 2], [3, 4]], device=device).tolist() == [[1, 2], [3, 4]]
    assert minitorch.tensor([[1.5, 2.0]], device=device).T.tolist() == [[1.5], [2.0]]
    assert minitorch.tensor([True, False], device=device).tolist() == [True, False]
    assert minitorch.full((), 2.5, device=device).tolist() == 2.5
    assert minitorch.zeros(2, 0, device=device).tolist() == [[], []]


@pytest.mark.parametrize("device", DEVICES)
def test_shape_size_dim_numel_dtype_device(device):
    t = minitorch.zeros(2, 3, 4, dtype=F64, device=device)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert repr(t.shape) == "minitorch.Size([2, 3, 4])"
    assert t.dim() == 3 and t.ndim == 3
    assert t.numel() == 24 and t.shape.numel() == 24
    assert t.dtype == F64 and t.element_size() == 8
    assert t.device.type == device and str(t.device) == ("cpu" if device == "cpu" else "cuda:0") and t.device == device
    assert len(t) == 2
    assert [tuple(r.shape) for r in t] == [(3, 4), (3, 4)]
    assert minitorch.zeros(0, 5, device=device).numel() == 0
    z = minitorch.full((), 1.0, device=device)
    assert z.shape == () and z.dim() == 0 and z.numel() == 1
    with pytest.raises(IndexError, match=r"size: dimension out of range"):
        t.size(3)


# -------------------------------------------------------------------- repr ----

REPRS = [
    (lambda: minitorch.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: minitorch.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
    (lambda: minitorch.tensor([-1.5, 2.0]), "tensor([-1.5000,  2.0000])"),
    (lambda: minitorch.tensor(3), "tensor(3)"),
    (lambda: minitorch.full((), 2.5), "tensor(2.5000)"),
    (lambda: minitorch.tensor([1, 20, 300]), "tensor([  1,  20, 300])"),
    (lambda: minitorch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: minitorch.tensor(np.array([1.0, 2.0])), "tensor([1., 2.], dtype=minitorch.float64)"),
    (lambda: minitorch.tensor(np.array([[0.5]])), "tensor([[0.5000]], dtype=minitorch.float64)"),
    (lambda: minitorch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: minitorch.tensor([float("nan"), float("inf"), 1.0]), "tensor([nan, inf, 1.])"),
    (lambda: minitorch.zeros(0), "tensor([])"),
    (lambda: minitorch.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: minitorch.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: minitorch.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (lambda: minitorch.tensor([[1.0, 2.0], [3.0, 4.0]]).T, "tensor([[1., 3.],\n        [2., 4.]])"),
]


@pytest.mark.parametrize(("make", "text"), REPRS, ids=[r[1] for r in REPRS])
def test_repr(make, text):
    assert repr(make()) == text


def test_str_and_format():
    t = minitorch.tensor([1.5, 2.25])
    assert str(t) == repr(t)
    assert f"{minitorch.full((), 0.5):.2f}" == "0.50"


# ----------------------------------------------------------------- threads ----

@pytest.fixture
def restore_threads():
    n = minitorch.get_num_threads()
    yield
    minitorch.set_num_threads(n)


def test_num_threads_round_trip(restore_threads):
    for n in (1, 2, 3):
        minitorch.set_num_threads(n)
        assert minitorch.get_num_threads() == n
    with pytest.raises(ValueError, match=r"set_num_threads: expected a positive number of threads, got 0"):
        minitorch.set_num_threads(0)


def test_results_identical_with_one_and_two_threads(restore_threads):
    a_np = random_array(0, (400, 301), np.float32)
    b_np = random_array(1, (301,), np.float32)
    out = {}
    for n in (1, 2):
        minitorch.set_num_threads(n)
        a, b = minitorch.tensor(a_np), minitorch.tensor(b_np)
        out[n] = (
            to_numpy(a + b),
            to_numpy(a.T.contiguous()),
            to_numpy(a[:, :300:2] * a[:, 1::2]),
            to_numpy(a.sum()),
            to_numpy(a.sum(0)),
            to_numpy(a.sum(1)),
            to_numpy(a.exp()),
            to_numpy(a.T + 1.0),
        )
    for x, y in zip(out[1], out[2]):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_allclose(out[2][0], a_np + b_np, rtol=1e-6)
    np.testing.assert_allclose(out[2][3], a_np.astype(np.float64).sum(), rtol=1e-5)
    np.testing.assert_array_equal(out[2][2], a_np[:, :300:2] * a_np[:, 1::2])
    np.testing.assert_array_equal(out[2][7], a_np.T + np.float32(1))
