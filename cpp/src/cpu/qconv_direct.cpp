// qconv_direct.cpp — a direct int8 convolution for the CPU, vectorized over output pixels,
// for the narrow layers of small CNNs (issue 34). cpu/qgemm.cpp's qconv2d calls it.
//
// Why: the fused-im2col path (qconv2d in qgemm.cpp) puts output pixels on the GEMM's rows and
// channels on its vector lanes. With 8 or 16 output channels and K = C * KH * KW = 9 or 72,
// its time goes into unfolding each pixel's K values one by one and scattering every sum
// into NCHW byte by byte, not into multiplying. Here the lanes are output pixels instead:
//
//   1. the input is copied once per call, centred (x - x_zp) into int16 planes with zero
//      borders (the padding, and spare columns so a row's last vector reads zeros, not past
//      the end);
//   2. per output row (n, oh), a panel holds, for each pair of taps kk = (k0, k1) and each
//      vector v of 8 pixels along ow, the 16 values (x[pixel j, k0], x[pixel j, k1]) for
//      j = 0..7: a[(v * Kh + kk) * 16 + 2 j + t]. With stride 1 a tap's 8 pixels are
//      8 neighbours in the padded plane, so a pair is two loads interleaved;
//   3. each channel o adds pair kk's products to 8 pixels' int32 sums with one multiply-add
//      of the panel by its broadcast weight pair (w[o, k0] - w_zp[o], w[o, k1] - w_zp[o]), and
//      the finished sums are requantized into 8 consecutive bytes of out[n, o, oh, :].
//
// The integers are those of qconv2d_reference (the same sums, requantize_u8), on every path:
// AVX2 (qconv_direct_avx2.cpp) and the plain loops below for other CPUs (their inner loops are
// the same arithmetic, one lane at a time).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/qgemm_math.h"
#include "quantized_cpu.h"

namespace minitorch::cpu {

#if defined(__x86_64__)
// In qconv_direct_avx2.cpp (compiled with -mavx2).
void qconv_panel_avx2(const int16_t* src, const int64_t* off, int64_t Kc, int64_t Kh, int64_t NV, int16_t* a);
void qconv_row_avx2(const int16_t* a, int64_t NV, int64_t Kh, const int32_t* wp, int64_t O,
                    const float* bias_over_scale, const float* multiplier, int32_t out_zp, bool relu, uint8_t* out,
                    int64_t ldo, int64_t OW);
#endif

namespace {

// The panel of one output row (any stride): a[(v * Kh + kk) * 16 + 2 j + t] =
// src[(8 v + j) * sw + off[2 kk + t]], 0 for tap Kc when Kc is odd.
void panel_portable(const int16_t* src, const int64_t* off, int64_t Kc, int64_t Kh, int64_t NV, int64_t sw,
                    int16_t* a)
{
    for (int64_t v = 0; v < NV; ++v)
        for (int64_t kk = 0; kk < Kh; ++kk)
            for (int64_t j = 0; j < 8; ++j)
                for (int64_t t = 0; t < 2; ++t) {
                    const int64_t k = 2 * kk + t;
                    a[(v * Kh + kk) * 16 + 2 * j + t] = k < Kc ? src[(8 * v + j) * sw + off[k]] : int16_t(0);
                }
}

// One output row of O channels from its panel, one lane at a time (qconv_row_avx2's arithmetic).
void row_portable(const int16_t* a, int64_t NV, int64_t Kh, const int32_t* wp, int64_t O,
                  const float* bias_over_scale, const float* multiplier, int32_t out_zp, bool relu, uint8_t* out,
                  int64_t ldo, int64_t OW)
{
    for (int64_t o = 0; o < O; ++o)
        for (int64_t ow = 0; ow < OW; ++ow) {
            const int16_t* px = a + (ow / 8) * Kh * 16 + 2 * (ow % 8);
            int32_t s = 0;
            for (int64_t kk = 0; kk < Kh; ++kk) {
                int16_t w[2];
                std::memcpy(w, wp + o * Kh + kk, sizeof w);
                s += int32_t(px[kk * 16]) * w[0] + int32_t(px[kk * 16 + 1]) * w[1];
            }
            out[o * ldo + ow] = requantize_u8(s, bias_over_scale[o], multiplier[o], out_zp, relu);
        }
}

template <class T>
T* thread_scratch(size_t n)  // kept between calls: no page faults per call
{
    thread_local std::vector<T> buf;
    if (buf.size() < n) buf.resize(n);
    return buf.data();
}

}  // namespace

void qconv2d_direct(uint8_t* out, const uint8_t* x, const int8_t* wt, const QGemm& q, const Window2d& win, bool avx2)
{
    const Window2d w = win;
    const int64_t O = q.b_zp->size(0), cg = w.C / w.groups, og = O / w.groups;
    const int64_t Kc = cg * w.KH * w.KW, Kh = (Kc + 1) / 2, NV = (w.OW + 7) / 8;
    // Padded planes: rows of Wp values, wide enough for the last vector's 8 lanes of every tap.
    const int64_t Hp = w.H + 2 * w.pad_h;
    const int64_t Wp = std::max(w.W + 2 * w.pad_w, (8 * NV - 1) * w.stride_w + (w.KW - 1) * w.dil_w + 1);
    const int64_t plane = Hp * Wp;

    // 1. the centred, zero-bordered copy of the input (each (n, c) plane on its own)
    static thread_local std::vector<int16_t> padded_buf;
    if (padded_buf.size() < size_t(w.N * w.C * plane)) padded_buf.resize(w.N * w.C * plane);
    int16_t* const padded = padded_buf.data();
    const int32_t x_zp = q.a_zp;
    parallel_for(w.N * w.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane, 1)), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            int16_t* dst = padded + p * plane;
            const uint8_t* src = x + p * w.H * w.W;
            std::fill(dst, dst + w.pad_h * Wp, int16_t(0));
            for (int64_t ih = 0; ih < w.H; ++ih) {
                int16_t* row = dst + (ih + w.pad_h) * Wp;
                std::fill(row, row + w.pad_w, int16_t(0));
                for (int64_t iw = 0; iw < w.W; ++iw) row[w.pad_w + iw] = int16_t(int32_t(src[ih * w.W + iw]) - x_zp);
                std::fill(row + w.pad_w + w.W, row + Wp, int16_t(0));
            }
            std::fill(dst + (w.pad_h + w.H) * Wp, dst + plane, int16_t(0));
        }
    });

    // Tap k = (c, kh, kw) of a group sits off[k] values from its output pixel's window corner.
    std::vector<int64_t> off(Kc);
    for (int64_t c = 0, k = 0; c < cg; ++c)
        for (int64_t kh = 0; kh < w.KH; ++kh)
            for (int64_t kw = 0; kw < w.KW; ++kw, ++k) off[k] = c * plane + kh * w.dil_h * Wp + kw * w.dil_w;
    // Weight pairs, centred: two int16 (w[o, 2 kk] - w_zp[o], w[o, 2 kk + 1] - w_zp[o]) in each int32.
    const int32_t* w_zp = q.b_zp->data_as<int32_t>();
    std::vector<int32_t> wp(O * Kh);
    for (int64_t o = 0; o < O; ++o)
        for (int64_t kk = 0; kk < Kh; ++kk) {
            int16_t pair[2];
            for (int64_t t = 0; t < 2; ++t) {
                const int64_t k = 2 * kk + t;
                pair[t] = k < Kc ? int16_t(int32_t(wt[o * Kc + k]) - w_zp[o]) : int16_t(0);
            }
            std::memcpy(&wp[o * Kh + kk], pair, sizeof pair);
        }
    std::vector<float> bias_over_scale(O), multiplier(O);
    requant_constants(q, 0, O, bias_over_scale.data(), multiplier.data());

    auto panel = [&](const int16_t* src, int16_t* a) {
#if defined(__x86_64__)
        if (avx2 && w.stride_w == 1) return qconv_panel_avx2(src, off.data(), Kc, Kh, NV, a);
#endif
        panel_portable(src, off.data(), Kc, Kh, NV, w.stride_w, a);
    };
    auto row = &row_portable;
#if defined(__x86_64__)
    if (avx2) row = &qconv_row_avx2;
#endif
    (void)avx2;

    // 2. and 3.: output rows (n, oh), each group's panel then its channels.
    const int64_t L = w.OH * w.OW, rows = w.N * w.OH;
    const int64_t work = std::max<int64_t>(1, w.OW * O * Kc);  // multiply-adds per output row
    parallel_for(rows, std::max<int64_t>(1, (int64_t(1) << 21) / work), [&](int64_t r0, int64_t r1) {
        int16_t* a = thread_scratch<int16_t>(NV * Kh * 16);
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t n = r / w.OH, oh = r % w.OH;
            for (int64_t g = 0; g < w.groups; ++g) {
                panel(padded + (n * w.C + g * cg) * plane + oh * w.stride_h * Wp, a);
                row(a, NV, Kh, wp.data() + g * og * Kh, og, bias_over_scale.data() + g * og,
                    multiplier.data() + g * og, q.out_zp, q.relu, out + (n * O + g * og) * L + oh * w.OW, L, w.OW);
            }
        }
    });
}

}  // namespace minitorch::cpu
