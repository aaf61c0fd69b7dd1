// sort.cu — CUDA kernel for sorting each line along the middle dim of a contiguous
// (outer, R, inner) tensor (sort, argsort, topk); layout as in kernels.h.
#include <algorithm>
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

// The sorted order as a strict total order on (value, place): by value (NaN above every
// number; descending reverses that), equal values by place, so any sorting network gives
// the stable sort. Padding (place >= len) comes after everything, by place among itself.
template <class T>
__device__ bool comes_before(T a, int a_at, T b, int b_at, int len, bool descending)
{
    const bool a_pad = a_at >= len, b_pad = b_at >= len;
    if (a_pad || b_pad) return a_pad == b_pad ? a_at < b_at : b_pad;
    if (descending ? less_nan_last(b, a) : less_nan_last(a, b)) return true;
    if (descending ? less_nan_last(a, b) : less_nan_last(b, a)) return false;
    return a_at < b_at;
}

// Lines up to this long are sorted by one block in shared memory: 4096 values and their
// int places are 48 KiB for 8-byte types, the most a block gets without opting in. (PyTorch
// sorts such lines the same way; longer ones go to a segmented radix sort, here to the rank
// sort below.)
constexpr int64_t kBitonicMax = 4096;

// Bitonic sort. Thread mapping: one block per line (o, i), grid-striding over the lines.
// The line's values and places are staged in shared memory, padded to P (a power of two);
// then, for each stage (k, j) of the network, thread t compare-and-swaps the pairs
// (p, p + j) where p is the t-th, (t + blockDim)-th, ... index with bit j clear, in
// ascending order where bit k of p is clear and descending where it is set. Every stage
// touches each element once; a barrier separates the stages (log2(P) (log2(P) + 1) / 2
// of them). After the last, the line is in order: it is written back to global memory.
template <class T>
__global__ void bitonic_sort_kernel(const T* in, T* values, int64_t* indices, int64_t lines, int64_t len,
                                    int64_t inner, int P, bool descending)
{
    MT_DYNAMIC_SHARED(unsigned char, smem);
    int* at = reinterpret_cast<int*>(smem);           // P places first: P * 4 bytes keep
    T* keys = reinterpret_cast<T*>(smem + P * sizeof(int));  // 8-byte alignment for P >= 2
    const int n = int(len);
    for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
        const int64_t o = line / inner, i = line % inner;
        const int64_t base = o * len * inner + i;  // element r of the line is at base + r * inner
        __syncthreads();  // the previous line is written out
        for (int p = threadIdx.x; p < P; p += blockDim.x) {
            at[p] = p;
            keys[p] = p < n ? in[base + p * inner] : T();
        }
        __syncthreads();
        for (int k = 2; k <= P; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int t = threadIdx.x; t < P / 2; t += blockDim.x) {
                    const int p = 2 * t - (t & (j - 1)), q = p + j;
                    const bool ascending = (p & k) == 0;
                    if (comes_before(keys[q], at[q], keys[p], at[p], n, descending) == ascending) {
                        const T kp = keys[p];
                        keys[p] = keys[q], keys[q] = kp;
                        const int ap = at[p];
                        at[p] = at[q], at[q] = ap;
                    }
                }
                __syncthreads();
            }
        for (int r = threadIdx.x; r < n; r += blockDim.x) {
            values[base + r * inner] = keys[r];
            indices[base + r * inner] = at[r];
        }
    }
}

// Rank sort. Thread mapping: one thread per element (o, r, i). It counts the elements of
// its line that come before it -- smaller ones, and equal ones at a smaller r (which makes
// the sort stable) -- and that count is its place in the sorted line. Every thread reads
// the whole line: O(R^2) work per line, but no thread waits for another, and the code is
// the definition of a stable sort. Fine for the rows of a model (R in the thousands);
// it sorts the lines longer than the bitonic sort's shared memory holds.
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
    if (!values->numel()) return;
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (len <= kBitonicMax) {
            int P = 2;  // at least 2: the places before the values keep them 8-byte aligned
            while (P < len) P *= 2;
            const int threads = std::min(P / 2, 1024);
            const int64_t lines = outer * inner;
            const unsigned grid = unsigned(std::min<int64_t>(lines, int64_t(1) << 30));
            MT_LAUNCH(grid, threads, size_t(P) * (sizeof(int) + sizeof(T)), 0, bitonic_sort_kernel<T>)(
                in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), lines, len, inner, P,
                descending);
            return;
        }
        MT_LAUNCH(blocks_for(outer * len * inner), kThreads, 0, 0, rank_sort_kernel<T>)(
            in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer, len, inner, descending);
    });
    MT_CUDA_CHECK_LAUNCH("sort");
}

}  // namespace minitorch::cuda
