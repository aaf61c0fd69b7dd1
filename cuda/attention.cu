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
// Precision: float16 / bfloat16 forwards with head dims that are multiples of 16 run on tensor
// cores (attention_mma_kernel: 16-bit products, float32 sums; bfloat16 from sm_80 on). Other
// 16-bit calls and the backward convert the values to float32 as they are staged into shared
// memory, and every sum runs in float32 (CUDA cores). attention_kernel, the float32 one, is the
// readable version of the algorithm. float64 is not taken here (the op composes it).
#include <cfloat>

#include "common.cuh"
#include "minitorch/attention_math.h"
#include "minitorch/half.h"
#include "mma.cuh"
#include "warp.cuh"

// Keeps the per-row arrays (o, dk, dv, dq) in registers: every index is a constant after
// unrolling. The emulator's host compiler does not know the pragma.
#if defined(__CUDACC__)
#define MT_UNROLL _Pragma("unroll")
#else
#define MT_UNROLL
#endif

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

// rows [row0, row0 + count) of a (rows, width) matrix of T into dst[count][pitch] as D (float,
// or T itself for the tensor cores), zeros past `rows` (all threads of the block take part).
template <class D, class T, int pitch>
__device__ void stage_rows(D (*dst)[pitch], const T* src, int64_t row0, int count, int64_t rows, int width)
{
    for (int x = threadIdx.x; x < count * width; x += blockDim.x) {
        const int r = x / width, d = x % width;
        dst[r][d] = row0 + r < rows ? D(src[(row0 + r) * width + d]) : D(0.f);
    }
}

// Whether query i sees key j: both in range, and j not past i when causal.
__device__ __forceinline__ bool attends(int64_t i, int64_t j, int64_t L, int64_t S, bool causal)
{
    return j < S && i < L && !(causal && j > i);
}

// The score of query i and key j from their dot product: dot * scale + mask.
__device__ __forceinline__ float masked_score(float dot, float scale, const float* mask_matrix,
                                              const AttentionMask<float>& m, int64_t i, int64_t j)
{
    const float s = dot * scale;
    return mask_matrix ? s + mask_matrix[i * m.stride_l + j * m.stride_s] : s;
}

// The score of staged rows a (one query) and b (one key): dot * scale + mask; -inf where
// causal or the mask removes it, or where j is past the keys.
__device__ __forceinline__ float staged_score(const float* a, const float* b, int E, float scale,
                                              const float* mask_matrix, const AttentionMask<float>& m, int64_t i,
                                              int64_t j, int64_t L, int64_t S, bool causal)
{
    if (!attends(i, j, L, S, causal)) return -INFINITY;
    float dot = 0.f;
    for (int d = 0; d < E; ++d) dot += a[d] * b[d];
    return masked_score(dot, scale, mask_matrix, m, i, j);
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

// A warp's row held in registers: lane owns columns lane, lane + 32, ... (acc[c] is column
// lane + 32c). acc += sum over the tile's staged rows j of w_j * rows[j], where lane j holds
// w_j (a softmax weight, or dS): each w_j reaches every lane by a shuffle.
template <int pitch>
__device__ __forceinline__ void add_weighted_rows(float (&acc)[kChunks], float w, const float (*rows)[pitch], int width,
                                                  int lane)
{
    for (int j = 0; j < kTile; ++j) {
        const float wj = __shfl_sync(kFullMask, w, j);
MT_UNROLL
        for (int c = 0; c < kChunks; ++c)
            if (lane + c * kWarp < width) acc[c] += wj * rows[j][lane + c * kWarp];
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

// The end of the keys that query rows before row_end see: all S, or, causal, the keys
// before row_end (the tiles past the block's diagonal are skipped).
__device__ __forceinline__ int64_t keys_end(int64_t S, int64_t row_end, bool causal)
{
    return causal && row_end < S ? row_end : S;
}

// Thread mapping: grid (ceil(L / kFwdRows), pairs), block 128 threads = 4 warps; warp w owns
// query rows q0 + 4w .. q0 + 4w + 3. Per key tile, lane j scores key k0 + j against each of
// the warp's rows (q from shared memory, a broadcast; k row j from shared memory, padded so
// the 32 lanes hit 32 banks), the warp's max and sum update the online softmax, and lane
// holds output values d = lane, lane + 32, ... (up to 4) of each row, adding p_j * v[j][d]
// with p_j broadcast by a shuffle.
template <class T>
__global__ void attention_kernel(const T* q, const T* k, const T* v, T* out, float* lse, AttentionMask<float> mask,
                                 AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E, int Ev, float scale,
                                 bool causal)
{
    __shared__ float q_s[kFwdRows][kMaxHead];
    __shared__ float k_s[kTile][kPad];
    __shared__ float v_s[kTile][kMaxHead];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t q0 = int64_t(blockIdx.x) * kFwdRows;
    for (int64_t b = blockIdx.y; b < B; b += gridDim.y) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's rows are no longer read
        stage_rows<float, T, kMaxHead>(q_s, q + b * L * E, q0, kFwdRows, L, E);
        float m[kFwdRowsPerWarp], l[kFwdRowsPerWarp], o[kFwdRowsPerWarp][kChunks];
        zero_rows(o);
MT_UNROLL
        for (int r = 0; r < kFwdRowsPerWarp; ++r) m[r] = -INFINITY, l[r] = 0.f;
        for (int64_t k0 = 0; k0 < keys_end(S, q0 + kFwdRows, causal); k0 += kTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, T, kPad>(k_s, k + b * S * E, k0, kTile, S, E);
            stage_rows<float, T, kMaxHead>(v_s, v + b * S * Ev, k0, kTile, S, Ev);
            __syncthreads();  // the tile is staged
MT_UNROLL
            for (int r = 0; r < kFwdRowsPerWarp; ++r) {
                const int row = warp * kFwdRowsPerWarp + r;
                const float s = staged_score(q_s[row], k_s[lane], E, scale, mask_matrix, mask, q0 + row,
                                             k0 + lane, L, S, causal);
                float alpha;
                float p = online_softmax_step(s, m[r], l[r], alpha);
MT_UNROLL
                for (int c = 0; c < kChunks; ++c) o[r][c] *= alpha;
                if (drop.on && p != 0.f) p *= drop.factor(b, q0 + row, k0 + lane);
                add_weighted_rows(o[r], p, v_s, Ev, lane);
            }
        }
MT_UNROLL
        for (int r = 0; r < kFwdRowsPerWarp; ++r) {
            const int64_t i = q0 + warp * kFwdRowsPerWarp + r;
            if (i >= L) continue;
            // l = 0 (every key masked): NaN, as the composed formula
            store_row(out + (b * L + i) * Ev, o[r], Ev, lane, [&](float x) { return x / l[r]; });
            if (lane == 0) lse[b * L + i] = m[r] + logf(l[r]);
        }
    }
}

// ---- forward on tensor cores (float16 / bfloat16, head dims multiples of 16) ----
//
// The same algorithm with its two products on tensor cores (wmma, mma.cuh): 16-bit inputs stay
// 16-bit in shared memory, products accumulate in float. Per key tile:
//   S = Q K^T    warp w computes the 16x16 score tile (w / 2, w % 2) of the 32 x 32 tile,
//                E / 16 MMAs, and stores it to s_s as float;
//   softmax      on CUDA cores, as attention_kernel: warp w owns query rows 8w .. 8w + 7 (their
//                m and l in registers), lane j key j; P = exp(s - m_new) goes to p_s in 16 bits,
//                the row's alpha = exp(m_old - m_new) to alpha_s;
//   O += P V     warp w computes the 16x16 output tiles w, w + 4, ... of the 32 x Ev output (two
//                MMAs each, into a fresh accumulator), stores one to its 16x16 slice of s_s (the
//                scores are used up by then) and adds it to o_s, the float output kept in shared
//                memory, after rescaling o_s by alpha. The rescale happens in shared memory
//                because which fragment element holds which row is unspecified.
// Shared memory: q, k, v tiles 3 x 8 KiB, S 4 KiB, P 2 KiB, O 16 KiB: 46 KiB of the 48.
constexpr int kMma = 16;             // the wmma tile: 16 x 16 x 16
constexpr int kMmaRows = 32;         // query rows per block
constexpr int kMmaKeys = 32;         // keys per tile
constexpr int kMmaRowsPerWarp = kMmaRows / kWarps;

template <class T>
__device__ void attention_mma_rows(const T* q, const T* k, const T* v, T* out, float* lse,
                                   const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B,
                                   int64_t L, int64_t S, int E, int Ev, float scale, bool causal)
{
    namespace wmma = nvcuda::wmma;
    using M = MmaType<T>;
    using FragA = wmma::fragment<wmma::matrix_a, kMma, kMma, kMma, M, wmma::row_major>;
    using Acc = wmma::fragment<wmma::accumulator, kMma, kMma, kMma, float>;
    // Every fragment starts 32-byte aligned: the arrays are, and their rows are 64, 128 or 256 bytes.
    __shared__ __align__(32) T q_s[kMmaRows][kMaxHead];
    __shared__ __align__(32) T k_s[kMmaKeys][kMaxHead];
    __shared__ __align__(32) T v_s[kMmaKeys][kMaxHead];
    __shared__ __align__(32) float s_s[kMmaRows][kMmaKeys];
    __shared__ __align__(32) T p_s[kMmaRows][kMmaKeys];
    __shared__ __align__(32) float o_s[kMmaRows][kMaxHead];
    __shared__ float alpha_s[kMmaRows];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t q0 = int64_t(blockIdx.x) * kMmaRows;
    float* const product = &s_s[0][0] + warp * kMma * kMma;  // the warp's 16x16 slice of s_s
    for (int64_t b = blockIdx.y; b < B; b += gridDim.y) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();  // the previous pair's q_s and o_s are no longer read
        stage_rows<T, T, kMaxHead>(q_s, q + b * L * E, q0, kMmaRows, L, E);
        for (int x = threadIdx.x; x < kMmaRows * Ev; x += blockDim.x) o_s[x / Ev][x % Ev] = 0.f;
        float m[kMmaRowsPerWarp], l[kMmaRowsPerWarp];
MT_UNROLL
        for (int r = 0; r < kMmaRowsPerWarp; ++r) m[r] = -INFINITY, l[r] = 0.f;
        for (int64_t k0 = 0; k0 < keys_end(S, q0 + kMmaRows, causal); k0 += kMmaKeys) {
            __syncthreads();  // every warp is done with the previous tile (k_s, v_s, s_s, p_s)
            stage_rows<T, T, kMaxHead>(k_s, k + b * S * E, k0, kMmaKeys, S, E);
            stage_rows<T, T, kMaxHead>(v_s, v + b * S * Ev, k0, kMmaKeys, S, Ev);
            __syncthreads();  // the tile is staged (and o_s zeroed)
            {
                const int rt = warp / 2, ct = warp % 2;
                wmma::fragment<wmma::matrix_b, kMma, kMma, kMma, M, wmma::col_major> kt;  // K^T: k_s by columns
                FragA a;
                Acc acc;
                wmma::fill_fragment(acc, 0.f);
                for (int d = 0; d < E; d += kMma) {
                    wmma::load_matrix_sync(a, reinterpret_cast<const M*>(&q_s[rt * kMma][d]), kMaxHead);
                    wmma::load_matrix_sync(kt, reinterpret_cast<const M*>(&k_s[ct * kMma][d]), kMaxHead);
                    wmma::mma_sync(acc, a, kt, acc);
                }
                wmma::store_matrix_sync(&s_s[rt * kMma][ct * kMma], acc, kMmaKeys, wmma::mem_row_major);
            }
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
                const int rt = t / col_tiles, ct = t % col_tiles;
                wmma::fragment<wmma::matrix_b, kMma, kMma, kMma, M, wmma::row_major> vt;
                FragA pa;
                Acc acc;
                wmma::fill_fragment(acc, 0.f);
                for (int j = 0; j < kMmaKeys; j += kMma) {
                    wmma::load_matrix_sync(pa, reinterpret_cast<const M*>(&p_s[rt * kMma][j]), kMmaKeys);
                    wmma::load_matrix_sync(vt, reinterpret_cast<const M*>(&v_s[j][ct * kMma]), kMaxHead);
                    wmma::mma_sync(acc, pa, vt, acc);
                }
                wmma::store_matrix_sync(product, acc, kMma, wmma::mem_row_major);
                __syncwarp();  // every lane reads what the warp stored
                for (int e = lane; e < kMma * kMma; e += kWarp) {
                    const int row = rt * kMma + e / kMma, col = ct * kMma + e % kMma;
                    o_s[row][col] = o_s[row][col] * alpha_s[row] + product[e];
                }
                __syncwarp();  // read before the next tile's store overwrites it
            }
        }
        __syncthreads();  // o_s is complete
MT_UNROLL
        for (int r = 0; r < kMmaRowsPerWarp; ++r) {
            const int row = warp * kMmaRowsPerWarp + r;
            const int64_t i = q0 + row;
            if (i >= L) continue;
            // l = 0 (every key masked): NaN, as the composed formula
            for (int d = lane; d < Ev; d += kWarp) out[(b * L + i) * Ev + d] = T(o_s[row][d] / l[r]);
            if (lane == 0) lse[b * L + i] = m[r] + logf(l[r]);
        }
    }
}

// Thread mapping: grid (ceil(L / 32), pairs), block 128 threads = 4 warps (see above).
template <class T>
__global__ void attention_mma_kernel(const T* q, const T* k, const T* v, T* out, float* lse,
                                     AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L,
                                     int64_t S, int E, int Ev, float scale, bool causal)
{
    if constexpr (std::is_same_v<T, BFloat16> && !kBf16Mma)
        return;  // never launched: bfloat16 takes attention_kernel below sm_80
    else
        attention_mma_rows(q, k, v, out, lse, mask, drop, B, L, S, E, Ev, scale, causal);
}

// Thread mapping: one warp per row of dO and O (B * L rows), lanes over the row's values.
template <class T>
__global__ void attention_delta_kernel(const T* grad_out, const T* out, float* delta, int64_t rows, int Ev)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps) {
        float s = 0.f;
        for (int d = lane; d < Ev; d += kWarp) s += float(grad_out[r * Ev + d]) * float(out[r * Ev + d]);
        s = warp_sum(s);
        if (lane == 0) delta[r] = s;
    }
}

// Thread mapping: grid (ceil(S / kBwdRows), pairs), 4 warps; warp w owns keys j0 + 2w, j0 + 2w + 1,
// their dK and dV rows in registers (lane holds d = lane, lane + 32, ...). Per query tile (32 rows
// of q and dO staged in shared memory, with their lse and D), lane i computes P and dS of query
// i0 + i against each of the warp's keys; then the warp adds P[i] dO[i] and dS[i] q[i] over the
// tile's 32 rows, P[i] and dS[i] broadcast by shuffles. Causal: query tiles before the block's
// first key see none of its keys and are skipped.
template <class T>
__global__ void attention_dkdv_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                      const float* delta, T* grad_k, T* grad_v, AttentionMask<float> mask,
                                      AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E, int Ev,
                                      float scale, bool causal)
{
    __shared__ float k_s[kBwdRows][kMaxHead];
    __shared__ float v_s[kBwdRows][kMaxHead];
    __shared__ float q_s[kTile][kPad];
    __shared__ float g_s[kTile][kPad];  // dO
    __shared__ float lse_s[kTile], delta_s[kTile];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t j0 = int64_t(blockIdx.x) * kBwdRows;
    for (int64_t b = blockIdx.y; b < B; b += gridDim.y) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();
        stage_rows<float, T, kMaxHead>(k_s, k + b * S * E, j0, kBwdRows, S, E);
        stage_rows<float, T, kMaxHead>(v_s, v + b * S * Ev, j0, kBwdRows, S, Ev);
        float dk[kBwdRowsPerWarp][kChunks], dv[kBwdRowsPerWarp][kChunks];
        zero_rows(dk);
        zero_rows(dv);
        const int64_t i_begin = causal ? j0 / kTile * kTile : 0;
        for (int64_t i0 = i_begin; i0 < L; i0 += kTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, T, kPad>(q_s, q + b * L * E, i0, kTile, L, E);
            stage_rows<float, T, kPad>(g_s, grad_out + b * L * Ev, i0, kTile, L, Ev);
            if (threadIdx.x < kTile) {
                const bool in = i0 + threadIdx.x < L;
                lse_s[threadIdx.x] = in ? lse[b * L + i0 + threadIdx.x] : 0.f;
                delta_s[threadIdx.x] = in ? delta[b * L + i0 + threadIdx.x] : 0.f;
            }
            __syncthreads();  // the tile is staged
MT_UNROLL
            for (int r = 0; r < kBwdRowsPerWarp; ++r) {
                const int row = warp * kBwdRowsPerWarp + r;
                const int64_t i = i0 + lane, j = j0 + row;
                const float s = staged_score(q_s[lane], k_s[row], E, scale, mask_matrix, mask, i, j, L, S,
                                             causal);
                float p = 0.f, ds = 0.f;
                if (s != -INFINITY) {
                    p = __expf(s - lse_s[lane]);
                    float dp = 0.f;
                    for (int d = 0; d < Ev; ++d) dp += g_s[lane][d] * v_s[row][d];
                    const float z = drop.factor(b, i, j);  // 1 without dropout
                    ds = p * (dp * z - delta_s[lane]);
                    p *= z;  // dV takes the weight that met v in the forward
                }
                add_weighted_rows(dv[r], p, g_s, Ev, lane);
                add_weighted_rows(dk[r], ds, q_s, E, lane);
            }
        }
MT_UNROLL
        for (int r = 0; r < kBwdRowsPerWarp; ++r) {
            const int64_t j = j0 + warp * kBwdRowsPerWarp + r;
            if (j >= S) continue;
            store_row(grad_v + (b * S + j) * Ev, dv[r], Ev, lane, [](float x) { return x; });
            store_row(grad_k + (b * S + j) * E, dk[r], E, lane, [&](float x) { return x * scale; });
        }
    }
}

// Thread mapping: grid (ceil(L / kBwdRows), pairs), 4 warps; warp w owns query rows
// i0 + 2w, i0 + 2w + 1 and their dQ rows in registers (lane holds d = lane, lane + 32, ...).
// Per key tile (32 rows of k and v staged, padded), lane j computes P and dS of key k0 + j
// against each of the warp's rows, then the warp adds dS[j] k[j] over the tile, dS[j]
// broadcast by a shuffle. Causal calls stop at the block's diagonal, as the forward.
template <class T>
__global__ void attention_dq_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                                    const float* delta, T* grad_q, AttentionMask<float> mask, AttentionDropout drop,
                                    int64_t B, int64_t L, int64_t S, int E, int Ev, float scale, bool causal)
{
    __shared__ float q_s[kBwdRows][kMaxHead];
    __shared__ float g_s[kBwdRows][kMaxHead];  // dO
    __shared__ float k_s[kTile][kPad];
    __shared__ float v_s[kTile][kPad];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int64_t i0 = int64_t(blockIdx.x) * kBwdRows;
    for (int64_t b = blockIdx.y; b < B; b += gridDim.y) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        __syncthreads();
        stage_rows<float, T, kMaxHead>(q_s, q + b * L * E, i0, kBwdRows, L, E);
        stage_rows<float, T, kMaxHead>(g_s, grad_out + b * L * Ev, i0, kBwdRows, L, Ev);
        float dq[kBwdRowsPerWarp][kChunks], row_lse[kBwdRowsPerWarp], row_delta[kBwdRowsPerWarp];
        zero_rows(dq);
MT_UNROLL
        for (int r = 0; r < kBwdRowsPerWarp; ++r) {
            const int64_t i = i0 + warp * kBwdRowsPerWarp + r;
            row_lse[r] = i < L ? lse[b * L + i] : 0.f;
            row_delta[r] = i < L ? delta[b * L + i] : 0.f;
        }
        for (int64_t k0 = 0; k0 < keys_end(S, i0 + kBwdRows, causal); k0 += kTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_rows<float, T, kPad>(k_s, k + b * S * E, k0, kTile, S, E);
            stage_rows<float, T, kPad>(v_s, v + b * S * Ev, k0, kTile, S, Ev);
            __syncthreads();  // the tile is staged
MT_UNROLL
            for (int r = 0; r < kBwdRowsPerWarp; ++r) {
                const int row = warp * kBwdRowsPerWarp + r;
                const float s = staged_score(q_s[row], k_s[lane], E, scale, mask_matrix, mask, i0 + row,
                                             k0 + lane, L, S, causal);
                float ds = 0.f;
                if (s != -INFINITY) {
                    float dp = 0.f;
                    for (int d = 0; d < Ev; ++d) dp += g_s[row][d] * v_s[lane][d];
                    const float z = drop.factor(b, i0 + row, k0 + lane);  // 1 without dropout
                    ds = __expf(s - row_lse[r]) * (dp * z - row_delta[r]);
                }
                add_weighted_rows(dq[r], ds, k_s, E, lane);
            }
        }
MT_UNROLL
        for (int r = 0; r < kBwdRowsPerWarp; ++r) {
            const int64_t i = i0 + warp * kBwdRowsPerWarp + r;
            if (i >= L) continue;
            store_row(grad_q + (b * L + i) * E, dq[r], E, lane, [&](float x) { return x * scale; });
        }
    }
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

// The forward runs on tensor cores for float16, and for bfloat16 where the GPU has bfloat16 MMA
// (sm_80 on; the emulator counts as sm_90), when both head dims are multiples of the 16-wide
// MMA tile. Other calls take attention_kernel.
bool tensor_cores(DType t, int E, int Ev)
{
    if ((t != DType::Float16 && t != DType::BFloat16) || E == 0 || E % kMma != 0 || Ev % kMma != 0) return false;
#if MT_CUDA_EMULATED
    return true;
#else
    return t == DType::Float16 || compute_capability() >= 80;
#endif
}

unsigned pair_blocks(int64_t B) { return unsigned(B < 65535 ? B : 65535); }
unsigned tiles(int64_t n, int rows) { return unsigned((n + rows - 1) / rows); }

}  // namespace

void attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v,
               const Tensor& mask, const Attention& spec)
{
    const int64_t B = q->shape[0], L = q->shape[1], S = k->shape[1];
    const int E = int(q->shape[2]), Ev = int(v->shape[2]);
    MT_CHECK(E <= kMaxHead && Ev <= kMaxHead, "scaled_dot_product_attention: the fused kernel takes head dims up to ",
             kMaxHead, ", got ", E, " and ", Ev);
    if (B == 0 || L == 0) return;
    const AttentionMask<float> m = attention_mask<float>(mask);
    const AttentionDropout drop = attention_dropout(spec.dropout_p, spec.seed, spec.offset, L, S);
    const float scale = float(spec.scale);
    dispatch_attention(q->dtype, "scaled_dot_product_attention", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *qd = q->data_as<T>(), *kd = k->data_as<T>(), *vd = v->data_as<T>();
        if constexpr (!std::is_same_v<T, float>) {
            if (tensor_cores(q->dtype, E, Ev)) {
                MT_LAUNCH(dim3(tiles(L, kMmaRows), pair_blocks(B)), kWarps * kWarp, 0, 0, attention_mma_kernel<T>)(
                    qd, kd, vd, out->data_as<T>(), lse->data_as<float>(), m, drop, B, L, S, E, Ev, scale, spec.causal);
                return;
            }
        }
        MT_LAUNCH(dim3(tiles(L, kFwdRows), pair_blocks(B)), kWarps * kWarp, 0, 0, attention_kernel<T>)(
            qd, kd, vd, out->data_as<T>(), lse->data_as<float>(), m, drop, B, L, S, E, Ev, scale, spec.causal);
    });
    MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention");
}

void attention_backward(const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v, const Tensor& grad_out,
                        const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                        const Tensor& mask, const Attention& spec)
{
    const int64_t B = q->shape[0], L = q->shape[1], S = k->shape[1];
    const int E = int(q->shape[2]), Ev = int(v->shape[2]);
    if (B == 0 || S == 0) return;
    Tensor delta = empty({B, L}, DType::Float32, q->device());
    const AttentionMask<float> m = attention_mask<float>(mask);
    const AttentionDropout drop = attention_dropout(spec.dropout_p, spec.seed, spec.offset, L, S);
    const float scale = float(spec.scale);
    dispatch_attention(q->dtype, "scaled_dot_product_attention_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *qd = q->data_as<T>(), *kd = k->data_as<T>(), *vd = v->data_as<T>(), *gd = grad_out->data_as<T>();
        const float *ld = lse->data_as<float>(), *dd = delta->data_as<float>();
        if (L > 0) {
            MT_LAUNCH(blocks_for(B * L * kWarp), kThreads, 0, 0, attention_delta_kernel<T>)(
                gd, out->data_as<T>(), delta->data_as<float>(), B * L, Ev);
            MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (D)");
        }
        MT_LAUNCH(dim3(tiles(S, kBwdRows), pair_blocks(B)), kWarps * kWarp, 0, 0, attention_dkdv_kernel<T>)(
            qd, kd, vd, gd, ld, dd, grad_k->data_as<T>(), grad_v->data_as<T>(), m, drop, B, L, S, E, Ev, scale,
            spec.causal);
        MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dK, dV)");
        if (L > 0) {
            MT_LAUNCH(dim3(tiles(L, kBwdRows), pair_blocks(B)), kWarps * kWarp, 0, 0, attention_dq_kernel<T>)(
                qd, kd, vd, gd, ld, dd, grad_q->data_as<T>(), m, drop, B, L, S, E, Ev, scale, spec.causal);
            MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dQ)");
        }
    });
}

}  // namespace minitorch::cuda
