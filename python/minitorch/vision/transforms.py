"""``minitorch.vision.transforms``: torchvision's classic image transforms.

Each transform takes a PIL image (when Pillow is installed), a NumPy array of shape
(H, W, C) or (H, W) (uint8 or float), or a minitorch tensor (..., C, H, W), and returns
the same kind; ``ToTensor`` turns an image or array into a float32 (C, H, W) tensor in
[0, 1] and ``Normalize`` works on tensors, as in torchvision. Random choices are drawn
from minitorch's generator (``minitorch.manual_seed`` makes them repeatable).

``Resize`` is bilinear (or nearest) with half-pixel centres and no antialiasing, so its
values differ slightly from torchvision's antialiased PIL resize when shrinking.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _C

__all__ = ["CenterCrop", "Compose", "InterpolationMode", "Lambda", "Normalize", "Pad", "RandomCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "Resize", "ToTensor"]


def _pil_image_class():
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image.Image


def _is_pil(img) -> bool:
    cls = _pil_image_class()
    return cls is not None and isinstance(img, cls)


class _Image:
    """An image as a NumPy array with its spatial axes known, and how to give it back in
    the kind it came in (PIL image, NumPy array or tensor)."""

    def __init__(self, img, op: str):
        if _is_pil(img):
            self.kind, self.mode = "pil", img.mode
            self.array, self.h_axis = np.asarray(img), 0
        elif isinstance(img, np.ndarray):
            if img.ndim not in (2, 3):
                raise TypeError(f"{op}: expected a NumPy image of shape (H, W) or (H, W, C), got shape {img.shape}")
            self.kind, self.array, self.h_axis = "numpy", img, 0
        elif isinstance(img, _C.Tensor):
            if img.dim() < 2:
                raise TypeError(f"{op}: expected a tensor image of shape (..., H, W), got shape {tuple(img.shape)}")
            self.kind, self.device = "tensor", img.device
            self.array, self.h_axis = np.asarray(img.detach().cpu().numpy()), img.dim() - 2
        else:
            raise TypeError(f"{op}: img should be a PIL Image, a NumPy array or a Tensor, got {type(img).__name__}")

    @property
    def size(self):
        """(H, W)."""
        return self.array.shape[self.h_axis], self.array.shape[self.h_axis + 1]

    def back(self, array):
        if self.kind == "pil":
            from PIL import Image

            return Image.fromarray(np.ascontiguousarray(array))  # the mode follows from dtype and channels
        if self.kind == "numpy":
            return np.ascontiguousarray(array)
        return _C.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def crop(self, top: int, left: int, height: int, width: int):
        index = [slice(None)] * self.array.ndim
        index[self.h_axis] = slice(top, top + height)
        index[self.h_axis + 1] = slice(left, left + width)
        return self.array[tuple(index)]

    def pad(self, left: int, top: int, right: int, bottom: int, fill=0, mode: str = "constant"):
        widths = [(0, 0)] * self.array.ndim
        widths[self.h_axis], widths[self.h_axis + 1] = (top, bottom), (left, right)
        np_mode = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}.get(mode)
        if np_mode is None:
            raise ValueError(f"Padding mode should be either constant, edge, reflect or symmetric, got {mode!r}")
        if np_mode == "constant":
            return np.pad(self.array, widths, mode="constant", constant_values=fill)
        return np.pad(self.array, widths, mode=np_mode)


def _size_pair(size, op: str):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{op}: please provide only two dimensions (h, w) for size, got {size!r}")


def _padding4(padding, op: str):
    """torchvision's padding: an int (all sides), (left/right, top/bottom) or (left, top, right, bottom)."""
    if isinstance(padding, numbers.Number):
        p = int(padding)
        return p, p, p, p
    if isinstance(padding, (list, tuple)) and len(padding) in (1, 2, 4):
        if len(padding) == 1:
            return (int(padding[0]),) * 4
        if len(padding) == 2:
            return int(padding[0]), int(padding[1]), int(padding[0]), int(padding[1])
        return tuple(int(p) for p in padding)
    raise ValueError(f"{op}: padding must be an int or a 1, 2 or 4 element tuple, got {padding!r}")


def _randint(high: int) -> int:
    """A draw in [0, high) from minitorch's generator."""
    from .. import randint

    return int(randint(0, high, (1,)).item())


class Compose:
    """Applies the transforms in turn."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        return self.__class__.__name__ + "(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class ToTensor:
    """A PIL image or a NumPy (H, W, C) / (H, W) array as a (C, H, W) tensor: uint8 values
    scaled to float32 in [0, 1], other dtypes kept. A tensor passes through unchanged
    (minitorch's MNIST already gives (1, 28, 28) float tensors)."""

    def __call__(self, pic):
        if isinstance(pic, _C.Tensor):
            return pic
        if _is_pil(pic):
            a = np.asarray(pic)
            if pic.mode == "1":
                a = a.astype(np.uint8) * 255
        elif isinstance(pic, np.ndarray):
            if pic.ndim not in (2, 3):
                raise ValueError(f"ToTensor: pic should be 2 or 3 dimensional, got {pic.ndim} dimensions")
            a = pic
        else:
            raise TypeError(f"ToTensor: pic should be a PIL Image or ndarray, got {type(pic).__name__}")
        if a.ndim == 2:
            a = a[:, :, None]
        a = np.ascontiguousarray(a.transpose(2, 0, 1))
        if a.dtype == np.uint8:
            a = a.astype(np.float32) / np.float32(255)
        elif a.dtype == np.bool_:
            a = a.astype(np.float32)
        return _C.from_numpy(np.ascontiguousarray(a))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class Normalize:
    """``(tensor - mean) / std`` per channel of a (..., C, H, W) float tensor."""

    def __init__(self, mean, std, inplace: bool = False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        if not isinstance(tensor, _C.Tensor):
            raise TypeError(f"Normalize: input should be a Tensor (apply ToTensor first), got {type(tensor).__name__}")
        if not tensor.dtype.is_floating_point:
            raise TypeError(f"Normalize: input tensor should be a float tensor, got {tensor.dtype}")
        if tensor.dim() < 3:
            raise ValueError(f"Normalize: expected a tensor image of size (..., C, H, W), got {tuple(tensor.shape)}")
        mean = np.asarray(self.mean, dtype=np.float64).reshape(-1, 1, 1)
        std = np.asarray(self.std, dtype=np.float64).reshape(-1, 1, 1)
        if (std == 0).any():
            raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
        m = _C.from_numpy(mean).to(tensor.device, tensor.dtype)
        s = _C.from_numpy(std).to(tensor.device, tensor.dtype)
        if self.inplace:
            return tensor.sub_(m).div_(s)
        return (tensor - m) / s

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Pad:
    """Pads the borders: ``padding`` an int, (left/right, top/bottom) or (left, top, right,
    bottom); ``padding_mode`` constant (with ``fill``), edge, reflect or symmetric."""

    def __init__(self, padding, fill=0, padding_mode: str = "constant"):
        self.padding = _padding4(padding, "Pad")
        self.fill, self.padding_mode = fill, padding_mode

    def __call__(self, img):
        im = _Image(img, "Pad")
        return im.back(im.pad(*self.padding, fill=self.fill, mode=self.padding_mode))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class RandomCrop:
    """A crop of ``size`` at a random place, after optional ``padding`` (the CIFAR recipe:
    ``RandomCrop(32, padding=4)``); ``pad_if_needed`` pads an image smaller than ``size``."""

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0, padding_mode: str = "constant"):
        self.size = _size_pair(size, "RandomCrop")
        self.padding = None if padding is None else _padding4(padding, "RandomCrop")
        self.pad_if_needed, self.fill, self.padding_mode = pad_if_needed, fill, padding_mode

    def __call__(self, img):
        im = _Image(img, "RandomCrop")
        if self.padding is not None:
            im = _Image(im.back(im.pad(*self.padding, fill=self.fill, mode=self.padding_mode)), "RandomCrop")
        th, tw = self.size
        h, w = im.size
        if self.pad_if_needed and (h < th or w < tw):
            dw, dh = max(tw - w, 0), max(th - h, 0)
            im = _Image(im.back(im.pad(dw, dh, dw, dh, fill=self.fill, mode=self.padding_mode)), "RandomCrop")
            h, w = im.size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        top = _randint(h - th + 1)
        left = _randint(w - tw + 1)
        return im.back(im.crop(top, left, th, tw))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirrors the image left-right with probability ``p``."""

    axis_from_h = 1

    def __init__(self, p: float = 0.5):
        self.p = p

    def __call__(self, img):
        from .. import rand

        if float(rand(1).item()) < self.p:
            im = _Image(img, type(self).__name__)
            return im.back(np.flip(im.array, axis=im.h_axis + self.axis_from_h))
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirrors the image top-bottom with probability ``p``."""

    axis_from_h = 0


class CenterCrop:
    """The central ``size`` crop (zero-padded first where the image is smaller)."""

    def __init__(self, size):
        self.size = _size_pair(size, "CenterCrop")

    def __call__(self, img):
        im = _Image(img, "CenterCrop")
        th, tw = self.size
        h, w = im.size
        if th > h or tw > w:
            left, top = (tw - w) // 2 if tw > w else 0, (th - h) // 2 if th > h else 0
            right, bottom = (tw - w + 1) // 2 if tw > w else 0, (th - h + 1) // 2 if th > h else 0
            im = _Image(im.back(im.pad(left, top, right, bottom)), "CenterCrop")
            h, w = im.size
        top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
        return im.back(im.crop(top, left, th, tw))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class InterpolationMode:
    NEAREST = "nearest"
    BILINEAR = "bilinear"


def _resize_axis(a, axis: int, new: int, mode: str):
    """``a`` resampled to ``new`` samples along ``axis`` (half-pixel centres)."""
    old = a.shape[axis]
    if new == old:
        return a
    centres = (np.arange(new) + 0.5) * (old / new) - 0.5
    if mode == InterpolationMode.NEAREST:
        idx = np.minimum(np.floor((np.arange(new)) * (old / new)).astype(np.int64), old - 1)
        return np.take(a, idx, axis=axis)
    centres = np.clip(centres, 0, old - 1)
    lo = np.floor(centres).astype(np.int64)
    hi = np.minimum(lo + 1, old - 1)
    frac = (centres - lo).reshape([-1 if d == axis else 1 for d in range(a.ndim)])
    a = a.astype(np.float64)
    return np.take(a, lo, axis=axis) * (1 - frac) + np.take(a, hi, axis=axis) * frac


class Resize:
    """Resizes to ``size``: (h, w), or an int for the shorter side (the aspect ratio kept,
    the longer side capped at ``max_size``). Bilinear by default, or nearest."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if not isinstance(size, (numbers.Number, list, tuple)) or (isinstance(size, (list, tuple)) and
                                                                   len(size) not in (1, 2)):
            raise TypeError(f"Resize: size should be an int or a sequence of one or two ints, got {size!r}")
        mode = getattr(interpolation, "value", interpolation)
        if mode not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
            raise ValueError(f"Resize: interpolation must be 'bilinear' or 'nearest' in minitorch, got {mode!r}")
        self.size, self.interpolation, self.max_size, self.antialias = size, mode, max_size, antialias

    def _target(self, h: int, w: int):
        if isinstance(self.size, (list, tuple)) and len(self.size) == 2:
            return int(self.size[0]), int(self.size[1])
        s = int(self.size if isinstance(self.size, numbers.Number) else self.size[0])
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = s, int(s * long / short)
        if self.max_size is not None and new_long > self.max_size:
            new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)

    def __call__(self, img):
        im = _Image(img, "Resize")
        h, w = im.size
        nh, nw = self._target(h, w)
        out = _resize_axis(im.array, im.h_axis, nh, self.interpolation)
        out = _resize_axis(out, im.h_axis + 1, nw, self.interpolation)
        if np.issubdtype(im.array.dtype, np.integer):
            info = np.iinfo(im.array.dtype)
            out = np.clip(np.round(out), info.min, info.max)
        return im.back(out.astype(im.array.dtype))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation})"
