// upsample.cu — CUDA kernels for F.interpolate's 2-D modes (nearest, nearest-exact,
// bilinear), forward and backward (cpu/upsample.cpp is the same on the CPU). Layouts are
// those of kernels.h, the index rule is minitorch/upsample_math.h's. float16 / bfloat16 are
// read and written in place and blended in float32 registers (Compute<T>): no staging
// copies through Widen.
#include "common.cuh"
#include "minitorch/upsample_math.h"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per output element (plane p, oh, ow). It works out its row's
// and column's taps (a few flops: cheaper than reading tables) and blends rows first, then
// columns, as the CPU kernel and the composed path do.
template <class T>
__global__ void upsample_kernel(const T* x, T* y, Upsample2d s, PlaneIndex at)
{
    using A = Compute<T>;
    MT_GRID_STRIDE(i, s.N * s.C * s.OH * s.OW) {
        int64_t p, oh, ow;
        at.of(i, p, oh, ow);
        const UpsampleTaps<A> th = upsample_taps<A>(s.mode, s.H, s.OH, s.align_corners, s.scale_h, oh);
        const UpsampleTaps<A> tw = upsample_taps<A>(s.mode, s.W, s.OW, s.align_corners, s.scale_w, ow);
        const T* plane = x + p * s.H * s.W;
        auto row = [&](int64_t iw) {  // input column iw blended along H
            const A a = A(plane[th.i0 * s.W + iw]);
            return th.one ? a : a * th.l0 + A(plane[th.i1 * s.W + iw]) * th.l1;
        };
        y[i] = T(tw.one ? row(tw.i0) : row(tw.i0) * tw.l0 + row(tw.i1) * tw.l1);
    }
}

// Thread mapping: one thread per INPUT pixel (plane p, ih, iw), a gather: it adds up the
// gradient of every output pixel whose taps read it -- output rows [oh0, oh1) and columns
// [ow0, ow1), found by binary search (upsample_outputs_reading) -- row by row, in a fixed
// order. Every output in those ranges has a tap on this pixel (a zero weight still
// multiplies, so an inf or NaN gradient spreads as in the composed path). No two threads
// write one place: no atomics, the same sum on every run, and no zero fill first (grad_in
// is written).
template <class T>
__global__ void upsample_backward_kernel(const T* g, T* gx, Upsample2d s, PlaneIndex at)
{
    using A = Compute<T>;
    MT_GRID_STRIDE(i, s.N * s.C * s.H * s.W) {
        int64_t p, ih, iw;
        at.of(i, p, ih, iw);
        int64_t oh0, oh1, ow0, ow1;
        upsample_outputs_reading<A>(s.mode, s.H, s.OH, s.align_corners, s.scale_h, ih, oh0, oh1);
        upsample_outputs_reading<A>(s.mode, s.W, s.OW, s.align_corners, s.scale_w, iw, ow0, ow1);
        const T* g_p = g + p * s.OH * s.OW;
        A acc = 0;
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const A wh = upsample_weight_on(upsample_taps<A>(s.mode, s.H, s.OH, s.align_corners, s.scale_h, oh), ih);
            A row = 0;  // this output row's gradient reaching column iw
            for (int64_t ow = ow0; ow < ow1; ++ow) {
                const A ww =
                    upsample_weight_on(upsample_taps<A>(s.mode, s.W, s.OW, s.align_corners, s.scale_w, ow), iw);
                row += A(g_p[oh * s.OW + ow]) * ww;
            }
            acc += row * wh;
        }
        gx[i] = T(acc);
    }
}

}  // namespace

void upsample2d(const Tensor& out, const Tensor& x, const Upsample2d& s)
{
    MT_FLOAT16_LAUNCH(x->dtype, "upsample2d", out->numel(), upsample_kernel, x->data_as<T>(), out->data_as<T>(), s,
                      PlaneIndex(s.OW, s.OH, s.N * s.C * s.OH * s.OW));
}

void upsample2d_backward(const Tensor& gx, const Tensor& g, const Upsample2d& s)
{
    MT_FLOAT16_LAUNCH(gx->dtype, "upsample2d_backward", gx->numel(), upsample_backward_kernel, g->data_as<T>(),
                      gx->data_as<T>(), s, PlaneIndex(s.W, s.H, s.N * s.C * s.H * s.W));
}

}  // namespace minitorch::cuda
