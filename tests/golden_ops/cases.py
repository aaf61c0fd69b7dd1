"""The golden-op cases: each an op call written once, for ``torch`` or ``minitorch``.

A case is a name, a function ``fn(lib, *inputs)`` (``lib`` is the library module; it returns
a tensor or a tuple/list of tensors) and its inputs as specs that make_golden.py draws from
NumPy with a fixed seed. make_golden.py runs every case under PyTorch and stores inputs,
outputs and gradients in golden.npz; test_golden_ops.py runs the same functions with minitorch.
Float inputs are float64 and require grad when ``grad`` is true: the gradient stored is that of
sum(out_i * w_i) over the floating outputs, with fixed random weights w_i.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    name: str
    fn: object
    inputs: tuple
    grad: bool = True
    rtol: float = 1e-7
    atol: float = 1e-9
    frozen: tuple = ()  # float inputs that never require grad (class weights...)


CASES: list[Case] = []


def case(name, fn, *inputs, grad=True, rtol=1e-7, atol=1e-9, frozen=()):
    assert name not in {c.name for c in CASES}, name
    CASES.append(Case(name, fn, inputs, grad, rtol, atol, frozen))


# Input specs, materialised by make(): ("randn", shape), ("uniform", lo, hi, shape),
# ("randint", lo, hi, shape, dtype), ("const", array).
def randn(*shape):
    return ("randn", shape)


def uniform(lo, hi, *shape):
    return ("uniform", lo, hi, shape)


def randint(lo, hi, *shape, dtype="int64"):
    return ("randint", lo, hi, shape, dtype)


def const(values, dtype=None):
    return ("const", np.asarray(values, dtype=dtype))


def randn32(*shape):
    """A float32 input (the case checks float32 dtypes and promotion; float64 otherwise)."""
    return ("randn32", shape)


def make(spec, rng):
    kind = spec[0]
    if kind == "randn":
        return rng.standard_normal(spec[1])
    if kind == "randn32":
        return rng.standard_normal(spec[1]).astype(np.float32)
    if kind == "uniform":
        return rng.uniform(spec[1], spec[2], spec[3])
    if kind == "uniform32":
        return rng.uniform(spec[1], spec[2], spec[3]).astype(np.float32)
    if kind == "randint":
        return rng.integers(spec[1], spec[2], spec[3]).astype(spec[4])
    return spec[1]


def F(lib):
    return lib.nn.functional


def fill_params(lib, module):
    """Sets every parameter of ``module`` to fixed numbers (no RNG), the same in both libraries."""
    with lib.no_grad():
        for k, (name, p) in enumerate(sorted(module.named_parameters())):
            n = math.prod(p.shape)
            values = np.sin(np.arange(n) * 0.731 + k) * (0.5 / math.sqrt(p.shape[-1]))
            p.copy_(lib.tensor(values.reshape(tuple(p.shape)), dtype=p.dtype, device=p.device))
    return module


def T(x):
    """A non-contiguous view: the last two dims swapped."""
    return x.transpose(-1, -2)


# ---------------------------------------------------------------- convolutions, fold
case("conv2d_groups_dilation_same", lambda t, x, w, b: F(t).conv2d(x, w, b, padding="same", dilation=2, groups=2),
     randn(1, 4, 7, 6), randn(4, 2, 3, 3), randn(4))
case("conv2d_stride_groups3", lambda t, x, w, b: F(t).conv2d(x, w, b, stride=2, padding=1, groups=3),
     randn(2, 3, 5, 7), randn(6, 1, 3, 2), randn(6))
case("conv2d_same_even_kernel_noncontig", lambda t, x, w: F(t).conv2d(T(x), w, padding="same", dilation=(1, 2)),
     randn(2, 3, 5, 6), randn(2, 3, 2, 3))
case("conv_transpose1d_stride_outpad", lambda t, x, w, b: F(t).conv_transpose1d(x, w, b, stride=2, output_padding=1),
     randn(2, 4, 5), randn(4, 3, 3), randn(3))
case("conv_transpose1d_groups_dilation", lambda t, x, w: F(t).conv_transpose1d(x, w, padding=1, groups=2, dilation=2),
     randn(1, 4, 6), randn(4, 1, 3))
case("conv_transpose2d_all", lambda t, x, w, b: F(t).conv_transpose2d(
        x, w, b, stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2)),
     randn(1, 4, 3, 4), randn(4, 2, 3, 2), randn(4))
case("conv_transpose2d_noncontig", lambda t, x, w: F(t).conv_transpose2d(T(x), w, stride=1, padding=1),
     randn(2, 3, 5, 4), randn(3, 2, 3, 3))
case("unfold", lambda t, x: F(t).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), randn(2, 3, 5, 6))
case("fold_overlap", lambda t, x: F(t).fold(x, (4, 5), 2), randn(1, 12, 12))
case("fold_stride_pad", lambda t, x: F(t).fold(x, (5, 5), 3, stride=2, padding=1), randn(2, 18, 9))

# ---------------------------------------------------------------- interpolate
case("interp_nearest_scale2", lambda t, x: F(t).interpolate(x, scale_factor=2, mode="nearest"), randn(1, 2, 3, 4))
case("interp_nearest_size_down", lambda t, x: F(t).interpolate(x, size=(3, 3), mode="nearest"), randn(2, 1, 7, 5))
case("interp_nearest_exact", lambda t, x: F(t).interpolate(x, size=(7, 3), mode="nearest-exact"), randn(1, 2, 5, 4))
case("interp_nearest1d_scale2_5", lambda t, x: F(t).interpolate(x, scale_factor=2.5, mode="nearest"), randn(2, 3, 7))
for ac in (False, True):
    case(f"interp_linear_size_ac{int(ac)}", lambda t, x, ac=ac: F(t).interpolate(x, size=11, mode="linear", align_corners=ac),
         randn(2, 3, 7))
    case(f"interp_bilinear_size_ac{int(ac)}", lambda t, x, ac=ac: F(t).interpolate(
        T(x), size=(8, 3), mode="bilinear", align_corners=ac), randn(1, 2, 4, 5))
    case(f"interp_bicubic_scale2_ac{int(ac)}", lambda t, x, ac=ac: F(t).interpolate(
        x, scale_factor=2, mode="bicubic", align_corners=ac), randn(1, 2, 3, 4))
case("interp_linear_scale1_7", lambda t, x: F(t).interpolate(x, scale_factor=1.7, mode="linear"), randn(1, 2, 5))
case("interp_bilinear_scale_recompute", lambda t, x: F(t).interpolate(
    x, scale_factor=(1.5, 0.6), mode="bilinear", recompute_scale_factor=True), randn(1, 1, 4, 5))
case("interp_bicubic_size_down", lambda t, x: F(t).interpolate(x, size=(3, 7), mode="bicubic"), randn(2, 1, 5, 4))

# ---------------------------------------------------------------- grid_sample, affine_grid
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            case(f"grid_sample_{mode}_{pad}_ac{int(ac)}",
                 lambda t, x, g, mode=mode, pad=pad, ac=ac: F(t).grid_sample(
                     x, g, mode=mode, padding_mode=pad, align_corners=ac),
                 randn(2, 3, 4, 5), uniform(-1.3, 1.3, 2, 3, 6, 2))
case("grid_sample_bicubic_border", lambda t, x, g: F(t).grid_sample(x, g, mode="bicubic", padding_mode="border",
                                                                    align_corners=False),
     randn(1, 2, 4, 5), uniform(-1.2, 1.2, 1, 3, 4, 2))
for ac in (False, True):
    case(f"affine_grid_ac{int(ac)}", lambda t, th, ac=ac: F(t).affine_grid(th, [2, 3, 4, 5], align_corners=ac),
         randn(2, 2, 3))

# ---------------------------------------------------------------- embedding_bag
_bag_idx = const([1, 4, 4, 9, 0, 2, 7], "int64")
_bag_off = const([0, 2, 2, 5], "int64")
for mode in ("sum", "mean", "max"):
    case(f"embedding_bag_{mode}_offsets", lambda t, w, i, o, mode=mode: F(t).embedding_bag(i, w, o, mode=mode),
         randn(10, 4), _bag_idx, _bag_off)
case("embedding_bag_per_sample_weights", lambda t, w, i, o, s: F(t).embedding_bag(
    i, w, o, mode="sum", per_sample_weights=s), randn(10, 4), _bag_idx, _bag_off, randn(7))
case("embedding_bag_2d_mean", lambda t, w, i: F(t).embedding_bag(i, w, mode="mean"),
     randn(10, 3), randint(0, 10, 3, 4))
case("embedding_bag_include_last_offset", lambda t, w, i, o: F(t).embedding_bag(
    i, w, o, mode="sum", include_last_offset=True), randn(10, 4), _bag_idx, const([0, 2, 5, 7], "int64"))

# ---------------------------------------------------------------- normalisation, shuffles, pools
case("instance_norm_affine", lambda t, x, w, b: F(t).instance_norm(x, weight=w, bias=b, eps=1e-3),
     randn(2, 3, 5, 4), randn(3), randn(3))
case("instance_norm_1d_noncontig", lambda t, x: F(t).instance_norm(T(x)), randn(1, 6, 3))
case("local_response_norm_2d", lambda t, x: F(t).local_response_norm(x, 3), randn(2, 5, 4, 3))
case("local_response_norm_1d", lambda t, x: F(t).local_response_norm(x, 2, alpha=0.1, beta=0.6, k=2.0),
     randn(1, 4, 7))
case("pixel_shuffle", lambda t, x: F(t).pixel_shuffle(x, 2), randn(1, 8, 2, 3))
case("pixel_unshuffle_noncontig", lambda t, x: F(t).pixel_unshuffle(T(x), 2), randn(2, 2, 6, 4))
case("adaptive_max_pool2d_indices", lambda t, x: F(t).adaptive_max_pool2d(x, (3, 2), return_indices=True),
     randn(2, 3, 7, 5))
case("adaptive_max_pool2d_none", lambda t, x: F(t).adaptive_max_pool2d(x, (None, 2)), randn(1, 2, 4, 5))
case("max_unpool2d", lambda t, x: F(t).max_unpool2d(
    *F(t).max_pool2d(x, 2, stride=2, return_indices=True), 2, stride=2, output_size=(6, 5)), randn(1, 2, 6, 5))
case("conv3d_stride_dilation_groups", lambda t, x, w, b: F(t).conv3d(x, w, b, stride=(2, 1, 2), padding=(1, 0, 2),
                                                                    dilation=(2, 1, 1), groups=2),
     randn(2, 4, 5, 6, 5), randn(6, 2, 3, 2, 3), randn(6))
case("conv3d_same_even_kernel_unbatched", lambda t, x, w: F(t).conv3d(x, w, padding="same", dilation=(1, 2, 1)),
     randn(3, 4, 5, 4), randn(2, 3, 2, 3, 2))
case("max_pool3d_ceil_dilation_indices", lambda t, x: F(t).max_pool3d(x, (2, 3, 2), stride=2, padding=1,
                                                                       dilation=(2, 1, 1), ceil_mode=True,
                                                                       return_indices=True), randn(2, 3, 5, 6, 5))
case("avg_pool3d_ceil_no_pad_count", lambda t, x: F(t).avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                                   count_include_pad=False), randn(2, 3, 5, 6, 5))
case("avg_pool3d_divisor_override", lambda t, x: F(t).avg_pool3d(x, (2, 3, 2), stride=(1, 2, 3), padding=(1, 0, 1),
                                                                  divisor_override=5), randn(1, 2, 4, 5, 6))

# ---------------------------------------------------------------- losses
for red in ("batchmean", "sum", "none"):
    case(f"kl_div_{red}", lambda t, x, y, red=red: F(t).kl_div(F(t).log_softmax(x, 1), F(t).softmax(y, 1),
                                                              reduction=red), randn(3, 5), randn(3, 5))
case("kl_div_log_target", lambda t, x, y: F(t).kl_div(x, y, reduction="mean", log_target=True), randn(3, 4), randn(3, 4))
case("smooth_l1_beta", lambda t, x, y: F(t).smooth_l1_loss(x, y, beta=0.5), randn(4, 5), randn(4, 5))
case("smooth_l1_beta0_none", lambda t, x, y: F(t).smooth_l1_loss(x, y, reduction="none", beta=0.0), randn(7), randn(7))
case("huber_delta2_sum", lambda t, x, y: F(t).huber_loss(x, 3 * y, reduction="sum", delta=2.0), randn(4, 5), randn(4, 5))
_ce_tgt = const([1, 0, 4, -100, 3, 2], "int64")
case("cross_entropy_label_smoothing", lambda t, x, y: F(t).cross_entropy(x, y, label_smoothing=0.1),
     randn(6, 5), const([1, 0, 4, 2, 3, 2], "int64"))
case("cross_entropy_weight_ignore_smoothing", lambda t, x, y, w: F(t).cross_entropy(
    x, y, weight=w, ignore_index=-100, label_smoothing=0.2), randn(6, 5), _ce_tgt, uniform(0.5, 2, 5), frozen=(2,))
case("cross_entropy_weight_ignore_sum", lambda t, x, y, w: F(t).cross_entropy(x, y, weight=w, reduction="sum"),
     randn(6, 5), _ce_tgt, uniform(0.5, 2, 5), frozen=(2,))
case("cross_entropy_ignore_index_3", lambda t, x, y: F(t).cross_entropy(x, y, ignore_index=3, reduction="none"),
     randn(6, 5), const([1, 3, 4, 0, 3, 2], "int64"))
case("cross_entropy_prob_targets_smoothing", lambda t, x, y, w: F(t).cross_entropy(
    x, F(t).softmax(y, 1), weight=w, label_smoothing=0.1), randn(4, 5), randn(4, 5), uniform(0.5, 2, 5),
     frozen=(2,))
case("cross_entropy_kdim", lambda t, x, y: F(t).cross_entropy(x, y, label_smoothing=0.05),
     randn(2, 3, 4, 2), randint(0, 3, 2, 4, 2))


# ---------------------------------------------------------------- nn.Transformer
def _transformer(t, src, tgt, pad, norm_first=False):
    model = t.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                             dropout=0.0, batch_first=True, norm_first=norm_first,
                             activation="gelu" if norm_first else "relu").double().to(src.device)
    fill_params(t, model)
    causal = t.triu(t.full((tgt.shape[1], tgt.shape[1]), float("-inf"), dtype=t.float64, device=src.device), 1)
    pad = pad.to(t.bool)
    return model(src, tgt, tgt_mask=causal, src_key_padding_mask=pad, memory_key_padding_mask=pad)


_tpad = const([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], "int64")
case("transformer_masks", _transformer, randn(2, 5, 8), randn(2, 4, 8), _tpad, rtol=1e-6)
case("transformer_norm_first_gelu", lambda t, s, g, p: _transformer(t, s, g, p, True),
     randn(2, 5, 8), randn(2, 4, 8), _tpad, rtol=1e-6)

# ---------------------------------------------------------------- reductions, scans, order statistics
_z = np.random.default_rng(5).standard_normal((3, 4))
_z[1, 2] = 0.0
_z2 = _z.copy()
_z2[0, 1] = 0.0
case("prod_dim_one_zero", lambda t, x: t.prod(x, 1), const(_z))
case("prod_all_one_zero", lambda t, x: t.prod(x), const(_z))
case("prod_all_two_zeros", lambda t, x: t.prod(x), const(_z2))
case("prod_dim0_keepdim_two_zeros", lambda t, x: t.prod(x, 0, keepdim=True), const(_z2.T.copy()))
case("cummax", lambda t, x: t.cummax(x, 1), randn(3, 5))
case("cummin_noncontig", lambda t, x: t.cummin(T(x), 0), randn(3, 5))
case("cummax_int_ties", lambda t, x: t.cummax(x, 0), const([3, 1, 3, 2, 5, 5, 0], "int64"))
case("median_dim_odd", lambda t, x: t.median(x, 1), randn(3, 5))
case("median_dim_even", lambda t, x: t.median(x, 0), randn(4, 4))
case("median_all_even", lambda t, x: t.median(x), randn(2, 4))
case("kthvalue_dim0", lambda t, x: t.kthvalue(x, 2, 0, keepdim=True), randn(5, 3))
case("quantile_scalar", lambda t, x: t.quantile(x, 0.3), randn(4, 5))
for interp in ("linear", "lower", "higher", "nearest", "midpoint"):
    case(f"quantile_{interp}", lambda t, x, q, interp=interp: t.quantile(x, q, dim=1, keepdim=True, interpolation=interp),
         randn(3, 6), const([0.1, 0.5, 0.9]), frozen=(1,))

# ---------------------------------------------------------------- linalg
_lin = dict(rtol=1e-6, atol=1e-8)


def _wc(t, a):
    """A well-conditioned square matrix from a: a + 4 I."""
    return a + 4 * t.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _spd(t, a):
    return a @ a.mT + t.eye(a.shape[-1], dtype=a.dtype, device=a.device)


case("linalg_solve", lambda t, a, b: t.linalg.solve(_wc(t, a), b), randn(4, 4), randn(4, 2), **_lin)
case("linalg_solve_batched_vec", lambda t, a, b: t.linalg.solve(_wc(t, a), b), randn(2, 3, 3), randn(2, 3), **_lin)
case("linalg_inv_noncontig", lambda t, a: t.linalg.inv(_wc(t, T(a))), randn(2, 4, 4), **_lin)
case("linalg_det", lambda t, a: t.linalg.det(a), randn(2, 3, 3), **_lin)
case("linalg_slogdet", lambda t, a: t.linalg.slogdet(a), randn(3, 3), **_lin)
case("linalg_cholesky", lambda t, a: t.linalg.cholesky(_spd(t, a)), randn(4, 4), **_lin)
case("linalg_qr_reduced", lambda t, a: t.linalg.qr(a), randn(5, 3), **_lin)
case("linalg_qr_complete_square", lambda t, a: t.linalg.qr(a, mode="complete"), randn(3, 3), **_lin)
case("linalg_eigvalsh", lambda t, a: t.linalg.eigvalsh(a + a.mT), randn(2, 4, 4), **_lin)
case("linalg_eigh_signfree", lambda t, a: (lambda w, v: (w, v * v))(*t.linalg.eigh(a + a.mT)), randn(4, 4), **_lin)
case("linalg_svdvals", lambda t, a: t.linalg.svdvals(a), randn(4, 3), **_lin)
case("linalg_pinv", lambda t, a: t.linalg.pinv(a), randn(3, 5), **_lin)
case("linalg_lstsq", lambda t, a, b: t.linalg.lstsq(a, b).solution, randn(5, 3), randn(5, 2), **_lin)
case("linalg_norm_default", lambda t, a: t.linalg.norm(a), randn(3, 4), **_lin)
case("linalg_norm_vec_ord3_dim", lambda t, a: t.linalg.norm(a, 3, dim=1), randn(3, 4), **_lin)
case("linalg_norm_vec_inf", lambda t, a: t.linalg.norm(a, float("inf")), randn(5), **_lin)
for ord_ in ("fro", "nuc", 2, -2, 1, float("inf")):
    case(f"linalg_matrix_norm_{ord_}", lambda t, a, o=ord_: t.linalg.matrix_norm(a, o), randn(2, 3, 4), **_lin)

# ---------------------------------------------------------------- products, elementwise
for p in (2.0, 1.0, 3.0, float("inf")):
    case(f"cdist_p{p}", lambda t, a, b, p=p: t.cdist(a, b, p=p), randn(2, 4, 3), randn(2, 5, 3))
case("kron", lambda t, a, b: t.kron(a, b), randn(2, 3), randn(3, 2))
case("tensordot_int", lambda t, a, b: t.tensordot(a, b, dims=2), randn(2, 3, 4), randn(3, 4, 2))
case("tensordot_lists", lambda t, a, b: t.tensordot(a, b, dims=([1, 0], [0, 2])), randn(2, 3, 4), randn(3, 5, 2))
case("logaddexp", lambda t, a, b: t.logaddexp(a, 30 * b), randn(3, 4), randn(4))
case("hypot", lambda t, a, b: t.hypot(a, b), randn(3, 4), randn(3, 1))
case("lerp_scalar", lambda t, a, b: t.lerp(a, b, 0.3), randn(3, 4), randn(3, 4))
case("lerp_tensor", lambda t, a, b, w: t.lerp(a, b, w), randn(3, 4), randn(4), uniform(0, 1, 3, 4))
case("addcmul", lambda t, a, b, c: t.addcmul(a, b, c, value=0.5), randn(3, 4), randn(3, 4), randn(4))
case("addcdiv", lambda t, a, b, c: t.addcdiv(a, b, c, value=-2), randn(3, 4), randn(3, 4), uniform(0.5, 2, 3, 4))
case("xlogy_zeros", lambda t, x, y: t.xlogy(x, y), const([0.0, 1.5, -2.0, 0.0, 3.0]), uniform(0.5, 3, 5))

# ---------------------------------------------------------------- sets, counting, searching (integers)
case("unique_inverse_counts", lambda t, x: t.unique(x, return_inverse=True, return_counts=True),
     const([3, 1, 2, 3, 1, 5, 5, 5], "int64"))
case("unique_dim0", lambda t, x: t.unique(x, dim=0, return_inverse=True, return_counts=True),
     const([[1, 2], [0, 5], [1, 2], [0, 1]], "int64"))
case("bincount_minlength", lambda t, x: t.bincount(x, minlength=8), const([1, 1, 3, 0, 5, 3, 1], "int64"))
case("bincount_weights", lambda t, x, w: t.bincount(x, w), const([1, 1, 3, 0, 5, 3, 1], "int64"), randn(7),
     grad=False)
case("histc_auto_range", lambda t, x: t.histc(x, bins=5), randn(20), grad=False)
case("histc_range", lambda t, x: t.histc(x, bins=4, min=-1, max=1), randn(20), grad=False)
case("searchsorted_left", lambda t, s, v: t.searchsorted(s, v), const([1.0, 2.0, 2.0, 3.0, 5.0]),
     const([0.5, 2.0, 2.5, 5.0, 6.0]), grad=False)
case("searchsorted_right_2d", lambda t, s, v: t.searchsorted(s, v, right=True),
     const([[1, 3, 5, 7], [2, 2, 4, 8]], "int64"), const([[3, 6, 0], [2, 9, 4]], "int64"))
case("searchsorted_side_int32", lambda t, s, v: t.searchsorted(s, v, side="right", out_int32=True),
     const([1.0, 2.0, 2.0, 3.0]), const([2.0, 0.0, 3.5]), grad=False)

# ---------------------------------------------------------------- integer dtypes: promotion, wrap-around
case("uint8_plus_int8", lambda t, a, b: a + b, const([200, 3, 255], "uint8"), const([-100, 5, 127], "int8"))
case("uint8_overflow", lambda t, a: a + 10, const([250, 3, 255], "uint8"))
case("uint8_times_uint8", lambda t, a, b: a * b, const([16, 3, 255], "uint8"), const([16, 100, 2], "uint8"))
case("int8_times_3", lambda t, a: a * 3, const([100, -100, 42, -43], "int8"))
case("int16_times_int8", lambda t, a, b: a * b, const([300, -32768, 1000], "int16"), const([100, -1, -40], "int8"))
case("int32_plus_uint8_sub", lambda t, a, b: a - b, const([1, -2, 2**31 - 1], "int32"), const([2, 255, 0], "uint8"))
case("uint8_plus_float", lambda t, a: a + 1.5, const([200, 3, 255], "uint8"))
case("sum_uint8_int64", lambda t, a: a.sum(), const([200, 100, 255, 7], "uint8"))
case("sum_int8_dim", lambda t, a: a.sum(0), const([[100, -100], [100, -100], [100, -100]], "int8"))
case("to_uint8_negative_floats", lambda t, a: a.to(t.uint8), const([-1.0, -3.7, 0.5, 254.9, -128.0]), grad=False)
case("to_int8_from_int64_wrap", lambda t, a: a.to(t.int8), const([127, 128, 255, -129, 1000], "int64"))
# torch 1.13's floor_divide (and so `//`) already floors, like torch.div(rounding_mode="floor"):
# checked when the golden file was made (make_golden.py asserts it).
case("floordiv_int", lambda t, a, b: a // b, const([-7, 7, -7, 7, 0], "int64"), const([2, -2, -2, 2, -3], "int64"))
case("floordiv_int8", lambda t, a, b: a // b, const([-128, 127, -7], "int8"), const([3, -2, 2], "int8"))
case("floordiv_float", lambda t, a, b: a // b, const([-7.5, 7.5, -0.5, 3.0]), const([2.0, -2.0, 4.0, 1.5]),
     grad=False)
case("div_floor_mode", lambda t, a, b: t.div(a, b, rounding_mode="floor"), const([-7, 7, -8], "int64"),
     const([2, -2, 3], "int64"))
case("div_trunc_mode", lambda t, a, b: t.div(a, b, rounding_mode="trunc"), const([-7, 7, -8], "int64"),
     const([2, -2, 3], "int64"))
case("remainder_int_negative", lambda t, a, b: a % b, const([-7, 7, -7, 7], "int64"), const([2, -2, -2, 2], "int64"))


# ---------------------------------------------------------------- running a case (both libraries)
def leaves(lib, case, arrays, device):
    """The input tensors: float arrays as float64 (or float32) leaves, requiring grad if the case
    has gradients."""
    out = []
    for i, a in enumerate(arrays):
        if a.dtype.kind == "f":
            dtype = lib.float32 if a.dtype == np.float32 else lib.float64
            out.append(lib.tensor(a, dtype=dtype, device=device,
                                  requires_grad=case.grad and i not in case.frozen))
        else:
            out.append(lib.tensor(a, device=device))
    return out


def outputs(result):
    """A case's result as a flat list of tensors (tuples, lists and named tuples are unpacked)."""
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def differentiable(out):
    return out.dtype.is_floating_point and out.requires_grad


# ---------------------------------------------------------------- more awkward corners (appended: cases
# keep their seeds, which come from their names)
case("conv1d_same_dilation", lambda t, x, w: F(t).conv1d(x, w, padding="same", dilation=3), randn(1, 2, 9),
     randn(3, 2, 4))
case("grid_sample_reflection_far_ac0", lambda t, x, g: F(t).grid_sample(x, g, padding_mode="reflection",
                                                                        align_corners=False),
     randn(1, 2, 3, 4), uniform(-3.5, 3.5, 1, 4, 5, 2))
case("grid_sample_reflection_far_ac1", lambda t, x, g: F(t).grid_sample(x, g, padding_mode="reflection",
                                                                        align_corners=True),
     randn(1, 2, 3, 4), uniform(-3.5, 3.5, 1, 4, 5, 2))
case("embedding_bag_mean_padding_idx", lambda t, w, i, o: F(t).embedding_bag(i, w, o, mode="mean", padding_idx=4),
     randn(10, 4), _bag_idx, _bag_off)
case("pixel_shuffle_unbatched", lambda t, x: F(t).pixel_shuffle(x, 3), randn(9, 2, 1))
case("cross_entropy_unbatched", lambda t, x, y: F(t).cross_entropy(x, y, label_smoothing=0.3), randn(5),
     const(2, "int64"))
case("cross_entropy_batch1_prob", lambda t, x, y: F(t).cross_entropy(x, y, reduction="none"), randn(1, 4),
     uniform(0, 0.5, 1, 4))
case("logaddexp_neg_inf", lambda t, a, b: t.logaddexp(a, b), const([-np.inf, -np.inf, 1.0, np.inf]),
     const([-np.inf, 2.0, -np.inf, np.inf]), grad=False)
# Value only: PyTorch 1.13 gives a zero gradient for det of an exactly singular matrix; the
# gradient is the cofactor matrix ([[4, 4, -4], [-2, -2, 2], [0, 0, 0]] here), which is what
# minitorch (and PyTorch 2.x, which differentiates det through an SVD when singular) gives.
case("linalg_det_singular", lambda t, a: t.linalg.det(a), const([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
     grad=False, **_lin)
case("linalg_solve_left_false", lambda t, a, b: t.linalg.solve(_wc(t, a), b, left=False), randn(3, 3), randn(2, 3),
     **_lin)
case("linalg_vector_norm_ord0", lambda t, a: t.linalg.vector_norm(a, 0), const([0.0, 1.5, 0.0, -2.0]), grad=False)
case("linalg_norm_fro_dims", lambda t, a: t.linalg.norm(a, "fro", dim=(0, 2)), randn(2, 3, 4), **_lin)
case("prod_int8_int64", lambda t, a: t.prod(a), const([100, -3, 7], "int8"))
case("cumsum_uint8_int64", lambda t, a: t.cumsum(a, 0), const([200, 100, 255], "uint8"))
case("logcumsumexp_dim1", lambda t, a: t.logcumsumexp(a, 1), randn(3, 5))
case("logcumsumexp_far_apart", lambda t, a: t.logcumsumexp(a, 0), const([-1000.0, 0.0, 800.0, 1.5]))
case("median_int", lambda t, a: t.median(a, 0), const([[3, 1], [1, 1], [2, 5], [7, 1]], "int64"))
case("quantile_dim_none_keepdim", lambda t, x: t.quantile(x, 0.75, keepdim=True), randn(2, 3))
case("max_unpool2d_odd", lambda t, x: F(t).max_unpool2d(
    *F(t).max_pool2d(x, 3, stride=2, return_indices=True), 3, stride=2, output_size=(7, 6)), randn(2, 1, 7, 6))
case("unique_unsorted_float", lambda t, x: t.unique(x, return_counts=True), const([2.5, -1.0, 2.5, 0.0, -1.0]),
     grad=False)


# ---------------------------------------------------------------- float32: dtypes and promotion
_f32 = dict(rtol=2e-5, atol=1e-5)
case("f32_conv_transpose2d", lambda t, x, w: F(t).conv_transpose2d(x, w, stride=2, groups=2),
     randn32(1, 4, 3, 3), randn32(4, 1, 2, 2), **_f32)
case("f32_interp_bicubic", lambda t, x: F(t).interpolate(x, size=(5, 6), mode="bicubic", align_corners=True),
     randn32(1, 2, 3, 4), **_f32)
case("f32_grid_sample", lambda t, x, g: F(t).grid_sample(x, g, align_corners=False), randn32(1, 2, 3, 4),
     ("uniform32", -1, 1, (1, 2, 3, 2)), **_f32)
case("f32_embedding_bag_f64_psw", lambda t, w, i, o, s: F(t).embedding_bag(i, w, o, mode="sum", per_sample_weights=s.float()),
     randn32(10, 4), _bag_idx, _bag_off, randn(7), **_f32)
case("f32_cdist", lambda t, a, b: t.cdist(a, b), randn32(3, 4), randn32(2, 4), **_f32)
case("f32_linalg_solve", lambda t, a, b: t.linalg.solve(_wc(t, a), b), randn32(3, 3), randn32(3, 2), **_f32)
case("f32_linalg_svdvals", lambda t, a: t.linalg.svdvals(a), randn32(4, 3), **_f32)
case("f32_quantile", lambda t, x: t.quantile(x, 0.4, dim=0), randn32(5, 3), **_f32)
case("f32_plus_int8", lambda t, a, b: a + b, randn32(3), const([100, -100, 7], "int8"), **_f32)
case("f32_plus_f64_scalar_tensor", lambda t, a, b: a * b.sum(), randn32(3), randn(2), **_f32)
case("f32_times_f64", lambda t, a, b: t.logaddexp(a, b), randn32(3), randn(3), **_f32)
case("f32_xlogy_int", lambda t, a, b: t.xlogy(a, b), const([0, 2, 3], "int64"), ("uniform32", 0.5, 2, (3,)), **_f32)
case("f32_lerp", lambda t, a, b: t.lerp(a, b, 0.25), randn32(2, 3), randn32(3), **_f32)
case("f32_bincount_weights", lambda t, x, w: t.bincount(x, w), const([1, 1, 3, 0], "int64"), randn32(4), grad=False,
     **_f32)
case("f32_histc", lambda t, x: t.histc(x, bins=3), randn32(10), grad=False, **_f32)
case("f32_cross_entropy_smoothing", lambda t, x, y: F(t).cross_entropy(x, y, label_smoothing=0.1), randn32(3, 4),
     const([0, 3, 1], "int64"), **_f32)
case("f32_instance_norm", lambda t, x: F(t).instance_norm(x), randn32(2, 2, 5), **_f32)
case("int_mean_of_float_cast", lambda t, a: a.to(t.float32).mean(), const([1, 2, 4], "uint8"), **_f32)

# ---------------------------------------------------------------- div's rounding modes on floats and scalars
case("div_trunc_float_scalar", lambda t, a: a.div(-0.75, rounding_mode="trunc"), randn(2, 3), grad=False)
case("div_floor_float", lambda t, a, b: t.div(a, b, rounding_mode="floor"), randn(2, 3), randn(3), grad=False)
case("div_trunc_int_scalar", lambda t, a: t.div(a, -3, rounding_mode="trunc"), const([-7, 7, -9, 9, 0], "int64"))
case("divide_floor_int8_float", lambda t, a, b: t.divide(a, b, rounding_mode="floor"),
     const([-7, 7, -128], "int8"), const([2.0, -2.0, 3.0]), grad=False)

# ---------------------------------------------------------------- scatter_reduce / index_reduce (repeated indices)
for _r in ("sum", "prod", "mean", "amax", "amin"):
    for _self in (True, False):
        case(f"scatter_reduce_{_r}_{'self' if _self else 'noself'}",
             lambda t, x, i, s, r=_r, inc=_self: x.scatter_reduce(1, i, s, r, include_self=inc),
             randn(3, 4), randint(0, 4, 3, 6), randn(3, 6))
case("scatter_reduce_mean_int", lambda t, x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False),
     const([[-5, 7], [9, 2], [4, -3]], "int64"), randint(0, 2, 4, 2), const([[-2, 3], [4, 1], [7, -8], [5, 5]], "int64"))
# src larger than index (its leading corner is used): values only, as PyTorch 1.13's backward
# returns the gradient of the corner's shape there (an error).
case("scatter_reduce_amax_dim0_corner", lambda t, x, i, s: x.scatter_reduce(0, i, s, "amax"),
     randn(4, 3), randint(0, 4, 5, 2), randn(6, 3), grad=False)
for _r in ("prod", "mean", "amax", "amin"):
    case(f"index_reduce_{_r}", lambda t, x, i, s, r=_r: x.index_reduce(0, i, s, r, include_self=r != "mean"),
         randn(3, 4), const([2, 0, 2, 1, 2]), randn(5, 4))
case("scatter_multiply", lambda t, x, i, s: x.scatter(1, i, s, reduce="multiply"),
     randn(2, 5), randint(0, 5, 2, 3), randn(2, 3), grad=False)

# ---------------------------------------------------------------- Tensor.unfold (a view; overlapping windows)
case("tensor_unfold_overlap", lambda t, x: x.unfold(1, 3, 2) * 1.0, randn(2, 7, 3))
case("tensor_unfold_patches", lambda t, x: x.unfold(2, 2, 2).unfold(3, 3, 3) * 1.0, randn(1, 2, 4, 6))
case("tensor_unfold_gap", lambda t, x: x.unfold(0, 2, 3) * 1.0, randn(8))

# ---------------------------------------------------------------- special functions
case("erfinv", lambda t, x: t.erfinv(x), uniform(-0.99, 0.99, 3, 5))
case("erfc", lambda t, x: t.erfc(x), uniform(-3, 3, 7))
case("lgamma", lambda t, x: t.lgamma(x), uniform(0.05, 12, 9))
case("lgamma_negative", lambda t, x: t.lgamma(x), const([-0.5, -1.5, -2.25, -7.9]))
case("digamma", lambda t, x: t.digamma(x), uniform(0.05, 20, 9))
case("digamma_negative", lambda t, x: t.digamma(x), const([-0.5, -1.5, -2.25, -7.9]))
case("log10", lambda t, x: t.log10(x), uniform(0.01, 100, 6))
case("exp2", lambda t, x: t.exp2(x), randn(6))
case("signbit_inf", lambda t, x: (t.signbit(x), t.isposinf(x), t.isneginf(x)),
     const([-0.0, 0.0, -1.0, 2.0, float("inf"), float("-inf")]), grad=False)
case("copysign", lambda t, a, b: t.copysign(a, b), randn(3, 4), randn(4))
case("sinc", lambda t, x: t.sinc(x), const([0.0, 0.25, -1.5, 2.0, 3.7]))
case("float_power", lambda t, a, b: t.float_power(a, b), uniform(0.5, 2, 5), uniform(-2, 2, 5))
case("cov_weights", lambda t, x, f, a: t.cov(x, fweights=f, aweights=a), randn(3, 6), randint(0, 4, 6),
     uniform(0.1, 2, 6), frozen=(2,))
case("corrcoef", lambda t, x: t.corrcoef(x), randn(4, 7))
