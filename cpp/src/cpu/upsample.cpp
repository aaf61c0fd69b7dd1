// upsample.cpp — CPU kernels for F.interpolate's 2-D modes (nearest, nearest-exact,
// bilinear), forward and backward (cuda/upsample.cu is the same on a GPU). The index rule
// is minitorch/upsample_math.h's; here the taps of every output row and column are worked
// out once per call, then threads split the (n, c) planes.
//
// Both directions go a row at a time, as the composed path (index_select along H, then
// along W) does: forward blends the (one or two) input rows of an output row, then blends
// the columns of that row; backward spreads each output row's gradient over its columns,
// then over its input rows. Within a plane one thread runs, in a fixed order: the sums are
// the same on every run.
#include <algorithm>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/upsample_math.h"

namespace minitorch::cpu {

namespace {

// The taps of every output position along H and along W.
template <class A>
struct TapTables {
    std::vector<UpsampleTaps<A>> h, w;
    explicit TapTables(const Upsample2d& s) : h(size_t(s.OH)), w(size_t(s.OW))
    {
        for (int64_t j = 0; j < s.OH; ++j) h[j] = upsample_taps<A>(s.mode, s.H, s.OH, s.align_corners, s.scale_h, j);
        for (int64_t j = 0; j < s.OW; ++j) w[j] = upsample_taps<A>(s.mode, s.W, s.OW, s.align_corners, s.scale_w, j);
    }
};

int64_t plane_grain(const Upsample2d& s)
{
    return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(s.OH * s.OW, 1));
}

}  // namespace

void upsample2d(const Tensor& out, const Tensor& input, const Upsample2d& spec)
{
    dispatch_floating(input->dtype, "upsample2d", [&](auto tag) {
        using T = typename decltype(tag)::type;  // float or double: also the arithmetic type
        const TapTables<T> taps(spec);
        const T* x = input->data_as<T>();
        T* y = out->data_as<T>();
        const Upsample2d s = spec;
        parallel_for(s.N * s.C, plane_grain(s), [&](int64_t p0, int64_t p1) {
            std::vector<T> row(size_t(s.W));  // the output row's input row (blended along H)
            for (int64_t p = p0; p < p1; ++p) {
                const T* plane = x + p * s.H * s.W;
                for (int64_t oh = 0; oh < s.OH; ++oh) {
                    const UpsampleTaps<T>& th = taps.h[oh];
                    const T* r = plane + th.i0 * s.W;
                    if (!th.one) {
                        const T* r1 = plane + th.i1 * s.W;
                        for (int64_t iw = 0; iw < s.W; ++iw) row[iw] = r[iw] * th.l0 + r1[iw] * th.l1;
                        r = row.data();
                    }
                    T* y_row = y + (p * s.OH + oh) * s.OW;
                    for (int64_t ow = 0; ow < s.OW; ++ow) {
                        const UpsampleTaps<T>& tw = taps.w[ow];
                        y_row[ow] = tw.one ? r[tw.i0] : r[tw.i0] * tw.l0 + r[tw.i1] * tw.l1;
                    }
                }
            }
        });
    });
}

void upsample2d_backward(const Tensor& grad_in, const Tensor& grad_out, const Upsample2d& spec)
{
    dispatch_floating(grad_in->dtype, "upsample2d_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const TapTables<T> taps(spec);
        T* gx = grad_in->data_as<T>();
        const T* g = grad_out->data_as<T>();
        const Upsample2d s = spec;
        parallel_for(s.N * s.C, plane_grain(s), [&](int64_t p0, int64_t p1) {
            std::vector<T> row(size_t(s.W));  // one output row's gradient, spread over the input columns
            for (int64_t p = p0; p < p1; ++p) {
                T* plane = gx + p * s.H * s.W;
                std::fill(plane, plane + s.H * s.W, T(0));  // written here: the caller need not zero it
                for (int64_t oh = 0; oh < s.OH; ++oh) {
                    const T* g_row = g + (p * s.OH + oh) * s.OW;
                    std::fill(row.begin(), row.end(), T(0));
                    for (int64_t ow = 0; ow < s.OW; ++ow) {
                        const UpsampleTaps<T>& tw = taps.w[ow];
                        if (tw.one) row[tw.i0] += g_row[ow];
                        else row[tw.i0] += g_row[ow] * tw.l0, row[tw.i1] += g_row[ow] * tw.l1;
                    }
                    const UpsampleTaps<T>& th = taps.h[oh];
                    T* r0 = plane + th.i0 * s.W;
                    if (th.one)
                        for (int64_t iw = 0; iw < s.W; ++iw) r0[iw] += row[iw];
                    else {
                        T* r1 = plane + th.i1 * s.W;
                        for (int64_t iw = 0; iw < s.W; ++iw) r0[iw] += row[iw] * th.l0;
                        for (int64_t iw = 0; iw < s.W; ++iw) r1[iw] += row[iw] * th.l1;
                    }
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
