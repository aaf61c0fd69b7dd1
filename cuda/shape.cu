// shape.cu — CUDA kernel for "remap" (flip, roll, tril/triu, repeat, constant padding); what each output
// element reads is remap_source (shape_math.h), shared with the CPU kernel.
#include <cstdint>

#include "common.cuh"
#include "minitorch/shape_math.h"

namespace minitorch::cuda {

namespace {

// The output's shape, passed by value beside the Remap (a kernel cannot read host vectors).
struct OutShape {
    int64_t size[kMaxDims];
};

// Thread mapping: one thread per output element i (grid-stride); consecutive threads
// write consecutive outputs (coalesced), and read wherever remap_source points: flip and
// roll read runs of neighbours too, tril/triu the same element, repeat a repeating row,
// padding the row shifted by its left amount.
// The copy moves bytes: one instance per element size serves every dtype.
template <class Bytes>
__global__ void remap_kernel(Bytes* out, const Bytes* in, Remap map, OutShape shape, int64_t n)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t at = remap_source(map, shape.size, i);
        out[i] = at < 0 ? Bytes(map.fill) : in[at];  // fill: 0 for tril/triu, the pad value
    }
}

}  // namespace

void remap(const Tensor& out, const Tensor& in, const Remap& map)
{
    OutShape shape{};
    for (int d = 0; d < map.ndim; ++d) shape.size[d] = out->shape[d];
    const int64_t n = out->numel();
    dispatch_bytes(itemsize(out->dtype), [&](auto tag) {
        using Bytes = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, remap_kernel<Bytes>)(out->data_as<Bytes>(), in->data_as<Bytes>(),
                                                                      map, shape, n);
    });
    MT_CUDA_CHECK_LAUNCH("remap");
}

}  // namespace minitorch::cuda
