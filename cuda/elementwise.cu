// elementwise.cu — CUDA kernels for map / zip / where (cpu/elementwise.cpp mirrors it; fill,
// strided copy, arange and linspace are in copy.cu).
//
// Two paths for map / zip:
//  - dense (the common case: every operand contiguous, or a single broadcast value such
//    as the 1.0 of x + 1.0): no index decoding. Thread mapping: thread t of the grid
//    handles the kVec consecutive elements t*kVec ... t*kVec+kVec-1 (one 16-byte load per
//    operand when the pointers are aligned), grid-stride over the rest, 32-bit indices;
//    for float32 the op is a template parameter, so the compiler keeps just its formula.
//  - strided (anything else): one thread per output element, grid-stride loop; each
//    thread turns its flat index into byte offsets with Strided<N>::offsets.
#include <cstring>

#include "minitorch/strided_loop.h"
#include "common.cuh"

namespace minitorch::cuda {

namespace {

// ---- dense path ----

// The op as a value known at compile time (float32: the switch in unary_op folds away)
// or at run time (other dtypes: one uniform branch per element, no divergence).
template <UnaryOp Op>
struct StaticUnary {
    template <class T> __device__ __forceinline__ T operator()(T x) const { return unary_op(Op, x); }
};
struct DynamicUnary {
    UnaryOp op;
    template <class T> __device__ __forceinline__ T operator()(T x) const { return unary_op(op, x); }
};
template <BinaryOp Op>
struct StaticBinary {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return binary_op(Op, a, b); }
};
struct DynamicBinary {
    BinaryOp op;
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return binary_op(op, a, b); }
};

// kVec elements of T: one 16-byte load or store when aligned.
template <class T>
constexpr int kVec = 16 / sizeof(T) < 4 ? int(16 / sizeof(T)) : 4;
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

// An input of the dense path: n contiguous values, or one value read by every element.
template <class T>
struct DenseIn {
    const T* data;
    bool scalar;
    __device__ __forceinline__ T at(uint32_t i) const { return data[scalar ? 0 : i]; }
    // kVec values from element i on (i a multiple of kVec; aligned when not scalar).
    __device__ __forceinline__ Pack<T, kVec<T>> pack(uint32_t i) const
    {
        if (scalar) {
            Pack<T, kVec<T>> p;
            for (int k = 0; k < kVec<T>; ++k) p.v[k] = data[0];
            return p;
        }
        return *reinterpret_cast<const Pack<T, kVec<T>>*>(data + i);
    }
};

// out[i] = f(a[i], b[i]) (zip) or f(a[i]) (map, b unused), i < n < 2^32. The vector part
// covers the first n - n % kVec elements, the first threads of the grid the tail.
template <class O, class T, class F, bool Binary>
__global__ void dense_kernel(O* out, DenseIn<T> a, DenseIn<T> b, uint32_t n, F f)
{
    constexpr int V = kVec<T>;
    const uint32_t threads = gridDim.x * blockDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t packs = n / V;
    for (uint32_t p = tid; p < packs; p += threads) {
        const Pack<T, V> x = a.pack(p * V);
        Pack<T, V> y;
        if constexpr (Binary) y = b.pack(p * V);
        Pack<O, V> r;
        for (int k = 0; k < V; ++k) {
            if constexpr (Binary) r.v[k] = static_cast<O>(f(x.v[k], y.v[k]));
            else r.v[k] = static_cast<O>(f(x.v[k]));
        }
        *reinterpret_cast<Pack<O, V>*>(out + p * V) = r;
    }
    for (uint32_t i = packs * V + tid; i < n; i += threads) {
        if constexpr (Binary) out[i] = static_cast<O>(f(a.at(i), b.at(i)));
        else out[i] = static_cast<O>(f(a.at(i)));
    }
}

// O is the output's element type: T itself, or bool for isnan, comparisons, logical ops.
template <class O, class T>
__global__ void map_kernel(Strided<2> s, UnaryOp op)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[2];
        s.offsets(i, off);
        *reinterpret_cast<O*>(s.base[0] + off[0]) =
            static_cast<O>(unary_op(op, *reinterpret_cast<const T*>(s.base[1] + off[1])));
    }
}

template <class O, class T>
__global__ void zip_kernel(Strided<3> s, BinaryOp op)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[3];
        s.offsets(i, off);
        const T a = *reinterpret_cast<const T*>(s.base[1] + off[1]);
        const T b = *reinterpret_cast<const T*>(s.base[2] + off[2]);
        *reinterpret_cast<O*>(s.base[0] + off[0]) = static_cast<O>(binary_op(op, a, b));
    }
}

template <class T>
__global__ void where_kernel(Strided<4> s)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[4];
        s.offsets(i, off);
        const bool c = *reinterpret_cast<const bool*>(s.base[1] + off[1]);
        *reinterpret_cast<T*>(s.base[0] + off[0]) = *reinterpret_cast<const T*>(s.base[c ? 2 : 3] + off[c ? 2 : 3]);
    }
}

}  // namespace

namespace {

// The dense path applies when the coalesced plan is one run in which every input is
// contiguous (stride = its item size) or one broadcast value (stride 0), the output is
// contiguous, there are fewer than 2^32 elements, and the contiguous pointers are
// 16-byte aligned (true for fresh tensors; a view at an odd offset takes the strided path).
template <int N>
bool dense(const Strided<N>& s, const std::array<const TensorImpl*, N>& ts)
{
    if (s.ndim != 1 || s.numel >= (int64_t(1) << 32)) return false;
    for (int k = 0; k < N; ++k) {
        const int64_t item = int64_t(itemsize(ts[k]->dtype)), stride = s.stride[k][0];
        const bool ok = stride == item || (k > 0 && stride == 0) || s.numel == 1;
        if (!ok || (stride != 0 && reinterpret_cast<uintptr_t>(s.base[k]) % 16 != 0)) return false;
    }
    return true;
}

// Operand k of a dense plan: contiguous, or one value read by every element (stride 0).
template <class T, int N>
DenseIn<T> dense_in(const Strided<N>& s, int k)
{
    return {reinterpret_cast<const T*>(s.base[k]), s.stride[k][0] == 0};
}

// Launches dense_kernel for output type O with op functor f (b unused for a map).
template <class O, class T, bool Binary, class F>
void launch_dense(char* out, DenseIn<T> a, DenseIn<T> b, int64_t numel, F f)
{
    const uint32_t n = uint32_t(numel);
    const unsigned blocks = blocks_for((int64_t(n) + kVec<T> - 1) / kVec<T>);
    MT_LAUNCH(blocks, kThreads, 0, 0, dense_kernel<O, T, F, Binary>)(reinterpret_cast<O*>(out), a, b, n, f);
}

// Calls run(functor) with the op known at compile time for float32, at run time otherwise.
template <class T, class Run>
void with_unary(UnaryOp op, Run&& run)
{
    if constexpr (std::is_same_v<T, float>) {
        switch (op) {
#define MT_STATIC_CASE(Enum, ...) \
    case UnaryOp::Enum: return run(StaticUnary<UnaryOp::Enum>{});
            MT_UNARY_OPS(MT_STATIC_CASE)
#undef MT_STATIC_CASE
        }
    }
    run(DynamicUnary{op});
}

template <class T, class Run>
void with_binary(BinaryOp op, Run&& run)
{
    if constexpr (std::is_same_v<T, float>) {
        switch (op) {
#define MT_STATIC_CASE(Enum, ...) \
    case BinaryOp::Enum: return run(StaticBinary<BinaryOp::Enum>{});
            MT_BINARY_OPS(MT_STATIC_CASE)
#undef MT_STATIC_CASE
        }
    }
    run(DynamicBinary{op});
}

}  // namespace

void map(UnaryOp op, const Tensor& out, const Tensor& in)
{
    const std::array<const TensorImpl*, 2> ts{out.get(), in.get()};
    Strided<2> s = make_strided<2>(ts);
    const bool to_bool = out->dtype == DType::Bool;
    if (dense<2>(s, ts)) {
        dispatch(in->dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const DenseIn<T> x = dense_in<T>(s, 1);
            with_unary<T>(op, [&](auto f) {
                if (to_bool) launch_dense<bool, T, false>(s.base[0], x, x, s.numel, f);
                else launch_dense<T, T, false>(s.base[0], x, x, s.numel, f);
            });
        });
        MT_CUDA_CHECK_LAUNCH("dense_kernel (map)");
        return;
    }
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (to_bool) MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, map_kernel<bool, T>)(s, op);
        else MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, map_kernel<T, T>)(s, op);
    });
    MT_CUDA_CHECK_LAUNCH("map_kernel");
}

void zip(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b)
{
    const std::array<const TensorImpl*, 3> ts{out.get(), a.get(), b.get()};
    Strided<3> s = make_strided<3>(ts);
    const bool to_bool = out->dtype == DType::Bool;
    if (dense<3>(s, ts)) {
        dispatch(a->dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const DenseIn<T> x = dense_in<T>(s, 1), y = dense_in<T>(s, 2);
            with_binary<T>(op, [&](auto f) {
                if (to_bool) launch_dense<bool, T, true>(s.base[0], x, y, s.numel, f);
                else launch_dense<T, T, true>(s.base[0], x, y, s.numel, f);
            });
        });
        MT_CUDA_CHECK_LAUNCH("dense_kernel (zip)");
        return;
    }
    dispatch(a->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (to_bool) MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, zip_kernel<bool, T>)(s, op);
        else MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, zip_kernel<T, T>)(s, op);
    });
    MT_CUDA_CHECK_LAUNCH("zip_kernel");
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b)
{
    Strided<4> s = make_strided<4>({out.get(), cond.get(), a.get(), b.get()});
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, where_kernel<T>)(s);
    });
    MT_CUDA_CHECK_LAUNCH("where_kernel");
}

}  // namespace minitorch::cuda
