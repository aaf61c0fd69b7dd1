"""float32 fused attention on tensor cores (cuda/attention_tf32.cu): every product an mma.sync
m16n8k8 at float32 accuracy (3xTF32, cuda/mma_tf32.cuh), scores kept in registers. The emulator
runs the same kernels with the fragment layouts PTX documents (an emulated mma.sync), so a kernel
that puts an element in the wrong lane fails here as it would on a GPU.

Against the composed reference in float64, at float32's tolerances (one TF32 product alone is
off by about 5e-4, which fails them): values and gradients, head dims 8 to 64 and E != Ev, L and S
past and short of the 64-row blocks and 32-row tiles, causal with L != S, bool and additive masks,
dropout, operands in strided layouts. Then which calls take these kernels, their launches, and that
no (L, S) buffer is allocated."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import _C
from minitorch.nn import functional as F
from test_attention_dropout import check_case as check_dropout_case
from test_attention_fused import check_case, check_layout, kernel_names, make, needs_cuda, peak_bytes, to_np

TOL = (2e-5, 2e-4)  # atol, rtol: float32's, as test_attention_fused's float32 tests

# (B, H, L, S, E, Ev, causal, mask)
CASES = [
    (3, 1, 1, 1, 8, 8, False, None),            # one query, one key
    (1, 1, 130, 3, 8, 64, False, None),         # three 64-row blocks, one short key tile
    (1, 1, 3, 130, 64, 8, True, None),          # causal, L < S: most keys masked for every row
    (2, 3, 65, 65, 40, 24, False, "bool"),      # one row past a block, a bool mask
    (1, 2, 97, 33, 56, 16, False, "additive"),  # key padding, S one past a tile
    (2, 2, 64, 64, 64, 64, True, None),         # exact blocks, the widest head
]
IDS = ["B{}H{}L{}S{}E{}Ev{}{}{}".format(*c[:6], "-causal" if c[6] else "", f"-{c[7]}" if c[7] else "")
       for c in CASES]


@pytest.fixture(autouse=True)
def default_family(monkeypatch):
    """float32 with head dims that are multiples of 8 up to 64 takes these kernels by default."""
    monkeypatch.delenv("MINITORCH_CUDA_ATTENTION", raising=False)


def takes_tf32(E, Ev):
    q, k = make((1, 1, 4, E), 1, "cuda", minitorch.float32), make((1, 1, 4, E), 2, "cuda", minitorch.float32)
    v = make((1, 1, 4, Ev), 3, "cuda", minitorch.float32)
    return "attention_tf32_kernel" in kernel_names(lambda: F.scaled_dot_product_attention(q, k, v))


@needs_cuda
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tf32_attention_cuda_matches_composed_at_float32_tolerance(case):
    assert takes_tf32(case[4], case[5])
    check_case(case, "cuda", minitorch.float32, *TOL)


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
    assert err < 2e-6, err


@needs_cuda
@pytest.mark.parametrize("case", [(1, 2, 70, 40, 16, 8, False, "bool", 0.2), (2, 1, 65, 65, 32, 32, True, None, 0.3)],
                         ids=["bool", "causal"])
def test_tf32_attention_cuda_with_dropout_matches_composed(case):
    """The same keep mask as the forward, recomputed by both backward kernels."""
    check_dropout_case(case, "cuda", minitorch.float32, *TOL)


@needs_cuda
@pytest.mark.parametrize("layout", ["head-split", "heads-outer", "expanded-kv", "every-other-row"])
def test_tf32_attention_cuda_reads_strided_operands(layout):
    check_layout(layout, "cuda", minitorch.float32, *TOL)


@needs_cuda
def test_which_float32_calls_take_tf32_cuda():
    """Head dims that are multiples of 8 up to 64; the others keep the CUDA-core kernels."""
    for (E, Ev), want in (((8, 8), True), ((64, 64), True), ((16, 40), True), ((12, 16), False),
                          ((64, 60), False), ((72, 64), False), ((64, 128), False)):
        assert takes_tf32(E, Ev) == want, (E, Ev)


@needs_cuda
def test_tf32_attention_cuda_launches_and_allocates_no_scores_matrix():
    """One launch forward, three backward (D, dK and dV, dQ); the peak stays below half of one
    (B, H, T, T) float32 matrix."""
    B, H, T, d = 1, 2, 256, 16
    q, k, v = (make((B, H, T, d), s, "cuda", minitorch.float32) for s in (1, 2, 3))
    out = [None]
    fwd = kernel_names(lambda: out.__setitem__(0, F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    bwd = kernel_names(lambda: out[0].backward(minitorch.ones_like(out[0])))
    assert [n for n in fwd if "attention" in n] == ["attention_tf32_kernel"], fwd
    assert [n.split("<")[0] for n in bwd if "attention" in n] == [
        "attention_delta_kernel", "attention_tf32_dkdv_kernel", "attention_tf32_dq_kernel"], bwd
    q.grad = k.grad = v.grad = out[0] = None
    fused = peak_bytes(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward())
    assert fused < B * H * T * T * 4 // 2, fused


@needs_cuda
def test_tf32_attention_cuda_fully_masked_row_is_nan_like_composed():
    """A row whose every key is masked out: NaN, as the composed formula (l = 0)."""
    q, k, v = (make((1, 1, 3, 8), s, "cuda", minitorch.float32, requires_grad=False) for s in (1, 2, 3))
    mask = minitorch.tensor(np.array([[True, True, True], [False, False, False], [True, False, True]]),
                            device="cuda")
    out = _C._scaled_dot_product_attention(q, k, v, mask, False, 0.25).cpu().numpy()
    assert np.isnan(out[0, 0, 1]).all() and np.isfinite(out[0, 0, [0, 2]]).all()
