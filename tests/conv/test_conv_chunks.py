"""conv2d walks its batch in chunks of samples with one reused im2col buffer (ops/conv.cpp).

The CPU's chunk holds about 256 KiB of columns (at least one sample), so the shapes here are large enough that a
batch spans several chunks (and the last one is short); the results must not depend on
where the chunks fall. The references are vectorised NumPy (sliding windows + einsum),
independent of im2col, for the forward and all three gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import to_numpy
from minitorch.nn import functional as F


def windows(x, KH, KW, stride, padding, dilation):
    """(N, C, OH, OW, KH, KW): the input values each output pixel's window sees."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    span_h, span_w = dh * (KH - 1) + 1, dw * (KW - 1) + 1
    v = np.lib.stride_tricks.sliding_window_view(xp, (span_h, span_w), axis=(2, 3))
    return v[:, :, ::sh, ::sw, ::dh, ::dw]


def reference(x, w, b, g, stride, padding, dilation):
    """y, and the gradients of sum(y * g) for x, w and b, all in float64."""
    x, w, g = (np.asarray(a, np.float64) for a in (x, w, g))
    KH, KW = w.shape[2:]
    win = windows(x, KH, KW, stride, padding, dilation)
    y = np.einsum("ncijhw,ochw->noij", win, w) + b[None, :, None, None]
    gw = np.einsum("noij,ncijhw->ochw", g, win)
    gb = g.sum(axis=(0, 2, 3))
    # dx: each tap (kh, kw) sends g back through w[:, :, kh, kw] to the pixels it read.
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    N, C, H, W = x.shape
    OH, OW = g.shape[2:]
    gxp = np.zeros((N, C, H + 2 * ph, W + 2 * pw))
    for kh in range(KH):
        for kw in range(KW):
            part = np.einsum("noij,oc->ncij", g, w[:, :, kh, kw])
            gxp[:, :, kh * dh:kh * dh + sh * (OH - 1) + 1:sh, kw * dw:kw * dw + sw * (OW - 1) + 1:sw] += part
    return y, gxp[:, :, ph:ph + H, pw:pw + W], gw, gb


CASES = [
    # N, C, O, H, W, K, stride, padding, dilation: each spans several CPU chunks
    pytest.param(7, 8, 5, 32, 32, 3, (1, 1), (1, 1), (1, 1), id="3x3-pad"),
    pytest.param(7, 4, 3, 20, 20, 3, (1, 1), (1, 1), (1, 1), id="short-last-chunk"),  # chunks 4+3 (float64: 2+2+2+1)
    pytest.param(5, 6, 4, 40, 36, 3, (2, 1), (0, 2), (1, 2), id="stride-dilation"),
    pytest.param(4, 300, 3, 32, 32, 1, (1, 1), (0, 0), (1, 1), id="1x1-direct"),
    pytest.param(3, 20, 4, 30, 30, 1, (2, 2), (1, 1), (1, 1), id="1x1-strided"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("N, C, O, H, W, K, stride, padding, dilation", CASES)
def test_conv2d_across_chunks_matches_reference(device, dtype, N, C, O, H, W, K, stride, padding, dilation):
    rng = np.random.default_rng(N * 100 + C)
    xa = rng.uniform(-1, 1, (N, C, H, W)).astype(dtype)
    wa = rng.uniform(-1, 1, (O, C, K, K)).astype(dtype)
    ba = rng.uniform(-1, 1, O).astype(dtype)
    x, w, b = (minitorch.tensor(a, device=device, requires_grad=True) for a in (xa, wa, ba))
    y = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation)
    ga = rng.uniform(-1, 1, tuple(y.shape)).astype(dtype)
    y.backward(minitorch.tensor(ga, device=device))
    ry, rgx, rgw, rgb = reference(xa, wa, ba, ga, stride, padding, dilation)
    tol = dict(rtol=1e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_numpy(y), ry, **tol)
    np.testing.assert_allclose(to_numpy(x.grad), rgx, **tol)
    # a weight gradient sums over every sample and pixel: a longer sum, a looser float32 bound
    np.testing.assert_allclose(to_numpy(w.grad), rgw, **(dict(rtol=1e-3, atol=2e-3) if dtype == np.float32 else tol))
    np.testing.assert_allclose(to_numpy(b.grad), rgb, **(dict(rtol=1e-3, atol=2e-3) if dtype == np.float32 else tol))


@pytest.mark.parametrize("needs", ["x", "w", "b"])
def test_conv2d_across_chunks_one_gradient_at_a_time(device, needs):
    rng = np.random.default_rng(11)
    xa, wa, ba = rng.standard_normal((6, 9, 31, 33)), rng.standard_normal((4, 9, 3, 3)), rng.standard_normal(4)
    t = {k: minitorch.tensor(a, device=device, requires_grad=(k == needs)) for k, a in zip("xwb", (xa, wa, ba))}
    y = F.conv2d(t["x"], t["w"], t["b"], padding=1)
    ga = rng.standard_normal(tuple(y.shape))
    y.backward(minitorch.tensor(ga, device=device))
    ref = dict(zip("xwb", reference(xa, wa, ba, ga, (1, 1), (1, 1), (1, 1))[1:]))
    np.testing.assert_allclose(to_numpy(t[needs].grad), ref[needs], rtol=1e-10, atol=1e-10)
    for k in "xwb":
        if k != needs:
            assert t[k].grad is None


def test_conv2d_zero_input_channels_gives_the_bias(device):
    x = minitorch.zeros(2, 0, 5, 5, device=device, requires_grad=True)
    w = minitorch.zeros(3, 0, 3, 3, device=device, requires_grad=True)
    b = minitorch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = F.conv2d(x, w, b)
    assert tuple(y.shape) == (2, 3, 3, 3)
    np.testing.assert_array_equal(to_numpy(y), np.broadcast_to(np.array([1.0, 2.0, 3.0])[:, None, None], (2, 3, 3, 3)))
    y.sum().backward()
    assert tuple(x.grad.shape) == (2, 0, 5, 5) and tuple(w.grad.shape) == (3, 0, 3, 3)
    np.testing.assert_array_equal(to_numpy(b.grad), [18.0, 18.0, 18.0])


@pytest.mark.skipif(not minitorch.cpu.caching_enabled(), reason="CPU memory statistics need the caching allocator")
def test_conv2d_memory_is_bounded_by_a_chunk_not_the_batch():
    # Columns for the whole batch would be C*KH*KW * N*OH*OW floats = 37.7 MB here; one
    # chunk's buffer is about 256 KiB. Forward keeps only the output (4 MiB) and a buffer;
    # backward adds the input and output gradients and two buffers.
    N, C, H, W = 64, 16, 32, 32
    x = minitorch.randn(N, C, H, W, requires_grad=True)
    w = minitorch.randn(16, C, 3, 3, requires_grad=True)
    full_columns = C * 9 * N * H * W * 4
    minitorch.cpu.reset_peak_memory_stats()
    base = minitorch.cpu.memory_allocated()
    y = F.conv2d(x, w, padding=1)
    assert minitorch.cpu.max_memory_allocated() - base < 8 << 20 < full_columns
    g = minitorch.ones(N, 16, H, W)
    minitorch.cpu.reset_peak_memory_stats()
    base = minitorch.cpu.memory_allocated()
    y.backward(g)
    assert minitorch.cpu.max_memory_allocated() - base < 16 << 20 < full_columns
