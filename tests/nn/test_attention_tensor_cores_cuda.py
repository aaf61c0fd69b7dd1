"""The 16-bit fused attention on tensor cores through wmma (attention_wmma_kernel,
attention_wmma_dkdv_kernel and attention_wmma_dq_kernel in cuda/attention.cu, run in the emulator
through its wmma shim,
cuda/emu/wmma_emu.h).

The shim itself, in a student's RawKernel: 16x16x16 products of every operand layout against
NumPy (exact: small integers), and the checks a GPU makes (32-byte aligned pointers, ldm a
multiple of 16 bytes) failing the launch. Then float16 / bfloat16 attention against the composed
reference in float64: values and gradients, head dims 16 to 128, L and S not multiples of the
tiles, L != S, causal, bool and additive masks, dropout; which kernel each call launches; and no
(L, S) buffer."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import minitorch
from minitorch import _C
from minitorch.nn import functional as F
from test_attention_dropout import check_case as check_dropout_case
from test_attention_fused import check_case, kernel_names, make, needs_cuda, peak_bytes

DTYPES = [(minitorch.float16, 2e-2), (minitorch.bfloat16, 8e-2)]


@pytest.fixture
def on_tensor_cores(monkeypatch):
    """Head dims up to 64 default to the mma.sync kernels (test_attention_mma_cuda.py); these tests
    ask for the wmma family wherever it can take the call (MINITORCH_CUDA_ATTENTION=wmma)."""
    monkeypatch.setenv("MINITORCH_CUDA_ATTENTION", "wmma")
DTYPE_IDS = ["f16", "bf16"]

# ------------------------------------------------------------------ the wmma shim ----

# bfloat16 as the top 16 bits of a float: exact for the small integers the test multiplies.
MMA_SOURCE = r"""
#include <mma.h>
using namespace nvcuda;

struct bf16 {
    unsigned short bits;
    bf16() = default;
    bf16(float f) { unsigned u; memcpy(&u, &f, 4); bits = (unsigned short)(u >> 16); }
    operator float() const { unsigned u = unsigned(bits) << 16; float f; memcpy(&f, &u, 4); return f; }
};

template <class LA, class LB>
__device__ void product(const bf16* a, const bf16* b, float* c, int ldm, bool c_by_cols)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, LA> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, LB> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::load_matrix_sync(fa, a, ldm);
    wmma::load_matrix_sync(fb, b, ldm);
    wmma::mma_sync(acc, fa, fb, acc);
    for (int i = 0; i < acc.num_elements; ++i) acc.x[i] *= 2.0f;  // elementwise: layout-free
    wmma::store_matrix_sync(c, acc, ldm, c_by_cols ? wmma::mem_col_major : wmma::mem_row_major);
}

// c = 2 (a b + 1) for 16x16 a, b, c (row-major in global memory), each staged in shared memory
// by rows or by columns (a_cols, b_cols, c_cols) with `ldm` between them, `shift` elements
// past an aligned start.
extern "C" __global__ void mma16(const float* a, const float* b, float* c, int a_cols, int b_cols, int c_cols,
                                 int ldm, int shift)
{
    __shared__ __align__(32) bf16 as[16 * 32 + 16], bs[16 * 32 + 16];
    __shared__ __align__(32) float cs[16 * 32 + 16];
    for (int e = threadIdx.x; e < 256; e += 32) {
        int r = e / 16, k = e % 16;
        as[shift + (a_cols ? k * ldm + r : r * ldm + k)] = bf16(a[e]);
        bs[shift + (b_cols ? k * ldm + r : r * ldm + k)] = bf16(b[e]);
    }
    __syncwarp();
    if (a_cols && b_cols) product<wmma::col_major, wmma::col_major>(as + shift, bs + shift, cs, ldm, c_cols);
    else if (a_cols) product<wmma::col_major, wmma::row_major>(as + shift, bs + shift, cs, ldm, c_cols);
    else if (b_cols) product<wmma::row_major, wmma::col_major>(as + shift, bs + shift, cs, ldm, c_cols);
    else product<wmma::row_major, wmma::row_major>(as + shift, bs + shift, cs, ldm, c_cols);
    __syncwarp();
    for (int e = threadIdx.x; e < 256; e += 32) {
        int r = e / 16, k = e % 16;
        c[e] = cs[c_cols ? k * ldm + r : r * ldm + k];
    }
}
"""

needs_raw_kernels = pytest.mark.skipif(
    not minitorch.cuda.is_emulated() or not (os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")),
    reason="the wmma shim is the emulator's; its tests build a RawKernel with the host C++ compiler")


@pytest.fixture(scope="module")
def mma16():
    return minitorch.cuda.RawKernel(MMA_SOURCE, "mma16")


def run_mma(kernel, a, b, layouts, ldm=24, shift=0):
    c = minitorch.zeros((16, 16), device="cuda")
    kernel((1,), (32,), (minitorch.tensor(a, device="cuda"), minitorch.tensor(b, device="cuda"), c,
                         *(np.int32(x) for x in layouts), np.int32(ldm), np.int32(shift)))
    return c.cpu().numpy()


@needs_raw_kernels
@pytest.mark.parametrize("layouts", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 1)], ids=["rrr", "crr", "rcr", "ccc"])
def test_wmma_shim_cuda_matches_numpy(mma16, layouts):
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-8, 9, (16, 16)).astype(np.float32) for _ in range(2))
    np.testing.assert_array_equal(run_mma(mma16, a, b, layouts), 2 * (a @ b + 1))


@needs_raw_kernels
@pytest.mark.parametrize("ldm, shift, message", [(24, 2, "32-byte"), (20, 0, "multiple of 8")],
                         ids=["misaligned", "ldm"])
def test_wmma_shim_cuda_traps_what_a_gpu_faults_on(mma16, capfd, ldm, shift, message):
    a = np.ones((16, 16), np.float32)
    with pytest.raises(RuntimeError):
        run_mma(mma16, a, a, (0, 0, 0), ldm=ldm, shift=shift)
    assert message in capfd.readouterr().err
    np.testing.assert_array_equal(run_mma(mma16, a, a, (0, 0, 0)), 2 * (a @ a + 1))  # the next launch works


# ------------------------------------------------------------------ attention ----

# (B, H, L, S, E, Ev, causal, mask)
CASES = [
    (2, 2, 33, 33, 16, 16, True, None),        # T past a tile, causal, batch and heads
    (1, 2, 5, 40, 16, 32, False, "bool"),      # cross attention, L != S, Ev != E
    (2, 1, 33, 17, 64, 64, False, "additive"),  # key padding, S < L
    (1, 1, 9, 40, 16, 16, True, None),         # causal with L < S: whole key tiles masked for some rows
    (1, 1, 20, 20, 128, 128, True, None),      # the largest head dim
]
IDS = ["B{}H{}L{}S{}E{}Ev{}{}{}".format(*c[:6], "-causal" if c[6] else "", f"-{c[7]}" if c[7] else "")
       for c in CASES]


@needs_cuda
@pytest.mark.parametrize("dtype, tol", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tensor_core_attention_cuda_matches_composed(on_tensor_cores, dtype, tol, case):
    check_case(case, "cuda", dtype, tol, tol)


@needs_cuda
@pytest.mark.parametrize("dtype, tol", [(minitorch.float16, 3e-2), (minitorch.bfloat16, 1.2e-1)], ids=DTYPE_IDS)
@pytest.mark.parametrize("case", [(1, 2, 33, 40, 16, 16, False, "bool", 0.2), (2, 1, 33, 33, 32, 32, True, None, 0.3)],
                         ids=["bool", "causal"])
def test_tensor_core_attention_cuda_with_dropout_matches_composed(on_tensor_cores, dtype, tol, case):
    """The same keep mask as the backward (and the host's _C._attention_dropout_mask)."""
    check_dropout_case(case, "cuda", dtype, tol, tol)


def attention_kernels(dtype, E, Ev):
    """The kernels of one forward and one backward: (forward names, backward names)."""
    q, k = make((1, 2, 20, E), 1, "cuda", dtype), make((1, 2, 20, E), 2, "cuda", dtype)
    v = make((1, 2, 20, Ev), 3, "cuda", dtype)
    out = [None]
    fwd = kernel_names(lambda: out.__setitem__(0, F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    g = minitorch.ones_like(out[0])
    bwd = kernel_names(lambda: out[0].backward(g))
    return [n for n in fwd if "attention" in n], [n for n in bwd if "attention" in n]


def short(names):
    return [n.split("<")[0].split("(")[0].split("::")[-1] for n in names]


@needs_cuda
def test_which_kernels_cuda(monkeypatch):
    """By default: the mma.sync kernels (attention_mma.cu) for head dims up to 128 that are
    multiples of 8 in float32, of 16 in 16 bits; else the register-tiled kernels for head dims up
    to 64; else wmma for 16-bit heads that are multiples of 16 (none left on sm_80: float16 on
    sm_75); else one row per lane. Forward and
    backward alike (the backward's D = rowsum(dO * O) stays on CUDA cores).
    MINITORCH_CUDA_ATTENTION=rows|tiled|wmma|mma asks for a family wherever it takes the call, the
    default elsewhere. The same number of launches either way."""
    monkeypatch.delenv("MINITORCH_CUDA_ATTENTION", raising=False)
    mma = (["attention_mma_kernel"], ["attention_delta_kernel", "attention_mma_dkdv_kernel", "attention_mma_dq_kernel"])
    wmma = (["attention_wmma_kernel"],
            ["attention_delta_kernel", "attention_wmma_dkdv_kernel", "attention_wmma_dq_kernel"])
    tiled = (["attention_tiled_kernel"],
             ["attention_delta_kernel", "attention_tiled_dkdv_kernel", "attention_tiled_dq_kernel"])
    cores = (["attention_kernel"], ["attention_delta_kernel", "attention_dkdv_kernel", "attention_dq_kernel"])
    for dtype in (minitorch.float16, minitorch.bfloat16):
        for (E, Ev), want in (((16, 16), mma), ((64, 32), mma), ((8, 16), tiled), ((16, 24), tiled),
                              ((128, 128), mma), ((80, 64), mma), ((72, 40), cores), ((96, 72), cores)):
            fwd, bwd = attention_kernels(dtype, E, Ev)
            assert (short(fwd), short(bwd)) == want, (dtype, E, Ev, fwd, bwd)
    for (E, Ev), want in (((16, 16), mma), ((64, 64), mma), ((8, 40), mma), ((12, 16), tiled),
                          ((64, 60), tiled), ((64, 65), cores), ((72, 32), mma), ((128, 96), mma),
                          ((100, 32), cores)):
        fwd, bwd = attention_kernels(minitorch.float32, E, Ev)
        assert (short(fwd), short(bwd)) == want, (E, Ev, fwd, bwd)
    for family, cases in (
            ("wmma", ((minitorch.bfloat16, (16, 16), wmma), (minitorch.float16, (64, 32), wmma),
                      (minitorch.float16, (8, 16), tiled), (minitorch.float32, (16, 16), mma))),
            ("tiled", ((minitorch.float32, (16, 16), tiled), (minitorch.bfloat16, (64, 64), tiled),
                       (minitorch.float32, (100, 32), cores), (minitorch.float16, (128, 128), mma))),
            ("mma", ((minitorch.bfloat16, (16, 16), mma), (minitorch.float16, (128, 128), mma),
                     (minitorch.float32, (12, 16), tiled))),
            ("rows", ((minitorch.float32, (16, 16), cores), (minitorch.bfloat16, (128, 128), cores))),
            ("wmma", ((minitorch.bfloat16, (128, 128), wmma), (minitorch.float16, (80, 64), wmma)))):
        monkeypatch.setenv("MINITORCH_CUDA_ATTENTION", family)
        for dtype, (E, Ev), want in cases:
            fwd, bwd = attention_kernels(dtype, E, Ev)
            assert (short(fwd), short(bwd)) == want, (family, dtype, E, Ev, fwd, bwd)


@needs_cuda
def test_tensor_core_path_cuda_allocates_no_scores_matrix(on_tensor_cores):
    """float16, T = 256: forward and backward on tensor cores peak below half of one (B, H, T, T)
    float32 matrix."""
    B, H, T, d = 1, 2, 256, 16
    q, k, v = (make((B, H, T, d), s, "cuda", minitorch.float16) for s in (1, 2, 3))
    assert any("attention_wmma_kernel" in n for n in kernel_names(lambda: F.scaled_dot_product_attention(q, k, v)))
    fused = peak_bytes(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).float().sum().backward())
    assert fused < B * H * T * T * 4 // 2, fused


@needs_cuda
def test_tensor_core_attention_cuda_fully_masked_row_is_nan_like_composed(on_tensor_cores):
    """A row whose every key is masked out: NaN, as the composed formula (l = 0)."""
    q, k, v = (make((1, 1, 3, 16), s, "cuda", minitorch.float16, requires_grad=False) for s in (1, 2, 3))
    mask = minitorch.tensor(np.array([[True, True, True], [False, False, False], [True, False, True]]),
                            device="cuda")
    out = _C._scaled_dot_product_attention(q, k, v, mask, False, 0.25).float().cpu().numpy()
    assert np.isnan(out[0, 0, 1]).all() and np.isfinite(out[0, 0, [0, 2]]).all()
