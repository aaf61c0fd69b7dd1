"""Dropout inside the fused attention (AttentionDropout in attention_math.h; the kernels of
cpu/attention.cpp and cuda/attention.cu, the CUDA ones run in the emulator). The kernels never
store the mask: weight (b, i, j) is kept when a hash of (seed, offset, b, i, j) says so, and the
backward draws it again. _C._attention_dropout_mask builds the same mask on the host, so every
test here compares with the composed formula (softmax, times mask / (1 - p), matmul) in float64
under that mask: values and the gradients of query, key and value, for float32 / float16 /
bfloat16, causal and masked, head dims 16 / 64 / 128, L != S. Then: p = 0 is the call without
dropout bit for bit; the kept fraction is about 1 - p; one seed gives one output and the next
call another mask; the launches and the peak memory are those of the call without dropout; and
nn.MultiheadAttention / TransformerEncoderLayer with dropout in training take the fused path."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES
from minitorch import _C, nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck
# the fused attention tests' helpers: a case's inputs and mask (None / bool (L, S) / additive
# (B, 1, 1, S)), and the comparison of output and gradients with a reference
from test_attention_fused import assert_matches, case_inputs, kernel_names, make, needs_cuda, to_np

FUSED = "ScaledDotProductFlashAttentionBackward0"


def keep_mask(seed, offset, B, H, L, S, p) -> np.ndarray:
    """The kernels' keep mask for (B, H) pairs, (B, H, L, S) bool."""
    keep = _C._attention_dropout_mask(seed, offset, B * H, L, S, p)
    assert tuple(keep.shape) == (B * H, L, S) and keep.dtype == minitorch.bool and keep.device.type == "cpu"
    return to_np(keep).reshape(B, H, L, S)


def reference(q, k, v, mask, causal, scale, keep, p):
    """softmax(q k^T * scale + mask) * keep / (1 - p) @ v in float64 on the CPU, with the gradients
    of sum(out * g)."""
    qs, ks, vs = (minitorch.tensor(to_np(t), dtype=minitorch.float64, requires_grad=True) for t in (q, k, v))
    L, S = qs.shape[-2], ks.shape[-2]
    scores = (qs @ ks.transpose(-2, -1)) * scale
    if causal:
        scores = scores + minitorch.tensor(np.where(np.tril(np.ones((L, S), bool)), 0.0, -np.inf))
    if mask is not None:
        m = to_np(mask)
        scores = scores + minitorch.tensor(np.where(m, 0.0, -np.inf) if m.dtype == bool else m.astype(np.float64))
    weights = F.softmax(scores, -1) * minitorch.tensor(keep / (1.0 - p))
    out = weights @ vs
    g = np.random.default_rng(11).standard_normal(tuple(out.shape))
    (out * minitorch.tensor(g)).sum().backward()
    return to_np(out), g, [to_np(t.grad) for t in (qs, ks, vs)]


# (B, H, L, S, E, Ev, causal, mask, p)
CASES = [
    (2, 2, 33, 33, 16, 16, True, None, 0.2),
    (1, 2, 5, 40, 64, 64, False, "bool", 0.5),      # cross attention, L != S
    (2, 2, 33, 17, 16, 8, False, "additive", 0.1),  # key padding, Ev != E
    (1, 2, 9, 5, 16, 16, True, None, 0.3),          # causal with L > S
    (1, 1, 20, 24, 128, 128, True, None, 0.25),     # the largest head dim
]
IDS = ["B{}H{}L{}S{}E{}Ev{}{}{}-p{}".format(*c[:6], "-causal" if c[6] else "", f"-{c[7]}" if c[7] else "", c[8])
       for c in CASES]


def check_case(case, device, dtype, atol, rtol, seed=1234, offset=77):
    q, k, v, mask = case_inputs(case, device, dtype)
    B, H, L, S, E, _, causal, _, p = case
    scale = 1.0 / np.sqrt(E)
    out = _C._scaled_dot_product_attention(q, k, v, mask, causal, scale, p, seed, offset)
    assert out.dtype == dtype and out.device.type == device
    keep = keep_mask(seed, offset, B, H, L, S, p)
    assert 0 < keep.sum() < keep.size  # something dropped, something kept
    assert_matches(out, (q, k, v), reference(q, k, v, mask, causal, scale, keep, p), atol, rtol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_matches_composed_with_the_same_mask(device, case):
    check_case(case, device, minitorch.float32, 5e-5, 5e-4)


@needs_cuda
@pytest.mark.parametrize("dtype, tol", [(minitorch.float16, 3e-2), (minitorch.bfloat16, 1.2e-1)], ids=["f16", "bf16"])
@pytest.mark.parametrize("case", CASES[:3], ids=IDS[:3])
def test_16bit_on_cuda_matches_composed_with_the_same_mask(dtype, tol, case):
    check_case(case, "cuda", dtype, tol, tol)


def test_float64_cpu_matches_and_gradchecks():
    check_case(CASES[1], "cpu", minitorch.float64, 1e-10, 1e-9)
    # the mask is fixed by (seed, offset): a smooth function of q, k and v to check numerically
    qkv = tuple(make(shape, i, "cpu", minitorch.float64) for i, shape in enumerate(((1, 2, 4, 3), (1, 2, 5, 3),
                                                                                    (1, 2, 5, 2)), 1))
    assert gradcheck(lambda a, b, c: _C._scaled_dot_product_attention(a, b, c, None, True, 0.7, 0.4, 5, 9), qkv)


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward_uses_the_same_mask(device):
    """create_graph: the composed formula with the host-built mask; its first derivative equals
    the kernels' (so the two draw one mask), and its second derivative exists."""
    q, k, v = (make((1, 2, 6, 4), s, device, minitorch.float32) for s in (1, 2, 3))

    def run():
        return _C._scaled_dot_product_attention(q, k, v, None, True, 0.5, 0.3, 21, 4)

    out = run()
    (gq_kernel,) = minitorch.autograd.grad((out * out).sum(), (q,))
    out = run()
    (gq,) = minitorch.autograd.grad((out * out).sum(), (q,), create_graph=True)
    np.testing.assert_allclose(to_np(gq), to_np(gq_kernel), atol=1e-5, rtol=1e-4)
    (ggk,) = minitorch.autograd.grad((gq * gq).sum(), (k,))
    assert np.isfinite(to_np(ggk)).all()


@pytest.mark.parametrize("device", DEVICES)
def test_p0_is_the_call_without_dropout_bit_for_bit(device):
    outs = []
    for extra in ((), (0.0, 99, 5)):
        q, k, v = (make((2, 2, 33, 16), s, device, minitorch.float32) for s in (1, 2, 3))
        out = _C._scaled_dot_product_attention(q, k, v, None, True, 0.25, *extra)
        out.backward(minitorch.ones_like(out))
        outs.append([to_np(t) for t in (out, q.grad, k.grad, v.grad)])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_mask_is_a_function_of_its_arguments_and_keeps_about_1_minus_p():
    a = keep_mask(3, 0, 4, 2, 64, 64, 0.3)
    np.testing.assert_array_equal(a, keep_mask(3, 0, 4, 2, 64, 64, 0.3))
    assert abs(a.mean() - 0.7) < 0.02, a.mean()
    # counters are consecutive over (pair, i, j): offset n starts n weights further on
    b = keep_mask(3, 64, 4, 2, 64, 64, 0.3)
    np.testing.assert_array_equal(a.reshape(-1)[64:], b.reshape(-1)[:-64])
    assert (a != keep_mask(4, 0, 4, 2, 64, 64, 0.3)).any()  # another seed, another mask
    assert keep_mask(3, 0, 1, 1, 8, 8, 0.0).all()
    with pytest.raises(ValueError, match="attention_dropout_mask"):
        _C._attention_dropout_mask(3, 0, 1, 8, 8, 1.0)


@needs_cuda
def test_kernel_applies_that_mask_and_keeps_about_1_minus_p():
    """q = k = 0: every weight is 1 / S; v = the identity: output row i is keep[i] / (S (1 - p))."""
    B, H, L, S, p = 2, 2, 64, 64, 0.3
    q = minitorch.zeros(B, H, L, 16, device="cuda")
    k = minitorch.zeros(B, H, S, 16, device="cuda")
    v = minitorch.tensor(np.broadcast_to(np.eye(S), (B, H, S, S)).copy(), dtype=minitorch.float32, device="cuda")
    out = to_np(_C._scaled_dot_product_attention(q, k, v, None, False, 1.0, p, 8, 123))
    keep = keep_mask(8, 123, B, H, L, S, p)
    np.testing.assert_allclose(out * S * (1 - p), keep.astype(np.float64), atol=1e-5)
    assert abs(keep.mean() - (1 - p)) < 0.02, keep.mean()


@needs_cuda
def test_functional_seeds_from_the_generator_and_each_call_draws_another_mask():
    B, H, L, S = 2, 2, 12, 10
    q, k, v = make((B, H, L, 16), 1, "cuda", minitorch.float32), make((B, H, S, 16), 2, "cuda", minitorch.float32), \
        make((B, H, S, 16), 3, "cuda", minitorch.float32)
    minitorch.manual_seed(5)
    state = _C._cuda_rng_state()
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    assert first.grad_fn.name() == FUSED
    seed, offset = state
    assert _C._cuda_rng_state() == (seed, offset + B * H * L * S)  # the mask's counters are used up
    second = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    assert not np.array_equal(to_np(first), to_np(second))
    minitorch.manual_seed(5)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    np.testing.assert_array_equal(to_np(first), to_np(again))
    # the functional's output is the op's with the generator's (seed, offset)
    direct = _C._scaled_dot_product_attention(q, k, v, None, False, 0.25, 0.4, seed, offset)
    np.testing.assert_array_equal(to_np(first), to_np(direct))
    # p = 0 leaves the generator alone
    state = _C._cuda_rng_state()
    F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    assert _C._cuda_rng_state() == state
    # p = 1 drops everything: the composed path (the fused op takes p < 1)
    assert F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).grad_fn.name() != FUSED
    with pytest.raises(ValueError, match="dropout_p"):
        _C._scaled_dot_product_attention(q, k, v, None, False, 0.25, 1.0, 0, 0)


@needs_cuda
def test_dropout_adds_no_launch_and_no_scores_matrix():
    """One kernel forward and three backward, as without dropout; the peak of forward and
    backward at T = 256 stays below one (B, H, T, T) float32 matrix."""
    B, H, T, d = 1, 2, 256, 16
    q, k, v = (make((B, H, T, d), s, "cuda", minitorch.float32) for s in (1, 2, 3))
    out = [None]
    fwd = kernel_names(lambda: out.__setitem__(0, F.scaled_dot_product_attention(q, k, v, dropout_p=0.1,
                                                                                is_causal=True)))
    g = minitorch.ones_like(out[0])
    bwd = kernel_names(lambda: out[0].backward(g))
    assert len(fwd) == 1 and "attention" in fwd[0], fwd
    assert len(bwd) == 3 and all("attention" in n for n in bwd), bwd
    out[0] = g = None

    minitorch.cuda.synchronize()
    base = minitorch.cuda.memory_allocated("cuda")
    minitorch.cuda.reset_peak_memory_stats("cuda")
    F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True).sum().backward()
    peak = minitorch.cuda.max_memory_allocated("cuda") - base
    assert peak < B * H * T * T * 4 // 2, peak


@needs_cuda
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_and_encoder_layer_with_dropout_use_it(batch_first):
    minitorch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 2, dropout=0.3, batch_first=batch_first).to("cuda")
    x = make((3, 5, 16) if batch_first else (5, 3, 16), 1, "cuda", minitorch.float32)
    names = kernel_names(lambda: mha(x, x, x, need_weights=False))
    assert any("attention_mma_kernel" in n for n in names), names  # float32, head dim 8
    train = to_np(mha(x, x, x, need_weights=False)[0])
    mha.eval()  # dropout 0: the plain fused call
    a, b = to_np(mha(x, x, x, need_weights=False)[0]), to_np(mha(x, x, x, need_weights=False)[0])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(train, a)

    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.2, batch_first=batch_first).to("cuda")
    mask = nn.Transformer.generate_square_subsequent_mask(5, device="cuda")
    xx = minitorch.tensor(to_np(x), device="cuda", requires_grad=True)
    names = kernel_names(lambda: layer(xx, src_mask=mask).sum().backward())
    assert sum("attention" in n for n in names) == 4, names  # forward and the three backward kernels
    assert np.isfinite(to_np(xx.grad)).all()
    # with the generator replayed, the layer's output repeats
    outs = []
    for _ in range(2):
        minitorch.manual_seed(9)
        outs.append(to_np(layer(xx, src_mask=mask)))
    np.testing.assert_array_equal(*outs)


@needs_cuda
@pytest.mark.parametrize("family, dtype", [("rows", minitorch.float32), ("tiled", minitorch.float32),
                                           ("mma", minitorch.float32), ("rows", minitorch.bfloat16),
                                           ("tiled", minitorch.bfloat16), ("wmma", minitorch.bfloat16),
                                           ("mma", minitorch.bfloat16)],
                         ids=["rows-f32", "tiled-f32", "mma-f32", "rows-bf16", "tiled-bf16", "wmma-bf16", "mma-bf16"])
def test_each_kernel_family_matches_composed(monkeypatch, family, dtype):
    """MINITORCH_CUDA_ATTENTION=rows|tiled|wmma|mma runs that family of kernels wherever it can take
    the call (rows: every call; tiled: head dims up to 64; wmma: 16-bit head dims that are multiples
    of 16; mma: head dims up to 128 that are multiples of 8 in float32, of 16 in 16 bits; else the
    default), on the fused tests' cases and on these dropout cases: every family stays tested on
    the small heads most tests use, whichever one is the default there."""
    import test_attention_fused as fused
    monkeypatch.setenv("MINITORCH_CUDA_ATTENTION", family)
    f32 = dtype == minitorch.float32
    tol = (5e-5, 5e-4) if f32 else (1.2e-1, 1.2e-1)
    for case in fused.CASES + CASES:
        E, Ev = case[4], case[5]
        tiled = E <= 64 and Ev <= 64
        depth = 8 if f32 else 16
        mma = E <= 128 and Ev <= 128 and E % depth == 0 and Ev % depth == 0
        wmma = not f32 and E % 16 == 0 and Ev % 16 == 0
        default = ("attention_mma_kernel" if mma else "attention_tiled_kernel" if tiled
                   else "attention_wmma_kernel" if wmma else "attention_kernel")
        want = {"rows": "attention_kernel", "tiled": "attention_tiled_kernel" if tiled else default,
                "wmma": "attention_wmma_kernel" if wmma else default,
                "mma": "attention_mma_kernel" if mma else default}[family]
        q, k, v = (make((1, 1, 4, d), s, "cuda", dtype) for s, d in ((1, E), (2, E), (3, Ev)))
        names = [n.split("<")[0] for n in kernel_names(lambda: F.scaled_dot_product_attention(q, k, v))]
        assert want in names, (case, names)
        if len(case) == 9:
            check_case(case, "cuda", dtype, *tol)
        else:
            fused.check_case(case, "cuda", dtype, *tol)


@needs_cuda
def test_a_sequence_past_the_grids_limit_is_a_value_error():
    """The tiles of rows go in grid.y (at most 65535 blocks of 8 rows at the smallest): a longer
    sequence is refused by name before any launch, not a failed launch."""
    q = minitorch.zeros(1, 1, 65535 * 8 + 1, 8, device="cuda")
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: .*up to 524280 long, got L = 524281"):
        F.scaled_dot_product_attention(q, q, q, is_causal=True)
