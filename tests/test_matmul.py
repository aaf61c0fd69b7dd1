"""matmul / @ against np.matmul: vectors, matrices, batches with broadcasting,
non-contiguous operands (the BLAS transposed / leading-dimension paths), K = 0, int64."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from conftest import DEVICES, assert_tensor_equal, make_tensor, random_array, seeds

def _shape_re(shape):
    return re.escape(str(tuple(shape)))


MM_TOL = {
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-4),
    np.dtype(np.float64): dict(rtol=1e-12, atol=1e-10),
    np.dtype(np.int64): dict(),
}
DTYPES = [np.float32, np.float64, np.int64]


def _reference(a, b):
    wide = np.float64 if a.dtype.kind == "f" else np.int64
    return np.matmul(a.astype(wide), b.astype(wide)).astype(a.dtype)


def _operand(arr, layout, device):
    """arr as a tensor whose last two dims are laid out as `layout` says."""
    if layout == "mT" and arr.ndim >= 2:
        # stored as (..., cols, rows), viewed transposed: column-major matrices
        stored = np.ascontiguousarray(np.swapaxes(arr, -1, -2))
        t = minitorch.tensor(stored, device=device).transpose(-2, -1)
        np.testing.assert_array_equal(t.cpu().numpy(), arr)
        return t
    if layout == "mT":
        layout = "contiguous"
    return make_tensor(arr, layout, device)


@st.composite
def matmul_shapes(draw):
    """Shapes (a, b) that np.matmul accepts: 1-D or N-D, batch dims broadcasting."""
    m, k, n = draw(st.integers(0, 5)), draw(st.integers(0, 5)), draw(st.integers(0, 5))
    batch_a, batch_b = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=3)
    ).input_shapes
    a_vec, b_vec = draw(st.booleans()), draw(st.booleans())
    a = (k,) if a_vec else batch_a + (m, k)
    b = (k,) if b_vec else batch_b + (k, n)
    return a, b


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@given(
    ab=matmul_shapes(),
    seed=seeds,
    layouts=st.tuples(*[st.sampled_from(["contiguous", "mT", "step", "transpose"])] * 2),
    form=st.sampled_from(["@", "matmul", "method"]),
)
def test_matmul_matches_numpy(device, dtype, ab, seed, layouts, form):
    a_np = random_array(seed, ab[0], dtype, -5, 5)
    b_np = random_array(seed + 1, ab[1], dtype, -5, 5)
    a, b = _operand(a_np, layouts[0], device), _operand(b_np, layouts[1], device)
    if form == "@":
        out = a @ b
    elif form == "matmul":
        out = minitorch.matmul(a, b)
    else:
        out = a.matmul(b)
    assert_tensor_equal(out, _reference(a_np, b_np), **MM_TOL[np.dtype(dtype)])


CASES = {
    "1d@1d": ((4,), (4,)),
    "2d@1d": ((3, 4), (4,)),
    "1d@2d": ((4,), (4, 2)),
    "2d@2d": ((3, 4), (4, 2)),
    "batched": ((5, 3, 4), (5, 4, 2)),
    "batched@1d": ((5, 3, 4), (4,)),
    "1d@batched": ((4,), (5, 4, 2)),
    "broadcast-batch": ((2, 1, 3, 4), (5, 4, 2)),
    "batch@2d": ((2, 3, 4), (4, 2)),
    "2d@batch": ((3, 4), (2, 4, 2)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", list(CASES))
def test_matmul_named_cases(device, dtype, case):
    sa, sb = CASES[case]
    a_np, b_np = random_array(1, sa, dtype), random_array(2, sb, dtype)
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    expected = _reference(a_np, b_np)
    out = a @ b
    assert tuple(out.shape) == expected.shape
    assert_tensor_equal(out, expected, **MM_TOL[np.dtype(dtype)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_matmul_larger_strided_operands(device, dtype):
    """Sizes where BLAS really runs, with every layout it must handle or copy."""
    big_a = random_array(5, (80, 130), dtype, -1, 1)
    big_b = random_array(6, (130, 90), dtype, -1, 1)
    A, B = minitorch.tensor(big_a, device=device), minitorch.tensor(big_b, device=device)
    tol = MM_TOL[np.dtype(dtype)]
    # leading dimension larger than the number of columns (a column slice)
    assert_tensor_equal(A[:, :70] @ B[:70, :], _reference(big_a[:, :70], big_b[:70, :]), **tol)
    # transposed operands (column-major for BLAS)
    assert_tensor_equal(B.T @ A.T, _reference(big_b.T, big_a.T), **tol)
    # strided in both dims: no BLAS layout, must be copied first
    assert_tensor_equal(A[::2, ::2] @ B[::2, 1::2], _reference(big_a[::2, ::2], big_b[::2, 1::2]), **tol)
    # row vector with a step
    assert_tensor_equal(A[3, ::2] @ B[::2, :], _reference(big_a[3, ::2], big_b[::2, :]), **tol)
    # an expanded (stride-0) matrix and batch
    row = minitorch.tensor(big_a[:1], device=device).expand(40, 130)
    assert_tensor_equal(row @ B, _reference(np.broadcast_to(big_a[:1], (40, 130)), big_b), **tol)
    batch = A.unsqueeze(0).expand(3, 80, 130)
    assert_tensor_equal(batch @ B, _reference(np.broadcast_to(big_a, (3, 80, 130)), big_b), **tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_matmul_k_zero_gives_zeros(device, dtype):
    a = minitorch.zeros(3, 0, dtype=minitorch.tensor(np.zeros(1, dtype)).dtype, device=device)
    b = minitorch.ones(0, 4, dtype=a.dtype, device=device)
    assert_tensor_equal(a @ b, np.zeros((3, 4), dtype))
    e = minitorch.empty(2, 3, 0, dtype=a.dtype, device=device)
    assert_tensor_equal(e @ minitorch.empty(0, 5, dtype=a.dtype, device=device), np.zeros((2, 3, 5), dtype))
    v = minitorch.empty(0, dtype=a.dtype, device=device)
    out = v @ v
    assert out.dim() == 0 and out.item() == 0


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_int64_is_exact(device):
    a = minitorch.tensor(np.array([[2**40, 3], [1, -(2**35)]], np.int64), device=device)
    b = minitorch.tensor(np.array([[3, 1], [2**20 + 1, 7]], np.int64), device=device)
    expected = np.array([[2**40, 3], [1, -(2**35)]], np.int64) @ np.array([[3, 1], [2**20 + 1, 7]], np.int64)
    assert_tensor_equal(a @ b, expected)
    assert (a @ b).dtype == minitorch.int64


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_does_not_modify_inputs(device):
    a_np, b_np = random_array(1, (4, 3), np.float32), random_array(2, (3, 5), np.float32)
    a, b = minitorch.tensor(a_np, device=device), minitorch.tensor(b_np, device=device)
    a.T.T @ b.T.T
    assert_tensor_equal(a, a_np)
    assert_tensor_equal(b, b_np)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("sa", "sb", "detail"),
    [
        ((3, 4), (5, 6), r"\(4 != 5\)"),
        ((4,), (5,), r"\(4 != 5\)"),
        ((2, 3), (2,), r"\(3 != 2\)"),
        ((2, 3, 4), (2, 3, 4), r"\(4 != 3\)"),
    ],
    ids=str,
)
def test_matmul_size_mismatch_names_both_shapes(device, sa, sb, detail):
    a, b = minitorch.zeros(*sa, device=device), minitorch.zeros(*sb, device=device)
    pattern = r"matmul: shapes " + _shape_re(sa) + " and " + _shape_re(sb) + r" cannot be multiplied " + detail
    with pytest.raises(ValueError, match=pattern):
        a @ b
    with pytest.raises(ValueError, match=pattern):
        minitorch.matmul(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_batch_mismatch_names_both_shapes(device):
    a, b = minitorch.zeros(2, 3, 4, device=device), minitorch.zeros(5, 4, 2, device=device)
    with pytest.raises(ValueError, match=r"matmul") as info:
        a @ b
    message = str(info.value)
    assert "(2, 3, 4)" in message and "(5, 4, 2)" in message, message


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_zero_dim_raises(device):
    z = minitorch.full((), 2.0, device=device)
    v = minitorch.ones(3, device=device)
    with pytest.raises(ValueError, match=r"matmul: both arguments need to be at least 1-D, got shapes \(\) and \(3,\)"):
        z @ v
    with pytest.raises(ValueError, match=r"at least 1-D"):
        minitorch.matmul(v, z)


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_bool_raises_type_error(device):
    b = minitorch.tensor([[True]], device=device)
    with pytest.raises(TypeError, match=r"matmul.*bool"):
        b @ b


def test_matmul_with_non_tensor():
    a = minitorch.ones(2, 2)
    with pytest.raises(TypeError):
        a @ [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(TypeError, match=r"matmul"):
        minitorch.matmul(a, 3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_matmul_batched_layouts_read_in_place(device, dtype):
    """The kernels read transposed, broadcast and sliced batches where they lie (one
    batch stride): Linear's x @ W^T on a 3-D input (folded into one GEMM), a transposed
    batch, a broadcast transposed matrix, every other batch, and batch dims that are not
    one stride (copied first) all give np.matmul's answer."""
    rng = np.random.default_rng(7)
    tol = MM_TOL[np.dtype(dtype)]
    x = rng.standard_normal((3, 5, 4)).astype(dtype)
    w = rng.standard_normal((6, 4)).astype(dtype)
    X, W = minitorch.tensor(x, device=device), minitorch.tensor(w, device=device)
    assert_tensor_equal(X @ W.t(), x @ w.T, **tol)                      # folded: (15, 4) @ W^T
    assert_tensor_equal(X.transpose(1, 2).transpose(1, 2) @ W.t(), x @ w.T, **tol)
    y = rng.standard_normal((3, 4, 5)).astype(dtype)
    Y = minitorch.tensor(y, device=device)
    assert_tensor_equal(X @ Y, x @ y, **tol)
    assert_tensor_equal(Y.transpose(1, 2) @ Y, np.swapaxes(y, 1, 2) @ y, **tol)   # transposed batch
    assert_tensor_equal(X[::2] @ Y[::2], x[::2] @ y[::2], **tol)                 # every other batch
    big = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    Big = minitorch.tensor(big, device=device)
    assert_tensor_equal(Big.permute(1, 0, 2, 3) @ W.t(), np.transpose(big, (1, 0, 2, 3)) @ w.T, **tol)  # not one stride
    assert_tensor_equal(Big[:, :, 1:4] @ Y[0], big[:, :, 1:4] @ y[0], **tol)     # rows not consecutive: no fold
