// reduce.cu — CUDA kernels for the "reduce" family over a contiguous (outer, inner)
// matrix: one row -> one value (sum) or one (value, index) pair (max/min/arg*).
//
// Thread mapping: one block of kThreads threads per row (grid-stride over rows). Each
// thread first walks the row with stride blockDim.x keeping its own partial result;
// then the block combines the partials in shared memory, halving the active threads
// each step. Sums finish the last 32 partials with warp shuffles instead.
#include "common.cuh"

namespace minitorch::cuda {

namespace {

template <class T> struct AccT { using type = T; };
template <> struct AccT<float> { using type = double; };  // as on the CPU: float sums in double

template <class T>
__global__ void sum_rows_kernel(const T* in, T* out, int64_t outer, int64_t inner)
{
    using A = typename AccT<T>::type;
    __shared__ A partial[kThreads];
    for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
        A acc = 0;
        for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) acc += in[row * inner + i];
        partial[threadIdx.x] = acc;
        __syncthreads();  // all partials written before anyone reads a neighbour's
        for (unsigned s = blockDim.x / 2; s >= 32; s >>= 1) {
            if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
            __syncthreads();  // this level finished before the next one reads it
        }
        if (threadIdx.x < 32) {  // one warp left: shuffles need no barrier
            acc = partial[threadIdx.x];
            for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
            if (threadIdx.x == 0) out[row] = static_cast<T>(acc);
        }
        __syncthreads();  // partial[] is reused by this block's next row
    }
}

// Should (bv, bi) replace (av, ai)? NaN wins; ties go to the smaller index; -1 = empty.
template <class T>
__device__ __forceinline__ bool take_b(bool is_max, T av, int64_t ai, T bv, int64_t bi)
{
    if (bi < 0) return false;
    if (ai < 0) return true;
    const bool an = is_nan(av), bn = is_nan(bv);
    if (an || bn) return (an && bn) ? bi < ai : bn;
    if (av == bv) return bi < ai;
    return is_max ? bv > av : bv < av;
}

template <class T>
__global__ void best_rows_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t inner, bool is_max)
{
    __shared__ T best_v[kThreads];
    __shared__ int64_t best_i[kThreads];
    for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
        T v = T(0);
        int64_t idx = -1;
        for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
            const T x = in[row * inner + i];
            if (take_b(is_max, v, idx, x, i)) v = x, idx = i;
        }
        best_v[threadIdx.x] = v;
        best_i[threadIdx.x] = idx;
        __syncthreads();  // every thread's candidate is in shared memory
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s && take_b(is_max, best_v[threadIdx.x], best_i[threadIdx.x], best_v[threadIdx.x + s],
                                          best_i[threadIdx.x + s])) {
                best_v[threadIdx.x] = best_v[threadIdx.x + s];
                best_i[threadIdx.x] = best_i[threadIdx.x + s];
            }
            __syncthreads();  // this level finished before the next one reads it
        }
        if (threadIdx.x == 0) {
            if (values) values[row] = best_v[0];
            if (indices) indices[row] = best_i[0];
        }
        __syncthreads();  // best_v/best_i are reused by this block's next row
    }
}

unsigned row_blocks(int64_t outer) { return unsigned(outer < 1 ? 1 : (outer > 65535 ? 65535 : outer)); }

}  // namespace

void reduce(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = values ? values->numel() : indices->numel();
    const int64_t inner = outer ? in->numel() / outer : 0;
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (op == ReduceOp::Sum) {
            if constexpr (!std::is_same_v<T, bool>)  // bool sums are cast to int64 by the op
                MT_LAUNCH(row_blocks(outer), kThreads, 0, 0, sum_rows_kernel<T>)(in->data_as<T>(), values->data_as<T>(),
                                                                                   outer, inner);
            return;
        }
        const bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
        MT_LAUNCH(row_blocks(outer), kThreads, 0, 0, best_rows_kernel<T>)(
            in->data_as<T>(), values ? values->data_as<T>() : nullptr, indices ? indices->data_as<int64_t>() : nullptr,
            outer, inner, is_max);
    });
    MT_CUDA_CHECK_LAUNCH("reduce");
}

}  // namespace minitorch::cuda
