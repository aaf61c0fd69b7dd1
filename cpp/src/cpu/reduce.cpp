// reduce.cpp — CPU kernel for the "reduce" family: one row of a contiguous
// (outer, inner) matrix becomes one output value (and, for max/min/arg*, its index).
#include <cmath>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

// float sums accumulate in double, so long rows keep their precision.
template <class T> struct Acc { using type = T; };
template <> struct Acc<float> { using type = double; };

template <class T>
inline bool better(ReduceOp op, T v, T best)
{
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(best)) return false;  // NaN wins and stays (PyTorch propagates it)
        if (std::isnan(v)) return true;
    }
    return (op == ReduceOp::Max || op == ReduceOp::ArgMax) ? v > best : v < best;
}

}  // namespace

void reduce(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = values ? values->numel() : indices->numel();
    const int64_t inner = outer ? in->numel() / outer : 0;
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        T* val = values ? values->data_as<T>() : nullptr;
        int64_t* idx = indices ? indices->data_as<int64_t>() : nullptr;
        // Rows are independent: split the rows across threads when there is enough work.
        int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(inner, 1));
        parallel_for(outer, grain, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const T* row = x + r * inner;
                if (op == ReduceOp::Sum) {
                    if constexpr (std::is_same_v<T, bool>) {
                        bool any = false;  // not reached: bool sums are cast to int64 first
                        for (int64_t i = 0; i < inner; ++i) any = any || row[i];
                        val[r] = any;
                    } else {
                        // Eight running sums (summed at the end): independent chains the
                        // compiler can keep in SIMD registers, and a little more accurate.
                        using A = typename Acc<T>::type;
                        A lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                        int64_t i = 0;
                        for (; i + 8 <= inner; i += 8)
                            for (int k = 0; k < 8; ++k) lanes[k] += row[i + k];
                        A acc = 0;
                        for (; i < inner; ++i) acc += row[i];
                        for (int k = 0; k < 8; ++k) acc += lanes[k];
                        val[r] = static_cast<T>(acc);
                    }
                    continue;
                }
                int64_t best_i = 0;
                T best = row[0];  // inner >= 1 is checked by the op
                for (int64_t i = 1; i < inner; ++i)
                    if (better(op, row[i], best)) {
                        best = row[i];
                        best_i = i;
                    }
                if (val) val[r] = best;
                if (idx) idx[r] = best_i;
            }
        });
    });
}

}  // namespace minitorch::cpu
