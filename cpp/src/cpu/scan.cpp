// scan.cpp — CPU kernels for running sums, products and log-sum-exps (cumsum, cumprod,
// logcumsumexp; each step in scan_math.h), and running max / min with their places
// (cummax, cummin), along the middle dim of a contiguous (outer, R, inner) tensor.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/scan_math.h"

namespace minitorch::cpu {

void scan(ScanOp op, const Tensor& out, const Tensor& in, bool reverse)
{
    // The op passes both as 3-D (outer, len, inner) views.
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        // Floating values accumulate in double (as PyTorch's CPU cumsum), integers in int64.
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
        const T* src = in->data_as<T>();
        T* dst = out->data_as<T>();
        // One task per outer slice; inside it the inner columns advance together, so
        // every pass over r reads a contiguous row of `inner` values.
        parallel_for(outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len * inner, 1)),
                     [&](int64_t b, int64_t e) {
            std::vector<Acc> acc(inner);
            for (int64_t o = b; o < e; ++o) {
                std::fill(acc.begin(), acc.end(), scan_identity<Acc>(op));
                for (int64_t k = 0; k < len; ++k) {
                    const int64_t r = reverse ? len - 1 - k : k;
                    const T* s = src + (o * len + r) * inner;
                    T* d = dst + (o * len + r) * inner;
                    for (int64_t i = 0; i < inner; ++i) {
                        acc[i] = scan_combine(op, acc[i], Acc(s[i]));
                        d[i] = static_cast<T>(acc[i]);
                    }
                }
            }
        });
    });
}

// cummax / cummin: each line keeps its best value so far and where it was found. A value
// replaces the best when it is a NaN, or when the best is not a NaN and the value is >= it
// (cummax; <= for cummin): a tie moves the index to the later place, as PyTorch's.
void scan_extreme(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* src = in->data_as<T>();
        T* val = values->data_as<T>();
        int64_t* idx = indices->data_as<int64_t>();
        auto is_nan = [](T v) {
            if constexpr (std::is_floating_point_v<T>) return v != v;
            else return false;
        };
        // One task per outer slice; the inner columns advance together (contiguous rows).
        parallel_for(outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len * inner, 1)),
                     [&](int64_t b, int64_t e) {
            std::vector<T> best(inner);
            std::vector<int64_t> at(inner, 0);
            for (int64_t o = b; o < e; ++o) {
                for (int64_t r = 0; r < len; ++r) {
                    const int64_t row = (o * len + r) * inner;
                    for (int64_t i = 0; i < inner; ++i) {
                        const T v = src[row + i];
                        if (r == 0 || is_nan(v) || (!is_nan(best[i]) && (is_max ? v >= best[i] : v <= best[i]))) {
                            best[i] = v;
                            at[i] = r;
                        }
                        val[row + i] = best[i];
                        idx[row + i] = at[i];
                    }
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
