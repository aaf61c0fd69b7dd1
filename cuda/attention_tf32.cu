// attention_tf32.cu — the fused attention (attention.cu explains the algorithm) for float32 on
// tensor cores: every matrix product is an mma.sync at float32 accuracy (3xTF32, mma_tf32.cuh),
// and the scores never leave registers, as in FlashAttention-2.
//
// A warp owns 16 rows (queries in the forward and dQ, keys in dK/dV): one MMA's M. Its rows' part
// of the head-dim operand (Q, dO, K or V) is loaded once into A fragments in registers; the other
// side of each product is staged in shared memory, 32 rows per tile, and read as B fragments.
// After S = Q K^T, lane 4g + t holds the scores of rows g and g + 8 against keys 8n + 2t and
// 8n + 2t + 1 of each 8-key slice n of the tile (the C layout), so the online softmax of a row is
// over the lane's 8 values and the 3 other lanes of its group (two shuffles).
//
// The second product of each step (P V, dS K, P^T dO, dS^T Q) needs those weights as an A
// fragment, which wants columns t and t + 4 where the lane holds 2t and 2t + 1. Instead of moving
// them between lanes, the product takes the 8 keys of a slice in another order: A's column t is key
// 2t, column t + 4 is key 2t + 1. A sum over the keys does not care about their order, as long as
// the B fragment's rows (V's, K's, dO's or Q's rows) follow it: b[0] is row 2t, b[1] row 2t + 1.
//
// Shared memory rows are 68 floats apart (a pitch of 4 mod 32), so the 32 lanes' reads of a B
// fragment, in either order, fall on 32 different banks.
#include <cfloat>

#include "attention_common.cuh"
#include "mma_tf32.cuh"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

constexpr int kTcHead = 64;               // head dims these kernels take: multiples of 8 up to 64
constexpr int kTcSteps = kTcHead / 8;     // 8-wide slices of a head (k steps, or 8-column output tiles)
constexpr int kTcWarps = 4;               // 128 threads per block
constexpr int kTcRows = kTcWarps * 16;    // rows a block owns: 16 per warp
constexpr int kTcTile = 32;               // rows of a staged tile: 4 slices of 8
constexpr int kTcSlices = kTcTile / 8;
constexpr int kTcPitch = kTcHead + 4;     // floats between staged rows

// The lane's coordinates in a fragment: g = lane / 4, t = lane % 4 (mma_tf32.cuh).
struct Lane {
    int g, t;
};

__device__ __forceinline__ Lane lane_of() { return {int(threadIdx.x % kWarp) / 4, int(threadIdx.x % 4)}; }

// The A fragments of 16 rows r0 .. r0 + 15 of a (rows, width) matrix in global memory (row r at
// src + r * row_stride), one per 8-wide slice of the width, zeros past `rows`.
__device__ __forceinline__ void load_a_rows(float (&a)[kTcSteps][4], const float* src, int64_t row_stride,
                                            int64_t r0, int64_t rows, int width, Lane ln)
{
    const int64_t lo = r0 + ln.g, hi = lo + 8;
MT_UNROLL
    for (int kk = 0; kk < kTcSteps; ++kk) {
        const int c = 8 * kk + ln.t;
        const bool in = c < width;
        a[kk][0] = in && lo < rows ? src[lo * row_stride + c] : 0.f;
        a[kk][1] = in && hi < rows ? src[hi * row_stride + c] : 0.f;
        a[kk][2] = in && lo < rows ? src[lo * row_stride + c + 4] : 0.f;
        a[kk][3] = in && hi < rows ? src[hi * row_stride + c + 4] : 0.f;
    }
}

// acc[n] += A B_n over the width, for the 4 slices n of a staged tile: A the warp's 16 rows
// (fragments a), B_n = X^T for the tile's rows 8n .. 8n + 7 (b[0] = X[8n + g][8kk + t]).
__device__ __forceinline__ void rows_times_tile(float (&acc)[kTcSlices][4], const float (&a)[kTcSteps][4],
                                                const float (*x)[kTcPitch], int width, Lane ln)
{
MT_UNROLL
    for (int kk = 0; kk < kTcSteps; ++kk) {
        if (8 * kk >= width) break;
        const Tf32Split<4> as = split_tf32(a[kk]);
MT_UNROLL
        for (int n = 0; n < kTcSlices; ++n) {
            const float bv[2] = {x[8 * n + ln.g][8 * kk + ln.t], x[8 * n + ln.g][8 * kk + ln.t + 4]};
            mma_3xtf32(acc[n], as, split_tf32(bv));
        }
    }
}

// out[nt] += W X over the tile's 32 rows, for the 8-column output tiles nt below width: W the
// warp's 16 x 32 weights as C fragments (w[n]: rows g, g + 8 against tile rows 8n + 2t, + 1),
// taken as A fragments with each slice's rows reordered (top of the file), X the staged tile.
__device__ __forceinline__ void weights_times_tile(float (&out)[kTcSteps][4], const float (&w)[kTcSlices][4],
                                                   const float (*x)[kTcPitch], int width, Lane ln)
{
MT_UNROLL
    for (int n = 0; n < kTcSlices; ++n) {
        const float wa[4] = {w[n][0], w[n][2], w[n][1], w[n][3]};
        const Tf32Split<4> ws = split_tf32(wa);
MT_UNROLL
        for (int nt = 0; nt < kTcSteps; ++nt) {
            if (8 * nt >= width) break;
            const float bv[2] = {x[8 * n + 2 * ln.t][8 * nt + ln.g], x[8 * n + 2 * ln.t + 1][8 * nt + ln.g]};
            mma_3xtf32(out[nt], ws, split_tf32(bv));
        }
    }
}

// The max and the sum of a row's values over the 4 lanes of its group.
__device__ __forceinline__ float group_max(float v)
{
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 1));
    return fmaxf(v, __shfl_xor_sync(kFullMask, v, 2));
}

__device__ __forceinline__ float group_sum(float v)
{
    v += __shfl_xor_sync(kFullMask, v, 1);
    return v + __shfl_xor_sync(kFullMask, v, 2);
}

template <int N>
__device__ __forceinline__ void zero(float (&a)[N][4])
{
MT_UNROLL
    for (int i = 0; i < N; ++i) a[i][0] = a[i][1] = a[i][2] = a[i][3] = 0.f;
}

// The two products every backward step starts with, over a staged tile: s = A X^T (scores: Q K^T,
// or K Q^T for dK/dV) and dp = G Y^T (dO V^T, or V dO^T).
__device__ __forceinline__ void scores_and_dp(float (&s)[kTcSlices][4], float (&dp)[kTcSlices][4],
                                              const float (&a)[kTcSteps][4], const float (*x)[kTcPitch], int E,
                                              const float (&g)[kTcSteps][4], const float (*y)[kTcPitch], int Ev,
                                              Lane ln)
{
    zero(s);
    zero(dp);
    rows_times_tile(s, a, x, E, ln);
    rows_times_tile(dp, g, y, Ev, ln);
}

// fn(n, x, col) for each of the lane's elements of a 16 x 32 tile of C fragments (slice n's element
// x, of row half x / 2): col = 8n + 2t + x % 2 is its column in the tile.
template <class F>
__device__ __forceinline__ void for_each_element(Lane ln, F fn)
{
MT_UNROLL
    for (int n = 0; n < kTcSlices; ++n)
MT_UNROLL
        for (int x = 0; x < 4; ++x) fn(n, x, 8 * n + 2 * ln.t + x % 2);
}

// A warp's 16 rows of C fragments written out: row r0 + g (elements 0, 1) and r0 + g + 8
// (elements 2, 3), columns 8nt + 2t and + 1 below width, as finish(h, value) with h the half.
template <class RowOf, class F>
__device__ __forceinline__ void store_rows(const float (&acc)[kTcSteps][4], float* dst, RowOf row_of, int width,
                                           Lane ln, F finish)
{
MT_UNROLL
    for (int h = 0; h < 2; ++h) {
        const int64_t at = row_of(h);
        if (at < 0) continue;
MT_UNROLL
        for (int nt = 0; nt < kTcSteps; ++nt) {
            if (8 * nt >= width) break;
            dst[at + 8 * nt + 2 * ln.t] = finish(h, acc[nt][2 * h]);
            dst[at + 8 * nt + 2 * ln.t + 1] = finish(h, acc[nt][2 * h + 1]);
        }
    }
}

// Forward. Grid (pairs, ceil(L / 64)), 4 warps; warp w owns query rows q0 + 16w .. + 15, their Q
// as A fragments and their output (16 x Ev) as C fragments, in registers. Per 32-key tile (K and V
// staged): S = Q K^T, the online softmax of each row (its m and l in the lanes of its group, each
// lane rescaling its own output elements by alpha), then O += P V. Shared memory: 17 KiB.
__global__ void __launch_bounds__(kTcWarps * kWarp)
    attention_tf32_kernel(const float* q, const float* k, const float* v, float* out, float* lse, AttentionLayout lay,
                          AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E,
                          int Ev, float scale, bool causal)
{
    __shared__ __align__(16) float k_s[kTcTile][kTcPitch];
    __shared__ __align__(16) float v_s[kTcTile][kTcPitch];
    const Lane ln = lane_of();
    const int64_t q0 = tile_in_order(causal) * kTcRows, r0 = q0 + threadIdx.x / kWarp * 16;
    const int64_t rows[2] = {r0 + ln.g, r0 + ln.g + 8};  // the lane's two query rows
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        float qa[kTcSteps][4], o[kTcSteps][4];
        load_a_rows(qa, q + lay.q.pair(b), lay.q.row_stride, r0, L, E, ln);
        zero(o);
        float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
        for (int64_t k0 = 0; k0 < keys_end(S, q0 + kTcRows, causal); k0 += kTcTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, float, kTcPitch>(k_s, k + lay.k.pair(b), lay.k.row_stride, k0, kTcTile, S, E);
            stage_rows<float, float, kTcPitch>(v_s, v + lay.v.pair(b), lay.v.row_stride, k0, kTcTile, S, Ev);
            __syncthreads();  // the tile is staged
            float s[kTcSlices][4];
            zero(s);
            rows_times_tile(s, qa, k_s, E, ln);
MT_UNROLL
            for (int h = 0; h < 2; ++h) {
                float mx = -INFINITY;
MT_UNROLL
                for (int n = 0; n < kTcSlices; ++n)
MT_UNROLL
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[n][2 * h + e];
                        x = score_of(x, scale, mask_matrix, mask, rows[h], k0 + 8 * n + 2 * ln.t + e, L, S, causal);
                        mx = fmaxf(mx, x);
                    }
                const float m_new = fmaxf(m[h], group_max(mx));
                const float alpha = m_new == -INFINITY ? 1.f : __expf(m[h] - m_new);
                float sum = 0.f;
MT_UNROLL
                for (int n = 0; n < kTcSlices; ++n)
MT_UNROLL
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[n][2 * h + e];
                        float p = m_new == -INFINITY ? 0.f : __expf(x - m_new);
                        sum += p;  // the un-dropped weights
                        if (drop.on && p != 0.f) p *= drop.factor(b, rows[h], k0 + 8 * n + 2 * ln.t + e);
                        x = p;
                    }
                l[h] = l[h] * alpha + group_sum(sum);
                m[h] = m_new;
MT_UNROLL
                for (int nt = 0; nt < kTcSteps; ++nt) o[nt][2 * h] *= alpha, o[nt][2 * h + 1] *= alpha;
            }
            weights_times_tile(o, s, v_s, Ev, ln);
        }
        const auto row_of = [&](int h) { return rows[h] < L ? lay.out.row(b, rows[h]) : int64_t(-1); };
        // l = 0 (every key masked): NaN, as the composed formula
        store_rows(o, out, row_of, Ev, ln, [&](int h, float x) { return x / l[h]; });
MT_UNROLL
        for (int h = 0; h < 2; ++h)
            if (ln.t == 0 && rows[h] < L) lse[b * L + rows[h]] = m[h] + logf(l[h]);
    }
}

// Backward, dQ. Grid (pairs, ceil(L / 64)), 4 warps; warp w owns query rows i0 + 16w .. + 15: Q and
// dO as A fragments, their lse and D, and dQ as C fragments. Per 32-key tile (K and V staged):
// S = Q K^T and dP = dO V^T, dS = P (dP Z - D) in place of S, then dQ += dS K. Shared memory: 17 KiB.
__global__ void __launch_bounds__(kTcWarps * kWarp)
    attention_tf32_dq_kernel(const float* q, const float* k, const float* v, const float* grad_out, const float* lse,
                             const float* delta, float* grad_q, AttentionLayout lay, AttentionMask<float> mask,
                             AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E, int Ev, float scale,
                             bool causal)
{
    __shared__ __align__(16) float k_s[kTcTile][kTcPitch];
    __shared__ __align__(16) float v_s[kTcTile][kTcPitch];
    const Lane ln = lane_of();
    const int64_t i0 = tile_in_order(causal) * kTcRows, r0 = i0 + threadIdx.x / kWarp * 16;
    const int64_t rows[2] = {r0 + ln.g, r0 + ln.g + 8};
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        float qa[kTcSteps][4], ga[kTcSteps][4], dq[kTcSteps][4], row_lse[2], row_delta[2];
        load_a_rows(qa, q + lay.q.pair(b), lay.q.row_stride, r0, L, E, ln);
        load_a_rows(ga, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, r0, L, Ev, ln);
        zero(dq);
MT_UNROLL
        for (int h = 0; h < 2; ++h) {
            row_lse[h] = rows[h] < L ? lse[b * L + rows[h]] : 0.f;
            row_delta[h] = rows[h] < L ? delta[b * L + rows[h]] : 0.f;
        }
        for (int64_t k0 = 0; k0 < keys_end(S, i0 + kTcRows, causal); k0 += kTcTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, float, kTcPitch>(k_s, k + lay.k.pair(b), lay.k.row_stride, k0, kTcTile, S, E);
            stage_rows<float, float, kTcPitch>(v_s, v + lay.v.pair(b), lay.v.row_stride, k0, kTcTile, S, Ev);
            __syncthreads();  // the tile is staged
            float s[kTcSlices][4], dp[kTcSlices][4];
            scores_and_dp(s, dp, qa, k_s, E, ga, v_s, Ev, ln);
            for_each_element(ln, [&](int n, int x, int col) {
                const int h = x / 2;
                const int64_t i = rows[h], j = k0 + col;
                const float sc = score_of(s[n][x], scale, mask_matrix, mask, i, j, L, S, causal);
                float ds = 0.f;
                if (sc != -INFINITY) {
                    const float z = drop.factor(b, i, j);  // 1 without dropout
                    ds = __expf(sc - row_lse[h]) * (dp[n][x] * z - row_delta[h]);
                }
                s[n][x] = ds;
            });
            weights_times_tile(dq, s, k_s, E, ln);
        }
        const auto row_of = [&](int h) { return rows[h] < L ? lay.grad_q.row(b, rows[h]) : int64_t(-1); };
        store_rows(dq, grad_q, row_of, E, ln, [&](int, float x) { return x * scale; });
    }
}

// Backward, dK and dV. Grid (pairs, ceil(S / 64)), 4 warps; warp w owns keys j0 + 16w .. + 15: K
// and V as A fragments, dK and dV as C fragments. Per 32-query tile (Q, dO, lse and D staged; from
// the block's diagonal on when causal): S^T = K Q^T and dP^T = V dO^T, then P Z and dS in their
// place, dV += (P Z)^T dO and dK += dS^T Q. Shared memory: 17 KiB.
__global__ void __launch_bounds__(kTcWarps * kWarp)
    attention_tf32_dkdv_kernel(const float* q, const float* k, const float* v, const float* grad_out,
                               const float* lse, const float* delta, float* grad_k, float* grad_v,
                               AttentionLayout lay, AttentionMask<float> mask, AttentionDropout drop, int64_t B,
                               int64_t L, int64_t S, int E, int Ev, float scale, bool causal)
{
    __shared__ __align__(16) float q_s[kTcTile][kTcPitch];
    __shared__ __align__(16) float g_s[kTcTile][kTcPitch];  // dO
    __shared__ float lse_s[kTcTile], delta_s[kTcTile];
    const Lane ln = lane_of();
    const int64_t j0 = int64_t(blockIdx.y) * kTcRows, r0 = j0 + threadIdx.x / kWarp * 16;
    const int64_t keys[2] = {r0 + ln.g, r0 + ln.g + 8};  // the lane's two keys
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        float ka[kTcSteps][4], va[kTcSteps][4], dk[kTcSteps][4], dv[kTcSteps][4];
        load_a_rows(ka, k + lay.k.pair(b), lay.k.row_stride, r0, S, E, ln);
        load_a_rows(va, v + lay.v.pair(b), lay.v.row_stride, r0, S, Ev, ln);
        zero(dk);
        zero(dv);
        for (int64_t i0 = causal ? j0 : 0; i0 < L; i0 += kTcTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, float, kTcPitch>(q_s, q + lay.q.pair(b), lay.q.row_stride, i0, kTcTile, L, E);
            stage_rows<float, float, kTcPitch>(g_s, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0,
                                               kTcTile, L, Ev);
            if (threadIdx.x < kTcTile) {
                const bool in = i0 + threadIdx.x < L;
                lse_s[threadIdx.x] = in ? lse[b * L + i0 + threadIdx.x] : 0.f;
                delta_s[threadIdx.x] = in ? delta[b * L + i0 + threadIdx.x] : 0.f;
            }
            __syncthreads();  // the tile is staged
            float s[kTcSlices][4], dp[kTcSlices][4];
            scores_and_dp(s, dp, ka, q_s, E, va, g_s, Ev, ln);
            for_each_element(ln, [&](int n, int x, int qi) {
                const int64_t i = i0 + qi, j = keys[x / 2];
                const float sc = score_of(s[n][x], scale, mask_matrix, mask, i, j, L, S, causal);
                float p = 0.f, ds = 0.f;
                if (sc != -INFINITY) {
                    p = __expf(sc - lse_s[qi]);
                    const float z = drop.factor(b, i, j);  // 1 without dropout
                    ds = p * (dp[n][x] * z - delta_s[qi]);
                    p *= z;  // dV takes the weight that met v in the forward
                }
                s[n][x] = p;
                dp[n][x] = ds;
            });
            weights_times_tile(dv, s, g_s, Ev, ln);
            weights_times_tile(dk, dp, q_s, E, ln);
        }
        const auto v_row = [&](int h) { return keys[h] < S ? lay.grad_v.row(b, keys[h]) : int64_t(-1); };
        const auto k_row = [&](int h) { return keys[h] < S ? lay.grad_k.row(b, keys[h]) : int64_t(-1); };
        store_rows(dv, grad_v, v_row, Ev, ln, [](int, float x) { return x; });
        store_rows(dk, grad_k, k_row, E, ln, [&](int, float x) { return x * scale; });
    }
}

}  // namespace

// TF32 MMA needs sm_80; the emulator counts as sm_90.
bool tf32_tensor_cores(int E, int Ev)
{
    if (E <= 0 || Ev <= 0 || E > kTcHead || Ev > kTcHead || E % 8 != 0 || Ev % 8 != 0) return false;
#if MT_CUDA_EMULATED
    return true;
#else
    return compute_capability() >= 80;
#endif
}

void attention_tf32(const float* q, const float* k, const float* v, float* out, float* lse,
                    const AttentionLayout& lay, const AttentionMask<float>& mask, const AttentionDropout& drop,
                    int64_t B, int64_t L, int64_t S, int E, int Ev, float scale, bool causal)
{
    MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kTcRows)), kTcWarps * kWarp, 0, 0, attention_tf32_kernel)(
        q, k, v, out, lse, lay, mask, drop, B, L, S, E, Ev, scale, causal);
    MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention");
}

void attention_tf32_backward(const float* q, const float* k, const float* v, const float* grad_out,
                             const float* lse, const float* delta, float* grad_q, float* grad_k, float* grad_v,
                             const AttentionLayout& lay, const AttentionMask<float>& mask,
                             const AttentionDropout& drop, int64_t B, int64_t L, int64_t S, int E, int Ev,
                             float scale, bool causal)
{
    MT_LAUNCH(dim3(pair_blocks(B), tiles(S, kTcRows)), kTcWarps * kWarp, 0, 0, attention_tf32_dkdv_kernel)(
        q, k, v, grad_out, lse, delta, grad_k, grad_v, lay, mask, drop, B, L, S, E, Ev, scale, causal);
    MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dK, dV)");
    if (L == 0) return;
    MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kTcRows)), kTcWarps * kWarp, 0, 0, attention_tf32_dq_kernel)(
        q, k, v, grad_out, lse, delta, grad_q, lay, mask, drop, B, L, S, E, Ev, scale, causal);
    MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dQ)");
}

}  // namespace minitorch::cuda
