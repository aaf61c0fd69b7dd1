"""The CPU fast paths of the quantized ops, each held to the path it replaces: the convolution
with im2col fused into the GEMM (cpu/qgemm.cpp qconv2d) against the im2col of ordinary ops
(ops.quantized._conv2d_im2col, which other devices run), and max pooling on the uint8 values
(cpu/qpool.cpp) against dequantize -> pool -> quantize. Both must give the same integers."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch.ops import quantized as Q

f = minitorch.from_numpy


def _qx(g, shape, zp, seven_bit=False):
    hi = 127 if seven_bit else 255
    data = g.integers(0, hi + 1, shape).astype(np.uint8)
    return minitorch._make_per_tensor_quantized_tensor(f(data), 0.02, zp)


def _qw(g, shape, per_channel):
    data = f(g.integers(-128, 128, shape).astype(np.int8))
    if per_channel:
        o = shape[0]
        return minitorch._make_per_channel_quantized_tensor(
            data, f(g.uniform(0.001, 0.01, o)), f(g.integers(-5, 6, o).astype(np.int64)), 0)
    return minitorch._make_per_tensor_quantized_tensor(data, 0.004, 3)


def _im2col(qx, qw, bias, stride, padding, dilation, groups, scale, zp, relu):
    """The reference: the composed path of ops.quantized, called directly."""
    s = Q._pair(stride, "", ""), Q._pair(padding, "", ""), Q._pair(dilation, "", "")
    (sh, sw), (ph, pw), (dh, dw) = s
    _, _, h, w = qx.shape
    o, _, kh, kw = qw.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    w_scale, w_zp = Q._weight_qparams(qw, o)
    atw = w_scale * float(np.float32(qx.q_scale()))
    return Q._conv2d_im2col(qx, qw, Q._bias_arg(bias, o, "conv2d"), s[0], s[1], s[2], groups, scale, zp, relu,
                            oh, ow, w_scale, w_zp, atw)


CONVS = [  # (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups
    ((2, 1, 9, 9), (8, 3, 3), 1, 1, 1, 1),        # the notebook's conv1 (K = 9)
    ((3, 8, 7, 6), (16, 3, 3), 1, 1, 1, 1),       # its conv2 (K = 72, two column panels)
    ((1, 3, 8, 8), (5, 2, 3), (2, 1), (1, 0), 1, 1),
    ((2, 4, 9, 7), (6, 3, 3), 2, 2, (2, 1), 2),   # groups, dilation, padding past the kernel's reach
    ((1, 6, 5, 5), (6, 1, 1), 1, 0, 1, 3),
    ((0, 2, 4, 4), (3, 3, 3), 1, 1, 1, 1),        # an empty batch
    ((1, 2, 3, 3), (9, 3, 3), 1, 0, 1, 1),        # one output pixel, K odd
]


@pytest.mark.parametrize("case", range(len(CONVS)))
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("seven_bit", [False, True])
def test_fused_conv_matches_im2col(case, per_channel, seven_bit):
    xs, (o, kh, kw), stride, padding, dilation, groups = CONVS[case]
    g = np.random.default_rng(case)
    qx = _qx(g, xs, 100 if not seven_bit else 60, seven_bit)
    qw = _qw(g, (o, xs[1] // groups, kh, kw), per_channel)
    bias = f(g.standard_normal(o).astype(np.float32)) if case % 2 == 0 else None
    for relu in (False, True):
        op = Q.conv2d_relu if relu else Q.conv2d
        y = op(qx, qw, bias, stride, padding, dilation, groups, 0.05, 77)
        ref = _im2col(qx, qw, bias, stride, padding, dilation, groups, 0.05, 77, relu)
        assert y.shape == ref.shape and y.q_scale() == 0.05 and y.q_zero_point() == 77
        np.testing.assert_array_equal(y.int_repr().numpy(), ref.int_repr().numpy())


def _random_conv(seed):
    """A random convolution whose output rows are 8 pixels or wider (the direct loops,
    cpu/qconv_direct.cpp) or, one case in four, narrower (the column panels)."""
    g = np.random.default_rng(100 + seed)
    groups = int(g.choice([1, 1, 2, 3]))
    c, o = groups * int(g.integers(1, 4)), groups * int(g.integers(1, 7))
    kh, kw = int(g.integers(1, 6)), int(g.integers(1, 6))
    sh, sw = int(g.integers(1, 4)), int(g.integers(1, 4))
    dh, dw = int(g.integers(1, 3)), int(g.integers(1, 3))
    ph, pw = int(g.integers(0, 3)), int(g.integers(0, 3))
    ow = int(g.integers(1, 8)) if seed % 4 == 3 else int(g.integers(8, 30))
    w = max((ow - 1) * sw + dw * (kw - 1) + 1 - 2 * pw, 1)
    h = max(dh * (kh - 1) + 1 - 2 * ph, 1) + int(g.integers(0, 9))
    n = int(g.choice([1, 2, 3]))
    return g, (n, c, h, w), (o, kh, kw), (sh, sw), (ph, pw), (dh, dw), groups


@pytest.mark.parametrize("seed", range(16))
def test_direct_conv_matches_im2col_on_random_shapes(seed):
    g, xs, (o, kh, kw), stride, padding, dilation, groups = _random_conv(seed)
    qx = _qx(g, xs, int(g.integers(0, 256)))
    qw = _qw(g, (o, xs[1] // groups, kh, kw), per_channel=seed % 2 == 0)
    bias = f(g.standard_normal(o).astype(np.float32)) if seed % 3 else None
    out_zp = int(g.integers(0, 256))
    for relu in (False, True):
        op = Q.conv2d_relu if relu else Q.conv2d
        y = op(qx, qw, bias, stride, padding, dilation, groups, 0.03, out_zp)
        ref = _im2col(qx, qw, bias, stride, padding, dilation, groups, 0.03, out_zp, relu)
        assert y.shape == ref.shape
        np.testing.assert_array_equal(y.int_repr().numpy(), ref.int_repr().numpy())


def test_direct_conv_split_between_threads_matches_im2col():
    g = np.random.default_rng(9)
    qx, qw = _qx(g, (32, 8, 20, 20), 50), _qw(g, (16, 8, 3, 3), per_channel=True)
    before = minitorch.get_num_threads()
    try:
        minitorch.set_num_threads(2)  # rows of output split between two threads (when there are 2 cores)
        y = Q.conv2d_relu(qx, qw, None, 1, 1, 1, 1, 0.05, 3)
    finally:
        minitorch.set_num_threads(before)
    ref = _im2col(qx, qw, None, 1, 1, 1, 1, 0.05, 3, True)
    np.testing.assert_array_equal(y.int_repr().numpy(), ref.int_repr().numpy())


def test_fused_conv_reads_non_contiguous_input():
    g = np.random.default_rng(5)
    qx = _qx(g, (2, 3, 6, 6), 10)
    qt = qx.transpose(2, 3)
    assert not qt.is_contiguous()
    qw = _qw(g, (4, 3, 3, 3), True)
    y = Q.conv2d(qt, qw, None, 1, 1, 1, 1, 0.1, 5)
    ref = Q.conv2d(qt.contiguous(), qw, None, 1, 1, 1, 1, 0.1, 5)
    np.testing.assert_array_equal(y.int_repr().numpy(), ref.int_repr().numpy())


def test_fused_conv_errors_name_the_op():
    g = np.random.default_rng(0)
    x = f(g.integers(0, 255, (1, 2, 4, 4)).astype(np.uint8))
    w = f(g.integers(-5, 5, (3, 2, 3, 3)).astype(np.int8))
    zp = minitorch.zeros(3, dtype=minitorch.int32)
    atw = minitorch.ones(3)
    with pytest.raises(ValueError, match="quantized_conv2d"):
        minitorch._C._qconv2d(x, 0, w, zp, None, atw, (1, 1), (0, 0), (1, 1), 2, 0.1, 0, False)
    with pytest.raises(ValueError, match="quantized_conv2d"):
        minitorch._C._qconv2d(x, 0, w, minitorch.zeros(2, dtype=minitorch.int32), None, atw, (1, 1), (0, 0), (1, 1),
                              1, 0.1, 0, False)


POOLS = [  # input shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 8, 8), 2, None, 0, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, True),
    ((2, 1, 10, 10), (3, 2), (2, 3), (1, 1), (2, 1), False),
    ((3, 5, 5), 2, 1, 0, 1, False),                 # unbatched (C, H, W)
    ((2, 3, 6, 48), 2, None, 0, 1, False),          # rows of 24 outputs: 16 + 8 at a time (qpool.cpp)
    ((1, 2, 5, 37), 2, None, 0, 1, False),          # rows of 18: 16, then one at a time; odd H and W
    ((2, 2, 4, 30), 2, None, 0, 1, True),           # rows of 15 (8 + 7), ceil_mode
]


@pytest.mark.parametrize("case", range(len(POOLS)))
def test_integer_max_pool_matches_the_float_path(case):
    shape, k, s, p, d, ceil = POOLS[case]
    g = np.random.default_rng(case)
    qx = minitorch._make_per_tensor_quantized_tensor(f(g.integers(0, 256, shape).astype(np.uint8)), 0.37, 41)
    y = F.max_pool2d(qx, k, s, p, d, ceil)
    ref = qx._float_op("max_pool2d", lambda x: F.max_pool2d(x, k, s, p, d, ceil))  # the composed path
    assert y.q_scale() == qx.q_scale() and y.q_zero_point() == qx.q_zero_point()
    np.testing.assert_array_equal(y.int_repr().numpy(), ref.int_repr().numpy())
    m = minitorch.nn.MaxPool2d(k, s, p, d, ceil_mode=ceil)
    np.testing.assert_array_equal(m(qx).int_repr().numpy(), ref.int_repr().numpy())


def test_max_pool_with_indices_and_qint8_keep_the_float_path():
    g = np.random.default_rng(1)
    qi = minitorch._make_per_tensor_quantized_tensor(f(g.integers(-128, 128, (1, 1, 4, 4)).astype(np.int8)), 0.1, 0)
    assert not qi._pools_integers()
    y = F.max_pool2d(qi, 2)
    np.testing.assert_array_equal(y.int_repr().numpy(), qi.int_repr().numpy().reshape(1, 1, 2, 2, 2, 2)
                                  .max(axis=(3, 5)))


@pytest.mark.parametrize("x_shape,stride,dilation", [((2, 4, 7, 6), 1, 1),     # rows of 6: column panels
                                                     ((2, 4, 9, 21), 1, 1),    # rows of 21: the direct loops
                                                     ((1, 4, 12, 30), 2, 2)])  # direct, strided and dilated
def test_fallback_conv_paths_agree(x_shape, stride, dilation):
    """MINITORCH_CPU_CAPABILITY=default (the readable kernel: an explicit unfold and the triple
    loop) and sse (portable column panels, or the direct loops one lane at a time) give the
    AVX2 kernels' integers."""
    code = ("import numpy as np, minitorch as mt\n"
            "from minitorch.ops import quantized as Q\n"
            "g = np.random.default_rng(0)\n"
            f"qx = mt._make_per_tensor_quantized_tensor(mt.from_numpy(g.integers(0, 256, {x_shape}).astype(np.uint8)), 0.02, 99)\n"
            "qw = mt._make_per_channel_quantized_tensor(mt.from_numpy(g.integers(-128, 128, (10, 2, 3, 3)).astype(np.int8)),"
            " mt.from_numpy(g.uniform(0.001, 0.01, 10)), mt.from_numpy(g.integers(-3, 4, 10)), 0)\n"
            f"y = Q.conv2d_relu(qx, qw, mt.ones(10), {stride}, 1, {dilation}, 2, 0.05, 7).int_repr().numpy()\n"
            "print(','.join(map(str, y.ravel().tolist())))\n")
    outs = {}
    for cap in ("default", "sse", None):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(minitorch.__file__)))
        env.pop("MINITORCH_CPU_CAPABILITY", None)
        if cap:
            env["MINITORCH_CPU_CAPABILITY"] = cap
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        outs[cap] = r.stdout
    assert outs["default"] == outs["sse"] == outs[None]


# ---- the prepacked weight of quantized Linear (cpu/qgemm.cpp qgemm_packed) ----

@pytest.mark.parametrize("m,k,n,a_max", [(8, 1, 1, 255), (9, 33, 13, 255), (64, 45, 8, 127), (70, 100, 17, 255),
                                         (130, 7, 40, 127)])
@pytest.mark.parametrize("out", ["int32", "uint8", "float32"])
def test_packed_gemm_matches_the_unpacked_kernel(m, k, n, a_max, out):
    g = np.random.default_rng(m + k + n)
    a = f(g.integers(0, a_max + 1, (m, k)).astype(np.uint8))
    b = f(g.integers(-128, 128, (n, k)).astype(np.int8))
    zp = f(g.integers(-9, 10, n).astype(np.int32))
    bias = f(g.standard_normal(n).astype(np.float32))
    atw = f(g.uniform(1e-4, 1e-3, n).astype(np.float32))
    packed = minitorch._C._qpack_weight(b, zp)
    got = minitorch._C._qgemm_packed(a, 77, packed, n, zp, bias, atw, getattr(minitorch, out), 0.05, 3, True)
    if out == "int32":
        ref = minitorch._C._qgemm(a, 77, b, zp)
    elif out == "uint8":
        ref = minitorch._C._qlinear(a, 77, b, zp, bias, atw, 0.05, 3, True)
    else:
        ref = minitorch._C._qlinear_dynamic(a, 77, b, zp, bias, atw, True)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_packed_gemm_errors_name_the_op():
    b = minitorch.zeros(5, 6, dtype=minitorch.int8)
    zp = minitorch.zeros(5, dtype=minitorch.int32)
    packed = minitorch._C._qpack_weight(b, zp)
    a = minitorch.zeros(9, 7, dtype=minitorch.uint8)
    with pytest.raises(ValueError, match="quantized_gemm_packed"):
        minitorch._C._qgemm_packed(a, 0, packed, 5, zp, None, None, minitorch.int32, 1.0, 0, False)
    with pytest.raises((ValueError, TypeError), match="quantized_pack_weight"):
        minitorch._C._qpack_weight(b.to(minitorch.int32), zp)


def _quantized_linear(g, k=40, n=12):
    m = minitorch.ao.nn.quantized.Linear(k, n)
    w = minitorch.quantize_per_channel(f(g.standard_normal((n, k)).astype(np.float32)),
                                       f(g.uniform(0.01, 0.02, n)), minitorch.zeros(n, dtype=minitorch.int64), 0,
                                       minitorch.qint8)
    m.set_weight_bias(w, f(g.standard_normal(n).astype(np.float32)))
    m.scale, m.zero_point = 0.05, 64
    return m


def test_linear_packs_its_weight_once_and_again_when_it_changes():
    g = np.random.default_rng(3)
    m = _quantized_linear(g)
    x = minitorch.quantize_per_tensor(f(g.standard_normal((16, 40)).astype(np.float32)), 0.02, 128, minitorch.quint8)
    y1 = m(x)
    packed = m.weight()._packed_weight[1]
    y2 = m(x)
    assert m.weight()._packed_weight[1] is packed  # not packed again
    np.testing.assert_array_equal(y1.int_repr().numpy(), y2.int_repr().numpy())
    # the packed path gives what the unpacked kernel gives (few rows never pack)
    w, b = m._weight_bias()
    ref = Q.linear(x[:4], w, b, 0.05, 64)
    np.testing.assert_array_equal(y1.int_repr().numpy()[:4], ref.int_repr().numpy())
    # new weights: set_weight_bias and load_state_dict both give a newly packed weight
    other = _quantized_linear(np.random.default_rng(4))
    m.set_weight_bias(*other._weight_bias())
    np.testing.assert_array_equal(m(x).int_repr().numpy(), other(x).int_repr().numpy())
    third = _quantized_linear(np.random.default_rng(5))
    m.load_state_dict(third.state_dict())
    np.testing.assert_array_equal(m(x).int_repr().numpy(), third(x).int_repr().numpy())
    assert not np.array_equal(third(x).int_repr().numpy(), other(x).int_repr().numpy())


def test_a_weight_whose_integers_are_replaced_is_packed_again():
    g = np.random.default_rng(6)
    qw = minitorch.quantize_per_tensor(f(g.standard_normal((9, 20)).astype(np.float32)), 0.01, 3, minitorch.qint8)
    qw = minitorch._make_per_tensor_quantized_tensor(f(g.integers(-128, 128, (9, 20)).astype(np.int8)), 0.01, -4)
    x = minitorch.quantize_per_tensor(f(g.standard_normal((12, 20)).astype(np.float32)), 0.02, 100, minitorch.quint8)
    before = Q.linear(x, qw, None, 0.1, 50).int_repr().numpy()
    qw.relu_()  # new integers: max(q, zero_point)
    after = Q.linear(x, qw, None, 0.1, 50).int_repr().numpy()
    fresh = minitorch._make_per_tensor_quantized_tensor(qw.int_repr(), 0.01, -4)
    np.testing.assert_array_equal(after, Q.linear(x, fresh, None, 0.1, 50).int_repr().numpy())
    assert not np.array_equal(before, after)


def test_dynamic_linear_on_the_packed_weight_matches_few_rows():
    g = np.random.default_rng(7)
    qw = minitorch.quantize_per_tensor(f(g.standard_normal((10, 30)).astype(np.float32)), 0.01, 0, minitorch.qint8)
    x = f(g.standard_normal((20, 30)).astype(np.float32))
    y = Q.linear_dynamic(x, qw, minitorch.ones(10), reduce_range=True)
    assert "_packed_weight" in qw.__dict__
    # row by row (the GEMV path, unpacked) with the same activation qparams: the same floats
    qx = minitorch.quantize_per_tensor_dynamic(x, minitorch.quint8, True)
    w_scale, w_zp = Q._weight_qparams(qw, 10)
    atw = w_scale * float(np.float32(qx.q_scale()))
    for r in range(0, 20, 5):
        ref = minitorch._C._qlinear_dynamic(qx._data[r:r + 5].contiguous(), qx.q_zero_point(), qw._data, w_zp,
                                            minitorch.ones(10), atw, False)
        np.testing.assert_array_equal(y.numpy()[r:r + 5], ref.numpy())


# ---- quantize_per_tensor in one pass (cpu/quantize.cpp) ----

@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_one_pass_quantize_matches_the_composed_ops(dtype):
    from minitorch._quantized import _quantize_values

    qd = getattr(minitorch, dtype)
    g = np.random.default_rng(8)
    scale, zp = 0.1, (37 if dtype == "quint8" else -5)
    vals = np.concatenate([g.standard_normal(500) * 20, (np.arange(-40, 40) + 0.5) * scale,  # ties
                           [np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0, 3e-39],
                           # x / scale near 2^22, 2^23 and 1.5 * 2^23, where the rounding trick stops being exact
                           np.array([4194303.5, 4194304.5, 8388607.5, 8388609.0, 12582912.0, 25165825.0]) * scale,
                           np.array([-4194303.5, -4194304.5, -8388607.5, -12582913.0, -25165825.0]) * scale,
                           ]).astype(np.float32)
    for x in (f(vals), f(vals[:581].reshape(-1, 7)[:, ::2].copy()).t(), f(vals.astype(np.float64))):
        q = minitorch.quantize_per_tensor(x, scale, zp, qd)
        inv = float(np.float32(1.0) / np.float32(scale))
        ref = _quantize_values(x, inv, zp, qd)
        assert q.int_repr().dtype == ref.dtype and q.shape == x.shape
        np.testing.assert_array_equal(q.int_repr().numpy(), ref.numpy())
    with_nan = f(np.array([1.0, np.nan, -2.0], np.float32))  # NaN: the composed path decides
    np.testing.assert_array_equal(minitorch.quantize_per_tensor(with_nan, scale, zp, qd).int_repr().numpy(),
                                  _quantize_values(with_nan, float(np.float32(1.0) / np.float32(scale)), zp,
                                                   qd).numpy())
