// elementwise.cpp — CPU kernels for the elementwise families (cuda/elementwise.cu mirrors it):
// "map" out[i] = f(in[i]), "zip" out[i] = f(a[i], b[i]), where and ternary (lerp, addcmul,
// addcdiv: out[i] = f(a[i], b[i], c[i])). Broadcasting happened
// before: operands arrive expanded (stride 0 on broadcast dims).
#include <algorithm>
#include <cmath>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/strided_loop.h"
#include "minitorch/vector_math.h"
#include "zip_loops.h"

namespace minitorch::cpu {

#if defined(__x86_64__)
// In elementwise_avx2.cpp (compiled with -mavx2): zip_loops.h's loops on 32-byte vectors.
void arith_avx2_f32(int op, int layout, float* out, const float* a, const float* b, int64_t n);
void arith_avx2_f64(int op, int layout, double* out, const double* a, const double* b, int64_t n);
void cheap_map_avx2_f32(int op, float* out, const float* x, int64_t n);
void cheap_map_avx2_f64(int op, double* out, const double* x, int64_t n);
void ternary_avx2_f32(int op, float* out, const float* a, const float* b, const float* c, bool b_scalar, bool c_scalar,
                      float value, int64_t n);
void ternary_avx2_f64(int op, double* out, const double* a, const double* b, const double* c, bool b_scalar,
                      bool c_scalar, double value, int64_t n);
#endif

namespace {

// ---- the cheapest ops on contiguous float/double: zip_loops.h, on AVX2 where the CPU has it ----

template <class T>
void arith_run(Arith op, ZipLayout layout, T* out, const T* a, const T* b, int64_t n)
{
#if defined(__x86_64__)
    if (cpu_has_avx2()) {
        if constexpr (std::is_same_v<T, float>) return arith_avx2_f32(int(op), int(layout), out, a, b, n);
        else return arith_avx2_f64(int(op), int(layout), out, a, b, n);
    }
#endif
    arith_contiguous<T, 16 / sizeof(T)>(op, layout, out, a, b, n);
}

template <class T>
void cheap_map_run(CheapMap op, T* out, const T* x, int64_t n)
{
#if defined(__x86_64__)
    if (cpu_has_avx2()) {
        if constexpr (std::is_same_v<T, float>) return cheap_map_avx2_f32(int(op), out, x, n);
        else return cheap_map_avx2_f64(int(op), out, x, n);
    }
#endif
    cheap_map_contiguous<T, 16 / sizeof(T)>(op, out, x, n);
}

// One instantiation per (op, type) so the inner loop has no switch in it. O is the
// output's element type: T itself, or bool for isnan and friends.
template <class O, class T, class F>
void run_map(const StridedPlan<2>& plan, F f, int64_t grain = kGrainSize)
{
    plan.run([f](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        if (s[0] == sizeof(O) && s[1] == sizeof(T)) {
            O* out = reinterpret_cast<O*>(p[0]);
            const T* in = reinterpret_cast<const T*>(p[1]);
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(f(in[i]));
        } else {
            for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<O*>(p[0] + i * s[0]) = static_cast<O>(f(*reinterpret_cast<const T*>(p[1] + i * s[1])));
        }
    }, grain);
}

// The op as a compile-time constant: the switch in unary_op folds away.
template <UnaryOp Op, class T>
void run_fixed(const StridedPlan<2>& plan, int64_t grain = kGrainSize)
{
    run_map<T, T>(plan, [](T x) { return unary_op(Op, x); }, grain);
}

// Through the SIMD functions of vector_math.cpp, several elements per call. Strided runs
// are gathered into a small buffer first, so every layout gets the same bits.
template <class T>
void run_vector(UnaryOp op, const StridedPlan<2>& plan)
{
    plan.run([op](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
            vector_map<T>(op, reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]), n);
            return;
        }
        constexpr int64_t kChunk = 64;
        T buf[kChunk];
        for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
            const int64_t m = std::min(kChunk, n - i0);
            for (int64_t i = 0; i < m; ++i) buf[i] = *reinterpret_cast<const T*>(p[1] + (i0 + i) * s[1]);
            vector_map<T>(op, buf, buf, m);
            for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(p[0] + (i0 + i) * s[0]) = buf[i];
        }
    }, kGrainSize);
}

// Relu, neg, abs of float/double: contiguous runs through zip_loops.h, others element by
// element with the same formula (elementwise_math.h).
template <class T, UnaryOp Op, CheapMap C>
void run_cheap_map(const StridedPlan<2>& plan)
{
    plan.run([](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        if (s[0] == sizeof(T) && s[1] == sizeof(T))
            return cheap_map_run<T>(C, reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]), n);
        for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) = unary_op(Op, *reinterpret_cast<const T*>(p[1] + i * s[1]));
    }, kMemoryBoundGrain);
}

// Ops that cost about a memory access per element (no libm call).
constexpr bool memory_bound(UnaryOp op)
{
    switch (op) {
        case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Sign: case UnaryOp::Relu: case UnaryOp::Floor:
        case UnaryOp::Ceil: case UnaryOp::Round: case UnaryOp::Trunc: case UnaryOp::Frac: case UnaryOp::IsNan:
        case UnaryOp::IsInf: case UnaryOp::IsFinite: case UnaryOp::LogicalNot: case UnaryOp::BitwiseNot:
            return true;
        default:
            return false;
    }
}

// ---- the fused activations of op_list.h (gelu, gelu_tanh, silu, mish) ----
// Their formulas (elementwise_math.h) call erf / exp / tanh once or twice per element; as
// scalar libm calls those cost ~10x a SIMD call of vector_math.cpp, which made the fused op
// slower on the CPU than the chain of vectorised ops it replaces. So a contiguous run goes
// in chunks through stack buffers: the transcendental parts by vector_map, the arithmetic
// in plain loops. The same formulas as elementwise_math.h, in the same order.
constexpr int64_t kActChunk = 256;

// The SIMD functions that op's chunked form needs (Relu: none, not a fused activation).
template <class T>
bool has_vector_activation(UnaryOp op)
{
    switch (op) {
        case UnaryOp::Gelu: return has_vector_map<T>(UnaryOp::Erf) && has_vector_map<T>(UnaryOp::Exp);
        case UnaryOp::GeluTanh: return has_vector_map<T>(UnaryOp::Tanh);
        case UnaryOp::Silu: return has_vector_map<T>(UnaryOp::Sigmoid);
        case UnaryOp::Mish:
            return has_vector_map<T>(UnaryOp::Exp) && has_vector_map<T>(UnaryOp::Log1p) &&
                   has_vector_map<T>(UnaryOp::Tanh) && has_vector_map<T>(UnaryOp::Sigmoid);
        default: return false;
    }
}

// The forward op of a fused activation's backward (GeluBackward -> Gelu), else Relu.
constexpr UnaryOp activation_of(BinaryOp op)
{
    switch (op) {
        case BinaryOp::GeluBackward: return UnaryOp::Gelu;
        case BinaryOp::GeluTanhBackward: return UnaryOp::GeluTanh;
        case BinaryOp::SiluBackward: return UnaryOp::Silu;
        case BinaryOp::MishBackward: return UnaryOp::Mish;
        default: return UnaryOp::Relu;
    }
}

// t[i] = tanh(softplus(x[i])), softplus = max(x, 0) + log1p(exp(-|x|)) (as tanh_softplus).
template <class T>
void tanh_softplus_chunk(T* t, const T* x, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) t[i] = -std::fabs(x[i]);
    vector_map<T>(UnaryOp::Exp, t, t, n);
    vector_map<T>(UnaryOp::Log1p, t, t, n);
    for (int64_t i = 0; i < n; ++i) t[i] += x[i] > T(0) ? x[i] : T(0);
    vector_map<T>(UnaryOp::Tanh, t, t, n);
}

// out = act(x) (g null) or g * act'(x), n <= kActChunk contiguous values.
template <class T>
void activation_chunk(UnaryOp op, T* out, const T* g, const T* x, int64_t n)
{
    T t[kActChunk], u[kActChunk];
    const T k = T(kSqrt2OverPi), c = T(kGeluTanhCubic);
    switch (op) {
        case UnaryOp::Gelu:  // Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
            for (int64_t i = 0; i < n; ++i) t[i] = x[i] * T(0.70710678118654752440);
            vector_map<T>(UnaryOp::Erf, t, t, n);
            if (!g) {
                for (int64_t i = 0; i < n; ++i) out[i] = T(0.5) * x[i] * (T(1) + t[i]);
                return;
            }
            for (int64_t i = 0; i < n; ++i) u[i] = T(-0.5) * x[i] * x[i];
            vector_map<T>(UnaryOp::Exp, u, u, n);
            for (int64_t i = 0; i < n; ++i)
                out[i] = g[i] * (T(0.5) * (T(1) + t[i]) + x[i] * (u[i] * T(0.39894228040143267794)));
            return;
        case UnaryOp::GeluTanh:  // t = tanh(u), u = k (x + c x^3)
            for (int64_t i = 0; i < n; ++i) t[i] = k * (x[i] + c * x[i] * x[i] * x[i]);
            vector_map<T>(UnaryOp::Tanh, t, t, n);
            if (!g) {
                for (int64_t i = 0; i < n; ++i) out[i] = T(0.5) * x[i] * (T(1) + t[i]);
                return;
            }
            for (int64_t i = 0; i < n; ++i) {
                const T du = k * (T(1) + T(3 * kGeluTanhCubic) * x[i] * x[i]);
                out[i] = g[i] * (T(0.5) * (T(1) + t[i]) + T(0.5) * x[i] * (T(1) - t[i] * t[i]) * du);
            }
            return;
        case UnaryOp::Silu:  // s = sigmoid(x)
            vector_map<T>(UnaryOp::Sigmoid, t, x, n);
            if (!g) {
                for (int64_t i = 0; i < n; ++i) out[i] = x[i] * t[i];
                return;
            }
            for (int64_t i = 0; i < n; ++i) out[i] = g[i] * (t[i] * (T(1) + x[i] * (T(1) - t[i])));
            return;
        case UnaryOp::Mish:  // T = tanh(softplus(x)), s = sigmoid(x)
            tanh_softplus_chunk(t, x, n);
            if (!g) {
                for (int64_t i = 0; i < n; ++i) out[i] = x[i] * t[i];
                return;
            }
            vector_map<T>(UnaryOp::Sigmoid, u, x, n);
            for (int64_t i = 0; i < n; ++i) out[i] = g[i] * (t[i] + x[i] * u[i] * (T(1) - t[i] * t[i]));
            return;
        default: return;  // not reached: has_vector_activation was false
    }
}

// The plan's runs in chunks when every operand is contiguous, else element by element
// with f (the scalar formula). P = 2 (map: out, x) or 3 (zip: out, g, x).
template <class T, int P, class F>
void run_activation(UnaryOp op, const StridedPlan<P>& plan, F scalar)
{
    plan.run([op, scalar](const std::array<char*, P>& p, const std::array<int64_t, P>& s, int64_t n) {
        bool dense = true;
        for (int k = 0; k < P; ++k) dense = dense && s[k] == int64_t(sizeof(T));
        if (!dense) {
            for (int64_t i = 0; i < n; ++i) {
                if constexpr (P == 2) {
                    *reinterpret_cast<T*>(p[0] + i * s[0]) = scalar(*reinterpret_cast<const T*>(p[1] + i * s[1]));
                } else {
                    *reinterpret_cast<T*>(p[0] + i * s[0]) = scalar(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                                                                    *reinterpret_cast<const T*>(p[2] + i * s[2]));
                }
            }
            return;
        }
        T* out = reinterpret_cast<T*>(p[0]);
        const T* g = P == 3 ? reinterpret_cast<const T*>(p[1]) : nullptr;
        const T* x = reinterpret_cast<const T*>(p[P - 1]);
        for (int64_t i0 = 0; i0 < n; i0 += kActChunk)
            activation_chunk<T>(op, out + i0, g ? g + i0 : nullptr, x + i0, std::min(kActChunk, n - i0));
    }, kGrainSize);
}

}  // namespace

void map(UnaryOp op, const Tensor& out, const Tensor& in)
{
    StridedPlan<2> plan({out.get(), in.get()});
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (out->dtype == DType::Bool && in->dtype != DType::Bool)
            return run_map<bool, T>(plan, [op](T x) { return unary_op(op, x); }, kMemoryBoundGrain);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (out->dtype == in->dtype) switch (op) {
                case UnaryOp::Relu: return run_cheap_map<T, UnaryOp::Relu, CheapMap::Relu>(plan);
                case UnaryOp::Neg: return run_cheap_map<T, UnaryOp::Neg, CheapMap::Neg>(plan);
                case UnaryOp::Abs: return run_cheap_map<T, UnaryOp::Abs, CheapMap::Abs>(plan);
                default: break;
            }
        }
        if constexpr (std::is_floating_point_v<T>) {
            if (out->dtype == in->dtype && has_vector_map<T>(op)) return run_vector<T>(op, plan);
            if (out->dtype == in->dtype && has_vector_activation<T>(op))
                return run_activation<T>(op, plan, [op](T x) { return unary_op(op, x); });
        }
        if (out->dtype == in->dtype) {
            // Every op gets its own loop (the op a compile-time constant: no switch per
            // element, so the compiler can vectorise it); memory-bound ones a bigger grain.
            switch (op) {
#define MT_FIXED_LOOP(Enum, ...) \
    case UnaryOp::Enum: return run_fixed<UnaryOp::Enum, T>(plan, memory_bound(UnaryOp::Enum) ? kMemoryBoundGrain : kGrainSize);
                MT_UNARY_OPS(MT_FIXED_LOOP)
#undef MT_FIXED_LOOP
            }
        }
        run_map<T, T>(plan, [op](T x) { return unary_op(op, x); });
    });
}

}  // namespace minitorch::cpu

namespace minitorch::cpu {

namespace {

// The loop: contiguous operands get a plain indexed loop (vectorizable), a broadcast
// scalar on the right its own loop, anything else the general strided form.
template <class O, class T, class F>
void run_zip(const StridedPlan<3>& plan, F f, int64_t grain = kGrainSize)
{
    plan.run([f](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        O* out = reinterpret_cast<O*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        if (s[0] == sizeof(O) && s[1] == sizeof(T) && s[2] == sizeof(T)) {
            for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
        } else if (s[0] == sizeof(O) && s[1] == sizeof(T) && s[2] == 0) {
            const T bv = *b;
            for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
        } else {
            for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<O*>(p[0] + i * s[0]) =
                    f(*reinterpret_cast<const T*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]));
        }
    }, grain);
}

// + - * / of float/double: contiguous runs (or one side a broadcast value) through
// zip_loops.h, other layouts element by element with elementwise_math.h's formula.
template <class T, BinaryOp Op, Arith A>
void run_arith(const StridedPlan<3>& plan)
{
    plan.run([](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        T* out = reinterpret_cast<T*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        constexpr int64_t e = sizeof(T);
        if (s[0] == e && s[1] == e && s[2] == e) return arith_run<T>(A, ZipLayout::Arrays, out, a, b, n);
        if (s[0] == e && s[1] == e && s[2] == 0) return arith_run<T>(A, ZipLayout::ScalarRight, out, a, b, n);
        if (s[0] == e && s[1] == 0 && s[2] == e) return arith_run<T>(A, ZipLayout::ScalarLeft, out, a, b, n);
        for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                binary_op(Op, *reinterpret_cast<const T*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]));
    }, kMemoryBoundGrain);
}

// Arithmetic that costs about a memory access per element (integer division does not).
template <class T>
constexpr bool memory_bound(BinaryOp op)
{
    if constexpr (std::is_same_v<T, bool>) return false;
    return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul ||
           (op == BinaryOp::Div && std::is_floating_point_v<T>);
}

}  // namespace

void zip(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b)
{
    StridedPlan<3> plan({out.get(), a.get(), b.get()});
    dispatch(a->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        // Comparisons and logical ops write bool whatever T is.
        if (out->dtype == DType::Bool && a->dtype != DType::Bool)
            return run_zip<bool, T>(plan, [op](T x, T y) { return binary_op(op, x, y); }, kMemoryBoundGrain);
        if constexpr (std::is_floating_point_v<T>) {
            const UnaryOp act = activation_of(op);
            if (out->dtype == a->dtype && has_vector_activation<T>(act))
                return run_activation<T>(act, plan, [op](T g, T x) { return binary_op(op, g, x); });
        }
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (out->dtype == a->dtype) switch (op) {
                case BinaryOp::Add: return run_arith<T, BinaryOp::Add, Arith::Add>(plan);
                case BinaryOp::Sub: return run_arith<T, BinaryOp::Sub, Arith::Sub>(plan);
                case BinaryOp::Mul: return run_arith<T, BinaryOp::Mul, Arith::Mul>(plan);
                case BinaryOp::Div: return run_arith<T, BinaryOp::Div, Arith::Div>(plan);
                default: break;
            }
        }
        if (out->dtype == a->dtype) {
            // Every op its own loop (the op a compile-time constant, no switch per element,
            // so + - * / vectorise); the memory-bound arithmetic gets a bigger grain.
            switch (op) {
#define MT_FIXED_LOOP(Enum, ...)                                                                     \
    case BinaryOp::Enum:                                                                             \
        return run_zip<T, T>(plan, [](T x, T y) { return binary_op(BinaryOp::Enum, x, y); },         \
                             memory_bound<T>(BinaryOp::Enum) ? kMemoryBoundGrain : kGrainSize);
                MT_BINARY_OPS(MT_FIXED_LOOP)
#undef MT_FIXED_LOOP
            }
        }
        run_zip<T, T>(plan, [op](T x, T y) { return binary_op(op, x, y); });
    });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b)
{
    StridedPlan<4> plan({out.get(), cond.get(), a.get(), b.get()});
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        plan.run([](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
                bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
                *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
            }
        });
    });
}

namespace {

// Contiguous runs of the ternary ops: zip_loops.h's loops, on AVX2 where the CPU has it.
template <class T>
void ternary_run(TernaryOp op, T* out, const T* a, const T* b, const T* c, bool b_scalar, bool c_scalar, T value,
                 int64_t n)
{
#if defined(__x86_64__)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (cpu_has_avx2()) {
            if constexpr (std::is_same_v<T, float>)
                return ternary_avx2_f32(int(op), out, a, b, c, b_scalar, c_scalar, value, n);
            else return ternary_avx2_f64(int(op), out, a, b, c, b_scalar, c_scalar, value, n);
        }
    }
#endif
    ternary_contiguous<T>(op, out, a, b, c, b_scalar, c_scalar, value, n);
}

// out[i] = ternary_op(op, a[i], b[i], c[i], value): contiguous runs (c an array or one
// broadcast value; b too where c is one value) through ternary_run, anything else element
// by element with the op a compile-time constant.
template <class T, TernaryOp Op>
void run_ternary(const StridedPlan<4>& plan, T value)
{
    plan.run([value](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
        constexpr int64_t e = sizeof(T);
        const bool b_scalar = s[2] == 0 && s[3] == 0;
        if (s[0] == e && s[1] == e && (s[2] == e || b_scalar) && (s[3] == e || s[3] == 0))
            return ternary_run<T>(Op, reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]),
                                  reinterpret_cast<const T*>(p[2]), reinterpret_cast<const T*>(p[3]), b_scalar,
                                  s[3] == 0, value, n);
        for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                ternary_op(Op, *reinterpret_cast<const T*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]),
                           *reinterpret_cast<const T*>(p[3] + i * s[3]), value);
    }, kMemoryBoundGrain);
}

}  // namespace

void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value)
{
    StridedPlan<4> plan({out.get(), a.get(), b.get(), c.get()});
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {  // the ops refuse bool
            switch (op) {
#define MT_TERNARY_CASE(Op) \
    case TernaryOp::Op: return run_ternary<T, TernaryOp::Op>(plan, value.to<T>());
                MT_TERNARY_OPS(MT_TERNARY_CASE)
#undef MT_TERNARY_CASE
            }
        }
    });
}

}  // namespace minitorch::cpu
