// half.h — the two 16-bit floating types, float16 (IEEE binary16) and bfloat16, as
// storage: 16 bits in memory, converted to and from float32 for any arithmetic.
//
//   float16:  1 sign, 5 exponent, 10 mantissa bits: max 65504, eps 2^-10, tiny 2^-14
//   bfloat16: 1 sign, 8 exponent,  7 mantissa bits: float32's range, eps 2^-7
//
// float -> 16 bits rounds to the nearest value, ties to even (IEEE's default, PyTorch's
// and NumPy's); NaN stays NaN (a quiet NaN), values past the largest finite one become
// inf. A double is converted through float, as PyTorch's c10::Half and c10::BFloat16 do.
// The same code runs on the host, in CUDA kernels (__host__ __device__) and in the emulator,
// except that a GPU converts with its own instructions (cvt: one instead of a few dozen with
// branches, which made float16 elementwise ops twice as slow as bfloat16 ones on an H200). They
// round the same way; a NaN comes out as the canonical 0x7FFF (either sign), as PyTorch's do
// on a GPU. The bit arithmetic below is what the host and the emulator run, and what the
// tests check the GPU's conversions against (every float16 value and every tie).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define MT_HALF_HD __host__ __device__ __forceinline__
#else
#define MT_HALF_HD inline
#endif

namespace minitorch {

namespace half_bits {

MT_HALF_HD uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
MT_HALF_HD float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// float32 -> float16 bits, round to nearest even.
MT_HALF_HD uint16_t from_float(float f)
{
#if defined(__CUDA_ARCH__)
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    const uint32_t u = float_bits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t abs = u & 0x7FFFFFFFu;
    if (abs > 0x7F800000u) return uint16_t(sign | 0x7E00u);       // NaN -> quiet NaN
    if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00u);      // >= 65520 (or inf): rounds to inf
    if (abs < 0x38800000u) {                                       // below 2^-14: a subnormal (or 0)
        // The value in units of 2^-24 (float16's smallest subnormal), rounded to even:
        // adding 0.5 in float arithmetic would double-round, so work on the bits.
        if (abs < 0x33000000u) return uint16_t(sign);              // below 2^-25: rounds to 0
        const uint32_t exp = abs >> 23;                            // 102 .. 112
        const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;       // 24 significant bits
        const uint32_t shift = 126u - exp;                         // 14 .. 24
        uint32_t q = mant >> shift;
        const uint32_t rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (q & 1u))) ++q;
        return uint16_t(sign | q);
    }
    // Normal: re-bias the exponent (127 -> 15) and round 23 mantissa bits to 10.
    uint32_t v = abs - 0x38000000u;                                // exponent - 112
    const uint32_t rest = v & 0x1FFFu;
    v >>= 13;
    if (rest > 0x1000u || (rest == 0x1000u && (v & 1u))) ++v;     // a carry may bump the exponent: fine
    return uint16_t(sign | v);
#endif
}

// float16 bits -> float32, exact.
MT_HALF_HD float to_float(uint16_t h)
{
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(h)));
    return f;
#else
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0x1Fu) return bits_float(sign | 0x7F800000u | (mant << 13));  // inf, NaN
    if (exp == 0) {                                                            // 0 or subnormal
        const float magnitude = float(mant) * 5.9604644775390625e-8f;        // mant * 2^-24, exact
        return sign ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
#endif
}

// float32 -> bfloat16 bits: keep the top 16 bits, rounded to nearest even.
MT_HALF_HD uint16_t bf16_from_float(float f)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned short b;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return b;
#else
    const uint32_t u = float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40u);  // NaN -> quiet NaN
    return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
#endif
}

MT_HALF_HD float bf16_to_float(uint16_t b) { return bits_float(uint32_t(b) << 16); }

}  // namespace half_bits

// The element types the storage holds. Each converts to float (for arithmetic: a + b of
// two Halfs is a float sum) and is made from float with rounding.
struct Half {
    uint16_t bits = 0;
    Half() = default;
    MT_HALF_HD Half(float f) : bits(half_bits::from_float(f)) {}  // NOLINT: implicit, like c10::Half
    MT_HALF_HD Half(double d) : Half(float(d)) {}                  // NOLINT
    MT_HALF_HD Half(int64_t i) : Half(float(i)) {}                 // NOLINT
    MT_HALF_HD Half(bool b) : Half(b ? 1.0f : 0.0f) {}             // NOLINT
    MT_HALF_HD operator float() const { return half_bits::to_float(bits); }
};

struct BFloat16 {
    uint16_t bits = 0;
    BFloat16() = default;
    MT_HALF_HD BFloat16(float f) : bits(half_bits::bf16_from_float(f)) {}  // NOLINT
    MT_HALF_HD BFloat16(double d) : BFloat16(float(d)) {}                  // NOLINT
    MT_HALF_HD BFloat16(int64_t i) : BFloat16(float(i)) {}                 // NOLINT
    MT_HALF_HD BFloat16(bool b) : BFloat16(b ? 1.0f : 0.0f) {}             // NOLINT
    MT_HALF_HD operator float() const { return half_bits::bf16_to_float(bits); }
};

// static_cast between any two storage types, through float where a 16-bit type is involved
// (int64 <- Half goes float -> int64, truncating like any float). A narrow integer
// (uint8, int8, int16, int32) is reached through int64: a float is truncated to a whole
// number first, then wrapped around into the narrow type (-1.0 -> uint8 gives 255), as
// PyTorch's casts do.
template <class D, class S>
MT_HALF_HD D convert(S s)
{
    constexpr bool s16 = std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>;
    constexpr bool d16 = std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>;
    constexpr bool s_int = std::is_integral_v<S> && !std::is_same_v<S, bool>;
    constexpr bool d_narrow = std::is_integral_v<D> && !std::is_same_v<D, bool> && sizeof(D) < 8;
    if constexpr (s16 && std::is_same_v<D, bool>) return float(s) != 0.0f;
    else if constexpr (s16 && d_narrow) return static_cast<D>(static_cast<int64_t>(float(s)));
    else if constexpr (s16) return static_cast<D>(float(s));
    else if constexpr (d16 && s_int) return D(static_cast<int64_t>(s));
    else if constexpr (d16) return D(s);
    else if constexpr (d_narrow && std::is_floating_point_v<S>) return static_cast<D>(static_cast<int64_t>(s));
    else return static_cast<D>(s);
}

}  // namespace minitorch
