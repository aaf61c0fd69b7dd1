"""The fused attention op (ops/attention.cpp; kernels attention / attention_backward in
cpu/attention.cpp and cuda/attention.cu, the CUDA ones run in the emulator) against the composed
reference (matmul, softmax, matmul: nn/_attention_functional.py) computed in float64: values and
the gradients of query, key and value, causal and not, cross attention (L != S, E != Ev), bool
and additive masks broadcast from small shapes, head dims up to 128, float32 / float16 / bfloat16
(and float64 on the CPU, with gradcheck and a double backward through the composed formula).
Operands in any layout (head-split views of a packed projection, expanded, strided rows; a
strided last dim or unfoldable batch dims are copied) give the same values and gradients.
Structure on CUDA: F.scaled_dot_product_attention takes the fused path, launches a constant
number of kernels (not one per tile or per row), allocates no (B, H, L, S) buffer, and a
nanoGPT attention block launches no copy either way."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES
from minitorch import _C, backends, nn
from minitorch.nn import functional as F
from minitorch.nn._attention_functional import _attention
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def to_np(t) -> np.ndarray:
    t = t.detach().cpu()
    return np.array((t.float() if t.dtype in (minitorch.float16, minitorch.bfloat16) else t).numpy(), copy=True)


def make(shape, seed, device, dtype, requires_grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return minitorch.tensor(a, dtype=dtype, device=device, requires_grad=requires_grad)


def mask_tensor(kind, B, H, L, S, device):
    """None, a bool (L, S) mask (True = attend; every row keeps key 0), or an additive
    (B, 1, 1, S) key-padding mask (0 or -inf; key 0 always kept)."""
    rng = np.random.default_rng(7)
    if kind == "bool":
        m = rng.random((L, S)) < 0.7
        m[:, 0] = True
        return minitorch.tensor(m, device=device)
    if kind == "additive":
        m = np.where(rng.random((B, 1, 1, S)) < 0.7, 0.0, -np.inf) + rng.standard_normal((B, 1, 1, S)) * 0.5
        m[..., 0] = 0.0
        return minitorch.tensor(m, dtype=minitorch.float32, device=device)
    return None


def reference(q, k, v, mask, causal, scale):
    """The composed formula in float64 on the CPU: output and the gradients of sum(out * g)."""
    qs, ks, vs = (minitorch.tensor(to_np(t), dtype=minitorch.float64, requires_grad=True) for t in (q, k, v))
    m = None if mask is None else (mask.cpu() if mask.dtype == minitorch.bool else mask.cpu().double())
    out = _attention(qs, ks, vs, m, 0.0, causal, scale)[0]
    g = np.random.default_rng(11).standard_normal(tuple(out.shape))
    (out * minitorch.tensor(g)).sum().backward()
    return to_np(out), g, [to_np(t.grad) for t in (qs, ks, vs)]


# (B, H, L, S, E, Ev, causal, mask)
CASES = [
    (2, 2, 5, 5, 8, 8, False, None),
    (2, 2, 33, 33, 16, 16, True, None),
    (2, 2, 64, 64, 64, 64, True, None),
    (1, 2, 5, 33, 16, 8, False, "bool"),     # cross attention, Ev != E
    (2, 2, 33, 17, 8, 8, False, "additive"),  # a key-padding mask, broadcast over heads and rows
    (1, 1, 1, 1, 8, 8, True, None),
    (1, 2, 9, 5, 8, 8, True, None),          # causal with L > S and L < S (top-left aligned)
    (1, 1, 5, 40, 8, 16, True, None),
    (1, 2, 100, 70, 24, 40, True, None),          # two 64-row forward blocks, three key tiles
    (1, 1, 70, 100, 64, 20, False, "additive"),  # the widest head of the register-tiled kernels
]
LONG = (1, 2, 20, 20, 128, 128, True, None)  # the largest head dim


def case_inputs(case, device, dtype):
    """q, k, v (requiring grad) and the mask of a case (B, H, L, S, E, Ev, causal, mask, ...)."""
    B, H, L, S, E, Ev, _, kind = case[:8]
    q, k, v = make((B, H, L, E), 1, device, dtype), make((B, H, S, E), 2, device, dtype), make((B, H, S, Ev), 3, device, dtype)
    return q, k, v, mask_tensor(kind, B, H, L, S, device)


def assert_matches(out, qkv, ref, atol, rtol):
    """out and the gradients of q, k, v from out.backward(g) against ref = (want, g, grads)."""
    want, g, grads = ref
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"
    assert tuple(out.shape) == want.shape, (tuple(out.shape), want.shape)
    np.testing.assert_allclose(to_np(out), want, atol=atol, rtol=rtol)
    out.backward(minitorch.tensor(g, dtype=out.dtype, device=out.device.type))
    for name, t, w in zip("qkv", qkv, grads):
        assert t.grad.dtype == out.dtype, name
        np.testing.assert_allclose(to_np(t.grad), w, atol=atol, rtol=rtol, err_msg=f"grad of {name}")


def check_case(case, device, dtype, atol, rtol):
    q, k, v, mask = case_inputs(case, device, dtype)
    causal, scale = case[6], 1.0 / np.sqrt(case[4])
    out = _C._scaled_dot_product_attention(q, k, v, mask, causal, scale)
    assert out.dtype == dtype and out.device.type == device
    assert_matches(out, (q, k, v), reference(q, k, v, mask, causal, scale), atol, rtol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES + [LONG], ids=lambda c: "B{}H{}L{}S{}E{}Ev{}{}{}".format(
    *c[:6], "-causal" if c[6] else "", f"-{c[7]}" if c[7] else ""))
def test_float32_matches_composed(device, case):
    check_case(case, device, minitorch.float32, 2e-5, 2e-4)


@needs_cuda
@pytest.mark.parametrize("dtype, tol", [(minitorch.float16, 2e-2), (minitorch.bfloat16, 8e-2)], ids=["f16", "bf16"])
@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[4]], ids=["causal", "cross-bool", "additive"])
def test_16bit_on_cuda_matches_composed(dtype, tol, case):
    check_case(case, "cuda", dtype, tol, tol)


def test_float64_cpu_matches_and_gradchecks():
    check_case(CASES[3], "cpu", minitorch.float64, 1e-10, 1e-9)
    q, k, v = make((1, 2, 4, 3), 1, "cpu", minitorch.float64), make((1, 2, 5, 3), 2, "cpu", minitorch.float64), \
        make((1, 2, 5, 2), 3, "cpu", minitorch.float64)
    assert gradcheck(lambda a, b, c: _C._scaled_dot_product_attention(a, b, c, None, True, 0.7), (q, k, v))


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward_uses_the_composed_formula(device):
    """create_graph: the backward is the composed formula, so second derivatives match it."""
    q, k, v = make((1, 2, 6, 4), 1, device, minitorch.float32), make((1, 2, 6, 4), 2, device, minitorch.float32), \
        make((1, 2, 6, 4), 3, device, minitorch.float32)
    results = []
    for fn in (lambda: _C._scaled_dot_product_attention(q, k, v, None, True, 0.5),
               lambda: _attention(q, k, v, None, 0.0, True, 0.5)[0]):
        out = fn()
        (gq,) = minitorch.autograd.grad((out * out).sum(), (q,), create_graph=True)
        (ggk,) = minitorch.autograd.grad((gq * gq).sum(), (k,))
        results.append((to_np(gq), to_np(ggk)))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-3)


# ------------------------------------------------------------------ routing and structure ----

def kernel_names(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [kn.name for e in prof.events() for kn in e.kernels]


@needs_cuda
def test_functional_takes_the_fused_path_on_cuda_only_where_it_applies():
    q = make((2, 2, 6, 8), 1, "cuda", minitorch.float32)
    assert F.scaled_dot_product_attention(q, q, q, is_causal=True).grad_fn.name() == \
        "ScaledDotProductFlashAttentionBackward0"
    # dropout below 1 is fused too (test_attention_dropout.py); composed: dropout_p = 1, a head
    # dim over 128, float64, the switch off, and on the CPU
    assert F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).grad_fn.name() == \
        "ScaledDotProductFlashAttentionBackward0"
    assert F.scaled_dot_product_attention(q, q, q, dropout_p=1.0).grad_fn.name() != \
        "ScaledDotProductFlashAttentionBackward0"
    wide = make((1, 1, 3, 129), 1, "cuda", minitorch.float32)
    assert F.scaled_dot_product_attention(wide, wide, wide).grad_fn.name() != "ScaledDotProductFlashAttentionBackward0"
    with pytest.raises(Exception, match="head dims up to 128"):
        _C._scaled_dot_product_attention(wide, wide, wide, None, False, 1.0)
    q64 = make((1, 1, 3, 4), 1, "cuda", minitorch.float64)
    assert F.scaled_dot_product_attention(q64, q64, q64).grad_fn.name() != "ScaledDotProductFlashAttentionBackward0"
    backends.cuda.enable_flash_sdp(False)
    try:
        off = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    finally:
        backends.cuda.enable_flash_sdp(True)
    assert off.grad_fn.name() != "ScaledDotProductFlashAttentionBackward0"
    on = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    np.testing.assert_allclose(to_np(on), to_np(off), atol=1e-5, rtol=1e-4)
    qc = make((2, 2, 6, 8), 1, "cpu", minitorch.float32)
    assert F.scaled_dot_product_attention(qc, qc, qc).grad_fn.name() != "ScaledDotProductFlashAttentionBackward0"


@needs_cuda
def test_constant_launches_forward_and_backward():
    """One kernel forward, three backward (D, dK and dV, dQ), whatever L and S: the tiles loop
    inside the kernels."""
    counts = []
    for T in (16, 96):
        q, k, v = (make((2, 2, T, 16), s, "cuda", minitorch.float32) for s in (1, 2, 3))
        out = [None]
        fwd = kernel_names(lambda: out.__setitem__(0, F.scaled_dot_product_attention(q, k, v, is_causal=True)))
        g = minitorch.ones_like(out[0])
        bwd = kernel_names(lambda: out[0].backward(g))
        counts.append((fwd, bwd))
    for fwd, bwd in counts:
        assert [n for n in fwd if "attention" in n] == fwd and len(fwd) == 1, fwd
        assert len([n for n in bwd if "attention" in n]) == 3, bwd
    assert counts[0] == counts[1]


def peak_bytes(fn) -> int:
    minitorch.cuda.synchronize()
    base = minitorch.cuda.memory_allocated("cuda")
    minitorch.cuda.reset_peak_memory_stats("cuda")
    fn()
    return minitorch.cuda.max_memory_allocated("cuda") - base


@needs_cuda
def test_no_scores_matrix_in_memory():
    """Forward and backward of T = 256: the fused path's peak stays below one (B, H, T, T)
    float32 matrix, which the composed path needs several of."""
    B, H, T, d = 1, 2, 256, 16
    q, k, v = (make((B, H, T, d), s, "cuda", minitorch.float32) for s in (1, 2, 3))
    scores = B * H * T * T * 4

    def run():
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

    fused = peak_bytes(run)
    backends.cuda.enable_flash_sdp(False)
    try:
        composed = peak_bytes(run)
    finally:
        backends.cuda.enable_flash_sdp(True)
    assert fused < scores // 2, (fused, composed, scores)
    assert composed > scores, (fused, composed, scores)


@needs_cuda
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_and_encoder_layer_use_it(batch_first):
    minitorch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 2, batch_first=batch_first).to("cuda")
    x = make((3, 5, 16) if batch_first else (5, 3, 16), 1, "cuda", minitorch.float32)  # L = 5, N = 3
    kpm = minitorch.tensor(np.array([[False] * 5, [False, False, False, True, True], [False] * 4 + [True]]),
                           device="cuda")
    fused, _ = mha(x, x, x, key_padding_mask=kpm, need_weights=False)
    composed, w = mha(x, x, x, key_padding_mask=kpm, need_weights=True)
    assert w is not None
    np.testing.assert_allclose(to_np(fused), to_np(composed), atol=1e-5, rtol=1e-4)
    names = kernel_names(lambda: mha(x, x, x, key_padding_mask=kpm, need_weights=False))
    assert any("attention_mma_kernel" in n for n in names), names  # float32, head dim 8

    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=batch_first).to("cuda")
    mask = nn.Transformer.generate_square_subsequent_mask(5, device="cuda")
    outs = []
    for enabled in (True, False):
        backends.cuda.enable_flash_sdp(enabled)
        try:
            xx = minitorch.tensor(to_np(x), device="cuda", requires_grad=True)
            y = layer(xx, src_mask=mask)
            y.sum().backward()
            outs.append((to_np(y), to_np(xx.grad)))
        finally:
            backends.cuda.enable_flash_sdp(True)
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-3)


# ------------------------------------------------------------------ operands in any layout ----
# The kernels read q, k, v as (B0, B1, rows, width) views with any strides but a contiguous last
# dim (AttentionRows, attention_math.h), and write the output and gradients in the order of
# their strides. Each layout below makes leaves (the tensors that get gradients) and the views
# of them the op sees; values and gradients must match the composed reference on the views.

def _leaf(shape, seed, device, dtype):
    return make(shape, seed, device, dtype)


def layout_inputs(layout, device, dtype):
    """(leaves, (q, k, v), causal): B 2, H 2, L = S = 7 (5 keys for cross), E = Ev = 16."""
    B, H, T, E = 2, 2, 7, 16
    if layout == "head-split":  # nanoGPT: one (B, T, 3 * H * E) projection, split, heads moved forward
        x = _leaf((B, T, 3 * H * E), 1, device, dtype)
        q, k, v = (t.reshape(B, T, H, E).transpose(1, 2) for t in x.split(H * E, dim=2))
        return [x], (q, k, v), True
    if layout == "heads-outer":  # (H, B, T, E) seen as (B, H, T, E): the pair strides swap
        leaves = [_leaf((H, B, T, E), s, device, dtype) for s in (1, 2, 3)]
        return leaves, tuple(t.transpose(0, 1) for t in leaves), False
    if layout == "expanded-kv":  # one key/value head shared by every query head (stride 0)
        q = _leaf((B, H, T, E), 1, device, dtype)
        k, v = _leaf((B, 1, 5, E), 2, device, dtype), _leaf((B, 1, 5, E), 3, device, dtype)
        return [q, k, v], (q, k.expand(B, H, 5, E), v.expand(B, H, 5, E)), False
    if layout == "every-other-row":  # a row stride of 2 * E
        leaves = [_leaf((B, H, 2 * T, E), s, device, dtype) for s in (1, 2, 3)]
        return leaves, tuple(t[:, :, ::2] for t in leaves), True
    if layout == "strided-last-dim":  # the last dim strided: the op copies it
        leaves = [_leaf((B, H, T, 2 * E), s, device, dtype) for s in (1, 2, 3)]
        return leaves, tuple(t[..., ::2] for t in leaves), False
    if layout == "five-dims":  # (A, B, H, T, E) whose first two dims do not fold: a copy of those
        leaves = [_leaf((B, 3, H, T, E), s, device, dtype) for s in (1, 2, 3)]
        return leaves, tuple(t.transpose(0, 1) for t in leaves), True
    if layout == "three-dims":  # (B, T, E) and (T, E): one or no batch dim
        a, b = _leaf((B, T, E), 1, device, dtype), _leaf((T, E), 2, device, dtype)
        return [a, b], (a, a.transpose(1, 2).transpose(1, 2), b.expand(B, T, E)), True
    raise ValueError(layout)


LAYOUTS = ["head-split", "heads-outer", "expanded-kv", "every-other-row", "strided-last-dim", "five-dims",
           "three-dims"]


def check_layout(layout, device, dtype, atol, rtol):
    leaves, qkv, causal = layout_inputs(layout, device, dtype)
    scale = 0.25
    want, g, _ = reference(*qkv, None, causal, scale)
    out = _C._scaled_dot_product_attention(*qkv, None, causal, scale)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"
    np.testing.assert_allclose(to_np(out), want, atol=atol, rtol=rtol)
    out.backward(minitorch.tensor(g, dtype=dtype, device=device))
    # the leaves' gradients, from the reference's graph on float64 copies of the same views
    ref_leaves = [minitorch.tensor(to_np(t), dtype=minitorch.float64, requires_grad=True) for t in leaves]
    ref_qkv = layout_inputs_from(layout, ref_leaves)
    (_attention(*ref_qkv, None, 0.0, causal, scale)[0] * minitorch.tensor(g)).sum().backward()
    for t, r in zip(leaves, ref_leaves):
        assert t.grad.dtype == dtype and t.grad.shape == t.shape
        np.testing.assert_allclose(to_np(t.grad), to_np(r.grad), atol=atol, rtol=rtol, err_msg=layout)


def layout_inputs_from(layout, leaves):
    """The views of layout_inputs, of other leaves (the reference's float64 copies)."""
    B, H, T, E = 2, 2, 7, 16
    if layout == "head-split":
        return tuple(t.reshape(B, T, H, E).transpose(1, 2) for t in leaves[0].split(H * E, dim=2))
    if layout in ("heads-outer", "five-dims"):
        return tuple(t.transpose(0, 1) for t in leaves)
    if layout == "expanded-kv":
        q, k, v = leaves
        return q, k.expand(B, H, 5, E), v.expand(B, H, 5, E)
    if layout == "every-other-row":
        return tuple(t[:, :, ::2] for t in leaves)
    if layout == "strided-last-dim":
        return tuple(t[..., ::2] for t in leaves)
    a, b = leaves
    return a, a.transpose(1, 2).transpose(1, 2), b.expand(B, T, E)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_operands_in_any_layout_match_composed(device, layout):
    check_layout(layout, device, minitorch.float32, 2e-5, 2e-4)


@needs_cuda
@pytest.mark.parametrize("dtype, tol", [(minitorch.float16, 2e-2), (minitorch.bfloat16, 8e-2)], ids=["f16", "bf16"])
@pytest.mark.parametrize("layout", ["head-split", "heads-outer", "expanded-kv", "every-other-row"])
def test_16bit_operands_in_any_layout_on_tensor_cores(dtype, tol, layout):
    """E = 16: the tensor-core kernels, whose tiles are staged from strided rows too."""
    check_layout(layout, "cuda", dtype, tol, tol)


@needs_cuda
def test_head_split_attention_block_copies_nothing():
    """A nanoGPT attention block: qkv projection, split, heads moved forward, attention, heads
    moved back, output projection. The attention reads q, k, v where the projection wrote them,
    and writes its output (and the backward its gradients) in (N, T, H, D) order, so neither
    direction launches a copy: only the two GEMMs, the split's backward (a cat) and the
    attention kernels."""
    N, T, H, D = 2, 9, 2, 16
    rng = np.random.default_rng(1)
    x, w_qkv, w_out = (minitorch.tensor(rng.standard_normal(shape) * scale, dtype=minitorch.float32, device="cuda",
                                        requires_grad=True)
                       for shape, scale in (((N, T, H * D), 1.0), ((3 * H * D, H * D), 0.2), ((H * D, H * D), 0.2)))

    def block():
        q, k, v = (t.reshape(N, T, H, D).transpose(1, 2) for t in F.linear(x, w_qkv).split(H * D, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.linear(y.transpose(1, 2).reshape(N, T, H * D), w_out)

    out = [None]
    g = make((N, T, H * D), 4, "cuda", minitorch.float32, requires_grad=False)
    fwd = kernel_names(lambda: out.__setitem__(0, block()))
    bwd = kernel_names(lambda: out[0].backward(g))
    assert not [n for n in fwd + bwd if "copy" in n], (fwd, bwd)
    assert len([n for n in fwd if "attention" in n]) == 1 and len([n for n in bwd if "attention" in n]) == 3
    assert len(fwd) == 3 and len(bwd) == 8, (fwd, bwd)  # bwd: 4 GEMMs, 3 attention kernels, 1 cat
    # and the values: the same block composed
    y_fused = to_np(out[0])
    grads = [to_np(t.grad) for t in (x, w_qkv, w_out)]
    for t in (x, w_qkv, w_out):
        t.grad = None
    backends.cuda.enable_flash_sdp(False)
    try:
        composed = block()
        composed.backward(g)
    finally:
        backends.cuda.enable_flash_sdp(True)
    np.testing.assert_allclose(y_fused, to_np(composed), atol=1e-5, rtol=1e-4)
    for a, t in zip(grads, (x, w_qkv, w_out)):
        np.testing.assert_allclose(a, to_np(t.grad), atol=1e-4, rtol=1e-4)
