"""Tensor.unfold(dimension, size, step): sliding windows as a view (ops/views.cpp), checked
against NumPy's sliding_window_view on every device: shapes and strides, memory shared with
the base, non-contiguous inputs, patches of images (unfold twice), gradients where windows
overlap (float64 gradcheck, double backward), the backward's launches, and errors.
tests/opinfo runs the op table's generic checks on every dtype."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def np_unfold(x, dim, size, step):
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    return np.take(windows, np.arange(0, windows.shape[dim], step), axis=dim)


@pytest.mark.parametrize("device", DEVICES)
def test_windows_match_numpy(device):
    rng = np.random.default_rng(0)
    for shape, dim, size, step in [((10,), 0, 3, 1), ((10,), 0, 3, 3), ((10,), 0, 4, 5), ((3, 8), 1, 8, 1),
                                   ((3, 8), 0, 2, 1), ((2, 3, 9), -1, 2, 4), ((4, 0), 0, 2, 1), ((4, 5), 1, 0, 2)]:
        x = rng.standard_normal(shape)
        got = minitorch.tensor(x, device=device).unfold(dim, size, step)
        want = np_unfold(x, dim % len(shape), size, step)
        assert tuple(got.shape) == want.shape, (shape, dim, size, step)
        np.testing.assert_array_equal(got.cpu().numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_a_view_of_the_base(device):
    x = minitorch.arange(10.0, device=device)
    u = x.unfold(0, 4, 2)
    assert u.shape == (4, 4) and u.stride() == (2, 1) and u.data_ptr() == x.data_ptr()
    x[5] = 100.0  # seen by both windows that hold it
    assert u[1, 3].item() == 100.0 and u[2, 1].item() == 100.0
    t = minitorch.arange(12.0, device=device).reshape(3, 4).t()  # (4, 3), strides (1, 4)
    v = t.unfold(0, 2, 2)
    assert v.stride() == (2, 4, 1)
    np.testing.assert_array_equal(v.cpu().numpy(), np_unfold(t.cpu().numpy(), 0, 2, 2))


@pytest.mark.parametrize("device", DEVICES)
def test_image_patches(device):
    """Non-overlapping 4x4 patches of a batch of images: unfold the rows, then the columns."""
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 12))
    p = minitorch.tensor(x, device=device).unfold(2, 4, 4).unfold(3, 4, 4)  # (2, 3, 2, 3, 4, 4)
    want = x.reshape(2, 3, 2, 4, 3, 4).transpose(0, 1, 2, 4, 3, 5)
    np.testing.assert_array_equal(p.cpu().numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_add_where_windows_overlap(device):
    x = minitorch.zeros(7, dtype=minitorch.float64, device=device, requires_grad=True)
    x.unfold(0, 3, 2).sum().backward()  # windows [0..2], [2..4], [4..6]
    assert x.grad.tolist() == [1, 1, 2, 1, 2, 1, 1]
    x = minitorch.zeros(7, dtype=minitorch.float64, device=device, requires_grad=True)
    x.unfold(0, 2, 3).sum().backward()  # [0, 1], [3, 4]: the rest is in no window
    assert x.grad.tolist() == [1, 1, 0, 1, 1, 0, 0]
    rng = np.random.default_rng(2)
    for shape, dim, size, step in [((3, 6), 1, 3, 1), ((5, 2, 3), 0, 2, 2), ((4,), 0, 4, 1), ((), 0, 1, 1)]:
        t = minitorch.tensor(rng.standard_normal(shape), device=device, requires_grad=True)
        assert gradcheck(lambda a: a.unfold(dim, size, step) * 1.5, (t,))


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward(device):
    x = minitorch.tensor(np.random.default_rng(3).standard_normal((2, 6)), device=device, requires_grad=True)
    (g,) = minitorch.autograd.grad((x.unfold(1, 3, 1) ** 2).sum(), (x,), create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), (x,))
    counts = np.array([1, 2, 3, 3, 2, 1], dtype=np.float64)  # windows holding each element
    np.testing.assert_allclose(g.detach().cpu().numpy(), 2 * x.detach().cpu().numpy() * counts)
    np.testing.assert_allclose(gg.cpu().numpy(), np.broadcast_to(2 * counts, (2, 6)))


@needs_cuda
def test_backward_launches():
    """A zero fill, the gradient laid out by window (one copy) and one scatter-add: the
    window positions are made on the host and copied, not computed by kernels."""
    x = minitorch.randn(8, 64, 32, device="cuda", requires_grad=True)
    out = x.unfold(1, 8, 4)
    g = minitorch.ones_like(out)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out.backward(g)
    names = [k.name for e in prof.events() for k in e.kernels]
    assert len(names) <= 5 and sum("scatter" in n for n in names) == 1, names
    assert x.grad.sum().item() == out.numel()


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = minitorch.zeros(3, 5, device=device)
    with pytest.raises(ValueError, match="maximum size for tensor at dimension 1 is 5 but size is 6"):
        x.unfold(1, 6, 1)
    with pytest.raises(ValueError, match="step is 0 but must be > 0"):
        x.unfold(1, 2, 0)
    with pytest.raises(ValueError, match="size is -1 but must be >= 0"):
        x.unfold(1, -1, 1)
    with pytest.raises(IndexError):
        x.unfold(2, 1, 1)
    with pytest.raises(TypeError):
        x.unfold(1, 2.5, 1)
    with pytest.raises(ValueError, match="maximum size"):
        minitorch.tensor(1.0, device=device).unfold(0, 2, 1)
