// scan.cpp — CPU kernel for running sums and products (cumsum, cumprod) along the
// middle dim of a contiguous (outer, R, inner) tensor.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"

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
                std::fill(acc.begin(), acc.end(), op == ScanOp::Sum ? Acc(0) : Acc(1));
                for (int64_t k = 0; k < len; ++k) {
                    const int64_t r = reverse ? len - 1 - k : k;
                    const T* s = src + (o * len + r) * inner;
                    T* d = dst + (o * len + r) * inner;
                    for (int64_t i = 0; i < inner; ++i) {
                        acc[i] = op == ScanOp::Sum ? acc[i] + Acc(s[i]) : acc[i] * Acc(s[i]);
                        d[i] = static_cast<T>(acc[i]);
                    }
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
