"""``nn.functional.conv2d`` / ``conv1d`` against direct-loop NumPy references, their
float64 gradients (``gradcheck``), and their errors.

The references below slide the window over the zero-padded input one output pixel at a
time (no im2col), so they share nothing with minitorch's im2col + GEMM implementation.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch
from conftest import make_tensor, to_numpy
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

DTYPES = [np.float32, np.float64]
# float32 results come from a GEMM with a different summation order than the reference.
TOLS = {np.dtype(np.float32): dict(rtol=1e-4, atol=1e-5), np.dtype(np.float64): dict(rtol=1e-10, atol=1e-12)}


# ------------------------------------------------------------- references ----

def ref_out_size(size: int, k: int, stride: int, pad: int, dil: int) -> int:
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def ref_conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    """Cross-correlation, computed in float64: out[n, o, i, j] =
    b[o] + sum_{c, kh, kw} xpad[n, c, i*sh + kh*dh, j*sw + kw*dw] * w[o, c, kh, kw]."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    N, C, H, W = x.shape
    O, Cw, KH, KW = w.shape
    assert C == Cw
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.zeros((N, C, H + 2 * ph, W + 2 * pw))
    xp[:, :, ph:ph + H, pw:pw + W] = x
    OH, OW = ref_out_size(H, KH, sh, ph, dh), ref_out_size(W, KW, sw, pw, dw)
    out = np.zeros((N, O, OH, OW))
    for n in range(N):
        for o in range(O):
            for i in range(OH):
                for j in range(OW):
                    acc = 0.0 if b is None else float(b[o])
                    for c in range(C):
                        for kh in range(KH):
                            for kw in range(KW):
                                acc += xp[n, c, i * sh + kh * dh, j * sw + kw * dw] * w[o, c, kh, kw]
                    out[n, o, i, j] = acc
    return out


def ref_conv1d(x, w, b=None, stride=1, padding=0, dilation=1):
    """out[n, o, i] = b[o] + sum_{c, k} xpad[n, c, i*s + k*d] * w[o, c, k]."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    N, C, L = x.shape
    O, Cw, K = w.shape
    assert C == Cw
    xp = np.zeros((N, C, L + 2 * padding))
    xp[:, :, padding:padding + L] = x
    OL = ref_out_size(L, K, stride, padding, dilation)
    out = np.zeros((N, O, OL))
    for n in range(N):
        for o in range(O):
            for i in range(OL):
                acc = 0.0 if b is None else float(b[o])
                for c in range(C):
                    for k in range(K):
                        acc += xp[n, c, i * stride + k * dilation] * w[o, c, k]
                out[n, o, i] = acc
    return out


def test_reference_conv2d_on_a_hand_computed_example():
    # The reference itself must be right: a 3x3 input, a 2x2 kernel, by hand.
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    w = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    # top-left window [[0, 1], [3, 4]] -> 0 + 2 + 9 + 16 = 27, etc.
    np.testing.assert_array_equal(ref_conv2d(x, w, np.array([0.5])), [[[[27.5, 37.5], [57.5, 67.5]]]])
    # stride 2, padding 1: windows at (-1,-1), (-1,1), (1,-1), (1,1)
    np.testing.assert_array_equal(ref_conv2d(x, w, None, (2, 2), (1, 1)), [[[[0 * 1 + 4 * 0, 1 * 3 + 2 * 4],
                                                                             [3 * 2 + 6 * 4, 4 + 10 + 21 + 32]]]])


# ------------------------------------------------------------- strategies ----

@st.composite
def conv2d_cases(draw):
    n = draw(st.integers(1, 3))
    c = draw(st.integers(1, 4))
    o = draw(st.integers(1, 4))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    # the kernel must fit in the padded input (the invalid case is tested separately)
    assume(h + 2 * padding[0] >= dilation[0] * (kh - 1) + 1)
    assume(w + 2 * padding[1] >= dilation[1] * (kw - 1) + 1)
    return dict(x=(n, c, h, w), w=(o, c, kh, kw), stride=stride, padding=padding, dilation=dilation,
                bias=draw(st.booleans()), dtype=draw(st.sampled_from(DTYPES)), seed=draw(st.integers(0, 2**32 - 1)))


@st.composite
def conv1d_cases(draw):
    n, c, o = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    length, k = draw(st.integers(1, 9)), draw(st.integers(1, 4))
    stride, padding, dilation = draw(st.integers(1, 3)), draw(st.integers(0, 2)), draw(st.integers(1, 2))
    assume(length + 2 * padding >= dilation * (k - 1) + 1)
    return dict(x=(n, c, length), w=(o, c, k), stride=stride, padding=padding, dilation=dilation,
                bias=draw(st.booleans()), dtype=draw(st.sampled_from(DTYPES)), seed=draw(st.integers(0, 2**32 - 1)))


def _arrays(case):
    rng = np.random.default_rng(case["seed"])
    dt = case["dtype"]
    x = rng.uniform(-1, 1, case["x"]).astype(dt)
    w = rng.uniform(-1, 1, case["w"]).astype(dt)
    b = rng.uniform(-1, 1, case["w"][0]).astype(dt) if case["bias"] else None
    return x, w, b


def _check(got, expected, dtype):
    assert isinstance(got, minitorch.Tensor)
    assert got.dtype == (minitorch.float32 if np.dtype(dtype) == np.float32 else minitorch.float64)
    g = to_numpy(got)
    assert g.shape == expected.shape, f"shape {g.shape} != {expected.shape}"
    np.testing.assert_allclose(g, expected, **TOLS[np.dtype(dtype)])


# ------------------------------------------------------------------ conv2d ----

@settings(max_examples=60)
@given(case=conv2d_cases())
def test_conv2d_matches_reference(device, case):
    x, w, b = _arrays(case)
    expected = ref_conv2d(x, w, b, case["stride"], case["padding"], case["dilation"])
    out = F.conv2d(minitorch.tensor(x, device=device), minitorch.tensor(w, device=device),
                   None if b is None else minitorch.tensor(b, device=device),
                   stride=case["stride"], padding=case["padding"], dilation=case["dilation"])
    _check(out, expected, case["dtype"])


@settings(max_examples=25)
@given(case=conv2d_cases(), layout=st.sampled_from(["step", "transpose"]))
def test_conv2d_noncontiguous_input_and_weight(device, case, layout):
    x, w, b = _arrays(case)
    expected = ref_conv2d(x, w, b, case["stride"], case["padding"], case["dilation"])
    out = F.conv2d(make_tensor(x, layout, device), make_tensor(w, layout, device),
                   None if b is None else make_tensor(b, layout, device),
                   stride=case["stride"], padding=case["padding"], dilation=case["dilation"])
    _check(out, expected, case["dtype"])


def test_conv2d_int_arguments_mean_both_dims(device):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 8, 7)), rng.standard_normal((4, 3, 3, 2))
    out = F.conv2d(minitorch.tensor(x, device=device), minitorch.tensor(w, device=device),
                   stride=2, padding=1, dilation=2)
    _check(out, ref_conv2d(x, w, None, (2, 2), (1, 1), (2, 2)), np.float64)


def test_conv2d_batch_one_and_unbatched_agree(device):
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((3, 6, 5)), rng.standard_normal((2, 3, 3, 3)), rng.standard_normal(2)
    tw, tb = minitorch.tensor(w, device=device), minitorch.tensor(b, device=device)
    unbatched = F.conv2d(minitorch.tensor(x, device=device), tw, tb, padding=1, stride=(1, 2))
    batched = F.conv2d(minitorch.tensor(x[None], device=device), tw, tb, padding=1, stride=(1, 2))
    assert tuple(unbatched.shape) == (2, 6, 3)
    assert tuple(batched.shape) == (1, 2, 6, 3)
    np.testing.assert_array_equal(to_numpy(unbatched), to_numpy(batched)[0])
    np.testing.assert_allclose(to_numpy(unbatched), ref_conv2d(x[None], w, b, (1, 2), (1, 1))[0], rtol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("dilation", [1, 2])
def test_conv2d_padding_same_and_valid(device, k, dilation):
    rng = np.random.default_rng(k)
    x, w = rng.standard_normal((2, 2, 7, 6)), rng.standard_normal((3, 2, k, k))
    tx, tw = minitorch.tensor(x, device=device), minitorch.tensor(w, device=device)
    same = F.conv2d(tx, tw, padding="same", dilation=dilation)
    p = dilation * (k - 1) // 2
    _check(same, ref_conv2d(x, w, None, (1, 1), (p, p), (dilation, dilation)), np.float64)
    assert tuple(same.shape) == (2, 3, 7, 6)
    if dilation * (k - 1) + 1 <= 6:
        valid = F.conv2d(tx, tw, padding="valid", dilation=dilation)
        _check(valid, ref_conv2d(x, w, None, (1, 1), (0, 0), (dilation, dilation)), np.float64)


def test_conv2d_known_values_box_filter(device):
    # all-ones 3x3 kernel with padding 1 sums each 3x3 neighbourhood
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    out = F.conv2d(minitorch.tensor(x, device=device), minitorch.ones(1, 1, 3, 3, dtype=minitorch.float64,
                                                                         device=device), padding=1)
    expected = [[10, 18, 24, 18], [27, 45, 54, 39], [51, 81, 90, 63], [42, 66, 72, 50]]
    np.testing.assert_array_equal(to_numpy(out)[0, 0], expected)


def test_conv2d_empty_batch(device):
    out = F.conv2d(minitorch.zeros(0, 3, 5, 5, device=device), minitorch.ones(4, 3, 3, 3, device=device))
    assert tuple(out.shape) == (0, 4, 3, 3)


# ------------------------------------------------------------------ conv1d ----

@settings(max_examples=50)
@given(case=conv1d_cases())
def test_conv1d_matches_reference(device, case):
    x, w, b = _arrays(case)
    expected = ref_conv1d(x, w, b, case["stride"], case["padding"], case["dilation"])
    out = F.conv1d(minitorch.tensor(x, device=device), minitorch.tensor(w, device=device),
                   None if b is None else minitorch.tensor(b, device=device),
                   stride=case["stride"], padding=case["padding"], dilation=case["dilation"])
    _check(out, expected, case["dtype"])


def test_conv1d_tuple_arguments_and_unbatched(device):
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 9)), rng.standard_normal((2, 3, 3)), rng.standard_normal(2)
    tw, tb = minitorch.tensor(w, device=device), minitorch.tensor(b, device=device)
    unbatched = F.conv1d(minitorch.tensor(x, device=device), tw, tb, stride=(2,), padding=(1,), dilation=(2,))
    batched = F.conv1d(minitorch.tensor(x[None], device=device), tw, tb, stride=2, padding=1, dilation=2)
    expected = ref_conv1d(x[None], w, b, 2, 1, 2)
    assert tuple(unbatched.shape) == expected.shape[1:]
    np.testing.assert_allclose(to_numpy(unbatched), expected[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(batched), expected, rtol=1e-12, atol=1e-12)


def test_conv1d_moving_sum(device):
    # the lectures' sliding window: kernel [1, 1, 1] gives moving sums
    x = minitorch.tensor(np.array([[[1.0, 2.0, 3.0, 4.0, 5.0]]]), device=device)
    out = F.conv1d(x, minitorch.ones(1, 1, 3, dtype=minitorch.float64, device=device))
    np.testing.assert_array_equal(to_numpy(out), [[[6.0, 9.0, 12.0]]])
    same = F.conv1d(x, minitorch.ones(1, 1, 3, dtype=minitorch.float64, device=device), padding="same")
    np.testing.assert_array_equal(to_numpy(same), [[[3.0, 6.0, 9.0, 12.0, 9.0]]])


# --------------------------------------------------------------- gradients ----

GRAD_CONFIGS_2D = [
    # x shape, w shape, stride, padding, dilation
    ((2, 2, 5, 4), (3, 2, 3, 2), (1, 1), (0, 0), (1, 1)),
    ((1, 3, 6, 5), (2, 3, 3, 3), (2, 1), (1, 2), (1, 1)),
    ((2, 1, 7, 6), (2, 1, 2, 3), (1, 2), (1, 0), (2, 2)),
    ((1, 2, 5, 5), (2, 2, 3, 3), (3, 3), (2, 2), (1, 2)),
]


@pytest.mark.parametrize("xs, ws, stride, padding, dilation", GRAD_CONFIGS_2D)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv2d_gradcheck(xs, ws, stride, padding, dilation, with_bias):
    rng = np.random.default_rng(sum(xs) + sum(ws))
    x = minitorch.tensor(rng.standard_normal(xs), requires_grad=True)
    w = minitorch.tensor(rng.standard_normal(ws), requires_grad=True)
    inputs = (x, w)
    if with_bias:
        inputs += (minitorch.tensor(rng.standard_normal(ws[0]), requires_grad=True),)

    def fn(x, w, b=None):
        return F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation)

    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("which", ["x", "w", "b"])
def test_conv2d_gradcheck_one_input_at_a_time(which):
    # only one of input / weight / bias requires grad: the others get no gradient
    rng = np.random.default_rng(7)
    arrays = dict(x=rng.standard_normal((2, 2, 5, 5)), w=rng.standard_normal((3, 2, 3, 3)), b=rng.standard_normal(3))
    t = {k: minitorch.tensor(v, requires_grad=(k == which)) for k, v in arrays.items()}

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=2, padding=1)

    assert gradcheck(fn, (t["x"], t["w"], t["b"]))
    out = fn(t["x"], t["w"], t["b"])
    out.sum().backward()
    for k in arrays:
        if k == which:
            assert t[k].grad is not None and tuple(t[k].grad.shape) == arrays[k].shape
        else:
            assert t[k].grad is None


def test_conv2d_gradients_match_reference_formulas():
    # dL/db = sum of the output gradient; dL/dw and dL/dx via the reference's linearity
    rng = np.random.default_rng(3)
    xa, wa, ba = rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((3, 2, 2, 3)), rng.standard_normal(3)
    ga = rng.standard_normal((2, 3, 4, 2))
    x, w, b = (minitorch.tensor(a, requires_grad=True) for a in (xa, wa, ba))
    out = F.conv2d(x, w, b, padding=(0, 1), stride=(1, 2))
    assert tuple(out.shape) == ga.shape
    out.backward(minitorch.tensor(ga))
    np.testing.assert_allclose(to_numpy(b.grad), ga.sum(axis=(0, 2, 3)), rtol=1e-12)
    # dL/dw[o,c,kh,kw] = <g, conv(x, e_{o,c,kh,kw})>
    gw = np.zeros_like(wa)
    for idx in np.ndindex(*wa.shape):
        e = np.zeros_like(wa)
        e[idx] = 1.0
        gw[idx] = (ga * ref_conv2d(xa, e, None, (1, 2), (0, 1))).sum()
    np.testing.assert_allclose(to_numpy(w.grad), gw, rtol=1e-10, atol=1e-12)
    gx = np.zeros_like(xa)
    for idx in np.ndindex(*xa.shape):
        e = np.zeros_like(xa)
        e[idx] = 1.0
        gx[idx] = (ga * ref_conv2d(e, wa, None, (1, 2), (0, 1))).sum()
    np.testing.assert_allclose(to_numpy(x.grad), gx, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("stride, padding, dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2), (3, 1, 2)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv1d_gradcheck(stride, padding, dilation, with_bias):
    rng = np.random.default_rng(stride * 10 + padding + dilation)
    x = minitorch.tensor(rng.standard_normal((2, 3, 8)), requires_grad=True)
    w = minitorch.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    inputs = (x, w)
    if with_bias:
        inputs += (minitorch.tensor(rng.standard_normal(2), requires_grad=True),)

    def fn(x, w, b=None):
        return F.conv1d(x, w, b, stride=stride, padding=padding, dilation=dilation)

    assert gradcheck(fn, inputs)


def test_conv_gradcheck_noncontiguous_leaf():
    rng = np.random.default_rng(4)
    base = minitorch.tensor(rng.standard_normal((5, 5, 2, 1)), requires_grad=True)  # (W, H, C, N)
    w = minitorch.tensor(rng.standard_normal((2, 2, 3, 3)), requires_grad=True)
    assert gradcheck(lambda base, w: F.conv2d(base.permute(3, 2, 1, 0), w, padding=1), (base, w))


def test_conv_unbatched_gradcheck():
    rng = np.random.default_rng(5)
    x = minitorch.tensor(rng.standard_normal((2, 4, 4)), requires_grad=True)
    w = minitorch.tensor(rng.standard_normal((3, 2, 2, 2)), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv2d(x, w, padding=1), (x, w))
    x1 = minitorch.tensor(rng.standard_normal((2, 6)), requires_grad=True)
    w1 = minitorch.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2), (x1, w1))


def test_conv_under_no_grad_records_nothing():
    rng = np.random.default_rng(6)
    xa, wa, ba = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(3)
    x, w, b = (minitorch.tensor(a, requires_grad=True) for a in (xa, wa, ba))
    with minitorch.no_grad():
        out = F.conv2d(x, w, b, padding=1)
        out1 = F.conv1d(x[:, :, 0], w[:, :, 0], b, padding=1)
    assert out.grad_fn is None and not out.requires_grad
    assert out1.grad_fn is None and not out1.requires_grad
    np.testing.assert_allclose(to_numpy(out), ref_conv2d(xa, wa, ba, (1, 1), (1, 1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(out1), ref_conv1d(xa[:, :, 0], wa[:, :, 0], ba, 1, 1), rtol=1e-12,
                               atol=1e-12)
    # and with grad enabled again, the graph is recorded
    y = F.conv2d(x, w, b, padding=1)
    assert y.requires_grad and y.grad_fn is not None


def test_conv_backward_twice_accumulates():
    rng = np.random.default_rng(8)
    x = minitorch.tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    w = minitorch.tensor(rng.standard_normal((1, 1, 2, 2)), requires_grad=True)
    F.conv2d(x, w).sum().backward()
    g1 = to_numpy(w.grad)
    F.conv2d(x, w).sum().backward()
    np.testing.assert_allclose(to_numpy(w.grad), 2 * g1, rtol=1e-12)


# ------------------------------------------------------------------ errors ----

def test_conv2d_channel_mismatch_names_both_shapes():
    with pytest.raises(ValueError) as e:
        F.conv2d(minitorch.randn(2, 3, 5, 5), minitorch.randn(4, 2, 3, 3))
    assert "(2, 3, 5, 5)" in str(e.value) and "(4, 2, 3, 3)" in str(e.value)


def test_conv1d_channel_mismatch_names_the_callers_shapes():
    # conv1d is a conv2d with H = 1 underneath; the message should still talk about
    # conv1d and the 3-D shapes the caller passed.
    with pytest.raises(ValueError) as e:
        F.conv1d(minitorch.randn(2, 3, 7), minitorch.randn(4, 2, 3))
    msg = str(e.value)
    assert "conv1d" in msg, msg
    assert "(2, 3, 7)" in msg and "(4, 2, 3)" in msg, msg


@pytest.mark.parametrize("xs, ws, kwargs", [
    ((1, 1, 3, 3), (1, 1, 4, 4), {}),
    ((1, 1, 3, 5), (1, 1, 4, 2), {}),
    ((1, 1, 3, 3), (1, 1, 3, 3), dict(dilation=2)),  # effective kernel 5
    ((1, 1, 2, 2), (1, 1, 5, 5), dict(padding=1)),  # padded 4 < 5
    ((3, 3, 3), (1, 3, 4, 4), {}),  # unbatched
])
def test_conv2d_kernel_larger_than_padded_input(xs, ws, kwargs):
    with pytest.raises(ValueError, match="larger than the padded input"):
        F.conv2d(minitorch.randn(*xs), minitorch.randn(*ws), **kwargs)


def test_conv2d_kernel_that_just_fits_is_fine():
    out = F.conv2d(minitorch.randn(1, 1, 2, 2), minitorch.randn(1, 1, 4, 4), padding=1)
    assert tuple(out.shape) == (1, 1, 1, 1)


def test_conv1d_kernel_larger_than_padded_input():
    with pytest.raises(ValueError):
        F.conv1d(minitorch.randn(2, 3, 2), minitorch.randn(4, 3, 3))
    with pytest.raises(ValueError):
        F.conv1d(minitorch.randn(2, 3, 3), minitorch.randn(4, 3, 3), dilation=2)


@pytest.mark.parametrize("shape", [(5, 5), (5,), (1, 2, 3, 4, 5)])
def test_conv2d_wrong_input_rank(shape):
    with pytest.raises(ValueError, match=r"conv2d.*" + str(shape).replace("(", r"\(").replace(")", r"\)")):
        F.conv2d(minitorch.randn(*shape), minitorch.randn(2, 1, 3, 3))


@pytest.mark.parametrize("shape", [(7,), (1, 2, 3, 7)])
def test_conv1d_wrong_input_rank(shape):
    with pytest.raises(ValueError, match="conv1d"):
        F.conv1d(minitorch.randn(*shape), minitorch.randn(2, 1, 3))


def test_conv_wrong_weight_rank():
    with pytest.raises(ValueError, match=r"\(3, 3, 3\)"):
        F.conv2d(minitorch.randn(2, 3, 5, 5), minitorch.randn(3, 3, 3))
    with pytest.raises(ValueError, match=r"\(4, 3, 3, 3\)"):
        F.conv1d(minitorch.randn(2, 3, 7), minitorch.randn(4, 3, 3, 3))


@pytest.mark.parametrize("stride", [0, -1, (1, 0), (0, 2)])
def test_conv2d_non_positive_stride(stride):
    with pytest.raises(ValueError, match="stride"):
        F.conv2d(minitorch.randn(1, 1, 5, 5), minitorch.randn(1, 1, 3, 3), stride=stride)


@pytest.mark.parametrize("stride", [0, -2])
def test_conv1d_non_positive_stride(stride):
    with pytest.raises(ValueError, match="stride"):
        F.conv1d(minitorch.randn(1, 1, 5), minitorch.randn(1, 1, 3), stride=stride)


def test_conv2d_negative_padding_and_zero_dilation():
    with pytest.raises(ValueError, match="padding"):
        F.conv2d(minitorch.randn(1, 1, 5, 5), minitorch.randn(1, 1, 3, 3), padding=-1)
    with pytest.raises(ValueError, match="dilation"):
        F.conv2d(minitorch.randn(1, 1, 5, 5), minitorch.randn(1, 1, 3, 3), dilation=0)


def test_conv_int64_input_is_a_type_error():
    xi = minitorch.tensor(np.ones((1, 1, 5, 5), dtype=np.int64))
    with pytest.raises(TypeError, match="int64"):
        F.conv2d(xi, minitorch.randn(1, 1, 3, 3))
    with pytest.raises(TypeError, match="int64"):
        F.conv2d(xi, minitorch.tensor(np.ones((1, 1, 3, 3), dtype=np.int64)))
    with pytest.raises(TypeError, match="int64"):
        F.conv1d(minitorch.tensor(np.ones((1, 1, 5), dtype=np.int64)), minitorch.randn(1, 1, 3))


def test_conv_mixed_float_dtypes_is_a_type_error():
    with pytest.raises(TypeError, match="dtype"):
        F.conv2d(minitorch.randn(1, 1, 5, 5), minitorch.randn(1, 1, 3, 3).double())
    with pytest.raises(TypeError, match="dtype"):
        F.conv2d(minitorch.randn(1, 1, 5, 5), minitorch.randn(1, 1, 3, 3), minitorch.randn(1).double())


@pytest.mark.parametrize("bias_shape", [(3,), (5,), (4, 1), ()])
def test_conv2d_wrong_bias_size(bias_shape):
    with pytest.raises(ValueError, match="bias"):
        F.conv2d(minitorch.randn(2, 3, 5, 5), minitorch.randn(4, 3, 3, 3), minitorch.randn(*bias_shape))


def test_conv1d_wrong_bias_size():
    with pytest.raises(ValueError, match=r"bias of shape \(5,\)"):
        F.conv1d(minitorch.randn(2, 3, 7), minitorch.randn(4, 3, 3), minitorch.randn(5))


def test_conv_padding_strings():
    x, w = minitorch.randn(1, 1, 6, 6), minitorch.randn(1, 1, 3, 3)
    with pytest.raises(ValueError, match="padding"):
        F.conv2d(x, w, padding="full")
    with pytest.raises(ValueError, match="strided"):
        F.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(ValueError, match="strided"):
        F.conv1d(x[0], w[0], padding="same", stride=2)


def test_conv1d_unknown_padding_string_names_padding():
    with pytest.raises(ValueError) as e:
        F.conv1d(minitorch.randn(1, 1, 6), minitorch.randn(1, 1, 3), padding="full")
    assert "padding" in str(e.value), str(e.value)


def test_conv_padding_same_with_even_kernel_pads_the_end_like_pytorch():
    # an odd total padding puts the extra row/column at the end (PyTorch's rule)
    x = minitorch.arange(36.0, dtype=minitorch.float64).reshape(1, 1, 6, 6)
    w = minitorch.ones(1, 1, 2, 3, dtype=minitorch.float64)
    out = F.conv2d(x, w, padding="same")
    assert tuple(out.shape) == (1, 1, 6, 6)
    want = F.conv2d(F.pad(x, (1, 1, 0, 1)), w)
    np.testing.assert_array_equal(to_numpy(out), to_numpy(want))
    w1 = minitorch.ones(1, 1, 4, dtype=minitorch.float64)
    x1 = minitorch.arange(6.0, dtype=minitorch.float64).reshape(1, 1, 6)
    out1 = F.conv1d(x1, w1, padding="same")  # total 3: 1 left, 2 right
    np.testing.assert_array_equal(to_numpy(out1), to_numpy(F.conv1d(F.pad(x1, (1, 2)), w1)))
    # an even kernel with an even dilation has an odd effective size: symmetric
    out = F.conv2d(minitorch.randn(1, 1, 6, 6), minitorch.randn(1, 1, 2, 2), padding="same", dilation=2)
    assert tuple(out.shape) == (1, 1, 6, 6)
