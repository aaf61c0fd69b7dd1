// pool.cpp — CPU pooling kernels: each (n, c) plane is independent, so threads split
// the planes; inside a plane, each output pixel scans its KH x KW window.
#include <limits>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {
int64_t plane_grain(const Window2d& w)
{
    return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(w.OH * w.OW * w.KH * w.KW, 1));
}
}  // namespace

void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& input, const Window2d& w)
{
    dispatch_floating(input->dtype, "max_pool2d", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = input->data_as<T>();
        T* y = out->data_as<T>();
        int64_t* idx = indices->data_as<int64_t>();
        parallel_for(w.N * w.C, plane_grain(w), [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                const T* plane = x + p * w.H * w.W;
                for (int64_t oh = 0; oh < w.OH; ++oh)
                    for (int64_t ow = 0; ow < w.OW; ++ow) {
                        T best = -std::numeric_limits<T>::infinity();
                        const int64_t o = (p * w.OH + oh) * w.OW + ow;
                        idx[o] = max_in_window(plane, w, oh, ow, best);
                        y[o] = best;
                    }
            }
        });
    });
}

void max_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices, const Window2d& w)
{
    dispatch_floating(grad_input->dtype, "max_pool2d_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* gx = grad_input->data_as<T>();
        const T* g = grad_out->data_as<T>();
        const int64_t* idx = indices->data_as<int64_t>();
        parallel_for(w.N * w.C, plane_grain(w), [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p)
                for (int64_t o = 0; o < w.OH * w.OW; ++o) {
                    const int64_t i = idx[p * w.OH * w.OW + o];
                    if (i >= 0 && i < w.H * w.W) gx[p * w.H * w.W + i] += g[p * w.OH * w.OW + o];
                }
        });
    });
}

void avg_pool2d(const Tensor& out, const Tensor& input, const Window2d& w)
{
    dispatch_floating(input->dtype, "avg_pool2d", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = input->data_as<T>();
        T* y = out->data_as<T>();
        parallel_for(w.N * w.C, plane_grain(w), [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                const T* plane = x + p * w.H * w.W;
                for (int64_t oh = 0; oh < w.OH; ++oh)
                    for (int64_t ow = 0; ow < w.OW; ++ow) {
                        const T scale = T(1) / T(pool_window_size(w, oh, ow));
                        y[(p * w.OH + oh) * w.OW + ow] = sum_in_window(plane, w, oh, ow) * scale;
                    }
            }
        });
    });
}

void avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Window2d& w)
{
    dispatch_floating(grad_input->dtype, "avg_pool2d_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* gx = grad_input->data_as<T>();
        const T* g = grad_out->data_as<T>();
        parallel_for(w.N * w.C, plane_grain(w), [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                T* plane = gx + p * w.H * w.W;
                for (int64_t oh = 0; oh < w.OH; ++oh)
                    for (int64_t ow = 0; ow < w.OW; ++ow) {
                        const T v = g[(p * w.OH + oh) * w.OW + ow] / T(pool_window_size(w, oh, ow));
                        for_each_in_window(w, oh, ow, [&](int64_t i) { plane[i] += v; return true; });
                    }
            }
        });
    });
}

}  // namespace minitorch::cpu
