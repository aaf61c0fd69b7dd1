// attention.cu — CUDA kernels of the fused attention (kernels.h: attention, attention_backward),
// the FlashAttention idea: the (L, S) matrix of scores is never stored. The readable CPU
// version of the same algorithm is cpu/attention.cpp; the composed reference (two matmuls
// around a softmax) is nn/_attention_functional.py.
//
// Forward (attention_kernel): a block takes kFwdRows query rows of one (batch, head) pair and
// walks the keys in tiles of kTile, staged in shared memory. For each tile a query row's
// running max m and running sum l of exp(score - m) are updated once (the online softmax:
// what was accumulated is rescaled by exp(m_old - m_new)), and the tile's exp(score - m) * v
// is added to the row's output, kept in registers. At the end the output is divided by l and
// m + log(l), the row's logsumexp, is written for the backward. Causal calls stop at the
// block's diagonal: the tiles above it are never loaded.
//
// Backward (FlashAttention-2's split, without atomics): P = exp(score - lse) is recomputed
// from q, k and the saved logsumexp, so again nothing of size L x S is stored.
//   attention_delta_kernel  D[i] = rowsum(dO[i] * O[i])  (the softmax backward's sum(dP * P))
//   attention_dkdv_kernel   a block owns kBwdRows keys; it walks the query tiles and sums
//                           dV[j] += P[i, j] dO[i] and dK[j] += dS[i, j] q[i] * scale
//   attention_dq_kernel     a block owns kBwdRows query rows; it walks the key tiles and sums
//                           dQ[i] += dS[i, j] k[j] * scale
// with dS = P * (dO v^T - D). dQ gets its own pass over the keys (recomputing P once more)
// instead of atomicAdds into a float32 buffer from the key-tile blocks: simpler, no extra
// buffer, deterministic, and every output written once, in its own dtype.
//
// Dropout (spec.dropout_p > 0): the forward multiplies each weight by its factor Z[i, j] (0 or
// 1 / (1 - p)) after it entered the running sum l, so the logsumexp stays that of the
// un-dropped weights; Z is a hash of (seed, offset, pair, i, j) (AttentionDropout,
// attention_math.h), computed again by the backward kernels instead of stored. The backward
// then uses P * Z where the forward's weights met v: dV += P Z dO, and dS = P * (dP Z - D), where
// D = rowsum(dO * O) is still the softmax backward's sum over j of P (dP Z), O being the dropped
// output.
//
// Four families of kernels compute this, from the readable to the fast (family() picks one):
//   rows   attention_kernel, attention_dkdv_kernel, attention_dq_kernel: a lane owns one key or
//          query, a warp a few rows; the readable version of the algorithm, and every call's
//          fallback (head dims up to 128);
//   tiled  attention_tiled_kernel and its two backward kernels: the same steps with 2-D register
//          tiles (a thread owns a small block of the score tile, as in the tiled matmul), for
//          head dims up to 64;
//   wmma   attention_wmma_kernel and its two backward kernels (the end of this file): float16 /
//          bfloat16 with head dims that are multiples of 16, on tensor cores through wmma (16-bit
//          products, float32 sums; bfloat16 from sm_80 on), the scores staged in shared memory;
//   mma    attention_mma_kernel and its two backward kernels (attention_mma.cu): tensor cores
//          through mma.sync, the scores kept in registers (sm_80 on): head dims up to 128,
//          multiples of 8 in float32 (at float32 accuracy, 3xTF32), of 16 in 16-bit types.
// The CUDA-core families convert 16-bit values to float32 as they stage them in shared memory,
// and every sum runs in float32. float64 is not taken here (the op composes it).
// MINITORCH_CUDA_ATTENTION=rows|tiled|wmma|mma asks for a family wherever it can take the call.
#include <cfloat>
#include <cstdlib>
#include <cstring>

#include "attention_common.cuh"
#include "minitorch/half.h"
#include "mma.cuh"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

constexpr int kTile = 32;                      // keys (or queries) staged per step: one per lane
constexpr int kMaxHead = 128;                  // head dims up to 128 ...
constexpr int kChunks = kMaxHead / kWarp;      // ... so a lane holds at most 4 values of a row
constexpr int kWarps = 4;                      // 128 threads per block
constexpr int kFwdRowsPerWarp = 4;             // forward: 16 query rows per block
constexpr int kFwdRows = kWarps * kFwdRowsPerWarp;
constexpr int kBwdRowsPerWarp = 2;             // backward: 8 rows per block (shared memory: 41 KB)
constexpr int kBwdRows = kWarps * kBwdRowsPerWarp;
constexpr int kPad = kMaxHead + 1;             // a staged row read by lane = row: +1 spreads the banks

__device__ __forceinline__ float warp_max(float v)
{
    return warp_all_reduce(
        v, [](float x, int lane_mask) { return __shfl_xor_sync(kFullMask, x, lane_mask); },
        [](float a, float b) { return fmaxf(a, b); });
}

// A lane's dot products of one staged row b (the lane's key, or query) with the R staged rows
// a[0], ..., a[R - 1] of its warp, over `width` columns: each value of b is read from shared
// memory once for all R rows (a's values are broadcasts), so a warp's R rows cost one pass
// over the tile instead of R.
template <int R, int pitch>
__device__ __forceinline__ void staged_dots(float (&dot)[R], const float (*a)[pitch], const float* b, int width)
{
MT_UNROLL
    for (int r = 0; r < R; ++r) dot[r] = 0.f;
    for (int d = 0; d < width; ++d) {
        const float bd = b[d];
MT_UNROLL
        for (int r = 0; r < R; ++r) dot[r] += a[r][d] * bd;
    }
}

// One step of a row's online softmax, the warp holding the row's scores of one key tile (lane j:
// score s of key j). The row's running max m and sum l take the tile in; returns the lane's
// weight exp(s - m_new) and sets alpha = exp(m_old - m_new), what was accumulated before is
// rescaled by. While every score so far is -inf (masked), nothing is added and nothing rescaled.
__device__ __forceinline__ float online_softmax_step(float s, float& m, float& l, float& alpha)
{
    const float m_new = fmaxf(m, warp_max(s));
    alpha = m_new == -INFINITY ? 1.f : __expf(m - m_new);
    const float p = m_new == -INFINITY ? 0.f : __expf(s - m_new);
    l = l * alpha + warp_sum(p);  // the un-dropped weights
    m = m_new;
    return p;
}

// The per-row register arrays start at zero (indices are constants after unrolling).
template <int R, int C>
__device__ __forceinline__ void zero_rows(float (&a)[R][C])
{
MT_UNROLL
    for (int r = 0; r < R; ++r)
MT_UNROLL
        for (int c = 0; c < C; ++c) a[r][c] = 0.f;
}

// A warp's R rows held in registers: lane owns columns lane, lane + 32, ... of each (acc[r][c]
// is column lane + 32c of row r). acc[r] += sum over the tile's staged rows j of w[r]_j * rows[j],
// where lane j holds w[r]_j (a softmax weight, or dS): each w[r]_j reaches every lane by a
// shuffle, and each staged value rows[j][.] is read from shared memory once for all R rows.
template <int R, int pitch>
__device__ __forceinline__ void add_weighted_rows(float (&acc)[R][kChunks], const float (&w)[R],
                                                  const float (*rows)[pitch], int width, int lane)
{
    for (int j = 0; j < kTile; ++j) {
        float wj[R];
MT_UNROLL
        for (int r = 0; r < R; ++r) wj[r] = __shfl_sync(kFullMask, w[r], j);
MT_UNROLL
        for (int c = 0; c < kChunks; ++c)
            if (lane + c * kWarp < width) {
                const float x = rows[j][lane + c * kWarp];
MT_UNROLL
                for (int r = 0; r < R; ++r) acc[r][c] += wj[r] * x;
            }
    }
}

// Such a row written out: dst[lane + 32c] = T(finish(acc[c])) for the columns below width.
template <class T, class F>
__device__ __forceinline__ void store_row(T* dst, const float (&acc)[kChunks], int width, int lane, F finish)
{
MT_UNROLL
    for (int c = 0; c < kChunks; ++c)
        if (lane + c * kWarp < width) dst[lane + c * kWarp] = T(finish(acc[c]));
}

// Thread mapping: grid (pairs, ceil(L / kFwdRows)), block 128 threads = 4 warps; warp w owns
// query rows q0 + 4w .. q0 + 4w + 3. Per key tile, lane j scores key k0 + j against each of
// the warp's rows (q from shared memory, a broadcast; k row j from shared memory, padded so
// the 32 lanes hit 32 banks), the warp's max and sum update the online softmax, and lane
// holds output values d = lane, lane + 32, ... (up to 4) of each row, adding p_j * v[j][d]
// with p_j broadcast by a shuffle.
template <class T>
__global__ void attention_kernel(const T* q, const T* k, const T* v, T* out, float* lse, AttentionLayout lay,
                                 AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L, int64_t S,
                                 int E, int Ev, float scale, bool causal)
{
    __shared__ float q_s[kFwdRows][kMaxHead];
    __shared__ float k_s[kTile][kPad];
    __shared__ float v_s[kTile][kMaxHead];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t q0 = tile_in_order(causal) * kFwdRows;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's rows are no longer read
        stage_rows<float, T, kMaxHead>(q_s, q + lay.q.pair(b), lay.q.row_stride, q0, kFwdRows, L, E);
        float m[kFwdRowsPerWarp], l[kFwdRowsPerWarp], o[kFwdRowsPerWarp][kChunks];
        zero_rows(o);
MT_UNROLL
        for (int r = 0; r < kFwdRowsPerWarp; ++r) m[r] = -INFINITY, l[r] = 0.f;
        for (int64_t k0 = 0; k0 < keys_end(S, q0 + kFwdRows, causal); k0 += kTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, T, kPad>(k_s, k + lay.k.pair(b), lay.k.row_stride, k0, kTile, S, E);
            stage_rows<float, T, kMaxHead>(v_s, v + lay.v.pair(b), lay.v.row_stride, k0, kTile, S, Ev);
            __syncthreads();  // the tile is staged
            float dot[kFwdRowsPerWarp], p[kFwdRowsPerWarp];
            staged_dots(dot, q_s + warp * kFwdRowsPerWarp, k_s[lane], E);
MT_UNROLL
            for (int r = 0; r < kFwdRowsPerWarp; ++r) {
                const int row = warp * kFwdRowsPerWarp + r;
                const float s = score_of(dot[r], scale, mask_matrix, mask, q0 + row, k0 + lane, L, S, causal);
                float alpha;
                p[r] = online_softmax_step(s, m[r], l[r], alpha);
MT_UNROLL
                for (int c = 0; c < kChunks; ++c) o[r][c] *= alpha;
                if (drop.on && p[r] != 0.f) p[r] *= drop.factor(b, q0 + row, k0 + lane);
            }
            add_weighted_rows(o, p, v_s, Ev, lane);
        }
MT_UNROLL
        for (int r = 0; r < kFwdRowsPerWarp; ++r) {
            const int64_t i = q0 + warp * kFwdRowsPerWarp + r;
            if (i >= L) continue;
            // l = 0 (every key masked): NaN, as the composed formula
            store_row(out + lay.out.row(b, i), o[r], Ev, lane, [&](float x) { return x / l[r]; });
            if (lane == 0) lse[b * L + i] = m[r] + logf(l[r]);
        }
    }
}

// Thread mapping: one warp per row r = b * L + i of dO and O (B * L rows), lanes over the row's values.
template <class T>
__global__ void attention_delta_kernel(const T* grad_out, const T* out, float* delta, AttentionLayout lay, int64_t B,
                                       int64_t L, int Ev)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < B * L; r += gridDim.x * warps) {
        const T *g = grad_out + lay.grad_out.row(r / L, r % L), *o = out + lay.out.row(r / L, r % L);
        float s = 0.f;
        for (int d = lane; d < Ev; d += kWarp) s += float(g[d]) * float(o[d]);
        s = warp_sum(s);
        if (lane == 0) delta[r] = s;
    }
}

// Thread mapping: grid (pairs, ceil(S / kBwdRows)), 4 warps; warp w owns keys j0 + 2w, j0 + 2w + 1,
// their dK and dV rows in registers (lane holds d = lane, lane + 32, ...). Per query tile (32 rows
// of q and dO staged in shared memory, with their lse and D), lane i computes P and dS of query
// i0 + i against each of the warp's keys; then the warp adds P[i] dO[i] and dS[i] q[i] over the
// tile's 32 rows, P[i] and dS[i] broadcast by shuffles. Causal: query tiles before the block's
// first key see none of its keys and are skipped.
template <class T>
__global__ void attention_dkdv_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                      const float* delta, T* grad_k, T* grad_v, AttentionLayout lay,
                                      AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L, int64_t S,
                                      int E, int Ev, float scale, bool causal)
{
    __shared__ float k_s[kBwdRows][kMaxHead];
    __shared__ float v_s[kBwdRows][kMaxHead];
    __shared__ float q_s[kTile][kPad];
    __shared__ float g_s[kTile][kPad];  // dO
    __shared__ float lse_s[kTile], delta_s[kTile];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t j0 = int64_t(blockIdx.y) * kBwdRows;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();
        stage_rows<float, T, kMaxHead>(k_s, k + lay.k.pair(b), lay.k.row_stride, j0, kBwdRows, S, E);
        stage_rows<float, T, kMaxHead>(v_s, v + lay.v.pair(b), lay.v.row_stride, j0, kBwdRows, S, Ev);
        float dk[kBwdRowsPerWarp][kChunks], dv[kBwdRowsPerWarp][kChunks];
        zero_rows(dk);
        zero_rows(dv);
        const int64_t i_begin = causal ? j0 / kTile * kTile : 0;
        for (int64_t i0 = i_begin; i0 < L; i0 += kTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, T, kPad>(q_s, q + lay.q.pair(b), lay.q.row_stride, i0, kTile, L, E);
            stage_rows<float, T, kPad>(g_s, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, kTile, L, Ev);
            stage_row_stats(lse_s, delta_s, lse, delta, b, i0, L, kTile);
            __syncthreads();  // the tile is staged
            float dot[kBwdRowsPerWarp], dp[kBwdRowsPerWarp], p[kBwdRowsPerWarp], ds[kBwdRowsPerWarp];
            staged_dots(dot, k_s + warp * kBwdRowsPerWarp, q_s[lane], E);
            staged_dots(dp, v_s + warp * kBwdRowsPerWarp, g_s[lane], Ev);
MT_UNROLL
            for (int r = 0; r < kBwdRowsPerWarp; ++r) {
                const int64_t i = i0 + lane, j = j0 + warp * kBwdRowsPerWarp + r;
                const float s = score_of(dot[r], scale, mask_matrix, mask, i, j, L, S, causal);
                p[r] = 0.f, ds[r] = 0.f;
                if (s != -INFINITY) {
                    p[r] = __expf(s - lse_s[lane]);
                    const float z = drop.factor(b, i, j);  // 1 without dropout
                    ds[r] = p[r] * (dp[r] * z - delta_s[lane]);
                    p[r] *= z;  // dV takes the weight that met v in the forward
                }
            }
            add_weighted_rows(dv, p, g_s, Ev, lane);
            add_weighted_rows(dk, ds, q_s, E, lane);
        }
MT_UNROLL
        for (int r = 0; r < kBwdRowsPerWarp; ++r) {
            const int64_t j = j0 + warp * kBwdRowsPerWarp + r;
            if (j >= S) continue;
            store_row(grad_v + lay.grad_v.row(b, j), dv[r], Ev, lane, [](float x) { return x; });
            store_row(grad_k + lay.grad_k.row(b, j), dk[r], E, lane, [&](float x) { return x * scale; });
        }
    }
}

// lse and D of query rows first .. first + R - 1 of pair b (0 past L), into registers.
template <int R>
__device__ __forceinline__ void row_stats(float (&row_lse)[R], float (&row_delta)[R], const float* lse,
                                          const float* delta, int64_t b, int64_t first, int64_t L)
{
MT_UNROLL
    for (int r = 0; r < R; ++r) {
        const int64_t i = first + r;
        row_lse[r] = i < L ? lse[b * L + i] : 0.f;
        row_delta[r] = i < L ? delta[b * L + i] : 0.f;
    }
}

// Thread mapping: grid (pairs, ceil(L / kBwdRows)), 4 warps; warp w owns query rows
// i0 + 2w, i0 + 2w + 1 and their dQ rows in registers (lane holds d = lane, lane + 32, ...).
// Per key tile (32 rows of k and v staged, padded), lane j computes P and dS of key k0 + j
// against each of the warp's rows, then the warp adds dS[j] k[j] over the tile, dS[j]
// broadcast by a shuffle. Causal calls stop at the block's diagonal, as the forward.
template <class T>
__global__ void attention_dq_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                    const float* delta, T* grad_q, AttentionLayout lay, AttentionMask<float> mask,
                                    AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E, int Ev, float scale,
                                    bool causal)
{
    __shared__ float q_s[kBwdRows][kMaxHead];
    __shared__ float g_s[kBwdRows][kMaxHead];  // dO
    __shared__ float k_s[kTile][kPad];
    __shared__ float v_s[kTile][kPad];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t i0 = tile_in_order(causal) * kBwdRows;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();
        stage_rows<float, T, kMaxHead>(q_s, q + lay.q.pair(b), lay.q.row_stride, i0, kBwdRows, L, E);
        stage_rows<float, T, kMaxHead>(g_s, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, kBwdRows, L,
                                       Ev);
        float dq[kBwdRowsPerWarp][kChunks], row_lse[kBwdRowsPerWarp], row_delta[kBwdRowsPerWarp];
        zero_rows(dq);
        row_stats(row_lse, row_delta, lse, delta, b, i0 + warp * kBwdRowsPerWarp, L);
        for (int64_t k0 = 0; k0 < keys_end(S, i0 + kBwdRows, causal); k0 += kTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, T, kPad>(k_s, k + lay.k.pair(b), lay.k.row_stride, k0, kTile, S, E);
            stage_rows<float, T, kPad>(v_s, v + lay.v.pair(b), lay.v.row_stride, k0, kTile, S, Ev);
            __syncthreads();  // the tile is staged
            float dot[kBwdRowsPerWarp], dp[kBwdRowsPerWarp], ds[kBwdRowsPerWarp];
            staged_dots(dot, q_s + warp * kBwdRowsPerWarp, k_s[lane], E);
            staged_dots(dp, g_s + warp * kBwdRowsPerWarp, v_s[lane], Ev);
MT_UNROLL
            for (int r = 0; r < kBwdRowsPerWarp; ++r) {
                const int row = warp * kBwdRowsPerWarp + r;
                const float s = score_of(dot[r], scale, mask_matrix, mask, i0 + row, k0 + lane, L, S, causal);
                ds[r] = 0.f;
                if (s != -INFINITY) {
                    const float z = drop.factor(b, i0 + row, k0 + lane);  // 1 without dropout
                    ds[r] = __expf(s - row_lse[r]) * (dp[r] * z - row_delta[r]);
                }
            }
            add_weighted_rows(dq, ds, k_s, E, lane);
        }
MT_UNROLL
        for (int r = 0; r < kBwdRowsPerWarp; ++r) {
            const int64_t i = i0 + warp * kBwdRowsPerWarp + r;
            if (i >= L) continue;
            store_row(grad_q + lay.grad_q.row(b, i), dq[r], E, lane, [&](float x) { return x * scale; });
        }
    }
}

// ---- register tiles (head dims up to 64: the fast CUDA-core kernels) ----
//
// The kernels above give each lane one key (or query) and each warp a few rows: every multiply-
// add then needs a shared-memory read of its own, so they run at the speed of shared memory, not
// of the arithmetic units. The kernels below compute the same things the way the tiled matmul
// lecture's 2-D thread tiles do: a thread owns a small R x C block of the 32- or 64-row score
// tile, and at each step of a dot product reads R values of one operand and C of the other (one
// vector load each, from tiles staged transposed: depth-major) for R x C multiply-adds held in
// registers. Sums of weighted rows (O += P V, dQ += dS K, dV += P^T dO, dK += dS^T Q) likewise
// read a thread's R weights with one vector load and give each of its 8 output columns R
// multiply-adds per read. The online softmax and the backward's formulas are those above.
//
// Thread mapping (all three): 128 threads, tx = thread % 8 and ty = thread / 8 (0..15). In a
// score tile thread (ty, tx) owns rows R*ty .. R*ty + R - 1 and columns 4tx .. 4tx + 3; a row's
// 8 owners are 8 neighbouring lanes of one warp, so its max and sum are 3 shuffles. In an
// output tile it owns the same R rows and the columns tx, tx + 8, ..., tx + 56.
// Shared memory stays under the 48 KiB a kernel gets without opting in: pitches of 36 or 68
// floats (4 more than the tile, = 4 mod 32) keep 16-byte reads aligned and the transposed scalar
// reads of 8 lanes on 8 different banks.
constexpr int kRtHead = 64;              // head dims these kernels take
constexpr int kRtTile = 32;              // keys per tile (and query rows per backward tile)
constexpr int kRtFwdRows = 64;           // forward: query rows per block, 4 per thread row
constexpr int kRtNarrow = kRtTile + 4;   // pitch of a transposed 32-row tile
constexpr int kRtWide = kRtFwdRows + 4;  // pitch of a transposed 64-row tile
constexpr int kRtCols = kRtHead / 8;     // output columns per thread: tx, tx + 8, ...

// N floats read or written as one vector access (the address is N * 4-byte aligned).
template <int N>
struct alignas(4 * N) Floats {
    float v[N];
};

template <int N>
__device__ __forceinline__ Floats<N> load_floats(const float* p)
{
    return *reinterpret_cast<const Floats<N>*>(p);
}

// Rows [row0, row0 + count) of a (rows, width) matrix of T, transposed into dst[d][r] as float
// for d < kRtHead, zeros past `rows` and `width`. A warp covers 8 columns of 4 rows: its global
// reads are 4 runs of 32 bytes and its shared writes (4d + r mod 32) hit 32 different banks.
template <class T, int pitch>
__device__ void stage_transposed(float (*dst)[pitch], const T* src, int64_t row_stride, int64_t row0, int count,
                                 int64_t rows, int width)
{
    constexpr int groups = kRtHead / 8;  // 8-column groups of a row
    for (int x = threadIdx.x; x < count * kRtHead; x += blockDim.x) {
        const int g = x / kWarp, d = g % groups * 8 + x % 8, r = g / groups * 4 + x / 8 % 4;
        dst[d][r] = row0 + r < rows && d < width ? float(src[(row0 + r) * row_stride + d]) : 0.f;
    }
}

// The key tile [k0, k0 + 32) of pair b: K^T and V^T.
template <class T>
__device__ __forceinline__ void stage_key_tile(float (*k_t)[kRtNarrow], float (*v_t)[kRtNarrow], const T* k,
                                               const T* v, const AttentionLayout& lay, int64_t b, int64_t k0,
                                               int64_t S, int E, int Ev)
{
    stage_transposed(k_t, k + lay.k.pair(b), lay.k.row_stride, k0, kRtTile, S, E);
    stage_transposed(v_t, v + lay.v.pair(b), lay.v.row_stride, k0, kRtTile, S, Ev);
}

// acc[r][c] += sum over d < depth of a[d][a0 + r] * b[d][b0 + c]: a thread's R x C block of the
// product of two transposed tiles.
template <int R, int C, int pa, int pb>
__device__ __forceinline__ void tile_dots(float (&acc)[R][C], const float (*a)[pa], int a0, const float (*b)[pb],
                                          int b0, int depth)
{
#pragma unroll 4
    for (int d = 0; d < depth; ++d) {
        const Floats<R> x = load_floats<R>(&a[d][a0]);
        const Floats<C> y = load_floats<C>(&b[d][b0]);
MT_UNROLL
        for (int r = 0; r < R; ++r)
MT_UNROLL
            for (int c = 0; c < C; ++c) acc[r][c] += x.v[r] * y.v[c];
    }
}

// acc[r][i] += sum over j < kRtTile of w[j][w0 + r] * x[col + 8i][j]: R rows of weights (w holds
// them transposed, a row's weights down a column) times the tile's rows, which x holds transposed.
template <int R, int pw, int px>
__device__ __forceinline__ void tile_update(float (&acc)[R][kRtCols], const float (*w)[pw], int w0,
                                            const float (*x)[px], int col)
{
#pragma unroll 2
    for (int j = 0; j < kRtTile; ++j) {
        const Floats<R> wj = load_floats<R>(&w[j][w0]);
MT_UNROLL
        for (int i = 0; i < kRtCols; ++i) {
            const float xv = x[col + 8 * i][j];
MT_UNROLL
            for (int r = 0; r < R; ++r) acc[r][i] += wj.v[r] * xv;
        }
    }
}

// A thread's R rows of outputs (columns col, col + 8, ...) written out as T(finish(r, value)).
template <int R, class T, class RowOf, class F>
__device__ __forceinline__ void store_tile(const float (&acc)[R][kRtCols], T* dst, RowOf row_of, int col, int width,
                                           F finish)
{
MT_UNROLL
    for (int r = 0; r < R; ++r) {
        const int64_t at = row_of(r);
        if (at < 0) continue;
MT_UNROLL
        for (int i = 0; i < kRtCols; ++i)
            if (col + 8 * i < width) dst[at + col + 8 * i] = T(finish(r, acc[r][i]));
    }
}

// Forward. Grid (pairs, ceil(L / 64)). Per key tile: S = Q K^T (thread: 4 rows x 4 keys), the
// online softmax of each row over its 8 owners, P^T to shared memory, O += P V (thread: 4 rows x
// 8 columns in registers, rescaled by alpha first). Shared memory: 44 KiB.
template <class T>
__global__ void attention_tiled_kernel(const T* q, const T* k, const T* v, T* out, float* lse, AttentionLayout lay,
                                       AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L,
                                       int64_t S, int E, int Ev, float scale, bool causal)
{
    constexpr int R = kRtFwdRows / 16;
    __shared__ __align__(16) float q_t[kRtHead][kRtWide];   // Q^T of the block's rows
    __shared__ __align__(16) float k_t[kRtHead][kRtNarrow];  // K^T of the tile's keys
    __shared__ __align__(16) float v_t[kRtHead][kRtNarrow];  // V^T
    __shared__ __align__(16) float p_t[kRtTile][kRtWide];    // P^T: p_t[key][row]
    const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
    const int64_t q0 = tile_in_order(causal) * kRtFwdRows;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's q_t is no longer read
        stage_transposed(q_t, q + lay.q.pair(b), lay.q.row_stride, q0, kRtFwdRows, L, E);
        float m[R], l[R], o[R][kRtCols];
        zero_rows(o);
MT_UNROLL
        for (int r = 0; r < R; ++r) m[r] = -INFINITY, l[r] = 0.f;
        for (int64_t k0 = 0; k0 < keys_end(S, q0 + kRtFwdRows, causal); k0 += kRtTile) {
            __syncthreads();  // every thread is done with the previous tile
            stage_key_tile(k_t, v_t, k, v, lay, b, k0, S, E, Ev);
            __syncthreads();  // the tile is staged
            float s[R][4] = {};
            tile_dots(s, q_t, R * ty, k_t, 4 * tx, E);
MT_UNROLL
            for (int r = 0; r < R; ++r) {
                const int64_t i = q0 + R * ty + r;
                float mx = -INFINITY;
MT_UNROLL
                for (int c = 0; c < 4; ++c) {
                    s[r][c] = score_of(s[r][c], scale, mask_matrix, mask, i, k0 + 4 * tx + c, L, S, causal);
                    mx = fmaxf(mx, s[r][c]);
                }
                const float m_new = fmaxf(m[r], lanes_max<8>(mx));
                const float alpha = m_new == -INFINITY ? 1.f : __expf(m[r] - m_new);
                float sum = 0.f;
MT_UNROLL
                for (int c = 0; c < 4; ++c) {
                    float p = m_new == -INFINITY ? 0.f : __expf(s[r][c] - m_new);
                    sum += p;  // the un-dropped weights
                    if (drop.on && p != 0.f) p *= drop.factor(b, i, k0 + 4 * tx + c);
                    s[r][c] = p;
                }
                l[r] = l[r] * alpha + lanes_sum<8>(sum);
                m[r] = m_new;
MT_UNROLL
                for (int c = 0; c < kRtCols; ++c) o[r][c] *= alpha;
            }
MT_UNROLL
            for (int c = 0; c < 4; ++c) {
                Floats<R> col;
MT_UNROLL
                for (int r = 0; r < R; ++r) col.v[r] = s[r][c];
                *reinterpret_cast<Floats<R>*>(&p_t[4 * tx + c][R * ty]) = col;
            }
            __syncthreads();  // P^T is complete
            tile_update(o, p_t, R * ty, v_t, tx);
        }
        const auto row_of = [&](int r) {
            const int64_t i = q0 + R * ty + r;
            return i < L ? lay.out.row(b, i) : int64_t(-1);
        };
        // l = 0 (every key masked): NaN, as the composed formula
        store_tile(o, out, row_of, tx, Ev, [&](int r, float x) { return x / l[r]; });
MT_UNROLL
        for (int r = 0; r < R; ++r)
            if (tx == 0 && q0 + R * ty + r < L) lse[b * L + q0 + R * ty + r] = m[r] + logf(l[r]);
    }
}

// Backward, dQ. Grid (pairs, ceil(L / 32)): a block owns 32 query rows (Q^T and dO^T staged once)
// and walks the key tiles (to its diagonal when causal). Per tile: S = Q K^T and dP = dO V^T
// (thread: 2 rows x 4 keys), dS = P (dP Z - D) to shared memory as dS^T, then dQ += dS K (thread:
// 2 rows x 8 columns). Shared memory: 41 KiB.
template <class T>
__global__ void attention_tiled_dq_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                          const float* delta, T* grad_q, AttentionLayout lay,
                                          AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L,
                                          int64_t S, int E, int Ev, float scale, bool causal)
{
    constexpr int R = kRtTile / 16;
    __shared__ __align__(16) float q_t[kRtHead][kRtNarrow];
    __shared__ __align__(16) float g_t[kRtHead][kRtNarrow];  // dO^T
    __shared__ __align__(16) float k_t[kRtHead][kRtNarrow];
    __shared__ __align__(16) float v_t[kRtHead][kRtNarrow];
    __shared__ __align__(16) float ds_t[kRtTile][kRtNarrow];  // dS^T: ds_t[key][row]
    const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
    const int64_t i0 = tile_in_order(causal) * kRtTile;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's q_t and g_t are no longer read
        stage_transposed(q_t, q + lay.q.pair(b), lay.q.row_stride, i0, kRtTile, L, E);
        stage_transposed(g_t, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, kRtTile, L, Ev);
        float row_lse[R], row_delta[R], dq[R][kRtCols];
        zero_rows(dq);
        row_stats(row_lse, row_delta, lse, delta, b, i0 + R * ty, L);
        for (int64_t k0 = 0; k0 < keys_end(S, i0 + kRtTile, causal); k0 += kRtTile) {
            __syncthreads();  // every thread is done with the previous tile
            stage_key_tile(k_t, v_t, k, v, lay, b, k0, S, E, Ev);
            __syncthreads();  // the tile is staged
            float s[R][4] = {}, dp[R][4] = {};
            tile_dots(s, q_t, R * ty, k_t, 4 * tx, E);
            tile_dots(dp, g_t, R * ty, v_t, 4 * tx, Ev);
MT_UNROLL
            for (int c = 0; c < 4; ++c) {
                const int64_t j = k0 + 4 * tx + c;
                Floats<R> col;
MT_UNROLL
                for (int r = 0; r < R; ++r) {
                    const int64_t i = i0 + R * ty + r;
                    const float sc = score_of(s[r][c], scale, mask_matrix, mask, i, j, L, S, causal);
                    col.v[r] = 0.f;
                    if (sc != -INFINITY) {
                        const float z = drop.factor(b, i, j);  // 1 without dropout
                        col.v[r] = __expf(sc - row_lse[r]) * (dp[r][c] * z - row_delta[r]);
                    }
                }
                *reinterpret_cast<Floats<R>*>(&ds_t[4 * tx + c][R * ty]) = col;
            }
            __syncthreads();  // dS^T is complete
            tile_update(dq, ds_t, R * ty, k_t, tx);
        }
        const auto row_of = [&](int r) {
            const int64_t i = i0 + R * ty + r;
            return i < L ? lay.grad_q.row(b, i) : int64_t(-1);
        };
        store_tile(dq, grad_q, row_of, tx, E, [&](int, float x) { return x * scale; });
    }
}

// Backward, dK and dV. Grid (pairs, ceil(S / 32)): a block owns 32 keys (K^T and V^T staged once)
// and walks the query tiles (from its diagonal on when causal). Per tile: S^T = K Q^T and
// dP^T = V dO^T (thread: 2 keys x 4 queries), P Z and dS to shared memory (by query rows), then
// dV += (P Z)^T dO and dK += dS^T Q (thread: 2 keys x 8 columns of each). Shared memory: 45 KiB.
template <class T>
__global__ void attention_tiled_dkdv_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                            const float* delta, T* grad_k, T* grad_v, AttentionLayout lay,
                                            AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L,
                                            int64_t S, int E, int Ev, float scale, bool causal)
{
    constexpr int R = kRtTile / 16;
    __shared__ __align__(16) float k_t[kRtHead][kRtNarrow];
    __shared__ __align__(16) float v_t[kRtHead][kRtNarrow];
    __shared__ __align__(16) float q_t[kRtHead][kRtNarrow];
    __shared__ __align__(16) float g_t[kRtHead][kRtNarrow];   // dO^T
    __shared__ __align__(16) float p_s[kRtTile][kRtNarrow];   // P Z: p_s[query][key]
    __shared__ __align__(16) float ds_s[kRtTile][kRtNarrow];  // dS: ds_s[query][key]
    __shared__ float lse_s[kRtTile], delta_s[kRtTile];
    const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
    const int64_t j0 = int64_t(blockIdx.y) * kRtTile;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's k_t and v_t are no longer read
        stage_key_tile(k_t, v_t, k, v, lay, b, j0, S, E, Ev);
        float dk[R][kRtCols], dv[R][kRtCols];
        zero_rows(dk);
        zero_rows(dv);
        for (int64_t i0 = causal ? j0 : 0; i0 < L; i0 += kRtTile) {
            __syncthreads();  // every thread is done with the previous tile
            stage_transposed(q_t, q + lay.q.pair(b), lay.q.row_stride, i0, kRtTile, L, E);
            stage_transposed(g_t, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, kRtTile, L, Ev);
            stage_row_stats(lse_s, delta_s, lse, delta, b, i0, L, kRtTile);
            __syncthreads();  // the tile is staged
            float s[R][4] = {}, dp[R][4] = {};
            tile_dots(s, k_t, R * ty, q_t, 4 * tx, E);
            tile_dots(dp, v_t, R * ty, g_t, 4 * tx, Ev);
MT_UNROLL
            for (int c = 0; c < 4; ++c) {
                const int qi = 4 * tx + c;
                const int64_t i = i0 + qi;
                Floats<R> p_col, ds_col;
MT_UNROLL
                for (int r = 0; r < R; ++r) {
                    const int64_t j = j0 + R * ty + r;
                    const float sc = score_of(s[r][c], scale, mask_matrix, mask, i, j, L, S, causal);
                    p_col.v[r] = 0.f, ds_col.v[r] = 0.f;
                    if (sc != -INFINITY) {
                        const float p = __expf(sc - lse_s[qi]);
                        const float z = drop.factor(b, i, j);  // 1 without dropout
                        ds_col.v[r] = p * (dp[r][c] * z - delta_s[qi]);
                        p_col.v[r] = p * z;  // dV takes the weight that met v in the forward
                    }
                }
                *reinterpret_cast<Floats<R>*>(&p_s[qi][R * ty]) = p_col;
                *reinterpret_cast<Floats<R>*>(&ds_s[qi][R * ty]) = ds_col;
            }
            __syncthreads();  // P Z and dS are complete
            tile_update(dv, p_s, R * ty, g_t, tx);
            tile_update(dk, ds_s, R * ty, q_t, tx);
        }
        const auto v_row = [&](int r) {
            const int64_t j = j0 + R * ty + r;
            return j < S ? lay.grad_v.row(b, j) : int64_t(-1);
        };
        const auto k_row = [&](int r) {
            const int64_t j = j0 + R * ty + r;
            return j < S ? lay.grad_k.row(b, j) : int64_t(-1);
        };
        store_tile(dv, grad_v, v_row, tx, Ev, [](int, float x) { return x; });
        store_tile(dk, grad_k, k_row, tx, E, [&](int, float x) { return x * scale; });
    }
}

// ---- tensor cores (float16 / bfloat16, head dims multiples of 16) ----
//
// The same algorithm with its matrix products on tensor cores (wmma, mma.cuh): 16-bit inputs stay
// 16-bit in shared memory, products accumulate in float. A block has 4 warps and works on 32 x 32
// tiles of the (L, S) matrix; the 16 x 16 MMA tiles of a product are dealt to the warps. Every
// staged row is 64, 128 or 256 bytes long and every array 32-byte aligned, so each fragment's
// pointer is 32-byte aligned and each ldm a multiple of 16 bytes, as wmma requires.
constexpr int kMma = 16;      // the wmma tile: 16 x 16 x 16
constexpr int kMmaTile = 32;  // query rows and keys per tile
constexpr int kMmaRowsPerWarp = kMmaTile / kWarps;
constexpr int kMmaOutTiles = 2 * kMaxHead / kMma / kWarps;  // 16 x 16 tiles of a 32 x 128 output per warp

namespace wmma = nvcuda::wmma;
using Acc = wmma::fragment<wmma::accumulator, kMma, kMma, kMma, float>;
template <class T>
using FragA = wmma::fragment<wmma::matrix_a, kMma, kMma, kMma, MmaType<T>, wmma::row_major>;
template <class T, class Layout>
using FragB = wmma::fragment<wmma::matrix_b, kMma, kMma, kMma, MmaType<T>, Layout>;

template <class T>
__device__ __forceinline__ const MmaType<T>* mma_ptr(const T* p)
{
    return reinterpret_cast<const MmaType<T>*>(p);
}

// acc += a b^T: a and b are 16 rows each, staged by rows (pitch kMaxHead), over `depth` columns.
template <class T>
__device__ __forceinline__ void mma_rows_rows(Acc& acc, const T* a, const T* b, int depth)
{
    FragA<T> fa;
    FragB<T, wmma::col_major> fb;  // b's rows are the columns of b^T
    for (int d = 0; d < depth; d += kMma) {
        wmma::load_matrix_sync(fa, mma_ptr(a + d), kMaxHead);
        wmma::load_matrix_sync(fb, mma_ptr(b + d), kMaxHead);
        wmma::mma_sync(acc, fa, fb, acc);
    }
}

// acc += w x over the 32 rows of a tile: w is a 16 x 32 weight block (row_major: w[r][j] at
// w + r * kMmaTile + j; col_major: w[r][j] at w + j * kMmaTile + r, the transpose of a block
// stored the other way), x the tile's 32 staged rows (pitch kMaxHead) from column x's offset.
template <class Layout, class T>
__device__ __forceinline__ void mma_weights_rows(Acc& acc, const T* w, const T* x)
{
    wmma::fragment<wmma::matrix_a, kMma, kMma, kMma, MmaType<T>, Layout> fw;
    FragB<T, wmma::row_major> fx;
    constexpr bool by_rows = std::is_same_v<Layout, wmma::row_major>;
    for (int j = 0; j < kMmaTile; j += kMma) {
        wmma::load_matrix_sync(fw, mma_ptr(by_rows ? w + j : w + j * kMmaTile), kMmaTile);
        wmma::load_matrix_sync(fx, mma_ptr(x + j * kMaxHead), kMaxHead);
        wmma::mma_sync(acc, fw, fx, acc);
    }
}

// The elements of an accumulator: stored to the warp's 16 x 16 float scratch, then fn(r, c, value)
// for each, the lanes taking turns (the element -> lane mapping of a fragment is unspecified).
template <class F>
__device__ __forceinline__ void for_each_element(const Acc& acc, float* scratch, int lane, F fn)
{
    wmma::store_matrix_sync(scratch, acc, kMma, wmma::mem_row_major);
    __syncwarp();  // every lane reads what the warp stored
    for (int e = lane; e < kMma * kMma; e += kWarp) fn(e / kMma, e % kMma, scratch[e]);
    __syncwarp();  // read before the warp stores the next one
}

// The calling warp's 16 x 16 slice of a 32 x 32 float tile, its scratch for for_each_element once
// the tile's scores are used up.
__device__ __forceinline__ float* warp_scratch(float (*tile)[kMmaTile])
{
    return &tile[0][0] + threadIdx.x / kWarp * kMma * kMma;
}

// The 32 x 32 score tile S = Q K^T (and, for the backward, dP = dO V^T) into float tiles in shared
// memory: warp w computes the 16 x 16 tile (w / 2, w % 2) of each.
template <class T>
__device__ __forceinline__ void mma_tile_products(float (*s_s)[kMmaTile], const T (*q_s)[kMaxHead],
                                                  const T (*k_s)[kMaxHead], int E, float (*dp_s)[kMmaTile] = nullptr,
                                                  const T (*g_s)[kMaxHead] = nullptr,
                                                  const T (*v_s)[kMaxHead] = nullptr, int Ev = 0)
{
    const int warp = threadIdx.x / kWarp, rt = warp / 2 * kMma, ct = warp % 2 * kMma;
    Acc acc;
    wmma::fill_fragment(acc, 0.f);
    mma_rows_rows(acc, q_s[rt], k_s[ct], E);
    wmma::store_matrix_sync(&s_s[rt][ct], acc, kMmaTile, wmma::mem_row_major);
    if (!dp_s) return;
    wmma::fill_fragment(acc, 0.f);
    mma_rows_rows(acc, g_s[rt], v_s[ct], Ev);
    wmma::store_matrix_sync(&dp_s[rt][ct], acc, kMmaTile, wmma::mem_row_major);
}

// Forward. Per key tile:
//   S = Q K^T    mma_tile_products, into s_s as float;
//   softmax      on CUDA cores, as attention_kernel: warp w owns query rows 8w .. 8w + 7 (their
//                m and l in registers), lane j key j; P = exp(s - m_new) goes to p_s in 16 bits,
//                the row's alpha = exp(m_old - m_new) to alpha_s;
//   O += P V     warp w computes the 16 x 16 output tiles w, w + 4, ... of the 32 x Ev output
//                (two MMAs each, into a fresh accumulator) and adds each to o_s, the float output
//                kept in shared memory, after rescaling o_s by alpha: the rescale happens in
//                shared memory because which fragment element holds which row is unspecified.
//                The warp's 16 x 16 slice of s_s (the scores are used up by then) is its scratch.
// Shared memory: q, k, v tiles 3 x 8 KiB, S 4 KiB, P 2 KiB, O 16 KiB: 46 KiB of the 48.
template <class T>
__device__ void attention_wmma_rows(const T* q, const T* k, const T* v, T* out, float* lse,
                                    const AttentionLayout& lay, const AttentionMask<float>& mask,
                                    const AttentionDropout& drop, int64_t B, int64_t L, int64_t S, int E, int Ev,
                                    float scale, bool causal)
{
    __shared__ __align__(32) T q_s[kMmaTile][kMaxHead];
    __shared__ __align__(32) T k_s[kMmaTile][kMaxHead];
    __shared__ __align__(32) T v_s[kMmaTile][kMaxHead];
    __shared__ __align__(32) float s_s[kMmaTile][kMmaTile];
    __shared__ __align__(32) T p_s[kMmaTile][kMmaTile];
    __shared__ __align__(32) float o_s[kMmaTile][kMaxHead];
    __shared__ float alpha_s[kMmaTile];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t q0 = tile_in_order(causal) * kMmaTile;
    float* const scratch = warp_scratch(s_s);
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's q_s and o_s are no longer read
        stage_rows<T, T, kMaxHead>(q_s, q + lay.q.pair(b), lay.q.row_stride, q0, kMmaTile, L, E);
        for (int x = threadIdx.x; x < kMmaTile * Ev; x += blockDim.x) o_s[x / Ev][x % Ev] = 0.f;
        float m[kMmaRowsPerWarp], l[kMmaRowsPerWarp];
MT_UNROLL
        for (int r = 0; r < kMmaRowsPerWarp; ++r) m[r] = -INFINITY, l[r] = 0.f;
        for (int64_t k0 = 0; k0 < keys_end(S, q0 + kMmaTile, causal); k0 += kMmaTile) {
            __syncthreads();  // every warp is done with the previous tile (k_s, v_s, s_s, p_s)
            stage_rows<T, T, kMaxHead>(k_s, k + lay.k.pair(b), lay.k.row_stride, k0, kMmaTile, S, E);
            stage_rows<T, T, kMaxHead>(v_s, v + lay.v.pair(b), lay.v.row_stride, k0, kMmaTile, S, Ev);
            __syncthreads();  // the tile is staged (and o_s zeroed)
            mma_tile_products(s_s, q_s, k_s, E);
            __syncthreads();  // every score of the tile is in s_s
MT_UNROLL
            for (int r = 0; r < kMmaRowsPerWarp; ++r) {
                const int row = warp * kMmaRowsPerWarp + r;
                const int64_t i = q0 + row, j = k0 + lane;
                const float s = attends(i, j, L, S, causal)
                                    ? masked_score(s_s[row][lane], scale, mask_matrix, mask, i, j)
                                    : -INFINITY;
                float alpha;
                float p = online_softmax_step(s, m[r], l[r], alpha);
                if (drop.on && p != 0.f) p *= drop.factor(b, i, j);
                p_s[row][lane] = T(p);
                if (lane == 0) alpha_s[row] = alpha;
            }
            __syncthreads();  // P and alpha are in shared memory; s_s is free
            const int col_tiles = Ev / kMma;
            for (int t = warp; t < 2 * col_tiles; t += kWarps) {
                const int rt = t / col_tiles * kMma, ct = t % col_tiles * kMma;
                Acc acc;
                wmma::fill_fragment(acc, 0.f);
                mma_weights_rows<wmma::row_major>(acc, p_s[rt], &v_s[0][ct]);
                for_each_element(acc, scratch, lane, [&](int r, int c, float x) {
                    o_s[rt + r][ct + c] = o_s[rt + r][ct + c] * alpha_s[rt + r] + x;
                });
            }
        }
        __syncthreads();  // o_s is complete
MT_UNROLL
        for (int r = 0; r < kMmaRowsPerWarp; ++r) {
            const int row = warp * kMmaRowsPerWarp + r;
            const int64_t i = q0 + row;
            if (i >= L) continue;
            // l = 0 (every key masked): NaN, as the composed formula
            for (int d = lane; d < Ev; d += kWarp) out[lay.out.row(b, i) + d] = T(o_s[row][d] / l[r]);
            if (lane == 0) lse[b * L + i] = m[r] + logf(l[r]);
        }
    }
}

// The backward's elementwise step on a 32 x 32 tile (queries i0 + r, keys j0 + c; S and dP in
// s_s and dp_s): P = exp(S - lse) and dS = P (dP Z - D), 0 where the pair is masked, into p_s (P Z,
// the weight that met v in the forward) and ds_s, in 16 bits.
template <class T>
__device__ __forceinline__ void mma_softmax_backward(T (*p_s)[kMmaTile], T (*ds_s)[kMmaTile],
                                                     const float (*s_s)[kMmaTile], const float (*dp_s)[kMmaTile],
                                                     const float* lse_s, const float* delta_s, int64_t b, int64_t i0,
                                                     int64_t j0, const float* mask_matrix,
                                                     const AttentionMask<float>& mask, const AttentionDropout& drop,
                                                     int64_t L, int64_t S, float scale, bool causal)
{
    for (int x = threadIdx.x; x < kMmaTile * kMmaTile; x += blockDim.x) {
        const int r = x / kMmaTile, c = x % kMmaTile;
        const int64_t i = i0 + r, j = j0 + c;
        float p = 0.f, ds = 0.f;
        if (attends(i, j, L, S, causal)) {
            const float s = masked_score(s_s[r][c], scale, mask_matrix, mask, i, j);
            if (s != -INFINITY) {
                p = __expf(s - lse_s[r]);
                const float z = drop.factor(b, i, j);  // 1 without dropout
                ds = p * (dp_s[r][c] * z - delta_s[r]);
                p *= z;
            }
        }
        p_s[r][c] = T(p);
        ds_s[r][c] = T(ds);
    }
}

// The shared memory of both backward kernels: tiles of q, dO, k and v (16 bits), S and dP (float),
// P Z and dS (16 bits), and the tile's query rows' lse and D: 45 KiB. (The `= {}` only makes the
// struct constant-initialized, which nvcc requires of a __shared__ variable; shared memory is
// never actually initialized.)
template <class T>
struct MmaBackwardTiles {
    __align__(32) T q[kMmaTile][kMaxHead];
    __align__(32) T g[kMmaTile][kMaxHead];  // dO
    __align__(32) T k[kMmaTile][kMaxHead];
    __align__(32) T v[kMmaTile][kMaxHead];
    __align__(32) float s[kMmaTile][kMmaTile] = {};
    __align__(32) float dp[kMmaTile][kMmaTile] = {};
    __align__(32) T p[kMmaTile][kMmaTile];
    __align__(32) T ds[kMmaTile][kMmaTile];
    float lse[kMmaTile] = {}, delta[kMmaTile] = {};
};

// Backward, dK and dV: a block owns 32 keys and walks the query tiles (from its diagonal on when
// causal). Per tile: S = Q K^T and dP = dO V^T (mma_tile_products), P Z and dS on CUDA cores
// (mma_softmax_backward), then dV += (P Z)^T dO and dK += dS^T Q on tensor cores. The sums need no
// rescaling, so they stay in accumulator fragments across the tiles: warp w owns the 16 x 16
// output tiles w, w + 4, ... of the 32 x Ev dV and of the 32 x E dK (up to 4 of each). At the end
// each goes out through the warp's scratch (a slice of t.s), dK times the scale.
template <class T>
__device__ void attention_wmma_dkdv_rows(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                         const float* delta, T* grad_k, T* grad_v, const AttentionLayout& lay,
                                         const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B,
                                         int64_t L, int64_t S, int E, int Ev, float scale, bool causal)
{
    __shared__ MmaBackwardTiles<T> t;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t j0 = int64_t(blockIdx.y) * kMmaTile;
    float* const scratch = warp_scratch(t.s);
    const int v_tiles = Ev / kMma, k_tiles = E / kMma;
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's t.k, t.v and scratch are no longer read
        stage_rows<T, T, kMaxHead>(t.k, k + lay.k.pair(b), lay.k.row_stride, j0, kMmaTile, S, E);
        stage_rows<T, T, kMaxHead>(t.v, v + lay.v.pair(b), lay.v.row_stride, j0, kMmaTile, S, Ev);
        Acc dv[kMmaOutTiles], dk[kMmaOutTiles];
MT_UNROLL
        for (int f = 0; f < kMmaOutTiles; ++f) wmma::fill_fragment(dv[f], 0.f), wmma::fill_fragment(dk[f], 0.f);
        for (int64_t i0 = causal ? j0 : 0; i0 < L; i0 += kMmaTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<T, T, kMaxHead>(t.q, q + lay.q.pair(b), lay.q.row_stride, i0, kMmaTile, L, E);
            stage_rows<T, T, kMaxHead>(t.g, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, kMmaTile, L,
                                       Ev);
            stage_row_stats(t.lse, t.delta, lse, delta, b, i0, L, kMmaTile);
            __syncthreads();  // the tile is staged
            mma_tile_products(t.s, t.q, t.k, E, t.dp, t.g, t.v, Ev);
            __syncthreads();  // S and dP are complete
            mma_softmax_backward(t.p, t.ds, t.s, t.dp, t.lse, t.delta, b, i0, j0, mask_matrix, mask, drop, L, S,
                                 scale, causal);
            __syncthreads();  // P Z and dS are complete
MT_UNROLL
            for (int f = 0; f < kMmaOutTiles; ++f) {
                const int n = warp + f * kWarps;
                if (n < 2 * v_tiles)  // rows of dV are keys: the columns of P Z, read col_major
                    mma_weights_rows<wmma::col_major>(dv[f], &t.p[0][n / v_tiles * kMma], &t.g[0][n % v_tiles * kMma]);
                if (n < 2 * k_tiles)
                    mma_weights_rows<wmma::col_major>(dk[f], &t.ds[0][n / k_tiles * kMma], &t.q[0][n % k_tiles * kMma]);
            }
        }
        // t.s is free: every warp read it before the last barrier in the loop (or never, L = 0)
MT_UNROLL
        for (int f = 0; f < kMmaOutTiles; ++f) {
            const int n = warp + f * kWarps;
            if (n < 2 * v_tiles) {
                const int64_t j = j0 + n / v_tiles * kMma;
                const int d = n % v_tiles * kMma;
                for_each_element(dv[f], scratch, lane, [&](int r, int c, float x) {
                    if (j + r < S) grad_v[lay.grad_v.row(b, j + r) + d + c] = T(x);
                });
            }
            if (n < 2 * k_tiles) {
                const int64_t j = j0 + n / k_tiles * kMma;
                const int d = n % k_tiles * kMma;
                for_each_element(dk[f], scratch, lane, [&](int r, int c, float x) {
                    if (j + r < S) grad_k[lay.grad_k.row(b, j + r) + d + c] = T(x * scale);
                });
            }
        }
    }
}

// Backward, dQ: a block owns 32 query rows and walks the key tiles (to its diagonal when causal).
// Per tile: S and dP, dS on CUDA cores, then dQ += dS K on tensor cores; warp w owns the 16 x 16
// tiles w, w + 4, ... of the 32 x E dQ in accumulators, written out at the end times the scale.
template <class T>
__device__ void attention_wmma_dq_rows(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                       const float* delta, T* grad_q, const AttentionLayout& lay,
                                       const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B,
                                       int64_t L, int64_t S, int E, int Ev, float scale, bool causal)
{
    const int q_tiles = E / kMma;  // dQ's 16-wide column tiles
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t i0 = tile_in_order(causal) * kMmaTile;
    __shared__ MmaBackwardTiles<T> t;
    float* const scratch = warp_scratch(t.s);
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's t.q, t.g and scratch are no longer read
        stage_rows<T, T, kMaxHead>(t.q, q + lay.q.pair(b), lay.q.row_stride, i0, kMmaTile, L, E);
        stage_rows<T, T, kMaxHead>(t.g, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, kMmaTile, L, Ev);
        stage_row_stats(t.lse, t.delta, lse, delta, b, i0, L, kMmaTile);
        Acc dq[kMmaOutTiles];
MT_UNROLL
        for (int f = 0; f < kMmaOutTiles; ++f) wmma::fill_fragment(dq[f], 0.f);
        for (int64_t k0 = 0; k0 < keys_end(S, i0 + kMmaTile, causal); k0 += kMmaTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<T, T, kMaxHead>(t.k, k + lay.k.pair(b), lay.k.row_stride, k0, kMmaTile, S, E);
            stage_rows<T, T, kMaxHead>(t.v, v + lay.v.pair(b), lay.v.row_stride, k0, kMmaTile, S, Ev);
            __syncthreads();  // the tile is staged
            mma_tile_products(t.s, t.q, t.k, E, t.dp, t.g, t.v, Ev);
            __syncthreads();  // S and dP are complete
            mma_softmax_backward(t.p, t.ds, t.s, t.dp, t.lse, t.delta, b, i0, k0, mask_matrix, mask, drop, L,
                                    S, scale, causal);
            __syncthreads();  // dS is complete
MT_UNROLL
            for (int f = 0; f < kMmaOutTiles; ++f) {
                const int n = warp + f * kWarps;
                if (n < 2 * q_tiles)
                    mma_weights_rows<wmma::row_major>(dq[f], t.ds[n / q_tiles * kMma], &t.k[0][n % q_tiles * kMma]);
            }
        }
        // t.s is free: every warp read it before the last barrier in the loop
MT_UNROLL
        for (int f = 0; f < kMmaOutTiles; ++f) {
            const int n = warp + f * kWarps;
            if (n >= 2 * q_tiles) continue;
            const int64_t i = i0 + n / q_tiles * kMma;
            const int d = n % q_tiles * kMma;
            for_each_element(dq[f], scratch, lane, [&](int r, int c, float x) {
                if (i + r < L) grad_q[lay.grad_q.row(b, i + r) + d + c] = T(x * scale);
            });
        }
    }
}

// The kernels (thread mappings above: grid (pairs, ceil(rows / 32)), 128 threads). bfloat16 MMA
// needs sm_80: the sm_75 build compiles their bfloat16 versions empty, and the host never
// launches them there (tensor_cores below).
template <class T>
constexpr bool kHasMma = !std::is_same_v<T, BFloat16> || kBf16Mma;
// An empty bfloat16 kernel could still run on an sm_80+ device when the build's architecture list
// has none of 80/90 (the sm_75 PTX is JIT-compiled for it): the host checks the loaded code's
// version too (built_for_mma), and were one launched anyway it traps instead of leaving the
// outputs unwritten.
#if defined(__CUDA_ARCH__)
#define MT_NO_MMA_ON_THIS_ARCH() __trap()
#else
#define MT_NO_MMA_ON_THIS_ARCH() ((void)0)
#endif

template <class T>
__global__ void attention_wmma_kernel(const T* q, const T* k, const T* v, T* out, float* lse, AttentionLayout lay,
                                      AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L, int64_t S,
                                      int E, int Ev, float scale, bool causal)
{
    if constexpr (kHasMma<T>) attention_wmma_rows(q, k, v, out, lse, lay, mask, drop, B, L, S, E, Ev, scale, causal);
    else MT_NO_MMA_ON_THIS_ARCH();
}

template <class T>
__global__ void attention_wmma_dkdv_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                           const float* delta, T* grad_k, T* grad_v, AttentionLayout lay,
                                           AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L,
                                           int64_t S, int E, int Ev, float scale, bool causal)
{
    if constexpr (kHasMma<T>)
        attention_wmma_dkdv_rows(q, k, v, grad_out, lse, delta, grad_k, grad_v, lay, mask, drop, B, L, S, E, Ev, scale,
                                      causal);
    else MT_NO_MMA_ON_THIS_ARCH();
}

template <class T>
__global__ void attention_wmma_dq_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                         const float* delta, T* grad_q, AttentionLayout lay, AttentionMask<float> mask,
                                         AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E, int Ev,
                                         float scale, bool causal)
{
    if constexpr (kHasMma<T>)
        attention_wmma_dq_rows(q, k, v, grad_out, lse, delta, grad_q, lay, mask, drop, B, L, S, E, Ev, scale, causal);
    else MT_NO_MMA_ON_THIS_ARCH();
}

// The 16-bit types are read in place (the table entries skip Widen's float32 staging copies).
template <class F>
void dispatch_attention(DType t, const char* op, F&& f)
{
    if (t == DType::Float32) return f(Tag<float>{});
    if (t == DType::Float16) return f(Tag<Half>{});
    if (t == DType::BFloat16) return f(Tag<BFloat16>{});
    throw TypeError(detail::str(op, ": the fused CUDA kernel takes float32, float16 or bfloat16, got ", t));
}

// Forward and backward run on tensor cores for float16, and for bfloat16 where the GPU and the code
// built for it have bfloat16 MMA (sm_80 on; the emulator counts as sm_90), when both head dims
// are multiples of the 16-wide MMA tile. Other calls take the CUDA-core kernels.
bool tensor_cores(DType t, int E, int Ev)
{
    if ((t != DType::Float16 && t != DType::BFloat16) || E == 0 || E % kMma != 0 || Ev % kMma != 0) return false;
#if MT_CUDA_EMULATED
    return true;
#else
    return t == DType::Float16 || (compute_capability() >= 80 && built_for_mma());
#endif
}

// The CUDA-core calls with both head dims up to 64 take the register-tiled kernels; wider heads
// the one-row-per-lane kernels (attention_kernel and its backward), the readable version.
bool register_tiles(int E, int Ev) { return E <= kRtHead && Ev <= kRtHead; }

// The four families of kernels, from the readable to the fastest that takes a call.
enum class Family { Rows, Tiled, Wmma, Mma };

// The family for a call: mma.sync tensor cores where they apply (attention_mma.cu, sm_80 on: head
// dims up to 128 that are multiples of 8 in float32, of 16 in 16 bits), else register
// tiles (head dims up to 64), else wmma tensor cores (16-bit head dims that are multiples of 16,
// up to 128: float16 on sm_75), else rows.
// The mma.sync kernels keep the scores, the softmax and the outputs in registers, where the wmma
// ones go through shared memory (a wmma fragment's layout is unspecified): on an H200 the wmma
// kernels ran a bfloat16 fwd+bwd at b32 h8 T256 d64 in 1.51 ms, the register tiles in 1.14, and
// PyTorch's FlashAttention-2 (mma.sync, registers) in 0.145; float32 register tiles took 2.8x
// PyTorch's time, whose float32 attention runs on tensor cores as 3xTF32 too.
// MINITORCH_CUDA_ATTENTION=rows|tiled|wmma|mma asks for one family wherever it can take the call
// (rows takes every call): to compare them on a GPU, and to test each on the small heads most
// tests use. Read at every call (a getenv is nothing beside the kernels).
Family family(DType t, int E, int Ev)
{
    const bool mma = mma_sync_attention(t, E, Ev), wmma = tensor_cores(t, E, Ev), tiled = register_tiles(E, Ev);
    if (const char* want = std::getenv("MINITORCH_CUDA_ATTENTION")) {
        if (std::strcmp(want, "rows") == 0) return Family::Rows;
        if (std::strcmp(want, "tiled") == 0 && tiled) return Family::Tiled;
        if (std::strcmp(want, "wmma") == 0 && wmma) return Family::Wmma;
        if (std::strcmp(want, "mma") == 0 && mma) return Family::Mma;
    }
    return mma ? Family::Mma : tiled ? Family::Tiled : wmma ? Family::Wmma : Family::Rows;
}

// The tiles go in grid.y (at most 65535 blocks): with the smallest tile, 8 rows, sequences up to
// 524280 (a T x T score matrix of that size would not fit any GPU either).
void check_tiles(const char* op, int64_t L, int64_t S)
{
    constexpr int64_t kMaxLength = 65535 * int64_t(kBwdRows);
    MT_CHECK(L <= kMaxLength && S <= kMaxLength, op, ": the fused kernels take sequences up to ", kMaxLength,
             " long, got L = ", L, " and S = ", S);
}

}  // namespace

void attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v,
               const Tensor& mask, const Attention& spec)
{
    const AttentionSizes n = attention_sizes(q, v);
    const int64_t B = n.B, L = n.L, S = n.S;
    const int E = int(n.E), Ev = int(n.Ev);
    MT_CHECK(E <= kMaxHead && Ev <= kMaxHead, "scaled_dot_product_attention: the fused kernel takes head dims up to ",
             kMaxHead, ", got ", E, " and ", Ev);
    if (B == 0 || L == 0) return;
    check_tiles("scaled_dot_product_attention", L, S);
    const AttentionMask<float> m = attention_mask<float>(mask);
    const AttentionLayout lay = attention_layout(q, k, v, out);
    const AttentionDropout drop = attention_dropout(spec.dropout_p, spec.seed, spec.offset, L, S);
    const float scale = float(spec.scale);
    dispatch_attention(q->dtype, "scaled_dot_product_attention", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *qd = q->data_as<T>(), *kd = k->data_as<T>(), *vd = v->data_as<T>();
        const Family f = family(q->dtype, E, Ev);
        if (f == Family::Mma) {  // attention_mma.cu
            attention_mma(qd, kd, vd, out->data_as<T>(), lse->data_as<float>(), lay, m, drop, B, L, S, E, Ev, scale,
                          spec.causal);
            return;
        }
        if constexpr (!std::is_same_v<T, float>) {
            if (f == Family::Wmma) {
                MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kMmaTile)), kWarps * kWarp, 0, 0, attention_wmma_kernel<T>)(
                    qd, kd, vd, out->data_as<T>(), lse->data_as<float>(), lay, m, drop, B, L, S, E, Ev, scale,
                    spec.causal);
                return;
            }
        }
        if (f == Family::Tiled) {
            MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kRtFwdRows)), kWarps * kWarp, 0, 0, attention_tiled_kernel<T>)(
                qd, kd, vd, out->data_as<T>(), lse->data_as<float>(), lay, m, drop, B, L, S, E, Ev, scale,
                spec.causal);
            return;
        }
        MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kFwdRows)), kWarps * kWarp, 0, 0, attention_kernel<T>)(
            qd, kd, vd, out->data_as<T>(), lse->data_as<float>(), lay, m, drop, B, L, S, E, Ev, scale, spec.causal);
    });
    MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention");
}

// The backward's two launches for one family of kernels: dK and dV over tiles of `rows` keys,
// then dQ over tiles of `rows` query rows. (A macro, not a function: the profiler names a launch
// by its kernel's text, and tests tell the families apart by those names.)
#define MT_ATTENTION_BACKWARD(dkdv_kernel, dq_kernel, rows)                                                  \
    do {                                                                                                     \
        MT_LAUNCH(dim3(pair_blocks(B), tiles(S, rows)), kWarps * kWarp, 0, 0, dkdv_kernel<T>)(               \
            qd, kd, vd, gd, ld, dd, gk, gv, lay, m, drop, B, L, S, E, Ev, scale, spec.causal);               \
        MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dK, dV)");                              \
        if (L > 0) {                                                                                         \
            MT_LAUNCH(dim3(pair_blocks(B), tiles(L, rows)), kWarps * kWarp, 0, 0, dq_kernel<T>)(             \
                qd, kd, vd, gd, ld, dd, gq, lay, m, drop, B, L, S, E, Ev, scale, spec.causal);               \
            MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dQ)");                              \
        }                                                                                                    \
    } while (0)

void attention_backward(const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v, const Tensor& grad_out,
                        const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                        const Tensor& mask, const Attention& spec)
{
    const AttentionSizes n = attention_sizes(q, v);
    const int64_t B = n.B, L = n.L, S = n.S;
    const int E = int(n.E), Ev = int(n.Ev);
    if (B == 0 || S == 0) return;
    check_tiles("scaled_dot_product_attention_backward", L, S);
    Tensor delta = empty({B, L}, DType::Float32, q->device());
    const AttentionMask<float> m = attention_mask<float>(mask);
    const AttentionLayout lay = attention_layout(q, k, v, out, grad_out, grad_q, grad_k, grad_v);
    const AttentionDropout drop = attention_dropout(spec.dropout_p, spec.seed, spec.offset, L, S);
    const float scale = float(spec.scale);
    dispatch_attention(q->dtype, "scaled_dot_product_attention_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *qd = q->data_as<T>(), *kd = k->data_as<T>(), *vd = v->data_as<T>(), *gd = grad_out->data_as<T>();
        const float *ld = lse->data_as<float>(), *dd = delta->data_as<float>();
        if (L > 0) {
            MT_LAUNCH(blocks_for(B * L * kWarp), kThreads, 0, 0, attention_delta_kernel<T>)(
                gd, out->data_as<T>(), delta->data_as<float>(), lay, B, L, Ev);
            MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (D)");
        }
        T *gq = grad_q->data_as<T>(), *gk = grad_k->data_as<T>(), *gv = grad_v->data_as<T>();
        const Family f = family(q->dtype, E, Ev);
        if (f == Family::Mma) {  // attention_mma.cu
            attention_mma_backward(qd, kd, vd, gd, ld, dd, gq, gk, gv, lay, m, drop, B, L, S, E, Ev, scale,
                                   spec.causal);
            return;
        }
        if constexpr (!std::is_same_v<T, float>) {
            if (f == Family::Wmma) {
                MT_ATTENTION_BACKWARD(attention_wmma_dkdv_kernel, attention_wmma_dq_kernel, kMmaTile);
                return;
            }
        }
        if (f == Family::Tiled) {
            MT_ATTENTION_BACKWARD(attention_tiled_dkdv_kernel, attention_tiled_dq_kernel, kRtTile);
            return;
        }
        MT_ATTENTION_BACKWARD(attention_dkdv_kernel, attention_dq_kernel, kBwdRows);
    });
}

#undef MT_ATTENTION_BACKWARD

}  // namespace minitorch::cuda
