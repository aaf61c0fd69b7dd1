// conv.cu — CUDA kernels for im2col / col2im (convolution as GEMMs) and pooling.
// (The row gather / scatter-add / put kernels are in indexing.cu.) Layouts are those of
// kernels.h (same as the CPU).
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
        cols[i] = (ih >= 0 && ih < w.H && iw >= 0 && iw < w.W) ? x[((n * w.C + c) * w.H + ih) * w.W + iw] : T(0);
    }
}

// Thread mapping: one thread per INPUT pixel (n, c, ih, iw), summing every cols entry
// that read it — a gather, so no two threads write the same place (no atomics).
template <class T>
__global__ void col2im_kernel(const T* cols, T* gx, Window2d w)
{
    const int64_t pixels = w.OH * w.OW, taps = w.C * w.KH * w.KW;
    MT_GRID_STRIDE(i, w.N * w.C * w.H * w.W) {
        const int64_t iw = i % w.W, ih = (i / w.W) % w.H, c = (i / (w.W * w.H)) % w.C, n = i / (w.W * w.H * w.C);
        T acc = 0;
        for (int64_t kh = 0; kh < w.KH; ++kh) {
            const int64_t hs = ih + w.pad_h - kh * w.dil_h;  // = oh * stride_h
            if (hs < 0 || hs % w.stride_h) continue;
            const int64_t oh = hs / w.stride_h;
            if (oh >= w.OH) continue;
            for (int64_t kw = 0; kw < w.KW; ++kw) {
                const int64_t ws = iw + w.pad_w - kw * w.dil_w;
                if (ws < 0 || ws % w.stride_w) continue;
                const int64_t ow = ws / w.stride_w;
                if (ow >= w.OW) continue;
                acc += cols[(n * taps + (c * w.KH + kh) * w.KW + kw) * pixels + oh * w.OW + ow];
            }
        }
        gx[i] += acc;
    }
}

// Thread mapping: one thread per output element (plane p, oh, ow).
template <class T>
__global__ void max_pool_kernel(const T* x, T* y, int64_t* idx, Window2d w)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.OH * w.OW) {
        const int64_t ow = i % w.OW, oh = (i / w.OW) % w.OH, p = i / (w.OW * w.OH);
        T best = T(-INFINITY);
        idx[i] = max_in_window(x + p * w.H * w.W, w, oh, ow, best);
        y[i] = best;
    }
}

// Thread mapping: one thread per output gradient; windows may overlap, so atomicAdd.
template <class T>
__global__ void max_pool_backward_kernel(const T* g, const int64_t* idx, T* gx, Window2d w)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.OH * w.OW) {
        const int64_t p = i / (w.OH * w.OW);
        if (idx[i] >= 0 && idx[i] < w.H * w.W) atomicAdd(gx + p * w.H * w.W + idx[i], g[i]);  // never outside the plane
    }
}

template <class T>
__global__ void avg_pool_kernel(const T* x, T* y, Window2d w)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.OH * w.OW) {
        const int64_t ow = i % w.OW, oh = (i / w.OW) % w.OH, p = i / (w.OW * w.OH);
        y[i] = sum_in_window(x + p * w.H * w.W, w, oh, ow) / T(pool_window_size(w, oh, ow));
    }
}

template <class T>
__global__ void avg_pool_backward_kernel(const T* g, T* gx, Window2d w)
{
    MT_GRID_STRIDE(i, w.N * w.C * w.OH * w.OW) {
        const int64_t ow = i % w.OW, oh = (i / w.OW) % w.OH, p = i / (w.OW * w.OH);
        const T v = g[i] / T(pool_window_size(w, oh, ow));
        T* plane = gx + p * w.H * w.W;
        for_each_in_window(w, oh, ow, [&](int64_t j) { atomicAdd(plane + j, v); return true; });
    }
}

}  // namespace

#define MT_FLOAT_LAUNCH(dtype, name, count, kernel, ...)                                 \
    do {                                                                                 \
        dispatch_floating(dtype, name, [&](auto tag) {                                   \
            using T = typename decltype(tag)::type;                                      \
            MT_LAUNCH(blocks_for(count), kThreads, 0, 0, kernel<T>)(__VA_ARGS__);        \
        });                                                                              \
        MT_CUDA_CHECK_LAUNCH(name);                                                      \
    } while (0)

void im2col(const Tensor& cols, const Tensor& x, const Window2d& w)
{
    MT_FLOAT_LAUNCH(x->dtype, "im2col", cols->numel(), im2col_kernel, x->data_as<T>(), cols->data_as<T>(), w);
}

void col2im(const Tensor& gx, const Tensor& cols, const Window2d& w)
{
    MT_FLOAT_LAUNCH(gx->dtype, "col2im", gx->numel(), col2im_kernel, cols->data_as<T>(), gx->data_as<T>(), w);
}

void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& x, const Window2d& w)
{
    MT_FLOAT_LAUNCH(x->dtype, "max_pool2d", out->numel(), max_pool_kernel, x->data_as<T>(), out->data_as<T>(),
                    indices->data_as<int64_t>(), w);
}

void max_pool2d_backward(const Tensor& gx, const Tensor& g, const Tensor& indices, const Window2d& w)
{
    MT_FLOAT_LAUNCH(gx->dtype, "max_pool2d_backward", g->numel(), max_pool_backward_kernel, g->data_as<T>(),
                    indices->data_as<int64_t>(), gx->data_as<T>(), w);
}

void avg_pool2d(const Tensor& out, const Tensor& x, const Window2d& w)
{
    MT_FLOAT_LAUNCH(x->dtype, "avg_pool2d", out->numel(), avg_pool_kernel, x->data_as<T>(), out->data_as<T>(), w);
}

void avg_pool2d_backward(const Tensor& gx, const Tensor& g, const Window2d& w)
{
    MT_FLOAT_LAUNCH(gx->dtype, "avg_pool2d_backward", g->numel(), avg_pool_backward_kernel, g->data_as<T>(),
                    gx->data_as<T>(), w);
}

}  // namespace minitorch::cuda
