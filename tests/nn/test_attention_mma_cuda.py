"""The fused attention on tensor cores through mma.sync (cuda/attention_mma.cu, cuda/mma_sync.cuh),
scores kept in registers: float32 as m16n8k8 TF32 products at float32 accuracy (3xTF32), float16
and bfloat16 as m16n8k16. The emulator runs the same kernels with the fragment layouts PTX
documents (an emulated mma.sync), so a kernel that puts an element in the wrong lane fails here as
it would on a GPU.

Against the composed reference in float64 -- float32 at float32's tolerances (one TF32 product
alone is off by about 5e-4, which fails them), 16-bit at the other 16-bit kernels' -- values and
gradients, head dims 8 (16 in 16 bits) to 128 and E != Ev, L and S past and short of the 64-row blocks and
32-row tiles, causal with L != S, bool and additive masks, dropout, operands in strided layouts.
Then which calls take these kernels, their launches, and that no (L, S) buffer is allocated."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import minitorch
from minitorch import _C
from minitorch.nn import functional as F
from test_attention_dropout import check_case as check_dropout_case
from test_attention_fused import check_case, check_layout, kernel_names, make, needs_cuda, peak_bytes, to_np

TOL = (2e-5, 2e-4)  # atol, rtol: float32's, as test_attention_fused's float32 tests
HALF = [(minitorch.float16, 2e-2), (minitorch.bfloat16, 8e-2)]  # as the other 16-bit kernels' tests
HALF_IDS = ["f16", "bf16"]

# (B, H, L, S, E, Ev, causal, mask)
CASES = [
    (3, 1, 1, 1, 8, 8, False, None),            # one query, one key
    (1, 1, 130, 3, 8, 64, False, None),         # three 64-row blocks, one short key tile
    (1, 1, 3, 130, 64, 8, True, None),          # causal, L < S: most keys masked for every row
    (2, 3, 65, 65, 40, 24, False, "bool"),      # one row past a block, a bool mask
    (1, 2, 97, 33, 56, 16, False, "additive"),  # key padding, S one past a tile
    (2, 2, 64, 64, 64, 64, True, None),         # exact blocks, the widest 64-column head
    (1, 2, 70, 45, 128, 96, True, None),        # the kernels' 128-column form (operands re-read)
    (1, 1, 33, 40, 72, 128, False, "bool"),     # E != Ev on either side of 64
]
# 16-bit heads are multiples of 16
CASES16 = [
    (3, 1, 1, 1, 16, 16, False, None),
    (1, 1, 130, 3, 16, 64, False, None),
    (1, 1, 3, 130, 64, 16, True, None),
    (2, 3, 65, 65, 48, 32, False, "bool"),
    (1, 2, 97, 33, 32, 16, False, "additive"),
    (2, 2, 64, 64, 64, 64, True, None),
    (1, 2, 70, 45, 128, 128, True, None),       # the widest head: the kernels' 128-column form
    (2, 1, 33, 65, 96, 80, False, "additive"),   # between 64 and 128, E != Ev
]


def ids(cases):
    return ["B{}H{}L{}S{}E{}Ev{}{}{}".format(*c[:6], "-causal" if c[6] else "", f"-{c[7]}" if c[7] else "")
            for c in cases]


@pytest.fixture(autouse=True)
def default_family(monkeypatch):
    """Head dims up to 128 that are multiples of 8 in float32, of 16 in 16 bits, take these kernels
    by default."""
    monkeypatch.delenv("MINITORCH_CUDA_ATTENTION", raising=False)


def takes_mma(E, Ev, dtype=minitorch.float32):
    q, k = make((1, 1, 4, E), 1, "cuda", dtype), make((1, 1, 4, E), 2, "cuda", dtype)
    v = make((1, 1, 4, Ev), 3, "cuda", dtype)
    names = kernel_names(lambda: F.scaled_dot_product_attention(q, k, v))
    return "attention_mma_kernel" in [n.split("<")[0] for n in names]


@needs_cuda
@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_tf32_attention_cuda_matches_composed_at_float32_tolerance(case):
    assert takes_mma(case[4], case[5])
    check_case(case, "cuda", minitorch.float32, *TOL)


@needs_cuda
@pytest.mark.parametrize("dtype, tol", HALF, ids=HALF_IDS)
@pytest.mark.parametrize("case", CASES16, ids=ids(CASES16))
def test_16bit_mma_attention_cuda_matches_composed(dtype, tol, case):
    assert takes_mma(case[4], case[5], dtype)
    check_case(case, "cuda", dtype, tol, tol)


@needs_cuda
def test_tf32_attention_cuda_keeps_float32_accuracy_on_wide_ranges():
    """Inputs spanning 1e-3 .. 1e3 in magnitude: a single TF32 product keeps 10 mantissa bits, the
    split pair about 21, so the result still matches float64 closely."""
    rng = np.random.default_rng(5)

    def spread(shape):
        return rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 1, shape)

    q, k, v = spread((1, 2, 40, 32)), spread((1, 2, 40, 32)), spread((1, 2, 40, 32)) * 100
    got = F.scaled_dot_product_attention(*(minitorch.tensor(a, dtype=minitorch.float32, device="cuda")
                                           for a in (q, k, v)), is_causal=True)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32)
    s = np.where(np.tril(np.ones((40, 40), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    err = np.abs(to_np(got) - want).max() / np.abs(want).max()
    assert err < 1e-5, err  # about 1e-6 in the emulator; one TF32 product alone: about 5e-4


DROPOUT = [(1, 2, 70, 40, 16, 16, False, "bool", 0.2), (2, 1, 65, 65, 32, 32, True, None, 0.3)]


@needs_cuda
@pytest.mark.parametrize("case", DROPOUT, ids=["bool", "causal"])
def test_tf32_attention_cuda_with_dropout_matches_composed(case):
    """The same keep mask as the forward, recomputed by both backward kernels."""
    check_dropout_case(case, "cuda", minitorch.float32, *TOL)


@needs_cuda
@pytest.mark.parametrize("dtype, tol", [(minitorch.float16, 3e-2), (minitorch.bfloat16, 1.2e-1)], ids=HALF_IDS)
@pytest.mark.parametrize("case", DROPOUT, ids=["bool", "causal"])
def test_16bit_mma_attention_cuda_with_dropout_matches_composed(dtype, tol, case):
    check_dropout_case(case, "cuda", dtype, tol, tol)


@needs_cuda
@pytest.mark.parametrize("layout", ["head-split", "heads-outer", "expanded-kv", "every-other-row"])
def test_mma_attention_cuda_reads_strided_operands(layout):
    """E = 16: float32 and 16-bit take these kernels."""
    check_layout(layout, "cuda", minitorch.float32, *TOL)
    for dtype, tol in HALF:
        check_layout(layout, "cuda", dtype, tol, tol)


@needs_cuda
def test_which_calls_take_mma_cuda():
    """Head dims up to 128 that are multiples of the MMA's depth, 8 for TF32 and 16 for 16 bits; the
    others keep the other families."""
    for (E, Ev), want in (((8, 8), True), ((64, 64), True), ((16, 40), True), ((12, 16), False),
                          ((64, 60), False), ((72, 64), True), ((64, 128), True), ((136, 8), False)):
        assert takes_mma(E, Ev) == want, (E, Ev)
    for dtype in (minitorch.float16, minitorch.bfloat16):
        for (E, Ev), want in (((16, 16), True), ((64, 48), True), ((8, 16), False), ((16, 40), False),
                              ((80, 64), True), ((128, 128), True), ((128, 144), False), ((136, 16), False)):
            assert takes_mma(E, Ev, dtype) == want, (dtype, E, Ev)


@needs_cuda
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16], ids=["f32", "bf16"])
def test_mma_attention_cuda_launches_and_allocates_no_scores_matrix(dtype):
    """One launch forward, three backward (D, dK and dV, dQ); the peak stays below half of one
    (B, H, T, T) float32 matrix."""
    B, H, T, d = 1, 2, 256, 16
    q, k, v = (make((B, H, T, d), s, "cuda", dtype) for s in (1, 2, 3))
    out = [None]
    fwd = kernel_names(lambda: out.__setitem__(0, F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    bwd = kernel_names(lambda: out[0].backward(minitorch.ones_like(out[0])))
    assert [n.split("<")[0] for n in fwd if "attention" in n] == ["attention_mma_kernel"], fwd
    assert [n.split("<")[0] for n in bwd if "attention" in n] == [
        "attention_delta_kernel", "attention_mma_dkdv_kernel", "attention_mma_dq_kernel"], bwd
    q.grad = k.grad = v.grad = out[0] = None
    fused = peak_bytes(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).float().sum().backward())
    assert fused < B * H * T * T * 4 // 2, fused


@needs_cuda
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float16], ids=["f32", "f16"])
def test_mma_attention_cuda_fully_masked_row_is_nan_like_composed(dtype):
    """A row whose every key is masked out: NaN, as the composed formula (l = 0)."""
    q, k, v = (make((1, 1, 3, 16), s, "cuda", dtype, requires_grad=False) for s in (1, 2, 3))
    mask = minitorch.tensor(np.array([[True, True, True], [False, False, False], [True, False, True]]),
                            device="cuda")
    out = _C._scaled_dot_product_attention(q, k, v, mask, False, 0.25).float().cpu().numpy()
    assert np.isnan(out[0, 0, 1]).all() and np.isfinite(out[0, 0, [0, 2]]).all()


@needs_cuda
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16], ids=["f32", "bf16"])
def test_mma_attention_cuda_stages_unaligned_rows_value_by_value(dtype):
    """Operands that start one value into their storage, rows E + 1 apart: the tiles cannot be
    staged as 16-byte pieces, so they are copied value by value, with the same results as
    contiguous copies of the same values (staged as pieces): bit for bit, values and gradients."""
    B, H, L, S, E = 1, 2, 40, 70, 32
    rng = np.random.default_rng(3)

    def views():
        return [minitorch.tensor(rng.standard_normal((B, H, n, E + 1)), dtype=dtype, device="cuda")[..., 1:]
                for n in (L, S, S)]

    unaligned = views()
    contiguous = [t.contiguous() for t in unaligned]
    g = minitorch.tensor(rng.standard_normal((B, H, L, E)), dtype=dtype, device="cuda")
    results = []
    for qkv in (unaligned, contiguous):
        leaves = [t.detach().requires_grad_() for t in qkv]
        if qkv is unaligned:  # detach() keeps the view's offset and strides
            assert all(t.stride()[2] == E + 1 for t in leaves)
        out = F.scaled_dot_product_attention(*leaves, is_causal=True)
        out.backward(g)
        results.append([to_np(out)] + [to_np(t.grad) for t in leaves])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@needs_cuda
@pytest.mark.parametrize("schedule", ["forward", "reverse", "warps", "warps-reverse"])
@pytest.mark.parametrize("family, dtype, tol", [("mma", minitorch.float32, TOL), ("mma", minitorch.bfloat16, (8e-2,) * 2),
                                                ("wmma", minitorch.float16, (2e-2,) * 2),
                                                ("tiled", minitorch.float32, TOL), ("rows", minitorch.float32, TOL)],
                         ids=["mma-f32", "mma-bf16", "wmma-f16", "tiled", "rows"])
def test_attention_cuda_blocks_that_walk_several_pairs(monkeypatch, family, dtype, tol, schedule):
    """Past 65535 (batch, head) pairs a block walks several, one after another (pair_blocks):
    here one block a row tile walks all four, MINITORCH_ATTENTION_PAIR_BLOCKS=1. Three key
    tiles a pair, an odd count: the double-buffered forward ends a pair on the buffer that the next
    pair's first copies go into, which the barrier before them must wait for. Every family,
    forward and backward, under the emulator's thread orders (on a GPU, the same run again)."""
    monkeypatch.setenv("MINITORCH_ATTENTION_PAIR_BLOCKS", "1")
    monkeypatch.setenv("MINITORCH_CUDA_ATTENTION", family)
    case = (2, 2, 64, 96, 16, 16, False, None)  # 4 pairs; 96 keys: 3 tiles of 32
    q = make((1, 1, 4, 16), 1, "cuda", dtype)
    names = kernel_names(lambda: F.scaled_dot_product_attention(q, q, q))
    kernel = {"rows": "attention_kernel"}.get(family, f"attention_{family}_kernel")
    assert kernel in [n.split("<")[0] for n in names], names
    with (minitorch.cuda.emulator_schedule(schedule) if minitorch.cuda.is_emulated() else contextlib.nullcontext()):
        check_case(case, "cuda", dtype, *tol)


@needs_cuda
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16], ids=["f32", "bf16"])
def test_mma_attention_cuda_is_bitwise_repeatable(monkeypatch, dtype):
    """No atomics: each output row is written by one warp of one block, so every run gives the same
    bits. A missing wait on the asynchronous copies or a missing barrier before a shared buffer is
    reused would show on a GPU as runs that differ (the emulator copies synchronously, so there
    this holds by construction). Several key tiles, blocks walking several pairs, causal."""
    monkeypatch.setenv("MINITORCH_ATTENTION_PAIR_BLOCKS", "1")
    q, k, v = (make((2, 2, 96, 64), seed, "cuda", dtype).requires_grad_() for seed in (1, 2, 3))
    g = make((2, 2, 96, 64), 4, "cuda", dtype, requires_grad=False)

    def run():
        for t in (q, k, v):
            t.grad = None
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(g)
        return [to_np(t) for t in (out.detach(), q.grad, k.grad, v.grad)]

    names = kernel_names(lambda: F.scaled_dot_product_attention(q.detach(), k.detach(), v.detach()))
    assert "attention_mma_kernel" in [n.split("<")[0] for n in names], names
    first = run()
    for _ in range(4):
        for a, b in zip(first, run()):
            np.testing.assert_array_equal(a, b)
