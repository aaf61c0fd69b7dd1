"""3-D convolution and pooling: ``F.conv3d`` / ``nn.Conv3d`` / ``nn.LazyConv3d`` and
``F.max_pool3d`` / ``F.avg_pool3d`` / ``nn.MaxPool3d`` / ``nn.AvgPool3d``, all written from
2-D ops (nn/functional.py, nn/_pooling_functional.py).

Values against direct NumPy loops written here (every output window visited one by one),
float64 gradchecks, PyTorch's reprs, state_dict keys and errors. Tiny shapes: the whole
file runs in a few seconds."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

from conftest import DEVICES


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(arr, device="cpu", requires_grad=False):
    return minitorch.tensor(arr, device=device, requires_grad=requires_grad)


def npy(x):
    return x.detach().cpu().numpy()


def triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3


# ---------------------------------------------------------------- NumPy references ----

def np_conv3d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Each output element as the sum over its window, one window at a time."""
    s, d = triple(stride), triple(dilation)
    k = w.shape[2:]
    if padding == "same":  # total d*(k-1), the odd one at the end
        pads = [(di * (ki - 1) // 2, di * (ki - 1) - di * (ki - 1) // 2) for di, ki in zip(d, k)]
    else:
        pads = [(p, p) for p in triple(0 if padding == "valid" else padding)]
    xp = np.pad(x, [(0, 0), (0, 0), *pads])
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    og = o // groups
    out_size = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(3)]
    out = np.zeros((n, o, *out_size))
    for od, oh, ow in itertools.product(*map(range, out_size)):
        win = xp[:, :, od * s[0]:od * s[0] + d[0] * (k[0] - 1) + 1:d[0],
                 oh * s[1]:oh * s[1] + d[1] * (k[1] - 1) + 1:d[1],
                 ow * s[2]:ow * s[2] + d[2] * (k[2] - 1) + 1:d[2]]
        for g in range(groups):
            out[:, g * og:(g + 1) * og, od, oh, ow] = np.einsum(
                "ncxyz,ocxyz->no", win[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og])
    if b is not None:
        out += b.reshape(1, -1, 1, 1, 1)
    return out


def out_len(L, k, s, p, d, ceil_mode):
    out = (L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return out - 1 if ceil_mode and (out - 1) * s >= L + p else out


def np_max_pool3d(x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(values, flat indices d*H*W + h*W + w): the first maximum in (d, h, w) scan order."""
    k = triple(kernel)
    s, p, d = triple(stride if stride is not None else kernel), triple(padding), triple(dilation)
    n, c, *size = x.shape
    out_size = [out_len(size[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3)]
    vals = np.zeros((n, c, *out_size))
    idx = np.zeros((n, c, *out_size), dtype=np.int64)
    for b, ch, od, oh, ow in itertools.product(range(n), range(c), *map(range, out_size)):
        best, where = -np.inf, -1
        for a, e, f in itertools.product(*map(range, k)):
            z, y, q = od * s[0] - p[0] + a * d[0], oh * s[1] - p[1] + e * d[1], ow * s[2] - p[2] + f * d[2]
            if 0 <= z < size[0] and 0 <= y < size[1] and 0 <= q < size[2] and x[b, ch, z, y, q] > best:
                best, where = x[b, ch, z, y, q], (z * size[1] + y) * size[2] + q
        vals[b, ch, od, oh, ow], idx[b, ch, od, oh, ow] = best, where
    return vals, idx


def np_avg_pool3d(x, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                  divisor_override=None):
    k = triple(kernel)
    s, p = triple(stride if stride is not None else kernel), triple(padding)
    n, c, *size = x.shape
    out_size = [out_len(size[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(3)]
    out = np.zeros((n, c, *out_size))
    for o in itertools.product(*map(range, out_size)):
        start = [o[i] * s[i] - p[i] for i in range(3)]
        end = [min(start[i] + k[i], size[i] + p[i]) for i in range(3)]
        lo = [max(v, 0) for v in start]
        hi = [min(end[i], size[i]) for i in range(3)]
        total = x[:, :, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]].sum(axis=(2, 3, 4))
        if divisor_override is not None:
            div = divisor_override
        elif count_include_pad:
            div = np.prod([end[i] - start[i] for i in range(3)])
        else:
            div = np.prod([hi[i] - lo[i] for i in range(3)])
        out[(slice(None), slice(None), *o)] = total / div
    return out


# ---------------------------------------------------------------- conv3d ----

X = rand(2, 4, 5, 6, 5)

CONV_CASES = [
    # (weight shape, kwargs)
    ((6, 2, 3, 2, 3), dict(stride=(2, 1, 2), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2)),
    ((3, 4, 2, 3, 3), dict(padding="same", dilation=(1, 2, 1))),
    ((2, 4, 2, 2, 4), dict(padding="same")),
    ((3, 4, 3, 3, 3), dict(padding="valid", stride=2)),
    ((4, 1, 3, 3, 3), dict(padding=1, stride=(1, 2, 3), groups=4)),
]


@pytest.mark.parametrize(("wshape", "kwargs"), CONV_CASES, ids=[str(k) for _, k in CONV_CASES])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_conv3d_values(wshape, kwargs, bias):
    w = rand(*wshape, seed=1)
    b = rand(wshape[0], seed=2) if bias else None
    got = F.conv3d(t(X), t(w), t(b) if bias else None, **kwargs)
    want = np_conv3d(X, w, b, **kwargs)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(npy(got), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_conv3d_values_on_devices(device):
    x, w, b = rand(1, 2, 4, 5, 4).astype(np.float32), rand(4, 1, 2, 3, 2, seed=1).astype(np.float32), rand(4)
    got = F.conv3d(t(x, device), t(w, device), t(b.astype(np.float32), device), stride=(1, 2, 1), padding=1, groups=2)
    assert got.device.type == device
    np.testing.assert_allclose(npy(got), np_conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2), rtol=1e-4,
                               atol=1e-5)


def test_conv3d_unbatched_and_contiguous():
    w, b = rand(3, 4, 2, 3, 2, seed=1), rand(3, seed=2)
    got = F.conv3d(t(X[0]), t(w), t(b), stride=2)
    assert tuple(got.shape) == (3, 2, 2, 2)
    np.testing.assert_allclose(npy(got), np_conv3d(X[:1], w, b, stride=2)[0], rtol=1e-10, atol=1e-10)
    assert F.conv3d(t(X), t(w)).is_contiguous()


def test_conv3d_gradcheck():
    x = t(rand(1, 2, 3, 4, 3), requires_grad=True)
    w = t(rand(2, 1, 2, 2, 2, seed=1), requires_grad=True)
    b = t(rand(2, seed=2), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2),
                                              groups=2), (x, w, b))


def test_conv3d_errors():
    x, w = t(X), t(rand(2, 4, 3, 3, 3))
    with pytest.raises(ValueError, match=r"conv3d: input of shape \(2, 4, 5, 6, 5\) has 4 channels, but weight of "
                                          r"shape \(2, 3, 3, 3, 3\) with groups=1 expects 3"):
        F.conv3d(x, t(rand(2, 3, 3, 3, 3)))
    with pytest.raises(ValueError, match=r"conv3d: expected a 5-D weight"):
        F.conv3d(x, t(rand(2, 4, 3, 3)))
    with pytest.raises(ValueError, match=r"conv3d: kernel of size \(6, 3, 3\) .* larger than the padded input of "
                                          r"size \(5, 6, 5\)"):
        F.conv3d(x, t(rand(2, 4, 6, 3, 3)))
    with pytest.raises(ValueError, match=r"conv3d: bias of shape \(3,\) does not match 2 output channels"):
        F.conv3d(x, w, t(rand(3)))
    with pytest.raises(ValueError, match=r"conv3d: weight of shape \(3, 2, 3, 3, 3\) has 3 output channels, which "
                                          r"is not divisible by groups=2"):
        F.conv3d(x, t(rand(3, 2, 3, 3, 3)), groups=2)
    with pytest.raises(ValueError, match=r"conv3d: expected a 4-D \(unbatched\) or 5-D \(batched\) input"):
        F.conv3d(t(rand(4, 5, 6)), w)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        F.conv3d(x, w, padding="same", stride=2)
    with pytest.raises(ValueError, match="stride must be an int or a 3-tuple"):
        F.conv3d(x, w, stride=(1, 2))


# ---------------------------------------------------------------- nn.Conv3d, nn.LazyConv3d ----

def test_conv3d_module_repr_state_dict_and_forward():
    conv = nn.Conv3d(4, 6, (3, 2, 1), stride=2, groups=2, bias=False)
    assert repr(conv) == "Conv3d(4, 6, kernel_size=(3, 2, 1), stride=(2, 2, 2), groups=2, bias=False)"
    assert list(conv.state_dict()) == ["weight"] and tuple(conv.weight.shape) == (6, 2, 3, 2, 1)
    conv = nn.Conv3d(4, 3, 3, padding=1, padding_mode="reflect")
    assert repr(conv) == ("Conv3d(4, 3, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), "
                          "padding_mode=reflect)")
    assert list(conv.state_dict()) == ["weight", "bias"] and tuple(conv.bias.shape) == (3,)
    bound = 1 / np.sqrt(4 * 27)  # PyTorch's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(npy(conv.weight)).max() <= bound and np.abs(npy(conv.bias)).max() <= bound
    x = t(X.astype(np.float32))
    w, b = npy(conv.weight).astype(np.float64), npy(conv.bias).astype(np.float64)
    padded = np.pad(X, [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)], mode="reflect")  # NumPy's reflect is PyTorch's
    np.testing.assert_allclose(npy(conv(x)), np_conv3d(padded, w, b), rtol=1e-4, atol=1e-5)
    for mode, np_mode in (("replicate", "edge"), ("circular", "wrap")):
        conv.padding_mode = mode
        np.testing.assert_allclose(npy(conv(x)), np_conv3d(np.pad(X, [(0, 0)] * 2 + [(1, 1)] * 3, mode=np_mode), w, b),
                                   rtol=1e-4, atol=1e-5)
    same = nn.Conv3d(4, 2, (2, 3, 2), padding="same", bias=False)
    assert repr(same) == "Conv3d(4, 2, kernel_size=(2, 3, 2), stride=(1, 1, 1), padding=same, bias=False)"
    assert tuple(same(x).shape) == (2, 2, 5, 6, 5)


def test_lazy_conv3d():
    conv = nn.LazyConv3d(4, 3, padding=1, groups=2)
    assert repr(conv) == "LazyConv3d(0, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), groups=2)"
    x = t(X.astype(np.float32))
    out = conv(x)
    assert type(conv) is nn.Conv3d and tuple(conv.weight.shape) == (4, 2, 3, 3, 3) and conv.in_channels == 4
    np.testing.assert_array_equal(npy(out), npy(F.conv3d(x, conv.weight, conv.bias, padding=1, groups=2)))
    unbatched = nn.LazyConv3d(2, 2, bias=False)
    assert tuple(unbatched(t(rand(3, 3, 3, 3).astype(np.float32))).shape) == (2, 2, 2, 2)
    assert unbatched.in_channels == 3 and list(unbatched.state_dict()) == ["weight"]
    with pytest.raises(ValueError, match=r"LazyConv3d: expected 4D \(unbatched\) or 5D \(batched\) input"):
        nn.LazyConv3d(2, 3)(minitorch.ones(1, 2, 2, 2, 2, 2))


# ---------------------------------------------------------------- max_pool3d ----

POOL_CASES = [
    dict(kernel=2),
    dict(kernel=(3, 2, 2), stride=(2, 1, 2), padding=(1, 1, 0)),
    dict(kernel=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel=2, stride=2, padding=1, dilation=(2, 1, 2), ceil_mode=True),
    dict(kernel=(2, 3, 2), stride=(3, 2, 3), dilation=(2, 1, 1), ceil_mode=True),
]


@pytest.mark.parametrize("kwargs", POOL_CASES, ids=str)
def test_max_pool3d_values_and_indices(kwargs):
    kw = dict(kwargs)
    kernel = kw.pop("kernel")
    values, indices = F.max_pool3d(t(X), kernel, return_indices=True, **kw)
    want_v, want_i = np_max_pool3d(X, kernel, **kw)
    np.testing.assert_array_equal(npy(values), want_v)
    assert indices.dtype == minitorch.int64
    np.testing.assert_array_equal(npy(indices), want_i)
    np.testing.assert_array_equal(npy(F.max_pool3d(t(X), kernel, **kw)), want_v)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool3d_on_devices(device):
    x = X.astype(np.float32)
    values, indices = F.max_pool3d(t(x, device), 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    want_v, want_i = np_max_pool3d(x, 3, stride=2, padding=1, ceil_mode=True)
    np.testing.assert_array_equal(npy(values), want_v)
    np.testing.assert_array_equal(npy(indices), want_i)


def test_max_pool3d_unbatched_ties_and_gradient():
    values, indices = F.max_pool3d(t(X[1]), 2, stride=1, return_indices=True)
    want_v, want_i = np_max_pool3d(X[1:], 2, stride=1)
    np.testing.assert_array_equal(npy(values), want_v[0])
    np.testing.assert_array_equal(npy(indices), want_i[0])
    # ties: the first maximum in (d, h, w) order, and the whole gradient goes to it
    x = t(np.ones((1, 1, 2, 2, 2)), requires_grad=True)
    out, idx = F.max_pool3d(x, 2, return_indices=True)
    out.sum().backward()
    assert idx.item() == 0 and npy(x.grad).ravel().tolist() == [1.0] + [0.0] * 7
    # overlapping windows: each element's gradient counts the windows whose maximum it is
    x = t(X[:1, :2], requires_grad=True)
    out, idx = F.max_pool3d(x, 3, stride=2, padding=1, return_indices=True)
    out.sum().backward()
    counts = np.bincount(npy(idx).reshape(2, -1)[0], minlength=5 * 6 * 5)
    np.testing.assert_array_equal(npy(x.grad)[0, 0].ravel(), counts)


def test_max_pool3d_gradcheck():
    x = t(rand(1, 2, 3, 4, 3), requires_grad=True)
    assert gradcheck(lambda x: F.max_pool3d(x, 2, stride=(1, 2, 1), padding=1, ceil_mode=True), (x,))


# ---------------------------------------------------------------- avg_pool3d ----

AVG_CASES = [
    dict(kernel=2),
    dict(kernel=3, stride=2, padding=1),
    dict(kernel=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel=(2, 3, 2), stride=(3, 2, 3), padding=(1, 1, 1), ceil_mode=True),
    dict(kernel=(2, 3, 2), stride=(3, 2, 3), padding=(1, 0, 1), ceil_mode=True, divisor_override=5),
]


@pytest.mark.parametrize("kwargs", AVG_CASES, ids=str)
def test_avg_pool3d_values(kwargs):
    kw = dict(kwargs)
    kernel = kw.pop("kernel")
    np.testing.assert_allclose(npy(F.avg_pool3d(t(X), kernel, **kw)), np_avg_pool3d(X, kernel, **kw), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_avg_pool3d_on_devices(device):
    x = X.astype(np.float32)
    got = F.avg_pool3d(t(x, device), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    np.testing.assert_allclose(npy(got), np_avg_pool3d(x, 3, 2, 1, True, False), rtol=1e-5, atol=1e-6)


def test_avg_pool3d_unbatched_and_gradcheck():
    np.testing.assert_allclose(npy(F.avg_pool3d(t(X[0]), 2, stride=1, padding=1)),
                               np_avg_pool3d(X[:1], 2, stride=1, padding=1)[0], rtol=1e-12, atol=1e-12)
    x = t(rand(1, 2, 3, 4, 3), requires_grad=True)
    assert gradcheck(lambda x: F.avg_pool3d(x, 2, stride=(1, 2, 1), padding=1, ceil_mode=True,
                                            count_include_pad=False), (x,))


# ---------------------------------------------------------------- modules and errors ----

def test_pool3d_modules():
    mp = nn.MaxPool3d(3, 2, 1)
    assert repr(mp) == "MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)"
    assert not isinstance(mp, nn.MaxPool2d) and list(mp.state_dict()) == []
    np.testing.assert_array_equal(npy(mp(t(X))), np_max_pool3d(X, 3, 2, 1)[0])
    vals, idx = nn.MaxPool3d(2, return_indices=True)(t(X))
    np.testing.assert_array_equal(npy(idx), np_max_pool3d(X, 2)[1])
    ap = nn.AvgPool3d((3, 2, 1), ceil_mode=True, count_include_pad=False, divisor_override=3)
    assert repr(ap) == "AvgPool3d(kernel_size=(3, 2, 1), stride=(3, 2, 1), padding=0)"
    np.testing.assert_allclose(npy(ap(t(X))), np_avg_pool3d(X, (3, 2, 1), ceil_mode=True, divisor_override=3),
                               rtol=1e-12)
    assert repr(nn.AvgPool3d(3, 2, 1)) == "AvgPool3d(kernel_size=3, stride=2, padding=1)"


def test_pool3d_errors():
    x = t(X)
    for pool in (F.max_pool3d, F.avg_pool3d):
        name = pool.__name__
        with pytest.raises(RuntimeError, match=f"{name}: padding should be at most half of the kernel size"):
            pool(x, 3, 2, 2)
        with pytest.raises(ValueError, match=rf"{name}: given input of shape \(2, 4, 5, 6, 5\), the output size "
                                             r"\(0, 0, 0\) is too small"):
            pool(x, 7)
        with pytest.raises(ValueError, match=rf"{name}: Expected 4D or 5D tensor"):
            pool(t(rand(4, 5, 6)), 2)
        with pytest.raises(TypeError, match=f"{name}: expected a floating point input"):
            pool(minitorch.ones(1, 1, 2, 2, 2, dtype=minitorch.int64), 2)
    with pytest.raises(RuntimeError, match="avg_pool3d: divisor must be not zero"):
        F.avg_pool3d(x, 2, divisor_override=0)
