"""The lectures' CNN, conv2d/conv1d and the poolings against PyTorch with the same weights
and inputs: outputs and every gradient. minitorch runs on every device; PyTorch, the
reference, on the CPU.

Skipped when PyTorch is not installed (it is not a minitorch dependency); the main
references are the NumPy ones in test_conv2d.py and test_pooling.py.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch
from conftest import TORCH_SKIP_REASON, to_numpy
from minitorch import nn
from minitorch.nn import functional as F

torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


def lecture_cnn(lib):
    return lib.nn.Sequential(
        lib.nn.Conv2d(1, 8, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Conv2d(8, 16, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Flatten(), lib.nn.Linear(16 * 7 * 7, 10),
    )


def cnn_pair(dtype, device):
    minitorch.manual_seed(0)
    ours, theirs = lecture_cnn(minitorch).to(device), lecture_cnn(torch)
    if dtype == np.float64:
        ours.double()
        theirs.double()
    names = [n for n, _ in ours.named_parameters()]
    assert names == [n for n, _ in theirs.named_parameters()]
    assert names == ["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias"]
    with torch.no_grad():
        for (_, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape) and p.device == device
            tp.copy_(torch.from_numpy(to_numpy(p)))
    return ours, theirs


@pytest.mark.parametrize("batch", [1, 5])
def test_lecture_cnn_forward_and_gradients_match_torch_float64(batch, device):
    ours, theirs = cnn_pair(np.float64, device)
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 1, 28, 28))
    y = rng.integers(0, 10, batch)
    xm = minitorch.tensor(x, requires_grad=True, device=device)
    xt = torch.tensor(x, requires_grad=True)
    out, tout = ours(xm), theirs(xt)
    np.testing.assert_allclose(to_numpy(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    loss = F.cross_entropy(out, minitorch.tensor(y, device=device))
    tloss = torch.nn.functional.cross_entropy(tout, torch.tensor(y))
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    loss.backward()
    tloss.backward()
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert p.grad is not None and p.grad.device == device, name
        np.testing.assert_allclose(to_numpy(p.grad), tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(to_numpy(xm.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_lecture_cnn_forward_matches_torch_float32(device):
    ours, theirs = cnn_pair(np.float32, device)
    x = np.random.default_rng(9).standard_normal((8, 1, 28, 28)).astype(np.float32)
    out = ours(minitorch.tensor(x, device=device))
    assert out.dtype == minitorch.float32 and out.device == device
    with torch.no_grad():
        tout = theirs(torch.from_numpy(x))
    np.testing.assert_allclose(to_numpy(out), tout.numpy(), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------- functional vs torch ----

@st.composite
def conv_cases(draw):
    n, c, o = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    assume(h + 2 * p[0] >= d[0] * (k[0] - 1) + 1 and w + 2 * p[1] >= d[1] * (k[1] - 1) + 1)
    return (n, c, h, w), (o, c, *k), s, p, d, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=30)
@given(case=conv_cases())
def test_conv2d_forward_and_backward_match_torch(device, case):
    xs, ws, s, p, d, seed = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])]
    ours = [minitorch.tensor(a, requires_grad=True, device=device) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.conv2d(*ours, stride=s, padding=p, dilation=d)
    tout = torch.nn.functional.conv2d(*theirs, stride=s, padding=p, dilation=d)
    np.testing.assert_allclose(to_numpy(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(tout.shape))
    out.backward(minitorch.tensor(g, device=device))
    tout.backward(torch.tensor(g))
    for a, b in zip(ours, theirs):
        assert a.grad.device == device
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("padding", [0, 2, "same", "valid"])
def test_conv1d_matches_torch(padding, device):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 3, 10)), rng.standard_normal((4, 3, 3)), rng.standard_normal(4)]
    ours = [minitorch.tensor(a, requires_grad=True, device=device) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.conv1d(*ours, padding=padding, dilation=2)
    tout = torch.nn.functional.conv1d(*theirs, padding=padding, dilation=2)
    np.testing.assert_allclose(to_numpy(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.sum().backward()
    tout.sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@st.composite
def pool_cases(draw):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, k[0] // 2)), draw(st.integers(0, k[1] // 2)))
    ceil_mode = draw(st.booleans())
    assume(h + 2 * p[0] >= k[0] and w + 2 * p[1] >= k[1])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.permutation(n * c * h * w).reshape(n, c, h, w) / 3.0  # distinct: no ties
    return x, k, s, p, ceil_mode


@settings(max_examples=40)
@given(case=pool_cases())
def test_max_pool2d_matches_torch(device, case):
    x, k, s, p, ceil_mode = case
    xm, xt = minitorch.tensor(x, requires_grad=True, device=device), torch.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(xm, k, s, p, ceil_mode=ceil_mode, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(xt, k, s, p, ceil_mode=ceil_mode, return_indices=True)
    np.testing.assert_array_equal(to_numpy(out), tout.detach().numpy())
    np.testing.assert_array_equal(to_numpy(idx), tidx.numpy())
    g = np.random.default_rng(0).standard_normal(tuple(tout.shape))
    out.backward(minitorch.tensor(g, device=device))
    tout.backward(torch.tensor(g))
    assert xm.grad.device == device
    np.testing.assert_allclose(to_numpy(xm.grad), xt.grad.numpy(), rtol=1e-12, atol=1e-14)


@settings(max_examples=40)
@given(case=pool_cases())
def test_avg_pool2d_matches_torch(device, case):
    x, k, s, p, ceil_mode = case
    xm, xt = minitorch.tensor(x, requires_grad=True, device=device), torch.tensor(x, requires_grad=True)
    out = F.avg_pool2d(xm, k, s, p, ceil_mode=ceil_mode)
    tout = torch.nn.functional.avg_pool2d(xt, k, s, p, ceil_mode=ceil_mode)
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(to_numpy(out), tout.detach().numpy(), rtol=1e-12, atol=1e-13)
    g = np.random.default_rng(0).standard_normal(tuple(tout.shape))
    out.backward(minitorch.tensor(g, device=device))
    tout.backward(torch.tensor(g))
    assert xm.grad.device == device
    np.testing.assert_allclose(to_numpy(xm.grad), xt.grad.numpy(), rtol=1e-12, atol=1e-13)


def test_avg_pool2d_ceil_mode_divisor_matches_torch(device):
    # 5x5 input, 2x2 windows: the last window of each row holds only 2 pixels inside the
    # input, and PyTorch divides by 2, not by 4.
    x = np.arange(25.0).reshape(1, 1, 5, 5)
    out = F.avg_pool2d(minitorch.tensor(x, device=device), 2, ceil_mode=True)
    tout = torch.nn.functional.avg_pool2d(torch.tensor(x), 2, ceil_mode=True)
    np.testing.assert_allclose(to_numpy(out), tout.numpy(), rtol=1e-12)


def test_adaptive_avg_pool2d_matches_torch(device):
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 4))
    for size in [1, (2, 2), (3, 1)]:
        out = F.adaptive_avg_pool2d(minitorch.tensor(x, device=device), size)
        tout = torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x), size)
        np.testing.assert_allclose(to_numpy(out), tout.numpy(), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- modules ----

@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Conv2d(1, 8, 3, padding=1),
    lambda lib: lib.nn.Conv2d(8, 16, (3, 5), stride=2, dilation=(1, 2)),
    lambda lib: lib.nn.Conv2d(2, 4, 3, bias=False),
    lambda lib: lib.nn.Conv2d(2, 4, 3, padding="same"),
    lambda lib: lib.nn.Conv2d(2, 4, 3, padding="valid"),
    lambda lib: lib.nn.Conv1d(3, 4, 3, padding=2, bias=False),
    lambda lib: lib.nn.Conv1d(3, 4, 3, padding="same"),
    lambda lib: lib.nn.MaxPool2d(2),
    lambda lib: lib.nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True),
    lambda lib: lib.nn.AvgPool2d(2),
    lambda lib: lib.nn.AvgPool2d((2, 3), stride=1, padding=1),
    lambda lib: lib.nn.AdaptiveAvgPool2d(1),
    lambda lib: lib.nn.AdaptiveAvgPool2d((2, 3)),
])
def test_module_repr_matches_torch(make):
    assert repr(make(minitorch)) == repr(make(torch))


def test_conv2d_init_range_matches_torch(device):
    # the same U(-1/sqrt(fan_in), 1/sqrt(fan_in)) range as PyTorch's default (fan_in = 16*3*3),
    # drawn by the generator of the device the module is built on
    torch.manual_seed(0)
    minitorch.manual_seed(0)
    ours, theirs = nn.Conv2d(16, 32, 3, device=device), torch.nn.Conv2d(16, 32, 3)
    bound = 1 / 12
    w, tw = np.abs(to_numpy(ours.weight)), theirs.weight.detach().abs().numpy()
    assert tw.max() <= bound and w.max() <= bound * (1 + 1e-6)
    assert w.max() > 0.98 * bound and tw.max() > 0.98 * bound  # 4608 draws reach the edge
    np.testing.assert_allclose(w.mean(), tw.mean(), rtol=0.05)  # both ~ bound / 2
    assert np.abs(to_numpy(ours.bias)).max() <= bound * (1 + 1e-6)
    assert theirs.bias.detach().abs().max().item() <= bound
