// qgemm.cpp — the quantized GEMM on the CPU: uint8 activations x int8 weights -> int32 sums,
// with the output's epilogue (int32, requantized uint8, or float32: minitorch/qgemm_math.h)
// fused in, block by block, so the int32 sums never make a full tensor.
//
// Two ways to compute the sums acc[m][n] = sum_k (a[m][k] - a_zp) * (b[n][k] - b_zp[n]):
//
// - qgemm_reference, the readable one (and MINITORCH_CPU_CAPABILITY=default's): a triple
//   loop over the raw 8-bit values, then the zero points as correction terms,
//       acc = sum a*b - a_zp * sum_k b[n][k] - b_zp[n] * sum_k a[m][k] + K * a_zp * b_zp[n]
//   (expand the product), which is how fbgemm keeps its operands 8-bit.
// - the fast one: each operand is widened once to int16 with its zero point already
//   subtracted (a - a_zp and b - b_zp fit int16) and K padded with zeros to a multiple of 16;
//   then every dot product is _mm256_madd_epi16 (16 int16 products, summed in pairs into 8
//   int32 lanes: exact, unlike _mm256_maddubs_epi16's saturating int16 pairs) on a 2 x 4 tile
//   of rows (qgemm_avx2.cpp), or a plain int32 loop on CPUs without AVX2.
// - 7-bit activations (every a <= 127, PyTorch's reduce_range): the raw bytes on
//   _mm256_maddubs_epi16 (32 products per instruction, exact for a <= 127) with the zero
//   points as correction terms, like fbgemm (qgemm_u7).
// - few rows (M < 8, a GEMV): b is widened in registers instead of copied (qgemv_avx2).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels_cpu.h"
#include "quantized_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/qgemm_math.h"
#include "minitorch/vector_math.h"

namespace minitorch::cpu {

#if defined(__x86_64__)
// In qgemm_avx2.cpp: the column-panel dot products (see there for bp's layout).
void qgemm_cols_avx2(const int16_t* a, int64_t lda, const int16_t* bp, int64_t Kh, int32_t* c, int64_t rows,
                     int64_t NB, int64_t ldc);
// In qgemm_avx2.cpp: requantize_u8 of rows x cols sums (ldc apart), 8 lanes at a time, into
// out[i * row_stride + n * col_stride].
void requantize_rows_avx2(const int32_t* acc, int64_t ldc, int64_t rows, const float* bias_over_scale,
                          const float* multiplier, int64_t cols, int32_t out_zp, bool relu, uint8_t* out,
                          int64_t row_stride, int64_t col_stride);
// In qgemm_avx2.cpp (compiled with -mavx2): c[i * ldc + j] = dot(a row i, b row j), over Kp int16
// values (a multiple of 16), for rows x cols of c.
void qgemm_int16_avx2(const int16_t* a, const int16_t* b, int32_t* c, int64_t rows, int64_t cols, int64_t Kp,
                      int64_t ldc);
// Raw uint8 a (every value <= 127) x raw int8 b, padded to Kp (a multiple of 32): sum a*b.
void qgemm_u7s8_avx2(const uint8_t* a, const int8_t* b, int32_t* c, int64_t rows, int64_t cols, int64_t Kp,
                     int64_t ldc);
// The same for a few rows of a, reading b as int8 (widened in registers): no copy of b.
void qgemv_avx2(const int16_t* a, const int8_t* b, const int32_t* b_zp, int32_t* c, int64_t rows, int64_t cols,
                int64_t K, int64_t Kp, int64_t ldc);
#endif

void requant_constants(const QGemm& q, int64_t n0, int64_t N, float* bias_over_scale, float* multiplier)
{
    const float* bias = q.bias ? q.bias->data_as<float>() + n0 : nullptr;
    const float* atw = q.act_times_w->data_as<float>() + n0;
    for (int64_t n = 0; n < N; ++n) {
        bias_over_scale[n] = bias ? bias[n] / atw[n] : 0.f;
        multiplier[n] = atw[n] / q.out_scale;
    }
}

namespace {

// requantize_u8 of rows x cols sums (ldc apart) into out[i * row_stride + n * col_stride]; the
// AVX2 copy is its vector form.
void requantize_rows(const int32_t* acc, int64_t ldc, int64_t rows, const float* bias_over_scale,
                     const float* multiplier, int64_t cols, int32_t out_zp, bool relu, uint8_t* out,
                     int64_t row_stride, int64_t col_stride)
{
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t n = 0; n < cols; ++n)
            out[i * row_stride + n * col_stride] =
                requantize_u8(acc[i * ldc + n], bias_over_scale[n], multiplier[n], out_zp, relu);
}

using RequantizeRows = void (*)(const int32_t*, int64_t, int64_t, const float*, const float*, int64_t, int32_t, bool,
                                uint8_t*, int64_t, int64_t);

RequantizeRows choose_requantize_rows()
{
#if defined(__x86_64__)
    if (cpu_has_avx2()) return &requantize_rows_avx2;
#endif
    return &requantize_rows;
}

// What the epilogue needs per output column, read once.
struct Epilogue {
    DType out_dtype;
    void* out;
    int64_t N;
    const float* bias;        // or null
    const float* atw;         // act_times_w
    std::vector<float> bias_over_scale, multiplier;  // uint8 output: fbgemm's per-column constants
    int32_t out_zp;
    bool relu;

    Epilogue(const Tensor& out_t, const QGemm& q) : Epilogue(out_t->dtype, out_t->data(), out_t->size(1), q, 0) {}

    // Columns [n0, n0 + N) of q's per-column vectors (one group of a grouped convolution).
    Epilogue(DType dtype, void* out_, int64_t N_, const QGemm& q, int64_t n0)
        : out_dtype(dtype), out(out_), N(N_), bias(q.bias ? q.bias->data_as<float>() + n0 : nullptr),
          atw(q.act_times_w ? q.act_times_w->data_as<float>() + n0 : nullptr), out_zp(q.out_zp), relu(q.relu)
    {
        if (out_dtype != DType::UInt8) return;
        bias_over_scale.resize(N);
        multiplier.resize(N);
        requant_constants(q, n0, N, bias_over_scale.data(), multiplier.data());
    }

    // Writes rows [m0, m0 + rows) of out from their int32 sums (ldc apart).
    void write(int64_t m0, int64_t rows, const int32_t* acc, int64_t ldc) const
    {
        for (int64_t i = 0; i < rows; ++i) {
            const int32_t* s = acc + i * ldc;
            const int64_t row = (m0 + i) * N;
            if (out_dtype == DType::Int32) {
                std::memcpy(static_cast<int32_t*>(out) + row, s, N * sizeof(int32_t));
            } else if (out_dtype == DType::UInt8) {
                static const RequantizeRows requantize = choose_requantize_rows();
                requantize(s, ldc, 1, bias_over_scale.data(), multiplier.data(), N, out_zp, relu,
                           static_cast<uint8_t*>(out) + row, N, 1);
            } else {
                float* o = static_cast<float*>(out) + row;
                for (int64_t n = 0; n < N; ++n) o[n] = dequantize_acc(s[n], atw[n], bias ? bias[n] : 0.f, relu);
            }
        }
    }
};

// A convolution's output: row m = (image, pixel p) of the GEMM, column n = channel c0 + n of
// a uint8 (images, C, L) tensor, so the sums land in NCHW directly (no transpose pass).
struct PlaneEpilogue {
    const Epilogue& epi;
    int64_t L, C, c0;

    void write(int64_t m0, int64_t rows, const int32_t* acc, int64_t ldc) const
    {
        static const RequantizeRows requantize = choose_requantize_rows();
        uint8_t* const out = static_cast<uint8_t*>(epi.out);
        // Rows of one image at a time: in NCHW, row i + 1 is the next byte, column n + 1 is L on.
        for (int64_t i0 = 0; i0 < rows;) {
            const int64_t m = m0 + i0, img = m / L, p = m % L, run = std::min(rows - i0, L - p);
            requantize(acc + i0 * ldc, ldc, run, epi.bias_over_scale.data(), epi.multiplier.data(), epi.N, epi.out_zp,
                       epi.relu, out + (img * C + c0) * L + p, 1, L);
            i0 += run;
        }
    }
};

// The readable kernel: raw 8-bit products, then the zero-point correction terms.
template <class Epi>
void qgemm_reference(const uint8_t* a, const int8_t* b, const int32_t* b_zp, int32_t a_zp, int64_t M, int64_t N,
                     int64_t K, const Epi& epi)
{
    std::vector<int32_t> col_sum(N, 0), row(N);  // col_sum[n] = sum_k b[n][k]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) col_sum[n] += b[n * K + k];
    for (int64_t m = 0; m < M; ++m) {
        int32_t row_sum = 0;  // sum_k a[m][k]
        for (int64_t k = 0; k < K; ++k) row_sum += a[m * K + k];
        for (int64_t n = 0; n < N; ++n) {
            int32_t dot = 0;
            for (int64_t k = 0; k < K; ++k) dot += int32_t(a[m * K + k]) * int32_t(b[n * K + k]);
            row[n] = dot - a_zp * col_sum[n] - b_zp[n] * row_sum + int32_t(K) * a_zp * b_zp[n];
        }
        epi.write(m, 1, row.data(), N);
    }
}

// Portable dot products of centred int16 rows (the compiler vectorizes the inner loop).
void qgemm_int16_portable(const int16_t* a, const int16_t* b, int32_t* c, int64_t rows, int64_t cols, int64_t Kp,
                          int64_t ldc)
{
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
            int32_t s = 0;
            for (int64_t k = 0; k < Kp; ++k) s += int32_t(a[i * Kp + k]) * int32_t(b[j * Kp + k]);
            c[i * ldc + j] = s;
        }
}

enum class Path { Reference, Portable, Avx2 };

Path choose_path()
{
    const std::string cap = cpu_capability();
    if (cap == "DEFAULT") return Path::Reference;
#if defined(__x86_64__)
    if (cpu_has_avx2()) return Path::Avx2;
#endif
    return Path::Portable;
}

constexpr int64_t kRowsPerBlock = 64;  // rows of a widened at a time (64 x K int16 stays in L2)
// Below this many rows, widening all of b costs more than widening it in registers per row.
constexpr int64_t kFewRows = 8;

// A scratch buffer kept per thread between calls: a fresh multi-megabyte vector per call would
// pay a page fault per 4 KiB page every time.
template <class T, int Slot>
T* scratch(size_t n)
{
    thread_local std::vector<T> buf;
    if (buf.size() < n) buf.resize(n);
    return buf.data();
}

// block(m0, rows) for each block of kRowsPerBlock rows of [0, M), the blocks split between
// threads when there is enough work (work: multiply-adds per block).
template <class F>
void for_row_blocks(int64_t M, int64_t work, const F& block)
{
    const int64_t blocks = (M + kRowsPerBlock - 1) / kRowsPerBlock;
    parallel_for(blocks, std::max<int64_t>(1, (int64_t(1) << 21) / std::max<int64_t>(work, 1)),
                 [&](int64_t lo, int64_t hi) {
                     for (int64_t blk = lo; blk < hi; ++blk) {
                         const int64_t m0 = blk * kRowsPerBlock;
                         block(m0, std::min(kRowsPerBlock, M - m0));
                     }
                 });
}

bool seven_bit(const uint8_t* a, int64_t n)
{
    uint8_t any = 0;
    for (int64_t i = 0; i < n; ++i) any |= a[i];
    return any < 128;
}

#if defined(__x86_64__)
// 7-bit activations: the raw bytes multiply on _mm256_maddubs_epi16 (qgemm_avx2.cpp) and the
// zero points enter as the correction terms of qgemm_reference.
void qgemm_u7(const uint8_t* a, const int8_t* b, const int32_t* b_zp, int32_t a_zp, int64_t M, int64_t N, int64_t K,
              const Epilogue& epi)
{
    const int64_t Kp = (K + 31) / 32 * 32;
    int8_t* bp = scratch<int8_t, 3>(N * Kp);
    int32_t* col_corr = scratch<int32_t, 4>(N);  // K * a_zp * b_zp[n] - a_zp * sum_k b[n][k]
    for (int64_t n = 0; n < N; ++n) {
        int32_t sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += (bp[n * Kp + k] = b[n * K + k]);
        for (int64_t k = K; k < Kp; ++k) bp[n * Kp + k] = 0;
        col_corr[n] = int32_t(K) * a_zp * b_zp[n] - a_zp * sum;
    }
    for_row_blocks(M, kRowsPerBlock * N * K, [&](int64_t m0, int64_t rows) {
        uint8_t* ap = scratch<uint8_t, 5>(kRowsPerBlock * Kp);
        int32_t* acc = scratch<int32_t, 1>(kRowsPerBlock * N);
        int32_t row_sum[kRowsPerBlock];
        for (int64_t i = 0; i < rows; ++i) {
            int32_t sum = 0;
            for (int64_t k = 0; k < K; ++k) sum += (ap[i * Kp + k] = a[(m0 + i) * K + k]);
            for (int64_t k = K; k < Kp; ++k) ap[i * Kp + k] = 0;
            row_sum[i] = sum;
        }
        qgemm_u7s8_avx2(ap, bp, acc, rows, N, Kp, N);
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t n = 0; n < N; ++n) acc[i * N + n] += col_corr[n] - b_zp[n] * row_sum[i];
        epi.write(m0, rows, acc, N);
    });
}
#endif

}  // namespace

void qgemm(const Tensor& out, const Tensor& a_t, const Tensor& b_t, const QGemm& q)
{
    const int64_t M = a_t->size(0), K = a_t->size(1), N = b_t->size(0);
    if (M == 0 || N == 0) return;
    const auto* a = a_t->data_as<uint8_t>();
    const auto* b = b_t->data_as<int8_t>();
    const auto* b_zp = q.b_zp->data_as<int32_t>();
    const Epilogue epi(out, q);
    static const Path path = choose_path();
    if (path == Path::Reference) return qgemm_reference(a, b, b_zp, q.a_zp, M, N, K, epi);

    const int64_t Kp = (K + 15) / 16 * 16;
    auto widen_a = [&](int16_t* aw, int64_t m0, int64_t rows) {  // centred rows of a, zero padding past K
        for (int64_t i = 0; i < rows; ++i) {
            const uint8_t* src = a + (m0 + i) * K;
            int16_t* dst = aw + i * Kp;
            for (int64_t k = 0; k < K; ++k) dst[k] = int16_t(int32_t(src[k]) - q.a_zp);
            for (int64_t k = K; k < Kp; ++k) dst[k] = 0;
        }
    };
#if defined(__x86_64__)
    if (path == Path::Avx2 && M < kFewRows) {
        int16_t* aw = scratch<int16_t, 0>(M * Kp);
        int32_t* acc = scratch<int32_t, 1>(M * N);
        widen_a(aw, 0, M);
        qgemv_avx2(aw, b, b_zp, acc, M, N, K, Kp, N);
        epi.write(0, M, acc, N);
        return;
    }
#endif
#if defined(__x86_64__)
    if (path == Path::Avx2 && seven_bit(a, M * K)) return qgemm_u7(a, b, b_zp, q.a_zp, M, N, K, epi);
#endif
    // Widen b once: (N, Kp) int16, zero point subtracted, zero padding past K.
    int16_t* bw = scratch<int16_t, 2>(N * Kp);
    for (int64_t n = 0; n < N; ++n) {
        const int8_t* src = b + n * K;
        int16_t* dst = bw + n * Kp;
        const int32_t zp = b_zp[n];
        for (int64_t k = 0; k < K; ++k) dst[k] = int16_t(int32_t(src[k]) - zp);
        for (int64_t k = K; k < Kp; ++k) dst[k] = 0;
    }
    auto dots = path == Path::Avx2 ?
#if defined(__x86_64__)
                                   &qgemm_int16_avx2
#else
                                   &qgemm_int16_portable
#endif
                                   : &qgemm_int16_portable;
    for_row_blocks(M, kRowsPerBlock * N * K, [&](int64_t m0, int64_t rows) {
        int16_t* aw = scratch<int16_t, 0>(kRowsPerBlock * Kp);
        int32_t* acc = scratch<int32_t, 1>(kRowsPerBlock * N);
        widen_a(aw, m0, rows);
        dots(aw, bw, acc, rows, N, Kp, N);
        epi.write(m0, rows, acc, N);
    });
}

// ---- the quantized convolution: im2col of the integers, fused into the GEMM ----
//
// out (N, O, OH, OW) uint8 = requantize(sum over (c, kh, kw) of (x - x_zp) * (w - w_zp[o])), the
// input padded with x_zp (real 0). The readable form (MINITORCH_CPU_CAPABILITY=default): unfold
// x into the (N * OH * OW, C/groups * KH * KW) uint8 matrix and call qgemm_reference per group.
// The fast one never builds that matrix: each block of 64 output pixels unfolds its rows,
// centred, straight into an int16 panel (L1-sized), multiplies it by the weight packed once per
// call in column panels (qgemm_cols_avx2: no horizontal sums, which would dominate at
// K = 9 or 72) and requantizes into NCHW. Output rows of 8 pixels or more go to the direct
// convolution instead (qconv_direct.cpp: output pixels on the vector lanes).

namespace {

// Row m = (img, oh, ow) of the unfolded input of group g, as Kc values (c, kh, kw), each passed
// to put(k, x value or -1 for padding): the readable unfold of the reference kernel.
template <class F>
inline void unfold_row(const uint8_t* x, const Window2d& w, int64_t g, int64_t m, F&& put)
{
    const int64_t L = w.OH * w.OW, img = m / L, p = m % L, oh = p / w.OW, ow = p % w.OW;
    const int64_t cg = w.C / w.groups;
    int64_t k = 0;
    for (int64_t c = 0; c < cg; ++c) {
        const uint8_t* plane = x + (img * w.C + g * cg + c) * w.H * w.W;
        for (int64_t kh = 0; kh < w.KH; ++kh) {
            const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h;
            const bool row_in = ih >= 0 && ih < w.H;
            for (int64_t kw = 0; kw < w.KW; ++kw, ++k) {
                const int64_t iw = ow * w.stride_w - w.pad_w + kw * w.dil_w;
                put(k, row_in && iw >= 0 && iw < w.W ? int32_t(plane[ih * w.W + iw]) : -1);
            }
        }
    }
}

void qconv2d_reference(uint8_t* out, const uint8_t* x, const int8_t* wt, const QGemm& q, const Window2d& w)
{
    const int64_t L = w.OH * w.OW, M = w.N * L, og = w.groups ? q.b_zp->size(0) / w.groups : 0;
    const int64_t Kc = (w.C / w.groups) * w.KH * w.KW;
    std::vector<uint8_t> cols(M * Kc);
    for (int64_t g = 0; g < w.groups; ++g) {
        for (int64_t m = 0; m < M; ++m)
            unfold_row(x, w, g, m, [&](int64_t k, int32_t v) { cols[m * Kc + k] = uint8_t(v < 0 ? q.a_zp : v); });
        const Epilogue epi(DType::UInt8, out, og, q, g * og);
        qgemm_reference(cols.data(), wt + g * og * Kc, q.b_zp->data_as<int32_t>() + g * og, q.a_zp, M, og, Kc,
                        PlaneEpilogue{epi, L, og * w.groups, g * og});
    }
}

// Rows [m0, m0 + rows) of the unfolded input of group g, centred (x - x_zp; padding 0), into the
// int16 panel a (lda apart, zero past Kc): unfold_row's values, with the pixel advanced row by
// row instead of divided out. A pixel whose window lies inside the image (most of them) reads
// its Kc values at fixed offsets from the window's corner (offsets[k], computed once); the
// border ones check each position.
void unfold_rows(int16_t* a, int64_t lda, const uint8_t* x, const Window2d& win, int64_t g, int64_t m0, int64_t rows,
                 int32_t x_zp, const int64_t* offsets)
{
    const Window2d w = win;
    const int64_t L = w.OH * w.OW, cg = w.C / w.groups, plane = w.H * w.W, Kc = cg * w.KH * w.KW;
    const int32_t zp = x_zp;
    int64_t img = m0 / L, oh = (m0 % L) / w.OW, ow = (m0 % L) % w.OW;
    for (int64_t i = 0; i < rows; ++i) {
        int16_t* dst = a + i * lda;
        const uint8_t* base = x + (img * w.C + g * cg) * plane;
        const int64_t h0 = oh * w.stride_h - w.pad_h, w0 = ow * w.stride_w - w.pad_w;
        if (h0 >= 0 && w0 >= 0 && h0 + (w.KH - 1) * w.dil_h < w.H && w0 + (w.KW - 1) * w.dil_w < w.W) {
            const uint8_t* corner = base + h0 * w.W + w0;
            for (int64_t k = 0; k < Kc; ++k) dst[k] = int16_t(int32_t(corner[offsets[k]]) - zp);
        } else {  // the window's rows kh_lo..kh_hi and columns kw_lo..kw_hi are inside; the rest is padding (0)
            const int64_t kh_lo = h0 >= 0 ? 0 : (-h0 + w.dil_h - 1) / w.dil_h;
            const int64_t kw_lo = w0 >= 0 ? 0 : (-w0 + w.dil_w - 1) / w.dil_w;
            const int64_t kh_hi = std::min(w.KH, h0 >= w.H ? 0 : (w.H - 1 - h0) / w.dil_h + 1);
            const int64_t kw_hi = std::min(w.KW, w0 >= w.W ? 0 : (w.W - 1 - w0) / w.dil_w + 1);
            std::fill(dst, dst + Kc, int16_t(0));
            for (int64_t c = 0; c < cg; ++c)
                for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
                    const uint8_t* row = base + c * plane + (h0 + kh * w.dil_h) * w.W + w0;
                    int16_t* d = dst + (c * w.KH + kh) * w.KW;
                    for (int64_t kw = kw_lo; kw < kw_hi; ++kw) d[kw] = int16_t(int32_t(row[kw * w.dil_w]) - zp);
                }
        }
        for (int64_t k = Kc; k < lda; ++k) dst[k] = 0;
        if (++ow == w.OW) {
            ow = 0;
            if (++oh == w.OH) oh = 0, ++img;
        }
    }
}

// Portable column-panel dot products, the same layout as qgemm_cols_avx2.
void qgemm_cols_portable(const int16_t* a, int64_t lda, const int16_t* bp, int64_t Kh, int32_t* c, int64_t rows,
                         int64_t NB, int64_t ldc)
{
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t nb = 0; nb < NB; ++nb)
            for (int j = 0; j < 8; ++j) {
                int32_t s = 0;
                for (int64_t kk = 0; kk < Kh; ++kk) {
                    const int16_t* b = bp + (nb * Kh + kk) * 16 + 2 * j;
                    s += int32_t(a[i * lda + 2 * kk]) * b[0] + int32_t(a[i * lda + 2 * kk + 1]) * b[1];
                }
                c[i * ldc + nb * 8 + j] = s;
            }
}

}  // namespace

void pack_cols(const int8_t* b, const int32_t* b_zp, int64_t N, int64_t K, int16_t* bp)
{
    const int64_t Kh = (K + 1) / 2, NB = (N + 7) / 8;
    for (int64_t nb = 0; nb < NB; ++nb)
        for (int64_t kk = 0; kk < Kh; ++kk)
            for (int64_t j = 0; j < 8; ++j)
                for (int64_t t = 0; t < 2; ++t) {
                    const int64_t n = nb * 8 + j, k = 2 * kk + t;
                    bp[(nb * Kh + kk) * 16 + 2 * j + t] =
                        n < N && k < K ? int16_t(int32_t(b[n * K + k]) - b_zp[n]) : int16_t(0);
                }
}

void qconv2d(const Tensor& out_t, const Tensor& x_t, const Tensor& w_t, const QGemm& q, const Window2d& w)
{
    const int64_t L = w.OH * w.OW, M = w.N * L, O = w_t->size(0), og = O / w.groups;
    if (M == 0 || O == 0) return;
    const auto* x = x_t->data_as<uint8_t>();
    const auto* wt = w_t->data_as<int8_t>();
    auto* out = out_t->data_as<uint8_t>();
    static const Path path = choose_path();
    if (path == Path::Reference) return qconv2d_reference(out, x, wt, q, w);
    // Output rows of 8 pixels or more: the direct loops (qconv_direct.cpp), which fill whole
    // vectors of pixels there; measured faster on every such layer tried (the notebook's CNN,
    // bench_quant.py's 32 -> 64 channels, up to 64 outputs with K = 72). Narrower rows would
    // leave most lanes empty: they stay on the column panels below.
    if (w.OW >= 8) return qconv2d_direct(out, x, wt, q, w, path == Path::Avx2);

    const int64_t Kc = (w.C / w.groups) * w.KH * w.KW, Kh = (Kc + 1) / 2, lda = 2 * Kh;
    const int64_t NB = (og + 7) / 8, ldc = NB * 8;
    auto dots = &qgemm_cols_portable;
#if defined(__x86_64__)
    if (path == Path::Avx2) dots = &qgemm_cols_avx2;
#endif
    std::vector<int16_t> bp(NB * Kh * 16);
    std::vector<int64_t> offsets(Kc);  // of (c, kh, kw) from a window's corner, in x
    for (int64_t c = 0, k = 0; c < w.C / w.groups; ++c)
        for (int64_t kh = 0; kh < w.KH; ++kh)
            for (int64_t kw = 0; kw < w.KW; ++kw, ++k) offsets[k] = (c * w.H + kh * w.dil_h) * w.W + kw * w.dil_w;
    for (int64_t g = 0; g < w.groups; ++g) {
        pack_cols(wt + g * og * Kc, q.b_zp->data_as<int32_t>() + g * og, og, Kc, bp.data());
        const Epilogue epi(DType::UInt8, out, og, q, g * og);
        const PlaneEpilogue planes{epi, L, O, g * og};
        for_row_blocks(M, kRowsPerBlock * ldc * Kc, [&](int64_t m0, int64_t rows) {
            int16_t* aw = scratch<int16_t, 6>(kRowsPerBlock * lda);
            int32_t* acc = scratch<int32_t, 7>(kRowsPerBlock * ldc);
            unfold_rows(aw, lda, x, w, g, m0, rows, q.a_zp, offsets.data());
            dots(aw, lda, bp.data(), Kh, acc, rows, NB, ldc);
            planes.write(m0, rows, acc, ldc);
        });
    }
}

void qgemm_packed(const Tensor& out, const Tensor& a_t, const Tensor& packed, int64_t N, const QGemm& q)
{
    const int64_t M = a_t->size(0), K = a_t->size(1);
    if (M == 0 || N == 0) return;
    const auto* a = a_t->data_as<uint8_t>();
    const auto* bp = packed->data_as<int16_t>();
    const Epilogue epi(out, q);
    const int64_t Kh = (K + 1) / 2, lda = 2 * Kh, NB = (N + 7) / 8, ldc = NB * 8;
    static const Path path = choose_path();
    auto dots = &qgemm_cols_portable;
#if defined(__x86_64__)
    if (path == Path::Avx2) dots = &qgemm_cols_avx2;
#endif
    const int16_t zp = int16_t(q.a_zp);
    for_row_blocks(M, kRowsPerBlock * ldc * K, [&](int64_t m0, int64_t rows) {
        int16_t* aw = scratch<int16_t, 6>(kRowsPerBlock * lda);
        int32_t* acc = scratch<int32_t, 7>(kRowsPerBlock * ldc);
        for (int64_t i = 0; i < rows; ++i) {
            const uint8_t* src = a + (m0 + i) * K;
            int16_t* dst = aw + i * lda;
            for (int64_t k = 0; k < K; ++k) dst[k] = int16_t(src[k] - zp);
            for (int64_t k = K; k < lda; ++k) dst[k] = 0;
        }
        dots(aw, lda, bp, Kh, acc, rows, NB, ldc);
        epi.write(m0, rows, acc, ldc);
    });
}

}  // namespace minitorch::cpu
