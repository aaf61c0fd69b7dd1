// vector_loops.h — the loops of vector_math: out[i] = f(in[i]), L lanes at a time, where f is
// one of glibc's libmvec functions (e.g. _ZGVdN8v_expf: 8 floats in, 8 floats out).
//
// Included by vector_math.cpp (baseline x86-64 SSE2, or AArch64 NEON: 16-byte vectors) and
// by vector_math_avx2.cpp (compiled with -mavx2 -mfma: 32-byte vectors), so the same source
// is compiled once per instruction set. Everything here is in an anonymous namespace and
// only <cstdint>/<cstring> are included, so no AVX2 copy of a shared inline function can
// leak into code that runs on a CPU without AVX2.
#pragma once
#include <cstdint>
#include <cstring>

namespace minitorch::cpu {
namespace {

// The libmvec calling convention. On x86-64 it is the ordinary one. AArch64's AdvSIMD
// functions (_ZGVnN4v_expf) follow the vector procedure call standard instead: they keep
// all 128 bits of v8-v23 intact, where an ordinary function keeps only the low 64 bits of
// v8-v15 (their dynamic symbols are marked VARIANT_PCS for that reason). So calling one
// through a plain function pointer would be safe too (the caller then saves more than it
// must); the attribute tells the compiler what the callee keeps, so constants such as
// sigmoid's 1.0 can stay in registers across the calls. dlsym returns the function's own
// address, with no lazy-binding stub in between that could clobber those registers.
#if defined(__aarch64__)
#define MT_VECTOR_PCS __attribute__((aarch64_vector_pcs))
#else
#define MT_VECTOR_PCS
#endif

// GCC's vector extension: L values of T in one register, with + - * / < and ?: per lane;
// fn is a libmvec function on such vectors.
template <class T, int L>
struct Vec {
    typedef T type __attribute__((vector_size(sizeof(T) * L)));
    typedef type (*fn)(type) MT_VECTOR_PCS;
};
template <class T, int L>
using vec = typename Vec<T, L>::type;
template <class T, int L>
using VecFn = typename Vec<T, L>::fn;

template <class T, int L>
inline vec<T, L> load(const T* p, int64_t n = L)
{
    vec<T, L> v = {};  // a partial vector is padded with zeros
    std::memcpy(&v, p, size_t(n) * sizeof(T));
    return v;
}

template <class T, int L>
inline void store(T* p, vec<T, L> v, int64_t n = L)
{
    std::memcpy(p, &v, size_t(n) * sizeof(T));
}

// The scalar formula of elementwise_math.h on L lanes: 1 / (1 + e^-x) for x >= 0 and
// e^x / (1 + e^x) below, both from e = exp(-|x|), which never overflows.
template <class T, int L>
inline vec<T, L> sigmoid(VecFn<T, L> exp, vec<T, L> x)
{
    const vec<T, L> zero = {}, one = zero + T(1);
    const auto negative = x < zero;  // all-ones lanes where x < 0 (false for NaN)
    const vec<T, L> e = exp(negative ? x : -x);
    return negative ? e / (one + e) : one / (one + e);
}

// out[i] = f(in[i]) for n contiguous elements; the tail goes through one padded vector.
template <class T, int L>
void vector_loop(bool is_sigmoid, void* fn, T* out, const T* in, int64_t n)
{
    const auto f = reinterpret_cast<VecFn<T, L>>(fn);
    auto apply = [&](vec<T, L> x) { return is_sigmoid ? sigmoid<T, L>(f, x) : f(x); };
    int64_t i = 0;
    for (; i + L <= n; i += L) store<T, L>(out + i, apply(load<T, L>(in + i)));
    if (i < n) store<T, L>(out + i, apply(load<T, L>(in + i, n - i)), n - i);
}

}  // namespace
}  // namespace minitorch::cpu
