"""Linear's forward in one kernel: x @ W^T + b as one GEMM that adds the bias itself
(kernels.h: matmul_bias). The teaching kernels add it as they store each output, cuBLAS in
cuBLASLt's bias epilogue (one launch, as PyTorch's addmm), and the CPU starts each row as the
bias and lets BLAS add the product into it (beta = 1). Checked against NumPy on every matmul
kernel, dtype and input layout, and by launch counts."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import DEVICES, launches

CPU_KERNELS = ["naive", "blocked", "blas"]
CUDA_KERNELS = ["naive", "tiled"] + ([] if minitorch.cuda.is_emulated() else ["cublas"])
KERNELS = [pytest.param("cpu", k, id=f"cpu-{k}") for k in CPU_KERNELS] + [
    pytest.param("cuda", k, id=f"cuda-{k}", marks=DEVICES[1].marks) for k in CUDA_KERNELS]
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}


def use_kernel(device: str, kernel: str):
    backend = minitorch.backends.cpu if device == "cpu" else minitorch.backends.cuda
    return backend.use_matmul(kernel)


def tensor(a, dtype, device):
    return minitorch.tensor(a, device=device).to(getattr(minitorch, dtype))


def inputs(shape, out_features, dtype, device, seed=0):
    """x (shape), w (out_features, shape[-1]), b (out_features): float64 NumPy and tensors."""
    rng = np.random.default_rng(seed)
    x, w, b = (rng.standard_normal(s) for s in (shape, (out_features, shape[-1]), (out_features,)))
    return (x, w, b), tuple(tensor(a, dtype, device) for a in (x, w, b))


def rounded(t) -> np.ndarray:
    return t.to(minitorch.float64).cpu().numpy()


# Inputs: (base shape, the view of it Linear gets). Rows that fold into one GEMM, and views
# the kernels read in place as batches or with strided rows.
LAYOUTS = {
    "2d": ((6, 9), lambda x: x),
    "3d": ((2, 5, 9), lambda x: x),
    "1d": ((9,), lambda x: x),
    "transposed_batches": ((3, 4, 9), lambda x: x.transpose(0, 1)),  # (T, B, K) view of (B, T, K)
    "transposed_rows": ((9, 7), lambda x: x.transpose(0, 1)),  # K not the contiguous dim
    "sliced_rows": ((10, 9), lambda x: x[::2]),
}


@pytest.mark.parametrize("device, kernel", KERNELS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_linear_with_bias_matches_numpy(device, kernel, dtype, layout):
    base, make_view = LAYOUTS[layout]
    rng = np.random.default_rng(len(base))
    x = make_view(tensor(rng.standard_normal(base), dtype, device))
    in_features = x.shape[-1]
    w, b = tensor(rng.standard_normal((11, in_features)), dtype, device), tensor(rng.standard_normal(11), dtype, device)
    with use_kernel(device, kernel):
        y = F.linear(x, w, b)
    # NumPy in float64 on the values the tensors hold (16-bit inputs already rounded).
    want = rounded(x) @ rounded(w).T + rounded(b)
    assert y.dtype == getattr(minitorch, dtype) and tuple(y.shape) == want.shape
    np.testing.assert_allclose(rounded(y), want, rtol=TOL[dtype], atol=TOL[dtype] * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
def test_linear_edge_sizes(device):
    # No rows, no outputs, and no inputs (a sum of no terms: every row is the bias).
    for shape, out_features in [((0, 4), 3), ((2, 0, 4), 3), ((5, 4), 0), ((5, 0), 3), ((2, 3, 0), 2)]:
        (x, w, b), (xt, wt, bt) = inputs(shape, out_features, "float32", device)
        y = F.linear(xt, wt, bt)
        assert tuple(y.shape) == shape[:-1] + (out_features,)
        np.testing.assert_allclose(y.cpu().numpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_misaligned_views(device):
    # Operands that start 4 bytes past an aligned address: cuBLASLt is told each pointer's real
    # alignment, so it picks an algorithm that can read them.
    rng = np.random.default_rng(3)
    big = minitorch.tensor(rng.standard_normal(1 + 64 * 33).astype(np.float32), device=device)
    x = big[1:].view(64, 33)
    w = minitorch.tensor(rng.standard_normal(1 + 17 * 33).astype(np.float32), device=device)[1:].view(17, 33)
    b = minitorch.tensor(rng.standard_normal(18).astype(np.float32), device=device)[1:]
    y = F.linear(x, w, b)
    want = x.cpu().numpy().astype(np.float64) @ w.cpu().numpy().T + b.cpu().numpy()
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_tf32_switch(device):
    # With TF32 allowed, float32 Linear may round its inputs to 10 mantissa bits; the bias is
    # still added in float32.
    _, (xt, wt, bt) = inputs((64, 96), 48, "float32", device, seed=5)
    prev = minitorch.backends.cuda.matmul.allow_tf32
    minitorch.backends.cuda.matmul.allow_tf32 = True
    try:
        y = F.linear(xt, wt, bt)
    finally:
        minitorch.backends.cuda.matmul.allow_tf32 = prev
    want = rounded(xt) @ rounded(wt).T + rounded(bt)
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-2, atol=2e-2)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=DEVICES[1].marks[0].kwargs["reason"])
@pytest.mark.parametrize("shape", [(64, 784), (4, 16, 64), (64,)])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_linear_forward_is_one_launch(shape, dtype):
    # Rows that fold into one GEMM: the GEMM adds the bias (the tiled kernel as it stores,
    # cuBLASLt in its epilogue); no second pass over the output. One row (a vector input)
    # goes to the plain GEMM on cuBLAS, as PyTorch's: the bias rows, then the GEMM adds.
    layer = minitorch.nn.Linear(shape[-1], 32).to("cuda").to(getattr(minitorch, dtype))
    x = minitorch.randn(*shape, device="cuda").to(getattr(minitorch, dtype))
    names = launches(lambda: layer(x))
    if minitorch.cuda.is_emulated():
        assert len(names) == 1 and names[0].startswith("matmul_tiled_kernel"), names
    elif len(shape) == 1:
        assert len(names) == 2 and names[0].startswith("copy"), names
    else:
        assert names == ["cublasLtMatmul(bias)"], names


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
def test_linear_on_integers(device, dtype):
    # Integer Linear (a lecture's exact arithmetic): int64 by the kernels, narrower ints through
    # int64 stand-ins, the sums exact.
    rng = np.random.default_rng(4)
    x, w, b = rng.integers(0, 5, (3, 4, 6)), rng.integers(0, 4, (5, 6)), rng.integers(0, 9, 5)
    xt, wt, bt = (tensor(a, dtype, device) for a in (x, w, b))
    y = F.linear(xt, wt, bt)
    assert y.dtype == getattr(minitorch, dtype)
    np.testing.assert_array_equal(y.cpu().numpy().astype(np.int64), (x @ w.T + b).astype(getattr(np, dtype)))


@pytest.mark.parametrize("device", DEVICES)
def test_linear_with_no_inputs_has_gradients(device):
    # in_features = 0: the output is the bias in every row; the bias gets every row's gradient,
    # the (out, 0) weight an empty one.
    x = minitorch.ones(2, 3, 0, device=device, requires_grad=True)
    w = minitorch.zeros(4, 0, device=device, requires_grad=True)
    b = minitorch.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True)
    y = F.linear(x, w, b)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), np.broadcast_to([1.0, 2.0, 3.0, 4.0], (2, 3, 4)))
    y.sum().backward()
    np.testing.assert_array_equal(b.grad.cpu().numpy(), [6.0] * 4)
    assert tuple(w.grad.shape) == (4, 0) and tuple(x.grad.shape) == (2, 3, 0)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=DEVICES[1].marks[0].kwargs["reason"])
def test_linear_on_batches_that_do_not_fold():
    # A (T, B, K) view of a (B, T, K) tensor: its batches are not one run of rows. The tiled
    # kernel still adds the bias as it stores; cuBLAS writes the bias rows, then its batched
    # GEMM adds into them (two launches, no copy of x).
    layer = minitorch.nn.Linear(24, 8).to("cuda")
    x = minitorch.randn(5, 7, 24, device="cuda").transpose(0, 1)
    names = launches(lambda: layer(x))
    assert not any(n.startswith("copy") for n in names[1:]), names
    assert len(names) == (1 if minitorch.cuda.is_emulated() else 2), names


def test_linear_rejects_bool_and_mixed_devices():
    x = minitorch.ones(2, 3, dtype=minitorch.bool)
    with pytest.raises(TypeError, match="linear"):
        F.linear(x, x, minitorch.ones(2, dtype=minitorch.bool))
    if minitorch.cuda.is_available():
        w, b = minitorch.randn(4, 3), minitorch.randn(4)
        with pytest.raises((RuntimeError, ValueError), match="linear"):
            F.linear(minitorch.randn(2, 3, device="cuda"), w.cuda(), b)
        with pytest.raises((RuntimeError, ValueError), match="linear"):
            F.linear(minitorch.randn(2, 3, device="cuda"), w, b)
