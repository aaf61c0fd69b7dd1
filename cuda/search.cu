// search.cu — CUDA kernel for searchsorted (and bucketize): a binary search per value in its
// row of a sorted (B, N) tensor (search_math.h).
#include "common.cuh"
#include "minitorch/search_math.h"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per value j = b * M + m (grid-stride), searching row b of the
// sorted tensor. Neighbouring threads search the same row, so its first probes (the middle,
// the quarters...) are read by the whole warp at once and stay in cache.
template <class T>
__global__ void searchsorted_kernel(int64_t* out, const T* sorted, const T* values, int64_t B, int64_t N,
                                    int64_t M, bool right)
{
    MT_GRID_STRIDE(j, B * M) {
        out[j] = search_sorted(sorted + (j / M) * N, N, values[j], right);
    }
}

}  // namespace

void searchsorted(const Tensor& out, const Tensor& sorted, const Tensor& values, bool right)
{
    const int64_t B = sorted->shape[0], N = sorted->shape[1], M = values->shape[1];
    if (B * M == 0) return;
    dispatch(values->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(B * M), kThreads, 0, 0, searchsorted_kernel<T>)(
            out->data_as<int64_t>(), sorted->data_as<T>(), values->data_as<T>(), B, N, M, right);
    });
    MT_CUDA_CHECK_LAUNCH("searchsorted");
}

}  // namespace minitorch::cuda
