"""dtype promotion (PyTorch's rules) and dtype inference in ``minitorch.tensor``.

The rules: dimensioned tensors decide first; a 0-dim tensor and then a Python number
only matter when they are of a higher *category* (bool < integer < floating). A
Python float that wins gives the default dtype float32, never float64. ``/`` is true
division. Comparisons always give bool.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest

import minitorch
from conftest import DEVICES, assert_tensor_equal

F32, F64, I64, BOOL = minitorch.float32, minitorch.float64, minitorch.int64, minitorch.bool
NP = {F32: np.float32, F64: np.float64, I64: np.int64, BOOL: np.bool_, minitorch.float16: np.float16,
      minitorch.int32: np.int32, minitorch.uint8: np.uint8}


def vec(dtype, device="cpu", values=(1, 2, 3)):
    """A 1-D tensor of ``dtype``."""
    return minitorch.tensor(np.array(values).astype(NP[dtype]), device=device)


def zero_dim(value, dtype, device="cpu"):
    """A 0-dim tensor (made with full, so this file does not depend on tensor(scalar))."""
    t = minitorch.full((), value, dtype=dtype, device=device)
    assert t.dim() == 0 and t.dtype == dtype
    return t


# (left dtype, right dtype, result dtype) for two dimensioned tensors
TENSOR_TENSOR = [
    (I64, F32, F32),
    (F32, I64, F32),
    (F32, F64, F64),
    (F64, F32, F64),
    (BOOL, I64, I64),
    (I64, BOOL, I64),
    (BOOL, F32, F32),
    (BOOL, F64, F64),
    (I64, F64, F64),
    (I64, I64, I64),
    (BOOL, BOOL, BOOL),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("a", "b", "want"), TENSOR_TENSOR, ids=lambda d: getattr(d, "name", str(d)))
def test_tensor_tensor(device, a, b, want):
    x, y = vec(a, device), vec(b, device, (0, 1, 1))
    assert minitorch.result_type(x, y) == want
    out = x + y
    expected = (np.array([1, 2, 3]).astype(NP[a]) + np.array([0, 1, 1]).astype(NP[b])).astype(NP[want])
    assert_tensor_equal(out, expected)
    assert (x * y).dtype == want
    assert minitorch.maximum(x, y).dtype == want


# (tensor dtype, Python number, result dtype)
TENSOR_NUMBER = [
    (I64, 1.5, F32),  # int tensor + Python float -> the default float dtype
    (F32, 1.5, F32),  # float32 stays float32: a Python float is not a float64 tensor
    (F64, 1.5, F64),
    (F32, 2, F32),
    (I64, 2, I64),
    (BOOL, 2, I64),  # bool tensor + Python int -> int64
    (BOOL, 1.5, F32),
    (BOOL, True, BOOL),
    (I64, True, I64),
    (F64, True, F64),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("a", "number", "want"), TENSOR_NUMBER, ids=lambda d: getattr(d, "name", repr(d)))
def test_tensor_python_number(device, a, number, want):
    x = vec(a, device, (0, 1, 1))
    assert minitorch.result_type(x, number) == want
    assert minitorch.result_type(number, x) == want
    assert (x + number).dtype == want
    assert (number + x).dtype == want
    assert (x * number).dtype == want
    expected = (np.array([0, 1, 1]).astype(NP[a]).astype(np.float64) + float(number)).astype(NP[want])
    if want == BOOL:
        expected = np.logical_or(np.array([0, 1, 1]).astype(bool), number)
    assert_tensor_equal(x + number, expected)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_plus_python_float_keeps_float32_values(device):
    x = minitorch.tensor(np.array([0.1, 1e-3], dtype=np.float32), device=device)
    out = x + 0.2
    assert out.dtype == F32
    np.testing.assert_array_equal(out.cpu().numpy(), np.array([0.1, 1e-3], np.float32) + np.float32(0.2))


# (0-dim dtype, dimensioned dtype, result dtype)
ZERO_DIM_CASES = [
    (F64, F32, F32),  # same category: the dimensioned tensor wins
    (F32, F64, F64),
    (I64, BOOL, I64),  # higher category: the 0-dim tensor's dtype
    (F64, I64, F64),
    (F32, I64, F32),
    (F64, BOOL, F64),
    (BOOL, I64, I64),
    (I64, F32, F32),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("zdt", "ddt", "want"), ZERO_DIM_CASES, ids=lambda d: getattr(d, "name", str(d)))
def test_zero_dim_tensor_with_dimensioned(device, zdt, ddt, want):
    z = zero_dim(1, zdt, device)
    x = vec(ddt, device, (0, 1, 1))
    assert minitorch.result_type(z, x) == want
    assert minitorch.result_type(x, z) == want
    assert (z + x).dtype == want
    assert (x + z).dtype == want
    assert (x * z).shape == (3,)


@pytest.mark.parametrize("device", DEVICES)
def test_two_zero_dim_tensors_promote_normally(device):
    assert (zero_dim(1.0, F32, device) + zero_dim(1.0, F64, device)).dtype == F64
    assert (zero_dim(1, I64, device) + zero_dim(1.0, F32, device)).dtype == F32
    out = zero_dim(2.0, F64, device) + 1.5
    assert out.dtype == F64 and out.dim() == 0 and out.item() == 3.5


def test_result_type_of_numbers():
    assert minitorch.result_type(1, 2.0) == F32
    assert minitorch.result_type(True, 2) == I64
    assert minitorch.result_type(1, 2) == I64
    assert minitorch.result_type(True, False) == BOOL


@pytest.mark.parametrize("device", DEVICES)
def test_int_true_division(device):
    a = minitorch.tensor(np.array([7, -7, 1, 0], dtype=np.int64), device=device)
    b = minitorch.tensor(np.array([2, 2, 3, 5], dtype=np.int64), device=device)
    assert_tensor_equal(a / b, np.array([3.5, -3.5, 1 / 3, 0.0], np.float32))
    assert_tensor_equal(a / 2, np.array([3.5, -3.5, 0.5, 0.0], np.float32))
    assert_tensor_equal(minitorch.div(a, b), np.array([3.5, -3.5, 1 / 3, 0.0], np.float32))
    assert_tensor_equal(7 / b, np.array([3.5, 3.5, 7 / 3, 1.4], np.float32))
    # float64 numerator: float64 result
    assert (a.double() / b).dtype == F64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge])
def test_comparisons_give_bool_and_compare_in_the_promoted_dtype(device, op):
    i = minitorch.tensor(np.array([0, 1, 2], np.int64), device=device)
    f = minitorch.tensor(np.array([0.5, 1.0, 2.5], np.float32), device=device)
    expected = op(np.array([0, 1, 2]), np.array([0.5, 1.0, 2.5]))
    assert_tensor_equal(op(i, f), expected)
    # int tensor vs Python float: 1 < 1.5 must not truncate 1.5 to 1
    assert_tensor_equal(op(i, 1.5), op(np.array([0, 1, 2]), 1.5))
    assert op(f, f).dtype == BOOL


@pytest.mark.parametrize("device", DEVICES)
def test_bool_arithmetic(device):
    a = minitorch.tensor([True, True, False, False], device=device)
    b = minitorch.tensor([True, False, True, False], device=device)
    assert_tensor_equal(a + b, np.array([True, True, True, False]))  # logical or
    assert_tensor_equal(a * b, np.array([True, False, False, False]))  # logical and
    assert_tensor_equal(a + 1, np.array([2, 2, 1, 1], np.int64))
    assert_tensor_equal(a * 2.5, np.array([2.5, 2.5, 0, 0], np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_where_promotes_its_values(device):
    c = minitorch.tensor([True, False], device=device)
    i = minitorch.tensor([1, 2], device=device)
    f = minitorch.tensor(np.array([0.5, 1.5], np.float64), device=device)
    assert_tensor_equal(minitorch.where(c, i, f), np.array([1.0, 1.5]))
    assert_tensor_equal(minitorch.where(c, i, 0.5), np.array([1.0, 0.5], np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_does_not_promote(device):
    """Unlike elementwise ops, matmul wants one dtype (as PyTorch): convert explicitly."""
    i = minitorch.tensor([[1, 2]], device=device)
    f = minitorch.tensor(np.array([[0.5], [0.25]], np.float64), device=device)
    with pytest.raises(TypeError, match="matmul: expected both arguments to have the same dtype"):
        i @ f
    assert_tensor_equal(i.double() @ f, np.array([[1.0]]))


# ----------------------------------------------------- tensor() inference ----

INFERENCE = [
    ([1, 2], I64),
    ([1.0], F32),
    ([1, 2.5], F32),
    ([True], BOOL),
    ([True, 2], I64),
    ([[1.0, 2.0], [3.0, 4.0]], F32),
    (np.array([1.0, 2.0]), F64),  # NumPy float64 stays float64
    (np.array([1.0], np.float32), F32),
    (np.array([1, 2], np.int64), I64),
    (np.array([1, 2], np.int32), minitorch.int32),  # NumPy arrays keep their integer type
    (np.array([1, 2], np.uint8), minitorch.uint8),
    (np.array([1, 2], np.uint16), I64),  # widened: minitorch has no uint16
    (np.array([1.0], np.float16), minitorch.float16),  # kept, as PyTorch keeps it
    (np.array([True]), BOOL),
    (np.float64(2.0), F64),
    (np.int32(3), minitorch.int32),
]


@pytest.mark.parametrize(("data", "want"), INFERENCE, ids=lambda d: getattr(d, "name", None) or repr(d))
def test_tensor_infers_dtype(data, want):
    t = minitorch.tensor(data)
    assert t.dtype == want
    # (the shape of tensor(scalar) is checked in test_creation_interop; here only values)
    np.testing.assert_array_equal(t.cpu().numpy().reshape(np.shape(data)), np.asarray(data).astype(NP[want]))
    assert t.cpu().numpy().dtype == NP[want]


@pytest.mark.parametrize("dtype", [F32, F64, I64, BOOL], ids=lambda d: d.name)
def test_tensor_dtype_argument_overrides_inference(dtype):
    t = minitorch.tensor([0, 1, 2], dtype=dtype)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.cpu().numpy(), np.array([0, 1, 2]).astype(NP[dtype]))


def test_dtype_objects():
    assert repr(minitorch.float32) == "minitorch.float32"
    assert minitorch.float is minitorch.float32 and minitorch.double is minitorch.float64
    assert minitorch.long is minitorch.int64
    assert minitorch.float32.is_floating_point and not minitorch.int64.is_floating_point
    assert [d.itemsize for d in (BOOL, I64, F32, F64)] == [1, 8, 4, 8]


@pytest.mark.parametrize("device", DEVICES)
def test_dtype_and_device_are_shared_objects(device):
    """As in PyTorch, ``x.dtype is minitorch.float32`` holds, and every tensor of a device
    reads the same device object (both are read around nearly every op: no new object
    per read)."""
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    for name in names:
        dt = getattr(minitorch, name)
        x = minitorch.zeros(2, dtype=dt, device=device)
        assert x.dtype is dt and x[:1].dtype is dt, name
    a, b = minitorch.zeros(1, device=device), minitorch.ones(3, dtype=minitorch.int64, device=device)
    assert a.device is b.device and a.device == minitorch.device(device) and hash(a.device) == hash(b.device)
    assert str(a.device) == ("cpu" if device == "cpu" else "cuda:0")
