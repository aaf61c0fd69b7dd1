// pool.cu — CUDA kernels for max and average pooling, forward and backward (cpu/pool.cpp is
// the same on the CPU). Layouts are those of kernels.h.
#include "common.cuh"

namespace minitorch::cuda {

namespace {

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
