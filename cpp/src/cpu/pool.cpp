// pool.cpp — CPU pooling kernels: each (n, c) plane is independent, so threads split
// the planes; inside a plane, each output pixel scans its KH x KW window. Windows 2 and 3
// wide (dilation 1) run specialised loops: no bounds checks away from the plane's border.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {
int64_t plane_grain(const Window2d& w)
{
    return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(w.OH * w.OW * w.KH * w.KW, 1));
}
// Does v replace the window's best so far? Larger wins, ties keep the first, and the first
// NaN wins and stays (PyTorch propagates NaN). `|` and `&`, not `||` and `&&`: one test.
template <class T>
inline bool takes(T v, T best)
{
    return (v > best) | ((v != v) & (best == best));
}

// t ? a : b computed with bit masks. On an image the comparisons go either way at random,
// and the compiler turns a plain ?: into a branch that is mispredicted half the time: that
// made 2x2 max pooling 3x slower than it needs to be. (For larger windows the chain of
// selects costs more than the branches; they keep the branch.)
template <class T>
inline T pick(bool t, T a, T b)
{
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(T));
    std::memcpy(&ub, &b, sizeof(T));
    const U mask = U(0) - U(t);
    const U r = (ua & mask) | (ub & ~mask);
    T out;
    std::memcpy(&out, &r, sizeof(T));
    return out;
}

// The common case: no padding or dilation and every window inside the plane (kernel 2,
// stride 2 on an even size): no bounds checks. Same answers as max_in_window.
bool windows_inside(const Window2d& w)
{
    return w.pad_h == 0 && w.pad_w == 0 && w.dil_h == 1 && w.dil_w == 1 &&
           (w.OH - 1) * w.stride_h + w.KH <= w.H && (w.OW - 1) * w.stride_w + w.KW <= w.W;
}

template <class T>
void max_pool_plane_inside(const T* plane, T* y, int64_t* idx, const Window2d w)  // w by value: kept in registers
{
    for (int64_t oh = 0; oh < w.OH; ++oh)
        for (int64_t ow = 0; ow < w.OW; ++ow) {
            const int64_t first = oh * w.stride_h * w.W + ow * w.stride_w;
            T best = plane[first];
            int64_t best_i = first;
            for (int64_t kh = 0; kh < w.KH; ++kh)
                for (int64_t kw = 0; kw < w.KW; ++kw) {
                    const int64_t i = first + kh * w.W + kw;
                    const T v = plane[i];
                    if (takes(v, best)) best = v, best_i = i;  // a branch: cheaper here than a select chain
                }
            y[oh * w.OW + ow] = best;
            idx[oh * w.OW + ow] = best_i;
        }
}

// Kernel 2, stride 2 (the lectures' pooling): the four values of each window by name.
template <class T>
void max_pool_plane_2x2(const T* __restrict plane, T* __restrict y, int64_t* __restrict idx, int64_t W, int64_t OH,
                        int64_t OW)
{
    for (int64_t oh = 0; oh < OH; ++oh) {
        const T* r0 = plane + 2 * oh * W;
        const T* r1 = r0 + W;
        T* y_row = y + oh * OW;
        int64_t* idx_row = idx + oh * OW;
        for (int64_t ow = 0; ow < OW; ++ow) {
            const T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];
            T best = a;
            int64_t at = 0;  // offset of the winner from the window's top-left corner
            bool t = takes(b, best);
            best = pick(t, b, best), at = pick<int64_t>(t, 1, at);
            t = takes(c, best);
            best = pick(t, c, best), at = pick<int64_t>(t, W, at);
            t = takes(d, best);
            best = pick(t, d, best), at = pick<int64_t>(t, W + 1, at);
            y_row[ow] = best;
            idx_row[ow] = 2 * oh * W + 2 * ow + at;
        }
    }
}

// Padded windows (3x3 stride 1 or 2 with padding 1, ceil_mode...): each output row takes
// its window rows inside the plane [kh0, kh1) once; the outputs whose window columns all lie
// inside the plane ([ow_lo, ow_hi)) run a loop with the window width KW fixed at compile
// time and no bounds checks; only the few border outputs take the checked walk.
struct RowSpan {
    int64_t ow_lo, ow_hi;  // outputs with every window column inside the plane
};
inline RowSpan interior_columns(const Window2d& w)
{
    // iw0 = ow * stride - pad >= 0 and iw0 + KW <= W
    int64_t lo = (w.pad_w + w.stride_w - 1) / w.stride_w;
    int64_t hi = w.W - w.KW + w.pad_w >= 0 ? (w.W - w.KW + w.pad_w) / w.stride_w + 1 : 0;
    lo = std::min(lo, w.OW), hi = std::max(std::min(hi, w.OW), lo);
    return {lo, hi};
}

template <int KW, class T>
void max_pool_plane_padded(const T* __restrict plane, T* __restrict y, int64_t* __restrict idx, const Window2d w)
{
    const RowSpan span = interior_columns(w);
    for (int64_t oh = 0; oh < w.OH; ++oh) {
        const int64_t ih0 = oh * w.stride_h - w.pad_h;
        const int64_t kh0 = std::max<int64_t>(0, -ih0), kh1 = std::min<int64_t>(w.KH, w.H - ih0);
        T* y_row = y + oh * w.OW;
        int64_t* idx_row = idx + oh * w.OW;
        auto border = [&](int64_t ow) {
            T best = -std::numeric_limits<T>::infinity();
            idx_row[ow] = max_in_window(plane, w, oh, ow, best);
            y_row[ow] = best;
        };
        for (int64_t ow = 0; ow < span.ow_lo; ++ow) border(ow);
        if (kh0 < kh1) {
            // Window element by window element (row-major, as max_in_window: the same
            // winners), each sweeping every interior output of the row: the outputs are
            // independent, so the sweep runs in SIMD lanes instead of one long chain of
            // compare-and-select per output.
            const int64_t lo = span.ow_lo, hi = span.ow_hi, sw = w.stride_w;
            for (int64_t ow = lo; ow < hi; ++ow) {
                const int64_t first = (ih0 + kh0) * w.W + ow * sw - w.pad_w;
                y_row[ow] = plane[first], idx_row[ow] = first;
            }
            for (int64_t kh = kh0; kh < kh1; ++kh)
                for (int kw = 0; kw < KW; ++kw) {
                    const int64_t at = (ih0 + kh) * w.W - w.pad_w + kw;  // + ow * sw
                    for (int64_t ow = lo; ow < hi; ++ow) {
                        const T v = plane[at + ow * sw], b = y_row[ow];
                        const bool t = takes(v, b);  // bit selects: a branch here is mispredicted half the time
                        y_row[ow] = pick(t, v, b);
                        idx_row[ow] = pick<int64_t>(t, at + ow * sw, idx_row[ow]);
                    }
                }
        }
        else
            for (int64_t ow = span.ow_lo; ow < span.ow_hi; ++ow) border(ow);
        for (int64_t ow = span.ow_hi; ow < w.OW; ++ow) border(ow);
    }
}

template <int KW, class T>
void avg_pool_plane_padded(const T* __restrict plane, T* __restrict y, const Window2d w)
{
    const RowSpan span = interior_columns(w);
    for (int64_t oh = 0; oh < w.OH; ++oh) {
        const int64_t ih0 = oh * w.stride_h - w.pad_h;
        const int64_t kh0 = std::max<int64_t>(0, -ih0), kh1 = std::min<int64_t>(w.KH, w.H - ih0);
        T* y_row = y + oh * w.OW;
        auto border = [&](int64_t ow) {
            y_row[ow] = sum_in_window(plane, w, oh, ow) * (T(1) / T(pool_window_size(w, oh, ow)));
        };
        for (int64_t ow = 0; ow < span.ow_lo; ++ow) border(ow);
        // As in max pooling: each window element sweeps the row's interior outputs (SIMD
        // lanes), adding in the same row-major order as sum_in_window.
        const int64_t lo = span.ow_lo, hi = span.ow_hi, sw = w.stride_w;
        for (int64_t ow = lo; ow < hi; ++ow) y_row[ow] = 0;
        for (int64_t kh = kh0; kh < kh1; ++kh)
            for (int kw = 0; kw < KW; ++kw) {
                const T* r = plane + (ih0 + kh) * w.W - w.pad_w + kw;
                for (int64_t ow = lo; ow < hi; ++ow) y_row[ow] += r[ow * sw];
            }
        for (int64_t ow = lo; ow < hi; ++ow) y_row[ow] = y_row[ow] * (T(1) / T(pool_window_size(w, oh, ow)));
        for (int64_t ow = span.ow_hi; ow < w.OW; ++ow) border(ow);
    }
}

template <int KW, class T>
void avg_pool_plane_padded_backward(T* __restrict plane, const T* __restrict g, const Window2d w)
{
    const RowSpan span = interior_columns(w);
    for (int64_t oh = 0; oh < w.OH; ++oh) {
        const int64_t ih0 = oh * w.stride_h - w.pad_h;
        const int64_t kh0 = std::max<int64_t>(0, -ih0), kh1 = std::min<int64_t>(w.KH, w.H - ih0);
        const T* g_row = g + oh * w.OW;
        auto border = [&](int64_t ow) {
            const T v = g_row[ow] / T(pool_window_size(w, oh, ow));
            for_each_in_window(w, oh, ow, [&](int64_t i) { plane[i] += v; return true; });
        };
        for (int64_t ow = 0; ow < span.ow_lo; ++ow) border(ow);
        for (int64_t ow = span.ow_lo; ow < span.ow_hi; ++ow) {
            const T v = g_row[ow] / T(pool_window_size(w, oh, ow));
            for (int64_t kh = kh0; kh < kh1; ++kh) {
                T* r = plane + (ih0 + kh) * w.W + ow * w.stride_w - w.pad_w;
                for (int kw = 0; kw < KW; ++kw) r[kw] += v;
            }
        }
        for (int64_t ow = span.ow_hi; ow < w.OW; ++ow) border(ow);
    }
}

// Calls f with the window width as a compile-time constant (2 or 3), or returns false.
template <class F>
bool with_small_width(const Window2d& w, F&& f)
{
    if (w.dil_h != 1 || w.dil_w != 1) return false;
    if (w.KW == 2) return f(std::integral_constant<int, 2>{}), true;
    if (w.KW == 3) return f(std::integral_constant<int, 3>{}), true;
    return false;
}

}  // namespace

void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& input, const Window2d& w)
{
    dispatch_floating(input->dtype, "max_pool2d", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = input->data_as<T>();
        T* y = out->data_as<T>();
        int64_t* idx = indices->data_as<int64_t>();
        const bool inside = windows_inside(w);
        parallel_for(w.N * w.C, plane_grain(w), [&, window = w](int64_t p0, int64_t p1) {
            const Window2d& w = window;  // the lambda's own copy: the int64 stores below cannot alias it
            for (int64_t p = p0; p < p1; ++p) {
                const T* plane = x + p * w.H * w.W;
                if (inside && w.KH == 2 && w.KW == 2 && w.stride_h == 2 && w.stride_w == 2) {
                    max_pool_plane_2x2(plane, y + p * w.OH * w.OW, idx + p * w.OH * w.OW, w.W, w.OH, w.OW);
                    continue;
                }
                if (with_small_width(w, [&](auto kw) {
                        max_pool_plane_padded<decltype(kw)::value>(plane, y + p * w.OH * w.OW, idx + p * w.OH * w.OW, w);
                    }))
                    continue;
                if (inside) {
                    max_pool_plane_inside(plane, y + p * w.OH * w.OW, idx + p * w.OH * w.OW, w);
                    continue;
                }
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
        parallel_for(w.N * w.C, plane_grain(w), [&, window = w](int64_t p0, int64_t p1) {
            const Window2d& w = window;  // the lambda's own copy: the int64 stores below cannot alias it
            for (int64_t p = p0; p < p1; ++p) {
                std::fill(gx + p * w.H * w.W, gx + (p + 1) * w.H * w.W, T(0));  // the kernel writes all of gx
                for (int64_t o = 0; o < w.OH * w.OW; ++o) {
                    const int64_t i = idx[p * w.OH * w.OW + o];
                    if (i >= 0 && i < w.H * w.W) gx[p * w.H * w.W + i] += g[p * w.OH * w.OW + o];
                }
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
        parallel_for(w.N * w.C, plane_grain(w), [&, window = w](int64_t p0, int64_t p1) {
            const Window2d& w = window;  // the lambda's own copy: the int64 stores below cannot alias it
            for (int64_t p = p0; p < p1; ++p) {
                const T* plane = x + p * w.H * w.W;
                if (with_small_width(w, [&](auto kw) {
                        avg_pool_plane_padded<decltype(kw)::value>(plane, y + p * w.OH * w.OW, w);
                    }))
                    continue;
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
        parallel_for(w.N * w.C, plane_grain(w), [&, window = w](int64_t p0, int64_t p1) {
            const Window2d& w = window;  // the lambda's own copy: the int64 stores below cannot alias it
            for (int64_t p = p0; p < p1; ++p) {
                T* plane = gx + p * w.H * w.W;
                std::fill(plane, plane + w.H * w.W, T(0));  // the kernel writes all of gx: zero, then scatter
                if (with_small_width(w, [&](auto kw) {
                        avg_pool_plane_padded_backward<decltype(kw)::value>(plane, g + p * w.OH * w.OW, w);
                    }))
                    continue;
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
