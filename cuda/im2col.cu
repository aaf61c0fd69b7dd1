// im2col.cu — CUDA kernels for im2col / col2im: a convolution as GEMMs (cpu/im2col.cpp is
// the same on the CPU). Layouts are those of kernels.h. float16 / bfloat16 are read and
// written in place (the table entries skip Widen's float32 staging copies): im2col only
// moves values, and col2im sums in float32 registers.
#include "common.cuh"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per element of cols (sample n, tap t, output pixel p).
template <class T>
__global__ void im2col_kernel(const T* x, T* cols, Window2d w)
{
    const int64_t pixels = w.OH * w.OW, taps = w.C * w.KH * w.KW;
    MT_GRID_STRIDE(i, w.N * taps * pixels) {
        const int64_t n = i / (taps * pixels), t = (i / pixels) % taps, p = i % pixels;
        const int64_t c = t / (w.KH * w.KW), kh = (t / w.KW) % w.KH, kw = t % w.KW;
        const int64_t oh = p / w.OW, ow = p % w.OW;
        const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h, iw = ow * w.stride_w - w.pad_w + kw * w.dil_w;
        cols[i] = (ih >= 0 && ih < w.H && iw >= 0 && iw < w.W) ? x[((n * w.C + c) * w.H + ih) * w.W + iw] : T(0.0f);
    }
}

// Thread mapping: one thread per INPUT pixel (n, c, ih, iw), summing every cols entry
// that read it -- a gather, so no two threads write the same place (no atomics).
template <class T>
__global__ void col2im_kernel(const T* cols, T* gx, Window2d w)
{
    const int64_t pixels = w.OH * w.OW, taps = w.C * w.KH * w.KW;
    MT_GRID_STRIDE(i, w.N * w.C * w.H * w.W) {
        const int64_t iw = i % w.W, ih = (i / w.W) % w.H, c = (i / (w.W * w.H)) % w.C, n = i / (w.W * w.H * w.C);
        const T* rows = cols + (n * taps + c * w.KH * w.KW) * pixels;  // channel c's taps of sample n
        Compute<T> acc = 0;
        for_each_window_over(w, ih, iw, [&](int64_t o, int64_t t) { acc += Compute<T>(rows[t * pixels + o]); });
        gx[i] = T(Compute<T>(gx[i]) + acc);
    }
}

}  // namespace

void im2col(const Tensor& cols, const Tensor& x, const Window2d& w)
{
    MT_FLOAT16_LAUNCH(x->dtype, "im2col", cols->numel(), im2col_kernel, x->data_as<T>(), cols->data_as<T>(), w);
}

void col2im(const Tensor& gx, const Tensor& cols, const Window2d& w)
{
    MT_FLOAT16_LAUNCH(gx->dtype, "col2im", gx->numel(), col2im_kernel, cols->data_as<T>(), gx->data_as<T>(), w);
}

}  // namespace minitorch::cuda
