// qgemm_avx2.cpp — the dot products of the quantized GEMM with AVX2 (cpu/qgemm.cpp calls it
// only on CPUs with AVX2). CMakeLists.txt compiles this file alone with -mavx2.
//
// Operands are int16 rows, zero points already subtracted, padded to Kp (a multiple of 16).
// A 2 x 4 tile of outputs keeps 8 accumulators of 8 int32 lanes in registers; each step of
// 16 k loads 2 rows of a and 4 of b and does 8 _mm256_madd_epi16 (16 products summed in
// pairs: exact, |a - a_zp|, |b - b_zp| <= 255). The 8 lanes are summed at the end.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "minitorch/qgemm_math.h"
#include "qrequant_avx2.h"

namespace minitorch::cpu {

namespace {

inline int32_t hsum(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_hadd_epi32(s, s);
    s = _mm_hadd_epi32(s, s);
    return _mm_cvtsi128_si32(s);
}

template <int MR, int NR>
inline void tile(const int16_t* a, const int16_t* b, int64_t Kp, int64_t kc, int32_t* c, int64_t ldc, bool add)
{
    __m256i acc[MR][NR];
    for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_si256();
    for (int64_t k = 0; k < kc; k += 16) {
        __m256i bv[NR];
        for (int j = 0; j < NR; ++j) bv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j * Kp + k));
        for (int i = 0; i < MR; ++i) {
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i * Kp + k));
            for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(av, bv[j]));
        }
    }
    for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) c[i * ldc + j] = (add ? c[i * ldc + j] : 0) + hsum(acc[i][j]);
}

template <int MR>
inline void tile_cols(const int16_t* a, const int16_t* b, int64_t Kp, int64_t kc, int32_t* c, int64_t ldc,
                      int64_t cols, bool add)
{
    switch (cols) {
        case 4: return tile<MR, 4>(a, b, Kp, kc, c, ldc, add);
        case 3: return tile<MR, 3>(a, b, Kp, kc, c, ldc, add);
        case 2: return tile<MR, 2>(a, b, Kp, kc, c, ldc, add);
        default: return tile<MR, 1>(a, b, Kp, kc, c, ldc, add);
    }
}

// K in chunks of kKc, so a block's rows of a (rows x kKc int16) stay in L1 while b's panels pass.
constexpr int64_t kKc = 256;

}  // namespace

void qgemm_int16_avx2(const int16_t* a, const int16_t* b, int32_t* c, int64_t rows, int64_t cols, int64_t Kp,
                      int64_t ldc)
{
    // For each chunk of K: b's 4-row panels in turn, each against every row pair of a (the
    // block's rows x chunk of a stays in L1).
    for (int64_t k0 = 0; k0 < Kp; k0 += kKc) {
        const int64_t kc = Kp - k0 < kKc ? Kp - k0 : kKc;
        for (int64_t j = 0; j < cols; j += 4) {
            const int64_t nc = cols - j < 4 ? cols - j : 4;
            int64_t i = 0;
            for (; i + 2 <= rows; i += 2)
                tile_cols<2>(a + i * Kp + k0, b + j * Kp + k0, Kp, kc, c + i * ldc + j, ldc, nc, k0 > 0);
            if (i < rows) tile_cols<1>(a + i * Kp + k0, b + j * Kp + k0, Kp, kc, c + i * ldc + j, ldc, nc, k0 > 0);
        }
    }
}

// 7-bit activations (a <= 127: PyTorch's reduce_range, which fbgemm asks for): the raw bytes
// go to _mm256_maddubs_epi16 (32 uint8 x int8 products summed in pairs into int16: exact, as
// |a0*b0 + a1*b1| <= 2 * 127 * 128 < 32768), then _mm256_madd_epi16 with ones widens the pairs
// into int32 — twice the products per instruction of the int16 path. a: rows x Kp uint8 and
// b: cols x Kp int8, raw (zero points are the caller's correction terms), Kp a multiple of 32.
namespace {

template <int MR, int NR>
inline void tile_u8(const uint8_t* a, const int8_t* b, int64_t Kp, int64_t kc, int32_t* c, int64_t ldc, bool add)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[MR][NR];
    for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_si256();
    for (int64_t k = 0; k < kc; k += 32) {
        __m256i bv[NR];
        for (int j = 0; j < NR; ++j) bv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j * Kp + k));
        for (int i = 0; i < MR; ++i) {
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i * Kp + k));
            for (int j = 0; j < NR; ++j)
                acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(_mm256_maddubs_epi16(av, bv[j]), ones));
        }
    }
    for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) c[i * ldc + j] = (add ? c[i * ldc + j] : 0) + hsum(acc[i][j]);
}

template <int MR>
inline void tile_u8_cols(const uint8_t* a, const int8_t* b, int64_t Kp, int64_t kc, int32_t* c, int64_t ldc,
                         int64_t cols, bool add)
{
    switch (cols) {
        case 4: return tile_u8<MR, 4>(a, b, Kp, kc, c, ldc, add);
        case 3: return tile_u8<MR, 3>(a, b, Kp, kc, c, ldc, add);
        case 2: return tile_u8<MR, 2>(a, b, Kp, kc, c, ldc, add);
        default: return tile_u8<MR, 1>(a, b, Kp, kc, c, ldc, add);
    }
}

}  // namespace

void qgemm_u7s8_avx2(const uint8_t* a, const int8_t* b, int32_t* c, int64_t rows, int64_t cols, int64_t Kp,
                     int64_t ldc)
{
    constexpr int64_t kKcBytes = 512;  // K in chunks, as qgemm_int16_avx2 (the same bytes per row)
    for (int64_t k0 = 0; k0 < Kp; k0 += kKcBytes) {
        const int64_t kc = Kp - k0 < kKcBytes ? Kp - k0 : kKcBytes;
        for (int64_t j = 0; j < cols; j += 4) {
            const int64_t nc = cols - j < 4 ? cols - j : 4;
            int64_t i = 0;
            for (; i + 2 <= rows; i += 2)
                tile_u8_cols<2>(a + i * Kp + k0, b + j * Kp + k0, Kp, kc, c + i * ldc + j, ldc, nc, k0 > 0);
            if (i < rows)
                tile_u8_cols<1>(a + i * Kp + k0, b + j * Kp + k0, Kp, kc, c + i * ldc + j, ldc, nc, k0 > 0);
        }
    }
}

// Few rows of a (a GEMV-like layer): b is read as it is, int8, widened in registers
// (_mm256_cvtepi8_epi16) with its zero point subtracted there, so no widened copy of the
// whole weight is written per call. a: rows x Kp centred int16; b: (cols, K) int8.
void qgemv_avx2(const int16_t* a, const int8_t* b, const int32_t* b_zp, int32_t* c, int64_t rows, int64_t cols,
                int64_t K, int64_t Kp, int64_t ldc)
{
    const int64_t K16 = K / 16 * 16;
    for (int64_t j = 0; j < cols; ++j) {
        const int8_t* bj = b + j * K;
        const __m256i zp = _mm256_set1_epi16(int16_t(b_zp[j]));
        for (int64_t i = 0; i < rows; ++i) {
            const int16_t* ai = a + i * Kp;
            __m256i acc = _mm256_setzero_si256();
            for (int64_t k = 0; k < K16; k += 16) {
                const __m256i bw = _mm256_sub_epi16(
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bj + k))), zp);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ai + k)), bw));
            }
            int32_t s = hsum(acc);
            for (int64_t k = K16; k < K; ++k) s += int32_t(ai[k]) * (int32_t(bj[k]) - b_zp[j]);
            c[i * ldc + j] = s;
        }
    }
}

// The column-panel form, for small K (a convolution's C * KH * KW) and any N: b is packed as
// pairs of k for 8 columns at a time, bp[(nb * Kh + kk) * 16 + 2 * j + t] = b[8 nb + j][2 kk + t]
// (centred, zero padded), so one _mm256_madd_epi16 of a broadcast pair (a[i][2kk], a[i][2kk+1])
// with one 16-value panel row adds 2 k's products to 8 columns' int32 sums at once: no
// horizontal sums, whatever K is. A tile of MR rows x NR panels (8 columns each) keeps MR x NR
// accumulators in registers. a: rows x lda centred int16 (lda >= 2 Kh, zero padded past K);
// c: rows x ldc int32, ldc >= 8 NB (every panel's 8 lanes are stored).
namespace {

template <int MR, int NR>
inline void cols_tile(const int16_t* a, int64_t lda, const int16_t* bp, int64_t Kh, int32_t* c, int64_t ldc)
{
    __m256i acc[MR][NR];
    for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_si256();
    for (int64_t kk = 0; kk < Kh; ++kk) {
        __m256i bv[NR];
        for (int j = 0; j < NR; ++j)
            bv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + (j * Kh + kk) * 16));
        for (int i = 0; i < MR; ++i) {
            int32_t pair;
            std::memcpy(&pair, a + i * lda + 2 * kk, sizeof pair);
            const __m256i av = _mm256_set1_epi32(pair);
            for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(av, bv[j]));
        }
    }
    for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc + 8 * j), acc[i][j]);
}

template <int MR>
inline void cols_row_tiles(const int16_t* a, int64_t lda, const int16_t* bp, int64_t Kh, int32_t* c, int64_t ldc,
                           int64_t NB)
{
    int64_t nb = 0;
    for (; nb + 2 <= NB; nb += 2) cols_tile<MR, 2>(a, lda, bp + nb * Kh * 16, Kh, c + 8 * nb, ldc);
    if (nb < NB) cols_tile<MR, 1>(a, lda, bp + nb * Kh * 16, Kh, c + 8 * nb, ldc);
}

}  // namespace

void qgemm_cols_avx2(const int16_t* a, int64_t lda, const int16_t* bp, int64_t Kh, int32_t* c, int64_t rows,
                     int64_t NB, int64_t ldc)
{
    // Panel pairs outside, rows inside: a pair (2 x Kh x 32 bytes) stays in L1/L2 while every
    // row of a passes it, instead of all of b streaming past each row tile.
    for (int64_t nb = 0; nb < NB; nb += 2) {
        const int64_t np = NB - nb < 2 ? NB - nb : 2;
        const int16_t* b = bp + nb * Kh * 16;
        int64_t i = 0;
        for (; i + 4 <= rows; i += 4) cols_row_tiles<4>(a + i * lda, lda, b, Kh, c + i * ldc + 8 * nb, ldc, np);
        for (; i < rows; ++i) cols_row_tiles<1>(a + i * lda, lda, b, Kh, c + i * ldc + 8 * nb, ldc, np);
    }
}

// The uint8 epilogue of rows of sums, 8 columns at a time (Requant8: the same bytes as
// requantize_u8); columns past the last multiple of 8 go through the scalar function.
// out[i * row_stride + n * col_stride] = requantized acc[i * ldc + n].
void requantize_rows_avx2(const int32_t* acc, int64_t ldc, int64_t rows, const float* bias_over_scale,
                          const float* multiplier, int64_t cols, int32_t out_zp, bool relu, uint8_t* out,
                          int64_t row_stride, int64_t col_stride)
{
    const Requant8 requant(out_zp, relu);
    const int64_t cols8 = cols / 8 * 8;
    for (int64_t i = 0; i < rows; ++i) {
        const int32_t* a = acc + i * ldc;
        uint8_t* o = out + i * row_stride;
        for (int64_t n = 0; n < cols8; n += 8) {
            const __m128i b8 = requant(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + n)),
                                       _mm256_loadu_ps(bias_over_scale + n), _mm256_loadu_ps(multiplier + n));
            if (col_stride == 1) {
                _mm_storel_epi64(reinterpret_cast<__m128i*>(o + n), b8);
            } else {
                alignas(16) uint8_t bytes[16];
                _mm_store_si128(reinterpret_cast<__m128i*>(bytes), b8);
                for (int j = 0; j < 8; ++j) o[(n + j) * col_stride] = bytes[j];
            }
        }
        for (int64_t n = cols8; n < cols; ++n)
            o[n * col_stride] = requantize_u8(a[n], bias_over_scale[n], multiplier[n], out_zp, relu);
    }
}

}  // namespace minitorch::cpu
#endif
