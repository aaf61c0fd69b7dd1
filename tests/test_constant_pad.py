"""Constant padding as one pass: ``minitorch.constant_pad_nd`` and ``F.pad(mode="constant")``
(ops/shape.cpp) are one remap kernel for every padded dim (each output element reads its
input element, or is the pad value), and the backward is a view of the gradient.

Checked against NumPy's ``np.pad`` on every device: random shapes with size-0 and size-1
dims, negative amounts (crops), non-contiguous inputs, every dtype; float64 gradcheck and
double backward; the errors; and, in the emulated build, the structure (one launch forward,
none backward).
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import assert_close, gradcheck
from conftest import CUDA_SKIP_REASON

F = minitorch.nn.functional
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def np_pad(a, pad, value):
    """NumPy's reference: crop the negative amounts, then np.pad with the positive ones."""
    for i in range(len(pad) // 2):
        d, left, right = a.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = a.shape[d]
        a = np.take(a, np.arange(max(-left, 0), n - max(-right, 0)), axis=d)
        widths = [(0, 0)] * a.ndim
        widths[d] = (max(left, 0), max(right, 0))
        a = np.pad(a, widths, constant_values=value)
    return a


def random_case(rng):
    ndim = int(rng.integers(1, 5))
    shape = tuple(int(s) for s in rng.integers(0, 5, ndim))
    k = int(rng.integers(1, ndim + 1))
    pad = []
    for i in range(k):
        n = shape[ndim - 1 - i]
        left = int(rng.integers(-n, 4)) if n else int(rng.integers(0, 3))
        right = int(rng.integers(-(n + min(left, 0)), 4)) if n + min(left, 0) else int(rng.integers(0, 3))
        pad += [left, right]
    return shape, tuple(pad)


@pytest.mark.parametrize("seed", range(12))
def test_matches_numpy_on_random_shapes(device, seed):
    rng = np.random.default_rng(seed)
    shape, pad = random_case(rng)
    a = rng.standard_normal(shape)
    value = float(rng.standard_normal())
    got = F.pad(minitorch.tensor(a, device=device), pad, value=value)
    assert got.device.type == minitorch.device(device).type
    assert_close(got, np_pad(a, pad, value))
    assert_close(minitorch.constant_pad_nd(minitorch.tensor(a, device=device), pad, value), np_pad(a, pad, value))


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
def test_non_contiguous_input(device, layout):
    base = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
    x = minitorch.tensor(base, device=device)
    a, t = {"transposed": (base.transpose(2, 0, 1), x.permute(2, 0, 1)),
            "sliced": (base[1:, ::2, 1:5], x[1:, ::2, 1:5]),
            "expanded": (np.broadcast_to(base[:1], (3, 5, 6)), x[:1].expand(3, 5, 6))}[layout]
    for pad in [(1, 2), (2, 0, -1, 1), (0, 1, 1, 0, 2, 2), (-1, -2, 1, 1)]:
        assert_close(F.pad(t, pad, value=-3.0), np_pad(a, pad, -3.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(device, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 7).astype(np.float64)
    x = minitorch.tensor(a, device=device).to(getattr(minitorch, dtype))
    value = True if dtype == "bool" else 5
    got = F.pad(x, (1, 2, 0, 1), value=value)
    assert got.dtype == x.dtype and tuple(got.shape) == (2, 4, 7)
    ref = np_pad(x.cpu().numpy() if dtype != "bfloat16" else x.float().cpu().numpy(), (1, 2, 0, 1), value)
    assert_close(got if dtype != "bfloat16" else got.float(), ref)


def test_pad_value_follows_the_dtype(device):
    """The value is converted as a fill converts it: truncated for an int tensor, rounded
    for bfloat16; the default value is 0."""
    x = minitorch.zeros(2, dtype=minitorch.int64, device=device)
    assert F.pad(x, (1, 1), value=2.7).tolist() == [2, 0, 0, 2]
    h = minitorch.zeros(1, dtype=minitorch.bfloat16, device=device)
    assert F.pad(h, (0, 1), value=1.0 / 3).float().tolist() == [0.0, minitorch.full((), 1.0 / 3,
                                                                                    dtype=minitorch.bfloat16).item()]
    assert F.pad(minitorch.ones(1, device=device), (1, 0)).tolist() == [0.0, 1.0]


def test_zero_and_crop_only_pads_give_new_tensors(device):
    x = minitorch.arange(6.0, device=device).reshape(2, 3)
    for pad in [(0, 0), (-1, 0), (0, 0, -1, 0)]:
        y = F.pad(x, pad)
        y.add_(100)  # a copy, as PyTorch's constant_pad_nd: x is untouched
        assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_gradcheck(device):
    rng = np.random.default_rng(1)
    x = minitorch.tensor(rng.standard_normal((2, 3, 4)), dtype=minitorch.float64, device=device,
                         requires_grad=True)
    for pad in [(1, 2), (1, -1, 2, 0), (-1, -1, -1, 0, 1, 1), (0, 0)]:
        assert gradcheck(lambda t: F.pad(t, pad, value=0.5), (x,))
    y = F.pad(x, (1, 1, 1, 1))
    assert y.grad_fn.name() == "ConstantPadNdBackward0"


def test_double_backward(device):
    x = minitorch.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=minitorch.float64, device=device,
                         requires_grad=True)
    (g,) = minitorch.autograd.grad((F.pad(x, (1, -1, 2, 1), value=3.0) ** 3).sum(), x, create_graph=True)
    (h,) = minitorch.autograd.grad(g.sum(), x)
    a = x.detach().cpu().numpy()
    keep = np.ones_like(a)
    keep[:, -1] = 0  # cropped away: no gradient
    assert_close(g, 3 * a ** 2 * keep)
    assert_close(h, 6 * a * keep)


def test_errors(device):
    x = minitorch.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="constant_pad_nd: padding length must be divisible by 2"):
        minitorch.constant_pad_nd(x, (1,))
    with pytest.raises(ValueError, match="padding length too large"):
        minitorch.constant_pad_nd(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"cropping \(-2, -2\) from dim 1 of size 3"):
        minitorch.constant_pad_nd(x, (-2, -2))
    with pytest.raises(ValueError, match="cropping"):
        minitorch.constant_pad_nd(x, (-4, 5))  # a crop larger than the dim, even with padding after it
    with pytest.raises(TypeError, match="constant_pad_nd: value must be a number"):
        minitorch.constant_pad_nd(x, (1, 1), "a")
    with pytest.raises(TypeError, match="constant_pad_nd: input must be a Tensor"):
        minitorch.constant_pad_nd([1.0], (1, 1))


# ---- structure, counted by the profiler (the same on a GPU and in the emulator) -------

def launches(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.split("<")[0] for e in prof.events() for k in e.kernels]


needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


@needs_cuda
def test_one_launch_forward_and_a_view_backward():
    x = minitorch.randn(4, 3, 8, 8, device="cuda", requires_grad=True)
    assert launches(lambda: F.pad(x, (1, 1, 2, 2), value=1.0)) == ["remap_kernel"]  # was 2 fills + cat per dim
    assert launches(lambda: F.pad(x, (1, 1, 2, 2, 0, 1))) == ["remap_kernel"]
    y = F.pad(x, (1, 1, 2, 2))
    g = minitorch.ones_like(y)
    # the gradient is a slice of g; only AccumulateGrad's copy of that view into x.grad launches
    assert launches(lambda: y.backward(g)) == ["copy_kernel"]
