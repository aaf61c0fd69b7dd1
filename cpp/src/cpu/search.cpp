// search.cpp — CPU kernel for searchsorted (and bucketize): a binary search per value in
// its row of a sorted (B, N) tensor (search_math.h).
#include <algorithm>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/search_math.h"

namespace minitorch::cpu {

void searchsorted(const Tensor& out, const Tensor& sorted, const Tensor& values, bool right)
{
    const int64_t B = sorted->shape[0], N = sorted->shape[1], M = values->shape[1];
    dispatch(values->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* seq = sorted->data_as<T>();
        const T* v = values->data_as<T>();
        int64_t* dst = out->data_as<int64_t>();
        // Values are independent: each takes about log2(N) reads.
        parallel_for(B * M, std::max<int64_t>(1, kGrainSize / 16), [&](int64_t j0, int64_t j1) {
            for (int64_t j = j0; j < j1; ++j) dst[j] = search_sorted(seq + (j / M) * N, N, v[j], right);
        });
    });
}

}  // namespace minitorch::cpu
