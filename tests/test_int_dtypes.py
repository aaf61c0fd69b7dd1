"""The narrow integer dtypes uint8, int8, int16 and int32 (beside int64 and bool): creation,
NumPy, casts, PyTorch's promotion and wrap-around, reductions, indexing, DLPack and
safetensors, on every device. (Every op's values on these dtypes: tests/opinfo.)"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES

NARROW = ["uint8", "int8", "int16", "int32"]
NP = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64}


def dt(name):
    return getattr(minitorch, name)


@pytest.mark.parametrize("name", NARROW)
def test_names_and_aliases(name):
    d = dt(name)
    assert repr(d) == f"minitorch.{name}"
    assert not d.is_floating_point
    assert d.itemsize == np.dtype(NP[name]).itemsize
    assert d.is_signed == (name != "uint8")
    assert minitorch.byte is minitorch.uint8 and minitorch.char is minitorch.int8
    assert minitorch.short is minitorch.int16 and minitorch.int is minitorch.int32
    info = minitorch.iinfo(d)
    assert (info.min, info.max, info.bits) == (np.iinfo(NP[name]).min, np.iinfo(NP[name]).max, 8 * d.itemsize)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NARROW)
def test_creation_and_numpy(name, device):
    d = dt(name)
    for t in (minitorch.zeros(2, 3, dtype=d, device=device), minitorch.ones(4, dtype=d, device=device),
              minitorch.full((2,), 7, dtype=d, device=device), minitorch.arange(5, dtype=d, device=device),
              minitorch.tensor([[1, 2], [3, 4]], dtype=d, device=device),
              minitorch.empty(0, dtype=d, device=device)):
        assert t.dtype == d and t.element_size() == d.itemsize
    np.testing.assert_array_equal(minitorch.arange(5, dtype=d, device=device).cpu().numpy(), np.arange(5, dtype=NP[name]))
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=NP[name])
    t = minitorch.from_numpy(a)
    assert t.dtype == d
    a[0, 0] = 9  # from_numpy shares memory
    assert t[0, 0].item() == 9 and isinstance(t[0, 0].item(), int)
    assert t.numpy().dtype == NP[name]
    assert minitorch.tensor(a).dtype == d  # a NumPy array keeps its dtype
    r = minitorch.randint(0, 5, (100,), dtype=d, device=device)
    assert r.dtype == d and 0 <= int(r.min()) and int(r.max()) < 5
    assert repr(minitorch.tensor([1, 2], dtype=d)) == f"tensor([1, 2], dtype=minitorch.{name})"
    assert t.type() == "minitorch." + {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int"}[name] + "Tensor"
    assert getattr(t, {"uint8": "byte", "int8": "char", "int16": "short", "int32": "int"}[name])().dtype == d


@pytest.mark.parametrize("device", DEVICES)
def test_casts_wrap_around_and_truncate(device):
    x = minitorch.tensor([300, -1, 255, 128], device=device)  # int64
    assert x.to(minitorch.uint8).tolist() == [44, 255, 255, 128]
    assert x.to(minitorch.int8).tolist() == [44, -1, -1, -128]
    f = minitorch.tensor([3.7, -1.2, 250.9, -0.5], device=device)
    assert f.to(minitorch.int32).tolist() == [3, -1, 250, 0]  # toward zero
    assert f.to(minitorch.uint8).tolist() == [3, 255, 250, 0]  # -1 wraps
    assert minitorch.tensor([1, 0, 2], dtype=minitorch.uint8, device=device).bool().tolist() == [True, False, True]
    h = minitorch.tensor([1.5, -2.5], dtype=minitorch.float16, device=device)
    assert h.to(minitorch.int16).tolist() == [1, -2]
    assert minitorch.tensor([-3, 7], dtype=minitorch.int8, device=device).half().tolist() == [-3.0, 7.0]


@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic_wraps_as_pytorch(device):
    u = minitorch.tensor([200, 100, 3, 0], dtype=minitorch.uint8, device=device)
    assert (u + u).tolist() == [144, 200, 6, 0]
    assert (u + 100).tolist() == [44, 200, 103, 100]
    assert (u - 201).tolist() == [255, 155, 58, 55]
    assert (-u).tolist() == [56, 156, 253, 0]
    assert (u * 2).dtype == minitorch.uint8
    i8 = minitorch.tensor([127, -128, 5], dtype=minitorch.int8, device=device)
    assert (i8 + 1).tolist() == [-128, -127, 6]
    assert (i8 * 3).tolist() == [125, -128, 15]
    assert abs(i8).tolist() == [127, -128, 5]  # |-128| does not fit int8: wraps, as in PyTorch
    i32 = minitorch.tensor([7, -7, 9], dtype=minitorch.int32, device=device)
    assert (i32 // 2).tolist() == [3, -4, 4] and (i32 // 2).dtype == minitorch.int32
    assert (i32 % 4).tolist() == [3, 1, 1]
    q = i32 / 2
    assert q.dtype == minitorch.float32 and q.tolist() == [3.5, -3.5, 4.5]
    assert (i32 ** 2).tolist() == [49, 49, 81]
    assert (u & 0x0F).tolist() == [8, 4, 3, 0] and (~u).tolist() == [55, 155, 252, 255]
    assert (u | minitorch.tensor(1, dtype=minitorch.uint8)).tolist() == [201, 101, 3, 1]
    assert (u > 50).tolist() == [True, True, False, False]
    assert u.clamp(5, 150).tolist() == [150, 100, 5, 5]
    u2 = u.clone()
    u2 += 100
    assert u2.dtype == minitorch.uint8 and u2.tolist() == [44, 200, 103, 100]
    with pytest.raises(TypeError):
        u2 += 1.5  # a float result cannot be written into an integer tensor


PROMOTIONS = [
    ("uint8", "int8", "int16"), ("uint8", "int16", "int16"), ("int8", "int16", "int16"), ("int16", "int32", "int32"),
    ("int32", "int64", "int64"), ("uint8", "uint8", "uint8"), ("bool", "uint8", "uint8"), ("bool", "int32", "int32"),
    ("uint8", "float16", "float16"), ("int32", "bfloat16", "bfloat16"), ("int8", "float32", "float32"),
    ("int64", "float16", "float16"), ("uint8", "int64", "int64"),
]


@pytest.mark.parametrize(("a", "b", "want"), PROMOTIONS)
def test_promotion_lattice(a, b, want):
    x, y = minitorch.ones(2, dtype=dt(a)), minitorch.ones(2, dtype=dt(b))
    assert (x + y).dtype == dt(want) and (y + x).dtype == dt(want)
    assert minitorch.promote_types(dt(a), dt(b)) == dt(want)


def test_promotion_with_numbers_and_zero_dim():
    u = minitorch.ones(2, dtype=minitorch.uint8)
    assert (u + 1).dtype == minitorch.uint8  # an int number keeps the tensor's integer type
    assert (u + 1.5).dtype == minitorch.float32  # a float number: the default float
    assert (u + minitorch.tensor(1)).dtype == minitorch.uint8  # a 0-dim int64 tensor: same category
    assert (u + minitorch.tensor(1.0, dtype=minitorch.float64)).dtype == minitorch.float64  # a 0-dim float: its own type
    assert (minitorch.ones(2, dtype=minitorch.int8) + minitorch.tensor(1, dtype=minitorch.int32)).dtype == minitorch.int8
    assert minitorch.result_type(u, 2) == minitorch.uint8
    assert minitorch.sqrt(minitorch.tensor([4, 9], dtype=minitorch.int16)).dtype == minitorch.float32


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NARROW)
def test_reductions(name, device):
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=NP[name])
    t = minitorch.tensor(a, device=device)
    s = t.sum()
    assert s.dtype == minitorch.int64 and s.item() == 21  # sum of ints is int64
    assert t.sum(0).dtype == minitorch.int64 and t.sum(0).tolist() == [5, 7, 9]
    assert t.sum(dtype=minitorch.int32).dtype == minitorch.int32
    assert t.cumsum(1).dtype == minitorch.int64 and t.cumsum(1).tolist() == [[1, 3, 6], [4, 9, 15]]
    m = t.max(1)
    assert m.values.dtype == dt(name) and m.values.tolist() == [3, 6] and m.indices.dtype == minitorch.int64
    assert t.max().dtype == dt(name) and t.argmax().item() == 5
    assert t.sort(1, descending=True).values.dtype == dt(name)
    with pytest.raises(TypeError):
        t.mean()  # mean needs a floating dtype, as in PyTorch
    assert t.float().mean().item() == 3.5
    big = minitorch.full((1000,), 200, dtype=minitorch.uint8, device=device)
    assert big.sum().item() == 200000  # accumulates in int64: no wrap


@pytest.mark.parametrize("device", DEVICES)
def test_indexing_with_narrow_integers(device):
    x = minitorch.arange(10.0, device=device)
    i32 = minitorch.tensor([3, 1, 7], dtype=minitorch.int32, device=device)
    assert x[i32].tolist() == [3.0, 1.0, 7.0]
    assert x.index_select(0, i32).tolist() == [3.0, 1.0, 7.0]
    assert x[minitorch.tensor(4, dtype=minitorch.int16)].item() == 4.0
    mask = minitorch.tensor([1, 0] * 5, dtype=minitorch.uint8, device=device)
    assert x[mask].tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]  # uint8 indexes as a mask, as in PyTorch
    y = x.clone()
    y[i32] = 0.0
    assert y.tolist() == [0, 0, 2, 0, 4, 5, 6, 0, 8, 9]
    u = minitorch.zeros(4, dtype=minitorch.uint8, device=device)
    u[1:3] = 300
    assert u.tolist() == [0, 44, 44, 0]
    assert minitorch.cat([u, minitorch.ones(1, dtype=minitorch.uint8, device=device)]).dtype == minitorch.uint8
    assert minitorch.where(u > 0, u, minitorch.tensor(9, dtype=minitorch.uint8)).tolist() == [9, 44, 44, 9]
    assert u.reshape(2, 2).t().contiguous().tolist() == [[0, 44], [44, 0]]
    assert u.flip(0).tolist() == [0, 44, 44, 0]


@pytest.mark.parametrize("name", NARROW)
def test_dlpack_and_safetensors(name, tmp_path):
    a = np.array([[1, 2], [3, 250 if name == "uint8" else -4]], dtype=NP[name])
    t = minitorch.from_numpy(a.copy())
    back = np.from_dlpack(t)
    assert back.dtype == NP[name]
    np.testing.assert_array_equal(back, a)
    u = minitorch.from_dlpack(a)
    assert u.dtype == dt(name)
    path = tmp_path / "t.safetensors"
    minitorch.save({"w": t}, str(path))
    got = minitorch.load(str(path))["w"]
    assert got.dtype == dt(name)
    np.testing.assert_array_equal(got.numpy(), a)


def test_images_arrive_as_uint8():
    """The everyday use: an HWC uint8 image to a normalised CHW float tensor."""
    img = np.random.default_rng(0).integers(0, 256, size=(8, 6, 3)).astype(np.uint8)
    x = minitorch.from_numpy(img).permute(2, 0, 1).float().div(255)
    assert x.dtype == minitorch.float32 and tuple(x.shape) == (3, 8, 6)
    np.testing.assert_allclose(x.numpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)


def test_no_gradient_for_integers():
    with pytest.raises(RuntimeError):
        minitorch.ones(2, dtype=minitorch.int32).requires_grad_()


def test_unknown_dtype_names_say_what_exists():
    with pytest.raises(TypeError, match="uint8"):
        minitorch.zeros(2, dtype="uint16")
    with pytest.raises(TypeError, match="int32"):
        minitorch.from_numpy(np.zeros(2, dtype=np.uint32))


@pytest.mark.parametrize("name", ["int32", "int16", "int8", "uint8"])
def test_new_factories_keep_the_narrow_dtype(name):
    dt = getattr(minitorch, name)
    x = minitorch.tensor([1, 2], dtype=dt)
    for made in (x.new_zeros(2, 3), x.new_ones((2,)), x.new_empty(4), x.new_full((2,), 7), x.new_tensor([1, 2])):
        assert made.dtype == dt
    assert x.new_full((2,), 7).tolist() == [7, 7] and x.new_ones(2).tolist() == [1, 1]
    assert x.new_zeros(2, dtype=minitorch.float32).dtype == minitorch.float32
    assert minitorch.ones(2).new_tensor([1, 2], dtype=dt).dtype == dt
