"""``F.pad``, ``F.normalize``, ``F.cosine_similarity``, ``nn.utils.clip_grad_norm_`` /
``clip_grad_value_`` and ``nn.utils.rnn.pad_sequence``: values against NumPy on every
device, float64 gradcheck, errors, and PyTorch when installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import TORCH_SKIP_REASON, seeds
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.nn.utils import clip_grad_norm_, clip_grad_value_
from minitorch.nn.utils.rnn import pad_sequence
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, low=-3.0, high=3.0, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def np_pad(x, pad, mode="constant", value=0.0):
    """PyTorch's pad (last dim first, negative = crop) through np.pad."""
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        crop[d] = slice(max(-left, 0), x.shape[d] - max(-right, 0))
        widths[d] = (max(left, 0), max(right, 0))
    x = x[tuple(crop)]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=NP_MODES[mode])


# ---------------------------------------------------------------- pad ----

@st.composite
def pad_cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    mode = draw(st.sampled_from(list(NP_MODES)))
    k = draw(st.integers(1, len(shape)))
    pad = []
    for i in range(k):
        n = shape[len(shape) - 1 - i]
        if mode == "constant":
            lo = -(n // 2)  # crops that leave at least half of the dim
            pad += [draw(st.integers(lo, 3)), draw(st.integers(lo, 3))]
        elif mode == "reflect":
            pad += [draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))]
        elif mode == "circular":
            pad += [draw(st.integers(0, n)), draw(st.integers(0, n))]
        else:
            pad += [draw(st.integers(0, 3)), draw(st.integers(0, 3))]
    return shape, tuple(pad), mode


@settings(max_examples=20)
@given(case=pad_cases(), seed=seeds, dtype=st.sampled_from([np.float32, np.float64, np.int64]))
def test_pad_matches_numpy(device, case, seed, dtype):
    shape, pad, mode = case
    x = rand(shape, seed, -5, 5).astype(dtype)
    value = 2.5 if mode == "constant" and dtype != np.int64 else None
    out = F.pad(minitorch.tensor(x, device=device), pad, mode=mode, value=value)
    want = np_pad(x, pad, mode, 0 if value is None else value)
    assert out.device.type == device and out.dtype == minitorch.tensor(x).dtype
    np.testing.assert_array_equal(to_np(out), want)


def test_pad_examples():
    x = minitorch.tensor([[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(to_np(F.pad(x, (1, 2), value=9.0)), [[9, 1, 2, 3, 9, 9]])
    np.testing.assert_array_equal(to_np(F.pad(x, (0, 0, 1, 0))), [[0, 0, 0], [1, 2, 3]])
    np.testing.assert_array_equal(to_np(F.pad(x, (-1, 1))), [[2, 3, 0]])
    np.testing.assert_array_equal(to_np(F.pad(x, (2, 2), mode="reflect")), [[3, 2, 1, 2, 3, 2, 1]])
    np.testing.assert_array_equal(to_np(F.pad(x, (2, 1), mode="replicate")), [[1, 1, 1, 2, 3, 3]])
    np.testing.assert_array_equal(to_np(F.pad(x, (1, 2), mode="circular")), [[3, 1, 2, 3, 1, 2]])
    np.testing.assert_array_equal(to_np(F.pad(minitorch.zeros(2, 0), (1, 1), value=4.0)), np.full((2, 2), 4.0))
    np.testing.assert_array_equal(to_np(F.pad(minitorch.tensor([1, 2]), (1, 0), value=7)), [7, 1, 2])
    assert F.pad(x, (-3, 0)).shape == (1, 0)


@pytest.mark.parametrize("mode,pad", [("constant", (1, 2, 0, 1)), ("constant", (-1, 2)), ("reflect", (2, 1, 1, 1)),
                                      ("replicate", (3, 0, 1, 2)), ("circular", (1, 3))])
def test_gradcheck_pad(device, mode, pad):
    x = minitorch.tensor(rand((2, 3, 3), 1), device=device, requires_grad=True)
    assert gradcheck(lambda x: F.pad(x, pad, mode=mode), (x,))


def test_pad_gradient_adds_up_reflected_copies(device):
    x = minitorch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    F.pad(x, (2, 2), mode="reflect").sum().backward()  # [3 2 | 1 2 3 | 2 1]
    np.testing.assert_array_equal(to_np(x.grad), [2, 3, 2])


def test_pad_errors():
    x = minitorch.zeros(2, 3)
    with pytest.raises(ValueError, match="pad: padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(ValueError, match="pad: padding length too large"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="pad: reflect padding"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(ValueError, match="pad: circular padding"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(ValueError, match="pad: cropping"):
        F.pad(x, (-2, -2))
    with pytest.raises(ValueError, match="pad: mode must be one of"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="doesn't take a value"):
        F.pad(x, (1, 1), mode="replicate", value=3.0)
    with pytest.raises(TypeError, match="pad: input must be a Tensor"):
        F.pad(np.zeros(3), (1, 1))


# ---------------------------------------------------------------- normalize / cosine_similarity ----

@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalize_matches_numpy(device, p, dim):
    x = rand((3, 4, 2), 2)
    x[0, 0, :] = 0.0  # a zero vector along some dims: divided by eps, stays 0
    out = F.normalize(minitorch.tensor(x, device=device), p=p, dim=dim)
    norm = np.linalg.norm(x, ord=p, axis=dim, keepdims=True) if p != 3.0 else \
        (np.abs(x) ** 3).sum(axis=dim, keepdims=True) ** (1 / 3)
    np.testing.assert_allclose(to_np(out), x / np.maximum(norm, 1e-12), rtol=1e-12, atol=1e-15)


def test_normalize_default_is_l2_over_dim_1_and_float32(device):
    x = rand((2, 3, 4), 3, dtype=np.float32)
    out = F.normalize(minitorch.tensor(x, device=device))
    np.testing.assert_allclose(to_np(out), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert out.dtype == minitorch.float32


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf])
def test_gradcheck_normalize(device, p):
    x = minitorch.tensor(rand((3, 4), 4, 0.2, 2) * np.array([1, -1, 1, 1]), device=device, requires_grad=True)
    assert gradcheck(lambda x: F.normalize(x, p=p, dim=1), (x,))


def test_normalize_zero_vector_has_finite_gradient(device):
    x = minitorch.zeros(2, 3, dtype=minitorch.float64, device=device, requires_grad=True)
    F.normalize(x).sum().backward()
    assert np.all(np.isfinite(to_np(x.grad)))


@pytest.mark.parametrize("shapes,dim", [(((4, 3), (4, 3)), 1), (((4, 3), (1, 3)), 1), (((2, 5, 3), (5, 3)), -1),
                                        (((3, 4), (3, 4)), 0), (((6,), (6,)), 0)])
def test_cosine_similarity_matches_numpy(device, shapes, dim):
    a, b = rand(shapes[0], 5), rand(shapes[1], 6)
    out = F.cosine_similarity(minitorch.tensor(a, device=device), minitorch.tensor(b, device=device), dim=dim)
    a2, b2 = np.broadcast_arrays(a, b)
    want = (a2 * b2).sum(dim) / (np.linalg.norm(a2, axis=dim) * np.linalg.norm(b2, axis=dim))
    np.testing.assert_allclose(to_np(out), want, rtol=1e-12)


def test_cosine_similarity_zero_vector_and_gradcheck(device):
    out = F.cosine_similarity(minitorch.zeros(2, 3, device=device), minitorch.ones(2, 3, device=device))
    np.testing.assert_array_equal(to_np(out), [0.0, 0.0])
    a = minitorch.tensor(rand((3, 4), 7), device=device, requires_grad=True)
    b = minitorch.tensor(rand((3, 4), 8), device=device, requires_grad=True)
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b), (a, b))
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b, dim=0), (a, b))


def test_normalize_and_cosine_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    x, y = rand((3, 5), 9), rand((3, 5), 10)
    g = rand((3, 5), 11)
    for p in (2.0, 1.0, 3.0, math.inf):
        xm, xt = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        F.normalize(xm, p=p).backward(minitorch.tensor(g))
        torch.nn.functional.normalize(xt, p=p).backward(torch.tensor(g))
        np.testing.assert_allclose(to_np(F.normalize(xm, p=p)), torch.nn.functional.normalize(xt, p=p).detach(), rtol=1e-12)
        np.testing.assert_allclose(to_np(xm.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
    xm, ym = minitorch.tensor(x, requires_grad=True), minitorch.tensor(y, requires_grad=True)
    xt, yt = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    out, out_t = F.cosine_similarity(xm, ym), torch.nn.functional.cosine_similarity(xt, yt)
    out.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(to_np(out), out_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(xm.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(to_np(ym.grad), yt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_pad_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    x = rand((2, 3, 4, 5), 12)
    for mode, pad in [("constant", (1, 2, -1, 3)), ("reflect", (2, 3, 1, 2)), ("replicate", (3, 1, 2, 0)),
                      ("circular", (2, 1, 3, 4))]:
        xm, xt = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, out_t = F.pad(xm, pad, mode=mode), torch.nn.functional.pad(xt, pad, mode=mode)
        g = rand(tuple(out_t.shape), 13)
        out.backward(minitorch.tensor(g))
        out_t.backward(torch.tensor(g))
        np.testing.assert_array_equal(to_np(out), out_t.detach().numpy(), err_msg=mode)
        np.testing.assert_allclose(to_np(xm.grad), xt.grad.numpy(), rtol=1e-12, err_msg=mode)


# ---------------------------------------------------------------- clip_grad ----

def params_with_grads(device, grads):
    ps = []
    for g in grads:
        p = nn.Parameter(minitorch.zeros(*g.shape, dtype=minitorch.float64, device=device))
        p.grad = minitorch.tensor(g, device=device)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_numpy(device, norm_type, max_norm):
    grads = [rand((3, 4), 14), rand((5,), 15), rand((2, 1, 2), 16)]
    ps = params_with_grads(device, grads)
    ps.append(nn.Parameter(minitorch.zeros(2, device=device)))  # no gradient: ignored
    total = clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    flat = np.concatenate([g.ravel() for g in grads])
    want = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    assert total.shape == () and total.device.type == device
    np.testing.assert_allclose(total.item(), want, rtol=1e-12)
    scale = min(1.0, max_norm / (want + 1e-6))
    for p, g in zip(ps, grads):
        np.testing.assert_allclose(to_np(p.grad), g * scale, rtol=1e-12)
    assert ps[-1].grad is None


def test_clip_grad_norm_single_tensor_no_grads_and_nonfinite(device):
    p = params_with_grads(device, [np.array([3.0, 4.0])])[0]
    assert clip_grad_norm_(p, 1.0).item() == 5.0  # a single tensor works too
    np.testing.assert_allclose(to_np(p.grad), [0.6, 0.8], rtol=1e-6)
    assert clip_grad_norm_([nn.Parameter(minitorch.zeros(2))], 1.0).item() == 0.0
    bad = params_with_grads(device, [np.array([1.0, np.inf])])
    with pytest.raises(RuntimeError, match="clip_grad_norm_: the total norm of order 2.0.*non-finite"):
        clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)
    assert math.isinf(clip_grad_norm_(bad, 1.0).item())  # without the flag: scaled anyway, like PyTorch


def test_clip_grad_value(device):
    ps = params_with_grads(device, [np.array([-3.0, 0.2, 5.0])])
    clip_grad_value_(ps, 1.0)
    np.testing.assert_array_equal(to_np(ps[0].grad), [-1.0, 0.2, 1.0])


def test_clip_grad_norm_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    grads = [rand((3, 4), 17), rand((6,), 18)]
    for norm_type in (2.0, 1.0, math.inf):
        ps = params_with_grads("cpu", grads)
        tps = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        for tp, g in zip(tps, grads):
            tp.grad = torch.tensor(g)
        total = clip_grad_norm_(ps, 0.7, norm_type)
        total_t = torch.nn.utils.clip_grad_norm_(tps, 0.7, norm_type)
        np.testing.assert_allclose(total.item(), total_t.item(), rtol=1e-12)
        for p, tp in zip(ps, tps):
            np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- pad_sequence ----

def np_pad_sequence(arrs, batch_first, value, side="right"):
    longest = max(a.shape[0] for a in arrs)
    out = np.full((len(arrs), longest) + arrs[0].shape[1:], value, dtype=arrs[0].dtype)
    for i, a in enumerate(arrs):
        if side == "right":
            out[i, :len(a)] = a
        else:
            out[i, longest - len(a):] = a
    return out if batch_first else np.swapaxes(out, 0, 1)


@settings(max_examples=20)
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=4), trailing=st.lists(st.integers(1, 3), max_size=2),
       batch_first=st.booleans(), side=st.sampled_from(["right", "left"]), seed=seeds,
       dtype=st.sampled_from([np.float32, np.float64, np.int64]))
def test_pad_sequence_matches_numpy(device, lengths, trailing, batch_first, side, seed, dtype):
    arrs = [rand((n,) + tuple(trailing), seed + i, -5, 5).astype(dtype) for i, n in enumerate(lengths)]
    out = pad_sequence([minitorch.tensor(a, device=device) for a in arrs], batch_first=batch_first,
                       padding_value=-7, padding_side=side)
    assert out.device.type == device and out.dtype == minitorch.tensor(arrs[0]).dtype
    np.testing.assert_array_equal(to_np(out), np_pad_sequence(arrs, batch_first, -7, side))


def test_pad_sequence_default_layout_and_gradient(device):
    a = minitorch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    b = minitorch.tensor([4.0], device=device, requires_grad=True)
    out = pad_sequence([a, b])  # (L, B): time first by default, like PyTorch
    np.testing.assert_array_equal(to_np(out), [[1, 4], [2, 0], [3, 0]])
    (out * minitorch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device)).sum().backward()
    np.testing.assert_array_equal(to_np(a.grad), [1, 3, 5])
    np.testing.assert_array_equal(to_np(b.grad), [2])
    assert pad_sequence(minitorch.ones(2, 3, device=device)).shape == (3, 2)  # a tensor: its rows are the sequences
    x = minitorch.tensor(rand((2, 3), 20), device=device, requires_grad=True)
    y = minitorch.tensor(rand((4, 3), 21), device=device, requires_grad=True)
    assert gradcheck(lambda x, y: pad_sequence([x, y], batch_first=True, padding_value=0.5), (x, y))


def test_pad_sequence_errors():
    with pytest.raises(ValueError, match="pad_sequence: received an empty list"):
        pad_sequence([])
    with pytest.raises(ValueError, match="pad_sequence: all sequences must have the same trailing dims"):
        pad_sequence([minitorch.zeros(2, 3), minitorch.zeros(2, 4)])
    with pytest.raises(TypeError, match="pad_sequence: expected a list of Tensors"):
        pad_sequence([minitorch.zeros(2), [1.0, 2.0]])
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([minitorch.zeros(2)], padding_side="middle")


def test_pad_sequence_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    arrs = [rand((n, 2), 30 + n) for n in (3, 1, 4)]
    for batch_first in (False, True):
        ours = pad_sequence([minitorch.tensor(a) for a in arrs], batch_first=batch_first, padding_value=1.5)
        theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in arrs], batch_first=batch_first,
                                                 padding_value=1.5)
        np.testing.assert_array_equal(to_np(ours), theirs.numpy())
