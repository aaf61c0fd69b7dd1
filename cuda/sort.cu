// sort.cu — CUDA kernel for sorting each line along the middle dim of a contiguous
// (outer, R, inner) tensor (sort, argsort, topk); layout as in kernels.h.
#include <type_traits>

#include "common.cuh"

namespace minitorch::cuda {

namespace {

template <class T>
__device__ bool is_nan(T v)
{
    if constexpr (std::is_floating_point<T>::value) return v != v;
    else return false;
}

// a comes before b in ascending order: NaN is above every number, NaNs are equal.
template <class T>
__device__ bool less_nan_last(T a, T b)
{
    return is_nan(b) ? !is_nan(a) : a < b;
}

// Rank sort. Thread mapping: one thread per element (o, r, i). It counts the elements of
// its line that come before it -- smaller ones, and equal ones at a smaller r (which makes
// the sort stable) -- and that count is its place in the sorted line. Every thread reads
// the whole line: O(R^2) work per line, but no thread waits for another, and the code is
// the definition of a stable sort. Fine for the rows of a model (R in the thousands);
// a library sort (CUB's segmented radix sort) would be the step beyond.
template <class T>
__global__ void rank_sort_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t len,
                                 int64_t inner, bool descending)
{
    MT_GRID_STRIDE(e, outer * len * inner) {
        const int64_t i = e % inner, r = (e / inner) % len, o = e / (inner * len);
        const T* line = in + o * len * inner + i;  // element k is line[k * inner]
        const T v = line[r * inner];
        int64_t rank = 0;
        for (int64_t k = 0; k < len; ++k) {
            const T u = line[k * inner];
            const bool before = descending ? less_nan_last(v, u) : less_nan_last(u, v);
            const bool tie = !less_nan_last(u, v) && !less_nan_last(v, u);
            rank += before || (tie && k < r);
        }
        const int64_t at = (o * len + rank) * inner + i;
        values[at] = v;
        indices[at] = r;
    }
}

}  // namespace

void sort(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(outer * len * inner), kThreads, 0, 0, rank_sort_kernel<T>)(
            in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer, len, inner, descending);
    });
    MT_CUDA_CHECK_LAUNCH("sort");
}

}  // namespace minitorch::cuda
