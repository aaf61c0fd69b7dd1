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
#include <cstring>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/qgemm_math.h"
#include "minitorch/vector_math.h"

namespace minitorch::cpu {

#if defined(__x86_64__)
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

namespace {

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

    Epilogue(const Tensor& out_t, const QGemm& q)
        : out_dtype(out_t->dtype), out(out_t->data()), N(out_t->size(1)),
          bias(q.bias ? q.bias->data_as<float>() : nullptr),
          atw(q.act_times_w ? q.act_times_w->data_as<float>() : nullptr), out_zp(q.out_zp), relu(q.relu)
    {
        if (out_dtype != DType::UInt8) return;
        bias_over_scale.assign(N, 0.f);
        multiplier.resize(N);
        for (int64_t n = 0; n < N; ++n) {
            if (bias) bias_over_scale[n] = bias[n] / atw[n];
            multiplier[n] = atw[n] / q.out_scale;
        }
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
                uint8_t* o = static_cast<uint8_t*>(out) + row;
                for (int64_t n = 0; n < N; ++n) o[n] = requantize_u8(s[n], bias_over_scale[n], multiplier[n], out_zp, relu);
            } else {
                float* o = static_cast<float*>(out) + row;
                for (int64_t n = 0; n < N; ++n) o[n] = dequantize_acc(s[n], atw[n], bias ? bias[n] : 0.f, relu);
            }
        }
    }
};

// The readable kernel: raw 8-bit products, then the zero-point correction terms.
void qgemm_reference(const uint8_t* a, const int8_t* b, const int32_t* b_zp, int32_t a_zp, int64_t M, int64_t N,
                     int64_t K, const Epilogue& epi)
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
    if (cap == "AVX2") return Path::Avx2;
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
    const int64_t blocks = (M + kRowsPerBlock - 1) / kRowsPerBlock;
    const int64_t work = kRowsPerBlock * N * std::max<int64_t>(K, 1);
    parallel_for(blocks, std::max<int64_t>(1, (int64_t(1) << 21) / work), [&](int64_t lo, int64_t hi) {
        uint8_t* ap = scratch<uint8_t, 5>(kRowsPerBlock * Kp);
        int32_t* acc = scratch<int32_t, 1>(kRowsPerBlock * N);
        for (int64_t blk = lo; blk < hi; ++blk) {
            const int64_t m0 = blk * kRowsPerBlock, rows = std::min(kRowsPerBlock, M - m0);
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
        }
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
    const int64_t blocks = (M + kRowsPerBlock - 1) / kRowsPerBlock;
    const int64_t work = kRowsPerBlock * N * std::max<int64_t>(K, 1);  // multiply-adds per block
    parallel_for(blocks, std::max<int64_t>(1, (int64_t(1) << 21) / work), [&](int64_t lo, int64_t hi) {
        int16_t* aw = scratch<int16_t, 0>(kRowsPerBlock * Kp);
        int32_t* acc = scratch<int32_t, 1>(kRowsPerBlock * N);
        for (int64_t blk = lo; blk < hi; ++blk) {
            const int64_t m0 = blk * kRowsPerBlock, rows = std::min(kRowsPerBlock, M - m0);
            widen_a(aw, m0, rows);
            dots(aw, bw, acc, rows, N, Kp, N);
            epi.write(m0, rows, acc, N);
        }
    });
}

}  // namespace minitorch::cpu
