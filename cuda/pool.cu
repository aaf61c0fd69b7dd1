// pool.cu — CUDA kernels for max and average pooling, forward and backward (cpu/pool.cpp is
// the same on the CPU). Layouts are those of kernels.h. float16 / bfloat16 are read and
// written in place, compared and summed in float32 registers (Compute<T>): no staging
// copies through Widen.
#include "common.cuh"
#include "minitorch/fast_divisor.h"

namespace minitorch::cuda {

namespace {

// Where a flat index lies (plane, row, column) over the output and over the input, without
// a 64-bit division per element (PlaneIndex, fast_divisor.h).
PlaneIndex over_output(const Window2d& w) { return PlaneIndex(w.OW, w.OH, w.N * w.C * w.OH * w.OW); }
PlaneIndex over_input(const Window2d& w) { return PlaneIndex(w.W, w.H, w.N * w.C * w.H * w.W); }

// Thread mapping: one thread per output element (plane p, oh, ow).
template <class T>
__global__ void max_pool_kernel(const T* x, T* y, int64_t* idx, Window2d w, PlaneIndex at)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.OH * w.OW) {
        int64_t p, oh, ow;
        at.of(i, p, oh, ow);
        Compute<T> best = -INFINITY;
        idx[i] = max_in_window(x + p * w.H * w.W, w, oh, ow, best);
        y[i] = T(best);
    }
}

// Thread mapping: one thread per INPUT pixel (plane p, ih, iw), summing the gradient of
// every window that picked it -- a gather, as col2im: no two threads write one place, so
// no atomics, and the sum is the same, in the same order, on every run. Every pixel is
// written (0 where no window picked it), so gx needs no zero fill first.
template <class T>
__global__ void max_pool_backward_kernel(const T* g, const int64_t* idx, T* gx, Window2d w, PlaneIndex at)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.H * w.W) {
        int64_t p, ih, iw;
        at.of(i, p, ih, iw);
        const int64_t here = ih * w.W + iw;
        const int64_t* idx_p = idx + p * w.OH * w.OW;
        const T* g_p = g + p * w.OH * w.OW;
        Compute<T> acc = 0;
        for_each_window_over(w, ih, iw, [&](int64_t o, int64_t) {
            if (idx_p[o] == here) acc += Compute<T>(g_p[o]);
        });
        gx[i] = T(acc);
    }
}

// Thread mapping: one thread per output element (plane p, oh, ow).
template <class T>
__global__ void avg_pool_kernel(const T* x, T* y, Window2d w, PlaneIndex at)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.OH * w.OW) {
        int64_t p, oh, ow;
        at.of(i, p, oh, ow);
        using Acc = Compute<T>;
        y[i] = T(sum_in_window<T, Acc>(x + p * w.H * w.W, w, oh, ow) / Acc(pool_window_size(w, oh, ow)));
    }
}

// Thread mapping: one thread per INPUT pixel (plane p, ih, iw), as max_pool_backward_kernel:
// each window that covers it hands it g / the window's size.
template <class T>
__global__ void avg_pool_backward_kernel(const T* g, T* gx, Window2d w, PlaneIndex at, DivideBy by_ow)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.H * w.W) {
        int64_t p, ih, iw;
        at.of(i, p, ih, iw);
        const T* g_p = g + p * w.OH * w.OW;
        using Acc = Compute<T>;
        Acc acc = 0;
        // The window's place comes from the walk itself (o = oh * OW + ow): divide it back.
        for_each_window_over(w, ih, iw, [&](int64_t o, int64_t) {
            const int64_t oh = by_ow(o);
            acc += Acc(g_p[o]) / Acc(pool_window_size(w, oh, o - oh * w.OW));
        });
        gx[i] = T(acc);
    }
}

}  // namespace

void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& x, const Window2d& w)
{
    MT_FLOAT16_LAUNCH(x->dtype, "max_pool2d", out->numel(), max_pool_kernel, x->data_as<T>(), out->data_as<T>(),
                      indices->data_as<int64_t>(), w, over_output(w));
}

void max_pool2d_backward(const Tensor& gx, const Tensor& g, const Tensor& indices, const Window2d& w)
{
    MT_FLOAT16_LAUNCH(gx->dtype, "max_pool2d_backward", gx->numel(), max_pool_backward_kernel, g->data_as<T>(),
                      indices->data_as<int64_t>(), gx->data_as<T>(), w, over_input(w));
}

void avg_pool2d(const Tensor& out, const Tensor& x, const Window2d& w)
{
    MT_FLOAT16_LAUNCH(x->dtype, "avg_pool2d", out->numel(), avg_pool_kernel, x->data_as<T>(), out->data_as<T>(), w,
                      over_output(w));
}

void avg_pool2d_backward(const Tensor& gx, const Tensor& g, const Window2d& w)
{
    MT_FLOAT16_LAUNCH(gx->dtype, "avg_pool2d_backward", gx->numel(), avg_pool_backward_kernel, g->data_as<T>(),
                      gx->data_as<T>(), w, over_input(w), DivideBy(w.OW, w.OH * w.OW));
}

}  // namespace minitorch::cuda
