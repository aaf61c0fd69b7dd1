// upsample_math.h — where F.interpolate's 2-D modes read the input: the index rule shared
// by the CPU and CUDA kernels (cpu/upsample.cpp, cuda/upsample.cu). It is PyTorch's rule,
// the same as python/minitorch/nn/_sampling_functional.py's `_taps` (the composed path the
// tests compare with), down to which arithmetic runs in float and which in double.
//
// Resampling is separable: along one dim, output position j reads input positions i0 and
// i1 with weights l0 and l1 (nearest: one tap, i1 = i0 and l1 = 0). i0 never decreases as j
// grows, which is what lets a backward kernel find, by binary search, the outputs that read
// a given input position.
#pragma once
#include <cmath>
#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE
#include "minitorch/kernels.h"

namespace minitorch {

// One output position's taps along one dim. A: the arithmetic type (float for float32 and the
// 16-bit types, double for float64).
template <class A>
struct UpsampleTaps {
    int64_t i0 = 0, i1 = 0;
    A l0 = 1, l1 = 0;
    bool one = true;  // a single tap (nearest, or a dim whose size does not change): read i0 only
};

// a * b - c, each step rounded (no fused multiply-add): the rule is written with a product
// and a difference rounded separately, and nvcc would otherwise contract them.
MT_HOST_DEVICE inline double mul_sub_rn(double a, double b, double c)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(__dmul_rn(a, b), c);
#else
    volatile double p = a * b;  // volatile: keeps the host compiler from contracting too
    return p - c;
#endif
}

// The taps of output position j along a dim of `in` input and `out` output positions;
// `scale` is the user's scale_factor for this dim (0: none).
template <class A>
MT_HOST_DEVICE inline UpsampleTaps<A> upsample_taps(UpsampleMode mode, int64_t in, int64_t out, bool align_corners,
                                                    double scale, int64_t j)
{
    UpsampleTaps<A> t;
    if (mode != UpsampleMode::Bilinear) {
        // nearest: floor(j * step); nearest-exact: floor((j + 0.5) * step). The step is a
        // float even for double inputs (PyTorch's rule); nearest has two exact shortcuts.
        if (mode == UpsampleMode::Nearest && out == in) t.i0 = j;
        else if (mode == UpsampleMode::Nearest && out == 2 * in) t.i0 = j >> 1;
        else {
            const float s = scale > 0 ? float(1.0 / scale) : float(in) / float(out);
            const float src = mode == UpsampleMode::Nearest ? float(j) * s : float((double(j) + 0.5) * double(s));
            t.i0 = int64_t(floorf(src));
            if (t.i0 > in - 1) t.i0 = in - 1;
        }
        t.i1 = t.i0;
        return t;
    }
    if (out == in) {  // the composed path copies such a dim: one tap, exact even for inf
        t.i0 = t.i1 = j;
        return t;
    }
    // bilinear: src = step * j (align_corners) or step * (j + 0.5) - 0.5 in double, rounded to A
    // and clamped at 0; taps floor(src) and the next position (clamped), weights by distance.
    A s, src;
    if (align_corners) {
        s = out > 1 ? A(in - 1) / A(out - 1) : A(0);
        src = s * A(j);
    }
    else {
        s = scale > 0 ? A(1.0 / scale) : A(in) / A(out);
        src = A(mul_sub_rn(double(s), double(j) + 0.5, 0.5));
        if (src < A(0)) src = A(0);
    }
    t.one = false;
    t.i0 = int64_t(src);  // src >= 0: truncation is floor
    t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    A l1 = src - A(t.i0);
    l1 = l1 < A(0) ? A(0) : (l1 > A(1) ? A(1) : l1);
    t.l1 = l1;
    t.l0 = A(1) - l1;
    return t;
}

// The output positions [lo, hi) whose taps may read input position i (a bilinear tap i1 = i
// comes from i0 = i - 1, or i0 = i at the last position); the weight i gets from output j
// is then upsample_weight_on. Binary searches over the non-decreasing i0.
template <class A>
MT_HOST_DEVICE inline void upsample_outputs_reading(UpsampleMode mode, int64_t in, int64_t out, bool align_corners,
                                                    double scale, int64_t i, int64_t& lo, int64_t& hi)
{
    const int64_t first = mode == UpsampleMode::Bilinear && out != in ? i - 1 : i;
    auto first_at_least = [&](int64_t v) {  // the first j with i0(j) >= v, or out
        int64_t a = 0, b = out;
        while (a < b) {
            const int64_t m = a + (b - a) / 2;
            if (upsample_taps<A>(mode, in, out, align_corners, scale, m).i0 >= v) b = m;
            else a = m + 1;
        }
        return a;
    };
    lo = first_at_least(first);
    hi = first_at_least(i + 1);
}

// The weight with which output j's taps read input position i (0 if they do not): both taps
// count where they fall on one position.
template <class A>
MT_HOST_DEVICE inline A upsample_weight_on(const UpsampleTaps<A>& t, int64_t i)
{
    A w = A(0);
    if (t.i0 == i) w += t.l0;
    if (!t.one && t.i1 == i) w += t.l1;
    return w;
}

}  // namespace minitorch
