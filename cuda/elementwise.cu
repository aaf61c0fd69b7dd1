// elementwise.cu — CUDA kernels for map / zip / where / ternary (cpu/elementwise.cpp mirrors it; fill,
// strided copy, arange and linspace are in copy.cu).
//
// Two paths for map / zip / where:
//  - dense (the common case: every operand contiguous, a single broadcast value such as
//    the 1.0 of x + 1.0, or one broadcast or sliced along the output's rows as Spread below
//    lists): no per-dim index decoding. Thread mapping: thread t of the grid
//    handles the kVec consecutive elements t*kVec ... t*kVec+kVec-1 (one 16-byte load per
//    operand when the pointers are aligned), grid-stride over the rest, 32-bit indices;
//    for float32 the op is a template parameter, so the compiler keeps just its formula.
//  - strided (anything else): one thread per output element, grid-stride loop; each
//    thread turns its flat index into byte offsets with Strided<N>::offsets.
//
// float16 / bfloat16 tensors are read and written in place (the table's map16 / zip16 /
// where16 entries, below, skip Widen's float32 staging copies): each value is converted to
// float32 as it is loaded, the op's float32 formula runs in registers, and the result is
// rounded once as it is stored -- one launch per op, and the same bits as staging gives
// (the same float32 formula on the same exact float32 values, rounded once). An operand
// of a 16-bit op may be float32: a scalar (the 0.5 of h * 0.5, which the ops keep in
// float32) or, for a float32 result (bf16 + float32), the float32 side.
//
// A number from the host (the 2.0 of x * 2.0 stays a 0-dim CPU tensor: see binary_forward
// in ops/elementwise.cpp; masked_fill's value likewise) is not in GPU memory. zip and where
// read its value on the host and hand it to the kernel as an argument (Number below), as
// PyTorch does with Python numbers: one launch, with no fill kernel to put it on the GPU first.
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

// kVec elements of T: one 16-byte load or store when aligned (8 bytes for 16-bit types).
template <class T>
constexpr int kVec = 16 / sizeof(T) < 4 ? int(16 / sizeof(T)) : 4;
template <class A, class B>
constexpr int kVec2 = kVec<A> < kVec<B> ? kVec<A> : kVec<B>;
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

// An operand that is a number from the host: its value, passed by value (given), or none.
template <class T>
struct Number {
    bool given;
    T value;
};

// How an input of the dense path is read: element i of the output reads data[i] (Flat), one
// value for all (Scalar), or -- the output being a (rows, inner) matrix -- data[i % inner]
// (Row: a trailing-dims operand, the b of (n, m) * (m,)) or data[i / inner] (Column: (n, 1)),
// or -- the output being (outer, mid, inner), element i at (o, m, n) -- data[o * step[0] +
// m * step[1] + n * inner_step] (Grid: any operand whose steps are 0 (broadcast) or its own
// strides: a per-channel bias, the b of (N, C, H, W) + (C, 1, 1); a (B, 1, D) vector added to
// (B, T, D); a padding mask (B, 1, 1, T) added to scores (B, H, T, T); a slice whose rows are
// apart in memory, the q of q, k, v = qkv.split(d, -1)).
enum class Spread : uint8_t { Flat, Scalar, Row, Column, Grid };

// An input of the dense path: values in memory (Flat, Row, Column: contiguous; Grid: at its
// steps), or one value read by every element (Scalar: from GPU memory, or the host number
// `value` when data is null).
template <class T>
struct DenseIn {
    const T* data;
    Spread spread;
    T value;
    FastDivisor inner;     // Row, Column and Grid: the output's row length (a multiple of V)
    FastDivisor mid;       // Grid: the output's middle dim
    uint32_t step[2];      // Grid: elements between neighbours along outer and mid (0: broadcast)
    bool inner_step;       // Grid: neighbours along inner are contiguous (else one value)
    __device__ __forceinline__ T one() const { return data ? data[0] : value; }
    __device__ __forceinline__ uint32_t index(uint32_t i) const
    {
        if (spread == Spread::Row) return i - inner.div(i) * inner.d;
        if (spread == Spread::Column) return inner.div(i);
        if (spread == Spread::Grid) {
            const uint32_t row = inner.div(i), o = mid.div(row);
            return o * step[0] + (row - o * mid.d) * step[1] + (inner_step ? i - row * inner.d : 0);
        }
        return i;
    }
    __device__ __forceinline__ T at(uint32_t i) const { return spread == Spread::Scalar ? one() : data[index(i)]; }
    // V values from element i on (i a multiple of V; aligned when contiguous). The V elements
    // lie in one row, so a Row operand's V values are contiguous, a Column operand's equal,
    // and a Grid operand's either (inner_step).
    template <int V>
    __device__ __forceinline__ Pack<T, V> pack(uint32_t i) const
    {
        if (spread == Spread::Scalar || spread == Spread::Column || (spread == Spread::Grid && !inner_step)) {
            Pack<T, V> p;
            const T v = spread == Spread::Scalar ? one() : data[index(i)];
            for (int k = 0; k < V; ++k) p.v[k] = v;
            return p;
        }
        return *reinterpret_cast<const Pack<T, V>*>(data + index(i));
    }
};

// out[i] = f(a[i], b[i]) (zip) or f(a[i]) (map, b unused), i < n < 2^32, computed in
// Compute<TA> (float32 for 16-bit operands) and converted once at the store. The vector
// part covers the first n - n % V elements, the first threads of the grid the tail.
template <class O, class TA, class TB, class F, bool Binary>
__global__ void dense_kernel(O* out, DenseIn<TA> a, DenseIn<TB> b, uint32_t n, F f)
{
    constexpr int V = kVec2<TA, TB>;
    using C = Compute<TA>;
    const uint32_t threads = gridDim.x * blockDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t packs = n / V;
    for (uint32_t p = tid; p < packs; p += threads) {
        const Pack<TA, V> x = a.template pack<V>(p * V);
        Pack<TB, V> y;
        if constexpr (Binary) y = b.template pack<V>(p * V);
        Pack<O, V> r;
        for (int k = 0; k < V; ++k) {
            if constexpr (Binary) r.v[k] = static_cast<O>(f(C(x.v[k]), C(y.v[k])));
            else r.v[k] = static_cast<O>(f(C(x.v[k])));
        }
        *reinterpret_cast<Pack<O, V>*>(out + p * V) = r;
    }
    for (uint32_t i = packs * V + tid; i < n; i += threads) {
        if constexpr (Binary) out[i] = static_cast<O>(f(C(a.at(i)), C(b.at(i))));
        else out[i] = static_cast<O>(f(C(a.at(i))));
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
            static_cast<O>(unary_op(op, Compute<T>(*reinterpret_cast<const T*>(s.base[1] + off[1]))));
    }
}

// na / nb: an operand that is a host number (its base in s is null, never read).
template <class O, class TA, class TB>
__global__ void zip_kernel(Strided<3> s, BinaryOp op, Number<TA> na, Number<TB> nb)
{
    using C = Compute<TA>;
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[3];
        s.offsets(i, off);
        const C a = C(na.given ? na.value : *reinterpret_cast<const TA*>(s.base[1] + off[1]));
        const C b = C(nb.given ? nb.value : *reinterpret_cast<const TB*>(s.base[2] + off[2]));
        *reinterpret_cast<O*>(s.base[0] + off[0]) = static_cast<O>(binary_op(op, a, b));
    }
}

// out[i] = cond[i] ? a[i] : b[i] on the dense path (see dense_kernel; a or b may be a host
// number: Spread::Scalar). T moves values without arithmetic (16-bit ones as uint16_t).
template <class T>
__global__ void where_dense_kernel(T* out, DenseIn<bool> c, DenseIn<T> a, DenseIn<T> b, uint32_t n)
{
    constexpr int V = kVec2<T, bool>;
    const uint32_t threads = gridDim.x * blockDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t packs = n / V;
    for (uint32_t p = tid; p < packs; p += threads) {
        const Pack<bool, V> cp = c.template pack<V>(p * V);
        const Pack<T, V> x = a.template pack<V>(p * V), y = b.template pack<V>(p * V);
        Pack<T, V> r;
        for (int k = 0; k < V; ++k) r.v[k] = cp.v[k] ? x.v[k] : y.v[k];
        *reinterpret_cast<Pack<T, V>*>(out + p * V) = r;
    }
    for (uint32_t i = packs * V + tid; i < n; i += threads) out[i] = c.at(i) ? a.at(i) : b.at(i);
}

// na / nb: a or b is a host number (masked_fill's value, the 0.0 of where(c, x, 0.0)).
template <class T>
__global__ void where_kernel(Strided<4> s, Number<T> na, Number<T> nb)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[4];
        s.offsets(i, off);
        const bool c = *reinterpret_cast<const bool*>(s.base[1] + off[1]);
        const Number<T>& n = c ? na : nb;
        *reinterpret_cast<T*>(s.base[0] + off[0]) =
            n.given ? n.value : *reinterpret_cast<const T*>(s.base[c ? 2 : 3] + off[c ? 2 : 3]);
    }
}

}  // namespace

namespace {

// The dense path applies when the output is contiguous, its contiguous pointers are 16-byte
// aligned (true for fresh tensors; a view at an odd offset takes the strided path), and either
//  - the coalesced plan is one run in which every input is contiguous (stride = its item size)
//    or one broadcast value (stride 0), with fewer than 2^32 elements; or
//  - it is two dims (rows, inner), inner a multiple of 4 (any V), under 2^31 elements, and each
//    input is contiguous, one value, or broadcast along one dim: strides (0, item) (a Row
//    operand) or (item, 0) (a Column one) -- a bias or a scale broadcast over rows or columns;
//  - or two or three dims (outer, mid, inner), inner a multiple of 4, under 2^31 elements, and
//    each input a Grid operand (see Spread): its inner stride the item or 0, its other strides
//    non-negative multiples of 4 items (when its inner stride is the item: every pack of V
//    values aligned) or 0, its last element under 2^32 items from its first. Two-dim plans
//    take this form where the one above does not (a slice's rows apart in memory).
// (The ternary kernels, reading stride[k][0] as their operands' element strides, take the first
// form only: rows_too = false.)
// Whether every stride of operand k is 0: one value for all.
template <int N>
bool one_value(const Strided<N>& s, int k)
{
    for (int d = 0; d < s.ndim; ++d)
        if (s.stride[k][d] != 0) return false;
    return true;
}

// Whether operand k (items of `item` bytes) is contiguous over a two- or three-dim plan.
template <int N>
bool rows_packed(const Strided<N>& s, int k, int64_t item)
{
    const int64_t* st = s.stride[k];
    const int last = s.ndim - 1;
    return st[last] == item && st[last - 1] == s.shape[last] * item && (s.ndim == 2 || st[0] == s.shape[1] * st[1]);
}

template <int N>
bool grid_operand(const Strided<N>& s, int k, int64_t item)
{
    const int64_t* st = s.stride[k];
    const int last = s.ndim - 1;
    if (st[last] != item && st[last] != 0) return false;
    int64_t reach = 0;
    for (int d = 0; d < last; ++d) {
        if (st[d] < 0 || st[d] % item != 0 || (st[last] != 0 && (st[d] / item) % 4 != 0)) return false;
        reach += (s.shape[d] - 1) * (st[d] / item);
    }
    return reach + s.shape[last] < (int64_t(1) << 32);
}

template <int N>
bool dense(const Strided<N>& s, const std::array<const TensorImpl*, N>& ts, bool rows_too = true)
{
    const bool flat = s.ndim == 1 && s.numel < (int64_t(1) << 32);
    const bool rows = rows_too && (s.ndim == 2 || s.ndim == 3) && s.numel < (int64_t(1) << 31) &&
                      s.shape[s.ndim - 1] % 4 == 0;
    if (!flat && !rows) return false;
    for (int k = 0; k < N; ++k) {
        const int64_t item = int64_t(itemsize(ts[k]->dtype));
        const int64_t* st = s.stride[k];
        const bool scalar = one_value(s, k);
        const bool ok = flat ? st[0] == item || (k > 0 && scalar) || s.numel == 1
                             : rows_packed(s, k, item) || (k > 0 && grid_operand(s, k, item));
        if (!ok || (!scalar && reinterpret_cast<uintptr_t>(s.base[k]) % 16 != 0)) return false;
    }
    return true;
}

// Operand k of a dense plan: how it is spread over the output (see dense), or the host number n.
template <class T, int N>
DenseIn<T> dense_in(const Strided<N>& s, int k, Number<T> n = {false, T{}})
{
    const int64_t* st = s.stride[k];
    const int64_t item = int64_t(sizeof(T));
    const int last = s.ndim - 1;
    Spread spread = Spread::Flat;
    if (n.given || one_value(s, k)) spread = Spread::Scalar;
    else if (s.ndim == 1 || rows_packed(s, k, item)) spread = Spread::Flat;
    else if (s.ndim == 2 && st[0] == 0 && st[1] == item) spread = Spread::Row;
    else if (s.ndim == 2 && st[0] == item && st[1] == 0) spread = Spread::Column;
    else spread = Spread::Grid;
    // Grid: a two-dim plan is (1, rows, inner).
    const int64_t outer_step = s.ndim == 3 ? st[0] / item : 0, mid_step = s.ndim >= 2 ? st[last - 1] / item : 0;
    return {n.given ? nullptr : reinterpret_cast<const T*>(s.base[k]),
            spread,
            n.value,
            FastDivisor(uint32_t(s.ndim >= 2 ? s.shape[last] : 1)),
            FastDivisor(uint32_t(s.ndim == 3 ? s.shape[1] : s.ndim == 2 ? s.shape[0] : 1)),
            {uint32_t(outer_step), uint32_t(mid_step)},
            st[last] != 0};
}

// The operand t as a Number: its value when it lives on the host (read here, on the host),
// else not given.
template <class T>
Number<T> number_of(const Tensor& t)
{
    if (!t->device().is_cpu()) return {false, T{}};
    return {true, *t->data_as<T>()};
}

// The plan of out = op(a, b) or where(cond, a, b). The base of a host-number operand is
// nulled: the kernels take its value as an argument, and a null base makes a stray read of
// host memory from a kernel fail loudly (in the emulator too) instead of reading a pointer
// the GPU cannot see.
template <int N>
Strided<N> plan_with_numbers(const std::array<const TensorImpl*, N>& ts)
{
    Strided<N> s = make_strided<N>(ts);
    for (int k = 1; k < N; ++k)
        if (ts[k]->device().is_cpu()) s.base[k] = nullptr;
    return s;
}

// Launches dense_kernel for output type O with op functor f (b unused for a map).
template <class O, class TA, class TB, bool Binary, class F>
void launch_dense(char* out, DenseIn<TA> a, DenseIn<TB> b, int64_t numel, F f)
{
    const uint32_t n = uint32_t(numel);
    constexpr int V = kVec2<TA, TB>;
    const unsigned blocks = blocks_for((int64_t(n) + V - 1) / V);
    MT_LAUNCH(blocks, kThreads, 0, 0, dense_kernel<O, TA, TB, F, Binary>)(reinterpret_cast<O*>(out), a, b, n, f);
}

// Calls run(functor) with the op known at compile time for float32 (and for the 16-bit types
// where map16 / zip16 ask: kStatic), at run time otherwise. A run-time op is a switch over
// every op per element, which costs a 16-bit op more than its halved memory traffic saves.
template <class T, bool kStatic = std::is_same_v<T, float>, class Run>
void with_unary(UnaryOp op, Run&& run)
{
    if constexpr (kStatic) {
        switch (op) {
#define MT_STATIC_CASE(Enum, ...) \
    case UnaryOp::Enum: return run(StaticUnary<UnaryOp::Enum>{});
            MT_UNARY_OPS(MT_STATIC_CASE)
#undef MT_STATIC_CASE
        }
    }
    run(DynamicUnary{op});
}

template <class T, bool kStatic = std::is_same_v<T, float>, class Run>
void with_binary(BinaryOp op, Run&& run)
{
    if constexpr (kStatic) {
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
                if (to_bool) launch_dense<bool, T, T, false>(s.base[0], x, x, s.numel, f);
                else launch_dense<T, T, T, false>(s.base[0], x, x, s.numel, f);
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
    Strided<3> s = plan_with_numbers<3>(ts);
    const bool to_bool = out->dtype == DType::Bool;
    if (dense<3>(s, ts)) {
        dispatch(a->dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const DenseIn<T> x = dense_in<T>(s, 1, number_of<T>(a)), y = dense_in<T>(s, 2, number_of<T>(b));
            with_binary<T>(op, [&](auto f) {
                if (to_bool) launch_dense<bool, T, T, true>(s.base[0], x, y, s.numel, f);
                else launch_dense<T, T, T, true>(s.base[0], x, y, s.numel, f);
            });
        });
        MT_CUDA_CHECK_LAUNCH("dense_kernel (zip)");
        return;
    }
    dispatch(a->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const Number<T> na = number_of<T>(a), nb = number_of<T>(b);
        if (to_bool) MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, zip_kernel<bool, T, T>)(s, op, na, nb);
        else MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, zip_kernel<T, T, T>)(s, op, na, nb);
    });
    MT_CUDA_CHECK_LAUNCH("zip_kernel");
}

namespace {

// where on T's bits: the dense kernel where the plan allows (see dense), else the strided one.
template <class T>
void launch_where(const Strided<4>& s, const std::array<const TensorImpl*, 4>& ts, const Tensor& a, const Tensor& b)
{
    const Number<T> na = number_of<T>(a), nb = number_of<T>(b);
    if (dense<4>(s, ts)) {
        constexpr int V = kVec2<T, bool>;
        const uint32_t n = uint32_t(s.numel);
        MT_LAUNCH(blocks_for((int64_t(n) + V - 1) / V), kThreads, 0, 0, where_dense_kernel<T>)(
            reinterpret_cast<T*>(s.base[0]), dense_in<bool>(s, 1), dense_in<T>(s, 2, na), dense_in<T>(s, 3, nb), n);
        return;
    }
    MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, where_kernel<T>)(s, na, nb);
}

}  // namespace

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b)
{
    const std::array<const TensorImpl*, 4> ts{out.get(), cond.get(), a.get(), b.get()};
    const Strided<4> s = plan_with_numbers<4>(ts);
    dispatch(out->dtype, [&](auto tag) { launch_where<typename decltype(tag)::type>(s, ts, a, b); });
    MT_CUDA_CHECK_LAUNCH("where");
}

// ---- float16 / bfloat16 in place (the table's entries, see runtime.cu) ----

namespace {

// Whether the 16-bit path takes an op on these tensors, and its 16-bit type: some tensor is
// float16 or bfloat16, every 16-bit one is of that one type, and the others are float32 (or
// bool where `may_be_bool` says, one flag per tensor). Anything else (a narrow integer,
// float16 beside bfloat16) goes through Widen.
template <size_t N>
bool native16(const std::array<const Tensor*, N>& ts, const std::array<bool, N>& may_be_bool, DType& t16)
{
    t16 = DType::Float32;
    for (size_t k = 0; k < N; ++k) {
        const DType d = (*ts[k])->dtype;
        if (is_16bit(d)) {
            if (t16 != DType::Float32 && t16 != d) return false;
            t16 = d;
        } else if (d != DType::Float32 && !(d == DType::Bool && may_be_bool[k])) {
            return false;
        }
    }
    return t16 != DType::Float32;
}

// Calls f(Tag<H>{}) for the 16-bit type H of an op.
template <class F>
void dispatch16(DType t16, F&& f)
{
    if (t16 == DType::Float16) return f(Tag<Half>{});
    f(Tag<BFloat16>{});
}

// Calls f(Tag<T>{}) for a tensor of an op whose 16-bit type is H: H, float32 or bool.
template <class H, class F>
void with16(DType d, F&& f)
{
    if (d == DType::Float32) return f(Tag<float>{});
    if (d == DType::Bool) return f(Tag<bool>{});
    f(Tag<H>{});
}

}  // namespace

void map16(UnaryOp op, const Tensor& out, const Tensor& in)
{
    DType t16;
    if (!native16<2>({&out, &in}, {true, false}, t16) || in->dtype != t16)
        return MT_WIDEN(map, UnaryOp, const Tensor&, const Tensor&)(op, out, in);
    const std::array<const TensorImpl*, 2> ts{out.get(), in.get()};
    const Strided<2> s = make_strided<2>(ts);
    const bool to_bool = out->dtype == DType::Bool, is_dense = dense<2>(s, ts);
    dispatch16(t16, [&](auto tag) {
        using H = typename decltype(tag)::type;
        const DenseIn<H> x = dense_in<H>(s, 1);
        if (is_dense && to_bool)
            launch_dense<bool, H, H, false>(s.base[0], x, x, s.numel, DynamicUnary{op});
        else if (is_dense)
            with_unary<H, true>(op, [&](auto f) { launch_dense<H, H, H, false>(s.base[0], x, x, s.numel, f); });
        else if (to_bool) MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, map_kernel<bool, H>)(s, op);
        else MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, map_kernel<H, H>)(s, op);
    });
    MT_CUDA_CHECK_LAUNCH("map (16-bit)");
}

void zip16(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b)
{
    DType t16;
    if (!native16<3>({&out, &a, &b}, {true, false, false}, t16))
        return MT_WIDEN(zip, BinaryOp, const Tensor&, const Tensor&, const Tensor&)(op, out, a, b);
    const std::array<const TensorImpl*, 3> ts{out.get(), a.get(), b.get()};
    const Strided<3> s = plan_with_numbers<3>(ts);
    const bool is_dense = dense<3>(s, ts);
    dispatch16(t16, [&](auto tag) {
        using H = typename decltype(tag)::type;
        with16<H>(a->dtype, [&](auto tag_a) {
            with16<H>(b->dtype, [&](auto tag_b) {
                with16<H>(out->dtype, [&](auto tag_o) {
                    using TA = typename std::decay_t<decltype(tag_a)>::type;  // (nvcc: a reference in a nested lambda)
                    using TB = typename std::decay_t<decltype(tag_b)>::type;
                    using O = typename std::decay_t<decltype(tag_o)>::type;
                    if constexpr (!std::is_same_v<TA, bool> && !std::is_same_v<TB, bool>) {
                        const Number<TA> na = number_of<TA>(a);
                        const Number<TB> nb = number_of<TB>(b);
                        const auto run = [&](auto f) {
                            launch_dense<O, TA, TB, true>(s.base[0], dense_in<TA>(s, 1, na), dense_in<TB>(s, 2, nb),
                                                          s.numel, f);
                        };
                        constexpr bool same = std::is_same_v<TA, H> && std::is_same_v<TB, H> && std::is_same_v<O, H>;
                        if (is_dense && same)  // h + h, h * h, ...: the op compiled in
                            with_binary<H, true>(op, run);
                        else if (is_dense)
                            run(DynamicBinary{op});
                        else
                            MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, zip_kernel<O, TA, TB>)(s, op, na, nb);
                    }
                });
            });
        });
    });
    MT_CUDA_CHECK_LAUNCH("zip (16-bit)");
}

// where moves values without arithmetic: a 16-bit one is moved as its 16 bits.
void where16(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b)
{
    DType t16;
    const bool same = a->dtype == out->dtype && b->dtype == out->dtype;
    if (!same || !native16<4>({&out, &cond, &a, &b}, {false, true, false, false}, t16))
        return MT_WIDEN(where, const Tensor&, const Tensor&, const Tensor&, const Tensor&)(out, cond, a, b);
    const std::array<const TensorImpl*, 4> ts{out.get(), cond.get(), a.get(), b.get()};
    launch_where<uint16_t>(plan_with_numbers<4>(ts), ts, a, b);
    MT_CUDA_CHECK_LAUNCH("where (16-bit)");
}

// ---- ternary: lerp, addcmul, addcdiv (out[i] = ternary_op(op, a[i], b[i], c[i], value)) ----
// One launch per op, in place too (out may be a). Thread mapping as map / zip: the dense
// kernel (out contiguous, each input contiguous or one broadcast value, < 2^32 elements)
// gives thread t the elements t, t + (all threads), ... at 32-bit indices with the op a
// template parameter; the strided kernel decodes each flat index into byte offsets.
// float16 / bfloat16 are read and written as 16 bits and computed in float32 registers.

namespace {

// An input of a ternary kernel, in the compute type: element i of its tensor (dense: at
// data + i * step bytes; step 0 for a broadcast value), read as T or, where `wide`, as the
// float32 scalar a 16-bit op keeps (the 0.3 of lerp(h, e, 0.3)); or the host number `value`.
template <class T>
struct TernaryIn {
    const char* data;
    uint32_t step;
    bool given, wide;
    Compute<T> value;
    __device__ __forceinline__ Compute<T> load(const char* p) const
    {
        if (given) return value;
        if constexpr (!std::is_same_v<Compute<T>, T>)
            if (wide) return *reinterpret_cast<const float*>(p);
        return Compute<T>(*reinterpret_cast<const T*>(p));
    }
    __device__ __forceinline__ Compute<T> at(uint32_t i) const { return load(data + size_t(i) * step); }
};

template <class T, TernaryOp Op>
__global__ void ternary_dense_kernel(T* out, TernaryIn<T> a, TernaryIn<T> b, TernaryIn<T> c, uint32_t n,
                                     Compute<T> value)
{
    const uint32_t threads = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += threads)
        out[i] = static_cast<T>(ternary_op(Op, a.at(i), b.at(i), c.at(i), value));
}

template <class T>
__global__ void ternary_kernel(Strided<4> s, TernaryOp op, TernaryIn<T> a, TernaryIn<T> b, TernaryIn<T> c,
                               Compute<T> value)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[4];
        s.offsets(i, off);
        *reinterpret_cast<T*>(s.base[0] + off[0]) = static_cast<T>(
            ternary_op(op, a.load(s.base[1] + off[1]), b.load(s.base[2] + off[2]), c.load(s.base[3] + off[3]), value));
    }
}

// Operand k (1..3) of the plan s, tensor t, for an output of type T.
template <class T>
TernaryIn<T> ternary_in(const Tensor& t, const Strided<4>& s, int k)
{
    TernaryIn<T> in{s.base[k], uint32_t(s.stride[k][0]), false, false, Compute<T>{}};
    in.wide = !std::is_same_v<Compute<T>, T> && t->dtype == DType::Float32;
    if (t->device().is_cpu()) {  // a host number (plan_with_numbers nulled its base)
        in.given = true;
        if constexpr (!std::is_same_v<Compute<T>, T>)
            if (in.wide) return in.value = *t->data_as<float>(), in;
        in.value = Compute<T>(*t->data_as<T>());
    }
    return in;
}

template <class T>
void launch_ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value)
{
    const std::array<const TensorImpl*, 4> ts{out.get(), a.get(), b.get(), c.get()};
    const Strided<4> s = plan_with_numbers<4>(ts);
    const TernaryIn<T> x = ternary_in<T>(a, s, 1), y = ternary_in<T>(b, s, 2), z = ternary_in<T>(c, s, 3);
    const Compute<T> v = value.to<Compute<T>>();
    if (!dense<4>(s, ts, false)) {
        MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, ternary_kernel<T>)(s, op, x, y, z, v);
        return;
    }
    T* o = reinterpret_cast<T*>(s.base[0]);
    const uint32_t n = uint32_t(s.numel);
    switch (op) {
#define MT_TERNARY_CASE(Op)                                                                                \
    case TernaryOp::Op:                                                                                    \
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, ternary_dense_kernel<T, TernaryOp::Op>)(o, x, y, z, n, v); \
        break;
        MT_TERNARY_OPS(MT_TERNARY_CASE)
#undef MT_TERNARY_CASE
    }
}

}  // namespace

void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value)
{
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) launch_ternary<T>(op, out, a, b, c, value);  // the ops refuse bool
    });
    MT_CUDA_CHECK_LAUNCH("ternary_kernel");
}

// The table's entry: a float16 / bfloat16 output with operands of its type or float32 in
// place; anything else (narrow integers) through Widen.
void ternary16(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value)
{
    const DType t = out->dtype;
    auto fits = [t](const Tensor& x) { return x->dtype == t || x->dtype == DType::Float32; };
    if (!is_16bit(t) || !fits(a) || !fits(b) || !fits(c))
        return MT_WIDEN(ternary, TernaryOp, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Scalar)(
            op, out, a, b, c, value);
    dispatch16(t, [&](auto tag) { launch_ternary<typename decltype(tag)::type>(op, out, a, b, c, value); });
    MT_CUDA_CHECK_LAUNCH("ternary_kernel (16-bit)");
}

}  // namespace minitorch::cuda
