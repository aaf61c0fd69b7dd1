// attention_common.cuh — what the fused attention's kernel files share (attention.cu: the rows,
// tiled and wmma families; attention_mma.cu: tensor cores through mma.sync): staging rows
// in shared memory, which (query, key) pairs count and their scores, the order of the tiles, and
// the mma.sync entry points that attention.cu calls.
#pragma once
#include <cmath>
#include <cstdint>

#include "common.cuh"
#include "minitorch/attention_math.h"
#include "minitorch/half.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

// rows [row0, row0 + count) of a (rows, width) matrix of T, row r at src + r * row_stride, into
// dst[count][pitch] as D (float, or T itself for the tensor cores), zeros past `rows` (all threads
// of the block take part).
template <class D, class T, int pitch>
__device__ void stage_rows(D (*dst)[pitch], const T* src, int64_t row_stride, int64_t row0, int count, int64_t rows,
                           int width)
{
    for (int x = threadIdx.x; x < count * width; x += blockDim.x) {
        const int r = x / width, d = x % width;
        dst[r][d] = row0 + r < rows ? D(src[(row0 + r) * row_stride + d]) : D(0.f);
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

// The score of query i and key j from their dot product: -inf where causal or the mask removes
// it, or where i or j is past the end; else dot * scale + mask.
__device__ __forceinline__ float score_of(float dot, float scale, const float* mask_matrix,
                                          const AttentionMask<float>& m, int64_t i, int64_t j, int64_t L, int64_t S,
                                          bool causal)
{
    return attends(i, j, L, S, causal) ? masked_score(dot, scale, mask_matrix, m, i, j) : -INFINITY;
}

// lse and D of the query rows [i0, i0 + count) of pair b into shared memory, 0 past L (threads
// 0 .. count - 1 of the block write them).
__device__ __forceinline__ void stage_row_stats(float* lse_s, float* delta_s, const float* lse, const float* delta,
                                                int64_t b, int64_t i0, int64_t L, int count)
{
    if (int(threadIdx.x) < count) {
        const bool in = i0 + threadIdx.x < L;
        lse_s[threadIdx.x] = in ? lse[b * L + i0 + threadIdx.x] : 0.f;
        delta_s[threadIdx.x] = in ? delta[b * L + i0 + threadIdx.x] : 0.f;
    }
}

// The max and the sum of a row's values held by N neighbouring lanes (lanes that differ only in
// their low log2(N) bits: a score row's owners), in each of those lanes.
template <int N>
__device__ __forceinline__ float lanes_max(float v)
{
    for (int o = 1; o < N; o <<= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
    return v;
}

template <int N>
__device__ __forceinline__ float lanes_sum(float v)
{
    for (int o = 1; o < N; o <<= 1) v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}

// The end of the keys that query rows before row_end see: all S, or, causal, the keys
// before row_end (the tiles past the block's diagonal are skipped).
__device__ __forceinline__ int64_t keys_end(int64_t S, int64_t row_end, bool causal)
{
    return causal && row_end < S ? row_end : S;
}

// The grid of every tiled kernel here is (pairs, tiles): blockIdx.x (with a stride loop) picks the
// (batch, head) pair, blockIdx.y the tile of rows, so the GPU starts blocks tile by tile. Causal, a
// forward or dQ block's work grows with its tile (it walks the keys up to its diagonal), so those
// take the tiles from the last one: the longest blocks start first and the short ones fill the
// SMs at the end (FlashAttention-2 orders its blocks the same way). dK/dV blocks walk the queries
// from their diagonal on, so the first tiles are already the longest.
__device__ __forceinline__ int64_t tile_in_order(bool causal)
{
    return causal ? int64_t(gridDim.y) - 1 - int64_t(blockIdx.y) : int64_t(blockIdx.y);
}

// The grid's x size for B pairs (each block loops over the pairs past 65535), and its y size for
// n rows in tiles of `rows`. MINITORCH_ATTENTION_PAIR_BLOCKS lowers the 65535 (read at every
// launch): the tests set a small one so that blocks walk several pairs with a few, which the
// kernels otherwise do only past 65535 (batch, head) pairs.
inline unsigned pair_blocks(int64_t B)
{
    int64_t most = 65535;
    const int64_t want = env_positive("MINITORCH_ATTENTION_PAIR_BLOCKS");
    if (want > 0 && want < most) most = want;
    return unsigned(B < most ? B : most);
}
inline unsigned tiles(int64_t n, int rows) { return unsigned((n + rows - 1) / rows); }

}  // namespace

// The mma.sync kernels (attention_mma.cu), for head dims up to 128 that are multiples of the MMA's
// depth (8 for float32, 16 for float16 / bfloat16), on sm_80 or later (or the emulator). T is
// float, Half or BFloat16.
bool mma_sync_attention(DType t, int E, int Ev);
#if !MT_CUDA_EMULATED
// Whether the attention kernels the driver loaded for this GPU were compiled for sm_80 or later
// (not only the GPU: a build for sm_75 alone runs on newer GPUs through its sm_75 PTX).
bool built_for_mma();
#endif
template <class T>
void attention_mma(const T* q, const T* k, const T* v, T* out, float* lse, const AttentionLayout& lay,
                   const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B, int64_t L, int64_t S,
                   int E, int Ev, float scale, bool causal);
// dK and dV, then dQ; delta holds D = rowsum(dO * O), computed before.
template <class T>
void attention_mma_backward(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                            const float* delta, T* grad_q, T* grad_k, T* grad_v, const AttentionLayout& lay,
                            const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B, int64_t L,
                            int64_t S, int E, int Ev, float scale, bool causal);

}  // namespace minitorch::cuda
