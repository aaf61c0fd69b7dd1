// reduce.cpp — CPU kernel for the "reduce" family: the middle dim of a contiguous
// (outer, R, inner) tensor is reduced, so output (o, i) is a sum over r of in[o, r, i]
// (or, for max/min/arg*, the best value and the r it was found at; for prod, a product).
//
// inner == 1: each output reads one contiguous row of R values, cut into blocks of
// kBlock values. Each block is reduced in SIMD lanes; the block results are combined in
// block order. A single long row (x.sum(), x.max()) gives its blocks to different
// threads: with the fixed blocks and the fixed combining order, the answer is the same
// bits on any number of threads.
// inner > 1: the outputs of one o are contiguous along i, so a strip of up to kStrip of
// them is kept in a small array and the R rows of that strip are added in turn (each
// read contiguous, no transposed copy needed).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/stats_math.h"
#include "minitorch/vector_math.h"
#include "reduce_loops.h"

namespace minitorch::cpu {

#if defined(__x86_64__)
// In reduce_avx2.cpp (compiled with -mavx2): reduce_loops.h's float sums on 32-byte
// vectors, half the instructions per value of the baseline's 16-byte ones. Same bits.
void sum_blocks_avx2_f32(const float* const* x, int streams, int64_t n, double* out);
void sum_strip_avx2_f32(const float* x, int64_t R, int64_t inner, int64_t n, float* out);
#endif

namespace {

// The float loops where the CPU has AVX2, else reduce_loops.h's as compiled here.
template <int S, class T>
void block_sums(const T* const* x, int64_t n, typename Acc<T>::type* out)
{
#if defined(__x86_64__)
    if constexpr (std::is_same_v<T, float>)
        if (cpu_has_avx2()) return sum_blocks_avx2_f32(x, S, n, out);
#endif
    sum_blocks<S>(x, n, out);
}

template <class T>
void strip_sums(const T* x, int64_t R, int64_t inner, int64_t n, T* out)
{
#if defined(__x86_64__)
    if constexpr (std::is_same_v<T, float>)
        if (cpu_has_avx2()) return sum_strip_avx2_f32(x, R, inner, n, out);
#endif
    sum_strip(x, R, inner, n, out);
}

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

// A reduction is split across threads only in chunks of at least this many input values.
// A sum reads ~4 bytes a cycle: 2^20 floats are 0.1-0.3 ms of one core's work, enough to
// pay for waking a second thread even on a busy machine (parallel.h); with kGrainSize's
// 2^17, a second thread made mean() of 1000 x 1000 slower than one thread was.
constexpr int64_t kReduceGrain = int64_t(1) << 20;

template <class T>
typename Acc<T>::type sum_block(const T* x, int64_t n)
{
    typename Acc<T>::type out;
    block_sums<1>(&x, n, &out);
    return out;
}

// The sums of `count` runs of n values each (run k starts at start(k)), handed to
// put(k, sum). Runs go in pairs, k beside k + count / 2: two streams of loads (see
// sum_blocks), with the same bits as one at a time. An odd last run goes alone.
template <class T, class Start, class Put>
void sum_runs_in_pairs(int64_t count, int64_t n, Start start, Put put)
{
    const int64_t half = count / 2;
    for (int64_t k = 0; k < half; ++k) {
        const T* pair[2] = {start(k), start(k + half)};
        typename Acc<T>::type sums[2];
        block_sums<2>(pair, n, sums);
        put(k, sums[0]);
        put(k + half, sums[1]);
    }
    if (count % 2) put(count - 1, sum_block(start(count - 1), n));
}

// part[b] = the sum of block b of a row of n values, for b in [b0, b1): the full blocks in
// pairs, then the short last block if it is in the range.
template <class T>
void sum_block_range(const T* row, int64_t n, int64_t b0, int64_t b1, typename Acc<T>::type* part)
{
    const int64_t full_end = std::max(b0, std::min(b1, n / kBlock));  // blocks before it hold kBlock values
    sum_runs_in_pairs<T>(full_end - b0, kBlock, [&](int64_t k) { return row + (b0 + k) * kBlock; },
                         [&](int64_t k, typename Acc<T>::type v) { part[b0 + k] = v; });
    for (int64_t b = full_end; b < b1; ++b) part[b] = sum_block(row + b * kBlock, std::min(kBlock, n - b * kBlock));
}

// The best value of one contiguous block and the first place it is found: NaN beats
// everything (the first NaN is reported), ties keep the earlier place (better()).
template <class T>
struct Best {
    T value;
    int64_t at;
};

template <bool kMax, class T>
Best<T> best_block(const T* x, int64_t n)
{
    // 1) The best value, lane-wise and branch-free: `v > b ? v : b` is one SIMD max
    //    instruction, and a NaN never wins it -- so NaNs are counted on the side.
    constexpr int L = 16;
    T lanes[L];
    std::fill(lanes, lanes + L, x[0]);
    bool nan = false;
    int64_t i = 0;
    for (; i + L <= n; i += L)
        for (int k = 0; k < L; ++k) {
            const T v = x[i + k];
            lanes[k] = (kMax ? v > lanes[k] : v < lanes[k]) ? v : lanes[k];
            if constexpr (std::is_floating_point_v<T>) nan |= v != v;
        }
    T best = lanes[0];
    for (int k = 1; k < L; ++k) best = (kMax ? lanes[k] > best : lanes[k] < best) ? lanes[k] : best;
    for (; i < n; ++i) {
        best = (kMax ? x[i] > best : x[i] < best) ? x[i] : best;
        if constexpr (std::is_floating_point_v<T>) nan |= x[i] != x[i];
    }
    // 2) Its first place: test L values at a time, then look inside the group that has it.
    auto is_it = [&](T v) {
        if constexpr (std::is_floating_point_v<T>)
            if (nan) return v != v;
        return v == best;
    };
    for (int64_t g = 0; g < n; g += L) {
        const int64_t end = std::min(n, g + L);
        bool found = false;
        for (int64_t j = g; j < end; ++j) found |= is_it(x[j]);
        if (found)
            for (int64_t j = g; j < end; ++j)
                if (is_it(x[j])) return {x[j], j};
    }
    return {best, 0};  // not reached: best is one of the values
}

// A contiguous row of n values reduced block by block (blocks to threads when `split`),
// block results combined in order.
template <class T>
T sum_row(const T* row, int64_t n, bool split)
{
    using A = typename Acc<T>::type;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    if (blocks < 2) return static_cast<T>(blocks ? sum_block(row, n) : A(0));
    std::vector<A> part(blocks);
    if (split)
        parallel_for(blocks, kReduceGrain / kBlock,
                     [&](int64_t b0, int64_t b1) { sum_block_range(row, n, b0, b1, part.data()); });
    else
        sum_block_range(row, n, 0, blocks, part.data());
    A acc = 0;
    for (A v : part) acc += v;
    return static_cast<T>(acc);
}

template <bool kMax, class T>
Best<T> best_row(const T* row, int64_t n, bool split)
{
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<Best<T>> part(split ? blocks : 0);
    auto block = [&](int64_t b) {
        Best<T> r = best_block<kMax>(row + b * kBlock, std::min(kBlock, n - b * kBlock));
        r.at += b * kBlock;
        return r;
    };
    if (split && blocks > 1)
        parallel_for(blocks, kReduceGrain / kBlock, [&](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1; ++b) part[b] = block(b);
        });
    Best<T> best = split && blocks > 1 ? part[0] : block(0);
    for (int64_t b = 1; b < blocks; ++b) {
        const Best<T> r = split ? part[b] : block(b);
        if (better(kMax, r.value, best.value)) best = r;
    }
    return best;
}

// Strips of up to kStrip columns for products and max/min (sums: kSumStrip, reduce_loops.h).
constexpr int64_t kStrip = 256;

// out[c] = the product over r < R of x[r * inner + c], for the n <= kStrip columns c of
// one strip (inner == 1: one contiguous row, n = 1). Floats multiply in double, integers in
// int64 (wrapping on overflow, as PyTorch's). A plain loop: products are rare next to sums.
template <class A>
inline A times(A a, A b)
{
    // unsigned: signed overflow is undefined in C++, unsigned wraps (two's complement)
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else return a * b;
}

template <class T>
void prod_strip(const T* x, int64_t R, int64_t inner, int64_t n, T* out)
{
    using A = typename Acc<T>::type;
    A acc[kStrip];
    std::fill(acc, acc + n, A(1));
    for (int64_t r = 0; r < R; ++r, x += inner)
        for (int64_t c = 0; c < n; ++c) acc[c] = times(acc[c], static_cast<A>(x[c]));
    for (int64_t c = 0; c < n; ++c) out[c] = static_cast<T>(acc[c]);
}

// The best of each of the n columns of a strip: value into val[c], r into idx[c] (either
// may be null). Branch-free selects, so the loop over c runs in SIMD lanes.
template <bool kMax, class T>
void best_strip(const T* x, int64_t R, int64_t inner, int64_t n, T* val, int64_t* idx)
{
    T best[kStrip];
    int64_t at[kStrip] = {};
    std::copy(x, x + n, best);  // R >= 1
    for (int64_t r = 1; r < R; ++r) {
        x += inner;
        for (int64_t c = 0; c < n; ++c) {
            const T v = x[c], b = best[c];
            bool take = kMax ? v > b : v < b;
            if constexpr (std::is_floating_point_v<T>) take |= (v != v) & (b == b);  // NaN wins and stays
            best[c] = take ? v : b;
            at[c] = take ? r : at[c];
        }
    }
    if (val) std::copy(best, best + n, val);
    if (idx) std::copy(at, at + n, idx);
}

}  // namespace

void reduce(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    if (in->dtype == DType::Bool && values && values->dtype == DType::Int64) {  // a count of True values
        Tensor wide = empty(in->shape, DType::Int64, in->device());
        copy(wide, in);
        return reduce(op, values, indices, wide);
    }
    const int64_t outer = in->shape[0], R = in->shape[1], inner = in->shape[2];
    const bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        T* val = values ? values->data_as<T>() : nullptr;
        int64_t* idx = indices ? indices->data_as<int64_t>() : nullptr;
        auto best_row_into = [&](int64_t j, const T* row, bool split) {
            const Best<T> b = is_max ? best_row<true>(row, R, split) : best_row<false>(row, R, split);
            if (val) val[j] = b.value;
            if (idx) idx[j] = b.at;
        };
        if (op == ReduceOp::Prod) {  // outputs split across threads, each line in order
            parallel_for(outer * inner, std::max<int64_t>(1, kReduceGrain / R), [&](int64_t j0, int64_t j1) {
                for (int64_t j = j0; j < j1;) {
                    const int64_t o = j / inner, i = j % inner;
                    const int64_t n = std::min({j1 - j, inner - i, kStrip});
                    prod_strip(x + o * R * inner + i, R, inner, n, val + j);
                    j += n;
                }
            });
            return;
        }
        if (op == ReduceOp::Mean) {
            if constexpr (std::is_floating_point_v<T>) {
                // The sums (below), then each divided by R in the accumulator's type: in this
                // call, so a mean is one kernel as on the GPU (the outputs are R times fewer than
                // the values read, so the second pass over them costs little).
                reduce(ReduceOp::Sum, values, nullptr, in);
                using A = typename Acc<T>::type;
                for (int64_t j = 0; j < outer * inner; ++j) val[j] = static_cast<T>(A(val[j]) / A(R));
                return;
            }
            throw TypeError(std::string("mean: expected a floating dtype, got ") + dtype_name(in->dtype));
        }
        if (outer * inner == 1) {  // one output: its row's blocks are the parallel work
            if (op == ReduceOp::Sum) val[0] = sum_row(x, R, true);
            else best_row_into(0, x, true);
            return;
        }
        // Outputs are independent: split them across threads when there is enough work
        // (a chunk of outputs holds about kReduceGrain input values).
        const int64_t grain = std::max<int64_t>(1, kReduceGrain / R);
        if (inner == 1) {  // one contiguous row per output (no index arithmetic per output)
            parallel_for(outer, grain, [&](int64_t j0, int64_t j1) {
                if (op == ReduceOp::Sum && R <= kBlock) {  // each row is one block
                    sum_runs_in_pairs<T>(j1 - j0, R, [&](int64_t k) { return x + (j0 + k) * R; },
                                         [&](int64_t k, typename Acc<T>::type v) { val[j0 + k] = static_cast<T>(v); });
                } else if (op == ReduceOp::Sum)
                    for (int64_t j = j0; j < j1; ++j) val[j] = sum_row(x + j * R, R, false);
                else
                    for (int64_t j = j0; j < j1; ++j) best_row_into(j, x + j * R, false);
            });
            return;
        }
        parallel_for(outer * inner, grain, [&](int64_t j0, int64_t j1) {
            // Outputs j0..j1 are (o, i) pairs, j = o * inner + i: walk them strip by strip
            // (a strip stays within one o, so its R rows are each contiguous).
            for (int64_t j = j0; j < j1;) {
                const int64_t o = j / inner, i = j % inner;
                const int64_t n = std::min({j1 - j, inner - i, op == ReduceOp::Sum ? kSumStrip : kStrip});
                const T* src = x + o * R * inner + i;
                if (op == ReduceOp::Sum) {
                    strip_sums(src, R, inner, n, val + j);
                } else if (is_max) {
                    best_strip<true>(src, R, inner, n, val ? val + j : nullptr, idx ? idx + j : nullptr);
                } else {
                    best_strip<false>(src, R, inner, n, val ? val + j : nullptr, idx ? idx + j : nullptr);
                }
                j += n;
            }
        });
    });
}

// var / std / logsumexp / norm of each line (reduce_stats in kernels.h), one pass in double
// (stats_math.h). inner == 1: a line is a contiguous row; inner > 1: a strip of up to
// kStrip neighbouring lines is summarized side by side, so each of the R rows is read
// contiguously (as sum_strip does).
void reduce_stats(const Tensor& out, const Tensor& mean, const Tensor& in, const StatReduce& spec)
{
    const int64_t outer = in->shape[0], R = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        T* val = out->data_as<T>();
        T* mu = mean ? mean->data_as<T>() : nullptr;
        const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(R, 1));
        parallel_for(outer * inner, grain, [&](int64_t j0, int64_t j1) {
            StatState acc[kStrip];
            for (int64_t j = j0; j < j1;) {
                const int64_t o = j / inner, i = j % inner;
                const int64_t n = std::min({j1 - j, inner - i, kStrip});
                const T* src = x + o * R * inner + i;
                std::fill(acc, acc + n, stat_none(spec));
                for (int64_t r = 0; r < R; ++r, src += inner)
                    for (int64_t c = 0; c < n; ++c) stat_take(spec, acc[c], double(src[c]));
                for (int64_t c = 0; c < n; ++c) {
                    val[j + c] = static_cast<T>(stat_result(spec, acc[c]));
                    if (mu) mu[j + c] = static_cast<T>(stat_mean(acc[c]));
                }
                j += n;
            }
        });
    });
}

}  // namespace minitorch::cpu
