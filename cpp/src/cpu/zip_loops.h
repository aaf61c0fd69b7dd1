// zip_loops.h — the loops of the cheapest elementwise ops on contiguous float/double
// arrays, L lanes at a time: out = a op b for + - * / (each side an array, or one value
// broadcast), out = f(x) for relu, neg and abs, and the ternary ops (lerp, addcmul, addcdiv).
//
// These ops do one instruction per element, so their speed is how fast a core moves data
// between the caches and its registers. Included by elementwise.cpp (baseline: 16-byte
// SSE2/NEON vectors) and by elementwise_avx2.cpp (compiled with -mavx2: 32-byte vectors),
// so the same source is compiled once per instruction set. On the course's AMD EPYC
// machines the 16-byte loop for a + 1 on 10^6 floats takes 130-360 µs, the 32-byte one
// 110-150 µs (PyTorch: ~130). Every lane computes its own element with the formula of
// elementwise_math.h (no FMA here), so both compilations give the same bits. Like
// vector_loops.h, whose vectors and padded loads this reuses, everything is in an
// anonymous namespace: no AVX2 copy of a shared inline function can reach other code.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "minitorch/elementwise_math.h"
#include "vector_loops.h"

namespace minitorch::cpu {
namespace {

enum class Arith { Add, Sub, Mul, Div };
enum class CheapMap { Relu, Neg, Abs };
// Which operands are arrays: both, or a broadcast value on the right (a + 1.0) or on the
// left (1.0 - a).
enum class ZipLayout { Arrays, ScalarRight, ScalarLeft };

template <class T, int L>
inline vec<T, L> splat(T s)
{
    vec<T, L> v;
    for (int k = 0; k < L; ++k) v[k] = s;  // not {} + s: that would turn -0.0 into +0.0
    return v;
}

template <Arith Op, class V>
inline V arith(V x, V y)
{
    if constexpr (Op == Arith::Add) return x + y;
    else if constexpr (Op == Arith::Sub) return x - y;
    else if constexpr (Op == Arith::Mul) return x * y;
    else return x / y;  // a padded tail lane may divide 0 by 0: never stored
}

template <class T, int L, Arith Op, ZipLayout Layout>
void arith_loop(T* out, const T* a, const T* b, int64_t n)
{
    using V = vec<T, L>;
    const V a_all = Layout == ZipLayout::ScalarLeft ? splat<T, L>(*a) : V{};
    const V b_all = Layout == ZipLayout::ScalarRight ? splat<T, L>(*b) : V{};
    auto step = [&](int64_t i, int64_t m) {  // m = L, or fewer for the tail
        const V x = Layout == ZipLayout::ScalarLeft ? a_all : load<T, L>(a + i, m);
        const V y = Layout == ZipLayout::ScalarRight ? b_all : load<T, L>(b + i, m);
        store<T, L>(out + i, arith<Op>(x, y), m);
    };
    int64_t i = 0;
    for (; i + L <= n; i += L) step(i, L);
    if (i < n) step(i, n - i);
}

template <class T, int L, Arith Op>
void arith_layout(ZipLayout layout, T* out, const T* a, const T* b, int64_t n)
{
    switch (layout) {
        case ZipLayout::Arrays: return arith_loop<T, L, Op, ZipLayout::Arrays>(out, a, b, n);
        case ZipLayout::ScalarRight: return arith_loop<T, L, Op, ZipLayout::ScalarRight>(out, a, b, n);
        case ZipLayout::ScalarLeft: return arith_loop<T, L, Op, ZipLayout::ScalarLeft>(out, a, b, n);
    }
}

// out[i] = a[i] op b[i] for n elements, a or b read as one value where layout says so.
template <class T, int L>
void arith_contiguous(Arith op, ZipLayout layout, T* out, const T* a, const T* b, int64_t n)
{
    switch (op) {
        case Arith::Add: return arith_layout<T, L, Arith::Add>(layout, out, a, b, n);
        case Arith::Sub: return arith_layout<T, L, Arith::Sub>(layout, out, a, b, n);
        case Arith::Mul: return arith_layout<T, L, Arith::Mul>(layout, out, a, b, n);
        case Arith::Div: return arith_layout<T, L, Arith::Div>(layout, out, a, b, n);
    }
}

template <class T, int L, CheapMap Op>
void cheap_map_loop(T* out, const T* x, int64_t n)
{
    using V = vec<T, L>;
    const V zero = {};
    auto step = [&](int64_t i, int64_t m) {
        const V v = load<T, L>(x + i, m);
        V r;
        if constexpr (Op == CheapMap::Relu) r = v < zero ? zero : v;  // NaN stays NaN
        else if constexpr (Op == CheapMap::Neg) r = -v;
        else {  // fabs: the sign bit cleared (|-0.0| = +0.0, NaN's sign dropped too)
            using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
            using VI = vec<I, L>;
            r = reinterpret_cast<V>(reinterpret_cast<VI>(v) & splat<I, L>(std::numeric_limits<I>::max()));
        }
        store<T, L>(out + i, r, m);
    };
    int64_t i = 0;
    for (; i + L <= n; i += L) step(i, L);
    if (i < n) step(i, n - i);
}

template <class T, int L>
void cheap_map_contiguous(CheapMap op, T* out, const T* x, int64_t n)
{
    switch (op) {
        case CheapMap::Relu: return cheap_map_loop<T, L, CheapMap::Relu>(out, x, n);
        case CheapMap::Neg: return cheap_map_loop<T, L, CheapMap::Neg>(out, x, n);
        case CheapMap::Abs: return cheap_map_loop<T, L, CheapMap::Abs>(out, x, n);
    }
}

// out = ternary_op(Op, a, b, c, value) over n contiguous elements; c an array, or one value
// (c_scalar: lerp's number weight), b too when c is (b_scalar: clamp's two number bounds).
// Plain loops that the compiler vectorises to the file's vector width; `omp simd` because
// out may be a itself (p.lerp_(q, w)), which is safe here: each element is read and
// written at one index.
template <class T, TernaryOp Op>
void ternary_loop(T* out, const T* a, const T* b, const T* c, bool b_scalar, bool c_scalar, T value, int64_t n)
{
    if (b_scalar) {
        const T bv = *b, cv = *c;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = ternary_op(Op, a[i], bv, cv, value);
        return;
    }
    if (c_scalar) {
        const T cv = *c;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = ternary_op(Op, a[i], b[i], cv, value);
        return;
    }
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = ternary_op(Op, a[i], b[i], c[i], value);
}

template <class T>
void ternary_contiguous(TernaryOp op, T* out, const T* a, const T* b, const T* c, bool b_scalar, bool c_scalar,
                        T value, int64_t n)
{
    switch (op) {
#define MT_TERNARY_CASE(Op) \
    case TernaryOp::Op: return ternary_loop<T, TernaryOp::Op>(out, a, b, c, b_scalar, c_scalar, value, n);
        MT_TERNARY_OPS(MT_TERNARY_CASE)
#undef MT_TERNARY_CASE
    }
}

}  // namespace
}  // namespace minitorch::cpu
