// upsample.cpp — CPU kernels for F.interpolate's 2-D modes (nearest, nearest-exact,
// bilinear), forward and backward (cuda/upsample.cu is the same on a GPU). The index rule
// is minitorch/upsample_math.h's; here the taps of every output row and column are worked
// out once per call, then threads split the (n, c) planes. An output row that reads the
// same input rows as the one above it (nearest upsampling) is a copy of it.
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

// The taps of every output position along one dim, as arrays (the inner loops then read
// plain index and weight vectors). `one` is the same for every position of a dim.
template <class A>
struct DimTaps {
    std::vector<int64_t> i0, i1;
    std::vector<A> l0, l1;
    bool one = true;
    DimTaps(const Upsample2d& s, int64_t in, int64_t out, double scale)
        : i0(size_t(out)), i1(size_t(out)), l0(size_t(out)), l1(size_t(out))
    {
        for (int64_t j = 0; j < out; ++j) {
            const UpsampleTaps<A> t = upsample_taps<A>(s.mode, in, out, s.align_corners, scale, j);
            i0[j] = t.i0, i1[j] = t.i1, l0[j] = t.l0, l1[j] = t.l1, one = t.one;
        }
    }
    // Output positions j and j - 1 read the same taps (nearest upsampling: most rows).
    bool same_as_previous(int64_t j) const
    {
        return j > 0 && i0[j] == i0[j - 1] && (one || (i1[j] == i1[j - 1] && l0[j] == l0[j - 1] && l1[j] == l1[j - 1]));
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
        const Upsample2d s = spec;
        const DimTaps<T> th(s, s.H, s.OH, s.scale_h), tw(s, s.W, s.OW, s.scale_w);
        const T* x = input->data_as<T>();
        T* y = out->data_as<T>();
        parallel_for(s.N * s.C, plane_grain(s), [&](int64_t p0, int64_t p1) {
            std::vector<T> row(size_t(s.W));  // the output row's input row (blended along H)
            const int64_t *i0 = tw.i0.data(), *i1 = tw.i1.data();
            const T *l0 = tw.l0.data(), *l1 = tw.l1.data();
            for (int64_t p = p0; p < p1; ++p) {
                const T* plane = x + p * s.H * s.W;
                for (int64_t oh = 0; oh < s.OH; ++oh) {
                    T* y_row = y + (p * s.OH + oh) * s.OW;
                    if (th.same_as_previous(oh)) {  // the row above, again: copy it
                        std::copy(y_row - s.OW, y_row, y_row);
                        continue;
                    }
                    const T* r = plane + th.i0[oh] * s.W;
                    if (!th.one) {
                        const T *r1 = plane + th.i1[oh] * s.W, a0 = th.l0[oh], a1 = th.l1[oh];
                        for (int64_t iw = 0; iw < s.W; ++iw) row[iw] = r[iw] * a0 + r1[iw] * a1;
                        r = row.data();
                    }
                    if (tw.one)
                        for (int64_t ow = 0; ow < s.OW; ++ow) y_row[ow] = r[i0[ow]];
                    else
                        for (int64_t ow = 0; ow < s.OW; ++ow) y_row[ow] = r[i0[ow]] * l0[ow] + r[i1[ow]] * l1[ow];
                }
            }
        });
    });
}

void upsample2d_backward(const Tensor& grad_in, const Tensor& grad_out, const Upsample2d& spec)
{
    dispatch_floating(grad_in->dtype, "upsample2d_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const Upsample2d s = spec;
        const DimTaps<T> th(s, s.H, s.OH, s.scale_h), tw(s, s.W, s.OW, s.scale_w);
        T* gx = grad_in->data_as<T>();
        const T* g = grad_out->data_as<T>();
        parallel_for(s.N * s.C, plane_grain(s), [&](int64_t p0, int64_t p1) {
            std::vector<T> row(size_t(s.W));  // one output row's gradient, spread over the input columns
            const int64_t *i0 = tw.i0.data(), *i1 = tw.i1.data();
            const T *l0 = tw.l0.data(), *l1 = tw.l1.data();
            for (int64_t p = p0; p < p1; ++p) {
                T* plane = gx + p * s.H * s.W;
                std::fill(plane, plane + s.H * s.W, T(0));  // written here: the caller need not zero it
                for (int64_t oh = 0; oh < s.OH; ++oh) {
                    const T* g_row = g + (p * s.OH + oh) * s.OW;
                    std::fill(row.begin(), row.end(), T(0));
                    if (tw.one)
                        for (int64_t ow = 0; ow < s.OW; ++ow) row[i0[ow]] += g_row[ow];
                    else
                        for (int64_t ow = 0; ow < s.OW; ++ow)
                            row[i0[ow]] += g_row[ow] * l0[ow], row[i1[ow]] += g_row[ow] * l1[ow];
                    T* r0 = plane + th.i0[oh] * s.W;
                    if (th.one)
                        for (int64_t iw = 0; iw < s.W; ++iw) r0[iw] += row[iw];
                    else {
                        T *r1 = plane + th.i1[oh] * s.W, a0 = th.l0[oh], a1 = th.l1[oh];
                        for (int64_t iw = 0; iw < s.W; ++iw) r0[iw] += row[iw] * a0;
                        for (int64_t iw = 0; iw < s.W; ++iw) r1[iw] += row[iw] * a1;
                    }
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
