// strided_loop.h — walking N tensors of one shape together (CPU loops; a GPU launch
// takes the same coalesced shape and strides, see cuda/common.cuh).
//
// Every elementwise kernel (copy, fill, map, zip, where) is a loop over the output's
// indices that reads each operand at  data + sum(index[d] * stride[d]).  To keep that
// loop cheap we first *coalesce* dims: two neighbouring dims merge when, for every
// operand, stepping over the outer one equals stepping over the whole inner one. A
// contiguous tensor (or a contiguous tensor plus an expanded scalar) then becomes a
// single flat dim, and the inner loop is a plain `for i < n` the compiler vectorizes.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "minitorch/parallel.h"
#include "minitorch/tensor.h"

namespace minitorch {

// Memory-bound loops (copy, fill, + - * relu...) split only above 2 * kGrainSize elements
// (1 MiB of floats) per thread: below that a second thread's start-up costs more than its
// share of the memory traffic saves. Measured on 10^6 floats (4 MB, 2 cores): a + 1.0 takes
// 0.45 ms on one thread and 0.28 ms on two.
constexpr int64_t kMemoryBoundGrain = 2 * kGrainSize;

template <int N>
struct StridedPlan {
    // Fixed-size arrays, no heap: a tiny op should not pay for malloc here.
    int ndim = 0;
    std::array<int64_t, kMaxDims> shape;                       // coalesced sizes
    std::array<std::array<int64_t, kMaxDims>, N> strides;      // per operand, in bytes
    std::array<char*, N> base;
    int64_t numel = 1;

    explicit StridedPlan(const std::array<const TensorImpl*, N>& ts)
    {
        const Shape& full = ts[0]->shape;
        for (int k = 0; k < N; ++k) base[k] = ts[k]->data();
        // Keep only dims of size != 1, then merge neighbours when possible.
        int64_t item[N];
        for (int k = 0; k < N; ++k) item[k] = int64_t(itemsize(ts[k]->dtype));
        for (size_t d = 0; d < full.size(); ++d) {
            if (full[d] == 1) continue;
            bool merge = ndim > 0;
            for (int k = 0; k < N && merge; ++k)
                merge = strides[k][ndim - 1] == full[d] * ts[k]->strides[d] * item[k];
            if (merge) {
                shape[ndim - 1] *= full[d];
                for (int k = 0; k < N; ++k) strides[k][ndim - 1] = ts[k]->strides[d] * item[k];
            } else {
                shape[ndim] = full[d];
                for (int k = 0; k < N; ++k) strides[k][ndim] = ts[k]->strides[d] * item[k];
                ++ndim;
            }
        }
        if (ndim == 0) {  // 0-dim or all ones: one element
            shape[0] = 1;
            for (int k = 0; k < N; ++k) strides[k][0] = 0;
            ndim = 1;
        }
        for (int d = 0; d < ndim; ++d) numel *= shape[d];
    }

    // Calls inner(ptrs, inner_strides, n) for runs of n elements along the last dim,
    // covering flat output indices [begin, end).
    template <class Inner>
    void run_range(int64_t begin, int64_t end, const Inner& inner) const
    {
        const int last = ndim - 1;
        std::array<int64_t, kMaxDims> idx;
        std::array<char*, N> ptr = base;
        int64_t rest = begin;
        for (int d = last; d >= 0; --d) {
            idx[d] = rest % shape[d];
            rest /= shape[d];
            for (int k = 0; k < N; ++k) ptr[k] += idx[d] * strides[k][d];
        }
        std::array<int64_t, N> step;
        for (int k = 0; k < N; ++k) step[k] = strides[k][last];
        while (begin < end) {
            int64_t n = std::min(shape[last] - idx[last], end - begin);
            inner(ptr, step, n);
            begin += n;
            // Advance the multi-index by n (carrying into outer dims).
            for (int k = 0; k < N; ++k) ptr[k] += n * step[k];
            idx[last] += n;
            for (int d = last; d > 0 && idx[d] == shape[d]; --d) {
                for (int k = 0; k < N; ++k) ptr[k] += strides[k][d - 1] - shape[d] * strides[k][d];
                idx[d] = 0;
                ++idx[d - 1];
            }
        }
    }

    // The whole range, split across threads when it is large. Memory-bound loops (copy,
    // add) pass a bigger grain: two cores share one memory bus, so splitting them only
    // pays for millions of elements (measured: a + b on 1e6 floats was 1.4x slower on
    // 2 threads, on 1e7 1.7x faster).
    template <class Inner>
    void run(const Inner& inner, int64_t grain = kGrainSize) const
    {
        parallel_for(numel, grain, [&](int64_t b, int64_t e) { run_range(b, e, inner); });
    }
};

}  // namespace minitorch
