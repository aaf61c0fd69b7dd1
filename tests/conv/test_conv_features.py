"""Convolution features that DCGANs, U-Nets and MobileNets use: groups (depthwise too),
dilation, padding="same" (odd totals), padding_mode, transposed convolutions with
output_padding / output_size, and fold/unfold -- values against the direct-loop NumPy
references of the OpInfo database, float64 gradchecks, and the modules' init, repr,
state_dict and errors. Device-parametrized tests run on cpu and (emulated) cuda."""
from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import to_numpy
from minitorch import nn
from minitorch.testing import gradcheck

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "opinfo"))
from op_db import _np_conv1d, _np_conv2d, _np_conv_transpose2d, _np_fold, _np_unfold  # noqa: E402

RNG = np.random.default_rng(0)


def _t(a, device, requires_grad=False):
    return minitorch.tensor(np.asarray(a, np.float64), device=device, requires_grad=requires_grad)


def _close(got, want, tol=1e-10):
    np.testing.assert_allclose(to_numpy(got), want, rtol=tol, atol=tol)


# ---------------------------------------------------------------- groups ----

@pytest.mark.parametrize("cin, cout, groups, k, kw", [
    (4, 6, 2, 3, dict(padding=1)),
    (6, 6, 6, 3, dict(padding=1, stride=2)),          # depthwise
    (4, 8, 4, 3, dict(dilation=2, padding=2)),        # depthwise with a channel multiplier of 2
    (6, 9, 3, 1, {}),                                 # 1x1 grouped: the direct path (no im2col)
    (4, 4, 2, (2, 3), dict(padding="same", dilation=(2, 1))),
])
def test_grouped_conv2d_values_and_gradients(cin, cout, groups, k, kw, device):
    kh, kww = (k, k) if isinstance(k, int) else k
    x = RNG.standard_normal((2, cin, 6, 7))
    w = RNG.standard_normal((cout, cin // groups, kh, kww))
    b = RNG.standard_normal(cout)
    tx, tw, tb = (_t(a, device, True) for a in (x, w, b))
    y = F.conv2d(tx, tw, tb, groups=groups, **kw)
    _close(y, _np_conv2d(x, w, b, groups=groups, **kw))
    # gradcheck on a smaller input (finite differences run the op twice per element)
    tx = _t(x[:1, :, :4, :5], device, True)
    gradcheck(lambda a, c, d: F.conv2d(a, c, d, groups=groups, **kw), (tx, tw, tb))


def test_grouped_conv2d_over_several_chunks_and_noncontiguous_input(device):
    # 72 taps x 1024 pixels x 8 bytes per sample is over the CPU's 256 KiB chunk: one sample a chunk
    x = RNG.standard_normal((3, 32, 32, 8)).transpose(0, 3, 1, 2)  # (3, 8, 32, 32), not contiguous
    w = RNG.standard_normal((8, 2, 3, 3))
    leaf = _t(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), device, True)
    tx = leaf.permute(0, 3, 1, 2)
    assert not tx.is_contiguous()
    tw = _t(w, device, True)
    y = F.conv2d(tx, tw, groups=4, padding=1)
    _close(y, _np_conv2d(x, w, groups=4, padding=1))
    g = RNG.standard_normal(tuple(y.shape))
    y.backward(_t(g, device))
    # the gradients are the adjoint: <conv(x), g> differentiated
    eps = 1e-6
    dx = np.zeros_like(x)
    dx[1, 3, 5, 7] = eps
    def loss(x, w):
        return np.sum(_np_conv2d(x, w, groups=4, padding=1) * g)

    num = (loss(x + dx, w) - loss(x - dx, w)) / (2 * eps)
    assert abs(to_numpy(leaf.grad)[1, 5, 7, 3] - num) < 1e-6
    dw = np.zeros_like(w)
    dw[5, 1, 2, 0] = eps
    num = (loss(x, w + dw) - loss(x, w - dw)) / (2 * eps)
    assert abs(to_numpy(tw.grad)[5, 1, 2, 0] - num) < 1e-5


def test_depthwise_conv1d_module(device):
    conv = nn.Conv1d(4, 8, 3, groups=4, padding=1, dtype=minitorch.float64, device=device)
    assert tuple(conv.weight.shape) == (8, 1, 3)
    x = RNG.standard_normal((2, 4, 9))
    _close(conv(_t(x, device)), _np_conv1d(x, to_numpy(conv.weight), to_numpy(conv.bias), padding=1, groups=4))
    tx = _t(x, device, True)
    gradcheck(lambda a: conv(a), (tx,))


def test_grouped_init_uses_the_weights_fan_in():
    minitorch.manual_seed(0)
    conv = nn.Conv2d(32, 64, 3, groups=32)  # fan_in = 1 * 3 * 3
    bound = 1 / math.sqrt(9)
    w, b = to_numpy(conv.weight), to_numpy(conv.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.8 * bound


@pytest.mark.parametrize("call, match", [
    (lambda: F.conv2d(minitorch.randn(1, 5, 4, 4), minitorch.randn(4, 3, 3, 3), groups=2),
     r"conv2d: input of shape \(1, 5, 4, 4\) has 5 channels, but weight of shape \(4, 3, 3, 3\) with groups=2 "
     r"expects 6 input channels"),
    (lambda: F.conv2d(minitorch.randn(1, 6, 4, 4), minitorch.randn(3, 3, 3, 3), groups=2),
     r"conv2d: weight of shape \(3, 3, 3, 3\) has 3 output channels, which is not divisible by groups=2"),
    (lambda: F.conv2d(minitorch.randn(1, 2, 4, 4), minitorch.randn(2, 2, 3, 3), groups=0),
     "conv2d: groups must be a positive integer, got 0"),
    (lambda: F.conv1d(minitorch.randn(1, 5, 4), minitorch.randn(4, 2, 3), groups=2),
     r"conv1d: input of shape \(1, 5, 4\) has 5 channels, but weight of shape \(4, 2, 3\) with groups=2"),
    (lambda: nn.Conv2d(6, 4, 3, groups=4), "in_channels must be divisible by groups"),
    (lambda: nn.ConvTranspose2d(4, 6, 3, groups=4), "out_channels must be divisible by groups"),
    (lambda: F.conv_transpose2d(minitorch.randn(1, 3, 4, 4), minitorch.randn(3, 2, 3, 3), groups=2),
     r"conv_transpose2d: weight of shape \(3, 2, 3, 3\) has 3 input channels, which is not divisible by groups=2"),
    (lambda: F.conv_transpose2d(minitorch.randn(1, 4, 4, 4), minitorch.randn(3, 2, 3, 3)),
     r"conv_transpose2d: input of shape \(1, 4, 4, 4\) has 4 channels, but weight of shape \(3, 2, 3, 3\) expects 3"),
])
def test_bad_channel_counts_are_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------- same padding, padding_mode ----

@pytest.mark.parametrize("k, dilation", [(2, 1), (4, 1), (3, 2), ((2, 3), (3, 1))])
def test_padding_same_keeps_the_size_with_pytorchs_split(k, dilation, device):
    kh, kw = (k, k) if isinstance(k, int) else k
    x, w = RNG.standard_normal((1, 2, 6, 5)), RNG.standard_normal((3, 2, kh, kw))
    y = F.conv2d(_t(x, device), _t(w, device), padding="same", dilation=dilation)
    assert tuple(y.shape) == (1, 3, 6, 5)
    _close(y, _np_conv2d(x, w, padding="same", dilation=dilation))


def _np_pad(x, pads, mode):
    return np.pad(x, [(0, 0), (0, 0)] + list(pads), mode={"reflect": "reflect", "replicate": "edge",
                                                          "circular": "wrap", "zeros": "constant"}[mode])


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_padding_modes(mode, padding, device):
    conv = nn.Conv2d(2, 3, (3, 2), padding=padding, padding_mode=mode, dtype=minitorch.float64, device=device)
    x = RNG.standard_normal((2, 2, 5, 6))
    if padding == "same":
        pads = [(1, 1), (0, 1)]  # width: total 1, the extra at the end
    else:
        ph, pw = (padding, padding) if isinstance(padding, int) else padding
        pads = [(ph, ph), (pw, pw)]
    want = _np_conv2d(_np_pad(x, pads, mode), to_numpy(conv.weight), to_numpy(conv.bias))
    y = conv(_t(x, device))
    _close(y, want)
    if mode != "zeros":
        assert f"padding_mode={mode}" in repr(conv)


@pytest.mark.parametrize("mode", ["reflect", "circular"])
def test_conv1d_padding_modes_and_gradcheck(mode, device):
    conv = nn.Conv1d(2, 2, 3, padding=2, padding_mode=mode, dtype=minitorch.float64, device=device)
    x = RNG.standard_normal((1, 2, 6))
    want = _np_conv1d(_np_pad(x[:, :, None, :], [(0, 0), (2, 2)], mode)[:, :, 0], to_numpy(conv.weight),
                      to_numpy(conv.bias))
    _close(conv(_t(x, device)), want)
    gradcheck(lambda a: conv(a), (_t(x, device, True),))


def test_conv_module_repr_lists_groups_and_padding_mode():
    assert repr(nn.Conv2d(4, 8, 3, groups=4, padding="same", bias=False, padding_mode="reflect")) == (
        "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=4, bias=False, padding_mode=reflect)")
    assert repr(nn.Conv1d(2, 2, 3, dilation=2)) == "Conv1d(2, 2, kernel_size=(3,), stride=(1,), dilation=(2,))"


# ------------------------------------------------------------- transposed ----

@pytest.mark.parametrize("kw", [
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2), dilation=(1, 2)),
    dict(groups=2, stride=2),
    dict(dilation=3, output_padding=2),  # output_padding < dilation (but not < stride)
])
def test_conv_transpose2d_values_and_gradients(kw, device):
    x = RNG.standard_normal((2, 4, 3, 4))
    w = RNG.standard_normal((4, 3, 3, 2))
    b = RNG.standard_normal(3 * kw.get("groups", 1))
    tx, tw, tb = (_t(a, device, True) for a in (x, w, b))
    y = F.conv_transpose2d(tx, tw, tb, **kw)
    _close(y, _np_conv_transpose2d(x, w, b, **kw))
    tx = _t(x[:1, :, :2], device, True)
    gradcheck(lambda a, c, d: F.conv_transpose2d(a, c, d, **kw), (tx, tw, tb))


def test_conv_transpose2d_is_the_adjoint_of_conv2d(device):
    # <conv2d(x, W), y> == <x, conv_transpose2d(y, W)> for the same stride/padding/dilation/groups
    kw = dict(stride=2, padding=1, dilation=2, groups=2)
    x, w = RNG.standard_normal((2, 4, 9, 8)), RNG.standard_normal((6, 2, 3, 3))
    cx = F.conv2d(_t(x, device), _t(w, device), **kw)
    y = RNG.standard_normal(tuple(cx.shape))
    ty = F.conv_transpose2d(_t(y, device), _t(w, device), output_padding=(0, 1), **kw)
    assert tuple(ty.shape) == x.shape
    assert abs(np.sum(to_numpy(cx) * y) - np.sum(x * to_numpy(ty))) < 1e-9


def test_conv_transpose_module_shapes_init_repr_and_state_dict(device):
    minitorch.manual_seed(0)
    up = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1, device=device)
    assert tuple(up.weight.shape) == (16, 8, 4, 4) and tuple(up.bias.shape) == (8,)
    assert list(up.state_dict().keys()) == ["weight", "bias"]
    bound = 1 / math.sqrt(8 * 4 * 4)  # PyTorch's fan_in of a transposed weight: size(1) * kernel
    for p in (up.weight, up.bias):
        a = np.abs(to_numpy(p))
        assert a.max() <= bound and a.max() > 0.7 * bound
    assert tuple(up(minitorch.randn(2, 16, 7, 7, device=device)).shape) == (2, 8, 14, 14)
    assert repr(up) == "ConvTranspose2d(16, 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))"
    g = nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2, bias=False, dilation=2)
    assert tuple(g.weight.shape) == (4, 3, 3, 3) and g.bias is None
    assert repr(g) == ("ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2), "
                       "output_padding=(1, 1), groups=2, bias=False)")
    one = nn.ConvTranspose1d(3, 5, 3, stride=2)
    assert tuple(one.weight.shape) == (3, 5, 3)
    assert repr(one) == "ConvTranspose1d(3, 5, kernel_size=(3,), stride=(2,))"
    assert tuple(one(minitorch.randn(3, 4)).shape) == (5, 9)  # unbatched


def test_conv_transpose_output_size(device):
    up = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=minitorch.float64, device=device)
    x = _t(RNG.standard_normal((1, 2, 4, 5)), device)
    assert tuple(up(x).shape) == (1, 3, 7, 9)
    y = up(x, output_size=(8, 10))
    assert tuple(y.shape) == (1, 3, 8, 10)
    _close(y, _np_conv_transpose2d(to_numpy(x), to_numpy(up.weight), to_numpy(up.bias), 2, 1, 1))
    assert tuple(up(x, output_size=[1, 3, 7, 10]).shape) == (1, 3, 7, 10)  # with N, C: taken from the end
    with pytest.raises(ValueError, match=r"requested an output size of \[9, 9\], but valid sizes range from "
                                         r"\[7, 9\] to \[8, 10\]"):
        up(x, output_size=(9, 9))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        up(x, output_size=(8,))
    up1 = nn.ConvTranspose1d(2, 2, 3, stride=3, dtype=minitorch.float64, device=device)
    assert tuple(up1(_t(RNG.standard_normal((1, 2, 4)), device), output_size=[14]).shape) == (1, 2, 14)


def test_conv_transpose_errors():
    x, w = minitorch.randn(1, 2, 4, 4), minitorch.randn(2, 3, 3, 3)
    with pytest.raises(ValueError, match="conv_transpose2d: output padding must be smaller than either stride or "
                                         "dilation"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="output padding must be smaller"):
        F.conv_transpose1d(x[:, :, 0], w[:, :, 0], output_padding=1)
    with pytest.raises(ValueError, match="too small"):
        F.conv_transpose2d(x, w, padding=4)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="padding"):
        nn.ConvTranspose2d(2, 3, 3, padding="same")
    with pytest.raises(ValueError, match="bias of shape"):
        F.conv_transpose2d(x, w, minitorch.randn(2))
    with pytest.raises(TypeError, match="floating"):
        F.conv_transpose2d(x.long(), w.long())


def test_dcgan_generator_block_trains_one_step(device):
    minitorch.manual_seed(0)
    g = nn.Sequential(nn.ConvTranspose2d(8, 4, 4, 1, 0, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.ConvTranspose2d(4, 1, 4, 2, 1, bias=False), nn.Tanh()).to(device)
    out = g(minitorch.randn(2, 8, 1, 1, device=device))
    assert tuple(out.shape) == (2, 1, 8, 8)
    out.square().mean().backward()
    assert all(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in g.parameters())


# ------------------------------------------------------------- fold/unfold ----

@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=2),
                                dict(kernel_size=3, padding=1)])
def test_unfold_and_fold_values_round_trip_and_gradients(kw, device):
    x = RNG.standard_normal((2, 3, 5, 6))
    tx = _t(x, device, True)
    cols = F.unfold(tx, **kw)
    _close(cols, _np_unfold(x, **kw))
    back = F.fold(cols, (5, 6), **kw)
    _close(back, _np_fold(to_numpy(cols), (5, 6), **kw))
    # fold(unfold(x)) is x times how many blocks cover each pixel
    cover = to_numpy(F.fold(F.unfold(minitorch.ones(1, 1, 5, 6, dtype=minitorch.float64, device=device), **kw),
                            (5, 6), **kw))
    _close(back, x * cover)
    small = _t(x[:1, :2, :4], device, True)  # (1, 2, 4, 6)
    gradcheck(lambda a: F.unfold(a, **kw), (small,))
    tc = _t(to_numpy(F.unfold(small, **kw)), device, True)
    gradcheck(lambda c: F.fold(c, (4, 6), **kw), (tc,))
    # each is the other's adjoint: <unfold(x), c> == <x, fold(c)>
    c = RNG.standard_normal(tuple(cols.shape))
    assert abs(np.sum(to_numpy(cols) * c) - np.sum(x * to_numpy(F.fold(_t(c, device), (5, 6), **kw)))) < 1e-9


def test_unfold_matmul_is_conv2d(device):
    # the lecture's identity: conv2d = W @ unfold(x)
    x, w = RNG.standard_normal((2, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    cols = F.unfold(_t(x, device), 3, padding=1)
    y = (_t(w.reshape(4, -1), device) @ cols).reshape(2, 4, 6, 6)
    _close(y, _np_conv2d(x, w, padding=1))


def test_fold_unfold_modules_and_unbatched(device):
    u, f = nn.Unfold(kernel_size=(2, 3), padding=1), nn.Fold(output_size=(4, 5), kernel_size=(2, 3), padding=1)
    assert repr(u) == "Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=1)"
    assert repr(f) == "Fold(output_size=(4, 5), kernel_size=(2, 3), dilation=1, padding=1, stride=1)"
    x = minitorch.randn(3, 4, 5, device=device)
    cols = u(x)
    assert tuple(cols.shape) == (18, 5 * 5)
    assert tuple(f(cols).shape) == (3, 4, 5)
    assert list(u.state_dict()) == [] and list(f.state_dict()) == []


def test_fold_unfold_errors():
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(minitorch.randn(1, 7, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match=r"give 2 \* 2 = 4 sliding blocks, but input.size\(2\)=5"):
        F.fold(minitorch.randn(1, 8, 5), (3, 3), 2)
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.unfold(minitorch.randn(1, 1, 2, 2), 3)
    with pytest.raises(ValueError, match="unfold: expected a 3-D .* or 4-D"):
        F.unfold(minitorch.randn(2, 2), 1)
    with pytest.raises(ValueError, match="stride must be positive"):
        F.unfold(minitorch.randn(1, 1, 4, 4), 2, stride=0)
