"""The chunked scan of cuda/scan.cu for few long lines along a strided dim (cumsum(0) of a
tall matrix): each line cut into pieces of at least 64 values, the pieces' totals, a scan
of the totals, and each piece scanned again from the total before it (three launches).
Against NumPy on every dtype the scans take, forward and reverse (what cumsum's backward
runs), lengths that do and do not divide into pieces, and the launches it takes."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)

CHUNKED = ["chunk_scan_kernel", "scan_kernel", "chunk_scan_kernel"]  # totals, their scan, the pieces


def _kernels(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.split("<")[0] for e in prof.events() for k in e.kernels]


def _values(op, dtype, shape, rng):
    if op == "cumprod":  # products that stay finite: +-1 times a little, a few zeros
        x = rng.choice([-1, 1], size=shape) * (rng.uniform(0.98, 1.02, size=shape) if dtype != np.int64 else 1)
        x.reshape(-1)[rng.integers(0, x.size, size=2)] = 0
        return x.astype(dtype)
    if dtype == np.int64:
        return rng.integers(-10**6, 10**6, size=shape)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape,dim", [((256, 3), 0), ((2, 700, 5), 1), ((1001, 2), 0), ((4, 300, 1, 2), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_cuda_chunked_scan_matches_numpy(shape, dim, dtype, op):
    x = _values(op, dtype, shape, np.random.default_rng(len(shape) * 7 + shape[0]))
    t = minitorch.tensor(x, device="cuda")
    assert _kernels(lambda: getattr(t, op)(dim)) == CHUNKED
    got = getattr(t, op)(dim).cpu().numpy()
    want = getattr(np, op)(x.astype(np.float64 if dtype != np.int64 else np.int64), axis=dim)
    if dtype == np.int64:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("shape,dim", [((300, 3), 0), ((3, 513, 2), 1)])
def test_cuda_chunked_scan_reverse_is_the_gradient(shape, dim):
    """cumsum's backward is a reverse cumsum: the pieces are numbered from the line's end."""
    x = np.random.default_rng(1).standard_normal(shape)
    w = np.random.default_rng(2).standard_normal(shape)
    t = minitorch.tensor(x, device="cuda", requires_grad=True)
    (t.cumsum(dim) * minitorch.tensor(w, device="cuda")).sum().backward()
    want = np.flip(np.cumsum(np.flip(w, dim), axis=dim), dim)
    np.testing.assert_allclose(t.grad.cpu().numpy(), want, rtol=1e-12, atol=1e-12)
    tc = minitorch.tensor(x, device="cuda", requires_grad=True)
    (tc.cumprod(dim) * minitorch.tensor(w, device="cuda")).sum().backward()
    tcpu = minitorch.tensor(x, requires_grad=True)
    (tcpu.cumprod(dim) * minitorch.tensor(w)).sum().backward()
    np.testing.assert_allclose(tc.grad.cpu().numpy(), tcpu.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_cuda_chunked_scan_only_for_few_long_lines():
    # lines shorter than 4 pieces of 64 values: one thread a line
    for shape, dim, kernels in [((255, 3), 0, ["scan_kernel"]), ((64, 300), 0, ["scan_kernel"]),
                                ((256, 2048), 0, CHUNKED),
                                ((3, 256), 1, ["warp_scan_kernel"])]:  # contiguous lines: their own kernels
        x = minitorch.randn(*shape, device="cuda")
        assert _kernels(lambda: x.cumsum(dim)) == kernels, (shape, dim)
