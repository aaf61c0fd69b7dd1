"""``nn.Conv2d``, ``nn.Conv1d``, ``nn.MaxPool2d``, ``nn.AvgPool2d``, ``nn.AdaptiveAvgPool2d``:
shapes, PyTorch's default initialisation, values, ``repr`` and argument errors.

Modules are built on (``device=``) or moved to (``.to(device)``) every device; ``repr``
and the constructor's argument checks are device-independent."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import to_numpy
from minitorch import nn


def np_conv2d(x, w, b, stride=(1, 1), padding=(0, 0)):
    """Cross-correlation via NumPy sliding windows (float64)."""
    x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))[:, :, ::stride[0], ::stride[1]]
    out = np.einsum("nchwij,ocij->nohw", win, np.asarray(w, np.float64))
    return out if b is None else out + np.asarray(b, np.float64)[None, :, None, None]


# ------------------------------------------------------------------ Conv2d ----

def test_conv2d_module_shapes_and_values(device):
    conv = nn.Conv2d(1, 8, 3, padding=1, device=device)
    assert tuple(conv.weight.shape) == (8, 1, 3, 3)
    assert tuple(conv.bias.shape) == (8,)
    assert conv.weight.requires_grad and conv.bias.requires_grad
    assert conv.weight.dtype == minitorch.float32
    assert conv.weight.device == device and conv.bias.device == device
    assert [n for n, _ in conv.named_parameters()] == ["weight", "bias"]
    assert conv.kernel_size == (3, 3) and conv.stride == (1, 1) and conv.padding == (1, 1)
    assert conv.dilation == (1, 1)
    x = np.random.default_rng(0).standard_normal((4, 1, 28, 28)).astype(np.float32)
    out = conv(minitorch.tensor(x, device=device))
    assert tuple(out.shape) == (4, 8, 28, 28)
    assert out.dtype == minitorch.float32 and out.device == device
    expected = np_conv2d(x, to_numpy(conv.weight), to_numpy(conv.bias), padding=(1, 1))
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-4, atol=1e-5)


def test_conv2d_module_unbatched_input(device):
    conv = nn.Conv2d(2, 3, (2, 3), stride=(1, 2), device=device)
    x = minitorch.randn(2, 6, 7, device=device)
    out = conv(x)
    assert tuple(out.shape) == (3, 5, 3)
    np.testing.assert_allclose(to_numpy(out), to_numpy(conv(x.unsqueeze(0)))[0], rtol=1e-6)


@pytest.mark.parametrize("cin, cout, k", [(1, 8, 3), (8, 16, 3), (16, 32, (3, 5)), (3, 4, 1)])
def test_conv2d_default_init_pytorch_bounds(cin, cout, k, device):
    minitorch.manual_seed(cin * 100 + cout)
    conv = nn.Conv2d(cin, cout, k, device=device)  # drawn by the device's generator
    assert conv.weight.device == device and conv.bias.device == device
    kh, kw = (k, k) if isinstance(k, int) else k
    bound = 1 / math.sqrt(cin * kh * kw)  # kaiming_uniform(a=sqrt(5)) == U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    w, b = to_numpy(conv.weight), to_numpy(conv.bias)
    assert np.abs(w).max() <= bound * (1 + 1e-6)
    assert np.abs(b).max() <= bound * (1 + 1e-6)
    # ... and spread over that range, not a much narrower one (uniform: std = bound / sqrt(3))
    if w.size >= 500:
        assert np.abs(w).max() > 0.95 * bound
        assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
        assert abs(w.mean()) < 0.1 * bound
    else:
        assert np.abs(w).max() > 0.5 * bound
    assert len(np.unique(w)) > 0.9 * w.size  # not a constant fill (float32 draws may rarely collide)


def test_conv_reset_parameters_redraws(device):
    conv = nn.Conv2d(2, 4, 3, device=device)
    before = to_numpy(conv.weight)
    conv.reset_parameters()
    assert not np.array_equal(before, to_numpy(conv.weight))
    assert conv.weight.device == device and conv.bias.device == device


@pytest.mark.parametrize("k, dilation", [(1, 1), (3, 1), (5, 1), (3, 2), ((3, 5), 1)])
def test_conv2d_padding_same_keeps_height_and_width(k, dilation, device):
    conv = nn.Conv2d(2, 3, k, padding="same", dilation=dilation, device=device)
    for h, w in [(7, 6), (8, 9), (5, 5)]:
        x = minitorch.randn(2, 2, h, w, device=device)
        out = conv(x)
        assert tuple(out.shape) == (2, 3, h, w)
    kh, kw = (k, k) if isinstance(k, int) else k
    xa = np.random.default_rng(1).standard_normal((1, 2, 6, 7)).astype(np.float32)
    if dilation == 1:
        expected = np_conv2d(xa, to_numpy(conv.weight), to_numpy(conv.bias), padding=((kh - 1) // 2, (kw - 1) // 2))
        np.testing.assert_allclose(to_numpy(conv(minitorch.tensor(xa, device=device))), expected, rtol=1e-4, atol=1e-5)


def test_conv2d_padding_valid_and_stride(device):
    conv = nn.Conv2d(3, 5, 3, padding="valid", device=device)
    assert tuple(conv(minitorch.randn(2, 3, 8, 7, device=device)).shape) == (2, 5, 6, 5)
    conv2 = nn.Conv2d(3, 5, (3, 2), stride=2, padding=(1, 0), device=device)
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 7)).astype(np.float32)
    out = conv2(minitorch.tensor(x, device=device))
    expected = np_conv2d(x, to_numpy(conv2.weight), to_numpy(conv2.bias), (2, 2), (1, 0))
    assert tuple(out.shape) == expected.shape == (2, 5, 4, 3)
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-4, atol=1e-5)


def test_conv2d_no_bias(device):
    conv = nn.Conv2d(2, 3, 3, bias=False, device=device)
    assert conv.bias is None
    assert [n for n, _ in conv.named_parameters()] == ["weight"]
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(to_numpy(conv(minitorch.tensor(x, device=device))),
                               np_conv2d(x, to_numpy(conv.weight), None), rtol=1e-4, atol=1e-5)


def test_conv2d_module_double_and_gradients(device):
    conv = nn.Conv2d(2, 3, 3, padding=1).double().to(device)  # built on the CPU, then moved
    assert conv.weight.dtype == minitorch.float64 and conv.bias.dtype == minitorch.float64
    assert conv.weight.device == device and conv.bias.device == device
    x = minitorch.randn(2, 2, 4, 4, dtype=minitorch.float64, device=device)
    out = conv(x)
    assert out.dtype == minitorch.float64
    out.sum().backward()
    assert tuple(conv.weight.grad.shape) == (3, 2, 3, 3)
    assert conv.weight.grad.device == device and conv.bias.grad.device == device
    # d(sum)/d(weight[o, c, i, j]) = sum of the input pixels that tap (i, j) meets
    xp = np.pad(to_numpy(x), ((0, 0), (0, 0), (1, 1), (1, 1)))
    taps = np.array([[xp[:, :, i:i + 4, j:j + 4].sum(axis=(0, 2, 3)) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(to_numpy(conv.weight.grad), np.broadcast_to(taps.transpose(2, 0, 1), (3, 2, 3, 3)),
                               rtol=1e-12, atol=1e-12)
    # d(sum)/d(bias[o]) = number of output pixels per channel
    np.testing.assert_allclose(to_numpy(conv.bias.grad), np.full(3, 2 * 4 * 4.0))


def test_conv2d_module_float64_construction(device):
    conv = nn.Conv2d(1, 2, 3, dtype=minitorch.float64, device=device)
    assert conv.weight.dtype == minitorch.float64 and conv.bias.dtype == minitorch.float64
    assert conv.weight.device == device and conv.bias.device == device


# ------------------------------------------------------------------ Conv1d ----

def test_conv1d_module(device):
    conv = nn.Conv1d(3, 4, 3, padding=1, device=device)
    assert tuple(conv.weight.shape) == (4, 3, 3)
    assert tuple(conv.bias.shape) == (4,)
    assert conv.kernel_size == (3,) and conv.stride == (1,) and conv.padding == (1,)
    bound = 1 / math.sqrt(3 * 3)
    assert np.abs(to_numpy(conv.weight)).max() <= bound * (1 + 1e-6)
    assert np.abs(to_numpy(conv.bias)).max() <= bound * (1 + 1e-6)
    x = np.random.default_rng(4).standard_normal((2, 3, 10)).astype(np.float32)
    out = conv(minitorch.tensor(x, device=device))
    assert tuple(out.shape) == (2, 4, 10) and out.device == device
    w, b = to_numpy(conv.weight), to_numpy(conv.bias)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1)))
    expected = np.stack([np.einsum("nck,ock->no", xp[:, :, i:i + 3], w) for i in range(10)], axis=-1) + b[:, None]
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-4, atol=1e-5)
    assert tuple(conv(minitorch.tensor(x[0], device=device)).shape) == (4, 10)  # unbatched


@pytest.mark.parametrize("kwargs, length, out_len", [
    (dict(padding="same"), 9, 9), (dict(padding="same", dilation=2), 8, 8), (dict(padding="valid"), 9, 7),
    (dict(stride=2), 9, 4), (dict(stride=3, padding=2, dilation=2), 9, 3),
])
def test_conv1d_module_output_lengths(kwargs, length, out_len, device):
    conv = nn.Conv1d(2, 5, 3, **kwargs, device=device)
    assert tuple(conv(minitorch.randn(3, 2, length, device=device)).shape) == (3, 5, out_len)


# ---------------------------------------------------------------- pooling ----

def test_maxpool2d_module(device):
    pool = nn.MaxPool2d(2)
    assert pool.kernel_size == 2 and pool.stride == 2
    x = np.random.default_rng(5).standard_normal((2, 3, 6, 5)).astype(np.float32)
    out = pool(minitorch.tensor(x, device=device))
    assert out.device == device
    assert tuple(out.shape) == (2, 3, 3, 2)
    expected = x[:, :, :6, :4].reshape(2, 3, 3, 2, 2, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(to_numpy(out), expected)


def test_maxpool2d_module_return_indices(device):
    pool = nn.MaxPool2d(2, return_indices=True)
    x = np.random.default_rng(6).permutation(32).reshape(1, 2, 4, 4).astype(np.float64)
    out, idx = pool(minitorch.tensor(x, device=device))
    assert idx.dtype == minitorch.int64 and idx.device == device
    flat = x.reshape(1, 2, 16)
    np.testing.assert_array_equal(np.take_along_axis(flat, to_numpy(idx).reshape(1, 2, 4), 2),
                                  to_numpy(out).reshape(1, 2, 4))


def test_avgpool2d_module(device):
    pool = nn.AvgPool2d(2)
    assert pool.kernel_size == 2 and pool.stride == 2
    x = np.random.default_rng(7).standard_normal((2, 3, 6, 4))
    out = pool(minitorch.tensor(x, device=device))
    assert tuple(out.shape) == (2, 3, 3, 2)
    np.testing.assert_allclose(to_numpy(out), x.reshape(2, 3, 3, 2, 2, 2).mean(axis=(3, 5)), rtol=1e-12)
    pool3 = nn.AvgPool2d(3, stride=1, padding=1)
    ones = pool3(minitorch.ones(1, 1, 3, 3, dtype=minitorch.float64, device=device))
    np.testing.assert_allclose(to_numpy(ones)[0, 0, 0], [4 / 9, 6 / 9, 4 / 9], rtol=1e-12)


def test_adaptive_avgpool2d_global_average(device):
    pool = nn.AdaptiveAvgPool2d(1)
    x = np.random.default_rng(8).standard_normal((2, 16, 7, 7))
    out = pool(minitorch.tensor(x, device=device))
    assert tuple(out.shape) == (2, 16, 1, 1)
    np.testing.assert_allclose(to_numpy(out)[:, :, 0, 0], x.mean(axis=(2, 3)), rtol=1e-12, atol=1e-14)
    out2 = nn.AdaptiveAvgPool2d((2, 1))(minitorch.tensor(x[:, :, :6], device=device))
    np.testing.assert_allclose(to_numpy(out2), x[:, :, :6].reshape(2, 16, 2, 3, 1, 7).mean(axis=(3, 5)), rtol=1e-12)


def test_lecture_cnn_shapes(device):
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 7 * 7, 10),
    ).to(device)
    x = minitorch.randn(3, 1, 28, 28, device=device)
    h = x
    shapes = []
    for layer in model:
        h = layer(h)
        shapes.append(tuple(h.shape))
        assert h.device == device, layer
    assert shapes == [(3, 8, 28, 28), (3, 8, 28, 28), (3, 8, 14, 14), (3, 16, 14, 14), (3, 16, 14, 14),
                      (3, 16, 7, 7), (3, 784), (3, 10)]
    out = model(x)
    out.sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and tuple(p.grad.shape) == tuple(p.shape), name
        assert p.device == device and p.grad.device == device, name
    assert sum(p.numel() for p in model.parameters()) == (8 * 9 + 8) + (16 * 8 * 9 + 16) + (784 * 10 + 10)


# ------------------------------------------------------------------- repr ----

@pytest.mark.parametrize("module, text", [
    (lambda: nn.Conv2d(1, 8, 3, padding=1), "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"),
    (lambda: nn.Conv2d(8, 16, (3, 5), stride=2), "Conv2d(8, 16, kernel_size=(3, 5), stride=(2, 2))"),
    (lambda: nn.Conv2d(2, 4, 3, dilation=2, bias=False),
     "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), dilation=(2, 2), bias=False)"),
    (lambda: nn.Conv1d(3, 4, 3, padding=1), "Conv1d(3, 4, kernel_size=(3,), stride=(1,), padding=(1,))"),
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.MaxPool2d(3, stride=1, padding=1),
     "MaxPool2d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=False)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AdaptiveAvgPool2d(1), "AdaptiveAvgPool2d(output_size=1)"),
])
def test_repr(module, text):
    assert repr(module()) == text


def test_sequential_repr_lists_conv_layers():
    r = repr(nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)))
    assert "(0): Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))" in r
    assert "(2): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)" in r


# ----------------------------------------------------------------- errors ----

@pytest.mark.parametrize("kwargs, match", [
    (dict(padding="same", stride=2), "strided"),
    (dict(padding="full"), "padding"),
    (dict(stride=0), "stride"),
    (dict(kernel_size=0), "kernel_size"),
    (dict(kernel_size=(3, 3, 3)), "kernel_size"),
])
def test_conv2d_module_bad_arguments(kwargs, match):
    args = dict(in_channels=2, out_channels=3, kernel_size=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        nn.Conv2d(**args)


@pytest.mark.parametrize("cin, cout", [(0, 3), (2, -1), (2.0, 3), (True, 3)])
def test_conv_module_bad_channels(cin, cout):
    with pytest.raises(ValueError, match="channels"):
        nn.Conv2d(cin, cout, 3)


def test_conv_module_groups_and_padding_mode_checks():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(2, 4, 3, padding_mode="mirror")


def test_conv2d_module_channel_mismatch_at_forward(device):
    conv = nn.Conv2d(3, 4, 3, device=device)
    with pytest.raises(ValueError) as e:
        conv(minitorch.randn(1, 2, 5, 5, device=device))
    assert "(1, 2, 5, 5)" in str(e.value) and "(4, 3, 3, 3)" in str(e.value)


def test_conv2d_module_dtype_mismatch_at_forward(device):
    conv = nn.Conv2d(1, 2, 3, device=device)
    with pytest.raises(TypeError):
        conv(minitorch.randn(1, 1, 5, 5, dtype=minitorch.float64, device=device))
