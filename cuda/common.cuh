// common.cuh — what every CUDA kernel file shares: error checks, launch sizes, and
// the strided view of a tensor that kernels index with.
//
// The same sources build with nvcc (a real GPU) and with the host compiler against
// emu/cuda_emu.h, in every build (the CUDA emulator: kernels run on the CPU, see emu/README.md).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "api.h"
#include "emu/cuda_compat.h"
#include "minitorch/fast_divisor.h"
#include "launch_profiler.cuh"  // MT_LAUNCH records launches for minitorch.profiler
#include "minitorch/elementwise_math.h"
#include "minitorch/error.h"
#include "minitorch/kernels.h"

namespace minitorch::cuda {

// Every CUDA API call is checked; a failure becomes a Python RuntimeError naming the call.
#define MT_CUDA_CHECK(call)                                                                              \
    do {                                                                                                 \
        cudaError_t err_ = (call);                                                                       \
        if (err_ != cudaSuccess) {                                                                       \
            cudaGetLastError(); /* the next launch check must not see this error again */                \
            throw std::runtime_error(::minitorch::detail::str("CUDA error: ", cudaGetErrorString(err_), \
                                                              " (", #call, ")"));                        \
        }                                                                                                \
    } while (0)

// Every launch is followed by this (a bad configuration is reported at launch time).
#define MT_CUDA_CHECK_LAUNCH(name) MT_CUDA_CHECK_LAUNCH_(cudaGetLastError(), name)
#define MT_CUDA_CHECK_LAUNCH_(err, name)                                                                     \
    do {                                                                                                     \
        cudaError_t e_ = (err);                                                                              \
        if (e_ != cudaSuccess)                                                                               \
            throw std::runtime_error(::minitorch::detail::str("CUDA kernel launch failed (", name, "): ",   \
                                                              cudaGetErrorString(e_)));                      \
    } while (0)

constexpr int kThreads = 256;  // threads per block for elementwise kernels

// Whether environment variable `name` is set to `value`: the switches that pick one GPU path
// over another to compare them in one run (MINITORCH_CUDA_SOFTMAX=merge, ...), read on the host.
inline bool env_is(const char* name, const char* value)
{
    const char* env = std::getenv(name);
    return env && std::strcmp(env, value) == 0;
}

// The largest power of two, up to `most`, that divides a device address: libraries pick their
// vector loads by it (cuDNN's plans, cuBLASLt's algorithms), so they are told the truth.
inline int64_t alignment_of(const void* p, int64_t most)
{
    int64_t a = 1;
    while (a < most && reinterpret_cast<uintptr_t>(p) % uintptr_t(a * 2) == 0) a *= 2;
    return a;
}

// The positive integer environment variable `name` holds, or 0 where it is unset or holds
// anything else: the sizes tests shrink to reach a kernel's rare paths with small tensors.
inline int64_t env_positive(const char* name)
{
    const char* env = std::getenv(name);
    const long long v = env ? std::atoll(env) : 0;
    return v > 0 ? int64_t(v) : 0;
}

// Unrolls the loop that follows, so that a small per-thread array indexed by its counter (a
// row's values, a tile's sums) stays in registers: every index is a constant after unrolling.
// The emulator's host compiler does not know the pragma.
#if defined(__CUDACC__)
#define MT_UNROLL _Pragma("unroll")
#else
#define MT_UNROLL
#endif

// The grid-stride loop: thread t of the whole grid handles elements t, t + (all
// threads), ... so any n works with the capped grid of blocks_for.
#define MT_GRID_STRIDE(i, n) \
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// Blocks for n elements with a grid-stride loop: enough to fill the GPU, capped so
// huge tensors loop instead of launching millions of blocks.
inline unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 1 ? 1 : (b > 4096 ? 4096 : b));
}

// The type a kernel computes an element in: float32 for float16 / bfloat16 (read and
// written as 16 bits, computed in float32 registers, rounded once at the store), the
// type itself otherwise.
template <class T>
using Compute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Calls f(Tag<T>{}) with the C++ type of a compute dtype or of float16 / bfloat16 (Half,
// BFloat16), for the kernels that read 16-bit values themselves.
template <class F>
decltype(auto) dispatch_with16(DType t, F&& f)
{
    if (t == DType::Float16) return f(Tag<Half>{});
    if (t == DType::BFloat16) return f(Tag<BFloat16>{});
    return dispatch(t, std::forward<F>(f));
}

// Floating dtypes only, float16 and bfloat16 included (as Half, BFloat16).
template <class F>
void dispatch_floating16(DType t, const char* op, F&& f)
{
    if (t == DType::Float16) return f(Tag<Half>{});
    if (t == DType::BFloat16) return f(Tag<BFloat16>{});
    dispatch_floating(t, op, f);
}

// N tensors of one (coalesced) shape: each thread turns its flat index into N byte
// offsets. Built on the host from cpu::StridedPlan's coalescing.
template <int N>
struct Strided {
    int ndim;
    int64_t numel;
    int64_t shape[kMaxDims];
    int64_t stride[N][kMaxDims];  // bytes
    char* base[N];
    // The flat index becomes coordinates by dividing by each dim's size. A GPU has no
    // integer divider, and a 64-bit `/` and `%` are long instruction sequences, paid per
    // dim per element. So when every index fits in 31 bits, each size's division is a
    // multiply-high and a shift (FastDivisor), set up once on the host (as PyTorch does).
    bool small;                  // numel < 2^31: the 32-bit path below
    FastDivisor size[kMaxDims];  // shape[d] as a FastDivisor (set when small)

    __device__ __forceinline__ void offsets(int64_t i, int64_t (&off)[N]) const
    {
        for (int k = 0; k < N; ++k) off[k] = 0;
        if (small) {
            uint32_t rest = uint32_t(i);
            for (int d = ndim - 1; d >= 0; --d) {
                const uint32_t q = size[d].div(rest), idx = rest - q * size[d].d;
                rest = q;
                for (int k = 0; k < N; ++k) off[k] += int64_t(idx) * stride[k][d];
            }
            return;
        }
        for (int d = ndim - 1; d >= 0; --d) {
            const int64_t idx = i % shape[d];
            i /= shape[d];
            for (int k = 0; k < N; ++k) off[k] += idx * stride[k][d];
        }
    }
};

template <int N>
Strided<N> make_strided(const std::array<const TensorImpl*, N>& ts);

// The first bad index a kernel found, in device memory (see index_check.cu).
struct IndexFault {
    int flag;  // 0 = no error; the first thread to swap in 1 fills the rest
    int op;    // position of the op's name in the host's list of op names
    int is_target;
    int dim;  // IndexCheck::dim (-1: the message names no dim)
    long long value, position, size;
};

// What a kernel that checks indices needs to report one: the process's record and its
// op's number (from index_faults on the host, which also marks a report as pending).
struct IndexFaults {
    IndexFault* record;
    int op;

    // Keeps the first bad value of the whole process until the host reads it.
    __device__ void report(const IndexCheck& c, int64_t value, int64_t position) const
    {
        if (atomicCAS(&record->flag, 0, 1) != 0) return;
        record->op = op;
        record->is_target = c.is_target;
        record->dim = int(c.dim);
        record->value = value;
        record->position = position;
        record->size = c.size;
    }
};
// For a kernel about to check indices for `op` (a string literal).
IndexFaults index_faults(const char* op);

// Raises the IndexError a kernel recorded since the last call, if any (called where
// the host waits for the GPU anyway: synchronize and device-to-host copies).
void report_index_errors();
// Counts a place where the host waits for the GPU (see host_waits in api.h).
void count_host_wait();

// ---- the CUDA KernelTable entries (one .cu file per family), as listed in kernels.h ----
MT_DECLARE_KERNELS()
// The table's matmul and matmul_bias entries (matmul.cu): 16-bit GEMMs on cuBLAS in their own
// type, the rest through Widen.
void matmul_native16(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_batches);
void matmul_bias_native(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias);
// The table's map / zip / where / ternary entries (elementwise.cu): float16 / bfloat16 read and written
// in place, computed in float32; narrow integers through Widen.
void map16(UnaryOp op, const Tensor& out, const Tensor& in);
void zip16(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
void where16(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void ternary16(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value);
// reduce / reduce_stats (reduce.cu) the same way.
void reduce16(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in);
void reduce_stats16(const Tensor& out, const Tensor& mean, const Tensor& in, const StatReduce& spec);
// sort (sort.cu): float16 / bfloat16 lines of up to 4096 in place, the rest through Widen.
void sort16(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending);
// softmax / softmax_backward (softmax.cu) the same way.
void softmax16(const Tensor& out, const Tensor& in, int64_t dim, bool log);
void softmax_backward16(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out, int64_t dim, bool log);
// layer_norm / layer_norm_backward (layer_norm.cu) the same way.
void layer_norm16(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                  const Tensor& bias, double eps);
void layer_norm_backward16(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                           const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                           const Tensor& weight);
// scatter / index_put (indexing.cu): moves of any dtype in place; sums into float16 /
// bfloat16 / narrow integers through Widen.
void scatter16(WriteOp op, const Tensor& out, const Tensor& src, const Tensor& index, int64_t dim,
               const IndexCheck& check);
void index_put16(WriteOp op, bool read, const Tensor& self, const Tensor& values, const std::vector<Tensor>& indices,
                 const char* op_name);
// cuDNN's convolutions (cudnn_conv.cu); null when the build has no cudnn.h or is emulated.
const ConvLibrary* cudnn_conv_library();
// cuDNN's recurrent layers (cudnn_rnn.cu); null likewise.
const RnnLibrary* cudnn_rnn_library();

// Launches kernel<T> for a floating dtype (the op's name in errors), one thread per
// element of `count`; the arguments may use T. MT_FLOAT16_LAUNCH: the same for a kernel
// that reads float16 / bfloat16 itself (T = Half, BFloat16 too; it computes in Compute<T>).
#define MT_FLOAT_LAUNCH(dtype, name, count, kernel, ...) \
    MT_DISPATCHED_LAUNCH_(dispatch_floating, dtype, name, count, kernel, __VA_ARGS__)
#define MT_FLOAT16_LAUNCH(dtype, name, count, kernel, ...) \
    MT_DISPATCHED_LAUNCH_(dispatch_floating16, dtype, name, count, kernel, __VA_ARGS__)
#define MT_DISPATCHED_LAUNCH_(dispatcher, dtype, name, count, kernel, ...)                \
    do {                                                                                 \
        dispatcher(dtype, name, [&](auto tag) {                                          \
            using T = typename decltype(tag)::type;                                      \
            MT_LAUNCH(blocks_for(count), kThreads, 0, 0, kernel<T>)(__VA_ARGS__);        \
        });                                                                              \
        MT_CUDA_CHECK_LAUNCH(name);                                                      \
    } while (0)

}  // namespace minitorch::cuda
