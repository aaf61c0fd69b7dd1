"""``minitorch.vision.transforms`` against NumPy: ToTensor's layout and scaling, Normalize,
RandomCrop with padding (a window of the padded image, repeatable under manual_seed),
flips, Resize (shorter side, bilinear with half-pixel centres), CenterCrop, on NumPy
arrays, tensors and (when Pillow is installed) PIL images; errors as torchvision's."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.vision import transforms as T


def img(h=5, w=6, c=3, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c)).astype(np.uint8)


def to_np(t):
    return np.array(t.numpy(), copy=True)


def test_to_tensor():
    a = img()
    t = T.ToTensor()(a)
    assert t.dtype == minitorch.float32 and tuple(t.shape) == (3, 5, 6)
    np.testing.assert_allclose(to_np(t), a.transpose(2, 0, 1) / np.float32(255), rtol=1e-6)
    gray = T.ToTensor()(a[:, :, 0])
    assert tuple(gray.shape) == (1, 5, 6)
    f = T.ToTensor()(a.astype(np.float64))
    assert f.dtype == minitorch.float64 and float(f.max()) > 1  # other dtypes are not scaled
    assert T.ToTensor()(t) is t  # a tensor (minitorch's MNIST samples) passes through
    with pytest.raises(TypeError, match="PIL Image or ndarray"):
        T.ToTensor()([1, 2, 3])


def test_normalize():
    t = T.ToTensor()(img())
    mean, std = (0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261)
    got = T.Normalize(mean, std)(t)
    want = (to_np(t) - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(to_np(got), want, rtol=1e-5, atol=1e-6)
    same = T.Normalize(mean, std, inplace=True)(t)
    assert same is t
    np.testing.assert_allclose(to_np(t), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="division by zero"):
        T.Normalize((0.5,), (0.0,))(t)
    with pytest.raises(TypeError, match="Tensor"):
        T.Normalize((0.5,), (0.5,))(img())


def windows(padded, h, w):
    return [padded[i:i + h, j:j + w] for i in range(padded.shape[0] - h + 1) for j in range(padded.shape[1] - w + 1)]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_random_crop_with_padding(mode):
    a = img(6, 6)
    padded = np.pad(a, ((2, 2), (2, 2), (0, 0)), mode=mode)
    crop = T.RandomCrop(6, padding=2, padding_mode=mode)
    minitorch.manual_seed(0)
    first = [crop(a) for _ in range(5)]
    for c in first:
        assert c.shape == (6, 6, 3) and c.dtype == np.uint8
        assert any(np.array_equal(c, win) for win in windows(padded, 6, 6))
    minitorch.manual_seed(0)
    assert all(np.array_equal(c, crop(a)) for c in first)  # repeatable under manual_seed
    assert len({c.tobytes() for c in first}) > 1  # and random
    t = crop(T.ToTensor()(a))  # a tensor: (C, H, W) in, (C, H, W) out
    assert tuple(t.shape) == (3, 6, 6)


def test_random_crop_pad_if_needed_and_errors():
    a = img(3, 4)
    assert T.RandomCrop((5, 6), pad_if_needed=True)(a).shape == (5, 6, 3)
    with pytest.raises(ValueError, match="larger than input image size"):
        T.RandomCrop(5)(a)


def test_flips():
    a = img()
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(a), a[:, ::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=0.0)(a), a)
    np.testing.assert_array_equal(T.RandomVerticalFlip(p=1.0)(a), a[::-1])
    t = T.ToTensor()(a)
    np.testing.assert_array_equal(to_np(T.RandomHorizontalFlip(1.0)(t)), to_np(t)[:, :, ::-1])


def test_resize():
    a = img(4, 8)
    assert T.Resize(2)(a).shape == (2, 4, 3)  # the shorter side to 2, aspect ratio kept
    assert T.Resize((3, 5))(a).shape == (3, 5, 3)
    assert T.Resize(4, max_size=6)(a).shape == (3, 6, 3)
    np.testing.assert_array_equal(T.Resize((4, 8))(a), a)
    x = np.array([[0.0, 1.0]], np.float32)
    got = T.Resize((1, 4))(x)
    np.testing.assert_allclose(got, [[0.0, 0.25, 0.75, 1.0]])  # half-pixel centres, edges clamped
    near = T.Resize((1, 4), interpolation=T.InterpolationMode.NEAREST)(x)
    np.testing.assert_array_equal(near, [[0.0, 0.0, 1.0, 1.0]])
    t = T.Resize((2, 4))(T.ToTensor()(a))
    assert tuple(t.shape) == (3, 2, 4) and t.dtype == minitorch.float32


def test_center_crop():
    a = img(5, 6)
    np.testing.assert_array_equal(T.CenterCrop(3)(a), a[1:4, 2:5])  # round((5-3)/2)=1, round((6-3)/2)=2
    big = T.CenterCrop((7, 6))(a)
    assert big.shape == (7, 6, 3)
    np.testing.assert_array_equal(big[1:6], a)
    assert (big[0] == 0).all() and (big[6] == 0).all()


def test_compose_cifar_recipe():
    minitorch.manual_seed(1)
    tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    out = tf(img(32, 32))
    assert tuple(out.shape) == (3, 32, 32) and out.dtype == minitorch.float32
    assert -1.0 <= float(out.min()) and float(out.max()) <= 1.0
    assert "RandomCrop" in repr(tf)


def test_pil_images():
    Image = pytest.importorskip("PIL.Image", reason="could not import Pillow (pip install pillow)")
    a = img(6, 7)
    pic = Image.fromarray(a)
    t = T.ToTensor()(pic)
    np.testing.assert_allclose(to_np(t), a.transpose(2, 0, 1) / np.float32(255), rtol=1e-6)
    flipped = T.RandomHorizontalFlip(1.0)(pic)
    assert isinstance(flipped, Image.Image)
    np.testing.assert_array_equal(np.asarray(flipped), a[:, ::-1])
    assert T.CenterCrop(4)(pic).size == (4, 4)
    assert isinstance(T.RandomCrop(6, padding=2)(pic), Image.Image)
    assert T.Resize(3)(Image.fromarray(a[:, :, 0])).size == (3, 3)  # PIL's size is (W, H)
