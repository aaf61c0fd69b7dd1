// im2col.cpp — CPU kernels that turn convolution into GEMMs (the lecture's trick).
//
// For each sample n, cols has one ROW per (c, kh, kw) tap and one COLUMN per output pixel:
//     cols[n, (c, kh, kw), (oh, ow)] = x[n, c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw]
// so  out[n] (O, OH*OW) = W (O, C*KH*KW) @ cols[n], already in NCHW order. Along a row,
// consecutive ow read consecutive input pixels (stride 1): the inner loops are plain
// copies / adds.
#include "kernels_cpu.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

inline int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The ow range [lo, hi) whose input column iw = ow*sw - pw + kw*dw lies inside [0, W).
inline void valid_range(const Window2d& w, int64_t kw, int64_t& lo, int64_t& hi)
{
    const int64_t shift = w.pad_w - kw * w.dil_w;  // iw = ow*sw - shift
    lo = std::min(w.OW, std::max<int64_t>(0, ceil_div(shift, w.stride_w)));
    hi = std::max(lo, std::min(w.OW, ceil_div(w.W + shift, w.stride_w)));
}

}  // namespace

void im2col(const Tensor& cols, const Tensor& input, const Window2d& w)
{
    const int64_t taps = w.C * w.KH * w.KW, pixels = w.OH * w.OW;
    dispatch_floating(input->dtype, "im2col", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = input->data_as<T>();
        T* out = cols->data_as<T>();
        // Each thread fills whole rows (n, tap): rows never overlap.
        parallel_for(w.N * taps, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(pixels, 1)), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t n = r / taps, t = r % taps;
                const int64_t c = t / (w.KH * w.KW), kh = (t / w.KW) % w.KH, kw = t % w.KW;
                int64_t lo, hi;
                valid_range(w, kw, lo, hi);
                const int64_t col0 = kw * w.dil_w - w.pad_w;
                const T* plane = x + (n * w.C + c) * w.H * w.W;
                T* row = out + r * pixels;
                for (int64_t oh = 0; oh < w.OH; ++oh, row += w.OW) {
                    const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h;
                    if (ih < 0 || ih >= w.H) {
                        for (int64_t ow = 0; ow < w.OW; ++ow) row[ow] = T(0);
                        continue;
                    }
                    const T* src = plane + ih * w.W + col0;
                    for (int64_t ow = 0; ow < lo; ++ow) row[ow] = T(0);
                    if (w.stride_w == 1)
                        for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow];
                    else
                        for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow * w.stride_w];
                    for (int64_t ow = hi; ow < w.OW; ++ow) row[ow] = T(0);
                }
            }
        });
    });
}

void col2im(const Tensor& grad_input, const Tensor& cols, const Window2d& w)
{
    const int64_t taps = w.C * w.KH * w.KW, pixels = w.OH * w.OW;
    dispatch_floating(grad_input->dtype, "col2im", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* gx = grad_input->data_as<T>();
        const T* g = cols->data_as<T>();
        // The taps of one (n, c) add into the same input plane; different planes never
        // share one, so threads split the planes.
        const int64_t per_plane = w.KH * w.KW * pixels;
        parallel_for(w.N * w.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(per_plane, 1)), [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                const int64_t n = p / w.C, c = p % w.C;
                T* plane = gx + p * w.H * w.W;
                for (int64_t kh = 0; kh < w.KH; ++kh)
                    for (int64_t kw = 0; kw < w.KW; ++kw) {
                        int64_t lo, hi;
                        valid_range(w, kw, lo, hi);
                        const int64_t col0 = kw * w.dil_w - w.pad_w;
                        const T* row = g + (n * taps + (c * w.KH + kh) * w.KW + kw) * pixels;
                        for (int64_t oh = 0; oh < w.OH; ++oh, row += w.OW) {
                            const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h;
                            if (ih < 0 || ih >= w.H) continue;
                            T* dst = plane + ih * w.W + col0;
                            if (w.stride_w == 1)
                                for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += row[ow];
                            else
                                for (int64_t ow = lo; ow < hi; ++ow) dst[ow * w.stride_w] += row[ow];
                        }
                    }
            }
        });
    });
}

}  // namespace minitorch::cpu
