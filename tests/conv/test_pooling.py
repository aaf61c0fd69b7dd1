"""``max_pool2d`` / ``avg_pool2d`` / ``adaptive_avg_pool2d`` against direct-loop NumPy
references, float64 ``gradcheck`` for both poolings, indices, and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch
from conftest import CUDA_SKIP_REASON, make_tensor, to_numpy
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

DTYPES = [np.float32, np.float64]
TOLS = {np.dtype(np.float32): dict(rtol=1e-5, atol=1e-6), np.dtype(np.float64): dict(rtol=1e-12, atol=1e-13)}


# ------------------------------------------------------------- references ----

def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def ref_out_size(size, k, stride, pad, dil, ceil_mode=False):
    span = size + 2 * pad - dil * (k - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        # PyTorch: the last window must start inside the input or the left padding
        if (out - 1) * stride >= size + pad:
            out -= 1
        return out
    return span // stride + 1


def ref_max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(values, flat indices ih * W + iw). Padding counts as -inf, so it never wins; the first
    NaN of a window wins (PyTorch propagates NaN)."""
    (kh_, kw_) = _pair(kernel_size)
    (sh, sw) = _pair(kernel_size if stride is None else stride)
    (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
    N, C, H, W = x.shape
    OH, OW = ref_out_size(H, kh_, sh, ph, dh, ceil_mode), ref_out_size(W, kw_, sw, pw, dw, ceil_mode)
    out = np.empty((N, C, OH, OW), dtype=np.float64)
    idx = np.empty((N, C, OH, OW), dtype=np.int64)
    for n in range(N):
        for c in range(C):
            for i in range(OH):
                for j in range(OW):
                    best, best_i = -np.inf, -1
                    for a in range(kh_):
                        for b in range(kw_):
                            ih, iw = i * sh - ph + a * dh, j * sw - pw + b * dw
                            if not (0 <= ih < H and 0 <= iw < W):
                                continue
                            v = x[n, c, ih, iw]  # larger wins, ties keep the first, the first NaN stays
                            if best_i < 0 or (not np.isnan(best) and (v > best or np.isnan(v))):
                                best, best_i = x[n, c, ih, iw], ih * W + iw
                    out[n, c, i, j], idx[n, c, i, j] = best, best_i
    return out, idx


def ref_avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False):
    """count_include_pad=True: the sum over the zero-padded window divided by its area, KH * KW
    (PyTorch's rule: with ceil_mode, a last window that runs past the padded input is clipped
    to it, and divides by the clipped area)."""
    (kh_, kw_) = _pair(kernel_size)
    (sh, sw) = _pair(kernel_size if stride is None else stride)
    (ph, pw) = _pair(padding)
    N, C, H, W = x.shape
    OH, OW = ref_out_size(H, kh_, sh, ph, 1, ceil_mode), ref_out_size(W, kw_, sw, pw, 1, ceil_mode)
    out = np.empty((N, C, OH, OW))
    for n in range(N):
        for c in range(C):
            for i in range(OH):
                for j in range(OW):
                    h0, w0 = i * sh - ph, j * sw - pw
                    area = (min(h0 + kh_, H + ph) - h0) * (min(w0 + kw_, W + pw) - w0)
                    acc = 0.0
                    for a in range(kh_):
                        for b in range(kw_):
                            if 0 <= h0 + a < H and 0 <= w0 + b < W:
                                acc += float(x[n, c, h0 + a, w0 + b])
                    out[n, c, i, j] = acc / area
    return out


def test_references_on_hand_computed_examples():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    vals, idx = ref_max_pool2d(x, 2)
    np.testing.assert_array_equal(vals, [[[[5, 7], [13, 15]]]])
    np.testing.assert_array_equal(idx, [[[[5, 7], [13, 15]]]])
    np.testing.assert_array_equal(ref_avg_pool2d(x, 2), [[[[2.5, 4.5], [10.5, 12.5]]]])
    # padding 1 with a 2x2 kernel: the corner window holds one real pixel (and 3 zeros)
    np.testing.assert_array_equal(ref_avg_pool2d(x, 2, padding=1)[0, 0, 0], [0 / 4, (1 + 2) / 4, 3 / 4])
    np.testing.assert_array_equal(ref_max_pool2d(-x - 1, 2, padding=1)[0][0, 0, 0], [-1, -2, -4])
    # ceil_mode on 5x5 with a 2x2 kernel: the last row/column of windows hold 2 (or 1) pixels
    y = np.arange(25.0).reshape(1, 1, 5, 5)
    np.testing.assert_array_equal(ref_avg_pool2d(y, 2, ceil_mode=True)[0, 0, :, 2], [(4 + 9) / 2, (14 + 19) / 2, 24])
    np.testing.assert_array_equal(ref_max_pool2d(y, 2, ceil_mode=True)[0][0, 0, 2], [21, 23, 24])


# ------------------------------------------------------------- strategies ----

@st.composite
def pool_cases(draw, with_dilation: bool):
    n, c = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = draw(st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    padding = (draw(st.integers(0, k[0] // 2)), draw(st.integers(0, k[1] // 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if with_dilation else (1, 1)
    assume(h + 2 * padding[0] >= dilation[0] * (k[0] - 1) + 1)
    assume(w + 2 * padding[1] >= dilation[1] * (k[1] - 1) + 1)
    dtype = draw(st.sampled_from(DTYPES))
    # distinct values (a permutation, scaled) so the max and its index are unambiguous
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = (rng.permutation(n * c * h * w).reshape(n, c, h, w) - n * c * h * w / 2) / 7.0
    x = x.astype(dtype)
    return dict(x=x, kernel_size=k, stride=stride, padding=padding, dilation=dilation)


def _dtype(arr):
    return minitorch.float32 if arr.dtype == np.float32 else minitorch.float64


# -------------------------------------------------------------- max_pool2d ----

@settings(max_examples=80)
@given(case=pool_cases(with_dilation=True))
def test_max_pool2d_matches_reference(device, case):
    x = case["x"]
    vals, idx = ref_max_pool2d(x, case["kernel_size"], case["stride"], case["padding"], case["dilation"])
    out, got_idx = F.max_pool2d(minitorch.tensor(x, device=device), case["kernel_size"], case["stride"],
                                case["padding"], case["dilation"], return_indices=True)
    assert out.dtype == _dtype(x)
    assert got_idx.dtype == minitorch.int64
    assert tuple(out.shape) == vals.shape and tuple(got_idx.shape) == vals.shape
    np.testing.assert_array_equal(to_numpy(out), vals.astype(x.dtype))  # a max is exact
    np.testing.assert_array_equal(to_numpy(got_idx), idx)
    # the indices point at the maxima (a dilated window can lie wholly in the padding:
    # then the max is -inf, as in PyTorch, and there is no input position to point at)
    flat = x.reshape(x.shape[0], x.shape[1], -1)
    gi, go = to_numpy(got_idx).reshape(*x.shape[:2], -1), to_numpy(out).reshape(*x.shape[:2], -1)
    inside = gi >= 0
    assert (gi < x.shape[2] * x.shape[3]).all()
    np.testing.assert_array_equal(np.take_along_axis(flat, np.where(inside, gi, 0), 2)[inside], go[inside])
    assert (go[~inside] == -np.inf).all()


@settings(max_examples=25)
@given(case=pool_cases(with_dilation=True), layout=st.sampled_from(["step", "transpose"]))
def test_max_pool2d_noncontiguous_input(device, case, layout):
    x = case["x"]
    vals, _ = ref_max_pool2d(x, case["kernel_size"], case["stride"], case["padding"], case["dilation"])
    out = F.max_pool2d(make_tensor(x, layout, device), case["kernel_size"], case["stride"], case["padding"],
                       case["dilation"])
    np.testing.assert_array_equal(to_numpy(out), vals.astype(x.dtype))


def test_max_pool2d_stride_defaults_to_kernel_size(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    t = minitorch.tensor(x, device=device)
    for k in [2, 3, (2, 3)]:
        expected, _ = ref_max_pool2d(x, k, k)
        np.testing.assert_array_equal(to_numpy(F.max_pool2d(t, k)), expected)
        np.testing.assert_array_equal(to_numpy(F.max_pool2d(t, k, None)), expected)


def test_max_pool2d_padding_never_wins_for_negative_inputs(device):
    x = -np.arange(1.0, 17.0).reshape(1, 1, 4, 4)  # all negative: a zero pad would win
    out = F.max_pool2d(minitorch.tensor(x, device=device), 3, stride=1, padding=1)
    expected, _ = ref_max_pool2d(x, 3, 1, 1)
    assert (to_numpy(out) < 0).all()
    np.testing.assert_array_equal(to_numpy(out), expected)


def test_max_pool2d_unbatched_matches_batch_one(device):
    x = np.random.default_rng(1).permutation(3 * 6 * 5).reshape(3, 6, 5).astype(np.float32)
    out, idx = F.max_pool2d(minitorch.tensor(x, device=device), (3, 2), (2, 1), (1, 1), return_indices=True)
    out1, idx1 = F.max_pool2d(minitorch.tensor(x[None], device=device), (3, 2), (2, 1), (1, 1),
                              return_indices=True)
    vals, ref_idx = ref_max_pool2d(x[None], (3, 2), (2, 1), (1, 1))
    assert tuple(out.shape) == vals.shape[1:] and tuple(idx.shape) == vals.shape[1:]
    np.testing.assert_array_equal(to_numpy(out), to_numpy(out1)[0])
    np.testing.assert_array_equal(to_numpy(out), vals[0].astype(np.float32))
    np.testing.assert_array_equal(to_numpy(idx), ref_idx[0])
    np.testing.assert_array_equal(to_numpy(idx1), ref_idx)


def test_max_pool2d_return_indices_are_flat_positions_in_the_plane(device):
    x = np.array([[[[1.0, 9.0, 2.0, 0.0],
                    [3.0, 4.0, 8.0, 7.0],
                    [6.0, 5.0, 0.5, 0.25],
                    [0.0, 2.0, 1.0, 3.0]]]])
    out, idx = F.max_pool2d(minitorch.tensor(x, device=device), 2, return_indices=True)
    np.testing.assert_array_equal(to_numpy(out), [[[[9.0, 8.0], [6.0, 3.0]]]])
    # 9 at (0, 1) -> 1; 8 at (1, 2) -> 6; 6 at (2, 0) -> 8; 3 at (3, 3) -> 15
    np.testing.assert_array_equal(to_numpy(idx), [[[[1, 6], [8, 15]]]])
    # every (n, c) plane is indexed from 0
    x2 = np.concatenate([x, x + 100.0], axis=1)
    _, idx2 = F.max_pool2d(minitorch.tensor(x2, device=device), 2, return_indices=True)
    np.testing.assert_array_equal(to_numpy(idx2), [[[[1, 6], [8, 15]], [[1, 6], [8, 15]]]])
    # without return_indices: just the values
    assert isinstance(F.max_pool2d(minitorch.tensor(x, device=device), 2), minitorch.Tensor)


def test_max_pool2d_nan_wins_like_pytorch(device):
    x = np.array([[[[1.0, np.nan], [3.0, 2.0]]]])
    out, idx = F.max_pool2d(minitorch.tensor(x, device=device), 2, return_indices=True)
    assert np.isnan(to_numpy(out)).all()
    np.testing.assert_array_equal(to_numpy(idx), [[[[1]]]])


@pytest.mark.parametrize("H, W, k, s, p", [(5, 5, 2, 2, 0), (7, 6, 3, 2, 1), (4, 9, 2, 3, 1), (6, 6, 3, 3, 0)])
def test_max_pool2d_ceil_mode_matches_reference(device, H, W, k, s, p):
    x = np.random.default_rng(H * W).permutation(2 * H * W).reshape(1, 2, H, W).astype(np.float64)
    vals, idx = ref_max_pool2d(x, k, s, p, 1, ceil_mode=True)
    out, got_idx = F.max_pool2d(minitorch.tensor(x, device=device), k, s, p, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(to_numpy(out), vals)
    np.testing.assert_array_equal(to_numpy(got_idx), idx)


# -------------------------------------------------------------- avg_pool2d ----

@settings(max_examples=80)
@given(case=pool_cases(with_dilation=False))
def test_avg_pool2d_matches_reference(device, case):
    x = case["x"]
    expected = ref_avg_pool2d(x, case["kernel_size"], case["stride"], case["padding"])
    out = F.avg_pool2d(minitorch.tensor(x, device=device), case["kernel_size"], case["stride"], case["padding"])
    assert out.dtype == _dtype(x)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(to_numpy(out), expected, **TOLS[x.dtype])


@settings(max_examples=25)
@given(case=pool_cases(with_dilation=False), layout=st.sampled_from(["step", "transpose"]))
def test_avg_pool2d_noncontiguous_input(device, case, layout):
    x = case["x"]
    expected = ref_avg_pool2d(x, case["kernel_size"], case["stride"], case["padding"])
    out = F.avg_pool2d(make_tensor(x, layout, device), case["kernel_size"], case["stride"], case["padding"])
    np.testing.assert_allclose(to_numpy(out), expected, **TOLS[x.dtype])


@pytest.mark.parametrize("H, W, k, s, p", [(5, 5, 2, 2, 0), (7, 6, 3, 2, 1), (4, 9, 2, 3, 1), (6, 6, 3, 3, 0)])
def test_avg_pool2d_ceil_mode_matches_reference(device, H, W, k, s, p):
    # PyTorch: a window that runs past the padded input divides by its clipped area only.
    x = np.random.default_rng(H * W).standard_normal((1, 2, H, W))
    expected = ref_avg_pool2d(x, k, s, p, ceil_mode=True)
    out = F.avg_pool2d(minitorch.tensor(x, device=device), k, s, p, ceil_mode=True)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-12, atol=1e-14)


def test_avg_pool2d_count_include_pad_divides_by_kernel_area(device):
    x = np.ones((1, 1, 3, 3))
    out = F.avg_pool2d(minitorch.tensor(x, device=device), 3, stride=1, padding=1)
    # corners see 4 ones of 9, edges 6, the centre 9
    np.testing.assert_allclose(to_numpy(out)[0, 0], np.array([[4, 6, 4], [6, 9, 6], [4, 6, 4]]) / 9, rtol=1e-15)


def test_avg_pool2d_unbatched_matches_batch_one(device):
    x = np.random.default_rng(2).standard_normal((2, 5, 7))
    out = F.avg_pool2d(minitorch.tensor(x, device=device), (2, 3), padding=(1, 1))
    out1 = F.avg_pool2d(minitorch.tensor(x[None], device=device), (2, 3), padding=(1, 1))
    expected = ref_avg_pool2d(x[None], (2, 3), None, (1, 1))
    assert tuple(out.shape) == expected.shape[1:]
    np.testing.assert_array_equal(to_numpy(out), to_numpy(out1)[0])
    np.testing.assert_allclose(to_numpy(out), expected[0], rtol=1e-12)


def test_avg_pool2d_count_include_pad_false_is_refused_loudly():
    with pytest.raises(NotImplementedError, match="count_include_pad"):
        F.avg_pool2d(minitorch.randn(1, 1, 4, 4), 2, padding=1, count_include_pad=False)


# ----------------------------------------------------- adaptive_avg_pool2d ----

@pytest.mark.parametrize("shape, size", [((2, 3, 6, 4), 1), ((2, 3, 6, 4), (2, 2)), ((1, 2, 6, 6), (3, 1)),
                                         ((3, 5, 5), 1)])
def test_adaptive_avg_pool2d_divisible_sizes(device, shape, size):
    x = np.random.default_rng(3).standard_normal(shape)
    oh, ow = _pair(size)
    out = F.adaptive_avg_pool2d(minitorch.tensor(x, device=device), size)
    H, W = shape[-2:]
    expected = x.reshape(*shape[:-2], oh, H // oh, ow, W // ow).mean(axis=(-3, -1))
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-12, atol=1e-14)


def test_adaptive_avg_pool2d_non_divisible_uses_pytorchs_windows():
    # 5 -> 2: windows [0, 3) and [2, 5) overlap at 2 (floor(i n / m) .. ceil((i + 1) n / m))
    x = np.arange(25.0).reshape(1, 1, 5, 5)
    got = F.adaptive_avg_pool2d(minitorch.tensor(x), 2).numpy()
    want = np.array([[x[0, 0, r:r + 3, c:c + 3].mean() for c in (0, 2)] for r in (0, 2)])
    np.testing.assert_allclose(got[0, 0], want)


# --------------------------------------------------------------- gradients ----

def _distinct(shape, seed):
    n = int(np.prod(shape))
    # distinct values at least 0.1 apart, so a 1e-6 nudge never changes which one is the max
    return (np.random.default_rng(seed).permutation(n).reshape(shape) - n / 2) / 10.0


@pytest.mark.parametrize("shape, k, s, p, d", [
    ((2, 2, 4, 4), 2, None, 0, 1),
    ((1, 2, 5, 6), (3, 2), (2, 1), (1, 1), 1),
    ((1, 1, 7, 7), 3, 1, 1, 2),  # overlapping windows: a pixel can get gradient from several
    ((2, 1, 5, 4), (2, 3), (3, 2), (1, 0), (2, 1)),
])
def test_max_pool2d_gradcheck(shape, k, s, p, d):
    x = minitorch.tensor(_distinct(shape, sum(shape)), requires_grad=True)
    assert gradcheck(lambda x: F.max_pool2d(x, k, s, p, d), (x,))


def test_max_pool2d_gradient_routes_to_the_argmax():
    xa = _distinct((1, 1, 5, 5), 9)
    x = minitorch.tensor(xa, requires_grad=True)
    out, idx = F.max_pool2d(x, 3, 1, return_indices=True)
    g = np.random.default_rng(9).standard_normal(tuple(out.shape))
    out.backward(minitorch.tensor(g))
    expected = np.zeros(25)
    np.add.at(expected, to_numpy(idx).reshape(-1), g.reshape(-1))
    np.testing.assert_allclose(to_numpy(x.grad), expected.reshape(1, 1, 5, 5), rtol=1e-12)


@pytest.mark.parametrize("shape, k, s, p", [
    ((2, 2, 4, 4), 2, None, 0),
    ((1, 2, 5, 6), (3, 2), (2, 1), (1, 1)),
    ((1, 1, 6, 5), 3, 1, 1),
    ((2, 1, 5, 4), (2, 3), (3, 2), (1, 0)),
])
def test_avg_pool2d_gradcheck(shape, k, s, p):
    x = minitorch.tensor(np.random.default_rng(sum(shape)).standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda x: F.avg_pool2d(x, k, s, p), (x,))


def test_adaptive_avg_pool2d_gradcheck():
    x = minitorch.tensor(np.random.default_rng(4).standard_normal((2, 2, 4, 6)), requires_grad=True)
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (x,))
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, 1), (x,))


def test_pool_gradcheck_unbatched_and_noncontiguous():
    base = minitorch.tensor(_distinct((5, 4, 2), 5), requires_grad=True)  # (W, H, C)
    assert gradcheck(lambda b: F.max_pool2d(b.permute(2, 1, 0), 2, 1), (base,))
    assert gradcheck(lambda b: F.avg_pool2d(b.permute(2, 1, 0), 2, 1, 1), (base,))


def test_pooling_under_no_grad_records_nothing():
    xa = _distinct((1, 2, 4, 4), 6)
    x = minitorch.tensor(xa, requires_grad=True)
    with minitorch.no_grad():
        m, idx = F.max_pool2d(x, 2, return_indices=True)
        a = F.avg_pool2d(x, 2)
        g = F.adaptive_avg_pool2d(x, 1)
    for t in (m, a, g):
        assert t.grad_fn is None and not t.requires_grad
    np.testing.assert_array_equal(to_numpy(m), ref_max_pool2d(xa, 2)[0])
    np.testing.assert_array_equal(to_numpy(idx), ref_max_pool2d(xa, 2)[1])
    np.testing.assert_allclose(to_numpy(a), ref_avg_pool2d(xa, 2), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(g)[..., 0, 0], xa.mean(axis=(2, 3)), rtol=1e-12, atol=1e-14)
    assert F.max_pool2d(x, 2).grad_fn is not None
    assert F.avg_pool2d(x, 2).grad_fn is not None


# ------------------------------------------------------------------ errors ----

@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pool_kernel_larger_than_padded_input(pool):
    with pytest.raises(ValueError, match=r"larger than the padded input.*\(1, 1, 2, 2\)"):
        pool(minitorch.randn(1, 1, 2, 2), 3)
    with pytest.raises(ValueError, match="larger"):
        pool(minitorch.randn(1, 1, 5, 2), (2, 3))
    with pytest.raises(ValueError, match="larger"):
        pool(minitorch.randn(2, 2, 2), 3)  # unbatched


def test_max_pool2d_dilated_kernel_larger_than_input():
    with pytest.raises(ValueError, match="larger"):
        F.max_pool2d(minitorch.randn(1, 1, 4, 4), 3, dilation=2)  # effective kernel 5


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d, F.adaptive_avg_pool2d])
@pytest.mark.parametrize("shape", [(4, 4), (4,), (1, 1, 1, 4, 4)])
def test_pool_wrong_input_rank(pool, shape):
    arg = 1 if pool is F.adaptive_avg_pool2d else 2
    with pytest.raises(ValueError, match=str(shape).replace("(", r"\(").replace(")", r"\)")):
        pool(minitorch.randn(*shape), arg)


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
@pytest.mark.parametrize("stride", [0, -1, (2, 0)])
def test_pool_non_positive_stride(pool, stride):
    with pytest.raises(ValueError, match="stride"):
        pool(minitorch.randn(1, 1, 4, 4), 2, stride)


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pool_non_positive_kernel_and_bad_padding(pool):
    with pytest.raises(ValueError, match="kernel_size"):
        pool(minitorch.randn(1, 1, 4, 4), 0)
    with pytest.raises(ValueError, match="padding"):
        pool(minitorch.randn(1, 1, 6, 6), 2, 1, 2)  # more than half the kernel
    with pytest.raises(ValueError, match="padding"):
        pool(minitorch.randn(1, 1, 6, 6), 2, 1, -1)


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pool_int64_input_is_a_type_error(pool):
    with pytest.raises(TypeError, match="int64"):
        pool(minitorch.tensor(np.ones((1, 1, 4, 4), dtype=np.int64)), 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, s, p", [(2, 2, 0), (3, 2, 0), (3, 1, 1)])  # the 2x2 path, windows inside, padded
def test_max_pool2d_every_path_keeps_ties_first_and_nan(device, dtype, k, s, p):
    """Ties keep the first position and the first NaN wins, on each kernel path (the 2x2 one
    selects without branches)."""
    rng = np.random.default_rng(k * 10 + s)
    x = rng.integers(0, 3, size=(2, 3, 8, 10)).astype(dtype)  # many ties
    x[0, 0, 1, 1] = x[1, 2, 4, 5] = x[1, 2, 4, 4] = np.nan  # a NaN after a NaN in one window
    vals, idx = ref_max_pool2d(x, k, s, p, 1)
    out, got_idx = F.max_pool2d(minitorch.tensor(x, device=device), k, s, p, return_indices=True)
    np.testing.assert_array_equal(to_numpy(out), vals)
    np.testing.assert_array_equal(to_numpy(got_idx), idx)


def _ref_pool_backward(x, g, kind, k, s, p, ceil_mode):
    """The input gradient of sum(pool(x) * g): max sends g to each window's argmax, avg spreads
    g / area over the window's pixels inside the input."""
    N, C, H, W = x.shape
    gx = np.zeros((N, C, H * W))
    if kind == "max":
        _, idx = ref_max_pool2d(x, k, s, p, 1, ceil_mode)
        for n in range(N):
            for c in range(C):
                np.add.at(gx[n, c], idx[n, c].ravel(), g[n, c].ravel())
        return gx.reshape(x.shape)
    gx = gx.reshape(x.shape)
    OH, OW = g.shape[2:]
    for i in range(OH):
        for j in range(OW):
            h0, w0 = i * s - p, j * s - p
            area = (min(h0 + k, H + p) - h0) * (min(w0 + k, W + p) - w0)
            gx[:, :, max(h0, 0):min(h0 + k, H), max(w0, 0):min(w0 + k, W)] += g[:, :, i:i + 1, j:j + 1] / area
    return gx


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k, s, p, ceil_mode", [(2, 2, 0, False), (2, 2, 1, True), (3, 2, 1, False), (3, 1, 1, False),
                                                (3, 2, 0, True), (2, 1, 0, False)])
def test_pool_fast_paths_values_and_gradients(device, kind, k, s, p, ceil_mode):
    """The specialised 2- and 3-wide window loops (interior without bounds checks, checked
    borders) on planes wide enough to have an interior, forward and backward, float64."""
    rng = np.random.default_rng(k * 100 + s * 10 + p)
    x = rng.permutation(2 * 3 * 11 * 13).reshape(2, 3, 11, 13) / 7.0 - 30.0
    xt = minitorch.tensor(x, device=device, requires_grad=True)
    pool = F.max_pool2d if kind == "max" else F.avg_pool2d
    out = pool(xt, k, s, p, ceil_mode=ceil_mode)
    want = (ref_max_pool2d(x, k, s, p, 1, ceil_mode)[0] if kind == "max"
            else ref_avg_pool2d(x, k, s, p, ceil_mode))
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(want.shape)
    out.backward(minitorch.tensor(g, device=device))
    np.testing.assert_allclose(to_numpy(xt.grad), _ref_pool_backward(x, g, kind, k, s, p, ceil_mode), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_gathered_pooling_and_fold_backward_match_the_cpu_on_random_windows():
    """The CUDA pooling backward and col2im (F.fold) gather, for each input pixel, the windows
    that span it (elementwise_math.h's for_each_window_over); the CPU scatters each window.
    The two must agree on random kernels, strides, paddings, dilations and ceil_mode, and on
    a global pool (one window as big as the map: one visit per pixel)."""
    import minitorch.nn.functional as F
    rng = np.random.default_rng(61)
    cases = [dict(kernel_size=(16, 12), stride=(16, 12), padding=0, dilation=1, ceil_mode=False, H=16, W=12)]
    for _ in range(24):
        k = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        cases.append(dict(kernel_size=k, stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                          padding=(int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1))),
                          dilation=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                          ceil_mode=bool(rng.integers(0, 2)), H=int(rng.integers(5, 12)), W=int(rng.integers(5, 12))))
    for c in cases:
        H, W = c.pop("H"), c.pop("W")
        x_np = rng.uniform(-2, 2, (2, 3, H, W))
        for pool in ("max", "avg"):
            kw = dict(c) if pool == "max" else {k: v for k, v in c.items() if k != "dilation"}
            if pool == "avg" and any(p * 2 > k for p, k in zip(np.broadcast_to(kw["padding"], 2), kw["kernel_size"])):
                continue
            fn = F.max_pool2d if pool == "max" else F.avg_pool2d
            grads = []
            for device in ("cpu", "cuda"):
                x = minitorch.tensor(x_np, device=device, requires_grad=True)
                y = fn(x, **kw)
                y.backward(minitorch.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), device=device))
                grads.append(x.grad.cpu().numpy())
            np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12, err_msg=f"{pool} {kw} {H}x{W}")
        k, d, s, p = (tuple(int(v) for v in np.broadcast_to(c[n], 2))
                      for n in ("kernel_size", "dilation", "stride", "padding"))
        blocks = [(n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, ss, pp in zip((H, W), k, d, s, p)]
        if min(blocks) <= 0:
            continue
        cols = rng.uniform(-1, 1, (2, 3 * k[0] * k[1], blocks[0] * blocks[1]))
        out = [F.fold(minitorch.tensor(cols, device=dev), (H, W), k, dilation=d, padding=p, stride=s).cpu().numpy()
               for dev in ("cpu", "cuda")]
        np.testing.assert_allclose(out[1], out[0], rtol=1e-12, atol=1e-12, err_msg=f"fold {c} {H}x{W}")


@pytest.mark.parametrize("shape, k, s, p, d", [
    ((2, 3, 9, 7), 3, 2, 1, 1),            # a ResNet stem's pool
    ((1, 2, 11, 10), (3, 2), (2, 3), (1, 1), (2, 3)),  # dilated: taps skip rows and columns
    ((1, 1, 6, 13), (2, 4), 1, (1, 2), (3, 1)),
    ((3, 1, 5, 5), 5, 5, 0, 1),            # one window per plane
])
def test_pool_gradients_on_the_device_equal_the_cpus(device, shape, k, s, p, d):
    """The device's backward kernels gather each input pixel's gradient over the windows that
    cover it (dilation and stride decide which taps land on it); the CPU's scatters per window."""
    xa = _distinct(shape, 7)
    ga = np.random.default_rng(8).standard_normal(F.max_pool2d(minitorch.tensor(xa), k, s, p, d).shape)
    for pool in (lambda x: F.max_pool2d(x, k, s, p, d), lambda x: F.avg_pool2d(x, k, s, p if d == 1 else 0)):
        grads = []
        for dev in ("cpu", device):
            x = minitorch.tensor(xa, device=dev, requires_grad=True)
            out = pool(x)
            out.backward(minitorch.tensor(ga[tuple(slice(0, n) for n in out.shape)], device=dev))
            grads.append(x.grad.cpu().numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)
