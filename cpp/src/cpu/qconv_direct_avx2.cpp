// qconv_direct_avx2.cpp — the AVX2 loops of the direct int8 convolution (cpu/qconv_direct.cpp
// explains the layout and calls these only on CPUs with AVX2). CMakeLists.txt compiles this
// file alone with -mavx2.
//
// Thread mapping: one call handles one output row (8 * NV pixels along ow, the last vector
// partly past OW) of O channels. The register tile is 4 channels x 2 pixel vectors: 8
// accumulators of 8 int32 lanes (one lane per pixel); each pair of taps kk loads the 2 pixel
// vectors of the panel once and broadcasts each channel's weight pair, then
// _mm256_madd_epi16 adds the two taps' products for 8 pixels at once (exact: |x - x_zp| and
// |w - w_zp| are <= 255, so a pair's sum fits int32). The sums never leave the registers:
// they are requantized (Requant8) and stored as 8 bytes of one output channel's row, NCHW.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "minitorch/qgemm_math.h"
#include "qrequant_avx2.h"

namespace minitorch::cpu {

// The panel of one output row for stride 1: a[(v * Kh + kk) * 16 + 2 j + t] = src[8 v + j + off[2 kk + t]]
// (0 for tap Kc when Kc is odd). Each pair of taps is two 8-value loads interleaved.
void qconv_panel_avx2(const int16_t* src, const int64_t* off, int64_t Kc, int64_t Kh, int64_t NV, int16_t* a)
{
    for (int64_t kk = 0; kk < Kh; ++kk) {
        const int16_t* p0 = src + off[2 * kk];
        const int16_t* p1 = 2 * kk + 1 < Kc ? src + off[2 * kk + 1] : nullptr;
        for (int64_t v = 0; v < NV; ++v) {
            const __m128i t0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p0 + 8 * v));
            const __m128i t1 = p1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1 + 8 * v)) : _mm_setzero_si128();
            int16_t* d = a + (v * Kh + kk) * 16;
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi16(t0, t1));      // pixels 0..3
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 8), _mm_unpackhi_epi16(t0, t1));  // pixels 4..7
        }
    }
}

namespace {

template <int MR, int NR>
inline void row_tile(const int16_t* a, int64_t Kh, const int32_t* wp, const float* bias_over_scale,
                     const float* multiplier, const Requant8& requant, uint8_t* out, int64_t ldo, int64_t valid)
{
    __m256i acc[MR][NR];
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NR; ++v) acc[i][v] = _mm256_setzero_si256();
    for (int64_t kk = 0; kk < Kh; ++kk) {
        __m256i av[NR];
        for (int v = 0; v < NR; ++v) av[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + (v * Kh + kk) * 16));
        for (int i = 0; i < MR; ++i) {
            const __m256i w = _mm256_set1_epi32(wp[i * Kh + kk]);
            for (int v = 0; v < NR; ++v) acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(av[v], w));
        }
    }
    for (int i = 0; i < MR; ++i) {
        const __m256 bos = _mm256_set1_ps(bias_over_scale[i]), mult = _mm256_set1_ps(multiplier[i]);
        for (int v = 0; v < NR; ++v) {
            const __m128i b8 = requant(acc[i][v], bos, mult);
            uint8_t* o = out + i * ldo + 8 * v;
            const int64_t n = valid - 8 * v;  // pixels of this vector inside the row
            if (n >= 8) {
                _mm_storel_epi64(reinterpret_cast<__m128i*>(o), b8);
            } else if (n > 0) {
                alignas(16) uint8_t bytes[16];
                _mm_store_si128(reinterpret_cast<__m128i*>(bytes), b8);
                for (int64_t j = 0; j < n; ++j) o[j] = bytes[j];
            }
        }
    }
}

template <int MR>
inline void row_channels(const int16_t* a, int64_t NV, int64_t Kh, const int32_t* wp, const float* bos,
                         const float* mult, const Requant8& requant, uint8_t* out, int64_t ldo, int64_t OW)
{
    int64_t v = 0;
    for (; v + 2 <= NV; v += 2)
        row_tile<MR, 2>(a + v * Kh * 16, Kh, wp, bos, mult, requant, out + 8 * v, ldo, OW - 8 * v);
    if (v < NV) row_tile<MR, 1>(a + v * Kh * 16, Kh, wp, bos, mult, requant, out + 8 * v, ldo, OW - 8 * v);
}

}  // namespace

// One output row of O channels from its panel a (NV vectors x Kh pairs, see qconv_panel_avx2)
// and the weight pairs wp[o * Kh + kk]: out[o * ldo + ow] for ow < OW, requantized.
void qconv_row_avx2(const int16_t* a, int64_t NV, int64_t Kh, const int32_t* wp, int64_t O,
                    const float* bias_over_scale, const float* multiplier, int32_t out_zp, bool relu, uint8_t* out,
                    int64_t ldo, int64_t OW)
{
    const Requant8 requant(out_zp, relu);
    int64_t o = 0;
    for (; o + 4 <= O; o += 4)
        row_channels<4>(a, NV, Kh, wp + o * Kh, bias_over_scale + o, multiplier + o, requant, out + o * ldo, ldo, OW);
    for (; o < O; ++o)
        row_channels<1>(a, NV, Kh, wp + o * Kh, bias_over_scale + o, multiplier + o, requant, out + o * ldo, ldo, OW);
}

}  // namespace minitorch::cpu
#endif
