// shape.cpp — CPU kernel for "remap" (flip, roll, tril/triu, repeat, constant padding): each
// output element is one input element, found by remap_source, or the fill value (0 above/
// below tril's/triu's diagonal, the pad value in the padding).
// The copy moves bytes, so one instance per element size serves every dtype.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/shape_math.h"

namespace minitorch::cpu {

void remap(const Tensor& out, const Tensor& in, const Remap& map)
{
    const int64_t nd = map.ndim, numel = out->numel();
    const int64_t* shape = out->shape.data();
    dispatch_bytes(itemsize(out->dtype), [&](auto tag) {
        using Bytes = typename decltype(tag)::type;
        const Bytes* src = in->data_as<Bytes>();
        Bytes* dst = out->data_as<Bytes>();
        if (nd == 0 || map.triangle) {  // (tril / triu: the last dim's mapping changes with the row)
            parallel_for(numel, kGrainSize, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                    const int64_t at = remap_source(map, shape, i);
                    dst[i] = at < 0 ? Bytes(map.fill) : src[at];
                }
            });
            return;
        }
        // Where an element comes from is a part for the outer dims plus a part for the last dim,
        // and the last dim's part is the same in every row: it is worked out once per column
        // (remap_source of a one-dim map), the outer part once per row (the same map without its
        // last dim), instead of a division per dim for every element.
        const int64_t width = shape[nd - 1], rows = width ? numel / width : 0;
        Remap last_dim{}, outer = map;
        last_dim.ndim = 1;
        last_dim.in_size[0] = map.in_size[nd - 1], last_dim.in_stride[0] = map.in_stride[nd - 1];
        last_dim.shift[0] = map.shift[nd - 1], last_dim.flip[0] = map.flip[nd - 1];
        last_dim.pad = map.pad, last_dim.pad_left[0] = map.pad_left[nd - 1];
        outer.ndim = int(nd - 1);
        std::vector<int64_t> column(static_cast<size_t>(width));
        for (int64_t o = 0; o < width; ++o) column[size_t(o)] = remap_source(last_dim, &width, o);
        parallel_for(rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(width, 1)), [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
                const int64_t base = remap_source(outer, shape, r);
                Bytes* row = dst + r * width;
                for (int64_t o = 0; o < width; ++o) {
                    const int64_t c = column[size_t(o)];
                    row[o] = base < 0 || c < 0 ? Bytes(map.fill) : src[base + c];
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
