// qrequant_avx2.h — requantize_u8 (minitorch/qgemm_math.h) on 8 int32 sums at once, for the
// files compiled with -mavx2 (qgemm_avx2.cpp, qconv_direct_avx2.cpp) only.
//
// The same float32 operations in the same order as the scalar function (convert, add, multiply,
// the 1.5 * 2^23 rounding trick, add the zero point, clamp with NaN going to the low end), so the
// bytes are identical. The scalar function skips the trick where |v| >= 2^22; here it is applied
// to every lane, which changes nothing after the clamp: such a v comes back within 2 of itself
// (or unchanged when huge or infinite), still far outside [-255, 255], so it clamps to the same
// end, and a NaN stays NaN. No FMA: these files are built without -mfma, so the multiply and the
// add round separately, as they do in the scalar code.
#pragma once
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace minitorch::cpu {

struct Requant8 {
    __m256 magic, zp, lo, hi;

    Requant8(int32_t out_zp, bool relu)
        : magic(_mm256_set1_ps(12582912.f)), zp(_mm256_set1_ps(float(out_zp))), lo(_mm256_set1_ps(relu ? float(out_zp) : 0.f)),
          hi(_mm256_set1_ps(255.f))
    {
    }

    // 8 sums -> 8 bytes, in the low 8 bytes of the result.
    __m128i operator()(__m256i acc, __m256 bias_over_scale, __m256 multiplier) const
    {
        const __m256 raw = _mm256_add_ps(_mm256_cvtepi32_ps(acc), bias_over_scale);
        const __m256 v = _mm256_mul_ps(raw, multiplier);
        const __m256 r = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
        // max(x, lo) returns lo when x is NaN (the second operand), as the scalar clamp does
        const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r, zp), lo), hi));
        const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        return _mm_packus_epi16(w16, w16);
    }
};

}  // namespace minitorch::cpu
#endif
