// im2col.cpp — CPU kernels that turn convolution into one GEMM (the lecture's trick):
// every output pixel's input patch becomes a row of a matrix, so
//     out_rows (N*OH*OW, O) = cols (N*OH*OW, C*KH*KW) @ W^T (C*KH*KW, O).
#include "kernels_cpu.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

void im2col(const Tensor& cols, const Tensor& input, const Window2d& w)
{
    const int64_t row_len = w.C * w.KH * w.KW, rows = w.N * w.OH * w.OW;
    dispatch_floating(input->dtype, "im2col", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = input->data_as<T>();
        T* out = cols->data_as<T>();
        // One output pixel per row; rows are independent, so threads split them.
        parallel_for(rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row_len, 1)), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t n = r / (w.OH * w.OW), oh = (r / w.OW) % w.OH, ow = r % w.OW;
                T* dst = out + r * row_len;
                for (int64_t c = 0; c < w.C; ++c) {
                    const T* plane = x + (n * w.C + c) * w.H * w.W;
                    for (int64_t kh = 0; kh < w.KH; ++kh) {
                        const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h;
                        for (int64_t kw = 0; kw < w.KW; ++kw) {
                            const int64_t iw = ow * w.stride_w - w.pad_w + kw * w.dil_w;
                            *dst++ = (ih >= 0 && ih < w.H && iw >= 0 && iw < w.W) ? plane[ih * w.W + iw] : T(0);
                        }
                    }
                }
            }
        });
    });
}

void col2im(const Tensor& grad_input, const Tensor& cols, const Window2d& w)
{
    const int64_t row_len = w.C * w.KH * w.KW;
    dispatch_floating(grad_input->dtype, "col2im", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* gx = grad_input->data_as<T>();
        const T* g = cols->data_as<T>();
        // Patches of one image overlap (they add into the same input pixels), patches of
        // different images never do: threads split the batch.
        parallel_for(w.N, 1, [&](int64_t n0, int64_t n1) {
            for (int64_t n = n0; n < n1; ++n)
                for (int64_t oh = 0; oh < w.OH; ++oh)
                    for (int64_t ow = 0; ow < w.OW; ++ow) {
                        const T* src = g + ((n * w.OH + oh) * w.OW + ow) * row_len;
                        for (int64_t c = 0; c < w.C; ++c) {
                            T* plane = gx + (n * w.C + c) * w.H * w.W;
                            for (int64_t kh = 0; kh < w.KH; ++kh) {
                                const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h;
                                for (int64_t kw = 0; kw < w.KW; ++kw, ++src) {
                                    const int64_t iw = ow * w.stride_w - w.pad_w + kw * w.dil_w;
                                    if (ih >= 0 && ih < w.H && iw >= 0 && iw < w.W) plane[ih * w.W + iw] += *src;
                                }
                            }
                        }
                    }
        });
    });
}

}  // namespace minitorch::cpu
