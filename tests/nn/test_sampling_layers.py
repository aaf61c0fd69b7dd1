"""Upsample/UpsamplingNearest2d/UpsamplingBilinear2d, the 1-D, adaptive max and unpooling
layers, PixelShuffle/PixelUnshuffle, grid_sample/affine_grid: reprs and defaults as in
PyTorch, values on every device, float64 gradcheck through the modules, and the errors of
wrong input ranks and sizes. (The functions' values on every dtype and layout are in the
OpInfo battery, tests/opinfo/op_db.py.)"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, device="cpu", requires_grad=False):
    arr = np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape)
    return minitorch.tensor(arr, device=device, requires_grad=requires_grad)


# ---------------------------------------------------------------- Upsample ----

def test_upsample_reprs_and_defaults():
    up = nn.Upsample(scale_factor=2)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert (up.size, up.mode, up.align_corners, up.recompute_scale_factor) == (None, "nearest", None, None)
    assert repr(nn.Upsample(size=(4, 5), mode="bilinear")) == "Upsample(size=(4, 5), mode='bilinear')"
    assert nn.Upsample(scale_factor=(2, 3)).scale_factor == (2.0, 3.0)
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    bil = nn.UpsamplingBilinear2d(size=3)
    assert repr(bil) == "UpsamplingBilinear2d(size=3, mode='bilinear')" and bil.align_corners is True
    assert list(up.state_dict().keys()) == [] and list(up.parameters()) == []


def test_upsample_nearest_doubles_pixels(device):
    x = minitorch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], device=device)
    got = to_np(nn.Upsample(scale_factor=2)(x))
    np.testing.assert_array_equal(got[0, 0], np.array([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4.0]]))
    np.testing.assert_array_equal(to_np(nn.UpsamplingNearest2d(size=(4, 4))(x)), got)


def test_upsampling_bilinear_aligns_corners(device):
    x = minitorch.tensor([[[[0.0, 3.0], [6.0, 9.0]]]], device=device)
    got = to_np(nn.UpsamplingBilinear2d(scale_factor=2)(x))[0, 0]
    np.testing.assert_allclose(got[0], [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(got[:, 0], [0.0, 2.0, 4.0, 6.0])
    # align_corners=False (the Upsample default for bilinear): pixel centres line up
    got = to_np(nn.Upsample(scale_factor=2, mode="bilinear")(x))[0, 0]
    np.testing.assert_allclose(got[0], [0.0, 0.75, 2.25, 3.0])


def test_upsample_linear_recompute_scale_factor(device):
    x = rand((1, 1, 5), device=device)
    # output size floor(5 * 1.7) = 8; the step is 1/1.7 unless recomputed as 5/8
    a = to_np(F.interpolate(x, scale_factor=1.7, mode="linear"))
    b = to_np(F.interpolate(x, scale_factor=1.7, mode="linear", recompute_scale_factor=True))
    c = to_np(F.interpolate(x, size=8, mode="linear"))
    assert a.shape == b.shape == (1, 1, 8)
    np.testing.assert_allclose(b, c)
    assert not np.allclose(a, c)


@pytest.mark.parametrize("mode,shape", [("bilinear", (1, 2, 3, 4)), ("bicubic", (2, 1, 3, 3)),
                                        ("nearest", (1, 2, 3, 2)), ("trilinear", (1, 1, 2, 2, 3)),
                                        ("area", (1, 2, 5, 4))])
def test_upsample_gradcheck(mode, shape, device):
    size = tuple(s + 2 if mode != "area" else s - 2 for s in shape[2:])
    kw = {} if mode in ("nearest", "area") else dict(align_corners=mode == "bicubic")
    layer = nn.Upsample(size=size, mode=mode, **kw)
    assert gradcheck(layer, (rand(shape, 1, device, True),))


def test_interpolate_unbatched_and_empty_batch(device):
    x = rand((0, 2, 3), device=device)
    assert tuple(F.interpolate(x, size=5).shape) == (0, 2, 5)


def test_interpolate_errors():
    x = rand((1, 2, 3, 4))
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match=r"interpolate: Input and output must have the same number of spatial "
                                         r"dimensions, but got input with spatial dimensions of \[3, 4\]"):
        F.interpolate(x, size=(2, 3, 4))
    with pytest.raises(ValueError, match="Input and scale_factor must have the same number"):
        F.interpolate(x, scale_factor=(2.0,))
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(rand((1, 2, 3)), scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got 2D\)"):
        F.interpolate(rand((2, 3)), scale_factor=2)
    with pytest.raises(NotImplementedError, match="interpolate: mode must be one of"):
        F.interpolate(x, scale_factor=2, mode="cubic")
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful with an explicit size"):
        F.interpolate(x, size=5, recompute_scale_factor=True)
    with pytest.raises(ValueError, match="Anti-alias option is only supported for bilinear and bicubic"):
        F.interpolate(x, size=5, antialias=True)
    with pytest.raises(ValueError, match="output sizes should be greater than 0"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(TypeError, match="interpolate: expected a floating-point input"):
        F.interpolate(minitorch.ones(1, 1, 3, dtype=minitorch.int64), size=5)
    with pytest.raises(ValueError, match="Input and output must have the same number of spatial dimensions"):
        nn.Upsample(size=(4, 4))(rand((1, 2, 3)))


def test_deprecated_upsample_functions_warn():
    x = rand((1, 1, 2, 2))
    with pytest.warns(UserWarning, match="upsample_bilinear is deprecated"):
        y = F.upsample_bilinear(x, scale_factor=2)
    np.testing.assert_allclose(to_np(y), to_np(F.interpolate(x, scale_factor=2, mode="bilinear",
                                                                 align_corners=True)))
    with pytest.warns(UserWarning, match="upsample is deprecated"):
        F.upsample(x, size=3)


# ----------------------------------------------------------------- pooling ----

def test_pooling_reprs():
    assert repr(nn.AdaptiveAvgPool1d(3)) == "AdaptiveAvgPool1d(output_size=3)"
    assert repr(nn.AdaptiveMaxPool2d((2, None))) == "AdaptiveMaxPool2d(output_size=(2, None))"
    assert repr(nn.AdaptiveMaxPool1d(4, return_indices=True)) == "AdaptiveMaxPool1d(output_size=4)"
    assert repr(nn.AdaptiveAvgPool3d((1, 2, 3))) == "AdaptiveAvgPool3d(output_size=(1, 2, 3))"
    assert repr(nn.AdaptiveMaxPool3d(2)) == "AdaptiveMaxPool3d(output_size=2)"
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.MaxUnpool1d(3, stride=2)) == "MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(0,))"
    assert repr(nn.MaxPool1d(3)) == "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool1d(3, 2)) == "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))"


def test_adaptive_avg_pool2d_any_size(device):
    # 5 -> 3 windows: [0, 2), [1, 4), [3, 5) (they overlap)
    x = minitorch.tensor(np.arange(5.0).reshape(1, 1, 1, 5), device=device)
    np.testing.assert_allclose(to_np(F.adaptive_avg_pool2d(x, (1, 3)))[0, 0, 0], [0.5, 2.0, 3.5])
    assert tuple(nn.AdaptiveAvgPool2d((None, 2))(rand((2, 3, 4, 5), device=device)).shape) == (2, 3, 4, 2)
    assert tuple(nn.AdaptiveAvgPool1d(1)(rand((3, 7), device=device)).shape) == (3, 1)
    assert tuple(nn.AdaptiveAvgPool3d((1, None, 2))(rand((2, 3, 4, 5), device=device)).shape) == (2, 1, 4, 2)
    vals, idx = nn.AdaptiveMaxPool3d(2, return_indices=True)(rand((1, 2, 3, 4, 5), device=device))
    assert tuple(vals.shape) == tuple(idx.shape) == (1, 2, 2, 2, 2)


def test_max_pool_unpool_round_trip(device):
    """SegNet's decoder: unpooling puts each maximum back where it came from."""
    x = rand((2, 3, 4, 6), 3, device)
    pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
    out, idx = pool(x)
    back = to_np(unpool(out, idx))
    xn = to_np(x)
    keep = back != 0
    assert keep.sum() == out.numel()
    np.testing.assert_array_equal(back[keep], xn[keep])
    # output_size picks between the sizes that pool to the same shape (5 here, not the default 4)
    out, idx = pool(rand((1, 1, 5, 5), 4, device))
    assert tuple(unpool(out, idx, output_size=(1, 1, 5, 5)).shape) == (1, 1, 5, 5)


def test_max_pool1d_unpool1d_and_adaptive_indices(device):
    x = rand((2, 3, 9), 5, device)
    out, idx = nn.MaxPool1d(3, return_indices=True)(x)
    back = nn.MaxUnpool1d(3)(out, idx)
    assert tuple(back.shape) == (2, 3, 9)
    np.testing.assert_allclose(to_np(back).max(-1), to_np(x).max(-1))
    vals, idx = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(rand((2, 2, 5, 7), 6, device))
    assert idx.dtype == minitorch.int64 and tuple(idx.shape) == (2, 2, 2, 3)
    assert tuple(F.max_unpool2d(vals, idx, (3, 3), output_size=(5, 7)).shape) == (2, 2, 5, 7)


@pytest.mark.parametrize("layer,shape", [(lambda: nn.AdaptiveMaxPool2d((2, 3)), (1, 2, 5, 4)),
                                         (lambda: nn.AdaptiveMaxPool1d(3), (2, 7)),
                                         (lambda: nn.AdaptiveAvgPool1d(4), (1, 2, 7)),
                                         (lambda: nn.AvgPool1d(3, 2, 1), (1, 2, 7))])
def test_pooling_gradcheck(layer, shape, device):
    assert gradcheck(layer(), (rand(shape, 7, device, True),))


def test_max_unpool_gradcheck(device):
    x = rand((1, 2, 4, 4), 8, device)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    leaf = out.detach().requires_grad_()
    assert gradcheck(lambda v: F.max_unpool2d(v, idx, 2), (leaf,))


def test_pooling_errors():
    x = rand((1, 2, 4, 4))
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    with pytest.raises(ValueError, match=r"max_unpool2d: Expected shape of indices to be same as that of the input"):
        F.max_unpool2d(out, idx[:, :1], 2)
    with pytest.raises(ValueError, match=r'max_unpool2d: invalid output_size "\(9, 4\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(out, idx, 2, output_size=(9, 4))
    with pytest.raises(ValueError, match="output_size should be a sequence containing 2 or 4 elements"):
        F.max_unpool2d(out, idx, 2, output_size=(4,))
    with pytest.raises(RuntimeError, match="max_unpool2d: Found an invalid max index: 99"):
        F.max_unpool2d(out, idx * 0 + 99, 2)
    with pytest.raises(TypeError, match="expected indices of dtype int64"):
        F.max_unpool2d(out, out, 2)
    with pytest.raises(ValueError, match=r"adaptive_max_pool2d: Expected 3D or 4D tensor"):
        F.adaptive_max_pool2d(rand((4, 4)), 2)
    with pytest.raises(ValueError, match=r"adaptive_avg_pool1d: Expected 2D or 3D tensor"):
        nn.AdaptiveAvgPool1d(2)(x)
    with pytest.raises(ValueError, match="non-zero size for non-batch dimensions"):
        F.adaptive_avg_pool2d(rand((1, 2, 0, 3)), 2)
    with pytest.raises(ValueError, match="max_pool1d: expected a 2-D"):
        F.max_pool1d(x, 2)


# ------------------------------------------------------------ pixel shuffle ----

def test_pixel_shuffle_layout_and_round_trip(device):
    x = minitorch.tensor(np.arange(16.0).reshape(1, 4, 2, 2), device=device)
    y = nn.PixelShuffle(2)(x)
    # channel c*r*r + i*r + j goes to pixel (h*r + i, w*r + j)
    np.testing.assert_array_equal(to_np(y)[0, 0, :2, :2], [[0.0, 4.0], [8.0, 12.0]])
    np.testing.assert_array_equal(to_np(nn.PixelUnshuffle(2)(y)), to_np(x))
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    assert gradcheck(nn.PixelShuffle(2), (rand((1, 8, 2, 3), 1, device, True),))


def test_pixel_shuffle_errors():
    with pytest.raises(RuntimeError, match=r"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                                           r"the square of upscale_factor, but input.size\(-3\)=3 is not divisible by 4"):
        F.pixel_shuffle(rand((1, 3, 2, 2)), 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects input to have at least 3 dimensions"):
        F.pixel_shuffle(rand((4, 2)), 2)
    with pytest.raises(RuntimeError, match=r"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                                           r"input.size\(-2\)=3 is not divisible by 2"):
        F.pixel_unshuffle(rand((1, 1, 3, 4)), 2)
    with pytest.raises(RuntimeError, match="pixel_unshuffle expects a positive downscale_factor, but got 0"):
        F.pixel_unshuffle(rand((1, 1, 2, 2)), 0)


# ------------------------------------------------------ grid_sample, affine ----

@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_affine_grid_reproduces_the_input(align_corners, device):
    x = rand((2, 3, 4, 5), 2, device)
    theta = minitorch.tensor(np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (2, 1, 1)), device=device)
    grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align_corners)
    assert tuple(grid.shape) == (2, 4, 5, 2)
    for mode in ("bilinear", "nearest"):
        out = F.grid_sample(x, grid, mode=mode, align_corners=align_corners)
        np.testing.assert_allclose(to_np(out), to_np(x), atol=1e-12)


def test_grid_sample_padding_modes(device):
    x = minitorch.tensor([[[[1.0, 2.0, 3.0]]]], device=device)
    # x = -1.5 and 1.8 are pixels -0.5 and 2.8 (align_corners: -1 and 1 are the end pixels)
    grid = minitorch.tensor([[[[-1.5, 0.0], [1.8, 0.0]]]], device=device)
    got = {p: to_np(F.grid_sample(x, grid, padding_mode=p, align_corners=True)).ravel()
           for p in ("zeros", "border", "reflection")}
    np.testing.assert_allclose(got["zeros"], [0.5, 0.6], rtol=1e-6)  # half of pixel 0; 0.2 of pixel 2
    np.testing.assert_allclose(got["border"], [1.0, 3.0])
    np.testing.assert_allclose(got["reflection"], [1.5, 2.2], rtol=1e-6)  # mirrored to pixels 0.5 and 1.2


def test_spatial_transformer_gradcheck(device):
    """affine_grid + grid_sample, the spatial transformer: gradients reach theta."""
    x = rand((1, 2, 3, 4), 3, device)
    theta = minitorch.tensor([[[0.9, 0.1, 0.05], [-0.2, 0.8, 0.1]]], device=device, dtype=minitorch.float64,
                             requires_grad=True)

    def stn(t):
        return F.grid_sample(x, F.affine_grid(t, (1, 2, 3, 3), align_corners=False), align_corners=False,
                             padding_mode="border")
    assert gradcheck(stn, (theta,))


def test_grid_sample_and_affine_grid_errors():
    x = rand((1, 2, 3, 4))
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'linear'"):
        F.grid_sample(x, rand((1, 2, 2, 2)), mode="linear", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"):
        F.grid_sample(x, rand((1, 2, 2, 2)), padding_mode="edge", align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        F.grid_sample(x, rand((1, 2, 2, 3)), align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(x, rand((2, 2, 2, 2)), align_corners=False)
    with pytest.raises(RuntimeError, match="expected 4D or 5D input and grid with same number of dimensions"):
        F.grid_sample(x, rand((1, 2, 2)), align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, rand((1, 2, 2, 2)))
    with pytest.raises(ValueError, match=r"Expected a batch of 2D affine matrices of shape Nx2x3 for size"):
        F.affine_grid(rand((1, 3, 3)), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(rand((1, 2, 3)), (1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(rand((1, 2, 3)), (1, 1, 0, 2), align_corners=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.affine_grid(rand((1, 2, 3)), (1, 1, 2, 2), align_corners=False)


@pytest.mark.parametrize("shape, out", [((2, 3, 6, 8), (3, 2)), ((1, 2, 4, 4), (1, 1)), ((2, 1, 5, 3), (5, 3))])
def test_adaptive_max_pool2d_of_equal_windows_is_max_pool2d(shape, out, device):
    """Output sizes that divide the input's: equal windows side by side, max_pool2d's kernel
    (one launch on CUDA): values, flat indices (the first maximum of each window) and the
    gradient against NumPy, and gradcheck."""
    x = rand(shape, 9, device, True)
    vals, idx = F.adaptive_max_pool2d(x, out, return_indices=True)
    xn = to_np(x)
    kh, kw = shape[2] // out[0], shape[3] // out[1]
    win = xn.reshape(shape[0], shape[1], out[0], kh, out[1], kw).transpose(0, 1, 2, 4, 3, 5)
    win = win.reshape(shape[0], shape[1], out[0], out[1], kh * kw)
    np.testing.assert_array_equal(to_np(vals), win.max(-1))
    arg = win.argmax(-1)
    oh, ow = np.meshgrid(np.arange(out[0]), np.arange(out[1]), indexing="ij")
    np.testing.assert_array_equal(to_np(idx), (oh * kh + arg // kw) * shape[3] + ow * kw + arg % kw)
    vals.sum().backward()
    want = np.zeros(xn.shape).reshape(shape[0], shape[1], -1)
    np.put_along_axis(want, to_np(idx).reshape(shape[0], shape[1], -1), 1.0, -1)
    np.testing.assert_array_equal(to_np(x.grad), want.reshape(xn.shape))
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, out), (rand(shape, 10, device, True),))
    if device == "cuda":
        from minitorch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            F.adaptive_max_pool2d(x.detach(), out)
        assert sum(len(e.kernels) for e in prof.events()) == 1
