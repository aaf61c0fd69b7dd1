// reduce_loops.h — the inner loops of the CPU sums (reduce.cpp): a block of a row summed in
// SIMD lanes, and a strip of columns summed row by row.
//
// Included by reduce.cpp (baseline x86-64 SSE2 / AArch64 NEON) and by reduce_avx2.cpp
// (compiled with -mavx2), so the same source is compiled once per instruction set. The
// lanes are explicit arrays, so each lane's additions happen in the same order whatever
// the vector width: both compilations give the same bits. No -mfma (a fused a * b + c
// would round differently; there is no multiply here anyway). Like conv_direct_loops.h,
// everything is in an anonymous namespace.
#pragma once
#include <algorithm>
#include <cstdint>

namespace minitorch::cpu {
namespace {

// float sums accumulate in double, so long rows keep their precision; a bool sum
// (sum(dtype=bool)) counts in int64 and is True where the count is not 0.
template <class T> struct Acc { using type = T; };
template <> struct Acc<float> { using type = double; };
template <> struct Acc<bool> { using type = int64_t; };

constexpr int64_t kBlock = 2048;

// Block sums. A block's values go round-robin into L running sums (independent chains the
// compiler keeps in SIMD registers), which are then added in a fixed tree order. Floats
// use 32 float lanes (four AVX2 / eight SSE registers, no conversion in the loop: as fast
// as memory delivers), folded to 8 in float and then combined in double: each float
// partial sum holds at most kBlock / 8 values, so the block keeps nearly double's
// accuracy. A short row (fewer than
// kShortRow values) uses 8 lanes: its sum costs about as much as combining 32 lanes
// would, and sum(1) of a (4096, 64) tensor is 4096 such rows. The lane count depends on
// the row's length alone, so a row's bits never depend on the thread count.
template <class T> constexpr int kLanes = 8;
template <> constexpr int kLanes<float> = 32;
constexpr int64_t kShortRow = 256;
template <class T> struct LaneType { using type = typename Acc<T>::type; };
template <> struct LaneType<float> { using type = float; };

// t[0] += t[W], ..., t[W-1] += t[2W-1], then the same with W/2, ... down to t[0] += t[1]:
// the tree of 2W values. W is a constant at each level, so each level is a few SIMD adds.
template <int W, class A>
inline void fold(A* t)
{
    for (int k = 0; k < W; ++k) t[k] += t[k + W];
    if constexpr (W > 1) fold<W / 2>(t);
}

// The sums of S blocks of n values each, read side by side: S streams of loads keep more
// memory requests in flight than one, and one core reading a single stream does not reach
// the memory's bandwidth (a 16 MB sum: 1.3 ms with one stream, 1.0 with two). Each block's
// arithmetic is the same whatever S is, so the result's bits do not depend on it.
template <int S, int L, class T>
void sum_blocks_in(const T* const* x, int64_t n, typename Acc<T>::type* out)
{
    using A = typename Acc<T>::type;
    using Lane = typename LaneType<T>::type;
    // The lanes start as the first L values, not as zeros: zeroing an array in memory
    // became a `rep stos` (tens of cycles to start), paid once per row of sum(1).
    Lane lanes[S][L];
    const int64_t full = n - n % L;
    if (full == 0) {
        for (int s = 0; s < S; ++s)
            for (int k = 0; k < L; ++k) lanes[s][k] = Lane(0);
    } else {
        for (int s = 0; s < S; ++s)
            for (int k = 0; k < L; ++k) lanes[s][k] = x[s][k];
    }
    for (int64_t i = full == 0 ? 0 : L; i < full; i += L)
        for (int s = 0; s < S; ++s)
            for (int k = 0; k < L; ++k) lanes[s][k] += x[s][i + k];
    // then 8 values at a time into the first lanes (a short row's tail, e.g. 1000 = 31 * 32
    // + 8, stays in SIMD instead of a chain of scalar double additions)
    const int64_t body = full + (n - full) / 8 * 8;  // the rest is added after the tree
    for (int64_t i = full; i < body; i += 8)
        for (int s = 0; s < S; ++s)
            for (int k = 0; k < 8; ++k) lanes[s][k] += x[s][i + k];
    for (int s = 0; s < S; ++s) {
        // Float lanes are first folded to 8 in float (two vector adds on AVX2), each then
        // holding at most kBlock / 8 values, and the 8 are combined in double.
        static_assert(L == 8 || L == 32);
        constexpr int W = 8;
        if constexpr (L == 32) {
            for (int k = 0; k < 16; ++k) lanes[s][k] += lanes[s][k + 16];
            for (int k = 0; k < 8; ++k) lanes[s][k] += lanes[s][k + 8];
        }
        A tree[W];
        for (int k = 0; k < W; ++k) tree[k] = static_cast<A>(lanes[s][k]);
        fold<W / 2>(tree);
        A acc = tree[0];
        for (int64_t j = body; j < n; ++j) acc += x[s][j];
        out[s] = acc;
    }
}

template <int S, class T>
void sum_blocks(const T* const* x, int64_t n, typename Acc<T>::type* out)
{
    if (kLanes<T> > 8 && n < kShortRow) sum_blocks_in<S, 8>(x, n, out);
    else sum_blocks_in<S, kLanes<T>>(x, n, out);
}

// out[c] = sum over r < R of x[r * inner + c], for the n <= kSumStrip columns c of one strip.
// Rows are added kStripRows at a time into float lanes for float input (no conversion in
// the inner loop: SIMD at memory speed, as sum_blocks), each partial sum then added into
// the double accumulators: a partial holds at most kStripRows values, so the column keeps
// nearly double's accuracy (the blocked summation PyTorch uses too).
constexpr int64_t kStripRows = 32;

// Sums take strips of up to kSumStrip columns: a wider strip reads longer contiguous runs
// of each row (a 1000-wide row in one run instead of four), and its two arrays (12 KB)
// still fit in L1.
constexpr int64_t kSumStrip = 1024;

template <class T>
void sum_strip(const T* x, int64_t R, int64_t inner, int64_t n, T* out)
{
    using A = typename Acc<T>::type;
    using Lane = typename LaneType<T>::type;
    A acc[kSumStrip];
    Lane part[kSumStrip];
    std::fill(acc, acc + n, A(0));  // only the n columns in use (not the whole array)
    for (int64_t r0 = 0; r0 < R; r0 += kStripRows) {
        std::fill(part, part + n, Lane(0));
        const int64_t rows = std::min(kStripRows, R - r0);
        int64_t r = 0;
        // four rows per sweep: a quarter of the loads and stores of `part`
        for (; r + 4 <= rows; r += 4, x += 4 * inner)
            for (int64_t c = 0; c < n; ++c) part[c] += (x[c] + x[inner + c]) + (x[2 * inner + c] + x[3 * inner + c]);
        for (; r < rows; ++r, x += inner)
            for (int64_t c = 0; c < n; ++c) part[c] += x[c];
        for (int64_t c = 0; c < n; ++c) acc[c] += static_cast<A>(part[c]);
    }
    for (int64_t c = 0; c < n; ++c) out[c] = static_cast<T>(acc[c]);
}

}  // namespace
}  // namespace minitorch::cpu
