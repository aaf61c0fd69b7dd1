"""The single-pass look-back scan of cuda/scan.cu (lookback_scan_kernel), against NumPy.

Long contiguous lines (cumsum of a 1-D tensor of millions of values) are split into tiles
of 2048 values, one block each; a tile finds what comes before it from the tiles before
it (decoupled look-back). MINITORCH_SCAN_TILE makes the tile small (64 or 512 values here)
and sends every contiguous line there, so that lines of a few thousand values run dozens
of tiles in the emulator: lengths 1, tile - 1, tile, tile + 1 and many tiles, one line and
several. Reverse scans (tile 0 at the line's end) are what cumsum's backward runs.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)

TILES = [64, 512]  # 32 threads x 2 values (one warp), 64 threads x 8 values (two warps)


def _lengths(tile: int) -> list:
    return [1, tile - 1, tile, tile + 1, 37 * tile + 5]  # the last: a look-back past 32 tiles


def _values(op: str, dtype, shape, rng) -> np.ndarray:
    if op == "cumprod":  # products that stay finite (and exact for integers): +-1, a few 0s
        x = rng.choice([-1, 1], size=shape)
        if x.size > 100:
            x.reshape(-1)[rng.integers(0, x.size, size=3)] = 0
        if np.issubdtype(dtype, np.floating):
            x = x * rng.uniform(0.97, 1.03, size=shape)
        return x.astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-10**6, 10**6, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _expected(op: str, x: np.ndarray, axis: int) -> np.ndarray:
    """NumPy's scan in float64 / int64, as the kernels accumulate."""
    wide = x.astype(np.float64 if np.issubdtype(x.dtype, np.floating) else np.int64)
    return getattr(np, op)(wide, axis=axis)


def _check(got: np.ndarray, want: np.ndarray, dtype):
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    elif dtype == np.float32:
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-5)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_lookback_scan_matches_numpy(tile, dtype, op, monkeypatch):
    monkeypatch.setenv("MINITORCH_SCAN_TILE", str(tile))
    rng = np.random.default_rng(tile)
    for length in _lengths(tile):
        for lines in (1, 3):
            x = _values(op, dtype, (lines, length), rng)
            got = getattr(minitorch.tensor(x, device="cuda"), op)(1).cpu().numpy()
            _check(got, _expected(op, x, 1), dtype)
    x = _values(op, dtype, (5 * tile + 3,), rng)  # a 1-D tensor: one line
    _check(getattr(minitorch.tensor(x, device="cuda"), op)(0).cpu().numpy(), _expected(op, x, 0), dtype)


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lookback_reverse_scan_is_cumsums_gradient(tile, dtype, monkeypatch):
    """cumsum's backward is the running sum of the gradient from the line's end."""
    monkeypatch.setenv("MINITORCH_SCAN_TILE", str(tile))
    rng = np.random.default_rng(7)
    for length in _lengths(tile):
        x = minitorch.tensor(rng.standard_normal((2, length)).astype(dtype), device="cuda", requires_grad=True)
        g = rng.standard_normal((2, length)).astype(dtype)
        x.cumsum(1).backward(minitorch.tensor(g, device="cuda"))
        _check(x.grad.cpu().numpy(), _expected("cumsum", g[:, ::-1], 1)[:, ::-1], dtype)


def test_lookback_cumprod_gradient_matches_the_cpu(monkeypatch):
    """cumprod's backward runs forward and reverse scans, with zeros in the line."""
    monkeypatch.setenv("MINITORCH_SCAN_TILE", "64")
    x = _values("cumprod", np.float64, (2, 1000), np.random.default_rng(8))
    cpu = minitorch.tensor(x, requires_grad=True)
    dev = minitorch.tensor(x, device="cuda", requires_grad=True)
    cpu.cumprod(1).sum().backward()
    dev.cumprod(1).sum().backward()
    np.testing.assert_allclose(dev.grad.cpu().numpy(), cpu.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_lookback_scan_of_float16_is_staged_in_float32(monkeypatch):
    monkeypatch.setenv("MINITORCH_SCAN_TILE", "64")
    x = np.random.default_rng(9).uniform(-1, 1, size=(2, 700)).astype(np.float16)
    got = minitorch.tensor(x, device="cuda").cumsum(1).cpu().numpy()
    np.testing.assert_allclose(got.astype(np.float64), np.cumsum(x.astype(np.float64), axis=1), rtol=2e-3, atol=2e-2)


def test_a_bad_tile_size_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("MINITORCH_SCAN_TILE", "100")
    with pytest.raises(ValueError, match="MINITORCH_SCAN_TILE"):
        minitorch.ones(10, device="cuda").cumsum(0)


def _launches(fn) -> list:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [(k.name.split("<")[0], k.grid[0] * k.grid[1] * k.grid[2]) for e in prof.events() for k in e.kernels]


def test_long_lines_take_the_lookback_in_one_launch(monkeypatch):
    """A few long lines: one launch over all their tiles of 2048 values (the scratch's
    counter and flags are zeroed by one cudaMemsetAsync, which is no kernel)."""
    monkeypatch.delenv("MINITORCH_SCAN_TILE", raising=False)
    one = minitorch.randn(20000, device="cuda")
    assert _launches(lambda: one.cumsum(0)) == [("lookback_scan_kernel", 10)]
    four = minitorch.randn(4, 9000, device="cuda")
    assert _launches(lambda: four.cumprod(1)) == [("lookback_scan_kernel", 20)]
    want = np.cumsum(four.cpu().numpy().astype(np.float64), axis=1)
    np.testing.assert_allclose(four.cumsum(1).cpu().numpy(), want.astype(np.float32), rtol=1e-6, atol=1e-4)
    short = minitorch.randn(64, 4000, device="cuda")  # under four tiles: one warp per line
    assert [name for name, _ in _launches(lambda: short.cumsum(1))] == ["warp_scan_kernel"]
