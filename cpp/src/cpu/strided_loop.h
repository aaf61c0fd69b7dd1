// strided_loop.h — walking N tensors of one shape together, the CPU way.
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

namespace minitorch::cpu {

template <int N>
struct StridedPlan {
    int ndim = 0;
    std::vector<int64_t> shape;                       // coalesced sizes
    std::array<std::vector<int64_t>, N> strides;      // per operand, in bytes
    std::array<char*, N> base;
    int64_t numel = 1;

    explicit StridedPlan(const std::array<const TensorImpl*, N>& ts)
    {
        const Shape& full = ts[0]->shape;
        for (int k = 0; k < N; ++k) base[k] = ts[k]->data();
        // Keep only dims of size != 1, then merge neighbours when possible.
        for (size_t d = 0; d < full.size(); ++d) {
            if (full[d] == 1) continue;
            bool merge = !shape.empty();
            for (int k = 0; k < N && merge; ++k)
                merge = strides[k].back() == full[d] * ts[k]->strides[d] * int64_t(itemsize(ts[k]->dtype));
            if (merge) {
                shape.back() *= full[d];
                for (int k = 0; k < N; ++k) strides[k].back() = ts[k]->strides[d] * int64_t(itemsize(ts[k]->dtype));
            } else {
                shape.push_back(full[d]);
                for (int k = 0; k < N; ++k) strides[k].push_back(ts[k]->strides[d] * int64_t(itemsize(ts[k]->dtype)));
            }
        }
        if (shape.empty()) {  // 0-dim or all ones: one element
            shape.push_back(1);
            for (int k = 0; k < N; ++k) strides[k].push_back(0);
        }
        ndim = int(shape.size());
        for (int64_t s : shape) numel *= s;
    }

    // Calls inner(ptrs, inner_strides, n) for runs of n elements along the last dim,
    // covering flat output indices [begin, end).
    template <class Inner>
    void run_range(int64_t begin, int64_t end, const Inner& inner) const
    {
        const int last = ndim - 1;
        std::vector<int64_t> idx(ndim);
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

    // The whole range, split across threads when it is large.
    template <class Inner>
    void run(const Inner& inner) const
    {
        parallel_for(numel, kGrainSize, [&](int64_t b, int64_t e) { run_range(b, e, inner); });
    }
};

}  // namespace minitorch::cpu
