"""LayerNorm's backward (cpu/layer_norm.cpp, cuda/layer_norm.cu) against NumPy in float64:
grad_input, and grad_weight / grad_bias, whose sums over the rows run on CUDA as per-chunk
partial sums (a tile of 32 columns x a chunk of rows per block) plus a second pass adding
the chunks, or as one thread per column for few rows. Shapes around the switches: few and
many rows, few and many columns, sizes that are no multiple of the 32-column tile."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_SKIP_REASON, DEVICES, to_numpy

import minitorch
from minitorch.nn import functional as F
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

# (rows, D): a handful of rows (one thread per column), exactly the switch (256 rows), many
# rows with few columns, many rows with columns over several 32-column tiles and a ragged last tile.
SHAPES = [(3, 5), (255, 40), (256, 33), (1000, 3), (777, 70), (2050, 1)]


def np_layer_norm_backward(x, w, g, eps=1e-5):
    x, w, g = (a.astype(np.float64) for a in (x, w, g))
    mean = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    gw = g * w
    gx = rstd * (gw - gw.mean(-1, keepdims=True) - xhat * (gw * xhat).mean(-1, keepdims=True))
    return gx, (g * xhat).sum(0), g.sum(0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_backward_matches_numpy(shape, dtype, device):
    rows, D = shape
    rng = np.random.default_rng(rows * 1000 + D)
    x_np = rng.normal(1.0, 2.0, size=shape).astype(dtype)
    w_np = rng.uniform(0.5, 1.5, size=D).astype(dtype)
    b_np = rng.uniform(-1, 1, size=D).astype(dtype)
    g_np = rng.normal(size=shape).astype(dtype)
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    w = minitorch.tensor(w_np, device=device, requires_grad=True)
    b = minitorch.tensor(b_np, device=device, requires_grad=True)
    F.layer_norm(x, (D,), w, b).backward(minitorch.tensor(g_np, device=device))
    gx, gw, gb = np_layer_norm_backward(x_np, w_np, g_np)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_numpy(x.grad), gx, **tol)
    np.testing.assert_allclose(to_numpy(w.grad), gw, **tol)
    np.testing.assert_allclose(to_numpy(b.grad), gb, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_weight_and_bias_gradients_alone(device):
    """Only the parameters need gradients (frozen input): still the sums over rows."""
    rng = np.random.default_rng(5)
    x_np, g_np = rng.normal(size=(600, 37)), rng.normal(size=(600, 37))
    w = minitorch.ones(37, dtype=minitorch.float64, device=device, requires_grad=True)
    b = minitorch.zeros(37, dtype=minitorch.float64, device=device, requires_grad=True)
    F.layer_norm(minitorch.tensor(x_np, device=device), (37,), w, b).backward(minitorch.tensor(g_np, device=device))
    _, gw, gb = np_layer_norm_backward(x_np, np.ones(37), g_np)
    np.testing.assert_allclose(to_numpy(w.grad), gw, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.grad), gb, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(4, 3), (300, 2)], ids=["few_rows", "chunked"])
def test_gradcheck(shape, device):
    rng = np.random.default_rng(1)
    x = minitorch.tensor(rng.normal(size=shape), device=device, requires_grad=True)
    w = minitorch.tensor(rng.uniform(0.5, 1.5, size=shape[1]), device=device, requires_grad=True)
    b = minitorch.tensor(rng.normal(size=shape[1]), device=device, requires_grad=True)
    if shape[0] > 100:  # keep the finite differences cheap: only the parameters vary
        x.requires_grad_(False)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (shape[1],), w, b), (x, w, b))


# ---------------------------------------------------------------- launch structure ----

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def _backward_kernels(rows, D):
    x = minitorch.randn(rows, D, device="cuda", requires_grad=True)
    ln = minitorch.nn.LayerNorm(D).to("cuda")
    y = ln(x)
    g = minitorch.randn(rows, D, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward(g)
    return [k for e in prof.events() if e.name == "NativeLayerNormBackward0" for k in e.kernels]


@needs_cuda
def test_many_rows_reduce_the_parameters_over_many_blocks():
    ks = _backward_kernels(2048, 96)
    names = [k.name for k in ks]
    # grad_input; the partial sums, which the last block of each column tile adds up itself
    assert len(ks) == 2, names
    split = [k for k in ks if "split" in k.name]
    assert len(split) == 1, names
    grid = split[0].grid
    assert grid[0] == 3 and grid[1] >= 8, grid  # 3 column tiles x chunks of rows


@needs_cuda
def test_few_rows_use_one_thread_per_column():
    ks = _backward_kernels(16, 96)
    assert len(ks) == 2 and not any("split" in k.name for k in ks), [k.name for k in ks]


@needs_cuda
@pytest.mark.parametrize("D", [1, 31, 32, 33, 64, 65, 200, 384, 1000, 1024, 1025, 2048, 3000, 4097, 8192, 8193])
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float16, minitorch.bfloat16, minitorch.float64],
                         ids=["f32", "f16", "bf16", "f64"])
@pytest.mark.parametrize("kind", ["affine", "plain", "rms"])
def test_register_rows_match_the_kernels_that_read_in_passes(monkeypatch, D, dtype, kind):
    """Rows of up to 1024 values in float32 and 16 bits go to layer_norm_rows_kernel and
    layer_norm_backward_rows_kernel (cuda/layer_norm.cu: a lane's values in registers, loaded
    together); MINITORCH_CUDA_LAYER_NORM=passes sends them to the kernels that read the row in
    passes. The sums run in the same order, so the outputs and grad_input are the same bits in
    the emulator; on a GPU within a few roundings (nvcc may contract a product and a sum into
    one FMA in one kernel and not in the other). Rows of 1025 to 8192 go to the block-a-row
    kernels (layer_norm_block_rows_kernel and its backward), whose sums run in another order: a
    few roundings apart. Longer rows and float64 take the passes either way."""
    rng = np.random.default_rng(D)
    x = minitorch.tensor(rng.normal(0.5, 2.0, size=(37, D)), dtype=dtype, device="cuda")
    g = minitorch.tensor(rng.normal(size=(37, D)), dtype=dtype, device="cuda")
    w = minitorch.tensor(rng.uniform(0.5, 1.5, size=D), dtype=dtype, device="cuda") if kind != "plain" else None
    b = minitorch.tensor(rng.normal(size=D), dtype=dtype, device="cuda") if kind == "affine" else None

    def run():
        leaf = x.detach().requires_grad_()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            out = F.rms_norm(leaf, (D,), w) if kind == "rms" else F.layer_norm(leaf, (D,), w, b)
            out.backward(g)
        names = [k.name.split("<")[0] for e in prof.events() for k in e.kernels]
        return [to_numpy(out.double()), to_numpy(leaf.grad.double())], names  # (exact: bfloat16 has no NumPy type)

    monkeypatch.delenv("MINITORCH_CUDA_LAYER_NORM", raising=False)
    rows, rows_names = run()
    monkeypatch.setenv("MINITORCH_CUDA_LAYER_NORM", "passes")
    passes, passes_names = run()
    in_registers = D <= 1024 and dtype != minitorch.float64
    in_block = 1024 < D <= 8192 and dtype != minitorch.float64
    assert ("layer_norm_rows_kernel" in rows_names) == in_registers, rows_names
    assert ("layer_norm_backward_rows_kernel" in rows_names) == in_registers, rows_names
    assert ("layer_norm_block_rows_kernel" in rows_names) == in_block, rows_names
    assert ("layer_norm_backward_block_rows_kernel" in rows_names) == in_block, rows_names
    register_kernels = {"layer_norm_rows_kernel", "layer_norm_backward_rows_kernel", "layer_norm_block_rows_kernel",
                        "layer_norm_backward_block_rows_kernel"}
    assert not register_kernels & set(passes_names), passes_names
    assert {"layer_norm_kernel", "layer_norm_backward_kernel"} <= set(passes_names), passes_names
    for a, p in zip(rows, passes):
        if minitorch.cuda.is_emulated() and not in_block:
            np.testing.assert_array_equal(a, p)
        else:
            eps = {minitorch.float16: 2e-3, minitorch.bfloat16: 1.6e-2}.get(dtype, 1e-6)
            np.testing.assert_allclose(a, p, rtol=4 * eps, atol=4 * eps)
