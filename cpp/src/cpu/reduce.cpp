// reduce.cpp — CPU kernel for the "reduce" family: the middle dim of a contiguous
// (outer, R, inner) tensor is reduced, so output (o, i) is a sum over r of in[o, r, i]
// (or, for max/min/arg*, the best value and the r it was found at).
//
// inner == 1: each output reads one contiguous row of R values (eight running sums).
// inner > 1: the outputs of one o are contiguous along i, so a strip of up to kStrip of
// them is kept in a small array and the R rows of that strip are added in turn (each
// read contiguous, no transposed copy needed).
#include <algorithm>
#include <cmath>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

// float sums accumulate in double, so long rows keep their precision; a bool sum
// (sum(dtype=bool)) counts in int64 and is True where the count is not 0.
template <class T> struct Acc { using type = T; };
template <> struct Acc<float> { using type = double; };
template <> struct Acc<bool> { using type = int64_t; };

// Does v (found after best) replace best? NaN wins and stays (PyTorch propagates it);
// ties keep the earlier one.
template <class T>
inline bool better(bool is_max, T v, T best)
{
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(best)) return false;
        if (std::isnan(v)) return true;
    }
    return is_max ? v > best : v < best;
}

template <class T>
T sum_row(const T* row, int64_t n)
{
    // Eight running sums (summed at the end): independent chains the compiler can keep in
    // SIMD registers, and a little more accurate.
    using A = typename Acc<T>::type;
    A lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) lanes[k] += row[i + k];
    A acc = 0;
    for (; i < n; ++i) acc += row[i];
    for (int k = 0; k < 8; ++k) acc += lanes[k];
    return static_cast<T>(acc);
}

// float rows: 32 float running sums over blocks of kBlock values (four AVX2 registers, no
// conversion in the loop: as fast as memory delivers), each block's total then added in
// double. A float partial sum holds only kBlock / 32 values, so the result stays as
// accurate as summing in double, and the order is fixed: the same answer every run.
constexpr int64_t kBlock = 2048;

template <>
float sum_row<float>(const float* row, int64_t n)
{
    double acc = 0;
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        float lanes[32] = {};
        for (int64_t b = 0; b < kBlock; b += 32)
            for (int k = 0; k < 32; ++k) lanes[k] += row[i + b + k];
        double block = 0;
        for (int k = 0; k < 32; ++k) block += lanes[k];
        acc += block;
    }
    for (; i < n; ++i) acc += row[i];
    return static_cast<float>(acc);
}

// out[c] = sum over r < R of x[r * inner + c], for the n <= kStrip columns c of one strip.
constexpr int64_t kStrip = 256;

template <class T>
void sum_strip(const T* x, int64_t R, int64_t inner, int64_t n, T* out)
{
    using A = typename Acc<T>::type;
    A acc[kStrip] = {};
    for (int64_t r = 0; r < R; ++r, x += inner)
        for (int64_t c = 0; c < n; ++c) acc[c] += x[c];
    for (int64_t c = 0; c < n; ++c) out[c] = static_cast<T>(acc[c]);
}

// The best of each of the n columns of a strip: value into val[c], r into idx[c] (either
// may be null).
template <class T>
void best_strip(bool is_max, const T* x, int64_t R, int64_t inner, int64_t n, T* val, int64_t* idx)
{
    T best[kStrip];
    int64_t at[kStrip] = {};
    std::copy(x, x + n, best);  // R >= 1
    for (int64_t r = 1; r < R; ++r) {
        x += inner;
        for (int64_t c = 0; c < n; ++c)
            if (better(is_max, x[c], best[c])) best[c] = x[c], at[c] = r;
    }
    if (val) std::copy(best, best + n, val);
    if (idx) std::copy(at, at + n, idx);
}

}  // namespace

void reduce(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = in->shape[0], R = in->shape[1], inner = in->shape[2];
    const bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        T* val = values ? values->data_as<T>() : nullptr;
        int64_t* idx = indices ? indices->data_as<int64_t>() : nullptr;
        // Outputs are independent: split them across threads when there is enough work
        // (a chunk of outputs holds about kGrainSize input values).
        const int64_t grain = std::max<int64_t>(1, kGrainSize / R);
        parallel_for(outer * inner, grain, [&](int64_t j0, int64_t j1) {
            // Outputs j0..j1 are (o, i) pairs, j = o * inner + i: walk them strip by strip
            // (a strip stays within one o, so its R rows are each contiguous).
            for (int64_t j = j0; j < j1;) {
                const int64_t o = j / inner, i = j % inner;
                const int64_t n = std::min({j1 - j, inner - i, kStrip});
                const T* src = x + o * R * inner + i;
                if (op == ReduceOp::Sum) {
                    if (inner == 1) val[j] = sum_row(src, R);
                    else sum_strip(src, R, inner, n, val + j);
                } else {
                    best_strip(is_max, src, R, inner, n, val ? val + j : nullptr, idx ? idx + j : nullptr);
                }
                j += n;
            }
        });
    });
}

}  // namespace minitorch::cpu
