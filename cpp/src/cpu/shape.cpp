// shape.cpp — CPU kernel for "remap" (flip, roll, tril/triu, repeat, constant padding): each
// output element is one input element, found by remap_source, or the fill value (0 above/
// below tril's/triu's diagonal, the pad value in the padding).
// The copy moves bytes, so one instance per element size serves every dtype.
#include <cstdint>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/shape_math.h"

namespace minitorch::cpu {

void remap(const Tensor& out, const Tensor& in, const Remap& map)
{
    dispatch_bytes(itemsize(out->dtype), [&](auto tag) {
        using Bytes = typename decltype(tag)::type;
        const Bytes* src = in->data_as<Bytes>();
        Bytes* dst = out->data_as<Bytes>();
        const int64_t* shape = out->shape.data();
        parallel_for(out->numel(), kGrainSize, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
                const int64_t at = remap_source(map, shape, i);
                dst[i] = at < 0 ? Bytes(map.fill) : src[at];
            }
        });
    });
}

}  // namespace minitorch::cpu
